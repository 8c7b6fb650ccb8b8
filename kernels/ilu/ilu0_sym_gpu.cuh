/* SPDX-License-Identifier: BSD-3-Clause */
/* The ILU(0) symbolic phase done on the device (kernels/ilu/ilu0_sym_gpu.cu):
 * what the device preconditioner (trsv_ilu.cu) and the device factorization
 * (ilu0_gpu.cu) read instead of the host's patterns when F->dsym is set. */
#ifndef BSR_ILU0_SYM_GPU_CUH
#define BSR_ILU0_SYM_GPU_CUH
#include "cuda_internal.h"
#include "ilu_impl.h"

/* Natural order, A's pattern with every diagonal block present: the map of A
 * is the identity (ap = A's row pointers, asrc[p] = p), L = A's strictly lower
 * blocks, U = the diagonal then A's strictly upper blocks (the host layout). */
typedef struct {
    bsr_context *ctx;
    int n, nnzA, nL, nU;
    int *ap, *ac;           /* device copies of A's row pointers and columns */
    int *Lp, *Lc, *Up, *Uc; /* device patterns, columns ascending (U: pivot first) */
    int *rows[2];           /* device schedules of L and U: rows by level, ascending within one */
    int nlev[2], width[2];  /* levels and widest level */
    int *level_ptr[2];      /* host [nlev+1] */
    int trimmed;            /* ac, Lc, Uc, rows[1] released (bsr_ilu0_dsym_trim): no further
                             * preconditioner or factorization can be made from it */
} bsr_ilu0_dsym;

/* F's device symbolic phase, or NULL when it was done on the host. */
static inline const bsr_ilu0_dsym *bsr_ilu_dsym(const bsr_ilu *F)
{
    return F ? (const bsr_ilu0_dsym *)F->dsym : NULL;
}

#endif
