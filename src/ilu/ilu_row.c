/* SPDX-License-Identifier: BSD-3-Clause */
/* The ILU row kernel: one block row of ILUT / ILU2 in row (IKJ) form (see
 * ilu_factor.c for the algorithm and the parallel driver; ILU(0)'s rows:
 * ilu_row0.c).
 *
 * One text, row_body, instantiated with b a constant for b = 1..5 (the
 * block products, sums of squares, copies and the pivot's LU inline and
 * unroll; at b = 4 the calls and their dispatch by b cost as much as the
 * arithmetic they did) and with b a variable beyond, as ilu_row0.c does;
 * every instance does the same operations in the same order (the products
 * have bsr_blk_mul's bits, the LU blocklu.h's), so each gives the same
 * factors, classes and pattern. */
#include "ilu_impl.h"
#include "blockops.h"
#include "blocklu.h"
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#if defined(__GNUC__)
#define ROW_INLINE static inline __attribute__((always_inline))
#else
#define ROW_INLINE static inline
#endif

/* c = a m with bsr_blk_mul's bits: inline where b is a constant (fixed),
 * the dispatched call where it is not. */
ROW_INLINE void row_mul(int b, int fixed, double *restrict c, const double *restrict a, const double *restrict m)
{
    if (fixed) bsr_blk_mul_inl(b, c, a, m, 0, 0);
    else bsr_blk_mul(b, c, a, m);
}

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

/* Sort v[0..n) ascending: by insertion when short (a row's U and W parts
 * mostly are; qsort's calls cost more than such a sort). */
static void sort_ints(int *v, int n)
{
    if (n > 32) { qsort(v, n, sizeof(int), bsr_cmp_int); return; }
    for (int i = 1; i < n; i++) {
        int x = v[i], j = i;
        for (; j > 0 && v[j - 1] > x; j--) v[j] = v[j - 1];
        v[j] = x;
    }
}

/* Sum of squares of a's entries in index order: the ranking key of the
 * cap (the device kernel sums in the same order, so both rank alike). */
ROW_INLINE double sumsq_serial(int b, const double *a)
{
    double s = 0.0;
    for (int i = 0; i < b * b; i++) s += a[i] * a[i];
    return s;
}

int ilu_row_cap(const bsr_ilu *F, int k)
{
    const int len = F->ap[k + 1] - F->ap[k];
    int p = F->opt.cap > 0 ? F->opt.cap : F->opt.cap == 0 ? len : INT_MAX;
    if (F->opt.fill > 0) {   /* L + U <= fill * len: the fill blocks split between L and U */
        double q = floor((F->opt.fill - 1.0) * len / 2.0);
        int qf = q < 0 ? 0 : q > INT_MAX ? INT_MAX : (int)q;
        p = F->opt.cap > 0 && F->opt.cap < qf ? F->opt.cap : qf;
    }
    return p;
}

/* ilu_cap_select's rank order: candidate u ahead of t (a larger key, ties
 * to the smaller column). */
static inline int cap_ahead(const double *key, const int *col, int u, int t)
{
    return key[u] > key[t] || (key[u] == key[t] && col[u] < col[t]);
}

/* Most candidates ilu_cap_select keeps in its running list of the best. */
#define CAP_TOP 64

int ilu_cap_select(int m, const double *key, const int *col, int p, unsigned char *keep)
{
    if (p > 0 && p <= CAP_TOP && m > 8) {
        /* t is kept when fewer than p candidates are ahead of it: among the
         * keys that are numbers (the columns distinct: a strict order) the p
         * first of the order, kept in a sorted list of at most p as the
         * candidates come, instead of counting the ones ahead of each; a key
         * that is not a number has none ahead of it (every comparison is
         * false) and is ahead of none: kept, and out of the list */
        int top[CAP_TOP], nt = 0, nan = 0;
        for (int t = 0; t < m; t++) {
            keep[t] = 0;
            if (isnan(key[t])) { keep[t] = 1; nan++; continue; }
            if (nt == p && !cap_ahead(key, col, t, top[p - 1])) continue;
            int j = nt < p ? nt++ : p - 1;   /* a full list drops its last */
            for (; j > 0 && cap_ahead(key, col, t, top[j - 1]); j--) top[j] = top[j - 1];
            top[j] = t;
        }
        for (int i = 0; i < nt; i++) keep[top[i]] = 1;
        return nt + nan;
    }
    int kept = 0;
    for (int t = 0; t < m; t++) {
        int rank = 0;
        for (int u = 0; u < m && rank < p; u++)
            rank += key[u] > key[t] || (key[u] == key[t] && col[u] < col[t]);
        keep[t] = rank < p;
        kept += keep[t];
    }
    return kept;
}

