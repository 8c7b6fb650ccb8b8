/* SPDX-License-Identifier: BSD-3-Clause */
/* The pieces of one block row of a triangular solve that every device
 * kernel shares (the level and sync-free kernels of trsv_level.cuh, the tree
 * kernels of trsv_tree.cu): which blocks it sums, their sum, and where the
 * difference goes.  Forced inline: each kernel's code is as if written out. */
#ifndef BSR_TRSV_ROW_CUH
#define BSR_TRSV_ROW_CUH

/* Loads of solved values: plain, or through L2 only (__ldcg) in the
 * sync-free kernels, where another SM may have written the line after this
 * SM cached it. */
template <bool SF, typename T> __device__ __forceinline__ T ld_y(const T *p)
{
    if (SF) return __ldcg(p);
    return *p;
}

/* Row i's off-diagonal blocks [*s0, *s1) and its inverted pivot D, stored
 * first (upper; NULL for lower, whose diagonal is the identity). */
template <int B, typename TF>
__device__ __forceinline__ const TF *row_range(int i, int upper, const int *rstart, const int *rend,
                                               const TF *val, int *s0, int *s1)
{
    *s0 = rstart[i];
    *s1 = rend[i];
    const TF *D = NULL;
    if (upper) { D = val + (size_t)(*s0) * B * B; (*s0)++; }
    return D;
}

/* Sum over blocks p = p0, p0 + step, ... < p1 of (block p's row r) . (column
 * j of y's block row colind[p]); y holds B k values a block row, its k
 * columns interleaved.  Summed in that order: the same bits in every kernel. */
template <int B, bool SF, typename TF, typename TV>
__device__ __forceinline__ TV row_dot(const TF *val, const int *colind, const TV *y, int p0, int p1, int step,
                                      int r, int j, int k)
{
    const int bk = B * k;
    TV acc = 0;
    for (int p = p0; p < p1; p += step) {
        const TF *a = val + (size_t)p * B * B + r * B;
        const TV *yc = y + (size_t)colind[p] * bk + j;
#pragma unroll
        for (int c = 0; c < B; c++) acc += (TV)a[c] * ld_y<SF>(yc + c * k);
    }
    return acc;
}

/* Entry o of row i: s = x_i[o] - acc into y (lower) or into sm for the pivot
 * step (upper). */
template <typename TV>
__device__ __forceinline__ void row_put(int upper, int i, int o, int bk, const TV *x, TV acc, TV *sm, TV *y)
{
    const TV s = x[(size_t)i * bk + o] - acc;
    if (upper) sm[o] = s;
    else y[(size_t)i * bk + o] = s;
}

#endif
