/* SPDX-License-Identifier: BSD-3-Clause */
/* The seed study's GPU SpMM kernels P11-P14 for Y = alpha*A*X + beta*Y with
 * row-interleaved multivectors (x[(col*b + c)*k + j]).  All accumulate in
 * double and sum in a fixed order: deterministic bit for bit. */
#include "spmm_common.h"

#define P12_MAX_THREADS 1024 /* CUDA's limit on threads per block */
#define P13_THREADS 256      /* chunk size target of P13 */

/* P11: one thread per block row; it runs over all blocks of its row once per
 * vector j (row values re-read from cache for each j). */
template <typename T, int B>
__global__ void p11_kernel(int nbrows, int k, const int *__restrict__ rowptr, const int *__restrict__ colind,
                           const T *__restrict__ val, double alpha, const T *__restrict__ x, double beta,
                           T *__restrict__ y)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= nbrows) return;
    int p0 = rowptr[i], p1 = rowptr[i + 1];
    for (int j = 0; j < k; j++) {
        double acc[B];
#pragma unroll
        for (int r = 0; r < B; r++) acc[r] = 0;
        for (int p = p0; p < p1; p++) {
            const T *blk = val + (size_t)p * B * B;
            const T *xb = x + (size_t)colind[p] * B * k + j;
#pragma unroll
            for (int c = 0; c < B; c++) {
                double xv = (double)xb[c * k];
#pragma unroll
                for (int r = 0; r < B; r++) acc[r] += (double)blk[r * B + c] * xv;
            }
        }
#pragma unroll
        for (int r = 0; r < B; r++) spmm_put(y + ((size_t)i * B + r) * k + j, acc[r], alpha, beta);
    }
}

/* P12/P13: one CUDA block per block row, thread (q, r, j) for block q of the
 * current chunk of rc blocks, block row r and vector j.  The chunk's blocks are
 * staged in shared memory; each thread accumulates over the chunks it sees
 * (P12: exactly one), then the rc partials of (r, j) are summed in order. */
template <typename T>
__global__ void p12_kernel(int b, int k, int j0, int kk, int rc, const int *__restrict__ rowptr,
                           const int *__restrict__ colind, const T *__restrict__ val, double alpha,
                           const T *__restrict__ x, double beta, T *__restrict__ y)
{
    extern __shared__ double p12_smem[];
    double *part = p12_smem;
    T *sA = (T *)(part + blockDim.x);
    int i = blockIdx.x, t = threadIdx.x, bk = b * kk, bb = b * b;
    int q = t / bk, rem = t % bk, r = rem / kk, j = rem % kk;
    int p0 = rowptr[i], p1 = rowptr[i + 1];
    double acc = 0;
    for (int base = p0; base < p1; base += rc) {
        int nb = min(rc, p1 - base);
        for (int e = t; e < nb * bb; e += blockDim.x) sA[e] = val[(size_t)base * bb + e];
        __syncthreads();
        if (q < nb) {
            const T *xb = x + (size_t)colind[base + q] * b * k + j0 + j;
            const T *a = sA + q * bb + r * b;
            for (int c = 0; c < b; c++) acc += (double)a[c] * (double)xb[c * k];
        }
        __syncthreads();
    }
    part[t] = acc;
    __syncthreads();
    if (t < bk) {
        double s = 0;
        for (int qq = 0; qq < rc; qq++) s += part[qq * bk + t];
        spmm_put(y + ((size_t)i * b + r) * k + j0 + j, s, alpha, beta);
    }
}

/* P14: R block rows per CUDA block, one thread per output (row, r, j) that
 * runs over its row's blocks; R from b, k and the row lengths. */
template <typename T, int B>
__global__ void p14_kernel(int nbrows, int k, int j0, int kk, int R, const int *__restrict__ rowptr,
                           const int *__restrict__ colind, const T *__restrict__ val, double alpha,
                           const T *__restrict__ x, double beta, T *__restrict__ y)
{
    int bk = B * kk, t = threadIdx.x, lr = t / bk, rem = t % bk, r = rem / kk, j = rem % kk;
    int i = blockIdx.x * R + lr;
    if (lr >= R || i >= nbrows) return;
    int p1 = rowptr[i + 1];
    double acc = 0;
    for (int p = rowptr[i]; p < p1; p++) {
        const T *a = val + (size_t)p * B * B + r * B;
        const T *xb = x + (size_t)__ldg(colind + p) * B * k + j0 + j;
#pragma unroll
        for (int c = 0; c < B; c++) acc += (double)__ldg(a + c) * (double)__ldg(xb + c * k);
    }
    spmm_put(y + ((size_t)i * B + r) * k + j0 + j, acc, alpha, beta);
}

