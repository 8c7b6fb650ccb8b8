/* SPDX-License-Identifier: BSD-3-Clause */
/* Where a value of A sits in its sliced copy (the layout: spmm_sell.cuh):
 * shared by the SpMM kernels and the device ILU factorization's scaling,
 * which reads A from the sliced copy where that is A's only copy. */
#ifndef BSR_SELL_LAYOUT_CUH
#define BSR_SELL_LAYOUT_CUH

#define SELL_C 32

/* offset of A(r, c) of slice lane l inside its entry group (spmm_sell.cuh) */
__host__ __device__ __forceinline__ int sell_off(int B, int r, int c, int l)
{
    const int o = r * B * SELL_C;
    return c < 2 * (B / 2) ? o + (c >> 1) * 2 * SELL_C + 2 * l + (c & 1) : o + (B - 1) * SELL_C + l;
}

/* Value e = r*B + c of A's block q, of block row i (row pointers rp, slice
 * offsets sptr), in the sliced copy sval. */
template <typename T>
__device__ __forceinline__ T sell_value(const T *sval, const int *rp, const int *sptr, int B, int i, int q, int e)
{
    const int s = i / SELL_C, l = i - s * SELL_C;
    return sval[(size_t)(sptr[s] + (q - rp[i]) * SELL_C) * B * B + sell_off(B, e / B, e % B, l)];
}

#endif
