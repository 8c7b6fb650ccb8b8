/* SPDX-License-Identifier: BSD-3-Clause */
/* The sliced copy of a device matrix (SELL-32 over block rows) and the ROWJ
 * kernels that read it; instantiated per block size with the ROWJ kernels
 * (kernels/spmm_rowj_bB.cu).
 *
 * Why a second layout: in BSR a thread of layout V reads its row's blocks,
 * and the rows of a warp sit a row length apart, so every 16-byte load of A
 * touches as many cache lines as the warp has rows.  On the H100 that L1/L2
 * traffic, not DRAM, bounded ROWJ at larger k (b=4 k=9: L2 at ~90% of its
 * peak, DRAM at ~60%).  Here the 32 block rows of a slice store their p-th
 * blocks side by side, value by value: a warp's load of one value of A for
 * its rows is one contiguous run (bench/RESULTS.md, issue 22).
 *
 * Slice s holds block rows 32s .. 32s+31 in entries sptr[s] .. sptr[s+1]:
 * 32 x (longest row of the slice) entries, entry e = sptr[s] + 32p + l for
 * the p-th block of row 32s + l.  scol[e] is its block column.  The values
 * of the 32 entries e0 = sptr[s] + 32p .. e0 + 31 occupy b*b*32 values from
 * e0*b*b: row r of the block, columns c = 2h, 2h+1 as a pair at
 * r*b*32 + h*64 + 2l, an odd b's last column at r*b*32 + (b-1)*32 + l.
 * Entries past a row's end are never read. */
#ifndef BSR_SPMM_SELL_CUH
#define BSR_SPMM_SELL_CUH
#include "spmm_common.h"

#define SELL_C 32

/* offset of A(r, c) of slice lane l inside its entry group (see above) */
__host__ __device__ __forceinline__ int sell_off(int B, int r, int c, int l)
{
    const int o = r * B * SELL_C;
    return c < 2 * (B / 2) ? o + (c >> 1) * 2 * SELL_C + 2 * l + (c & 1) : o + (B - 1) * SELL_C + l;
}

template <typename T> struct sell_pair;
template <> struct sell_pair<double> { typedef double2 type; };
template <> struct sell_pair<float> { typedef float2 type; };

/* A(r, c) of the lane whose pairs start at g2 = group + 2l and whose odd
 * column sits at g1 = group + l: r, c compile-time, so every load of a block
 * is a constant offset from two per-block pointers. */
template <typename T, int B>
__device__ __forceinline__ const T *sell_at(const T *g2, const T *g1, int r, int c)
{
    return (c < 2 * (B / 2) ? g2 : g1) + sell_off(B, r, c, 0);
}

/* Row r of a block (B values, as doubles), pairs with one load each.
 * (Loads that skip L1 for A measured no faster: bench/RESULTS.md.) */
template <typename T, int B>
__device__ __forceinline__ void sell_ld_row(const T *g2, const T *g1, int r, double *v)
{
    typedef typename sell_pair<T>::type P;
#pragma unroll
    for (int h = 0; h < B / 2; h++) {
        const P t = __ldg((const P *)sell_at<T, B>(g2, g1, r, 2 * h));
        v[2 * h] = (double)t.x; v[2 * h + 1] = (double)t.y;
    }
    if constexpr (B % 2) v[B - 1] = (double)__ldg(sell_at<T, B>(g2, g1, r, B - 1));
}

/* The J values of X at xb (columns jb.. of one scalar row), jn of them valid;
 * PX: as pairs (16 or 8 bytes; the caller found them aligned and jn = J). */
template <typename T, int J, bool PX>
__device__ __forceinline__ void sell_ld_x(const T *xb, int jn, double *xv)
{
    typedef typename sell_pair<T>::type P;
    if constexpr (PX && J % 2 == 0) {
#pragma unroll
        for (int h = 0; h < J / 2; h++) {
            const P t = __ldg((const P *)xb + h);
            xv[2 * h] = (double)t.x; xv[2 * h + 1] = (double)t.y;
        }
    } else {
#pragma unroll
        for (int jj = 0; jj < J; jj++) xv[jj] = (J == 1 || jj < jn) ? (double)__ldg(xb + jj) : 0.0;
    }
}