bsr_status bsr_spmm_p11(bsr_context *ctx, const bsr_matrix *A, double alpha, const void *x,
                        double beta, void *y, int k)
{
    const bsr_dev_matrix *d = bsr_cuda_dmat(A);
    int th = 128, grid = (A->nbrows + th - 1) / th;
    cudaStream_t st = ctx->cuda->stream;
    if (A->nbrows == 0) return BSR_OK;
    if (A->prec == BSR_DOUBLE) {
        BSR_SWITCH_B(A->b, (p11_kernel<double, B_><<<grid, th, 0, st>>>(A->nbrows, k, d->rowptr, d->colind,
                     (const double *)d->val, alpha, (const double *)x, beta, (double *)y)));
    } else {
        BSR_SWITCH_B(A->b, (p11_kernel<float, B_><<<grid, th, 0, st>>>(A->nbrows, k, d->rowptr, d->colind,
                     (const float *)d->val, (double)(float)alpha, (const float *)x, (double)(float)beta, (float *)y)));
    }
    CU_LAUNCHED("p11_kernel");
    return BSR_OK;
}

bsr_status bsr_spmm_p12(bsr_context *ctx, const bsr_matrix *A, double alpha, const void *x,
                        double beta, void *y, int k, int j0, int kk, int chunked)
{
    const bsr_dev_matrix *d = bsr_cuda_dmat(A);
    int b = A->b, bk = b * kk, len = d->maxlen > 0 ? d->maxlen : 1, rc;
    if (!chunked) {
        long long need = (long long)bk * len;
        if (need > P12_MAX_THREADS)
            return bsr_error(BSR_ERR_UNSUPPORTED,
                             "P12: block row %d has %d blocks: n*k*r = %d*%d*%d = %lld threads exceed the "
                             "CUDA block limit of %d (use P13, which loops over chunks)",
                             d->maxrow, d->maxlen, b, kk, d->maxlen, need, P12_MAX_THREADS);
        rc = len;
    } else {
        rc = P13_THREADS / bk;
        rc = rc < 1 ? 1 : rc > len ? len : rc;
    }
    int th = bk * rc;
    size_t es = bsr_precision_size(A->prec);
    size_t smem = (size_t)th * sizeof(double) + (size_t)rc * b * b * es;
    if (smem > (size_t)ctx->cuda->smem_optin)
        return bsr_error(BSR_ERR_UNSUPPORTED, "P12: %zu bytes of shared memory for block row %d exceed the device's %d",
                         smem, d->maxrow, ctx->cuda->smem_optin);
    cudaStream_t st = ctx->cuda->stream;
    if (A->nbrows == 0) return BSR_OK;
    if (A->prec == BSR_DOUBLE) {
        if (smem > 48 * 1024)
            CU_TRY(cudaFuncSetAttribute(p12_kernel<double>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
        p12_kernel<double><<<A->nbrows, th, smem, st>>>(b, k, j0, kk, rc, d->rowptr, d->colind, (const double *)d->val,
                                                         alpha, (const double *)x, beta, (double *)y);
    } else {
        if (smem > 48 * 1024)
            CU_TRY(cudaFuncSetAttribute(p12_kernel<float>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
        p12_kernel<float><<<A->nbrows, th, smem, st>>>(b, k, j0, kk, rc, d->rowptr, d->colind, (const float *)d->val,
                                                        (double)(float)alpha, (const float *)x, (double)(float)beta, (float *)y);
    }
    CU_LAUNCHED("p12_kernel (P12/P13)");
    return BSR_OK;
}

bsr_status bsr_spmm_p14(bsr_context *ctx, const bsr_matrix *A, double alpha, const void *x,
                        double beta, void *y, int k, int j0, int kk)
{
    const bsr_dev_matrix *d = bsr_cuda_dmat(A);
    int bk = A->b * kk;
    /* fewer rows per CUDA block when row lengths are very uneven, so one long
     * row holds back fewer threads */
    int target = d->maxlen > 8 * d->meanlen + 8 ? 128 : 256;
    int R = target / bk < 1 ? 1 : target / bk;
    int th = R * bk, grid = (A->nbrows + R - 1) / R;
    cudaStream_t st = ctx->cuda->stream;
    if (A->nbrows == 0) return BSR_OK;
    if (A->prec == BSR_DOUBLE) {
        BSR_SWITCH_B(A->b, (p14_kernel<double, B_><<<grid, th, 0, st>>>(A->nbrows, k, j0, kk, R, d->rowptr, d->colind,
                     (const double *)d->val, alpha, (const double *)x, beta, (double *)y)));
    } else {
        BSR_SWITCH_B(A->b, (p14_kernel<float, B_><<<grid, th, 0, st>>>(A->nbrows, k, j0, kk, R, d->rowptr, d->colind,
                     (const float *)d->val, (double)(float)alpha, (const float *)x, (double)(float)beta, (float *)y)));
    }
    CU_LAUNCHED("p14_kernel");
    return BSR_OK;
}
