/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef BSR_GPU_ILU_H
#define BSR_GPU_ILU_H

#include "bsrsolve.h"

#ifdef __cplusplus
extern "C" {
#endif

/* GPU block triangular solves and device ILU factors: internal (the solver's
 * CUDA backend, tests and benchmark drivers), not the public API.
 * ILU factors computed on the CPU (bsr_ilu, see ilu.h) are uploaded once to a
 * CUDA context; refactor re-uploads values only; apply = scaling + permutation
 * + L solve + U solve entirely on the device (no host round trip), on the
 * context's stream.  Every kernel is deterministic (fixed summation orders, no
 * floating-point atomics). */

typedef enum {
    BSR_TRSV_LEVEL = 0, /* production: level-scheduled P24 (rows of a level in parallel) */
    BSR_TRSV_P21,       /* ND tree levels, one CUDA block per node, one thread */
    BSR_TRSV_P22,       /* P21 + b threads per block product */
    BSR_TRSV_P23,       /* P21 + the blocks of a row in parallel, one thread per block */
    BSR_TRSV_P24        /* P22 + P23 */
} bsr_trsv_kernel;

typedef enum {
    BSR_TRSV_SYNCFREE = 0, /* one launch per triangle; a row waits until the values it
                              reads are no longer a sentinel (no barriers, no fences) */
    BSR_TRSV_GRAPH,        /* one launch per level, captured once in a CUDA graph */
    BSR_TRSV_LAUNCH,       /* one launch per level, launched each time (reference) */
    BSR_TRSV_SYNCFLAGS     /* one launch per triangle, one warp per row, per-row
                              completion flags after a fence (works in place) */
} bsr_trsv_sched;

typedef struct {
    bsr_trsv_kernel kernel;
    bsr_trsv_sched sched;  /* BSR_TRSV_LEVEL only */
    int factor_float;      /* store factors in float on the device (mixed precision
                              with double vectors: half the factor bytes) */
    int renumber;          /* 0: factors stored as they are; 1 (default): each
                              triangle's block rows stored in its level order (a
                              level's blocks contiguous); 2: also renumber the
                              unknowns in L's level order (a level's rows
                              contiguous in the vectors; level kernel only) */
    int values_later;      /* (gpuilu) allocate the factor and scaling values but do not
                              upload them: an on-device factorization (bsr_gpu_ilu0)
                              fills them */
    int jacobi;            /* 0: exact triangular solves (kernel/sched above); N > 0:
                              N Jacobi sweeps on each factor instead (trisolve=jacobi:N,
                              kernels/trsv/trsv_jacobi.cu) */
} bsr_gpu_ilu_options;

/* Defaults: level kernel, sync-free, factors in their host precision, renumbered. */
void bsr_gpu_ilu_options_default(bsr_gpu_ilu_options *o);

typedef struct bsr_gpu_ilu bsr_gpu_ilu;

/* Upload F's factors, schedules (checked), ordering and scalings to ctx's
 * device (ctx must be a CUDA context and outlive G). */
bsr_status bsr_gpu_ilu_create(bsr_context *ctx, const bsr_ilu *F, const bsr_gpu_ilu_options *o,
                              bsr_gpu_ilu **G);
/* F was refactored (same pattern): re-upload the values only. */
bsr_status bsr_gpu_ilu_refactor(bsr_gpu_ilu *G, const bsr_ilu *F);
/* Switch kernel / schedule without re-uploading (P21-P24 need an ND tree whose
 * nodes are independent, else BSR_ERR_UNSUPPORTED; the first switch to one
 * of them plans the tree from the host factors G was created or last
 * refactored from, which must still exist then). */
bsr_status bsr_gpu_ilu_set_kernel(bsr_gpu_ilu *G, bsr_trsv_kernel kernel, bsr_trsv_sched sched);
/* Triangular solves of the applies from now on: 0 exact, N > 0 N Jacobi sweeps. */
bsr_status bsr_gpu_ilu_set_jacobi(bsr_gpu_ilu *G, int sweeps);
/* Bytes one apply of G moves at the least (bandwidth model of the profile,
 * src/krylov/krylov_bytes.c): *fixed = factor values, indices and scalings read per
 * apply (each Jacobi sweep reads its factor again), *passes = vector passes
 * of n*b*k values (input, output, intermediates between sweeps). */
void bsr_gpu_ilu_apply_bytes(const bsr_gpu_ilu *G, double *fixed, double *passes);
/* Host reference of the Jacobi sweeps on one factor T (src/trsv/trsv_jacobi.c):
 * Y = approximately T^{-1} X after `sweeps` sweeps, as kernels/trsv/trsv_jacobi.cu
 * computes it (L: strict blocks; U: inverted pivot first in each row). */
bsr_status bsr_trsv_jacobi_host(const bsr_matrix *T, int upper, int sweeps, const bsr_multivec *X, bsr_multivec *Y);
/* Y = M^{-1} X (A's original numbering; X == Y allowed).  X current on the
 * device: everything stays there, asynchronous on the context's stream, Y
 * becomes device-current (its device copy allocated if absent).  X on the
 * host only: convenience path (upload, solve, download into Y's host copy).
 * Vectors in the factors' precision, or double with factor_float (mixed). */
bsr_status bsr_gpu_ilu_apply(bsr_gpu_ilu *G, const bsr_multivec *X, bsr_multivec *Y);
/* Same on raw device arrays (row-interleaved n*b x k of vprec; x == y allowed). */
bsr_status bsr_gpu_ilu_apply_dev(bsr_gpu_ilu *G, const void *x, void *y, int k,
                                 bsr_precision vprec);
/* One triangle (tests): Y = L^{-1} X or U^{-1} X in the factors' (permuted)
 * numbering, without scaling; residency as bsr_gpu_ilu_apply. */
bsr_status bsr_gpu_ilu_trsv(bsr_gpu_ilu *G, int upper, const bsr_multivec *X, bsr_multivec *Y);
/* Seconds spent in create: uploads of the factor values, and the analysis
 * (structure uploads, device layout, renumbering, schedule checks in debug
 * builds, graph captures so far, and the tree levels once a tree kernel was
 * selected). */
bsr_status bsr_gpu_ilu_setup_times(const bsr_gpu_ilu *G, double *upload_s, double *analysis_s);
void bsr_gpu_ilu_destroy(bsr_gpu_ilu *G);

/* Overrides of the level kernel's built-in tuning rules (kernels/trsv/trsv_level.cuh),
 * for the benchmark driver's variants (bench trsv --variants, or BSR_TRSV_*
 * variables read there); production code never sets them.  A field < 0
 * keeps the rule. */
typedef struct {
    int team;    /* lanes per row: 4, 8, 16 or 32 */
    int persist; /* sync-free: 0 one CUDA block per chunk by ticket, 1 persistent
                    round robin, 2 persistent by ticket */
    int wide;    /* rows with b*k > 32: 1 loop over the outputs, 2 two vectors a
                    lane (b <= 4), 3 split by vectors, 4 a lane per vector */
    int grab;    /* chunks per ticket in the persistent ticket mode (1..1024) */
    int sleep;   /* ns between polls of a value not yet solved (0..10000) */
    int pipe;    /* 0: the plain persistent kernel for the narrow layout too */
    int pair;    /* 0: each team of the pipelined kernel votes alone (no level-segment vote) */
    int rr;      /* pipelined kernel: 1 round robin (cooperative launch), 0 tickets */
    int tail;    /* 0: no tail kernel (a CUDA block a row for the chain of long rows) */
} bsr_trsv_tuning;
/* Use t for the following solves of this process (NULL: the rules again).
 * Set it between solves, not while one runs on another thread. */
void bsr_trsv_set_tuning(const bsr_trsv_tuning *t);

/* On-device numeric block ILU (kernels/ilu/ilu0_gpu.cu).
 * The scaling and numeric factorization of bsr_ilu done on the GPU, for codes
 * that refactor every time step: ILU(0), or ILUT/ILU2 into the frozen pattern
 * of F's last threshold factorization (the refactor of bsr_ilu_refactor with
 * pattern frozen: same blocks, same classes, ILU2's rules).  create: host
 * symbolic work from F (an ILU(0) symbolic value, ilu_sym_build or
 * symbolic_only; or an ILUT/ILU2 one after its first factorization or pattern
 * pass) uploaded once, or, when the symbolic phase of an ILU(0) was done on
 * the device (natural order), taken from there; F must outlive D.  factor: A (same pattern, current device mirror in D's context,
 * float or double) scaled and factored on the device, level by level of L's
 * schedule, same rules and order of operations as the CPU (pivot
 * regularization counted, strict_pivots, non-finite values -> BSR_ERR_VALUE /
 * BSR_ERR_SINGULAR naming the row); with G (created from the same F) the
 * values are then written into G's device factors and scaling, so that
 * bsr_gpu_ilu_apply uses them.  download: the factors in the layout of F's
 * L and U (double; U's diagonal holds the inverted pivot) and the left
 * scaling, for tests.  stats: of the last factor call. */
typedef struct bsr_gpu_ilu0 bsr_gpu_ilu0;
bsr_status bsr_gpu_ilu0_create(bsr_context *ctx, const bsr_ilu *F, bsr_gpu_ilu0 **D);
/* As create, for factor calls with G (created from the same F): where G's
 * factors are double and stored one to one (not float, no full renumbering,
 * no second-order blocks of ILU2 to leave out), D factors in place in G's
 * value arrays and its left scaling, with no workspace of its own (the
 * factors' bytes once instead of twice in double); factor then takes G or
 * NULL (the values land in G either way), and G's own value uploads
 * (bsr_gpu_ilu_refactor) are refused.  Otherwise as create.  G must
 * outlive D. */
bsr_status bsr_gpu_ilu0_create_into(bsr_context *ctx, const bsr_ilu *F, bsr_gpu_ilu *G, bsr_gpu_ilu0 **D);
/* 1 when D factors in place (create_into took G's arrays), else 0. */
int bsr_gpu_ilu0_in_place(const bsr_gpu_ilu0 *D);
/* F's symbolic phase done on the device (natural-order ILU(0)): the arrays
 * only the creation of the preconditioner and of its factorization read
 * (A's columns, L's and U's columns, U's schedule) released, once both
 * exist and D factors in place; a further create from F is refused.  No-op
 * when F has none. */
void bsr_ilu0_dsym_trim(bsr_ilu *F);
bsr_status bsr_gpu_ilu0_factor(bsr_gpu_ilu0 *D, const bsr_matrix *A, bsr_gpu_ilu *G);
bsr_status bsr_gpu_ilu0_download(const bsr_gpu_ilu0 *D, double *Lval, double *Uval, double *scale);
bsr_status bsr_gpu_ilu0_stats(const bsr_gpu_ilu0 *D, int *pivots_regularized, int *scaling_fallbacks,
                              double *factor_s);
/* *rows: the rows of D's pattern that nest in their first off-diagonal
 * block's row, which its factorization without update lists takes a panel
 * at a time (0 with the lists). */
bsr_status bsr_gpu_ilu0_nest_rows(const bsr_gpu_ilu0 *D, int *rows);
/* The rows of D's dense tail, which its factorization takes as one dense
 * matrix after the sync-free rows (kernels/ilu/ilu0_tail.cu; 0: none). */
int bsr_gpu_ilu0_tail_rows(const bsr_gpu_ilu0 *D);
void bsr_gpu_ilu0_destroy(bsr_gpu_ilu0 *D);

/* Tests only: on (nonzero), the symbolic phase of an ILU(0) factored on the
 * device (natural order) is done on the host (to compare the two). */
void bsr_ilu_test_symbolic_host(int on);

#ifdef __cplusplus
}
#endif
#endif
