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

/* The values of block rows r0 <= i < r1 moved into their slice lanes (out =
 * 0), or back out of them into val (out = 1): a thread takes its row's blocks
 * in order (contiguous in val, whose first block is A's block qbase), the
 * lanes of a warp touch the sliced copy side by side. */
template <typename T>
__global__ void sell_vals_kernel(int r0, int r1, int B, const int *__restrict__ rowptr, const int *__restrict__ sptr,
                                 int qbase, T *val, T *sval, int out)
{
    const int i = r0 + blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= r1) return;
    const int s = i / SELL_C, l = i - s * SELL_C, q0 = rowptr[i], len = rowptr[i + 1] - q0, bb = B * B;
    for (int p = 0; p < len; p++) {
        T *a = val + (size_t)(q0 - qbase + p) * bb;
        T *g = sval + (size_t)(sptr[s] + p * SELL_C) * bb;
        for (int r = 0; r < B; r++)
            for (int c = 0; c < B; c++) {
                if (out) a[r * B + c] = g[sell_off(B, r, c, l)];
                else g[sell_off(B, r, c, l)] = a[r * B + c];
            }
    }
}

/* sell_vals_kernel over rows [r0, r1) in A's precision on stream st. */
static bsr_status sell_vals(cudaStream_t st, const bsr_matrix *A, const bsr_dev_matrix *d, int r0, int r1, int qbase,
                            void *val, int out)
{
    if (r1 <= r0) return BSR_OK;
    const unsigned nb = (unsigned)((r1 - r0 + 127) / 128);
    if (A->prec == BSR_DOUBLE)
        sell_vals_kernel<double><<<nb, 128, 0, st>>>(r0, r1, A->b, d->rowptr, d->sptr, qbase, (double *)val,
                                                     (double *)d->sval, out);
    else
        sell_vals_kernel<float><<<nb, 128, 0, st>>>(r0, r1, A->b, d->rowptr, d->sptr, qbase, (float *)val,
                                                    (float *)d->sval, out);
    CU_LAUNCHED("sell_vals_kernel");
    return BSR_OK;
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
    if (d->sell == 1) {   /* sell 1: val holds the current values (never released then) */
        BSR_TRY(sell_vals(ctx->cuda->stream, A, d, 0, A->nbrows, 0, d->val, 0));
        d->sell = 2;
    }
    *avail = d->sell == 2;
    return BSR_OK;
}

bsr_status bsr_cuda_matrix_bsr(bsr_context *ctx, const bsr_matrix *A)
{
    bsr_dev_matrix *d = (bsr_dev_matrix *)A->dev;
    if (!d || !d->bsr_gone) return BSR_OK;
    const size_t vb = (size_t)A->nnzb * A->b * A->b * bsr_precision_size(A->prec);
    CU_TRY(bsr_cu_malloc(&d->val, vb > 0 ? vb : 8));
    bsr_status s = sell_vals(ctx->cuda->stream, A, d, 0, A->nbrows, 0, d->val, 1);
    if (s != BSR_OK) { bsr_cu_free(d->val); d->val = NULL; return s; }
    d->bsr_gone = 0;   /* both layouts current until the next product drops one */
    return BSR_OK;
}

void bsr_spmm_drop_bsr(bsr_context *ctx, const bsr_matrix *A)
{
    bsr_dev_matrix *d = (bsr_dev_matrix *)A->dev;
    if (!d || !d->one_layout || d->sell != 2 || d->bsr_gone) return;
    /* the sliced copy is current (sell 2): the products queued read it, not val */
    if (cudaStreamSynchronize(ctx->cuda->stream) != cudaSuccess) { (void)cudaGetLastError(); return; }
    bsr_cu_free(d->val);
    d->val = NULL;
    d->bsr_gone = 1;
}

bsr_status bsr_spmm_sell_upload(bsr_context *ctx, const bsr_matrix *A)
{
    const bsr_dev_matrix *d = bsr_cuda_dmat(A);
    const int n = A->nbrows;
    const size_t blk = (size_t)A->b * A->b * bsr_precision_size(A->prec);
    /* 64 MiB of blocks a round, or the longest row */
    size_t cap = ((size_t)64 << 20) / blk;
    if (cap < (size_t)d->maxlen) cap = (size_t)d->maxlen;
    if (cap > (size_t)A->nnzb) cap = (size_t)A->nnzb;
    void *stage = NULL;
    CU_TRY(bsr_cu_malloc(&stage, (cap ? cap : 1) * blk));
    bsr_status s = BSR_OK;
    for (int r0 = 0, r1; r0 < n && s == BSR_OK; r0 = r1) {
        const int q0 = A->rowptr[r0];
        r1 = r0 + 1;
        while (r1 < n && (size_t)(A->rowptr[r1 + 1] - q0) <= cap) r1++;
        const size_t nq = (size_t)(A->rowptr[r1] - q0);
        /* synchronous on the stream: the previous round's kernel has read the stage */
        s = bsr_cuda_h2d(ctx, stage, (const char *)A->val + (size_t)q0 * blk, nq * blk);
        if (s == BSR_OK) s = sell_vals(ctx->cuda->stream, A, d, r0, r1, q0, stage, 0);
    }
    if (s == BSR_OK && cudaStreamSynchronize(ctx->cuda->stream) != cudaSuccess)
        s = bsr_cuda_fail(cudaGetLastError(), "cudaStreamSynchronize (sliced upload)", __FILE__, __LINE__);
    bsr_cu_free(stage);
    return s;
}
