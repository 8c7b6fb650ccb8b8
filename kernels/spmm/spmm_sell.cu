/* SPDX-License-Identifier: BSD-3-Clause */
/* Building and refreshing a device matrix's sliced copy (layout in
 * kernels/spmm/spmm_sell.cuh): the slice offsets on the host from A's pattern,
 * the column indices and values gathered on the device from the BSR mirror. */
#include "spmm_sell.cuh"

__global__ void sell_cols_kernel(int nbrows, const int *__restrict__ rowptr, const int *__restrict__ colind,
                                 const int *__restrict__ sptr, int *__restrict__ scol)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= nbrows) return;
    const int s = i / SELL_C, l = i - s * SELL_C, q0 = rowptr[i], len = rowptr[i + 1] - q0;
    for (int p = 0; p < len; p++) scol[sptr[s] + p * SELL_C + l] = colind[q0 + p];
}

/* The values of block row i moved into its slice lane: a thread reads its
 * row's blocks in order (contiguous), the lanes of a warp write side by side. */
template <typename T>
__global__ void sell_vals_kernel(int nbrows, int B, const int *__restrict__ rowptr, const int *__restrict__ sptr,
                                 const T *__restrict__ val, T *__restrict__ sval)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= nbrows) return;
    const int s = i / SELL_C, l = i - s * SELL_C, q0 = rowptr[i], len = rowptr[i + 1] - q0, bb = B * B;
    for (int p = 0; p < len; p++) {
        const T *a = val + (size_t)(q0 + p) * bb;
        T *g = sval + (size_t)(sptr[s] + p * SELL_C) * bb;
        for (int r = 0; r < B; r++)
            for (int c = 0; c < B; c++) g[sell_off(B, r, c, l)] = a[r * B + c];
    }
}

extern "C" int bsr_cuda_matrix_sliced(const bsr_matrix *A)
{
    const bsr_dev_matrix *d = bsr_cuda_dmat(A);
    return !d ? 0 : d->sell < 0 ? -1 : d->sell == 2;
}

void bsr_spmm_sell_release(bsr_dev_matrix *d)
{
    bsr_cu_free(d->sptr); bsr_cu_free(d->scol); bsr_cu_free(d->sval);
    d->sptr = d->scol = NULL; d->sval = NULL;
    if (d->sell > 0) d->sell = 0;
}

/* Slice offsets of A (nslices + 1 entries); 0 where the padded copy would
 * exceed twice A's blocks plus 32K entries (a few very long rows), or int. */
static int *slice_offsets(const bsr_matrix *A, int ns)
{
    int *sp = (int *)malloc(sizeof(int) * ((size_t)ns + 1));
    if (!sp) return NULL;
    long long tot = 0;
    sp[0] = 0;
    for (int s = 0; s < ns; s++) {
        int m = 0;
        for (int i = s * SELL_C; i < A->nbrows && i < (s + 1) * SELL_C; i++) {
            const int len = A->rowptr[i + 1] - A->rowptr[i];
            if (len > m) m = len;
        }
        tot += (long long)m * SELL_C;
        if (tot > 2LL * A->nnzb + 32768 || tot > 0x7fffffffLL / 2) { free(sp); return NULL; }
        sp[s + 1] = (int)tot;
    }
    return sp;
}

/* The pattern part: slice offsets and column indices; -1 in d->sell where
 * the copy is not kept.  It is kept only while as much device memory stays
 * free after it as it takes itself: a faster product must not make a solve
 * that fits (factors, Krylov vectors allocated later) run out of memory. */
static bsr_status sell_pattern(bsr_context *ctx, const bsr_matrix *A, bsr_dev_matrix *d)
{
    const int n = A->nbrows, ns = (n + SELL_C - 1) / SELL_C;
    bsr_spmm_sell_release(d); /* what a failed earlier try left */
    size_t mfree = 0, mtotal = 0;
    CU_TRY(cudaMemGetInfo(&mfree, &mtotal));
    int *sp = slice_offsets(A, ns);
    if (!sp) { d->sell = -1; return BSR_OK; }
    const size_t tot = (size_t)sp[ns], vb = tot * A->b * A->b * bsr_precision_size(A->prec);
    const size_t need = vb + sizeof(int) * (tot + ns + 1);
    if (mfree < 2 * need) { free(sp); d->sell = -1; return BSR_OK; }
    cudaError_t e = bsr_cu_malloc(&d->sptr, sizeof(int) * ((size_t)ns + 1));
    if (e == cudaSuccess) e = bsr_cu_malloc(&d->scol, sizeof(int) * (tot ? tot : 1));
    if (e == cudaSuccess) e = bsr_cu_malloc(&d->sval, vb ? vb : 8);
    if (e != cudaSuccess) {
        free(sp);
        bsr_spmm_sell_release(d);
        if (e != cudaErrorMemoryAllocation) return bsr_cuda_fail(e, "bsr_cu_malloc (sliced copy)", __FILE__, __LINE__);
        (void)cudaGetLastError();
        d->sell = -1; /* the BSR kernels do without it */
        return BSR_OK;
    }
    cudaStream_t st = ctx->cuda->stream;
    bsr_status s = bsr_cuda_h2d(ctx, d->sptr, sp, sizeof(int) * ((size_t)ns + 1));
    free(sp);
    if (s == BSR_OK && n > 0) {
        sell_cols_kernel<<<(n + 255) / 256, 256, 0, st>>>(n, d->rowptr, d->colind, d->sptr, d->scol);
        CU_LAUNCHED("sell_cols_kernel");
    }
    if (s != BSR_OK) { bsr_spmm_sell_release(d); return s; }
    d->sell = 1;
    return BSR_OK;
}

bsr_status bsr_spmm_sell_prepare(bsr_context *ctx, const bsr_matrix *A, int *avail)
{
    bsr_dev_matrix *d = (bsr_dev_matrix *)A->dev;
    if (d->sell == 0) BSR_TRY(sell_pattern(ctx, A, d));
    if (d->sell == 1) {
        const int n = A->nbrows;
        cudaStream_t st = ctx->cuda->stream;
        if (n > 0) {
            if (A->prec == BSR_DOUBLE)
                sell_vals_kernel<double><<<(n + 127) / 128, 128, 0, st>>>(n, A->b, d->rowptr, d->sptr,
                                                                          (const double *)d->val, (double *)d->sval);
            else
                sell_vals_kernel<float><<<(n + 127) / 128, 128, 0, st>>>(n, A->b, d->rowptr, d->sptr,
                                                                        (const float *)d->val, (float *)d->sval);
            CU_LAUNCHED("sell_vals_kernel");
        }
        d->sell = 2;
    }
    *avail = d->sell == 2;
    return BSR_OK;
}
