/* SPDX-License-Identifier: BSD-3-Clause */
/* IDR(s) with bi-orthogonal basis vectors (van Gijzen and Sonneveld 2011,
 * "Algorithm 913: An elegant IDR(s) variant that uses bi-orthogonality
 * properties", ACM TOMS 38(1)), right preconditioned, for k right-hand sides
 * at once.
 *
 * A cycle makes s + 1 products with A M^{-1}: s steps that each build one new
 * direction g_k = A u_k, bi-orthogonal to the first k-1 shadow vectors p_i,
 * and update x and r by it; then one minimal-residual step (the "dimension
 * reduction") with omega chosen to keep |cos(t, r)| >= 0.7 (the paper's
 * kappa).  Every product counts as an iteration (maxit, stats), so IDR(1)
 * makes two per BiCGStab step.  With right preconditioning (x = M^{-1} u) the
 * recurrence residual is that of the original system, checked after every
 * product; a converged column's true residual is recomputed and a column
 * whose recurrence drifted restarts from it (bsr_kstate_verify).
 *
 * The shadow space P is s vectors of a fixed-seed hash of (vector, row), the
 * same in every column (a column's iterates do not depend on k), orthonormal
 * by modified Gram-Schmidt; they are made on the host and uploaded once per
 * solve on the CUDA backend.  The s x s matrix M = P^H G and the small
 * triangular solves live on the host, per column, from reduced inner products.
 *
 * Breakdowns, as in BiCGStab: mu_kk = (p_k, g_k) ~ 0 relative to ||g_k||, a
 * dimension-reduction step with (t, r) ~ 0 or t = 0, any of them not finite,
 * or a residual that stopped moving for more than a cycle.  Such a column
 * leaves the cycle, takes its true residual and starts a fresh cycle (G = U =
 * 0, M = I, omega = 1) at the next cycle's start, at most max_restarts times;
 * then it stops as a breakdown. */
#include "krylov_table.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define SMAX 16          /* the largest s (the table row's range) */
#define BD_EPS 1e-13     /* relative size below which an inner product counts as a breakdown */
#define STALL_TOL 1e-12  /* relative change of ||r|| that counts as not moving */
#define KAPPA 0.7        /* the least |cos(t, r)| of the dimension-reduction step */
#define SHADOW_SEED 0x1D7C0FFEE5EEDull

/* Entry (l, row) of the shadow space before orthonormalization: a hash of
 * the two, uniform in [-1, 1). */
static double shadow_value(int l, int64_t row)
{
    uint64_t z = SHADOW_SEED ^ ((uint64_t)(l + 1) * 0xD1B54A32D192ED03ull) ^ ((uint64_t)row * 0x9E3779B97F4A7C15ull);
    return (double)(bsr_splitmix64(&z) >> 11) * 0x1p-52 - 1.0;
}

/* P = shadow vector l in every column: written into the host data, or made
 * in stage (n x k values) and uploaded for a device vector.  A vector with
 * neither is the placeholder of a layer whose own failure is pending (the
 * distributed solve keeps its ranks in step): left as it is. */
static bsr_status shadow_fill(const bsr_kops *o, bsr_multivec *P, int l, void *stage)
{
    bsr_context *dev = bsr_cuda_multivec_context(P);
    void *h = dev ? stage : P->data;
    if (!h) return BSR_OK;
    for (int64_t i = 0; i < o->n; i++) {
        const double v = shadow_value(l, i);
        for (int j = 0; j < o->k; j++) {
            if (o->prec == BSR_DOUBLE) ((double *)h)[i * o->k + j] = v;
            else ((float *)h)[i * o->k + j] = (float)v;
        }
    }
    if (dev) return bsr_cuda_multivec_xfer(dev, P, h, 1);
    P->where = BSR_ON_HOST;
    return BSR_OK;
}

/* P[0..s) filled and orthonormalized (modified Gram-Schmidt in the backend's
 * inner products, alike in every column); *se = how many came out
 * independent (fewer than s only when A has fewer than s rows): the method
 * runs as IDR(se). */