/* The cap on row k's L: of the nl first-order lower blocks (columns lsel,
 * multipliers in lbuf), those outside A's pattern (slots >= lenA) beyond
 * the cap p are moved to xsel (by the norm of their multiplier); they made
 * their updates already, as the frozen refactor repeats (class 2).  Returns
 * the new nl. */
ROW_INLINE int cap_lower(ilu_work *w, int b, int nl, int p, int lenA, int *nx)
{
    const int bb = b * b;
    int m = 0;
    unsigned char *keep = (unsigned char *)w->tslot;
    for (int t = 0; t < nl; t++)
        if (w->pos[w->lsel[t]] >= lenA) {
            w->key[m] = sumsq_serial(b, w->lbuf + (size_t)t * bb);
            w->tq[m++] = w->lsel[t];
        }
    if (m <= p) return nl;
    ilu_cap_select(m, w->key, w->tq, p, keep);
    int out = 0, c = 0;
    for (int t = 0; t < nl; t++) {
        if (w->pos[w->lsel[t]] >= lenA && !keep[c++]) { w->xsel[(*nx)++] = w->lsel[t]; continue; }
        if (out != t) {
            w->lsel[out] = w->lsel[t];
            memcpy(w->lbuf + (size_t)out * bb, w->lbuf + (size_t)t * bb, sizeof(double) * bb);
        }
        out++;
    }
    return out;
}

/* The ranking key of upper block z of row k: ||dinv z||^2, dinv the inverse
 * pivot (the normalized block the thresholds classify). */
ROW_INLINE double upper_key(int b, int fixed, const double *dinv, const double *z, double *tmp)
{
    row_mul(b, fixed, tmp, dinv, z);
    return sumsq_serial(b, tmp);
}

/* key[t] = upper_key of the upper block of column col[t], t < n: four at a
 * time, their serial sums interleaved, each in its own order (one sum's b^2
 * dependent additions, computed alone, waited on each other). */
ROW_INLINE void upper_keys(const ilu_work *w, int b, int fixed, const double *dinv, const int *col, int n, double *key)
{
    const int bb = b * b;
    double y[4 * BSR_MAX_BLOCK * BSR_MAX_BLOCK];
    int t = 0;
    for (; t + 4 <= n; t += 4) {
        for (int u = 0; u < 4; u++) row_mul(b, fixed, y + u * bb, dinv, w->sval + (size_t)w->pos[col[t + u]] * bb);
        double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
        const double *y0 = y, *y1 = y + bb, *y2 = y + 2 * bb, *y3 = y + 3 * bb;
        for (int i = 0; i < bb; i++) {
            s0 += y0[i] * y0[i];
            s1 += y1[i] * y1[i];
            s2 += y2[i] * y2[i];
            s3 += y3[i] * y3[i];
        }
        key[t] = s0; key[t + 1] = s1; key[t + 2] = s2; key[t + 3] = s3;
    }
    for (; t < n; t++) key[t] = upper_key(b, fixed, dinv, w->sval + (size_t)w->pos[col[t]] * bb, y);
}

/* The cap on row k's U and W: first-order upper blocks outside A's pattern
 * beyond the cap p become second order (by the norm of d_k^{-1} z), then W
 * keeps its p largest; the rest is dropped. */
