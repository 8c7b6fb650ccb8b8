/* SPDX-License-Identifier: BSD-3-Clause */
/* WARP: our SpMM kernel for the H100 (the dispatch: spmm_dispatch.cu).
 *
 * WARP gives each block row a group of W threads (a sub-warp, a warp or a
 * few warps).  Lane l of a group owns entry rc = l % b^2 of block slot
 * s = l / b^2 and walks blocks p = rowstart + s, + slots, ...: the group's
 * loads of A are one contiguous, fully coalesced stream (a row's blocks are
 * adjacent in memory), read once.  Each lane multiplies its A entry by the
 * k values X(col*b + c, 0..k-1) (contiguous, read through the read-only
 * path, reused from L1 by the lanes of the same c) and keeps k accumulators
 * in registers (k <= 16 per pass, a compile-time bound KC).  The partial sums
 * are combined in shared memory in a fixed order: deterministic bit for bit. */
#include "spmm_common.h"

#define WARP_THREADS 256

template <typename T, int KC>
__global__ void __launch_bounds__(WARP_THREADS)
warp_kernel(int nbrows, int b, int k, int j0, int kk, int W, int slots, const int *__restrict__ rowptr,
            const int *__restrict__ colind, const T *__restrict__ val, double alpha,
            const T *__restrict__ x, double beta, T *__restrict__ y)
{
    extern __shared__ double red[]; /* [KC][blockDim] partial sums */
    int t = threadIdx.x, BD = blockDim.x, g = t / W, lane = t - g * W;
    int i = blockIdx.x * (BD / W) + g;
    int bb = b * b, s = lane / bb, rc = lane - s * bb, c = rc % b;
    double acc[KC];
#pragma unroll
    for (int j = 0; j < KC; j++) acc[j] = 0;
    if (i < nbrows && s < slots) {
        int p1 = __ldg(rowptr + i + 1);
#pragma unroll 2
        for (int p = __ldg(rowptr + i) + s; p < p1; p += slots) {
            double a = (double)__ldg(val + (size_t)p * bb + rc);
            const T *xp = x + ((size_t)__ldg(colind + p) * b + c) * k + j0;
#pragma unroll
            for (int j = 0; j < KC; j++)
                if (j < kk) acc[j] += a * (double)__ldg(xp + j);
        }
    }
#pragma unroll
    for (int j = 0; j < KC; j++) red[j * BD + t] = acc[j];
    __syncthreads();
    if (i >= nbrows) return;
    const double *gr = red + g * W;
    for (int o = lane; o < b * kk; o += W) {
        int r = o / kk, j = o - r * kk;
        const double *pr = gr + j * BD + r * b;
        double sum = 0;
        for (int s2 = 0; s2 < slots; s2++)
            for (int c2 = 0; c2 < b; c2++) sum += pr[s2 * bb + c2];
        spmm_put(y + ((size_t)i * b + r) * k + j0 + j, sum, alpha, beta);
    }
}

/* Group width W: the narrowest of 4, 8, 16, 32, 64, 96, ... that holds one
 * block (W >= b^2).  Measured on the H100 (stencil3d, b = 4, 5, 9): wider
 * groups with several block slots ran slower at every k (up to 2.7x for b = 5),
 * so slots > 1 only arise from rounding up to a warp multiple.  meanlen is
 * unused; BSR_WARP_W overrides the choice for sweeps. */
void bsr_spmm_warp_shape(int b, double meanlen, int *W, int *slots)
{
    int bb = b * b, w = 4;
    (void)meanlen;
    static int env_w = -1; /* sweep knob, read once (README, "Environment variables") */
    if (env_w < 0) env_w = getenv("BSR_WARP_W") ? atoi(getenv("BSR_WARP_W")) : 0;
    if (env_w >= bb && env_w <= WARP_THREADS) w = env_w;
    else
        while (w < bb) w = w < 32 ? 2 * w : w + 32;
    *W = w;
    *slots = w / bb;
}

template <typename T, int KC>
static bsr_status warp_launch(bsr_context *ctx, const bsr_matrix *A, double alpha, const T *x, double beta,
                              T *y, int k, int j0, int kk)
{
    const bsr_dev_matrix *d = bsr_cuda_dmat(A);
    int W, slots;
    bsr_spmm_warp_shape(A->b, d->meanlen, &W, &slots);
    int per = WARP_THREADS / W, BD = per * W;
    int grid = (int)(((long long)A->nbrows + per - 1) / per);
    size_t smem = sizeof(double) * KC * BD;
    warp_kernel<T, KC><<<grid, BD, smem, ctx->cuda->stream>>>(A->nbrows, A->b, k, j0, kk, W, slots, d->rowptr,
                                                              d->colind, (const T *)d->val, alpha, x, beta, y);
    CU_LAUNCHED("warp_kernel");
    return BSR_OK;
}

template <typename T>
static bsr_status warp_typed(bsr_context *ctx, const bsr_matrix *A, double alpha, const T *x, double beta,
                             T *y, int k, int j0, int kk)
{
    if (kk == 1) return warp_launch<T, 1>(ctx, A, alpha, x, beta, y, k, j0, kk);
    if (kk == 2) return warp_launch<T, 2>(ctx, A, alpha, x, beta, y, k, j0, kk);
    if (kk <= 4) return warp_launch<T, 4>(ctx, A, alpha, x, beta, y, k, j0, kk);
    if (kk <= 8) return warp_launch<T, 8>(ctx, A, alpha, x, beta, y, k, j0, kk);
    return warp_launch<T, 16>(ctx, A, alpha, x, beta, y, k, j0, kk);
}

bsr_status bsr_spmm_warp(bsr_context *ctx, const bsr_matrix *A, double alpha, const void *x,
                         double beta, void *y, int k, int j0, int kk)
{
    if (A->nbrows == 0) return BSR_OK;
    if (A->prec == BSR_DOUBLE)
        return warp_typed<double>(ctx, A, alpha, (const double *)x, beta, (double *)y, k, j0, kk);
    return warp_typed<float>(ctx, A, (double)(float)alpha, (const float *)x, (double)(float)beta, (float *)y, k, j0, kk);
}
