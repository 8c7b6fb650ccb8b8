/* The ILU row kernel: one block row of ILU(0) / ILUT / ILU2 in row (IKJ)
 * form (see ilu_factor.c for the algorithm and the parallel driver). */
#include "ilu_impl.h"
#include "blockops.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Min-heap of column indices. */
static void heap_push(int *h, int *nh, int v)
{
    int i = (*nh)++;
    while (i > 0 && h[(i - 1) / 2] > v) { h[i] = h[(i - 1) / 2]; i = (i - 1) / 2; }
    h[i] = v;
}

/* Pop the smallest column from the binary min-heap h[0..*nh). */
static int heap_pop(int *h, int *nh)
{
    int top = h[0], v = h[--(*nh)], i = 0, n = *nh;
    for (;;) {
        int c = 2 * i + 1;
        if (c >= n) break;
        if (c + 1 < n && h[c + 1] < h[c]) c++;
        if (h[c] >= v) break;
        h[i] = h[c];
        i = c;
    }
    if (n > 0) h[i] = v;
    return top;
}

/* qsort comparison of ints, ascending. */
static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* Original block row of permuted row k (for messages). */
static int orig_row(const bsr_ilu *F, int k) { return ilu_src_row(F, k); }

/* Add column j's update  x_j -= m * v  (creating the slot unless the
 * pattern is fixed). */
static int row_update(ilu_work *w, int b, int k, int j, const double *m, const double *v,
                      int create)
{
    int nomem = 0, had = w->pos[j] >= 0;
    int s = ilu_slot(w, b, j, create, &nomem);
    if (nomem) return 0;
    if (s < 0) return 1;
    if (!had && j < k) heap_push(w->heap, &w->nh, j);
    bsr_blk_mulsub(b, w->sval + (size_t)s * b * b, m, v);
    return 1;
}

/* Factor row k into F->rows[k] (see the file comment).  Three patterns:
 * ILU(0)'s (fixed: A's own, no dropping), the thresholds' (fill created,
 * classified and dropped as it comes), and the frozen one of a refactor
 * (F->use_fz: the slots of the setup's pattern are laid out first, lower
 * ones 0..nlo-1, the pivot at nlo, the upper ones after it; A's blocks
 * outside the pattern are left out, no fill is created, and each block keeps
 * the class the setup gave it).  A frozen refactor of the setup's values
 * repeats the setup's arithmetic exactly: a block outside the pattern was
 * dropped there and so never updated anything. */