static bsr_status shadow_space(const bsr_kops *o, bsr_multivec **P, int s, void *stage, int *se, double *d,
                               double *c, const double *one, const double *zero)
{
    *se = 0;
    for (int l = 0; l < s; l++) {
        double n0;
        BSR_TRY(shadow_fill(o, P[l], l, stage));
        BSR_TRY(bsr_kops_norm2(o, P[l], d));
        n0 = d[0];
        for (int i = 0; i < l; i++) {
            BSR_TRY(o->dot(o, P[l], P[i], d));
            for (int j = 0; j < o->k; j++) c[j] = -d[j];
            BSR_TRY(o->axpby(o, P[l], c, P[i], one, NULL));
        }
        BSR_TRY(bsr_kops_norm2(o, P[l], d));
        /* every column holds the same values: column 0 decides for all */
        if (!(d[0] > 1e-8 * n0)) return BSR_OK;
        for (int j = 0; j < o->k; j++) c[j] = 1 / d[j];
        BSR_TRY(o->axpby(o, P[l], zero, P[l], c, NULL));
        *se = l + 1;
    }
    return BSR_OK;
}

/* Per-column state of the cycles. */
typedef struct {
    int s, k;
    double *mu;      /* [s][s][k]: mu(i,l) = (p_i, g_l), lower triangular */
    double *f;       /* [s][k]: P^H r, updated along the cycle */
    double *c;       /* [s][k]: the coefficients of the step */
    double *dm;      /* [s+1][k]: reduced inner products */
} idr_state;
#define MU(w, i, l, j) ((w)->mu[((size_t)(i) * (w)->s + (l)) * (w)->k + (j)])
#define F(w, i, j) ((w)->f[(size_t)(i) * (w)->k + (j)])
#define C(w, i, j) ((w)->c[(size_t)(i) * (w)->k + (j)])

/* Y += sum over i in [lo, hi) of sign * coef_i X_i (coef_i = coef[i*k + j]
 * per column), two terms a call. */
static bsr_status combine(const bsr_kops *o, bsr_multivec *Y, bsr_multivec **Xs, const double *coef, double sign,
                          int lo, int hi, const unsigned char *mask, double *a, double *b, const double *one)
{
    const int k = o->k;
    for (int i = lo; i < hi; i += 2) {
        const double *yc = one;
        for (int j = 0; j < k; j++) a[j] = sign * coef[(size_t)i * k + j];
        if (i + 1 < hi) {
            for (int j = 0; j < k; j++) b[j] = sign * coef[(size_t)(i + 1) * k + j];
            BSR_TRY(o->axpbypcz(o, Y, a, Xs[i], b, Xs[i + 1], yc, mask));
        } else {
            BSR_TRY(o->axpby(o, Y, a, Xs[i], yc, mask));
        }
    }
    return BSR_OK;
}

/* Scalars a column needs: per-column arrays of length k. */
enum { S_OMEGA, S_RN, S_ONE, S_ZERO, S_A, S_B, S_BETA, S_MBETA, S_D, S_TT, S_PREVN, S_STILL, S_GN, NS };

/* After a step: confirm the columns that converged by their true residual
 * (reopening those that drifted), then send the reopened and the broken-down
 * ones (bd, still active, within max_restarts; else stopped as a breakdown)
 * out of the cycle with their true residual in r (park, fresh: reset at the
 * next cycle's start).  T is scratch. */
static bsr_status after_step(const bsr_kops *o, bsr_kstate *ks, const bsr_multivec *B, bsr_multivec *X,
                             bsr_multivec *r, bsr_multivec *T, unsigned char *was, unsigned char *bd,
                             unsigned char *reopen, unsigned char *park, double *sc)
{
    const int k = o->k;
    double *rn = sc + S_RN * k, *d = sc + S_D * k, *prevn = sc + S_PREVN * k, *still = sc + S_STILL * k;
    bsr_status st = BSR_OK;
    int nre = bsr_kstate_verify(o, ks, was, B, X, T, reopen, &st);
    BSR_TRY(st);
    int nbd = bsr_kstate_breakdowns(ks, bd);
    if (!nre && !nbd) return BSR_OK;
    for (int j = 0; j < k; j++) bd[j] = bd[j] || reopen[j];
    BSR_TRY(bsr_kops_residual(o, B, X, T));
    BSR_TRY(o->copy(o, r, T, bd));
    BSR_TRY(bsr_kops_norm2(o, r, d));
    for (int j = 0; j < k; j++)
        if (bd[j]) { rn[j] = d[j]; prevn[j] = -1; still[j] = 0; park[j] = 1; }
    return BSR_OK;
}

/* The residual norms of the columns updated (upd), from their sums of
 * squares in d; a column that stopped moving for more than a cycle is a
 * breakdown. */
