/* SPDX-License-Identifier: BSD-3-Clause */
/* CPU-only build: the vendor anchors of the benchmarks answer
 * BSR_ERR_NODEVICE (the reports then say "not run"), clearing their results. */
#include "internal.h"
#include "cusparse_ref.h"
#include "anchors.h"
#include <string.h>

#define NODEV(fn) bsr_error(BSR_ERR_NODEVICE, "%s: bsrsolve was built without CUDA", fn)

bsr_status bsr_cusparse_run(const bsr_matrix *A, const bsr_multivec *B, double rtol, int maxit,
                            bsr_cusparse_result *res)
{
    (void)A; (void)B; (void)rtol; (void)maxit;
    memset(res, 0, sizeof *res);
    res->status = bsr_error(BSR_ERR_NODEVICE, "cuSPARSE pipeline: built without CUDA");
    snprintf(res->message, sizeof res->message, "built without CUDA");
    return res->status;
}

bsr_status bsr_cuda_cusparse_bench(bsr_context *ctx, double alpha, const bsr_matrix *A,
                                   const bsr_multivec *X, double beta, bsr_multivec *Y, int warm,
                                   int reps, double *ms)
{
    (void)ctx; (void)alpha; (void)A; (void)X; (void)beta; (void)Y; (void)warm; (void)reps; (void)ms;
    return NODEV("bsr_cuda_cusparse_bench");
}

bsr_status bsr_cuda_cusparse_generic_bench(bsr_context *ctx, int csr, const bsr_matrix *A, const bsr_multivec *X,
                                           bsr_multivec *Y, int warm, int reps, double *ms, char *name, size_t nlen)
{
    (void)ctx; (void)csr; (void)A; (void)X; (void)Y; (void)warm; (void)reps; (void)ms;
    if (nlen) name[0] = 0;
    return NODEV("bsr_cuda_cusparse_generic_bench");
}

bsr_status bsr_trsv_cusparse_time(const bsr_ilu_factors *F, int k, int reps, int level_policy,
                                  bsr_trsv_cusparse *r)
{
    (void)F; (void)k; (void)reps; (void)level_policy;
    if (r) memset(r, 0, sizeof *r);
    return NODEV("bsr_trsv_cusparse_time");
}

bsr_status bsr_trsv_spsv_time(const bsr_ilu_factors *F, int k, int reps, bsr_trsv_spsv *r)
{
    (void)F; (void)k; (void)reps;
    if (r) memset(r, 0, sizeof *r);
    return NODEV("bsr_trsv_spsv_time");
}