ROW_INLINE void cap_upper(ilu_work *w, int b, int fixed, const double *dinv, int p, int lenA, int *nu, int *nw)
{
    unsigned char *keep = (unsigned char *)w->tslot;
    int m = 0;
    for (int t = 0; t < *nu; t++)
        if (w->pos[w->usel[t]] >= lenA) w->tq[m++] = w->usel[t];
    if (m > p) {   /* keys only where the cap chooses */
        upper_keys(w, b, fixed, dinv, w->tq, m, w->key);
        ilu_cap_select(m, w->key, w->tq, p, keep);
        int out = 0, c = 0;
        for (int t = 0; t < *nu; t++) {
            if (w->pos[w->usel[t]] >= lenA && !keep[c++]) { w->wsel[(*nw)++] = w->usel[t]; continue; }
            w->usel[out++] = w->usel[t];
        }
        *nu = out;
    }
    if (*nw <= p) return;
    upper_keys(w, b, fixed, dinv, w->wsel, *nw, w->key);
    ilu_cap_select(*nw, w->key, w->wsel, p, keep);
    int out = 0;
    for (int t = 0; t < *nw; t++) {
        if (keep[t]) w->wsel[out++] = w->wsel[t];
        else w->dropped++;
    }
    *nw = out;
}

/* Original block row of permuted row k (for messages). */
static int orig_row(const bsr_ilu *F, int k) { return ilu_src_row(F, k); }

/* ilu_slot_new inline while the slots have room (a call a fill block). */
ROW_INLINE int slot_new(ilu_work *w, int b, int j)
{
    if (w->ns == w->cap) return ilu_slot_new(w, b, j);
    const int s = w->ns++;
    w->pos[j] = s;
    w->scol[s] = j;
    return s;
}

/* The updates x_j -= l v_j of row k by row i's blocks q = 1..q1-1 (U's,
 * then W's), l the multiplier at w->lbuf + moff: the slots first (created
 * unless the pattern is fixed; creating one may move w->sval and w->lbuf),
 * then all products in one call. */
ROW_INLINE int row_updates(ilu_work *w, int b, int k, const ilu_row_t *ri, int q1, size_t moff, int create)
{
    /* the arrays in locals: the stores of ints through w's pointers would
     * otherwise reload them (and w's counts) every block */
    const int *uc = ri->ucol, *pos = w->pos;
    int *tslot = w->tslot, *tq = w->tq, n = 0;
    for (int q = 1; q < q1; q++) {
        int j = uc[q], s = pos[j];
        if (s < 0) {   /* fill: a new slot, written whole by its first update */
            if (!create) continue;
            if (j < k && w->lfill++ >= w->lfmax) continue;   /* the row's lower fill budget is spent */
            s = slot_new(w, b, j);
            if (s < 0) return 0;
            tslot = w->tslot;   /* a grown workspace moved them (their entries kept) */
            tq = w->tq;
            if (j < k) heap_push(w->heap, &w->nh, j);
            s = ~s;
        }
        tslot[n] = s;
        tq[n++] = q;
    }
    bsr_blk_mulsub_n(b, n, w->sval, w->tslot, w->lbuf + moff, ri->uval, w->tq);
    w->nprod += n;
    return 1;
}

/* The thresholds decide a block's class by its norm; bounds lo <= norm <=
 * hi from norms of its factors decide most blocks without the product or
 * its serial sum of squares.  The relative margin, kept on the safe side of
 * every bound, is far above the rounding of the sums and products on either
 * side (a few 1e-15 for b <= 10), so a class a bound gives is the one the
 * exact test gives: the factors stay the same bit for bit. */
#define MARGIN_HI (1.0 + 1e-10)
#define MARGIN_LO (1.0 - 1e-10)

/* Squares of t1 and t2 for the tests "hi^2 < t^2" (lt) and "lo^2 >= t^2"
 * (ge); where squares of t could lose their relative accuracy they take
 * values no bound passes (the exact test decides). */
typedef struct { double t1lt, t1ge, t2lt, t2ge; } bound_thr;

/* bound_thr of F's thresholds. */
static bound_thr bound_thresholds(const bsr_ilu *F)
{
    bound_thr T;
    int ok1 = F->t1 >= 1e-140 && F->t1 <= 1e140, ok2 = F->t2 >= 1e-140 && F->t2 <= 1e140;
    T.t1lt = ok1 ? F->t1 * F->t1 : 0.0;
    T.t1ge = ok1 ? F->t1 * F->t1 : INFINITY;
    T.t2lt = ok2 ? F->t2 * F->t2 : 0.0;
    T.t2ge = ok2 ? F->t2 * F->t2 : INFINITY;
    return T;
}

