/* SPDX-License-Identifier: BSD-3-Clause */
/* The comparison code of the benchmarks (library bsrbench, bench/anchors/):
 * vendor anchors the drivers of `bsrsolve bench spmm` and `bench trsv` time
 * against our kernels.  Not part of libbsrsolve; the CLI and the tests that
 * need them link bsrbench.  Without CUDA each answers BSR_ERR_NODEVICE
 * (bench/anchors/nocuda/). */
#ifndef BSR_ANCHORS_H
#define BSR_ANCHORS_H

#include "bsrsolve.h"
#include "gpu_ilu.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- SpMM (bench/bench_spmm.c) ---------------------------------------------- */
/* cuSPARSE anchor (spmm_cusparse_bench.cu): bsrmv (k = 1) or bsrmm, the
 * library's SpMM kernel "cusparse" with X and Y converted to column-major
 * scratch copies outside the timed region; median ms of reps multiplies
 * only; the result of the last is written back into Y. */
bsr_status bsr_cuda_cusparse_bench(bsr_context *ctx, double alpha, const bsr_matrix *A,
                                   const bsr_multivec *X, double beta, bsr_multivec *Y, int warm,
                                   int reps, double *ms);
/* Generic cuSPARSE anchors of bench spmm (spmm_cusparse_generic.cu):
 * Y = A X by cusparseSpMV (k = 1) / cusparseSpMM with A as a BSR descriptor
 * (csr 0) or in its scalar CSR form (csr 1, built outside the timing); median ms of reps after warm calls of the fastest algorithm that
 * accepts the product, its name into name; Y receives the product. */
bsr_status bsr_cuda_cusparse_generic_bench(bsr_context *ctx, int csr, const bsr_matrix *A, const bsr_multivec *X,
                                           bsr_multivec *Y, int warm, int reps, double *ms, char *name, size_t nlen);

/* ---- triangular solves (bench/bench_trsv.c) ---------------------------------- */
/* cuSPARSE bsrsv2 (k = 1) / bsrsm2 (k > 1) on the same factors
 * (trsv_cusparse.cu): L unit lower (diag type unit), U with its pivot blocks
 * inverted back.  Times (ms, median of reps, solve only, L then U) and the
 * analysis time of both triangles. */
typedef struct { double ms_solve, ms_analysis; int ok; char why[160]; } bsr_trsv_cusparse;
bsr_status bsr_trsv_cusparse_time(const bsr_ilu_factors *F, int k, int reps, int level_policy,
                                  bsr_trsv_cusparse *r);
/* The generic API on the scalar CSR form of the same factors (trsv_spsv.cu):
 * SpSV (k = 1) / SpSM on L, a product with the block diagonal D^-1,
 * SpSV / SpSM on I + D^-1 U_off.  Median ms of reps (the three calls), the
 * analysis of both triangles, the relative difference from the host solve,
 * the calls' names. */
typedef struct { double ms_solve, ms_analysis, rel_err; int ok; char why[160]; char alg[80]; } bsr_trsv_spsv;
bsr_status bsr_trsv_spsv_time(const bsr_ilu_factors *F, int k, int reps, bsr_trsv_spsv *r);

#ifdef __cplusplus
}
#endif
#endif