static void step_norms(int k, int s, const unsigned char *upd, double *sc, unsigned char *bd)
{
    double *rn = sc + S_RN * k, *d = sc + S_D * k, *prevn = sc + S_PREVN * k, *still = sc + S_STILL * k;
    for (int j = 0; j < k; j++) {
        if (!upd[j]) continue;
        rn[j] = sqrt(d[j] > 0 ? d[j] : (d[j] == d[j] ? 0 : d[j]));
        still[j] = fabs(rn[j] - prevn[j]) <= STALL_TOL * prevn[j] ? still[j] + 1 : 0;
        prevn[j] = rn[j];
        if (still[j] > s + 1) bd[j] = 1;
    }
}

/* The method in the units it is given (see bsr_krylov_scaled). */
static bsr_status run_idr(const bsr_kops *o, const bsr_multivec *B, bsr_multivec *X, bsr_kstate *ks)
{
    const int k = o->k, s = ks->opt->idr_s;
    if (s < 1 || s > SMAX) return bsr_error(BSR_ERR_ARG, "IDR(s): idr_s=%d, expected 1..%d", s, SMAX);
    enum { R, V, VH, T, NW };
    bsr_status st = BSR_OK;
    bsr_multivec *P[SMAX] = {0}, *G[SMAX] = {0}, *U[SMAX] = {0}, *w[NW] = {0};
    void *stage = NULL;   /* the shadow space's host values, for device vectors */
    idr_state q = {s, k, NULL, NULL, NULL, NULL};
    q.mu = bsr_calloc((size_t)k * ((size_t)s * s + 3 * (size_t)s + 1), sizeof(double), "IDR(s) scalars");
    double *sc = bsr_calloc((size_t)NS * k, sizeof(double), "IDR(s) scalars");
    unsigned char *m = bsr_calloc((size_t)6 * k, 1, "IDR(s) masks");
    if (!q.mu || !sc || !m) { st = BSR_ERR_NOMEM; goto done; }
    q.f = q.mu + (size_t)s * s * k;
    q.c = q.f + (size_t)s * k;
    q.dm = q.c + (size_t)s * k;
    for (int i = 0; i < NW; i++)
        if ((st = o->vnew(o, &w[i]))) goto done;
    for (int i = 0; i < s; i++)
        if ((st = o->vnew(o, &P[i])) || (st = o->vnew(o, &G[i])) || (st = o->vnew(o, &U[i]))) goto done;
    /* allocated before the first reduction, as the scalars are: a failure
     * here leaves every rank of a distributed solve before its first one */
    if (bsr_cuda_multivec_context(P[0]) &&
        !(stage = bsr_malloc((size_t)o->n * o->k * bsr_precision_size(o->prec) + 1, "IDR shadow space"))) {
        st = BSR_ERR_NOMEM;
        goto done;
    }
    bsr_multivec *r = w[R], *v = w[V], *vh = w[VH], *t = w[T];
    double *omega = sc + S_OMEGA * k, *rn = sc + S_RN * k, *one = sc + S_ONE * k, *zero = sc + S_ZERO * k,
           *a = sc + S_A * k, *b = sc + S_B * k, *beta = sc + S_BETA * k, *mbeta = sc + S_MBETA * k,
           *d = sc + S_D * k, *tt = sc + S_TT * k, *prevn = sc + S_PREVN * k, *gn = sc + S_GN * k;
    unsigned char *rest = m, *was = m + k, *bd = m + 2 * k, *reopen = m + 3 * k, *park = m + 4 * k,
                  *fresh = m + 5 * k;
    for (int j = 0; j < k; j++) { one[j] = 1; prevn[j] = -1; }

    /* r = b - A x, and the iteration-0 test (x0 may already solve it) */
    if ((st = bsr_kops_residual(o, B, X, r)) || (st = bsr_kops_norm2(o, r, rn))) goto done;
    if (!bsr_kstate_update(ks, rn)) goto done;
    int se;
    st = shadow_space(o, P, s, stage, &se, d, a, one, zero);
    free(stage);
    stage = NULL;
    if (st) goto done;
    if (se == 0) { st = bsr_error(BSR_ERR_INTERNAL, "IDR(s): no shadow vector (A has no rows)"); goto done; }
    memset(park, 1, (size_t)k);

    while (bsr_kstate_nactive(ks) > 0) {
        /* cycle start: the columns that (re)start take G = U = 0, M = I, omega = 1 */
        int nfresh = 0;
        for (int j = 0; j < k; j++) nfresh += fresh[j] = park[j] && ks->active[j];
        memset(park, 0, (size_t)k);
        if (nfresh) {
            for (int l = 0; l < se; l++)
                if ((st = o->axpby(o, G[l], zero, G[l], zero, fresh)) || (st = o->axpby(o, U[l], zero, U[l], zero, fresh)))
                    goto done;
            for (int j = 0; j < k; j++) {
                if (!fresh[j]) continue;
                omega[j] = 1;
                for (int i = 0; i < se; i++)
                    for (int l = 0; l < se; l++) MU(&q, i, l, j) = i == l;
            }
        }
        /* f = P^H r */
        if ((st = bsr_kops_dotm(o, r, P, se, q.f))) goto done;
        for (int kk = 0; kk < se && bsr_kstate_nactive(ks) > 0; kk++) {
            int nrest = 0;
            for (int j = 0; j < k; j++) nrest += rest[j] = ks->active[j] && !park[j];
            if (!nrest) break;
            memcpy(was, ks->active, (size_t)k);
            memset(bd, 0, (size_t)k);
            /* c = M(kk:, kk:)^{-1} f(kk:), lower triangular */
            for (int j = 0; j < k; j++) {
                if (!rest[j]) continue;
                for (int i = kk; i < se; i++) {
                    double x = F(&q, i, j);
                    for (int l = kk; l < i; l++) x -= MU(&q, i, l, j) * C(&q, l, j);
                    C(&q, i, j) = x / MU(&q, i, i, j);
                }
            }
            /* v = r - sum_i c_i g_i; vh = M^{-1} v; u_kk = omega vh + sum_i c_i u_i */
            for (int j = 0; j < k; j++) a[j] = -C(&q, kk, j);
            if ((st = o->axpbypcz(o, v, one, r, a, G[kk], zero, rest)) ||
                (st = combine(o, v, G, q.c, -1, kk + 1, se, rest, a, b, one)) ||
                (st = bsr_kops_precond(o, v, vh)))
                goto done;
            for (int j = 0; j < k; j++) a[j] = C(&q, kk, j);
            if ((st = o->axpby(o, U[kk], omega, vh, a, rest)) ||
                (st = combine(o, U[kk], U, q.c, 1, kk + 1, se, rest, a, b, one)) ||
                (st = o->matvec(o, U[kk], G[kk])))
                goto done;
            /* g_kk, u_kk made bi-orthogonal to p_0 .. p_kk-1 */
            for (int i = 0; i < kk; i++) {
                if ((st = o->dot(o, G[kk], P[i], d))) goto done;
                for (int j = 0; j < k; j++) a[j] = rest[j] ? -d[j] / MU(&q, i, i, j) : 0;
                if ((st = o->axpby(o, G[kk], a, G[i], one, rest)) || (st = o->axpby(o, U[kk], a, U[i], one, rest)))
                    goto done;
            }
            /* mu(kk.., kk) = P^H g_kk and ||g_kk||^2 in one reduction */
            {
                bsr_multivec *Y[SMAX + 1];
                for (int i = kk; i < se; i++) Y[i - kk] = P[i];
                Y[se - kk] = G[kk];
                if ((st = bsr_kops_dotm(o, G[kk], Y, se - kk + 1, q.dm))) goto done;
            }
            for (int j = 0; j < k; j++) {
                if (!rest[j]) continue;
                for (int i = kk; i < se; i++) MU(&q, i, kk, j) = q.dm[(size_t)(i - kk) * k + j];
                const double g2 = q.dm[(size_t)(se - kk) * k + j], mkk = MU(&q, kk, kk, j);
                gn[j] = sqrt(g2 > 0 ? g2 : 0);
                beta[j] = F(&q, kk, j) / mkk;
                if (!(fabs(mkk) > BD_EPS * gn[j]) || !isfinite(mkk) || !isfinite(beta[j])) {
                    bd[j] = 1;
                    rest[j] = 0;
                    MU(&q, kk, kk, j) = 1;   /* the column restarts: M = I then */
                    continue;
                }
                mbeta[j] = -beta[j];
                for (int i = kk + 1; i < se; i++) F(&q, i, j) -= beta[j] * MU(&q, i, kk, j);
            }
            /* x += beta u_kk; r -= beta g_kk; ||r||^2: one pass where the backend fuses them */
            {
                bsr_multivec *Z2[2] = {X, r};
                const double *a2[2] = {beta, mbeta}, *b2[2] = {zero, zero}, *c2[2] = {one, one};
                const bsr_multivec *X2[2] = {U[kk], G[kk]}, *Y2[2] = {U[kk], G[kk]};
                if ((st = bsr_kops_upd_dot(o, 2, Z2, a2, X2, b2, Y2, c2, rest, NULL, d, NULL, NULL))) goto done;
            }
            step_norms(k, se, rest, sc, bd);
            ks->it++;
            bsr_kstate_update(ks, rn);
            if ((st = after_step(o, ks, B, X, r, t, was, bd, reopen, park, sc))) goto done;
        }
        /* dimension reduction: vh = M^{-1} r, t = A vh, omega from (t, r), (t, t) */
        int nrest = 0;
        for (int j = 0; j < k; j++) nrest += rest[j] = ks->active[j] && !park[j];
        if (!nrest) continue;
        memcpy(was, ks->active, (size_t)k);
        memset(bd, 0, (size_t)k);
        if ((st = bsr_kops_precond(o, r, vh)) || (st = o->matvec(o, vh, t))) goto done;
        {
            const bsr_multivec *Xp[2] = {t, t}, *Yp[2] = {r, t};
            double *const outp[2] = {d, tt};
            if ((st = bsr_kops_dotp(o, 2, Xp, Yp, outp))) goto done;
        }
        for (int j = 0; j < k; j++) {
            if (!rest[j]) continue;
            const double tn = sqrt(tt[j] > 0 ? tt[j] : 0), rho = d[j] / (tn * rn[j]);
            omega[j] = d[j] / tt[j];
            if (!(tt[j] > 0) || !isfinite(omega[j]) || !(fabs(rho) > BD_EPS)) {
                bd[j] = 1;
                rest[j] = 0;
                omega[j] = 1;
                continue;
            }
            if (fabs(rho) < KAPPA) omega[j] *= KAPPA / fabs(rho);
            mbeta[j] = -omega[j];
        }
        {
            bsr_multivec *Z2[2] = {X, r};
            const double *a2[2] = {omega, mbeta}, *b2[2] = {zero, zero}, *c2[2] = {one, one};
            const bsr_multivec *X2[2] = {vh, t}, *Y2[2] = {vh, t};
            if ((st = bsr_kops_upd_dot(o, 2, Z2, a2, X2, b2, Y2, c2, rest, NULL, d, NULL, NULL))) goto done;
        }
        step_norms(k, se, rest, sc, bd);
        ks->it++;
        bsr_kstate_update(ks, rn);
        if ((st = after_step(o, ks, B, X, r, t, was, bd, reopen, park, sc))) goto done;
    }
done:
    for (int i = 0; i < NW; i++)
        if (w[i]) o->vfree(o, w[i]);
    for (int i = 0; i < s && i < SMAX; i++) {
        if (P[i]) o->vfree(o, P[i]);
        if (G[i]) o->vfree(o, G[i]);
        if (U[i]) o->vfree(o, U[i]);
    }
    free(stage);
    free(q.mu);
    free(sc);
    free(m);
    return st;
}

