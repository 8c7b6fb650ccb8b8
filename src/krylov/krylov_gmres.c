/* SPDX-License-Identifier: BSD-3-Clause */
/* Restarted GMRES(m) with right preconditioning, batched over k columns, and
 * with option deflate=K GMRES with deflated restarting, GMRES-DR(m, K)
 * (Morgan, SIAM J. Sci. Comput. 24, 2002).  The Arnoldi step does one
 * preconditioner application and one SpMM on all k columns; each column has
 * its own Hessenberg matrix, Givens rotations and least-squares right-hand
 * side.  Orthogonalization by modified Gram-Schmidt or classical
 * Gram-Schmidt applied twice (CGS2).  Since the preconditioner is fixed, the
 * correction of a cycle is M^{-1} (V y): one more application per cycle
 * instead of storing M^{-1} V.  With option flex=1 the cycle keeps Z =
 * M^{-1} V as made and its correction is Z y (FGMRES, Saad 1993): where
 * the factors' inverses grow, M^{-1} (V y) is not the Z y that the Arnoldi
 * relation A Z = V Hbar holds for, and the true residual parts from the
 * least-squares one.  A column stops inside a cycle when its
 * least-squares residual meets the tolerance; its true residual is checked
 * at the cycle's end (and it is reopened if they disagree).  Without
 * deflate, each cycle starts from the true residual.
 *
 * With deflate=K each cycle after the first keeps the harmonic Ritz vectors
 * of the K smallest harmonic Ritz values of A M^{-1}: restarted GMRES forgets
 * at every restart the few eigenvalues near the origin that an indefinite
 * system's preconditioned operator keeps, and stalls; full GMRES does not,
 * at a memory that grows with the iterations.  GMRES-DR keeps those
 * directions in m + 1 vectors: on the indefinite coupled3d class (216k block
 * rows, b = 5, the capped ILU2) GMRES(60) stalls at relres 1e-2 where
 * GMRES-DR(60, 20) converges in 212 iterations (bench/RESULTS.md).
 *
 * A deflated cycle starts from the kk + 1 vectors V Q (kk = K, or K + 1
 * where the K-th value is one of a complex pair, kept whole as its real and
 * imaginary parts), Q orthonormal from the harmonic vectors and the cycle's
 * least-squares residual s, with A M^{-1} V_kk = V_kk+1 (Q^T Hbar Q); the
 * Arnoldi steps go on from column kk.  The small least-squares problem keeps
 * its Givens rotations in a list: the dense (kk + 1) x kk leading block takes
 * kk - i rotations in its column i, each later column one (a plain cycle:
 * one a column, as GMRES(m)).  Each column has its own kk and deflated
 * basis (the shared vectors are combined with per-column coefficients); a
 * column whose cycle ended early (its true residual reopened it), or whose
 * harmonic vectors LAPACK cannot give, restarts plain from its residual.
 *
 * A deflated cycle's flexible vectors are Z Q(0:m-1, 0:kk-1), for which
 * A Z Q = V Q (Q^T Hbar Q) holds as it does for V Q.
 *
 * A GMRES-DR solve leaves its last deflated basis (ks->keep; a flexible one
 * its Z too, used where the correction would apply M^{-1}); a later solve
 * on the same operator given it (ks->proj: the error control's) keeps that
 * space out of its cycles, GCRO's way (aug_col below).  The vectors'
 * combinations (Gram-Schmidt's updates, the correction, the restart's
 * basis) are one pass each (bsr_kops_lincomb). */
#include "krylov_table.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* LAPACK (Fortran; the hidden lengths of the character arguments last). */
extern void dgeev_(const char *jobvl, const char *jobvr, const int *n, double *a, const int *lda, double *wr,
                   double *wi, double *vl, const int *ldvl, double *vr, const int *ldvr, double *work,
                   const int *lwork, int *info, size_t, size_t);
extern void dgesv_(const int *n, const int *nrhs, double *a, const int *lda, int *ipiv, double *b, const int *ldb,
                   int *info);

/* One column's small problem: Hbar (m+1 x m, column-major) as made, R its
 * rotated copy, the rotations (rows r, r+1) in order, the right-hand side
 * c as made and g rotated, y the least-squares solution. */
typedef struct {
    int m;
    double *H, *R, *c, *g, *y;
    int *rr, nrot;
    double *rc, *rs;
    int start, steps;     /* the cycle's first Arnoldi column (kk), columns made */
} dr_col;

#define H_(col, l, i) ((col)->H[(size_t)(i) * ((col)->m + 1) + (l)])
#define R_(col, l, i) ((col)->R[(size_t)(i) * ((col)->m + 1) + (l)])

/* Apply column t's rotations to v (length m + 1). */
static void rot_apply(const dr_col *t, double *v)
{
    for (int q = 0; q < t->nrot; q++) {
        int r = t->rr[q];
        double a = v[r], b = v[r + 1];
        v[r] = t->rc[q] * a + t->rs[q] * b;
        v[r + 1] = -t->rs[q] * a + t->rc[q] * b;
    }
}

/* A new rotation of rows (r, r+1) zeroing R(r+1, i), applied to R's column i
 * and to g. */