/* Classes of a block: first order (L, U), second order (R, W), dropped;
 * CLS_OPEN: the bounds leave it to the exact norm. */
enum { CLS_FIRST = 0, CLS_SECOND = 1, CLS_DROP = 2, CLS_OPEN = -1 };

/* Class of a block with lo2 <= norm^2 <= hi2 (margins included); a block of
 * A's pattern (in_a) is first order whatever its norm, once the bound shows
 * that the norm is finite. */
static inline int class_by_bounds(const bound_thr *T, double lo2, double hi2, int in_a)
{
    if (!(hi2 <= 1e300)) return CLS_OPEN;   /* huge or not a number */
    if (in_a || lo2 >= T->t1ge) return CLS_FIRST;
    if (hi2 < T->t1lt) {
        if (lo2 >= T->t2ge) return CLS_SECOND;
        if (hi2 < T->t2lt) return CLS_DROP;
    }
    return CLS_OPEN;
}

/* Class of a formed block a by its exact norm times the weight g (the rule
 * of ilu_setup.c; g = 1 but for growth-weighted dropping, ilu_grow.c), after
 * the quick sum of squares settled what it could; -3 when the norm is not
 * finite. */
ROW_INLINE int class_of_block(const bsr_ilu *F, const bound_thr *T, int b, const double *a, int in_a, double g)
{
    double s = bsr_blk_sumsq(b, a) * (g * g);
    int c = class_by_bounds(T, s * MARGIN_LO, s * MARGIN_HI, in_a);
    if (c != CLS_OPEN) return c;
    double nrm = bsr_blk_fnorm(b, a) * g;
    if (!isfinite(nrm)) return -3;
    return nrm >= F->t1 || in_a ? CLS_FIRST : nrm >= F->t2 ? CLS_SECOND : CLS_DROP;
}

/* Bounds of the inverse pivot dinv of a finished row, kept with the row:
 * the computed products l = fl(x dinv) (and fl(dinv x)) satisfy
 * lo2 ||x||_F^2 <= ||l||_F^2 <= hi2 ||x||_F^2.  hi2 from ||dinv||_2 (the
 * product's rounding, at most b u ||x||_F ||dinv||_F, is far inside the
 * margin).  lo2 from 1/||dinv^{-1}||_2 less that rounding (0 when nothing is
 * left: an ill-conditioned pivot), with ||dinv^{-1}||_2 bounded through the
 * pivot d: for E = I - d dinv, dinv^{-1} = (I - E)^{-1} d, so
 * ||dinv^{-1}||_2 <= ||d||_2 / (1 - ||E||_F) when ||E||_F < 1; E's computed
 * form is off by at most b u ||d||_F ||dinv||_F. */
ROW_INLINE void pivot_bounds(int b, int fixed, const double *d, const double *dinv, double *tmp, double *hi2, double *lo2)
{
    *hi2 = bsr_blk_norm2_bound_sq(b, dinv) * MARGIN_HI;
    *lo2 = 0.0;
    const double rnd = 2.0 * b * DBL_EPSILON * sqrt(bsr_blk_sumsq(b, dinv));   /* >= 2 b u ||dinv||_F */
    row_mul(b, fixed, tmp, d, dinv);
    for (int i = 0; i < b; i++) tmp[i * b + i] -= 1.0;
    double e = (sqrt(bsr_blk_sumsq(b, tmp)) + rnd * sqrt(bsr_blk_sumsq(b, d))) * MARGIN_HI;
    double nd2 = bsr_blk_norm2_bound_sq(b, d) * MARGIN_HI;
    if (!(e < 0.5 && nd2 > 0.0 && nd2 <= 1e300)) return;
    double lo = (1.0 - e) / sqrt(nd2) * MARGIN_LO - rnd;
    if (lo > 0.0) *lo2 = lo * lo * MARGIN_LO;
}

/* Factor row k of a threshold kind into F->rows[k] (see the file comment;
 * ILU(0)'s fixed pattern: ilu_row0.c).  Two patterns: the thresholds' (fill
 * created, classified and dropped as it comes), and the frozen one of a refactor
 * (F->use_fz: the slots of the setup's pattern are laid out first, lower
 * ones 0..nlo-1, the pivot at nlo, the upper ones after it; A's blocks
 * outside the pattern are left out, no fill is created, and each block keeps
 * the class the setup gave it).  A frozen refactor of the setup's values
 * repeats the setup's arithmetic exactly: a block outside the pattern was
 * dropped there and so never updated anything. */
