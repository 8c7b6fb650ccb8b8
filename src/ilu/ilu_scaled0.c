/* SPDX-License-Identifier: BSD-3-Clause */
/* ILU(0) at b = 1 on one thread in a single pass over A: each row scaled
 * (ilu_scale.c's rule) and factored (ilu_row0.c's) before the next, in plain
 * doubles, on a dense row of n values (PETSc's rtmp): A's row scattered into
 * it, each multiplier l_ki = x_ki d_i^{-1} subtracting l_ki u_ij from every
 * x_kj of row i's U (the columns outside row k's pattern land in entries no
 * later row reads before writing them), the row gathered back into L and U.
 * Every operation is the block kernels' at b = 1 in the same order (c = +0 +
 * a m, c -= a m, the pivot rule, the inverses), so the factors, the scaled
 * A, the scalings, rowref, the pivots and the counts have the two passes'
 * bits; the block machinery (copies, pos[] slots, calls per block, a second
 * trip of the scaled A through memory) cost the two passes 2.2x PETSc's
 * time.  A row the rule fails (a scaling error, a non-finite or singular
 * pivot, a strict pivot) is not reported here: the caller runs the two
 * passes from the start, which name the failure as they always did. */
#include "ilu_impl.h"
#include "blockops.h"
#include <float.h>
#include <math.h>

#if defined(__GNUC__)
#define NOINLINE __attribute__((noinline))
#define ALWAYS_INLINE static inline __attribute__((always_inline))
#else
#define NOINLINE
#define ALWAYS_INLINE static inline
#endif

/* Tests only: off, every factorization takes the two passes. */
int ilu_single_pass = 1;
void bsr_ilu_test_single_pass(int on) { ilu_single_pass = on; }

int ilu_scaled0_ok(const bsr_ilu *F, const bsr_matrix *A)
{
    return ilu_single_pass && !ilu_generic_kernels && F->mode == 0 && F->b == 1 && A->prec == BSR_DOUBLE &&
           !F->dr && F->L && F->U && F->rows && bsr_progress_min() <= 0 &&
           bsr_team((int64_t)F->nnzbA, ILU_TEAM_GRAIN) < 2;
}

/* The slow part of ilu_scale.c's row_norm_max at b = 1: the largest of m
 * and the norms of the row's values x[c[p]], p < len, whose sums of squares
 * leave the safe range.  Out of line: it is rare. */
static NOINLINE double norm_max_slow(const double *x, const int *c, int len, double m)
{
    for (int p = 0; p < len; p++) {
        const double v = x[c[p]], s = 0.0 + v * v;
        if (ILU_SAFE_SUM(s)) continue;
        const double nr = bsr_blk_fnorm_scaled(1, &v, s);
        if (nr > m) m = nr;
    }
    return m;
}

/* The largest block norm of the row's values x[c[p]], p < len
 * (row_norm_max at b = 1), and in *rowmax the largest |value|: the plain
 * loop, for rows whose squares are not all in the safe range. */
static NOINLINE double norm_max(const double *x, const int *c, int len, double *rowmax)
{
    double fast = 0.0, m = 0.0;
    int slow = 0;
    for (int p = 0; p < len; p++) {
        const double v = x[c[p]], s = 0.0 + v * v;
        if (fabs(v) > m) m = fabs(v);
        if (ILU_SAFE_SUM(s)) { if (s > fast) fast = s; }
        else slow = 1;
    }
    *rowmax = m;
    return slow ? norm_max_slow(x, c, len, sqrt(fast)) : sqrt(fast);
}

/* Ds_k for a row whose A_kk is missing or not a normal number: the
 * scaling's first pass (the row's checks and largest block norm), then
 * A_kk^{-1} or 1 / s_k (*singular = 1); 0 when the row fails.  The row's
 * values: Ak[p], or Ad[as[p]] when Ak is NULL; x is scratch. */
static NOINLINE int ds_first(double *x, const double *Ak, const double *Ad, const int *as, const int *ac, int len,
                             int diag, double *ds, int *singular)
{
    double chk = 0.0;
    for (int p = 0; p < len; p++) {
        const double v = Ak ? Ak[p] : Ad[as[p]];
        chk += v - v;   /* NaN when some value is not finite */
        x[ac[p]] = v;
    }
    if (!(chk == 0.0)) return 0;
    double rowmax;
    const double smax = norm_max(x, ac, len, &rowmax);
    if (smax == 0.0 || rowmax < DBL_MIN) return 0;
    *singular = 1;
    if (diag >= 0) {
        const double d = x[ac[diag]], amax = fabs(d);
        *singular = amax == 0.0 || fabs(d) <= 1e-14 * amax;
        if (!*singular) *ds = 1.0 / d;
        if (!*singular && !isfinite(*ds)) *singular = 1;
    }
    if (*singular) *ds = 1.0 * (sqrt(1.0) / smax);
    return 1;
}

/* Row k scaled into x (and F->aval, dl, scale_left, rowref), then factored
 * into L (lv: its row, nl blocks) and U (uv: all of U's values); 0 when the
 * rule fails on it.  The scaling's norms: a block's norm at b = 1 comes from
 * its square, the row's largest from the largest square of those in the
 * safe range; when every square is in it (the smallest and the largest
 * |value|'s squares are: rounding is monotone) that is the square of the
 * largest |value|, with no test per value.  ident: A's blocks are F's
 * (asrc[p] = p, F->asrc_id). */
