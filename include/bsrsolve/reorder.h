/* SPDX-License-Identifier: BSD-3-Clause */
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
    BSR_ORDER_AMD,        /* SuiteSparse AMD */
    BSR_ORDER_LEVELS,     /* level-ordered renumbering (bsr_order_levels only) */
    BSR_ORDER_CENTER      /* each component by decreasing graph distance from its centre:
                             level schedules about the radius deep, not the diameter */
} bsr_order_kind;

typedef struct {
    bsr_order_kind kind;
    int depth;     /* ND: tree depth h (p = 2^h leaves); -1 = auto */
    int seed;      /* METIS seed (METIS_OPTION_SEED) */
    int nseps;     /* METIS_OPTION_NSEPS */
    int ufactor;   /* METIS_OPTION_UFACTOR (0 = METIS default) */
    int nsm;       /* multiprocessor count used by depth auto (0 = 132) */
    int sepcolor;  /* ND: 1 (default) orders each separator's own rows by the
                      colour classes of a greedy distance-2 colouring, METIS's
                      order kept within a class; 0 keeps METIS's order.  Fill
                      (ILUT, ILU2) couples separator rows at distance 2, which
                      in METIS's order chains them into deep level schedules */
    /* (additions) */
    int leafnd;    /* ND: 1 orders each leaf's rows by METIS_NodeND of the
                      leaf's subgraph (METIS's fill-reducing order inside the
                      leaves, the tree kept); 0 (default) keeps the order the
                      dissection left them in */
    int variant;   /* RCM, 0..3: bit 0 starts each component's Cuthill-McKee
                      from the far end of the pseudo-peripheral search (the
                      other end of the long axis it found), bit 1 orders the
                      graph numbered backwards (the search starts elsewhere
                      and equal degrees are taken the other way: a box mesh's
                      levels swept the other way).  A threshold factor's fill
                      follows the flow, which in some sweeps chains its rows
                      into long level schedules (bench/RESULTS.md); 0 is the
                      default */
    int lift;      /* 1 moves the top of the elimination tree to the end: its
                      root chain (a dissection's top separator) and the chains
                      whose parents are in it (the next level's separators),
                      after every other row (each in its order).  The same fill;
                      a complete factor's last rows (bsr_ordering.dense_rows)
                      then make one dense block, factored as one on the device.
                      0 (default): the order as computed */
} bsr_order_options;

/* Fill o with defaults for kind (depth auto, seed 1, nseps METIS default;
 * ufactor 30 for ND, for balanced leaves, METIS default otherwise). */
void bsr_order_options_default(bsr_order_options *o, bsr_order_kind kind);

/* Node of the separator tree.  Rows are in the permuted numbering; a node
 * owns rows [first, last): its subtree's rows, the node's own separator being
 * the last rows [sep_first, last).  A leaf has child[0] = child[1] = -1 and
 * sep_first == first (its whole range is its own). */
/* (Additions.)  bsr_order's nodes are in depth-first preorder: a node comes
 * before its children, child[0]'s subtree [first, child[1].first) before
 * child[1]'s [child[1].first, sep_first).  A separator may be empty
 * (disconnected parts).  A subgraph too small to split (< 3 rows, or METIS
 * leaves one side empty) becomes a leaf above level `depth`, so leaves may
 * sit at different levels and nleaves <= 2^depth. */
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
    /* additions (after the original fields) */
    int depth_auto; /* 1 when depth was chosen by depth auto (opt depth = -1) */
    int depth_asked;/* depth the options asked for (the auto choice when auto);
                       depth < depth_asked when subgraphs became leaves early */
    int nleaves;    /* leaves of the tree (0 when no tree) */
    int leafnd;     /* the leaves' rows are in METIS_NodeND's order (options.leafnd) */
    int dense_rows; /* options.lift: the rows moved to the end (root chain and the chains
                       under it), else 0 */
} bsr_ordering;

/* Compute the ordering of A's block graph (pattern symmetrized, self loops dropped). */
bsr_status bsr_order(const bsr_matrix *A, const bsr_order_options *opt, bsr_ordering **ord);
void bsr_ordering_free(bsr_ordering *ord);
/* Name of an ordering kind ("natural", "rcm", "nd", "metis", "amd", "levels", "center"). */
const char *bsr_order_kind_name(bsr_order_kind k);
/* Parse an ordering spec into o: natural | rcm | center | nd[:auto|:H] | metis | amd,
 * optionally followed by ,seed=S ,nseps=N ,ufactor=U ,nsm=M ,sepcolor=0|1
 * ,leafnd=0|1 ,variant=0..3 ,lift=0|1 (e.g. "nd:auto,seed=3,nsm=114", "rcm,variant=2", "metis,lift=1").
 * BSR_ERR_ARG naming the bad part. */