static void rot_new(dr_col *t, int r, int i)
{
    double *h = t->R + (size_t)i * (t->m + 1), a = h[r], b = h[r + 1], c = 1, s = 0;
    if (b != 0) {
        double d = hypot(a, b);
        c = a / d;
        s = b / d;
    }
    h[r] = c * a + s * b;
    h[r + 1] = 0;
    double ga = t->g[r], gb = t->g[r + 1];
    t->g[r] = c * ga + s * gb;
    t->g[r + 1] = -s * ga + c * gb;
    t->rr[t->nrot] = r;
    t->rc[t->nrot] = c;
    t->rs[t->nrot++] = s;
}

/* Column i of R (from H) rotated: the earlier rotations, then new ones
 * zeroing rows last down to i + 1.  Returns |g(i+1)|, the least-squares
 * residual of the first i + 1 columns. */
static double rot_column(dr_col *t, int i, int last)
{
    double *h = t->R + (size_t)i * (t->m + 1);
    for (int l = 0; l <= t->m; l++) h[l] = H_(t, l, i);
    rot_apply(t, h);
    for (int r = last - 1; r >= i; r--) rot_new(t, r, i);
    return fabs(t->g[i + 1]);
}

/* y = R^{-1} g over the first s columns. */
static void dr_backsolve(dr_col *t, int s)
{
    for (int i = s - 1; i >= 0; i--) {
        double v = t->g[i];
        for (int l = i + 1; l < s; l++) v -= R_(t, i, l) * t->y[l];
        double d = R_(t, i, i);
        t->y[i] = d != 0 ? v / d : 0;
    }
}

/* A plain start from a residual of norm rn. */
static void dr_fresh(dr_col *t, double rn)
{
    memset(t->H, 0, sizeof(double) * (size_t)(t->m + 1) * t->m);
    memset(t->c, 0, sizeof(double) * (size_t)(t->m + 1));
    memset(t->g, 0, sizeof(double) * (size_t)(t->m + 1));
    t->c[0] = t->g[0] = rn;
    t->nrot = 0;
    t->start = t->steps = 0;
}

/* Orthonormalize the p columns of Q (ld m + 1) in place, classical
 * Gram-Schmidt twice; 0 when a column is (numerically) in the span of the
 * ones before it. */
static int orthonormal(double *Q, int n, int p)
{
    for (int i = 0; i < p; i++) {
        double *q = Q + (size_t)i * n, before = 0, after = 0;
        for (int l = 0; l < n; l++) before += q[l] * q[l];
        for (int pass = 0; pass < 2; pass++)
            for (int u = 0; u < i; u++) {
                const double *v = Q + (size_t)u * n;
                double d = 0;
                for (int l = 0; l < n; l++) d += v[l] * q[l];
                for (int l = 0; l < n; l++) q[l] -= d * v[l];
            }
        for (int l = 0; l < n; l++) after += q[l] * q[l];
        if (!(after > 1e-24 * before) || !(after > 0)) return 0;
        double s = 1 / sqrt(after);
        for (int l = 0; l < n; l++) q[l] *= s;
    }
    return 1;
}

#define DR_WORK(m) ((size_t)3 * (m) * (m) + 12 * (size_t)(m) + 16)

/* The deflated restart of column t after a full cycle of m steps: Q ((m+1) x
 * (kk+1), orthonormal) from the harmonic Ritz vectors of the K smallest
 * values and s = c - Hbar y; then H = Q^T Hbar Q(0:m, 0:kk), c = Q^T s, the
 * leading block rotated.  Returns kk, 0 when the restart must be plain
 * (workspace w: DR_WORK(m) doubles, iw: m ints). */
