/* SPDX-License-Identifier: BSD-3-Clause */
/* Pieces shared by the SpMM kernel files: the block-size switch and the
 * output update that matches the CPU reference's formula. */
#ifndef BSR_SPMM_COMMON_H
#define BSR_SPMM_COMMON_H
#include "cuda_internal.h"

/* y = alpha*acc (+ beta*y unless beta == 0: then y is write-only, so NaN in
 * the old Y does not propagate), computed in double as the CPU reference does. */
template <typename T> __device__ __forceinline__ void spmm_put(T *y, double acc, double alpha, double beta)
{
    double v = alpha * acc;
    *y = beta == 0 ? (T)v : (T)(v + beta * (double)*y);
}

/* Layout V (a thread: one block row, J vectors, B x J accumulators) where
 * the accumulators fit in registers (BSR and the sliced copy alike). */
#define ROWV_FITS(B, J) ((B) * (J) <= 25)
/* The column walk on the sliced copy where its accumulators stay under its register cap. */
#define SELLC_FITS(B, J) ((B) * (J) <= 16)
/* ROWJ's J code reads the sliced copy (where that is current) at block size
 * b: 21..25 and 31..35 where the kernel fits; every other code reads val. */
static inline int rowj_code_sliced(int b, int code)
{
    return code > 30 ? SELLC_FITS(b, code - 30) : code > 20 ? ROWV_FITS(b, code - 20) : 0;
}

/* The B x J accumulators of layout V set to zero, and written out as rows
 * r of block row i, columns j0 + jb .. (jn of the J valid). */
template <int B, int J> __device__ __forceinline__ void rowv_zero(double (*acc)[J])
{
#pragma unroll
    for (int r = 0; r < B; r++)
#pragma unroll
        for (int jj = 0; jj < J; jj++) acc[r][jj] = 0;
}
template <typename T, int B, int J>
__device__ __forceinline__ void rowv_put(T *y, int i, int k, int j0, int jb, int jn, double (*acc)[J], double alpha,
                                         double beta)
{
#pragma unroll
    for (int r = 0; r < B; r++) {
        T *yp = y + ((size_t)i * B + r) * k + j0 + jb;
#pragma unroll
        for (int jj = 0; jj < J; jj++)
            if (J == 1 || jj < jn) spmm_put(yp + jj, acc[r][jj], alpha, beta);
    }
}

/* ROWJ's J codes: 1..5 the r-split layout, 11..15 layout V with J - 10
 * vectors, 21..25 layout V on the sliced copy, 31..35 its column walk
 * (kernels/spmm/spmm_rowj.cuh, spmm_sell.cuh). */
static inline int rowj_valid(int J)
{
    return (J >= 1 && J <= 5) || (J >= 11 && J <= 15) || (J >= 21 && J <= 25) || (J >= 31 && J <= 35);
}

/* Run CALL with the constant B_ = b (bsr_with_b); an unsupported b returns
 * BSR_ERR_UNSUPPORTED from the calling function. */
#define BSR_SWITCH_B(b, CALL)                                                                    \
    if (!bsr_with_b((b), [&](auto Bc_) { constexpr int B_ = decltype(Bc_)::value; CALL; }))     \
        return bsr_error(BSR_ERR_UNSUPPORTED, "GPU SpMM: block size %d not in 1..10", b)

#endif
