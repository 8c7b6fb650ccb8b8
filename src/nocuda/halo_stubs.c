/* SPDX-License-Identifier: BSD-3-Clause */
/* CPU-only build: the device halo staging (kernels/halo.cu) reports
 * BSR_ERR_NODEVICE; distributed products then run on the host. */
#include "internal.h"

static bsr_status nodev(const char *fn)
{
    return bsr_error(BSR_ERR_NODEVICE, "%s: bsrsolve was built without CUDA", fn);
}

bsr_status bsr_cuda_pinned(size_t bytes, void **p) { (void)bytes; *p = NULL; return nodev("bsr_cuda_pinned"); }
void bsr_cuda_pinned_free(void *p) { (void)p; }
bsr_status bsr_cuda_buffer(bsr_context *ctx, size_t bytes, void **p)
{
    (void)ctx; (void)bytes; *p = NULL;
    return nodev("bsr_cuda_buffer");
}
void bsr_cuda_buffer_free(void *p) { (void)p; }
bsr_status bsr_cuda_gather_rows(bsr_context *ctx, const bsr_multivec *X, const int *idx, int n,
                                size_t rowlen, void *dst)
{
    (void)ctx; (void)X; (void)idx; (void)n; (void)rowlen; (void)dst;
    return nodev("bsr_cuda_gather_rows");
}
bsr_status bsr_cuda_copy_async(bsr_context *ctx, void *dst, const void *src, size_t bytes)
{
    (void)ctx; (void)dst; (void)src; (void)bytes;
    return nodev("bsr_cuda_copy_async");
}