static int deflate(dr_col *t, int K, double *Q, double *w, int *iw)
{
    const int m = t->m, n1 = m + 1;
    double *G = w, *F = G + (size_t)m * m, *VR = F + (size_t)m * m, *wr = VR + (size_t)m * m, *wi = wr + m,
           *f = wi + m, *s = f + m, *abs_ = s + n1, *tmp = abs_ + m;
    int info = 0, one = 1;
    /* s = c - Hbar y */
    for (int l = 0; l <= m; l++) {
        double v = t->c[l];
        for (int i = 0; i < m; i++) v -= H_(t, l, i) * t->y[i];
        s[l] = v;
    }
    /* f = H_m^{-T} e_m; G = H_m + h(m, m-1)^2 f e_m^T */
    for (int i = 0; i < m; i++)
        for (int l = 0; l < m; l++) F[(size_t)l * m + i] = H_(t, l, i);   /* F = H_m^T */
    memset(f, 0, sizeof(double) * (size_t)m);
    f[m - 1] = 1;
    dgesv_(&m, &one, F, &m, iw, f, &m, &info);
    if (info) return 0;
    const double h2 = H_(t, m, m - 1) * H_(t, m, m - 1);
    for (int i = 0; i < m; i++)
        for (int l = 0; l < m; l++) G[(size_t)i * m + l] = H_(t, l, i) + (i == m - 1 ? h2 * f[l] : 0);
    int lwork = 4 * m;
    dgeev_("N", "V", &m, G, &m, wr, wi, NULL, &one, VR, &m, tmp, &lwork, &info, 1, 1);
    if (info) return 0;
    /* the K smallest |theta|, a complex pair whole (dgeev: columns p, p+1
     * hold its real and imaginary parts, wi[p] > 0) */
    for (int i = 0; i < m; i++) { abs_[i] = hypot(wr[i], wi[i]); iw[i] = 0; }
    int kk = 0;
    while (kk < K) {
        int p = -1;
        for (int i = 0; i < m; i++)
            if (!iw[i] && (p < 0 || abs_[i] < abs_[p])) p = i;
        if (p < 0) break;
        if (wi[p] != 0 && p > 0 && wi[p] < 0) p--;   /* the pair's first column */
        int np = wi[p] != 0 && p + 1 < m ? 2 : 1;
        for (int u = 0; u < np; u++) {
            iw[p + u] = 1;
            double *q = Q + (size_t)kk++ * n1;
            for (int l = 0; l < m; l++) q[l] = VR[(size_t)(p + u) * m + l];
            q[m] = 0;
        }
    }
    memcpy(Q + (size_t)kk * n1, s, sizeof(double) * (size_t)n1);
    if (!kk || !orthonormal(Q, n1, kk + 1)) return 0;
    /* Hn = Q^T Hbar Q(0:m, 0:kk): HQ = Hbar Q(0:m, 0:kk) first ((m+1) x kk, in F) */
    double *HQ = F;
    for (int i = 0; i < kk; i++)
        for (int l = 0; l <= m; l++) {
            double v = 0;
            for (int u = 0; u < m; u++) v += H_(t, l, u) * Q[(size_t)i * n1 + u];
            HQ[(size_t)i * n1 + l] = v;
        }
    memset(t->H, 0, sizeof(double) * (size_t)n1 * m);
    memset(t->c, 0, sizeof(double) * (size_t)n1);
    for (int i = 0; i < kk; i++)
        for (int r = 0; r <= kk; r++) {
            double v = 0;
            for (int l = 0; l <= m; l++) v += Q[(size_t)r * n1 + l] * HQ[(size_t)i * n1 + l];
            H_(t, r, i) = v;
        }
    for (int r = 0; r <= kk; r++) {
        double v = 0;
        for (int l = 0; l <= m; l++) v += Q[(size_t)r * n1 + l] * s[l];
        t->c[r] = v;
    }
    memcpy(t->g, t->c, sizeof(double) * (size_t)n1);
    t->nrot = 0;
    for (int i = 0; i < kk; i++) rot_column(t, i, kk);
    t->start = t->steps = kk;
    return kk;
}

void bsr_krecycle_free(const bsr_kops *o, bsr_krecycle *r)
{
    if (r->V)
        for (int l = 0; l < r->top; l++)
            if (r->V[l]) o->vfree(o, r->V[l]);
    if (r->Z)
        for (int l = 0; l + 1 < r->top; l++)
            if (r->Z[l]) o->vfree(o, r->Z[l]);
    free(r->V);
    free(r->Z);
    free(r->H);
    memset(r, 0, sizeof *r);
}

/* At a cycle's end: the deflated bases (V[0..kk], H's leading (kk + 1) x kk
 * block) of the columns of was that stopped in it having started it
 * deflated, kept in r.  When every column has stopped and none was kept
 * before, r takes V's multivectors (V's entries become NULL); otherwise
 * those columns are copied into r's own K + 2 multivectors (made at the
 * first column that stops while others go on: a later cycle's restart
 * would overwrite its basis); a flexible solve's Z[0..kk-1] (Z given) alike.
 * BSR_ERR_NOMEM where an allocation fails. */
static bsr_status keep_space(const bsr_kops *o, const dr_col *col, const unsigned char *was,
                             const unsigned char *active, int K, bsr_multivec **V, bsr_multivec **Z,
                             bsr_krecycle *r)
{
    const int k = o->k, ld = K + 2, last = !memchr(active, 1, (size_t)k);
    unsigned char on[BSR_KMAX];
    int any = 0, taken = 0;
    for (int j = 0; j < k; j++) any |= on[j] = was[j] && !active[j] && col[j].start > 0 && !(r->H && r->kk[j]);
    if (!any) return BSR_OK;
    if (!r->H) {
        r->H = bsr_calloc((size_t)k * ld * (ld - 1), sizeof(double), "GMRES-DR space");
        r->V = bsr_calloc((size_t)ld, sizeof *r->V, "GMRES-DR space");
        r->Z = Z ? bsr_calloc((size_t)ld, sizeof *r->Z, "GMRES-DR space") : NULL;
        if (!r->H || !r->V || (Z && !r->Z)) {
            free(r->V);
            free(r->H);
            free(r->Z);
            r->V = r->Z = NULL;
            r->H = NULL;
            return BSR_ERR_NOMEM;
        }
        r->k = k;
        r->ld = ld;
        if (last) {   /* every column's basis still in V: taken as it is */
            for (int j = 0; j < k; j++)
                if (on[j] && col[j].start + 1 > r->top) r->top = col[j].start + 1;
            for (int l = 0; l < r->top; l++) {
                r->V[l] = V[l];
                V[l] = NULL;
                if (Z && l + 1 < r->top) {
                    r->Z[l] = Z[l];
                    Z[l] = NULL;
                }
            }
            taken = 1;
        } else {
            r->top = ld;
            for (int l = 0; l < ld; l++) BSR_TRY(o->vnew(o, &r->V[l]));
            for (int l = 0; Z && l + 1 < ld; l++) BSR_TRY(o->vnew(o, &r->Z[l]));
        }
    }
    for (int j = 0; j < k && !taken; j++) {
        if (!on[j]) continue;
        unsigned char mj[BSR_KMAX] = {0};
        mj[j] = 1;
        for (int l = 0; l <= col[j].start; l++) BSR_TRY(o->copy(o, r->V[l], V[l], mj));
        for (int l = 0; Z && l < col[j].start; l++) BSR_TRY(o->copy(o, r->Z[l], Z[l], mj));
    }
    for (int j = 0; j < k; j++) {
        if (!on[j]) continue;
        const dr_col *t = &col[j];
        r->kk[j] = t->start;
        for (int i = 0; i < t->start; i++)
            for (int l = 0; l <= t->start; l++) r->H[(size_t)j * ld * (ld - 1) + (size_t)i * ld + l] = H_(t, l, i);
    }
    return BSR_OK;
}