ROW_INLINE bsr_status row_body(bsr_ilu *F, ilu_work *w, int k, const int b, const int fixed)
{
    const int bb = b * b;
    const ilu_pattern *fz = F->use_fz ? F->fz : NULL;
    const int create = !fz;
    /* A's own blocks take slots 0..na-1 (they are loaded first), so "in A's
     * pattern" is a slot test; keep_pattern makes them first-order */
    const int na = F->opt.keep_pattern && !fz ? F->ap[k + 1] - F->ap[k] : 0;
    const int nlo = fz ? fz->lp[k + 1] - fz->lp[k] : 0;
    const int lenA = F->ap[k + 1] - F->ap[k];   /* threshold rows: A's blocks are slots 0..lenA-1 */
    const bound_thr T = bound_thresholds(F);
    int nomem = 0, nl = 0, nu = 0, nw = 0, nr = 0, nx = 0;
    const int cap = create ? ilu_row_cap(F, k) : INT_MAX;
    w->ns = 0; w->nh = 0;
    /* the cap bounds the work too: at most 2 cap lower fill blocks are
     * created (each one is eliminated in turn), later lower fill is dropped
     * unformed, as its updates would be outside the frozen pattern */
    w->lfill = 0;
    w->lfmax = cap < INT_MAX / 2 ? 2 * cap : INT_MAX;
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
        /* A's row (columns unique) in slots 0.., its blocks copied at once */
        for (int p = F->ap[k]; p < F->ap[k + 1]; p++) {
            int j = F->ac[p];
            if (slot_new(w, b, j) < 0) goto oom;
            if (j < k) heap_push(w->heap, &w->nh, j);
        }
        memcpy(w->sval, F->aval + (size_t)F->ap[k] * bb, sizeof(double) * bb * (F->ap[k + 1] - F->ap[k]));
    }
    if (ilu_slot(w, b, k, 1, &nomem) < 0) goto oom;   /* the diagonal is always there */

    while (w->nh > 0) {
        int i = heap_pop(w->heap, &w->nh);
        if (w->flags && !ilu_wait_row(w->flags, i, w)) { w->skipped = 1; return BSR_ERR_INTERNAL; }
        const ilu_row_t *ri = &F->rows[i];
        const double *uv = ri->uval;
        const double *x = w->sval + (size_t)w->pos[i] * bb;
        int cls = CLS_OPEN;   /* a threshold block: by the bounds of l_ki = x_ki d_i^{-1} first */
        int hidden = 0;       /* frozen class 2: updates as an L block, not stored */
        if (fz) {
            const int c = fz->lk[fz->lp[k] + w->pos[i]];
            cls = c == 1 ? CLS_SECOND : CLS_FIRST;
            hidden = c == 2;
        } else {
            /* growth-weighted dropping: l_ki weighted by row i's growth of L^{-1} */
            const double gi = F->grow_l ? F->grow_l[i] : 1.0;
            double xs = bsr_blk_sumsq(b, x) * (gi * gi);
            cls = class_by_bounds(&T, xs * ri->lo2, xs * ri->dn2, w->pos[i] < na);
            if (cls == CLS_DROP) { w->dropped++; continue; }
        }
        const int open = cls == CLS_OPEN;
        const size_t moff = (size_t)nl * bb;            /* L's next block, kept if first order */
        row_mul(b, fixed, w->lbuf + moff, x, uv);       /* l_ki = x_ki d_i^{-1} */
        const double *l = w->lbuf + moff;
        if (open) cls = class_of_block(F, &T, b, l, w->pos[i] < na, F->grow_l ? F->grow_l[i] : 1.0);
        else if (fz && !bsr_blk_fnorm_finite(b, l)) cls = -3;
        if (cls < CLS_OPEN) {
            snprintf(w->msg, sizeof w->msg, "ILU: non-finite block L(%d,%d) in block row %d "
                     "(row %d of A)", k, i, k, orig_row(F, k));
            return BSR_ERR_SINGULAR;
        }
        if (cls == CLS_DROP) { w->dropped++; continue; }
        const int first = cls == CLS_FIRST;
        if (hidden) w->xsel[nx++] = i;
        else if (first) w->lsel[nl++] = i;
        else w->rsel[nr++] = i;
        /* R * W products are never formed */
        if (!row_updates(w, b, k, ri, first ? ri->nu + ri->nw : ri->nu, moff, create)) goto oom;
    }

    if (nl > cap) nl = cap_lower(w, b, nl, cap, lenA, &nx);

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
    int nreg = fixed ? bsr_blklu_factor(b, lu, ipiv, tiny, 0) : bsr_blk_lu(b, lu, ipiv, tiny);
    if (nreg) {
        if (F->opt.strict_pivots) {
            snprintf(w->msg, sizeof w->msg, "ILU: singular pivot block in block row %d (row %d of A):"
                     " %d pivot(s) below %.3g", k, orig_row(F, k), nreg, tiny);
            return BSR_ERR_SINGULAR;
        }
        w->nreg++;
    }
    if (fixed) bsr_blklu_inverse(b, lu, ipiv, dinv);
    else bsr_blk_lu_inv(b, lu, ipiv, dinv);
    if (!bsr_blk_finite(b, dinv)) {
        snprintf(w->msg, sizeof w->msg, "ILU: non-finite inverse pivot in block row %d (row %d of A)",
                 k, orig_row(F, k));
        return BSR_ERR_SINGULAR;
    }
    /* the pivot the factors really hold (the regularized one) */
    if (nreg) bsr_blk_inv(b, dinv, F->piv + (size_t)k * bb, 0.0);
    else memcpy(F->piv + (size_t)k * bb, d, sizeof(double) * bb);

    /* upper part: classify on the normalized block d_k^{-1} z_kj, its
     * product formed only where the bounds leave the class open */
    double dn2 = 0.0, lo2 = 0.0;
    if (create) pivot_bounds(b, fixed, F->piv + (size_t)k * bb, dinv, lu, &dn2, &lo2);
    const double gk = F->grow_u ? F->grow_u[k] : 1.0;   /* u_kj weighted by column k's growth of U^{-1} */
    const int ns = w->ns;
    for (int s = 0; s < ns; s++) {
        int j = w->scol[s];
        if (j <= k) continue;
        const double *z = w->sval + (size_t)s * bb;
        int cls;
        if (fz) {
            cls = !bsr_blk_finite(b, z) ? -3 : !fz->uk[fz->up[k] + s - nlo] ? CLS_FIRST : CLS_SECOND;
        } else {
            double zs = bsr_blk_sumsq(b, z) * (gk * gk);
            cls = class_by_bounds(&T, zs * lo2, zs * dn2, s < na);
            if (cls == CLS_OPEN) {
                row_mul(b, fixed, lu, dinv, z);
                cls = class_of_block(F, &T, b, lu, s < na, gk);
            }
        }
        if (cls < CLS_OPEN) {
            snprintf(w->msg, sizeof w->msg, "ILU: non-finite block U(%d,%d) in block row %d "
                     "(row %d of A)", k, j, k, orig_row(F, k));
            return BSR_ERR_SINGULAR;
        }
        if (cls == CLS_FIRST) w->usel[nu++] = j;
        else if (cls == CLS_SECOND) w->wsel[nw++] = j;
        else w->dropped++;
    }
    if (nu > cap || nw > cap) cap_upper(w, b, fixed, dinv, cap, lenA, &nu, &nw);
    sort_ints(w->usel, nu);
    sort_ints(w->wsel, nw);

    /* store: L (ascending), U (diagonal = d_k^{-1} first), W */
    ilu_row_t *rk = &F->rows[k];
    if (rk->own == 1) { free(rk->lcol); free(rk->lval); }
    int tot = nl + 1 + nu + nw;
    rk->lval = ilu_arena_alloc(w, sizeof(double) * (size_t)tot * bb);
    rk->lcol = ilu_arena_alloc(w, sizeof(int) * (size_t)(tot + nr + nx));
    rk->own = 2;
    if (!rk->lcol || !rk->lval) {
        memset(rk, 0, sizeof *rk);
        goto oom;
    }
    rk->nl = nl; rk->nu = nu + 1; rk->nw = nw; rk->nr = nr; rk->nx = nx;
    rk->ucol = rk->lcol + nl;
    rk->rcol = rk->lcol + tot;
    rk->xcol = rk->rcol + nr;
    rk->uval = rk->lval + (size_t)nl * bb;
    memcpy(rk->rcol, w->rsel, sizeof(int) * nr);   /* ascending: the heap's order */
    memcpy(rk->xcol, w->xsel, sizeof(int) * nx);
    if (nl) {
        memcpy(rk->lcol, w->lsel, sizeof(int) * nl);
        memcpy(rk->lval, w->lbuf, sizeof(double) * (size_t)nl * bb);
    }
    rk->dn2 = dn2;
    rk->lo2 = lo2;
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
    if (F->grow_x && create) ilu_grow_row(F, k, rk);   /* grow=2: row k's weight, read by later rows */
    return BSR_OK;