static bsr_status ilu_row_body(bsr_ilu *F, ilu_work *w, int k)
{
    const int b = F->b, bb = b * b, fixed = F->mode == 0;
    const ilu_pattern *fz = F->use_fz ? F->fz : NULL;
    const int create = !fixed && !fz;
    /* A's own blocks take slots 0..na-1 (they are loaded first), so "in A's
     * pattern" is a slot test; keep_pattern makes them first-order */
    const int na = F->opt.keep_pattern && !fz ? F->ap[k + 1] - F->ap[k] : 0;
    const int nlo = fz ? fz->lp[k + 1] - fz->lp[k] : 0;
    int nomem = 0, nl = 0, nu = 0, nw = 0, nr = 0;
    w->ns = 0; w->nh = 0;
    if (fz) {
        for (int q = fz->lp[k]; q < fz->lp[k + 1]; q++) {
            if (ilu_slot(w, b, fz->lc[q], 1, &nomem) < 0) goto oom;
            heap_push(w->heap, &w->nh, fz->lc[q]);
        }
        for (int q = fz->up[k]; q < fz->up[k + 1]; q++)   /* the pivot first */
            if (ilu_slot(w, b, fz->uc[q], 1, &nomem) < 0) goto oom;
        for (int p = F->ap[k]; p < F->ap[k + 1]; p++) {
            int s = w->pos[F->ac[p]];
            if (s >= 0) memcpy(w->sval + (size_t)s * bb, F->aval + (size_t)p * bb, sizeof(double) * bb);
        }
    } else {
        for (int p = F->ap[k]; p < F->ap[k + 1]; p++) {
            int j = F->ac[p], s = ilu_slot(w, b, j, 1, &nomem);
            if (nomem) goto oom;
            memcpy(w->sval + (size_t)s * bb, F->aval + (size_t)p * bb, sizeof(double) * bb);
            if (j < k) heap_push(w->heap, &w->nh, j);
        }
    }
    if (ilu_slot(w, b, k, 1, &nomem) < 0) goto oom;   /* the diagonal is always there */

    while (w->nh > 0) {
        int i = heap_pop(w->heap, &w->nh);
        if (w->flags && !ilu_wait_row(w->flags, i)) { w->skipped = 1; return BSR_ERR_INTERNAL; }
        const ilu_row_t *ri = &F->rows[i];
        const int *uc = ri->ucol;
        const double *uv = ri->uval;
        double *x = w->sval + (size_t)w->pos[i] * bb;
        bsr_blk_mul(b, w->lblk, x, uv);                 /* l_ki = x_ki d_i^{-1} */
        memcpy(x, w->lblk, sizeof(double) * bb);
        double nrm = bsr_blk_fnorm(b, w->lblk);
        if (!isfinite(nrm)) {
            snprintf(w->msg, sizeof w->msg, "ILU: non-finite block L(%d,%d) in block row %d "
                     "(row %d of A)", k, i, k, orig_row(F, k));
            return BSR_ERR_SINGULAR;
        }
        int first = fixed || (fz ? !fz->lk[fz->lp[k] + w->pos[i]] : nrm >= F->t1 || w->pos[i] < na);
        if (!first && !fz && nrm < F->t2) { w->dropped++; continue; }
        if (first) w->lsel[nl++] = i; else w->rsel[nr++] = i;
        for (int q = 1; q < ri->nu; q++)
            if (!row_update(w, b, k, uc[q], w->lblk, uv + (size_t)q * bb, create)) goto oom;
        if (first)   /* R * W products are never formed */
            for (int q = 0; q < ri->nw; q++)
                if (!row_update(w, b, k, uc[ri->nu + q], w->lblk,
                                uv + (size_t)(ri->nu + q) * bb, create)) goto oom;
    }

    /* pivot: d_k regularized by the stated rule, then inverted */
    double *lu = w->tmp, *dinv = w->lblk;
    double *d = w->sval + (size_t)w->pos[k] * bb;
    int ipiv[BSR_MAX_BLOCK];
    if (!bsr_blk_finite(b, d)) {
        snprintf(w->msg, sizeof w->msg, "ILU: non-finite pivot block in block row %d (row %d of A)",
                 k, orig_row(F, k));
        return BSR_ERR_SINGULAR;
    }
    double tiny = F->pivot_rel * F->rowref[k];
    memcpy(lu, d, sizeof(double) * bb);
    int nreg = bsr_blk_lu(b, lu, ipiv, tiny);
    if (nreg) {
        if (F->opt.strict_pivots) {
            snprintf(w->msg, sizeof w->msg, "ILU: singular pivot block in block row %d (row %d of A):"
                     " %d pivot(s) below %.3g", k, orig_row(F, k), nreg, tiny);
            return BSR_ERR_SINGULAR;
        }
        w->nreg++;
    }
    bsr_blk_lu_inv(b, lu, ipiv, dinv);
    if (!bsr_blk_finite(b, dinv)) {
        snprintf(w->msg, sizeof w->msg, "ILU: non-finite inverse pivot in block row %d (row %d of A)",
                 k, orig_row(F, k));
        return BSR_ERR_SINGULAR;
    }
    /* the pivot the factors really hold (the regularized one) */
    if (nreg) bsr_blk_inv(b, dinv, F->piv + (size_t)k * bb, 0.0);
    else memcpy(F->piv + (size_t)k * bb, d, sizeof(double) * bb);

    /* upper part: classify on the normalized block d_k^{-1} z_kj */
    for (int s = 0; s < w->ns; s++) {
        int j = w->scol[s];
        if (j <= k) continue;
        const double *z = w->sval + (size_t)s * bb;
        double nrm;
        if (fixed || fz) nrm = bsr_blk_finite(b, z) ? 1.0 : NAN;
        else { bsr_blk_mul(b, lu, dinv, z); nrm = bsr_blk_fnorm(b, lu); }
        if (!isfinite(nrm)) {
            snprintf(w->msg, sizeof w->msg, "ILU: non-finite block U(%d,%d) in block row %d "
                     "(row %d of A)", k, j, k, orig_row(F, k));
            return BSR_ERR_SINGULAR;
        }
        if (fixed || (fz ? !fz->uk[fz->up[k] + s - nlo] : nrm >= F->t1 || s < na)) w->usel[nu++] = j;
        else if (fz || nrm >= F->t2) w->wsel[nw++] = j;
        else w->dropped++;
    }
    qsort(w->usel, nu, sizeof(int), cmp_int);
    qsort(w->wsel, nw, sizeof(int), cmp_int);

    /* store: L (ascending), U (diagonal = d_k^{-1} first), W */
    ilu_row_t *rk = &F->rows[k];
    if (fixed) {   /* ILU(0): the symbolic phase laid the row out already */
        if (rk->nl != nl || rk->nu != nu + 1) {
            snprintf(w->msg, sizeof w->msg, "ILU(0): row %d has %d+%d blocks, symbolic phase said %d+%d",
                     k, nl, nu + 1, rk->nl, rk->nu);
            return BSR_ERR_INTERNAL;
        }
    } else {
        if (rk->own == 1) { free(rk->lcol); free(rk->lval); }
        int tot = nl + 1 + nu + nw;
        rk->lval = ilu_arena_alloc(w, sizeof(double) * (size_t)tot * bb);
        rk->lcol = ilu_arena_alloc(w, sizeof(int) * (size_t)(tot + nr));
        rk->own = 2;
        if (!rk->lcol || !rk->lval) {
            memset(rk, 0, sizeof *rk);
            goto oom;
        }
        rk->nl = nl; rk->nu = nu + 1; rk->nw = nw; rk->nr = nr;
        rk->ucol = rk->lcol + nl;
        rk->rcol = rk->lcol + tot;
        rk->uval = rk->lval + (size_t)nl * bb;
        memcpy(rk->rcol, w->rsel, sizeof(int) * nr);   /* ascending: the heap's order */
    }
    for (int t = 0; t < nl; t++) {
        rk->lcol[t] = w->lsel[t];
        memcpy(rk->lval + (size_t)t * bb, w->sval + (size_t)w->pos[w->lsel[t]] * bb, sizeof(double) * bb);
    }
    rk->ucol[0] = k;
    memcpy(rk->uval, dinv, sizeof(double) * bb);
    int e = 1;
    for (int t = 0; t < nu; t++, e++) {
        rk->ucol[e] = w->usel[t];
        memcpy(rk->uval + (size_t)e * bb, w->sval + (size_t)w->pos[w->usel[t]] * bb, sizeof(double) * bb);
    }
    for (int t = 0; t < nw; t++, e++) {
        rk->ucol[e] = w->wsel[t];
        memcpy(rk->uval + (size_t)e * bb, w->sval + (size_t)w->pos[w->wsel[t]] * bb, sizeof(double) * bb);
    }
    w->sec_used += nr + nw;
    w->wkept += nw;
    if (nr > w->rmax) w->rmax = nr;
    return BSR_OK;
oom:
    snprintf(w->msg, sizeof w->msg, "ILU: out of memory in block row %d", k);
    return BSR_ERR_NOMEM;
}

/* Factor row k; the accumulator is left clean on every path (the
 * workspace serves the next row, and the next refactor). */
bsr_status ilu_row(bsr_ilu *F, ilu_work *w, int k)
{
    bsr_status s = ilu_row_body(F, w, k);
    ilu_work_clear(w);
    return s;
}