ALWAYS_INLINE int row1(bsr_ilu *F, const double *restrict Ad, int k, double *restrict x, double *restrict lv, int nl,
                       double *restrict uv, const int *restrict up, const int *restrict uc, int *nreg, int *fb,
                       const int ident)
{
    const int p0 = F->ap[k], len = F->ap[k + 1] - p0;
    const int *ac = F->ac + p0, *as = F->asrc + p0;
    const double *Ak = Ad + p0;
    double *av = F->aval + p0;
    const int diag = nl < len && ac[nl] == k ? nl : -1;   /* the pattern's: L is a prefix */
    /* Ds_k = A_kk^{-1} where A_kk is a normal number: not singular by the
     * rule then, its inverse finite, the row neither zero nor of subnormal
     * values only, and a value of the row that is not finite becomes a
     * Ds_k A_kj that is not; ds_first's first pass decides the others */
    const double akk = diag >= 0 ? (ident ? Ak[diag] : Ad[as[diag]]) : 0.0;
    double ds;
    int singular = 0;
    if (fabs(akk) >= DBL_MIN && fabs(akk) <= DBL_MAX) ds = 1.0 / akk;
    else if (!ds_first(x, ident ? Ak : NULL, Ad, as, ac, len, diag, &ds, &singular)) return 0;
    *fb += singular;
    /* the second pass: Ds_k A_kj into x and aval, and rowref */
    x[k] = 0.0;   /* a missing diagonal starts at +0 */
    const int one = singular ? -1 : diag;   /* Ds_k A_kk = 1 by construction */
    double mx = 0.0, mn = DBL_MAX, chk = 0.0;
    for (int p = 0; p < len; p++) {
        const double v = ident ? Ak[p] : Ad[as[p]];
        const double a = p == one ? 1.0 : 0.0 + ds * v, f = fabs(a);
        x[ac[p]] = a;
        av[p] = a;
        chk += a - a;   /* NaN when some value is not finite */
        mx = f > mx ? f : mx;
        mn = f < mn ? f : mn;
    }
    if (!(chk == 0.0)) return 0;
    double rmax = sqrt(mx * mx);
    if (!(mn * mn >= 1e-290 && mx * mx <= 1e300)) {
        double rowmax;
        rmax = norm_max(x, ac, len, &rowmax);
        if (!isfinite(rmax)) return 0;
    }
    const double rowref = rmax / sqrt(1.0);
    F->rowref[k] = rowref;
    F->dl[k] = ds;
    if (F->prec == BSR_DOUBLE) ((double *)F->scale_left)[k] = ds;
    else ((float *)F->scale_left)[k] = (float)ds;
    /* the row: its lower columns ascending, each multiplier updating the
     * row by row i's U */
    int p = 0;
    for (; p < len && ac[p] < k; p++) {
        const int i = ac[p];
        const double m = 0.0 + x[i] * uv[up[i]];
        if (!isfinite(m)) return 0;
        lv[p] = m;
        for (int q = up[i] + 1; q < up[i + 1]; q++) x[uc[q]] -= m * uv[q];
    }
    /* the pivot, regularized by the stated rule, then inverted */
    const double d = x[k];
    if (!isfinite(d)) return 0;
    const double tiny = F->pivot_rel * rowref;
    double dr = d;
    int reg = 0;
    if (tiny > 0 && !(fabs(dr) >= tiny) && !isnan(dr)) {
        dr = copysign(tiny, dr);
        reg = 1;
    }
    if (reg && F->opt.strict_pivots) return 0;
    *nreg += reg;
    const double dinv = 1.0 / dr;
    if (!isfinite(dinv)) return 0;
    if (reg) F->piv[k] = 1.0 / dinv;   /* the pivot the factors hold */
    else F->piv[k] = d;
    /* U's row: the diagonal, then A's upper columns (ac's, past the diagonal) */
    double *u = uv + up[k];
    if (p < len && ac[p] == k) p++;
    for (int q = 1; p < len; p++, q++) {
        const double v = x[ac[p]];
        if (!isfinite(v)) return 0;
        u[q] = v;
    }
    u[0] = dinv;
    return 1;
}

int ilu_rows0_scaled(bsr_ilu *F, const bsr_matrix *A, ilu_work *w)
{
    if (!F->xrow && !(F->xrow = bsr_malloc(sizeof(double) * ((size_t)F->n + 1), "ILU(0) dense row"))) return 0;
    double *lv = F->prec == BSR_DOUBLE ? F->L->val : F->pool;
    double *uv = F->prec == BSR_DOUBLE ? F->U->val : F->pool + F->L->nnzb;
    const int *up = F->U->rowptr, *uc = F->U->colind;
    int nreg = 0, fb = 0;
    const int *lp = F->L->rowptr;
    if (F->asrc_id) {
        for (int k = 0; k < F->n; k++)
            if (!row1(F, A->val, k, F->xrow, lv + lp[k], lp[k + 1] - lp[k], uv, up, uc, &nreg, &fb, 1)) return 0;
    } else {
        for (int k = 0; k < F->n; k++)
            if (!row1(F, A->val, k, F->xrow, lv + lp[k], lp[k + 1] - lp[k], uv, up, uc, &nreg, &fb, 0)) return 0;
    }
    w->nreg += nreg;
    F->st.scaling_fallbacks = fb;
    return 1;
}