bsr_status bsr_order_parse(const char *spec, bsr_order_options *o);
/* Depth chosen by ND depth auto for n block rows and nsm multiprocessors
 * (nsm <= 0: 132): the smallest h whose leaves have <= 4096 rows, raised so
 * that p = 2^h >= nsm while leaves keep >= 128 rows. */
int bsr_nd_auto_depth(int n, int nsm);
/* Identity ordering of n rows (kind natural), e.g. to compare against. */
bsr_status bsr_ordering_identity(int n, bsr_ordering **ord);

/* ---- p-bordered checker ------------------------------------------------- */
#define BSR_TREE_MAX_LEVELS 32
typedef struct {
    int nleaves, depth;
    int leaf_min, leaf_max;   /* leaf sizes (rows) */
    double leaf_mean;
    int sep_rows[BSR_TREE_MAX_LEVELS];  /* separator rows summed over the nodes of a level */
    int sep_max[BSR_TREE_MAX_LEVELS];   /* largest separator of a level */
    int sep_nodes[BSR_TREE_MAX_LEVELS]; /* internal nodes of a level */
    int border_rows;          /* rows in all separators */
    double border_share;      /* border_rows / n */
    int64_t border_blocks;    /* stored blocks in a separator row or column */
} bsr_pbordered_report;
/* Check that B (already permuted by ord: B = P A P^T) is in p-bordered form
 * for ord's tree: the tree's ranges partition the rows consistently and no
 * stored block (i,j) couples rows owned by two nodes of which neither is an
 * ancestor of the other.  Fills rep (may be NULL) even on failure of the
 * coupling test; BSR_ERR_STRUCTURE names the first offending block. */
bsr_status bsr_pbordered_check(const bsr_matrix *B, const bsr_ordering *ord,
                               bsr_pbordered_report *rep);
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
/* (Addition.)  Levels of the rows [first, last) only, e.g. one leaf of the
 * separator tree: dependencies outside the range are taken as already
 * solved.  lv->n = last - first; rows[] holds absolute row numbers;
 * level_of[i - first] is the level of row i. */
bsr_status bsr_levels_build_range(const bsr_matrix *A, int upper, int first, int last,
                                  bsr_levels **lv);
/* Level-ordered renumbering (the "diagonal transformation"): an ordering
 * (kind BSR_ORDER_LEVELS, no tree) with perm = the rows of A's lower
 * (upper = 0) or upper (upper = 1) triangle level by level, ascending row
 * order within a level, so that one level is stored contiguously.  New
 * numbers follow execution order: every dependency of a row (j < i for the
 * lower, j > i for the upper triangle) gets a smaller new number than the
 * row.  Meant as a storage layout for a factor's triangle (iperm maps a row
 * to its slot); lv (may be NULL) receives the schedule it was built from. */
bsr_status bsr_order_levels(const bsr_matrix *A, int upper, bsr_ordering **ord,
                            bsr_levels **lv);

/* ---- maximum-product transversal (reorder/match.c) ---------------------- */
/* A row permutation and row/column scalings that put large blocks on the
 * diagonal (MC64 job 5): B(j,l) = dr[match[j]] * A(match[j], l) * dc[l] has
 * ||B_jj||_F = 1 and every ||B_jl||_F <= 1 (up to rounding).  Scalings are
 * scalars per block row and block column. */
typedef struct {
    int n;          /* block rows */
    int *match;     /* [n] match[j] = A's block row matched to block column j (a permutation) */
    double *dr;     /* [n] scaling of A's block row i */
    double *dc;     /* [n] scaling of A's block column j */
    int nperm;      /* columns j with match[j] != j */
} bsr_matching;
/* Maximum-product transversal of A's block graph (block weights ||A_ij||_F,
 * zero blocks are no edges) by shortest augmenting paths with dual
 * variables, and the scaling from the duals.  Deterministic.
 * BSR_ERR_SINGULAR naming how many block rows stay unmatched when A is
 * structurally singular. */
bsr_status bsr_match_mpt(const bsr_matrix *A, bsr_matching **M);
void bsr_matching_free(bsr_matching *M);

#ifdef __cplusplus
}
#endif
#endif