/* A kept space in GCRO's terms, per column j: C = V_kk+1 Qh orthonormal
 * and A M^{-1} (V_kk Rh^{-1}) = C, from Hbar = Qh Rh (its thin QR); a cycle
 * on the operator (I - C C^T) A M^{-1} records Bm = C^T A M^{-1} V_m, so
 * that A M^{-1} (V_m - V_kk Rh^{-1} Bm) = V_m+1 Hbar_m: the space's
 * directions stay out of every cycle instead of being found again (Parks
 * et al., SIAM J. Sci. Comput. 28, 2006, with the space held fixed). */
typedef struct {
    int kk;                  /* 0: the column is not augmented */
    double *Qh, *Rh, *Bm;    /* (kk + 1) x kk, kk x kk, kk x m; leading dimension ld */
} aug_col;

/* Column j's Qh, Rh from P's Hbar (Gram-Schmidt twice); kk = 0 where Hbar
 * is numerically rank deficient. */
static void aug_init(const bsr_krecycle *P, int j, aug_col *a)
{
    const int ld = P->ld, kk = j < P->k ? P->kk[j] : 0;
    const double *H = P->H + (size_t)j * ld * (ld - 1);
    a->kk = 0;
    for (int i = 0; i < kk; i++) {
        double *q = a->Qh + (size_t)i * ld;
        for (int l = 0; l <= kk; l++) q[l] = H[(size_t)i * ld + l];
        double h0 = 0;
        for (int l = 0; l <= kk; l++) h0 += q[l] * q[l];
        for (int u = 0; u < i; u++) a->Rh[(size_t)i * ld + u] = 0;
        for (int pass = 0; pass < 2; pass++)
            for (int u = 0; u < i; u++) {
                const double *qu = a->Qh + (size_t)u * ld;
                double d = 0;
                for (int l = 0; l <= kk; l++) d += qu[l] * q[l];
                for (int l = 0; l <= kk; l++) q[l] -= d * qu[l];
                a->Rh[(size_t)i * ld + u] += d;
            }
        double nq = 0;
        for (int l = 0; l <= kk; l++) nq += q[l] * q[l];
        if (!(nq > 1e-24 * h0) || !(nq > 0)) return;
        nq = sqrt(nq);
        for (int l = 0; l <= kk; l++) q[l] /= nq;
        a->Rh[(size_t)i * ld + i] = nq;
    }
    a->kk = kk;
}

/* Per column of on: t (ld) = Qh^T p, p column j of c ((top) k, l-major);
 * then c's column j becomes q = Qh t, the combination of V_kk+1 that C t
 * is (0 past kk). */
static void aug_coeffs(const aug_col *aug, const unsigned char *on, int k, int ld, int top, double *c, double *t)
{
    for (int j = 0; j < k; j++) {
        if (!on[j]) continue;
        const aug_col *a = &aug[j];
        double *tj = t + (size_t)j * ld;
        for (int i = 0; i < a->kk; i++) {
            double v = 0;
            for (int l = 0; l <= a->kk; l++) v += a->Qh[(size_t)i * ld + l] * c[(size_t)l * k + j];
            tj[i] = v;
        }
        for (int l = 0; l < top; l++) {
            double v = 0;
            for (int i = 0; i < a->kk && l <= a->kk; i++) v += a->Qh[(size_t)i * ld + l] * tj[i];
            c[(size_t)l * k + j] = v;
        }
    }
}

/* W += sign sum_l c[l k + j] V[l] in the columns of on (c l-major over m
 * vectors), one combination (bsr_kops_lincomb) over the l whose
 * coefficients are not all zero there: the bits of an axpby a term, the
 * zero terms skipped. */
static bsr_status comb(const bsr_kops *o, bsr_multivec *W, double sign, int m, bsr_multivec *const *V, const double *c,
                       const unsigned char *on)
{
    const int k = o->k;
    bsr_multivec **Vs = bsr_malloc(sizeof *Vs * (size_t)(m ? m : 1), "vector combination");
    double *cs = bsr_malloc(sizeof(double) * (size_t)(m ? m : 1) * k, "vector combination");
    bsr_status st = Vs && cs ? BSR_OK : BSR_ERR_NOMEM;
    int mu = 0;
    for (int l = 0; l < m && !st; l++) {
        int used = 0;
        for (int j = 0; j < k; j++) {
            cs[(size_t)mu * k + j] = !on || on[j] ? sign * c[(size_t)l * k + j] : 0;
            used |= cs[(size_t)mu * k + j] != 0;
        }
        if (used) Vs[mu++] = V[l];
    }
    if (!st && mu) st = bsr_kops_lincomb(o, W, NULL, mu, Vs, cs, on);
    free(Vs);
    free(cs);
    return st;
}

