/* bsrsolve reordering: orderings of the block graph, the nested-dissection
 * separator tree (p-bordered form), symmetric permutation, level schedules.
 * Included by bsrsolve.h.  (Contract shared by reorder/, ILU and the GPU
 * triangular solves; extend, do not change meanings.) */
#ifndef BSRSOLVE_REORDER_H
#define BSRSOLVE_REORDER_H

#include "core.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    BSR_ORDER_NATURAL = 0,
    BSR_ORDER_RCM,        /* reverse Cuthill-McKee */
    BSR_ORDER_ND,         /* METIS vertex-separator bisection to depth h: p-bordered, with tree */
    BSR_ORDER_METIS_ND,   /* METIS_NodeND (fill-reducing, no tree) */
    BSR_ORDER_AMD         /* SuiteSparse AMD */
} bsr_order_kind;

typedef struct {
    bsr_order_kind kind;
    int depth;     /* ND: tree depth h (p = 2^h leaves); -1 = auto */
    int seed;      /* METIS seed (METIS_OPTION_SEED) */
    int nseps;     /* METIS_OPTION_NSEPS */
    int ufactor;   /* METIS_OPTION_UFACTOR (0 = METIS default) */
    int nsm;       /* multiprocessor count used by depth auto (0 = 132) */
} bsr_order_options;

/* Fill o with defaults for kind (depth auto, seed 1). */
void bsr_order_options_default(bsr_order_options *o, bsr_order_kind kind);

/* Node of the separator tree.  Rows are in the permuted numbering; a node
 * owns rows [first, last): its subtree's rows, the node's own separator being
 * the last rows [sep_first, last).  A leaf has child[0] = child[1] = -1 and
 * sep_first == first (its whole range is its own). */
typedef struct {
    int first, sep_first, last;
    int level;      /* root = 0 */
    int parent;     /* -1 for the root */
    int child[2];   /* -1 if none */
} bsr_tree_node;

typedef struct {
    bsr_order_kind kind;
    int n;          /* block rows */
    int *perm;      /* perm[new] = old */
    int *iperm;     /* iperm[old] = new */
    int depth;      /* tree depth actually used (0 when no tree) */
    int nnodes;     /* 0 when no tree; else nodes[0] is the root */
    bsr_tree_node *nodes;
} bsr_ordering;

/* Compute the ordering of A's block graph (pattern symmetrized, self loops dropped). */
bsr_status bsr_order(const bsr_matrix *A, const bsr_order_options *opt, bsr_ordering **ord);
void bsr_ordering_free(bsr_ordering *ord);
/* B = P A P^T (blocks intact, columns sorted): B(new_i,new_j) = A(perm[new_i],perm[new_j]). */
bsr_status bsr_permute(const bsr_matrix *A, const bsr_ordering *ord, bsr_matrix **B);
/* Y = P X (Y row block i = X row block perm[i]) and Y = P^T X. Rows are block rows of b. */
bsr_status bsr_permute_vec(const bsr_ordering *ord, int b, const bsr_multivec *X, bsr_multivec *Y);
bsr_status bsr_permute_vec_inv(const bsr_ordering *ord, int b, const bsr_multivec *X, bsr_multivec *Y);

/* Level schedule of a block triangle: rows of level l are
 * rows[level_ptr[l] .. level_ptr[l+1]), every row depending only on rows of
 * earlier levels. */
typedef struct {
    int n, nlevels;
    int *level_ptr;   /* [nlevels+1] */
    int *rows;        /* [n] */
    int *level_of;    /* [n] level of each row */
    int max_width;
    double mean_width;
} bsr_levels;
/* Levels of the strictly lower (upper = 0) or strictly upper (upper = 1) triangle of A. */
bsr_status bsr_levels_build(const bsr_matrix *A, int upper, bsr_levels **lv);
void bsr_levels_free(bsr_levels *lv);

#ifdef __cplusplus
}
#endif
#endif