/* acc += the products of the p-th block of block row i (slice s, lane l,
 * block column col) with the vectors at xb0: layout V loads the block's
 * B x J values of X, then A row by row; COL walks column by column (J values
 * of X and A(:, c): fewer live values).  Each output sums its blocks in order
 * and each block's columns in order, as every ROWJ kernel does: results are
 * bit-identical to theirs. */
template <typename T, int B, int J, bool COL, bool PX>
__device__ __forceinline__ void sell_block(int e, int l, int k, int jn, int col, const T *__restrict__ sval,
                                           const T *__restrict__ xb0, double (*acc)[J])
{
    const T *gv = sval + (size_t)e * B * B, *g2 = gv + 2 * l, *g1 = gv + l;
    const T *xb = xb0 + (size_t)col * B * k;
    if constexpr (COL) {
#pragma unroll
        for (int c = 0; c < B; c++) {
            double xv[J], av[B];
            sell_ld_x<T, J, PX>(xb + c * k, jn, xv);
#pragma unroll
            for (int r = 0; r < B; r++) av[r] = (double)__ldg(sell_at<T, B>(g2, g1, r, c));
#pragma unroll
            for (int r = 0; r < B; r++)
#pragma unroll
                for (int jj = 0; jj < J; jj++) acc[r][jj] += av[r] * xv[jj];
        }
    } else {
        double xv[B][J];
#pragma unroll
        for (int c = 0; c < B; c++) sell_ld_x<T, J, PX>(xb + c * k, jn, xv[c]);
#pragma unroll
        for (int r = 0; r < B; r++) {
            double av[B];
            sell_ld_row<T, B>(g2, g1, r, av);
#pragma unroll
            for (int c = 0; c < B; c++)
#pragma unroll
                for (int jj = 0; jj < J; jj++) acc[r][jj] += av[c] * xv[c][jj];
        }
    }
}

/* The row's blocks in order.  Layout V keeps its loop rolled (each block's
 * loads are many already; H100: unrolling only raised registers) and loads
 * the next block's column while this block's X and A are in flight: else
 * each block waits for two dependent loads in turn, the column and then X
 * (H100, k = 9: b = 4 80 -> 89% of copy, b = 5 77 -> 87%; the same change
 * in the BSR layout V lost up to 11 points: bench/RESULTS.md).  The
 * register-capped column walk lets the compiler overlap blocks. */
template <typename T, int B, int J, bool COL, bool PX>
__device__ __forceinline__ void sell_rowsum(int len, int e0, int l, int k, int jn, const int *__restrict__ scol,
                                            const T *__restrict__ sval, const T *__restrict__ xb0, double (*acc)[J])
{
    if constexpr (COL) {
        for (int p = 0; p < len; p++) {
            const int e = e0 + p * SELL_C;
            sell_block<T, B, J, COL, PX>(e, l, k, jn, __ldg(scol + e + l), sval, xb0, acc);
        }
    } else {
        int next = len > 0 ? __ldg(scol + e0 + l) : 0;
#pragma unroll 1
        for (int p = 0; p < len; p++) {
            const int e = e0 + p * SELL_C, col = next;
            if (p + 1 < len) next = __ldg(scol + e + SELL_C + l);
            sell_block<T, B, J, COL, PX>(e, l, k, jn, col, sval, xb0, acc);
        }
    }
}

/* Thread (block row i, group of J vectors from jb) of the sliced kernels:
 * its row's B x J outputs. */
template <typename T, int B, int J, bool COL>
__device__ __forceinline__ void sell_thread(int nbrows, int k, int j0, int kk, int G, int R, int pairs,
                                            const int *__restrict__ rowptr, const int *__restrict__ sptr,
                                            const int *__restrict__ scol, const T *__restrict__ sval, double alpha,
                                            const T *__restrict__ x, double beta, T *__restrict__ y)
{
    const int t = threadIdx.x, lr = t / G, g = t - lr * G, i = blockIdx.x * R + lr;
    if (lr >= R || i >= nbrows) return;
    const int s = i / SELL_C, l = i - s * SELL_C, jb = g * J, jn = kk - jb < J ? kk - jb : J;
    double acc[B][J];
    rowv_zero<B, J>(acc);
    const T *xb0 = x + j0 + jb;
    const int len = __ldg(rowptr + i + 1) - __ldg(rowptr + i), e0 = __ldg(sptr + s);
    /* (the column walk without pairs: two copies of its loop spill under the cap) */
    if (!COL && pairs && jn == J) sell_rowsum<T, B, J, COL, true>(len, e0, l, k, jn, scol, sval, xb0, acc);
    else sell_rowsum<T, B, J, COL, false>(len, e0, l, k, jn, scol, sval, xb0, acc);
    rowv_put<T, B, J>(y, i, k, j0, jb, jn, acc, alpha, beta);
}