/* W (column j) -= C C^T W in the columns of on: Bm's column i (when i >= 0)
 * takes C^T W.  c: (P->top) k doubles, t: k ld. */
static bsr_status aug_orth(const bsr_kops *o, const bsr_krecycle *P, aug_col *aug, const unsigned char *on, int i,
                           bsr_multivec *W, double *c, double *t)
{
    BSR_TRY(bsr_kops_dotm(o, W, P->V, P->top, c));
    aug_coeffs(aug, on, o->k, P->ld, P->top, c, t);
    for (int j = 0; j < o->k && i >= 0; j++)
        if (on[j]) memcpy(aug[j].Bm + (size_t)i * P->ld, t + (size_t)j * P->ld, sizeof(double) * (size_t)aug[j].kk);
    return comb(o, W, -1, P->top, P->V, c, on);
}

/* t (a's first kk entries) = Rh^{-1} t, then column j of c (l-major over
 * top vectors, k columns) V_kk's coefficients: t's, 0 past kk. */
static void aug_rh_solve(const aug_col *a, int ld, int top, int k, int j, double *t, double *c)
{
    for (int i = a->kk - 1; i >= 0; i--) {
        double v = t[i];
        for (int u = i + 1; u < a->kk; u++) v -= a->Rh[(size_t)u * ld + i] * t[u];
        t[i] = v / a->Rh[(size_t)i * ld + i];
    }
    for (int l = 0; l < top; l++) c[(size_t)l * k + j] = l < a->kk ? t[l] : 0;
}

/* The columns of fresh that have a space, their residual W (norms rn)
 * moved off C: X += M^{-1} V_kk Rh^{-1} C^T W (with P's Z: Z Rh^{-1} C^T W),
 * W -= C C^T W (the least residual over the space).  Z, U scratch (Z's other
 * columns untouched). */
static bsr_status aug_start(const bsr_kops *o, const bsr_krecycle *P, aug_col *aug, const unsigned char *fresh,
                            bsr_multivec *W, bsr_multivec *X, bsr_multivec *Z, bsr_multivec *U, double *rn,
                            double *c, double *t)
{
    const int k = o->k, ld = P->ld;
    unsigned char on[BSR_KMAX];
    double one[BSR_KMAX], zero[BSR_KMAX], r2[BSR_KMAX];
    int any = 0;
    for (int j = 0; j < k; j++) {
        one[j] = 1;
        zero[j] = 0;
        any |= on[j] = fresh[j] && aug[j].kk > 0 && rn[j] > 0;
    }
    if (!any) return BSR_OK;
    BSR_TRY(aug_orth(o, P, aug, on, -1, W, c, t));
    /* Z = V_kk Rh^{-1} t */
    for (int j = 0; j < k; j++)
        if (on[j]) aug_rh_solve(&aug[j], ld, P->top, k, j, t + (size_t)j * ld, c);
    if (P->Z) {
        BSR_TRY(comb(o, X, 1, P->top - 1, P->Z, c, on));
    } else {
        BSR_TRY(o->axpby(o, Z, zero, Z, zero, on));
        BSR_TRY(comb(o, Z, 1, P->top, P->V, c, on));
        BSR_TRY(bsr_kops_precond(o, Z, U));
        BSR_TRY(o->axpby(o, X, one, U, one, on));
    }
    BSR_TRY(bsr_kops_norm2(o, W, r2));
    for (int j = 0; j < k; j++)
        if (on[j]) rn[j] = r2[j];
    return BSR_OK;
}

/* A cycle's correction's term on the space, per column of was with a
 * space: c's column j (l-major over P->top) = V_kk's coefficients of
 * Rh^{-1} Bm y (y: column j's steps[j] first entries of y + j ldy), to
 * subtract; t scratch (k ld). */
static void aug_correction(const bsr_krecycle *P, const aug_col *aug, const unsigned char *was, const double *y,
                           int ldy, const int *steps, int k, double *c, double *t)
{
    const int ld = P->ld;
    for (int j = 0; j < k; j++) {
        for (int l = 0; l < P->top; l++) c[(size_t)l * k + j] = 0;
        const aug_col *a = &aug[j];
        if (!was[j] || !a->kk) continue;
        double *tj = t + (size_t)j * ld;
        for (int i = 0; i < a->kk; i++) {
            double v = 0;
            for (int s = 0; s < steps[j]; s++) v += a->Bm[(size_t)s * ld + i] * y[(size_t)j * ldy + s];
            tj[i] = v;
        }
        aug_rh_solve(a, ld, P->top, k, j, tj, c);
    }
}

/* W orthogonalized against V[0..i] in the columns of cyc (CGS2: classical
 * Gram-Schmidt twice, the projections of a pass against the same W; MGS:
 * one at a time); h[l*k + j] = the sum of W_j's projections on V_l. */
