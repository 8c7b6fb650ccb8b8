/* SPDX-License-Identifier: BSD-3-Clause */
/* Internal interface of the GPU block triangular solves: raw device
 * arrays in, so the kernels do not depend on the device-object API.  Shared by
 * kernels/trsv/trsv_*.cu, the CPU build's stubs and bench/bench_trsv.c. */
#ifndef BSR_TRSV_H
#define BSR_TRSV_H

#include "bsrsolve.h"
#include "gpu_ilu.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One triangle on the device.  Rows are visited through the schedule list
 * rows[] (level order for the level kernels); the blocks of row i are
 * [rstart[i], rend[i]) of colind/val, which may be stored in the original
 * row order or, with renumbering, in level order (a level's blocks contiguous).
 * Upper triangles hold the inverted pivot block first in each row. */
typedef struct {
    int n, b, nnzb, upper;
    bsr_precision fprec;       /* precision of val on the device */
    int *rows;                 /* [n] schedule position -> row */
    int *rstart, *rend;        /* [n] block range of each row */
    int *pbeg, *pend;          /* [n] block range of the row at each schedule position */
    int *colind;               /* [nnzb] */
    void *val;                 /* [nnzb*b*b] row-major blocks, fprec */
    int nlevels;
    int *level_ptr;            /* host [nlevels+1], positions in rows[] */
    int max_width;
    /* the chain part of a triangle with long rows (a nested-dissection
     * factor's top separators after fill): the last tail rows of L's level
     * order, the first of U's (bsr_trsv_tail below); 0: none */
    int tail;
    /* separator tree levels for P21-P24 (one root node [0,n) without a tree) */
    int ntl;                   /* tree levels */
    int *tl_ptr;               /* host [ntl+1]: nodes of tree level l (root = 0) */
    int *node_range;           /* device [2*nnodes]: own rows [sep_first, last) of each node, by tree level */
    int tree_ok;               /* rows of a node depend only on its subtree (L) / ancestors (U) */
    int *pendl;                /* device [n]: pend with bit 31 set at each level's first position
                                  (the pipelined kernel's level-segment votes), or NULL */
    int *flags;                /* device [n] sync-free completion flags */
    int *counter;              /* device ticket counter */
} bsr_trsv_tri;

/* Host layout of one triangle for the device (src/trsv/trsv_plan.c).  Numbering:
 * the factor's, or new = qpos[old] with full renumbering. */
typedef struct {
    int n, nnzb, max_width;
    int *rows;                 /* [n] schedule position -> row */
    int *rstart, *rend;        /* [n] block range of each row */
    int *pbeg, *pend;          /* [n] block range of the row at each position */
    int *colind;               /* [nnzb] column of each stored block */
    int *map;                  /* [nnzb] factor block stored there (NULL: same order) */
} bsr_trsv_plan;
/* Check that schedule lv covers triangle M's rows (full: also the checks of
 * bsr_trsv_plan_build below); *width = widest level. */
bsr_status bsr_trsv_plan_check(const bsr_matrix *M, const bsr_levels *lv, int upper, int full, int *width);
/* With check, verify lv against triangle M (schedule covers every row once,
 * every block off the diagonal reads a row of an earlier level, U rows start
 * with their pivot, L has only strictly lower blocks); then lay M out:
 * renumber = 0 keeps M's block order, else blocks in schedule order; qpos
 * (needs renumber) renumbers rows and columns.  OpenMP-parallel.  check = 0
 * is for schedules the library built itself for M (the ILU's). */
bsr_status bsr_trsv_plan_build(const bsr_matrix *M, const bsr_levels *lv, int upper, int renumber,
                               const int *qpos, int check, bsr_trsv_plan *pl);
void bsr_trsv_plan_free(bsr_trsv_plan *pl);
/* The tail of triangle M under schedule lv (bsr_trsv_tri.tail): the levels at
 * the end of L's level order (the start of U's) with at most
 * TRSV_TAIL_WIDTH rows each, counted when they hold TRSV_TAIL_MIN rows or
 * more with TRSV_TAIL_LEN blocks a row or more on average (pivots left out);
 * else 0.  Host arrays. */
#define TRSV_TAIL_WIDTH 64
#define TRSV_TAIL_MIN 16
#define TRSV_TAIL_LEN 32
int bsr_trsv_tail(const bsr_matrix *M, const bsr_levels *lv, int upper);
/* Separator-tree levels (one root [0,n) without a tree): tl_ptr[ntl+1] into
 * ranges (own rows [sep_first,last) of each node, by tree level), and whether
 * the nodes of one tree level are independent for triangle M. */
bsr_status bsr_trsv_tree_plan(const bsr_matrix *M, int upper, const bsr_ordering *ord, int *ntl,
                              int **tl_ptr, int **ranges, int *nranges, int *tree_ok);

/* Kernel families: the level kernel and the tree study kernels P21-P24
 * (values match bsr_trsv_kernel). */
enum { TRSV_K_LEVEL = 0, TRSV_K_P21, TRSV_K_P22, TRSV_K_P23, TRSV_K_P24 };
/* Schedules of the level kernel (values match bsr_trsv_sched). */
enum { TRSV_S_SYNCFREE = 0, TRSV_S_GRAPH, TRSV_S_LAUNCH, TRSV_S_FLAGS };

/* Y = T^{-1} X on stream (a cudaStream_t): x, y device row-interleaved with k
 * vectors of precision vprec (x == y allowed; sync-free then uses flags).  Pure launches; no allocation,
 * no synchronization (so it can be captured in a CUDA graph). */
bsr_status bsr_trsv_dev_solve(const bsr_trsv_tri *T, int kernel, int sched, const void *x, void *y,
                              int k, bsr_precision vprec, void *stream);
/* y = T^{-1} (S P x) for a lower triangle T: (P x)_i = x_{perm[i]}, S
 * block diagonal (n blocks of b x b in T's precision and row numbering);
 * the same bits as bsr_trsv_dev_permscale followed by bsr_trsv_dev_solve.
 * The pipelined level kernel gathers and scales each row's right-hand side
 * as it forms it; every other kernel gathers S P x into w (n*b*k values,
 * distinct from x and y) first.  perm and S NULL: bsr_trsv_dev_solve. */
bsr_status bsr_trsv_dev_solve_gather(const bsr_trsv_tri *T, int kernel, int sched, const int *perm, const void *S,
                                     void *w, const void *x, void *y, int k, bsr_precision vprec, void *stream);

/* y = approximately T^{-1} x by `sweeps` Jacobi sweeps (kernels/trsv/trsv_jacobi.cu;
 * the host reference is bsr_trsv_jacobi_host): x, y and the work vector w
 * distinct; pure launches on stream. */
bsr_status bsr_trsv_dev_jacobi(const bsr_trsv_tri *T, int sweeps, const void *x, void *y, void *w,
                               int k, bsr_precision vprec, void *stream);

/* t_i = S_i x_{perm[i]} (gather, pre) or y_{perm[i]} = S_i t_i (scatter, post);
 * perm, S may be NULL (identity); S in fprec. */
bsr_status bsr_trsv_dev_permscale(int n, int b, int k, const int *perm, const void *S,
                                  bsr_precision fprec, const void *in, void *out,
                                  bsr_precision vprec, int scatter, void *stream);

/* Median times (ms) of the GPU L and U solves of the preconditioner G with its
 * current kernel, k random vectors of vprec, after warm-up (at most about
 * max_s seconds per region); with_apply: also the full apply. */
typedef struct { double ms_L, ms_U, ms_apply, ms_graph_build; } bsr_trsv_timing;
/* Seconds of create: host analysis (checks; and the separator tree's plan
 * once a tree kernel was selected), device layout (gathers), allocations,
 * host-to-device copies of values (upload_s) and of structure (index_s: row
 * pointers, columns, schedules, permutations). */
typedef struct { double host_s, device_s, alloc_s, upload_s, index_s; } bsr_gpu_ilu_setup_breakdown;
bsr_status bsr_gpu_ilu_breakdown(const bsr_gpu_ilu *G, bsr_gpu_ilu_setup_breakdown *b);
bsr_status bsr_gpu_ilu_time(bsr_gpu_ilu *G, int k, bsr_precision vprec, int reps, double max_s,
                            int with_apply, bsr_trsv_timing *t);
/* The device triangles of G (for levels/bytes reports). */
const bsr_trsv_tri *bsr_gpu_ilu_tri(const bsr_gpu_ilu *G, int upper);
/* (gpuilu) Write factor values computed on the device into G: L and U in the
 * layout of the host factors G was created from (double), sl the left scaling
 * (n blocks, NULL = leave); converted to G's precision and storage order. */
bsr_status bsr_gpu_ilu_set_values_dev(bsr_gpu_ilu *G, const double *L, const double *U, const double *sl);
/* G's own value arrays, for a device factorization that writes them in place
 * (kernels/ilu/ilu0_gpu.cu) instead of in a workspace of its own gathered
 * into them: L, U the stored blocks (double), Lst, Ust the first stored
 * block of each factor row (a row's blocks are contiguous and in the host
 * factors' order, so host block l of row i is stored at Lst[i] + l - Lp[i]),
 * Lmap, Umap the host block of each stored block (NULL: the identity), sl the
 * left scaling (NULL: G has none).  BSR_ERR_UNSUPPORTED where G's values are
 * not those blocks one to one: float factors, or unknowns renumbered (full
 * renumbering). */
typedef struct {
    double *L, *U;
    const int *Lst, *Ust;
    const int *Lmap, *Umap;
    double *sl;
    const int *Lc, *Uc;   /* G's stored columns (the error messages' columns) */
    int nL, nU;
} bsr_gpu_ilu_dest;
bsr_status bsr_gpu_ilu_dest_get(bsr_gpu_ilu *G, bsr_gpu_ilu_dest *d);
/* From now on G's values are written in place by a device factorization:
 * the storage maps are freed (nothing gathers through them any more), and
 * bsr_gpu_ilu_set_values_dev and bsr_gpu_ilu_refactor refuse. */
void bsr_gpu_ilu_bind_values(bsr_gpu_ilu *G);
/* G's values are from now on gathered (bsr_gpu_ilu_set_values_dev) out of
 * a larger layout in which G's host block l sits at block lmap[l] of L (umap:
 * of U; NULL: at l): the storage maps composed with them once, so that a
 * device factorization over a pattern with blocks G does not store (ILU2's
 * second-order part) is gathered straight into G, with no copy of the
 * stored blocks in between.  nL, nU: G's blocks (checked). */
bsr_status bsr_gpu_ilu_compose_maps(bsr_gpu_ilu *G, const int *lmap, const int *umap, int nL, int nU);

#ifdef __cplusplus
}
#endif
#endif