/* Layout V on the sliced copy; THR caps the registers (512: at most 128).
 * One block a multiprocessor is the bound the compiler plans for: it then
 * keeps a block's loads in flight together (H100, b = 4, J = 3: 106
 * registers against 66 without the minimum, and the faster kernel). */
template <typename T, int B, int J, int THR>
__global__ void __launch_bounds__(THR, 1)
sellv_kernel(int nbrows, int k, int j0, int kk, int G, int R, int pairs, const int *__restrict__ rowptr,
             const int *__restrict__ sptr, const int *__restrict__ scol, const T *__restrict__ sval, double alpha,
             const T *__restrict__ x, double beta, T *__restrict__ y)
{
    sell_thread<T, B, J, false>(nbrows, k, j0, kk, G, R, pairs, rowptr, sptr, scol, sval, alpha, x, beta, y);
}

/* The column walk under a 64-register cap: more threads resident (H100:
 * b = 4, k = 7..9). */
template <typename T, int B, int J>
__global__ void __launch_bounds__(256, 4)
sellc_kernel(int nbrows, int k, int j0, int kk, int G, int R, int pairs, const int *__restrict__ rowptr,
             const int *__restrict__ sptr, const int *__restrict__ scol, const T *__restrict__ sval, double alpha,
             const T *__restrict__ x, double beta, T *__restrict__ y)
{
    sell_thread<T, B, J, true>(nbrows, k, j0, kk, G, R, pairs, rowptr, sptr, scol, sval, alpha, x, beta, y);
}

/* The column walk where its accumulators stay under its register cap. */
#define SELLC_FITS(B, J) ((B) * (J) <= 16)

/* The sliced kernels for J code 21..25 (layout V, J - 20 vectors; 512
 * threads a block: the 128-register instantiation) and 31..35 (column
 * walk); false when the code does not apply to B (the caller falls back). */
template <typename T, int B>
static bool sell_b(cudaStream_t st, const bsr_matrix *A, const bsr_dev_matrix *d, double alpha, const T *x,
                   double beta, T *y, int k, int j0, int kk, int code, int target)
{
    const int col = code >= 31, J = code - (col ? 30 : 20);
    if (col ? !SELLC_FITS(B, J) : !ROWV_FITS(B, J)) return false;
    if (col && target > 256) target = 256;
    const int G = (kk + J - 1) / J, R = target / G < 1 ? 1 : target / G;
    const int th = R * G, grid = (int)(((long long)A->nbrows + R - 1) / R);
    /* pairs of X: every offset (col*B + c)*k + j0 + jb even, the base aligned */
    const int pairs = J % 2 == 0 && k % 2 == 0 && j0 % 2 == 0 && (uintptr_t)x % (2 * sizeof(T)) == 0;
    const T *v = (const T *)d->sval;
#define SELL_ARGS A->nbrows, k, j0, kk, G, R, pairs, d->rowptr, d->sptr, d->scol, v, alpha, x, beta, y
#define SELL_CASE(JJ)                                                                              \
    case JJ:                                                                                       \
        if (col) {                                                                                 \
            if constexpr (SELLC_FITS(B, JJ)) sellc_kernel<T, B, JJ><<<grid, th, 0, st>>>(SELL_ARGS); \
        } else if constexpr (ROWV_FITS(B, JJ)) {                                                   \
            if (target > 256) sellv_kernel<T, B, JJ, 512><<<grid, th, 0, st>>>(SELL_ARGS);         \
            else sellv_kernel<T, B, JJ, 256><<<grid, th, 0, st>>>(SELL_ARGS);                      \
        }                                                                                          \
        break;
    switch (J) { SELL_CASE(1) SELL_CASE(2) SELL_CASE(3) SELL_CASE(4) SELL_CASE(5) default: return false; }
#undef SELL_CASE
#undef SELL_ARGS
    return true;
}

#endif
