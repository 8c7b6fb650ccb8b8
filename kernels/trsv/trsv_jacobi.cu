/* SPDX-License-Identifier: BSD-3-Clause */
/* Approximate triangular solves by Jacobi sweeps (trisolve=jacobi:N).
 *
 * The level-scheduled solves of the ILU factors wait level after level (298
 * levels for a 100^3 stencil in natural order) and reach about a third of the
 * bandwidth bound.  A Jacobi sweep on a factor has no dependencies between
 * rows, so it runs at the speed of a sparse product:
 *   L (unit lower, no diagonal blocks stored):  y_0 = x,  y_m = x - L y_{m-1}
 *   U (inverted pivot block D^-1 first in each row):
 *                     z_0 = D^-1 x,  z_m = D^-1 (x - U_off z_{m-1})
 * N sweeps give the first N+1 terms of the Neumann series of L^{-1} (exact
 * after N >= levels - 1), as Ginkgo's and hypre's iterative triangular
 * solves do.  One thread per (block row, scalar row, vector), visiting the
 * rows in their natural numbering; each output is a fixed-order sum in double
 * (blocks in stored order, then columns), the same order as the host
 * reference bsr_trsv_jacobi_host: deterministic, no atomics. */
#include "trsv_cuda.h"

#define JAC_THREADS 256

/* One sweep over triangle T: out = x - M_off yin (lower), or out = D^-1 (x -
 * U_off yin) (upper; diag_only: out = D^-1 x, yin unused).  Rows by their
 * natural index i: blocks [rstart[i], rend[i]) in T's storage. */
template <int B, bool UPPER, typename TF, typename TV>
__global__ void __launch_bounds__(JAC_THREADS) jacobi_sweep_kernel(int n, int k, const int *__restrict__ rstart,
                                                                   const int *__restrict__ rend,
                                                                   const int *__restrict__ colind,
                                                                   const TF *__restrict__ val,
                                                                   const TV *__restrict__ x,
                                                                   const TV *__restrict__ yin,
                                                                   TV *__restrict__ out, int diag_only)
{
    const int64_t e = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    const int bk = B * k;
    if (e >= (int64_t)n * bk) return;
    const int i = (int)(e / bk), o = (int)(e - (int64_t)i * bk), a = o / k, j = o - a * k;
    const int p0 = rstart[i], p1 = rend[i];
    const TV *xi = x + (size_t)i * bk;
    if constexpr (!UPPER) {
        double s = (double)xi[o];
        for (int p = p0; p < p1; p++) {
            const TF *blk = val + (size_t)p * B * B + a * B;
            const TV *yc = yin + (size_t)colind[p] * bk + j;
#pragma unroll
            for (int c = 0; c < B; c++) s -= (double)blk[c] * (double)yc[c * k];
        }
        out[e] = (TV)s;
    } else {
        /* w = x_i - sum U_ij yin_j (all B rows: D^-1 mixes them), then row a of D^-1 w */
        double w[B];
#pragma unroll
        for (int r = 0; r < B; r++) w[r] = (double)xi[r * k + j];
        if (!diag_only)
            for (int p = p0 + 1; p < p1; p++) {
                const TF *blk = val + (size_t)p * B * B;
                const TV *yc = yin + (size_t)colind[p] * bk + j;
                double yv[B];
#pragma unroll
                for (int c = 0; c < B; c++) yv[c] = (double)yc[c * k];
#pragma unroll
                for (int r = 0; r < B; r++)
#pragma unroll
                    for (int c = 0; c < B; c++) w[r] -= (double)blk[r * B + c] * yv[c];
            }
        const TF *dinv = val + (size_t)p0 * B * B + a * B;
        double s = 0;
#pragma unroll
        for (int c = 0; c < B; c++) s += (double)dinv[c] * w[c];
        out[e] = (TV)s;
    }
}

/* One launch of the sweep kernel for T's block size and precisions. */
static bsr_status sweep(const bsr_trsv_tri *T, const void *x, const void *yin, void *out, int k, bsr_precision vp,
                        int diag_only, cudaStream_t st)
{
    const int64_t tot = (int64_t)T->n * T->b * k;
    const unsigned nb = (unsigned)((tot + JAC_THREADS - 1) / JAC_THREADS);
    int ok = trsv_with_types(T->fprec, vp, [&](auto tf, auto tv) {
        using TF = decltype(tf);
        using TV = decltype(tv);
        bsr_with_b(T->b, [&](auto Bc) {
            constexpr int B = decltype(Bc)::value;
            if (T->upper)
                jacobi_sweep_kernel<B, true, TF, TV><<<nb, JAC_THREADS, 0, st>>>(
                    T->n, k, T->rstart, T->rend, T->colind, (const TF *)T->val, (const TV *)x, (const TV *)yin,
                    (TV *)out, diag_only);
            else
                jacobi_sweep_kernel<B, false, TF, TV><<<nb, JAC_THREADS, 0, st>>>(
                    T->n, k, T->rstart, T->rend, T->colind, (const TF *)T->val, (const TV *)x, (const TV *)yin,
                    (TV *)out, diag_only);
        });
    });
    if (!ok) return bsr_error(BSR_ERR_UNSUPPORTED, "Jacobi triangular sweeps: double factors with float vectors");
    CU_LAUNCHED("jacobi_sweep_kernel");
    return BSR_OK;
}

extern "C" bsr_status bsr_trsv_dev_jacobi(const bsr_trsv_tri *T, int sweeps, const void *x, void *y, void *w,
                                          int k, bsr_precision vprec, void *stream)
{
    BSR_CHECK_ARG(T && x && y && w && x != y && x != w && y != w && sweeps >= 1,
                  "bsr_trsv_dev_jacobi: bad arguments (x, y, w distinct; sweeps >= 1)");
    if (T->n == 0) return BSR_OK;
    cudaStream_t st = (cudaStream_t)stream;
    /* launches m = 0..last (U: m = 0 is z_0 = D^-1 x; L: y_0 = x needs none);
     * outputs alternate between y and w so that the last one lands in y */
    const int first = T->upper ? 0 : 1, last = sweeps;
    const void *prev = x;
    for (int m = first; m <= last; m++) {
        void *dst = (last - m) % 2 == 0 ? y : w;
        BSR_TRY(sweep(T, x, prev, dst, k, vprec, T->upper && m == 0, st));
        prev = dst;
    }
    return BSR_OK;
}
