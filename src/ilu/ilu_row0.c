/* SPDX-License-Identifier: BSD-3-Clause */
/* ILU(0)'s row kernel: block row k of the fixed pattern (A's blocks plus the
 * diagonal, no classes, no fill) from the finished rows it reads, stored at
 * its places in L and U (or the double pool of float factors).  The row (IKJ)
 * form of ilu_factor.c on a pattern known up front: A's scaled row at its
 * places in L and U (put there by the scaling, ilu_scale.c's place_row0),
 * its lower blocks eliminated there in ascending column
 * order, each multiplier l_ki = x_ki d_i^{-1} updating the blocks of row k
 * that row i's U reaches, then the pivot regularized and inverted as
 * ilu_row.c does for the threshold kinds, with the same checks and messages.
 *
 * One text, row0, instantiated with b a constant for b = 1..5 (the loops
 * unroll, the products inline for b <= 2; at b = 1 the generic row kernel's
 * heap, slots and calls cost several times the arithmetic) and with b a
 * variable beyond; every product has the bits of bsr_blk_mul and
 * bsr_blk_mulsub_n (blockops.h), so each instance gives the same factors. */
#include "ilu_impl.h"
#include "blockops.h"
#include "blocklu.h"
#include <stdio.h>
#include <string.h>

#if defined(__GNUC__)
#define ROW0_INLINE static inline __attribute__((always_inline))
#else
#define ROW0_INLINE static inline
#endif

/* Copy n blocks of b x b (b a constant where the caller's is: the copy of a
 * row's few blocks inline, not a call). */
ROW0_INLINE void copy_blocks(double *restrict d, const double *restrict s, int n, const int b)
{
    for (int t = 0; t < n; t++) memcpy(d + (size_t)t * b * b, s + (size_t)t * b * b, sizeof(double) * b * b);
}

/* Row k (see the file comment), in place: its lower blocks in L's row
 * (lcol, lval; each becomes its multiplier), the pivot in U's first block
 * (then the inverse pivot), its upper blocks in U's next ones; w->pos maps
 * its columns to their index in L's row (columns < k) or U's (k and above)
 * and is left all -1 again.  On failure w->msg names the row (the row's
 * blocks are left half done, as every row after it is). */
