/* SPDX-License-Identifier: BSD-3-Clause */
/* Symbolic work of the device ILU(0) (kernels/ilu/ilu0_gpu.cu): where each block
 * of A lands in the factors, and the update lists of the factorization.  The
 * per-row functions are shared: the device builds the plan with them, the
 * host functions below (OpenMP) are the reference it is checked against. */
#ifndef BSR_ILU0_PLAN_H
#define BSR_ILU0_PLAN_H

#include "bsrsolve.h"
#include <stdint.h>

#include "hd.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The pattern a device factorization works on (bsr_ilu_fpattern): ILU(0)'s
 * L and U, or the frozen pattern of a threshold factorization, whose lower
 * part holds L and R, its upper part U and W, each block with its class
 * (lk, uk: 0 first order, 1 second order; NULL: all first order).  Upper
 * rows hold the pivot first.  lv: the level schedule of the lower part. */
typedef struct {
    int n, nL, nU;
    const int *Lp, *Lc, *Up, *Uc;
    const unsigned char *lk, *uk;
    const int *lmap, *umap;   /* blocks of the stored L / U within the lower / upper part (NULL: the same) */
    const bsr_levels *lv;
    int frozen;               /* a threshold pattern: A may have blocks outside it, and it fill outside A */
} bsr_ilu_fpat;

/* Destinations of permuted row k of A (ap/ac: its map, Lp/Lc, Up/Uc: the
 * patterns, U's pivot first; nL: the lower part's blocks): adst[p] = W index
 * of A's block p (-1: outside a frozen pattern, left out), adiag[k] = A's
 * diagonal block (-1: none), diagw[k] = W index of U's pivot.  Returns 0 when
 * a block is outside ILU(0)'s patterns (frozen = 0), which must hold A's
 * pattern exactly.  Shared by the host plan and the device one
 * (kernels/ilu/ilu0_gpu.cu). */
BSR_HD static inline int bsr_ilu0_map_row(int k, const int *ap, const int *ac, const int *Lp, const int *Lc,
                                          const int *Up, const int *Uc, int nL, int frozen, int *adst,
                                          int *adiag, int *diagw)
{
    int pl = Lp[k], pu = Up[k] + 1;
    adiag[k] = -1;
    diagw[k] = nL + Up[k];
    for (int p = ap[k]; p < ap[k + 1]; p++) {
        const int j = ac[p];
        if (j < k) {
            while (frozen && pl < Lp[k + 1] && Lc[pl] < j) pl++;
            if (pl < Lp[k + 1] && Lc[pl] == j) adst[p] = pl++;
            else if (frozen) adst[p] = -1;
            else return 0;
        } else if (j == k) {
            adst[p] = diagw[k];
            adiag[k] = p;
        } else {
            while (frozen && pu < Up[k + 1] && Uc[pu] < j) pu++;
            if (pu < Up[k + 1] && Uc[pu] == j) adst[p] = nL + pu++;
            else if (frozen) adst[p] = -1;
            else return 0;
        }
    }
    return 1;
}

/* The update list of lower block l (row i, column k) into out (pairs; NULL:
 * count only); returns its length.  The first pair is (W index of row k's
 * inverted pivot, k).  Row i's pattern is its lower row then its
 * upper row (the pivot first), columns ascending, and the upper row k ascends
 * too: the columns j of U_kj found in row i come from one merge that starts
 * after block l.  ILU2's rule: a second-order block (lk[l] = 1) updates with
 * row k's first-order blocks only (R * W is never formed).  The host
 * reference; the device makes the same lists a warp a row
 * (kernels/ilu/ilu0_gpu.cu, plan_updates_warp). */
BSR_HD static inline int bsr_ilu0_updates_of(int i, int l, const int *Lp, const int *Lc, const int *Up,
                                             const int *Uc, const unsigned char *lk, const unsigned char *uk,
                                             int nL, int *out)
{
    const int k = Lc[l], second = lk && lk[l] == 1;
    int len = 1, a = l + 1, a1 = Lp[i + 1], u = Up[i], u1 = Up[i + 1];
    if (out) { out[0] = nL + Up[k]; out[1] = k; }
    for (int q = Up[k] + 1; q < Up[k + 1]; q++) {
        if (second && uk[q]) continue;
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

/* The pattern F's numeric factorization fills on the device: ILU(0)'s L and
 * U (host symbolic phase), or the frozen pattern of ILUT/ILU2.
 * BSR_ERR_ARG when F has neither. */
bsr_status bsr_ilu_fpattern(const bsr_ilu *F, bsr_ilu_fpat *P);

/* For F's permuted A (F->ap/ac) and its pattern (W = the lower part's blocks,
 * then the upper part's): adst[p] = W index of A's permuted block p (-1: left
 * out), adiag[k] = the block p of A on row k's diagonal (-1: none), diagw[k]
 * = W index of U's pivot of row k.  BSR_ERR_INTERNAL when a row of A is not
 * in ILU(0)'s patterns. */
bsr_status bsr_ilu0_plan_map(const bsr_ilu *F, int *adst, int *adiag, int *diagw);

/* Update lists: for lower block l of row i (column k), list pairs
 * [ptr[l], ptr[l+1]) (2 ints each, *n pairs in all: 64-bit offsets, a
 * 1M-row ILU2 pattern of fill 4 passes 2^31 updates): first (W index of row
 * k's inverted pivot, k: the row to wait for), then for each upper block (k,j), j > k, that block
 * l's class updates with and whose column is in row i's pattern, (W index of
 * U_kj, W index of the target block (i,j)), in U's order.  *ptr ([nL+1]) and
 * *list are malloc'ed for the caller. */
bsr_status bsr_ilu0_plan_updates(const bsr_ilu *F, int64_t **ptr, int **list, int64_t *n);

#ifdef __cplusplus
}
#endif
#endif
