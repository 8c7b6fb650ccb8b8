/* SPDX-License-Identifier: BSD-3-Clause */
/* ROWJ: our best SpMM kernel on the H100 (measured, bench/RESULTS.md); the
 * kernels and their launch for one block size, instantiated per block size
 * in the build tree's kernels/spmm_rowj_bB.cu, which CMake writes from
 * kernels/instance.cu.in (one module each: CUDA loads a module's image on
 * first use).
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
#ifndef BSR_SPMM_ROWJ_CUH
#define BSR_SPMM_ROWJ_CUH
#include "spmm_sell.cuh"

#define ROWJ_THREADS 256

/* A_p(r, 0..B-1), the B values of one row of a block, as doubles, with
 * 16-byte loads where a row starts 16-byte aligned: B even (double, float2)
 * or a multiple of 4 (float4).  A warp-wide load request costs L1 wavefronts
 * whatever its width, and layout V loads every value of A in every thread of
 * a row.  Odd B keeps scalar loads: an aligned window shifted by selects
 * measured slower (bench/RESULTS.md). */
template <int B> __device__ __forceinline__ void ld_arow(const double *a, double *v)
{
    if constexpr (B % 2 == 0) {
        const double2 *q = (const double2 *)a;
#pragma unroll
        for (int h = 0; h < B / 2; h++) { const double2 t = __ldg(q + h); v[2 * h] = t.x; v[2 * h + 1] = t.y; }
    } else {
#pragma unroll
        for (int c = 0; c < B; c++) v[c] = __ldg(a + c);
    }
}
template <int B> __device__ __forceinline__ void ld_arow(const float *a, double *v)
{
    if constexpr (B % 4 == 0) {
        const float4 *q = (const float4 *)a;
#pragma unroll
        for (int h = 0; h < B / 4; h++) {
            const float4 t = __ldg(q + h);
            v[4 * h] = t.x; v[4 * h + 1] = t.y; v[4 * h + 2] = t.z; v[4 * h + 3] = t.w;
        }
    } else if constexpr (B % 2 == 0) {
        const float2 *q = (const float2 *)a;
#pragma unroll
        for (int h = 0; h < B / 2; h++) { const float2 t = __ldg(q + h); v[2 * h] = t.x; v[2 * h + 1] = t.y; }
    } else {
#pragma unroll
        for (int c = 0; c < B; c++) v[c] = (double)__ldg(a + c);
    }
}

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

/* ROWJ's second layout ("V", J codes 11..15 = 1..5 vectors): one thread per
 * (block row i, group of J vectors) computes every row r of the block, so each
 * X value it loads serves B outputs and no two threads of a row load the same
 * X (the r-split layout loads each X value in B threads: the same L1
 * wavefronts B times); the G threads of a row read the same A values (one
 * broadcast).  Per block it loads the B x J values of X first, then A row by
 * row (16-byte loads for even B): more loads in flight than a column walk
 * (H100: b=5 k=5 76.7% of copy against 59-69%).  Same summation order as
 * rowj_kernel: bit-identical results. */
template <typename T, int B, int J>
__global__ void __launch_bounds__(ROWJ_THREADS)
rowv_kernel(int nbrows, int k, int j0, int kk, int G, int R, const int *__restrict__ rowptr,
            const int *__restrict__ colind, const T *__restrict__ val, double alpha, const T *__restrict__ x,
            double beta, T *__restrict__ y)
{
    int t = threadIdx.x, lr = t / G, g = t - lr * G;
    int i = blockIdx.x * R + lr;
    if (lr >= R || i >= nbrows) return;
    int jb = g * J, jn = kk - jb < J ? kk - jb : J;
    double acc[B][J];
    rowv_zero<B, J>(acc);
    const T *xb0 = x + j0 + jb;
    int p1 = __ldg(rowptr + i + 1);
    for (int p = __ldg(rowptr + i); p < p1; p++) {
        const T *a = val + (size_t)p * B * B;
        const T *xb = xb0 + (size_t)__ldg(colind + p) * B * k;
        double xv[B][J];
#pragma unroll
        for (int c = 0; c < B; c++)
#pragma unroll
            for (int jj = 0; jj < J; jj++) xv[c][jj] = (J == 1 || jj < jn) ? (double)__ldg(xb + c * k + jj) : 0.0;
        /* row by row (16-byte loads of A's rows); each acc[r][jj] still sums c ascending */
#pragma unroll
        for (int r = 0; r < B; r++) {
            double av[B];
            ld_arow<B>(a + r * B, av);
#pragma unroll
            for (int c = 0; c < B; c++)
#pragma unroll
                for (int jj = 0; jj < J; jj++) acc[r][jj] += av[c] * xv[c][jj];
        }
    }
    rowv_put<T, B, J>(y, i, k, j0, jb, jn, acc, alpha, beta);
}

