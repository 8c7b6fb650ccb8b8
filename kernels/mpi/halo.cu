/* SPDX-License-Identifier: BSD-3-Clause */
/* Halo staging for the distributed product: pinned host and device buffers,
 * a row gather (the rows a neighbour needs, packed), asynchronous copies on
 * the context's stream. */
#include "cuda_internal.h"

extern "C" bsr_status bsr_cuda_pinned(size_t bytes, void **p)
{
    CU_TRY(bsr_cu_malloc_host(p, bytes ? bytes : 8));
    return BSR_OK;
}

extern "C" void bsr_cuda_pinned_free(void *p)
{
    if (p) bsr_cu_free_host(p);
    (void)cudaGetLastError();
}

extern "C" bsr_status bsr_cuda_buffer(bsr_context *ctx, size_t bytes, void **p)
{
    BSR_TRY(bsr_cuda_enter(ctx));
    CU_TRY(bsr_cu_malloc(p, bytes ? bytes : 8));
    return BSR_OK;
}

extern "C" void bsr_cuda_buffer_free(void *p)
{
    if (p) bsr_cu_free(p);
    (void)cudaGetLastError();
}

/* dst[t*rowlen + e] = src[idx[t]*rowlen + e]: one thread per value. */
template <typename T>
__global__ void gather_rows(int64_t total, size_t rowlen, const int *__restrict__ idx,
                            const T *__restrict__ src, T *__restrict__ dst)
{
    int64_t e = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= total) return;
    int64_t t = e / (int64_t)rowlen, c = e - t * (int64_t)rowlen;
    dst[e] = src[(int64_t)idx[t] * (int64_t)rowlen + c];
}

extern "C" bsr_status bsr_cuda_gather_rows(bsr_context *ctx, const bsr_multivec *X, const int *idx, int n,
                                           size_t rowlen, void *dst)
{
    int64_t total = (int64_t)n * (int64_t)rowlen;
    if (total == 0) return BSR_OK;
    const void *src = bsr_cuda_multivec_data(X);
    if (!src) return bsr_error(BSR_ERR_ARG, "halo gather: the vector is not on the device");
    BSR_TRY(bsr_cuda_enter(ctx));
    unsigned nb = (unsigned)((total + 255) / 256);
    if (X->prec == BSR_DOUBLE)
        gather_rows<double><<<nb, 256, 0, bsr_cuda_stream(ctx)>>>(total, rowlen, idx, (const double *)src, (double *)dst);
    else
        gather_rows<float><<<nb, 256, 0, bsr_cuda_stream(ctx)>>>(total, rowlen, idx, (const float *)src, (float *)dst);
    CU_LAUNCHED("gather_rows");
    return BSR_OK;
}

extern "C" bsr_status bsr_cuda_copy_async(bsr_context *ctx, void *dst, const void *src, size_t bytes)
{
    if (!bytes) return BSR_OK;
    BSR_TRY(bsr_cuda_enter(ctx));
    CU_TRY(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, bsr_cuda_stream(ctx)));
    return BSR_OK;
}
