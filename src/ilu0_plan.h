/* Host symbolic work of the device ILU(0) (kernels/ilu0_gpu.cu), in C so that
 * it gets OpenMP (nvcc's host compiler runs without it): where each block of
 * A lands in the factors, and the update lists of the factorization. */
#ifndef BSR_ILU0_PLAN_H
#define BSR_ILU0_PLAN_H

#include "bsrsolve.h"
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* For F's permuted A (F->ap/ac) and ILU(0) patterns L, U (W = L's blocks,
 * then U's): adst[p] = W index of A's permuted block p, adiag[k] = the block p
 * of A on row k's diagonal (-1: none), diagw[k] = W index of U's pivot of row
 * k.  BSR_ERR_INTERNAL when a row of A is not in the patterns. */
bsr_status bsr_ilu0_plan_map(const bsr_ilu *F, int *adst, int *adiag, int *diagw);

/* Update lists: for L block l of row i (column k), list pairs
 * [ptr[l], ptr[l+1]) (2 ints each, *n pairs in all): first (W index of row
 * k's inverted pivot, -1), then for each U block (k,j), j > k, whose column
 * is in row i's pattern, (W index of U_kj, W index of the target block (i,j)),
 * in U's order.  *ptr ([L->nnzb+1]) and *list are malloc'ed for the caller. */
bsr_status bsr_ilu0_plan_updates(const bsr_ilu *F, int **ptr, int **list, int64_t *n);

#ifdef __cplusplus
}
#endif
#endif