oom:
    snprintf(w->msg, sizeof w->msg, "ILU: out of memory in block row %d", k);
    return BSR_ERR_NOMEM;
}

/* Row k with b a constant (fixed) or F->b; the accumulator is left clean
 * on every path (the workspace serves the next row, and the next
 * refactor). */
ROW_INLINE bsr_status row_clean(bsr_ilu *F, ilu_work *w, int k, const int b, const int fixed)
{
    bsr_status s = row_body(F, w, k, b, fixed);
    ilu_work_clear(w);
    return s;
}

#define DEFINE_ROW(B) \
    static bsr_status row_##B(bsr_ilu *F, ilu_work *w, int k) { return row_clean(F, w, k, B, 1); }
DEFINE_ROW(1) DEFINE_ROW(2) DEFINE_ROW(3) DEFINE_ROW(4) DEFINE_ROW(5)

/* Any b: the same text with b a variable. */
static bsr_status row_any(bsr_ilu *F, ilu_work *w, int k) { return row_clean(F, w, k, F->b, 0); }

/* A threshold row by its block size's kernel. */
static bsr_status row_by_b(bsr_ilu *F, ilu_work *w, int k)
{
    typedef bsr_status (*row_fn)(bsr_ilu *, ilu_work *, int);
    static const row_fn by_b[6] = {NULL, row_1, row_2, row_3, row_4, row_5};   /* as ilu_row0's */
    return !ilu_generic_kernels && F->b <= 5 ? by_b[F->b](F, w, k) : row_any(F, w, k);
}