ROW0_INLINE bsr_status row0(bsr_ilu *F, ilu_work *w, int k, const int b)
{
    const int bb = b * b;
    ilu_row_t *rk = &F->rows[k];
    const int p0 = F->ap[k], len = F->ap[k + 1] - p0;
    const int *ac = F->ac + p0;
    int nl = 0;
    while (nl < len && ac[nl] < k) nl++;   /* columns ascending: L is a prefix */
    const int hasd = nl < len && ac[nl] == k, nu = len - nl - hasd;
    if (rk->nl != nl || rk->nu != nu + 1) {
        snprintf(w->msg, sizeof w->msg, "ILU(0): row %d has %d+%d blocks, symbolic phase said %d+%d", k, nl, nu + 1,
                 rk->nl, rk->nu);
        return BSR_ERR_INTERNAL;
    }
    if (b > 2 && w->cap < len && !ilu_work_reserve(w, b, len)) {   /* the update lists */
        snprintf(w->msg, sizeof w->msg, "ILU: out of memory in block row %d", k);
        return BSR_ERR_NOMEM;
    }
    double *lv = rk->lval, *uv = rk->uval;
    if (!F->rows_placed) ilu_place_row0(F, k, nl, hasd, nu, b);   /* else the scaling put it there */
    int *pos = w->pos;
    for (int s = 0; s < nl; s++) pos[ac[s]] = s;
    for (int q = 0; q < rk->nu; q++) pos[rk->ucol[q]] = q;   /* ucol[0] = k */
    bsr_status st = BSR_OK;
    for (int t = 0; t < nl; t++) {
        const int i = ac[t];
        const ilu_row_t *ri = &F->rows[i];
        double *l = lv + (size_t)t * bb, m[BSR_MAX_BLOCK * BSR_MAX_BLOCK];
        bsr_blk_mul_inl(b, m, l, ri->uval, 0, 0);   /* l_ki = x_ki d_i^{-1} */
        if (!bsr_blk_fnorm_finite(b, m)) {
            snprintf(w->msg, sizeof w->msg, "ILU: non-finite block L(%d,%d) in block row %d (row %d of A)", k, i, k,
                     ilu_src_row(F, k));
            st = BSR_ERR_SINGULAR;
            goto done;
        }
        copy_blocks(l, m, 1, b);
        if (b <= 2) {   /* x_kj -= l_ki u_ij inline */
            for (int q = 1; q < ri->nu; q++) {
                const int j = ri->ucol[q], s = pos[j];
                if (s >= 0) bsr_blk_mul_inl(b, (j < k ? lv : uv) + (size_t)s * bb, l, ri->uval + (size_t)q * bb, 1, 1);
            }
        } else {   /* larger blocks: the vector forms of the update, on L's and U's blocks */
            int nlo = 0, nup = 0;
            for (int q = 1; q < ri->nu; q++) {
                const int j = ri->ucol[q], s = pos[j];
                if (s < 0) continue;
                if (j < k) { w->tslot[nlo] = s; w->tq[nlo++] = q; }
                else { w->lsel[nup] = s; w->usel[nup++] = q; }
            }
            bsr_blk_mulsub_n(b, nlo, lv, w->tslot, l, ri->uval, w->tq);
            bsr_blk_mulsub_n(b, nup, uv, w->lsel, l, ri->uval, w->usel);
        }
    }
    /* pivot: d_k regularized by the stated rule, then inverted */
    double lu[BSR_MAX_BLOCK * BSR_MAX_BLOCK], dinv[BSR_MAX_BLOCK * BSR_MAX_BLOCK];
    int ipiv[BSR_MAX_BLOCK];
    if (!bsr_blk_finite(b, uv)) {
        snprintf(w->msg, sizeof w->msg, "ILU: non-finite pivot block in block row %d (row %d of A)", k,
                 ilu_src_row(F, k));
        st = BSR_ERR_SINGULAR;
        goto done;
    }
    const double tiny = F->pivot_rel * F->rowref[k];
    copy_blocks(lu, uv, 1, b);
    const int nreg = bsr_blklu_factor(b, lu, ipiv, tiny, 0);   /* bsr_blk_lu's text */
    if (nreg) {
        if (F->opt.strict_pivots) {
            snprintf(w->msg, sizeof w->msg, "ILU: singular pivot block in block row %d (row %d of A):"
                     " %d pivot(s) below %.3g", k, ilu_src_row(F, k), nreg, tiny);
            st = BSR_ERR_SINGULAR;
            goto done;
        }
        w->nreg++;
    }
    bsr_blklu_inverse(b, lu, ipiv, dinv);
    if (!bsr_blk_finite(b, dinv)) {
        snprintf(w->msg, sizeof w->msg, "ILU: non-finite inverse pivot in block row %d (row %d of A)", k,
                 ilu_src_row(F, k));
        st = BSR_ERR_SINGULAR;
        goto done;
    }
    /* the pivot the factors really hold (the regularized one) */
    if (nreg) bsr_blk_inv(b, dinv, F->piv + (size_t)k * bb, 0.0);
    else copy_blocks(F->piv + (size_t)k * bb, uv, 1, b);
    for (int q = 1; q <= nu; q++)
        if (!bsr_blk_finite(b, uv + (size_t)q * bb)) {
            snprintf(w->msg, sizeof w->msg, "ILU: non-finite block U(%d,%d) in block row %d (row %d of A)", k,
                     rk->ucol[q], k, ilu_src_row(F, k));
            st = BSR_ERR_SINGULAR;
            goto done;
        }
    copy_blocks(uv, dinv, 1, b);   /* U's diagonal: the inverse pivot */
    rk->dn2 = rk->lo2 = 0.0;
done:
    for (int s = 0; s < nl; s++) pos[ac[s]] = -1;
    for (int q = 0; q < rk->nu; q++) pos[rk->ucol[q]] = -1;
    return st;
}

#define DEFINE_ROW0(B) \
    static bsr_status row0_##B(bsr_ilu *F, ilu_work *w, int k) { return row0(F, w, k, B); }
DEFINE_ROW0(1) DEFINE_ROW0(2) DEFINE_ROW0(3) DEFINE_ROW0(4) DEFINE_ROW0(5)

/* Any b: the same text with b a variable. */
static bsr_status row0_any(bsr_ilu *F, ilu_work *w, int k) { return row0(F, w, k, F->b); }

bsr_status ilu_row0(bsr_ilu *F, ilu_work *w, int k)
{
    typedef bsr_status (*row0_fn)(bsr_ilu *, ilu_work *, int);
    static const row0_fn by_b[6] = {NULL, row0_1, row0_2, row0_3, row0_4, row0_5};   /* as ilu_scale's */
    return !ilu_generic_kernels && F->b <= 5 ? by_b[F->b](F, w, k) : row0_any(F, w, k);
}
