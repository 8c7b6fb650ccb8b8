/* SPDX-License-Identifier: BSD-3-Clause */
/* CUDA-side helpers of the GPU triangular solves (issue 6): the
 * precision/block-size dispatch shared by kernels/trsv_*.cu. */
#ifndef BSR_TRSV_CUDA_H
#define BSR_TRSV_CUDA_H

#include "cuda_internal.h" /* CU_TRY, CU_LAUNCHED, context accessors (issue 3) */
#include "trsv.h"

#include <type_traits>

/* Call f(std::integral_constant<int, B>) for the block size b in 1..10: one
 * instantiation per b, k stays a run-time value (compile time stays small). */
template <typename Fn> static inline void trsv_with_b(int b, Fn f)
{
    switch (b) {
    case 1: f(std::integral_constant<int, 1>()); break;
    case 2: f(std::integral_constant<int, 2>()); break;
    case 3: f(std::integral_constant<int, 3>()); break;
    case 4: f(std::integral_constant<int, 4>()); break;
    case 5: f(std::integral_constant<int, 5>()); break;
    case 6: f(std::integral_constant<int, 6>()); break;
    case 7: f(std::integral_constant<int, 7>()); break;
    case 8: f(std::integral_constant<int, 8>()); break;
    case 9: f(std::integral_constant<int, 9>()); break;
    case 10: f(std::integral_constant<int, 10>()); break;
    default: break;
    }
}

/* Call f(TF(), TV()) for the supported (factor, vector) precisions: double/double,
 * float/float and float factors with double vectors (mixed).  Returns 0 when
 * the pair is not supported (double factors with float vectors). */
template <typename Fn> static inline int trsv_with_types(bsr_precision fp, bsr_precision vp, Fn f)
{
    if (fp == BSR_DOUBLE && vp == BSR_DOUBLE) { f(double(), double()); return 1; }
    if (fp == BSR_FLOAT && vp == BSR_FLOAT) { f(float(), float()); return 1; }
    if (fp == BSR_FLOAT && vp == BSR_DOUBLE) { f(float(), double()); return 1; }
    return 0;
}

#define TRSV_MAXK 16   /* vectors per solve */
#define TRSV_MAXK_APPLY 64 /* vectors per ILU apply: in chunks of TRSV_MAXK (the solver's BSR_KMAX) */

/* Level-scheduled solve of one block size (kernels/trsv_level_bB.cu):
 * y = T^{-1} (S P x), P and S NULL or lower T's right-hand side gather
 * permutation and scaling (w: work vector for the kernels that gather S P x
 * first). */
typedef bsr_status (*trsv_level_fn)(const bsr_trsv_tri *T, int sched, const int *P, const void *S, void *w,
                                    const void *x, void *y, int k, bsr_precision vprec, cudaStream_t st);
#define TRSV_LEVEL_DECL(B)                                                                                       \
    bsr_status trsv_level_b##B(const bsr_trsv_tri *, int, const int *, const void *, void *, const void *,       \
                               void *, int, bsr_precision, cudaStream_t);
BSR_FOR_EACH_B(TRSV_LEVEL_DECL)
#undef TRSV_LEVEL_DECL
#define TRSV_MAXB 10   /* block size */

#endif
