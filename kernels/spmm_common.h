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

/* ROWJ's J codes: 1..5 the r-split layout, 11..15 layout V with J - 10
 * vectors, 21..25 layout V on the sliced copy, 31..35 its column walk
 * (kernels/spmm_rowj.cuh, spmm_sell.cuh). */
static inline int rowj_valid(int J)
{
    return (J >= 1 && J <= 5) || (J >= 11 && J <= 15) || (J >= 21 && J <= 25) || (J >= 31 && J <= 35);
}

/* Call F<T, B>::run(args...) for the runtime block size b = 1..10. */
#define BSR_SWITCH_B(b, CALL)                      \
    switch (b) {                                   \
    case 1: { const int B_ = 1; CALL; } break;     \
    case 2: { const int B_ = 2; CALL; } break;     \
    case 3: { const int B_ = 3; CALL; } break;     \
    case 4: { const int B_ = 4; CALL; } break;     \
    case 5: { const int B_ = 5; CALL; } break;     \
    case 6: { const int B_ = 6; CALL; } break;     \
    case 7: { const int B_ = 7; CALL; } break;     \
    case 8: { const int B_ = 8; CALL; } break;     \
    case 9: { const int B_ = 9; CALL; } break;     \
    case 10: { const int B_ = 10; CALL; } break;   \
    default: return bsr_error(BSR_ERR_UNSUPPORTED, "GPU SpMM: block size %d not in 1..10", b); \
    }

#endif
