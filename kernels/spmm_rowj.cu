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

/* Vectors per thread for a chunk of kk vectors.  Rule from the (J, threads)
 * sweep on the H100 (bench/RESULTS.md, stencil3d b = 4, 5, 9, k = 1..16):
 * J = 1 wins or ties at k <= 2, J = 3 at k = 3..4, J = 5 at k = 5 and 9
 * (2026-11-23: b=4 84.8% / 67.0% of copy against 79.1% / 62.6% at J = 3),
 * J = 4 at k = 16.  AUTO
 * does not use it: it times the candidates.  BSR_ROWJ_J (1..5) overrides it. */
static int rowj_valid(int J) { return J >= 1 && J <= 5; }

int bsr_spmm_rowj_cols(int b, int kk)
{
    const char *env = getenv("BSR_ROWJ_J");
    if (env && rowj_valid(atoi(env))) return atoi(env);
    (void)b;
    return kk <= 2 ? 1 : kk <= 4 ? 3 : kk <= 10 ? 5 : 4;
}

template <typename T, int B>
static bsr_status rowj_b(bsr_context *ctx, const bsr_matrix *A, double alpha, const T *x, double beta, T *y,
                         int k, int j0, int kk, int J, int target)
{
    const bsr_dev_matrix *d = bsr_cuda_dmat(A);
    if (!rowj_valid(J)) J = bsr_spmm_rowj_cols(B, kk);
    int G = (kk + J - 1) / J;
    if (target <= 0) {
        /* fewer rows per CUDA block when row lengths are very uneven, so one
         * long row holds back fewer threads */
        target = d->maxlen > 8 * d->meanlen + 8 ? ROWJ_THREADS / 2 : ROWJ_THREADS;
        const char *env = getenv("BSR_ROWJ_T"); /* sweep knob */
        if (env && atoi(env) >= 32 && atoi(env) <= ROWJ_THREADS) target = atoi(env);
    }
    int R = target / (B * G) < 1 ? 1 : target / (B * G);
    int th = R * B * G, grid = (int)(((long long)A->nbrows + R - 1) / R);
    cudaStream_t st = ctx->cuda->stream;
    const T *v = (const T *)d->val;
    switch (J) {
    case 1: rowj_kernel<T, B, 1><<<grid, th, 0, st>>>(A->nbrows, k, j0, kk, G, R, d->rowptr, d->colind, v, alpha, x, beta, y); break;
    case 2: rowj_kernel<T, B, 2><<<grid, th, 0, st>>>(A->nbrows, k, j0, kk, G, R, d->rowptr, d->colind, v, alpha, x, beta, y); break;
    case 3: rowj_kernel<T, B, 3><<<grid, th, 0, st>>>(A->nbrows, k, j0, kk, G, R, d->rowptr, d->colind, v, alpha, x, beta, y); break;
    case 5: rowj_kernel<T, B, 5><<<grid, th, 0, st>>>(A->nbrows, k, j0, kk, G, R, d->rowptr, d->colind, v, alpha, x, beta, y); break;
    default: rowj_kernel<T, B, 4><<<grid, th, 0, st>>>(A->nbrows, k, j0, kk, G, R, d->rowptr, d->colind, v, alpha, x, beta, y); break;
    }
    CU_LAUNCHED("rowj_kernel");
    return BSR_OK;
}

bsr_status bsr_spmm_rowj(bsr_context *ctx, const bsr_matrix *A, double alpha, const void *x,
                         double beta, void *y, int k, int j0, int kk, int J, int T)
{
    if (A->nbrows == 0) return BSR_OK;
    if (A->prec == BSR_DOUBLE) {
        BSR_SWITCH_B(A->b, return (rowj_b<double, B_>(ctx, A, alpha, (const double *)x, beta, (double *)y, k, j0, kk, J, T)));
    } else {
        BSR_SWITCH_B(A->b, return (rowj_b<float, B_>(ctx, A, (double)(float)alpha, (const float *)x, (double)(float)beta,
                                                     (float *)y, k, j0, kk, J, T)));
    }
    return BSR_OK;
}

/* AUTO: ROWJ with (J, T) chosen once per matrix and chunk width by timing
 * each candidate on the device (one warm-up and one timed launch into
 * scratch, beta = 0).  Every candidate sums each output in the same order
 * (blocks ascending, then columns within a block, in double), so the result
 * is bit-identical whichever wins: the choice cannot break determinism. */
bsr_status bsr_spmm_rowj_auto(bsr_context *ctx, const bsr_matrix *A, double alpha, const void *x,
                              double beta, void *y, int k, int j0, int kk)
{
    bsr_dev_matrix *d = (bsr_dev_matrix *)A->dev;
    if (!d->auto_j[kk]) {
        /* J = 5: one group at k = 5, two at k = 9 (H100: b=4 k=9 67.6% of
         * copy against 62.6% at J = 3; J = 8, 9 lost everywhere) */
        static const int Js[] = {1, 2, 3, 4, 5}, Ts[] = {128, 256};
        size_t bytes = (size_t)A->nbrows * A->b * k * bsr_precision_size(A->prec);
        void *scr;
        BSR_TRY(bsr_cuda_scratch(ctx, bytes > 0 ? bytes : 8, &scr));
        cudaEvent_t e0, e1;
        CU_TRY(cudaEventCreate(&e0));
        cudaError_t ce = cudaEventCreate(&e1);
        if (ce != cudaSuccess) { cudaEventDestroy(e0); return bsr_cuda_fail(ce, "cudaEventCreate", __FILE__, __LINE__); }
        float best = 1e30f;
        bsr_status s = BSR_OK;
        for (int a = 0; a < (int)(sizeof Js / sizeof Js[0]) && s == BSR_OK; a++)
            for (int b = 0; b < 2 && s == BSR_OK; b++) {
                if (Js[a] > 1 && Js[a] > kk) continue;
                float ms = 0;
                s = bsr_spmm_rowj(ctx, A, 1.0, x, 0.0, scr, k, j0, kk, Js[a], Ts[b]);
                if (s == BSR_OK && (ce = cudaEventRecord(e0, ctx->cuda->stream)) != cudaSuccess) s = bsr_cuda_fail(ce, "cudaEventRecord", __FILE__, __LINE__);
                if (s == BSR_OK) s = bsr_spmm_rowj(ctx, A, 1.0, x, 0.0, scr, k, j0, kk, Js[a], Ts[b]);
                if (s == BSR_OK && ((ce = cudaEventRecord(e1, ctx->cuda->stream)) != cudaSuccess ||
                                    (ce = cudaEventSynchronize(e1)) != cudaSuccess ||
                                    (ce = cudaEventElapsedTime(&ms, e0, e1)) != cudaSuccess))
                    s = bsr_cuda_fail(ce, "AUTO trial timing", __FILE__, __LINE__);
                if (s == BSR_OK && ms < best) { best = ms; d->auto_j[kk] = (unsigned char)Js[a]; d->auto_t[kk] = (short)Ts[b]; }
            }
        cudaEventDestroy(e0); cudaEventDestroy(e1);
        if (s != BSR_OK) { d->auto_j[kk] = 0; return s; }
    }
    return bsr_spmm_rowj(ctx, A, alpha, x, beta, y, k, j0, kk, d->auto_j[kk], d->auto_t[kk]);
}