static bsr_status gmres_orth(const bsr_kops *o, bsr_orth orth, bsr_multivec *const *V, int i, bsr_multivec *W,
                             const unsigned char *cyc, double *h)
{
    const int k = o->k;
    double one[BSR_KMAX], c[BSR_KMAX], d[BSR_KMAX];
    for (int j = 0; j < k; j++) one[j] = 1;
    for (size_t e = 0; e < (size_t)(i + 1) * k; e++) h[e] = 0;
    if (orth != BSR_ORTH_CGS2) {
        for (int l = 0; l <= i; l++) {
            BSR_TRY(o->dot(o, W, V[l], d));
            for (int j = 0; j < k; j++) { c[j] = -d[j]; h[(size_t)l * k + j] = d[j]; }
            BSR_TRY(o->axpby(o, W, c, V[l], one, cyc));
        }
        return BSR_OK;
    }
    double hh[BSR_KMAX * 64];
    double *hp = (size_t)(i + 1) * k <= sizeof hh / sizeof hh[0] ? hh : NULL, *heap = NULL;
    if (!hp && !(hp = heap = bsr_malloc(sizeof(double) * (size_t)(i + 1) * k, "CGS2"))) return BSR_ERR_NOMEM;
    bsr_status st = BSR_OK;
    for (int pass = 0; pass < 2 && !st; pass++) {
        st = bsr_kops_dotm(o, W, V, i + 1, hp);
        for (size_t e = 0; e < (size_t)(i + 1) * k && !st; e++) {
            h[e] += hp[e];
            hp[e] = -hp[e];
        }
        if (!st) st = bsr_kops_lincomb(o, W, NULL, i + 1, V, hp, cyc);   /* W -= V hp, one pass */
    }
    free(heap);
    return st;
}

/* The end of an Arnoldi step: V_{i+1} = e W in the columns of mask, the
 * iteration counted with the columns' residual estimates rn, and cyc
 * cleared where a column stopped. */
static bsr_status gmres_step_end(const bsr_kops *o, bsr_kstate *ks, bsr_multivec *Vn, const double *e,
                                 const bsr_multivec *W, const unsigned char *mask, const double *rn, unsigned char *cyc)
{
    double zero[BSR_KMAX];
    for (int j = 0; j < o->k; j++) zero[j] = 0;
    BSR_TRY(o->axpby(o, Vn, e, W, zero, mask));
    ks->it++;
    bsr_kstate_update(ks, rn);
    for (int j = 0; j < o->k; j++) cyc[j] = cyc[j] && ks->active[j];
    return BSR_OK;
}

/* The end of a cycle: X += M^{-1} (V y) in the columns of was (column j's y
 * its steps[j] first entries of y + j ldy), less M^{-1} of P's vectors
 * combined by pc where P is given (sub_comb); X += Z y instead where Z (the
 * flexible vectors) is given, less P's Z combined by pc; the columns that converged
 * confirmed by their true residual (bsr_kstate_verify, reopen); where some
 * stay active, W = B - A X and rn its norms, a column whose norm is not
 * finite stopped.  U scratch. */
static bsr_status gmres_cycle_end(const bsr_kops *o, bsr_kstate *ks, bsr_multivec *const *V,
                                  bsr_multivec *const *Z, const double *y, int ldy, const int *steps,
                                  const unsigned char *was, const bsr_multivec *B, bsr_multivec *X, bsr_multivec *W,
                                  bsr_multivec *U, double *rn, unsigned char *reopen, const bsr_krecycle *P,
                                  const double *pc)
{
    const int k = o->k;
    double one[BSR_KMAX], zero[BSR_KMAX];
    int m = 0;
    for (int j = 0; j < k; j++) {
        one[j] = 1;
        zero[j] = 0;
        if (was[j] && steps[j] > m) m = steps[j];
    }
    if (m > 0) {
        double *yc = bsr_malloc(sizeof(double) * (size_t)m * k, "GMRES correction");
        if (!yc) return BSR_ERR_NOMEM;
        for (int l = 0; l < m; l++)
            for (int j = 0; j < k; j++) yc[(size_t)l * k + j] = was[j] && l < steps[j] ? y[(size_t)j * ldy + l] : 0;
        bsr_status s1 = Z ? comb(o, X, 1, m, Z, yc, was) : o->axpby(o, W, zero, W, zero, NULL);
        if (!Z && !s1) s1 = comb(o, W, 1, m, V, yc, was);
        free(yc);
        BSR_TRY(s1);
        if (Z && P) BSR_TRY(comb(o, X, -1, P->top - 1, P->Z, pc, was));
        if (!Z) {
            if (P) BSR_TRY(comb(o, W, -1, P->top, P->V, pc, was));
            BSR_TRY(bsr_kops_precond(o, W, U));
            BSR_TRY(o->axpby(o, X, one, U, one, was));
        }
    }
    bsr_status st = BSR_OK;
    bsr_kstate_verify(o, ks, was, B, X, W, reopen, &st);
    if (st || !bsr_kstate_nactive(ks)) return st;
    BSR_TRY(bsr_kops_residual(o, B, X, W));
    BSR_TRY(bsr_kops_norm2(o, W, rn));
    for (int j = 0; j < k; j++) {
        /* a NaN or Inf that the estimate missed stops the column here */
        if (ks->active[j] && !isfinite(rn[j])) bsr_kstate_stop(ks, j, BSR_DIVERGED_NAN);
    }
    return BSR_OK;
}