template <typename T, int B>
static bsr_status rowj_b(bsr_context *ctx, const bsr_matrix *A, double alpha, const T *x, double beta, T *y,
                         int k, int j0, int kk, int J, int target)
{
    const bsr_dev_matrix *d = bsr_cuda_dmat(A);   /* J: a valid code (bsr_spmm_rowj) */
    if (target <= 0) {
        /* fewer rows per CUDA block when row lengths are very uneven, so one
         * long row holds back fewer threads */
        target = d->maxlen > 8 * d->meanlen + 8 ? ROWJ_THREADS / 2 : ROWJ_THREADS;
        static int env_t = -1; /* sweep knob, read once (README, "Environment variables") */
        if (env_t < 0) env_t = getenv("BSR_ROWJ_T") ? atoi(getenv("BSR_ROWJ_T")) : 0;
        if (env_t >= 32 && env_t <= 2 * ROWJ_THREADS) target = env_t;
    }
    if (J > 20) {
        /* the sliced copy, made current by the caller; else (not kept, or a
         * code not built for B) the BSR kernel of the same mapping */
        if (d->sell == 2 && sell_b<T, B>(ctx->cuda->stream, A, d, alpha, x, beta, y, k, j0, kk, J, target)) {
            CU_LAUNCHED("sell_kernel");
            return BSR_OK;
        }
        J = J > 30 ? J - 30 : J - 10;
    }
    if (target > ROWJ_THREADS) target = ROWJ_THREADS;
    int V = J > 10;
    if (V) J -= 10;
    if (V && !ROWV_FITS(B, J)) V = 0; /* too many accumulators: the r-split layout */
    int G = (kk + J - 1) / J;
    const int per = V ? G : B * G; /* threads of a block row */
    int R = target / per < 1 ? 1 : target / per;
    int th = R * per, grid = (int)(((long long)A->nbrows + R - 1) / R);
    cudaStream_t st = ctx->cuda->stream;
    const T *v = (const T *)d->val;
    if (V) {
        switch (J) {
#define ROWV_CASE(JJ)                                                                                             \
    case JJ:                                                                                                      \
        if constexpr (ROWV_FITS(B, JJ))                                                                           \
            rowv_kernel<T, B, JJ><<<grid, th, 0, st>>>(A->nbrows, k, j0, kk, G, R, d->rowptr, d->colind, v, alpha, \
                                                       x, beta, y);                                               \
        break;
        ROWV_CASE(1) ROWV_CASE(2) ROWV_CASE(3) ROWV_CASE(4) ROWV_CASE(5)
#undef ROWV_CASE
        default: break;
        }
        CU_LAUNCHED("rowv_kernel");
        return BSR_OK;
    }
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

/* ROWJ for block size B in either precision (generated kernels/spmm_rowj_bB.cu). */
#define SPMM_ROWJ_DEFINE(B)                                                                                       \
    bsr_status bsr_spmm_rowj_b##B(bsr_context *ctx, const bsr_matrix *A, double alpha, const void *x, double beta, \
                                  void *y, int k, int j0, int kk, int J, int T)                                    \
    {                                                                                                             \
        if (A->prec == BSR_DOUBLE)                                                                                \
            return rowj_b<double, B>(ctx, A, alpha, (const double *)x, beta, (double *)y, k, j0, kk, J, T);       \
        return rowj_b<float, B>(ctx, A, (double)(float)alpha, (const float *)x, (double)(float)beta, (float *)y, k, \
                                j0, kk, J, T);                                                                    \
    }

#endif
