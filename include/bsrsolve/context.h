/* bsrsolve CUDA context, device-resident objects and GPU kernels (issue 3/6).
 * Included by bsrsolve.h. */
#ifndef BSRSOLVE_CONTEXT_H
#define BSRSOLVE_CONTEXT_H

#include "core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- issue 6: GPU block triangular solves and the device ILU preconditioner ----
 * ILU factors computed on the CPU (bsr_ilu, see ilu.h) are uploaded once;
 * refactor re-uploads values only; apply = scaling + permutation + L solve +
 * U solve entirely on the device.  Every kernel is deterministic. */
#include "ilu.h"

typedef enum {
    BSR_TRSV_LEVEL = 0, /* production: level-scheduled P24 (rows of a level in parallel) */
    BSR_TRSV_P21,       /* ND tree levels, one CUDA block per node, one thread */
    BSR_TRSV_P22,       /* P21 + b threads per block product */
    BSR_TRSV_P23,       /* P21 + the blocks of a row in parallel, one thread per block */
    BSR_TRSV_P24        /* P22 + P23 */
} bsr_trsv_kernel;

typedef enum {
    BSR_TRSV_SYNCFREE = 0, /* one launch per triangle; rows wait on per-row completion flags */
    BSR_TRSV_GRAPH,        /* one launch per level, captured once in a CUDA graph */
    BSR_TRSV_LAUNCH        /* one launch per level, launched each time (reference) */
} bsr_trsv_sched;

typedef struct {
    bsr_trsv_kernel kernel;
    bsr_trsv_sched sched;  /* BSR_TRSV_LEVEL only */
    int factor_float;      /* store factors in float on the device (mixed precision
                              with double vectors: half the factor bytes) */
    int renumber;          /* store each triangle's block rows in its level order so
                              that a level's blocks are contiguous (default 1) */
} bsr_gpu_ilu_options;

/* Defaults: level kernel, sync-free, factors in their host precision, renumbered. */
void bsr_gpu_ilu_options_default(bsr_gpu_ilu_options *o);

typedef struct bsr_gpu_ilu bsr_gpu_ilu;

/* Upload F's factors, schedules, ordering and scalings to the current device. */
bsr_status bsr_gpu_ilu_create(const bsr_ilu *F, const bsr_gpu_ilu_options *o, bsr_gpu_ilu **G);
/* F was refactored (same pattern): re-upload the values only. */
bsr_status bsr_gpu_ilu_refactor(bsr_gpu_ilu *G, const bsr_ilu *F);
/* Switch kernel / schedule without re-uploading (P21-P24 need an ND tree whose
 * nodes are independent, else BSR_ERR_UNSUPPORTED). */
bsr_status bsr_gpu_ilu_set_kernel(bsr_gpu_ilu *G, bsr_trsv_kernel kernel, bsr_trsv_sched sched);
/* Y = M^{-1} X on device arrays (row-interleaved, k vectors of vprec, in A's
 * original numbering; x == y allowed).  Asynchronous on G's stream. */
bsr_status bsr_gpu_ilu_apply_dev(bsr_gpu_ilu *G, const void *x, void *y, int k,
                                 bsr_precision vprec);
/* Convenience: Y = M^{-1} X for host multivectors (uploads X, downloads Y). */
bsr_status bsr_gpu_ilu_apply_host(bsr_gpu_ilu *G, const bsr_multivec *X, bsr_multivec *Y);
/* Single triangle solves on host multivectors (tests): Y = L^{-1} X or U^{-1} X
 * in the factors' (permuted) numbering, unscaled. */
bsr_status bsr_gpu_trsv_host(bsr_gpu_ilu *G, int upper, const bsr_multivec *X, bsr_multivec *Y);
/* Seconds spent in create: uploads, and device analysis (renumbering, graphs). */
bsr_status bsr_gpu_ilu_setup_times(const bsr_gpu_ilu *G, double *upload_s, double *analysis_s);
void bsr_gpu_ilu_destroy(bsr_gpu_ilu *G);
/* ---- end issue 6 ---- */

#ifdef __cplusplus
}
#endif
#endif