/* The method in the units it is given (see bsr_krylov_scaled). */
static bsr_status run_gmres(const bsr_kops *o, const bsr_multivec *B, bsr_multivec *X, bsr_kstate *ks)
{
    const bsr_solver_options *opt = ks->opt;
    /* a given space (ks->proj) is kept out of every cycle of the columns it
     * has, whose restarts are then plain */
    const int flex = opt->flex;   /* flexible: Z = M^{-1} V kept (a given space's too) */
    const bsr_krecycle *P = ks->proj && ks->proj->V && (!flex || ks->proj->Z) && ks->proj->k == o->k &&
                                    ks->proj->ld <= opt->restart + 1
                                ? ks->proj : NULL;
    const int k = o->k, m = opt->restart, K = opt->deflate, n1 = m + 1, nt = K ? K + 2 : 0;
    const int nrmax = (K + 2) * (K + 3) / 2 + m, ld = P ? P->ld : 0;
    bsr_status st = BSR_OK;
    dr_col col[BSR_KMAX];
    memset(col, 0, sizeof col);
    aug_col aug[BSR_KMAX];
    memset(aug, 0, sizeof aug);
    double *ab = P ? bsr_calloc((size_t)k * ld * (2 * ld + m + 1), sizeof(double), "GMRES augmented") : NULL;
    if (P && !ab) return BSR_ERR_NOMEM;
    double *tb = ab;   /* k ld scratch, then per column Qh, Rh, Bm */
    for (int j = 0; P && j < k; j++) {
        aug[j].Qh = ab + (size_t)k * ld + (size_t)j * ld * (2 * ld + m);
        aug[j].Rh = aug[j].Qh + (size_t)ld * ld;
        aug[j].Bm = aug[j].Rh + (size_t)ld * ld;
        aug_init(P, j, &aug[j]);
    }
    bsr_multivec **V = bsr_calloc((size_t)n1 + nt, sizeof *V, "GMRES basis"), **T = V ? V + n1 : NULL;
    /* flexible: Z[0..m-1], then nt for a deflated restart's Z Q */
    bsr_multivec **Z = flex ? bsr_calloc((size_t)m + nt, sizeof *Z, "FGMRES vectors") : NULL, **TZ = Z ? Z + m : NULL;
    bsr_multivec *W = NULL, *U = NULL;
    double *hc = bsr_malloc(sizeof(double) * (size_t)n1 * k, "GMRES projections");
    double *Q = K ? bsr_malloc(sizeof(double) * (size_t)n1 * (K + 2) * k, "GMRES-DR restart") : NULL;
    double *w = K ? bsr_malloc(sizeof(double) * DR_WORK(m), "GMRES-DR eigenproblem") : NULL;
    double *yb = bsr_malloc(sizeof(double) * (size_t)n1 * k, "GMRES corrections");
    int *iw = K ? bsr_malloc(sizeof(int) * (size_t)m, "GMRES-DR pivots") : NULL;
    if (!V || !hc || !yb || (K && (!Q || !w || !iw)) || (flex && !Z)) { st = BSR_ERR_NOMEM; goto done; }
    for (int j = 0; j < k; j++) {
        dr_col *t = &col[j];
        t->m = m;
        t->H = bsr_calloc((size_t)2 * n1 * m + 3 * (size_t)n1 + 2 * (size_t)nrmax, sizeof(double), "GMRES column");
        t->rr = bsr_calloc((size_t)nrmax, sizeof(int), "GMRES rotations");
        if (!t->H || !t->rr) { st = BSR_ERR_NOMEM; goto done; }
        t->R = t->H + (size_t)n1 * m;
        t->c = t->R + (size_t)n1 * m;
        t->g = t->c + n1;
        t->y = t->g + n1;
        t->rc = t->y + n1;
        t->rs = t->rc + nrmax;
    }
    for (int l = 0; l < n1 + nt; l++)
        if ((st = o->vnew(o, &V[l]))) goto done;
    for (int l = 0; Z && l < m + nt; l++)
        if ((st = o->vnew(o, &Z[l]))) goto done;
    if ((st = o->vnew(o, &W)) || (st = o->vnew(o, &U))) goto done;
    double rn[BSR_KMAX], zero[BSR_KMAX], d[BSR_KMAX], e[BSR_KMAX];
    unsigned char was[BSR_KMAX], cyc[BSR_KMAX], part[BSR_KMAX], reopen[BSR_KMAX], fresh[BSR_KMAX], dfl[BSR_KMAX];
    int kk[BSR_KMAX], steps[BSR_KMAX];
    for (int j = 0; j < k; j++) { zero[j] = 0; fresh[j] = 1; }

    /* r = b - A x: the iteration-0 test */
    if ((st = bsr_kops_residual(o, B, X, W)) || (st = bsr_kops_norm2(o, W, rn))) goto done;
    if (!bsr_kstate_update(ks, rn)) goto done;
    for (;;) {
        /* plain starts: V0 = r / ||r||, r first moved off a given space */
        if (P && (st = aug_start(o, P, aug, fresh, W, X, V[1], U, rn, hc, tb))) goto done;
        int lo = m;
        for (int j = 0; j < k; j++) {
            e[j] = 0;
            if (!ks->active[j]) continue;
            if (fresh[j]) {
                dr_fresh(&col[j], rn[j]);
                e[j] = rn[j] > 0 ? 1.0 / rn[j] : 0;
            }
            if (col[j].start < lo) lo = col[j].start;
        }
        if ((st = o->axpby(o, V[0], e, W, zero, fresh))) goto done;
        memcpy(was, ks->active, (size_t)k);
        memcpy(cyc, ks->active, (size_t)k);
        for (int i = lo; i < m && bsr_kstate_nactive(ks) > 0; i++) {
            int any = 0;
            for (int j = 0; j < k; j++) any |= part[j] = cyc[j] && i >= col[j].start;
            if (!any) continue;
            /* W = A M^{-1} V_i (less its part on a given space's C); Z_i =
             * M^{-1} V_i in the cycle's columns (the others' Z_i is a
             * deflated restart's) */
            if ((st = bsr_kops_precond(o, V[i], U)) || (Z && (st = o->copy(o, Z[i], U, part))) ||
                (st = o->matvec(o, U, W)))
                goto done;
            if (P) {
                unsigned char on[BSR_KMAX];
                for (int j = 0; j < k; j++) on[j] = part[j] && aug[j].kk > 0;
                if ((st = aug_orth(o, P, aug, on, i, W, hc, tb))) goto done;
            }
            if ((st = gmres_orth(o, opt->orth, V, i, W, part, hc))) goto done;
            if ((st = bsr_kops_norm2(o, W, d))) goto done;
            for (int j = 0; j < k; j++) {
                e[j] = 0;
                if (!part[j]) continue;
                dr_col *t = &col[j];
                for (int l = 0; l <= i; l++) H_(t, l, i) = hc[(size_t)l * k + j];
                H_(t, i + 1, i) = d[j];
                e[j] = d[j] > 0 ? 1.0 / d[j] : 0; /* d = 0: happy breakdown, the residual below is 0 */
                rn[j] = rot_column(t, i, i + 1);
                t->steps = i + 1;
            }
            if ((st = gmres_step_end(o, ks, V[i + 1], e, W, part, rn, cyc))) goto done;
        }
        /* x += M^{-1} (V y) per column, with its own number of steps; the
         * next cycle starts from the true residual */
        for (int j = 0; j < k; j++) {
            steps[j] = 0;
            if (!was[j]) continue;
            dr_backsolve(&col[j], col[j].steps);
            memcpy(yb + (size_t)j * n1, col[j].y, sizeof(double) * (size_t)n1);
            steps[j] = col[j].steps;
        }
        if (P) aug_correction(P, aug, was, yb, n1, steps, k, hc, tb);
        if ((st = gmres_cycle_end(o, ks, V, Z, yb, n1, steps, was, B, X, W, U, rn, reopen, P, hc))) goto done;
        if (K && ks->keep && (st = keep_space(o, col, was, ks->active, K, V, Z, ks->keep))) goto done;
        if (!bsr_kstate_nactive(ks)) break;
        /* the deflated restarts: per column, then its new basis V Q in T, swapped in */
        int top = 0;
        for (int j = 0; j < k; j++) {
            dfl[j] = 0;
            fresh[j] = ks->active[j];
            if (!K || !ks->active[j] || col[j].steps != m || aug[j].kk) continue;
            kk[j] = deflate(&col[j], K, Q + (size_t)j * n1 * (K + 2), w, iw);
            if (!kk[j]) continue;
            dfl[j] = 1;
            fresh[j] = 0;
            rn[j] = fabs(col[j].g[kk[j]]);
            if (kk[j] + 1 > top) top = kk[j] + 1;
        }
        for (int i = 0; i < top; i++) {
            if ((st = o->axpby(o, T[i], zero, T[i], zero, NULL))) goto done;
            for (int l = 0; l <= m; l++)
                for (int j = 0; j < k; j++)
                    yb[(size_t)l * k + j] = dfl[j] && i <= kk[j] ? Q[(size_t)j * n1 * (K + 2) + (size_t)i * n1 + l] : 0;
            if ((st = comb(o, T[i], 1, m + 1, V, yb, dfl))) goto done;
        }
        for (int i = 0; Z && i < top - 1; i++) {   /* Z Q: Q's first kk columns, rows 0..m-1 */
            if ((st = o->axpby(o, TZ[i], zero, TZ[i], zero, NULL))) goto done;
            for (int l = 0; l < m; l++)
                for (int j = 0; j < k; j++)
                    yb[(size_t)l * k + j] = dfl[j] && i < kk[j] ? Q[(size_t)j * n1 * (K + 2) + (size_t)i * n1 + l] : 0;
            if ((st = comb(o, TZ[i], 1, m, Z, yb, dfl))) goto done;
        }
        for (int i = 0; i < top; i++) {
            bsr_multivec *x = V[i];
            V[i] = T[i];
            T[i] = x;
            if (Z && i < top - 1) {
                x = Z[i];
                Z[i] = TZ[i];
                TZ[i] = x;
            }
        }
    }
done:
    if (V)
        for (int l = 0; l < n1 + nt; l++)
            if (V[l]) o->vfree(o, V[l]);
    free(V);
    if (Z)
        for (int l = 0; l < m + nt; l++)
            if (Z[l]) o->vfree(o, Z[l]);
    free(Z);
    if (W) o->vfree(o, W);
    if (U) o->vfree(o, U);
    for (int j = 0; j < k; j++) {
        free(col[j].H);
        free(col[j].rr);
    }
    free(hc);
    free(Q);
    free(w);
    free(yb);
    free(iw);
    free(ab);
    return st;
}

/* The method on columns scaled so that its inner products stay in range. */
bsr_status bsr_krylov_gmres(const bsr_kops *o, const bsr_multivec *B, bsr_multivec *X, bsr_kstate *ks)
{
    return bsr_krylov_scaled(o, B, X, ks, run_gmres);
}
