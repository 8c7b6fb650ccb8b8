/* Symbolic work of the device ILU(0) (kernels/ilu0_gpu.cu): where each block
 * of A lands in the factors, and the update lists of the factorization.  The
 * per-row functions are shared: the device builds the plan with them, the
 * host functions below (OpenMP) are the reference it is checked against. */
#ifndef BSR_ILU0_PLAN_H
#define BSR_ILU0_PLAN_H

#include "bsrsolve.h"
#include <stdint.h>

#ifdef __CUDACC__
#define BSR_HD __host__ __device__
#else
#define BSR_HD
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Destinations of permuted row k of A (ap/ac: its map, Lp/Lc, Up/Uc: the
 * ILU(0) patterns, U's pivot first; nL: L's blocks): adst[p] = W index of
 * A's block p, adiag[k] = A's diagonal block (-1: none), diagw[k] = W index
 * of U's pivot.  Returns 0 when a block is outside the patterns.  Shared by
 * the host plan and the device one (kernels/ilu0_gpu.cu). */
BSR_HD static inline int bsr_ilu0_map_row(int k, const int *ap, const int *ac, const int *Lp, const int *Lc,
                                          const int *Up, const int *Uc, int nL, int *adst, int *adiag, int *diagw)
{
    int pl = Lp[k], pu = Up[k] + 1;
    adiag[k] = -1;
    diagw[k] = nL + Up[k];
    for (int p = ap[k]; p < ap[k + 1]; p++) {
        const int j = ac[p];
        if (j < k) {
            if (pl >= Lp[k + 1] || Lc[pl] != j) return 0;
            adst[p] = pl++;
        } else if (j == k) {
            adst[p] = diagw[k];
            adiag[k] = p;
        } else {
            if (pu >= Up[k + 1] || Uc[pu] != j) return 0;
            adst[p] = nL + pu++;
        }
    }
    return 1;
}

/* The update list of L block l (row i, column k) into out (pairs; NULL: count
 * only); returns its length.  Row i's pattern is L's row then U's row (the
 * pivot first), columns ascending, and U's row k ascends too: the columns j of
 * U_kj found in row i come from one merge that starts after block l. */
BSR_HD static inline int bsr_ilu0_updates_of(int i, int l, const int *Lp, const int *Lc, const int *Up,
                                             const int *Uc, int nL, int *out)
{
    const int k = Lc[l];
    int len = 1, a = l + 1, a1 = Lp[i + 1], u = Up[i], u1 = Up[i + 1];
    if (out) { out[0] = nL + Up[k]; out[1] = -1; }
    for (int q = Up[k] + 1; q < Up[k + 1]; q++) {
        const int j = Uc[q];
        int t = -1;
        while (a < a1 && Lc[a] < j) a++;
        if (a < a1) {   /* j below row i's diagonal, or absent */
            if (Lc[a] == j) t = a;
        } else {
            while (u < u1 && Uc[u] < j) u++;
            if (u < u1 && Uc[u] == j) t = nL + u;
        }
        if (t < 0) continue;
        if (out) { out[2 * len] = nL + q; out[2 * len + 1] = t; }
        len++;
    }
    return len;
}

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
