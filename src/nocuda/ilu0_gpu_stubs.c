/* SPDX-License-Identifier: BSD-3-Clause */
/* CPU-only build: the on-device ILU(0) factorization (kernels/ilu0_gpu.cu)
 * reports BSR_ERR_NODEVICE. */
#include "ilu_impl.h"

static bsr_status nodev(const char *fn)
{
    return bsr_error(BSR_ERR_NODEVICE, "%s: bsrsolve was built without CUDA", fn);
}

bsr_status bsr_ilu0_symbolic_dev(bsr_context *ctx, bsr_ilu *F, const bsr_matrix *A)
{
    (void)ctx; (void)F; (void)A;
    return nodev("bsr_ilu0_symbolic_dev");
}

bsr_status bsr_gpu_ilu0_create(bsr_context *ctx, const bsr_ilu *F, bsr_gpu_ilu0 **D)
{
    (void)ctx; (void)F;
    if (D) *D = NULL;
    return nodev("bsr_gpu_ilu0_create");
}
bsr_status bsr_gpu_ilu0_factor(bsr_gpu_ilu0 *D, const bsr_matrix *A, bsr_gpu_ilu *G)
{
    (void)D; (void)A; (void)G;
    return nodev("bsr_gpu_ilu0_factor");
}
bsr_status bsr_gpu_ilu0_download(const bsr_gpu_ilu0 *D, double *Lval, double *Uval, double *scale)
{
    (void)D; (void)Lval; (void)Uval; (void)scale;
    return nodev("bsr_gpu_ilu0_download");
}
bsr_status bsr_gpu_ilu0_stats(const bsr_gpu_ilu0 *D, int *pivots_regularized, int *scaling_fallbacks,
                              double *factor_s)
{
    (void)D; (void)pivots_regularized; (void)scaling_fallbacks; (void)factor_s;
    return nodev("bsr_gpu_ilu0_stats");
}
void bsr_gpu_ilu0_destroy(bsr_gpu_ilu0 *D) { (void)D; }

bsr_status bsr_gpu_ilut_rows(bsr_context *ctx, bsr_ilu *F, ilu_dev_counts *c)
{
    (void)ctx; (void)F; (void)c;
    return nodev("bsr_gpu_ilut_rows");
}