/* Row k under the work bound (F->nprod_max): not started once the rows
 * finished so far passed it, and failed when its own products pass it.
 * The rows' products are the same on any schedule, and the count only
 * grows, so the factorization fails exactly when all its rows would form
 * more than the bound: on any number of threads, and with the same message
 * whichever row reports it. */
static bsr_status row_bounded(bsr_ilu *F, ilu_work *w, int k)
{
    if (__atomic_load_n(&F->nprod, __ATOMIC_RELAXED) <= F->nprod_max) {
        const int64_t p0 = w->nprod;
        bsr_status s = row_by_b(F, w, k);
        if (s) return s;
        const int64_t d = w->nprod - p0;
        if (__atomic_add_fetch(&F->nprod, d, __ATOMIC_RELAXED) <= F->nprod_max) return BSR_OK;
    }
    ilu_work_bound_msg(F, w->msg, sizeof w->msg);
    return BSR_ERR_UNSUPPORTED;
}

void ilu_work_bound_msg(const bsr_ilu *F, char *buf, size_t len)
{
    snprintf(buf, len, "ILU: the threshold rows passed their work bound, %.3g block multiply-adds "
             "(bsr_ilu_options.max_work, the solver's option work; a product of two blocks is b^3 = %d)",
             F->opt.max_work, F->b * F->b * F->b);
}

/* Factor row k (ILU(0)'s: ilu_row0.c). */
bsr_status ilu_row(bsr_ilu *F, ilu_work *w, int k)
{
    if (F->mode == 0) return ilu_row0(F, w, k);
    return F->nprod_max > 0 && !F->use_fz ? row_bounded(F, w, k) : row_by_b(F, w, k);
}