/* Traffic of one iteration (krylov_bytes.c's model), a cycle's over its s + 1
 * products.  Step kk of s (m = s - kk terms): v = r - sum c_i g_i (m + 2);
 * u_kk = omega vh + sum c_i u_i (m + 2); kk bi-orthogonalizations, each a dot
 * (2) and two updates (6); P^H g_kk with ||g_kk|| (m + 1); x, r updated with
 * ||r|| (6).  The cycle's start P^H r (s + 1); the reduction step's (t, r),
 * (t, t) (2) and x, r updated with ||r|| (6).  The start makes the shadow
 * space: s vectors written, and s (s - 1) / 2 dot + update pairs (5) and s
 * norms and scalings (3). */
int bsr_krylov_idr_traffic(const bsr_solver_options *opt, bsr_krylov_traffic *t)
{
    const double s = opt->idr_s;
    const double cycle = 3 * s * (s + 1) / 2 + 4 * s * (s - 1) + 11 * s + (s + 1) + 8;
    *t = (bsr_krylov_traffic){1, 1, cycle / (s + 1), s + 5 * s * (s - 1) / 2 + 3 * s};
    return 1;
}

/* The method on columns scaled so that its inner products stay in range. */
bsr_status bsr_krylov_idr(const bsr_kops *o, const bsr_multivec *B, bsr_multivec *X, bsr_kstate *ks)
{
    return bsr_krylov_scaled(o, B, X, ks, run_idr);
}
