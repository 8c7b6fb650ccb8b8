/* ROWJ: our best SpMM kernel on the H100 (measured, bench/RESULTS.md).
 *
 * One thread per (block row i, scalar row r of the block, group of J
 * vectors); R block rows per CUDA block.  A thread walks its row's blocks,
 * loads the b values A_p(r, :) once (the G threads of the same r read the
 * same addresses: one broadcast from L1) and multiplies them by the b x J
 * values of X it needs (contiguous in j: the threads of a row read a
 * contiguous span of X), keeping J accumulators in registers.  J > 1 cuts the
 * thread count and the re-reads of A by J and gives each thread J*b
 * independent loads per block (more bytes in flight), which is what the
 * thread-per-output P14 (= ROWJ with J = 1) lacks at larger k; J = 1 is the
 * best choice for k <= 2.  Sums run in a fixed order: deterministic. */
#include "spmm_common.h"

#define ROWJ_THREADS 256

template <typename T, int B, int J>
__global__ void __launch_bounds__(ROWJ_THREADS)
rowj_kernel(int nbrows, int k, int j0, int kk, int G, int R, const int *__restrict__ rowptr,
            const int *__restrict__ colind, const T *__restrict__ val, double alpha, const T *__restrict__ x,
            double beta, T *__restrict__ y)
{
    int t = threadIdx.x, per = B * G, lr = t / per, rem = t - lr * per, r = rem / G, g = rem - r * G;
    int i = blockIdx.x * R + lr;
    if (lr >= R || i >= nbrows) return;
    int jb = g * J, jn = kk - jb < J ? kk - jb : J;
    double acc[J];
#pragma unroll
    for (int jj = 0; jj < J; jj++) acc[jj] = 0;
    const T *xb0 = x + j0 + jb;
    int p1 = __ldg(rowptr + i + 1);
#pragma unroll 2
    for (int p = __ldg(rowptr + i); p < p1; p++) {
        const T *a = val + (size_t)p * B * B + r * B;
        const T *xb = xb0 + (size_t)__ldg(colind + p) * B * k;
#pragma unroll
        for (int c = 0; c < B; c++) {
            double av = (double)__ldg(a + c);
#pragma unroll
            for (int jj = 0; jj < J; jj++)
                if (J == 1 || jj < jn) acc[jj] += av * (double)__ldg(xb + c * k + jj);
        }
    }
    T *yp = y + ((size_t)i * B + r) * k + j0 + jb;
#pragma unroll
    for (int jj = 0; jj < J; jj++)
        if (J == 1 || jj < jn) spmm_put(yp + jj, acc[jj], alpha, beta);
}

/* Vectors per thread for a chunk of kk vectors (measured rule; BSR_ROWJ_J
 * overrides it for the benchmark's sweeps). */
int bsr_spmm_rowj_cols(int b, int kk)
{
    const char *env = getenv("BSR_ROWJ_J");
    if (env && atoi(env) >= 1 && atoi(env) <= 4) return atoi(env);
    (void)b;
    return kk <= 2 ? 1 : kk <= 4 ? 2 : kk <= 12 ? 3 : 4;
}

template <typename T, int B>
static bsr_status rowj_b(bsr_context *ctx, const bsr_matrix *A, double alpha, const T *x, double beta, T *y,
                         int k, int j0, int kk)
{
    const bsr_dev_matrix *d = bsr_cuda_dmat(A);
    int J = bsr_spmm_rowj_cols(B, kk), G = (kk + J - 1) / J;
    /* fewer rows per CUDA block when row lengths are very uneven, so one long
     * row holds back fewer threads */
    int target = d->maxlen > 8 * d->meanlen + 8 ? ROWJ_THREADS / 2 : ROWJ_THREADS;
    const char *env = getenv("BSR_ROWJ_T"); /* sweep knob: threads per CUDA block */
    if (env && atoi(env) >= 32 && atoi(env) <= ROWJ_THREADS) target = atoi(env);
    int R = target / (B * G) < 1 ? 1 : target / (B * G);
    int th = R * B * G, grid = (int)(((long long)A->nbrows + R - 1) / R);
    cudaStream_t st = ctx->cuda->stream;
    const T *v = (const T *)d->val;
    switch (J) {
    case 1: rowj_kernel<T, B, 1><<<grid, th, 0, st>>>(A->nbrows, k, j0, kk, G, R, d->rowptr, d->colind, v, alpha, x, beta, y); break;
    case 2: rowj_kernel<T, B, 2><<<grid, th, 0, st>>>(A->nbrows, k, j0, kk, G, R, d->rowptr, d->colind, v, alpha, x, beta, y); break;
    case 3: rowj_kernel<T, B, 3><<<grid, th, 0, st>>>(A->nbrows, k, j0, kk, G, R, d->rowptr, d->colind, v, alpha, x, beta, y); break;
    default: rowj_kernel<T, B, 4><<<grid, th, 0, st>>>(A->nbrows, k, j0, kk, G, R, d->rowptr, d->colind, v, alpha, x, beta, y); break;
    }
    CU_LAUNCHED("rowj_kernel");
    return BSR_OK;
}

bsr_status bsr_spmm_rowj(bsr_context *ctx, const bsr_matrix *A, double alpha, const void *x,
                         double beta, void *y, int k, int j0, int kk)
{
    if (A->nbrows == 0) return BSR_OK;
    if (A->prec == BSR_DOUBLE) {
        BSR_SWITCH_B(A->b, return (rowj_b<double, B_>(ctx, A, alpha, (const double *)x, beta, (double *)y, k, j0, kk)));
    } else {
        BSR_SWITCH_B(A->b, return (rowj_b<float, B_>(ctx, A, (double)(float)alpha, (const float *)x, (double)(float)beta,
                                                     (float *)y, k, j0, kk)));
    }
    return BSR_OK;
}
