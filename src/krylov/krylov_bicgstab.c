/* SPDX-License-Identifier: BSD-3-Clause */
/* Right-preconditioned BiCGStab for k right-hand sides at once.
 * Each half-step does ONE SpMM and ONE preconditioner application on all k
 * columns; the scalars (rho, alpha, omega, beta) are per column; columns that
 * have converged or stopped are masked out of every vector update.  With
 * right preconditioning (A M^{-1} u = b, x = M^{-1} u) the recurrence residual
 * is that of the original system, so the stopping test needs no extra work; a
 * converged column's true residual is still recomputed once, and a column whose
 * recurrence drifted is restarted from its true residual.  Breakdowns
 * (rho = (rhat, r) ~ 0, (rhat, v) ~ 0, omega ~ 0, any of them not finite, or
 * a residual that stopped moving) restart the column from its true residual,
 * at most max_restarts times; then it stops as a breakdown. */
#include "krylov_table.h"
#include <math.h>
#include <string.h>

#define BD_EPS 1e-13 /* relative size below which an inner product counts as a breakdown */
/* The least |cos(t, s)| = |(t,s)| / (||t|| ||s||) the omega step keeps: below
 * it the minimal-residual omega = (t,s)/(t,t) is small, and the next steps'
 * BiCG coefficients, divided by omega, lose their accuracy, so that
 * convection-dominated systems with complex spectra stagnate or break down;
 * omega is enlarged by KAPPA / |cos| then (Sleijpen and van der Vorst,
 * Numer. Algorithms 10, 1995; IDR(s)'s rule, krylov_idr.c).  On the CPU
 * backend: rotconv3d:30,5 with ILU2 259 -> 132 iterations, rotconv3d:20,4
 * and 24,4 with ILU(0) breakdowns -> converged; elliptic and symmetric
 * systems 0-40% more (bench/RESULTS.md, "BiCGStab's omega"). */
#define KAPPA 0.7
/* A column whose residual norm changes by at most STALL_TOL relatively in
 * STALL_RUN successive steps no longer moves: its Krylov space stopped
 * growing in floating point (e.g. a preconditioner with regularized zero
 * pivots makes A M^{-1} numerically rank one), which no inner-product test
 * sees; it is handled as a breakdown. */
#define STALL_TOL 1e-12
#define STALL_RUN 3

enum { R, RHAT, P, V, PHAT, S, SHAT, T, NV };
typedef struct { bsr_multivec *r, *rhat, *p, *v; } vecs;

/* Reset the columns of mask: r is their true residual already; rhat = r,
 * p = v = 0, rho = alpha = omega = 1. */
static bsr_status reset_cols(const bsr_kops *o, vecs *w, const unsigned char *mask, double *rho,
                             double *alpha, double *omega, double *zero)
{
    BSR_TRY(o->copy(o, w->rhat, w->r, mask));
    BSR_TRY(o->axpby(o, w->p, zero, w->r, zero, mask));
    BSR_TRY(o->axpby(o, w->v, zero, w->r, zero, mask));
    for (int j = 0; j < o->k; j++)
        if (mask[j]) rho[j] = alpha[j] = omega[j] = 1.0;
    return BSR_OK;
}

/* The method in the units it is given (see bsr_krylov_scaled). */
static bsr_status run_bicgstab(const bsr_kops *o, const bsr_multivec *B, bsr_multivec *X,
                               bsr_kstate *ks)
{
    int k = o->k;
    bsr_status st = BSR_OK;
    bsr_kwork wk;
    if ((st = bsr_kwork_new(o, NV, 16, 4, "BiCGStab workspace", &wk))) goto done;
    bsr_multivec **all = wk.v;
    vecs w = {all[R], all[RHAT], all[P], all[V]};
    bsr_multivec *phat = all[PHAT], *s = all[S], *shat = all[SHAT], *t = all[T];
    double *rho = wk.sc, *alpha = wk.sc + k, *omega = wk.sc + 2 * k, *beta = wk.sc + 3 * k, *d1 = wk.sc + 4 * k,
           *d2 = wk.sc + 5 * k, *rn = wk.sc + 6 * k, *sn = wk.sc + 7 * k, *one = wk.sc + 8 * k,
           *zero = wk.sc + 9 * k, *c1 = wk.sc + 10 * k, *c2 = wk.sc + 11 * k, *c3 = wk.sc + 12 * k,
           *rhatn = wk.sc + 13 * k, *prevn = wk.sc + 14 * k, *still = wk.sc + 15 * k;
    unsigned char *half = wk.m, *rest = wk.m + k, *was = wk.m + 2 * k, *bd = wk.m + 3 * k;
    for (int j = 0; j < k; j++) { one[j] = 1; zero[j] = 0; prevn[j] = -1; }

    /* r = b - A x, and the iteration-0 test (x0 may already solve it) */
    if ((st = bsr_kops_residual(o, B, X, w.r)) || (st = bsr_kops_norm2(o, w.r, rn))) goto done;
    if (!bsr_kstate_update(ks, rn)) goto done;
    memset(bd, 1, (size_t)k);
    if ((st = reset_cols(o, &w, bd, rho, alpha, omega, zero))) goto done;
    memcpy(rhatn, rn, sizeof(double) * (size_t)k);
    int have_d1 = 0;   /* d1 = (rhat, r) already computed with the last residual norm */

    while (bsr_kstate_nactive(ks) > 0) {
        const unsigned char *act = ks->active;
        memcpy(was, act, (size_t)k);
        memset(bd, 0, (size_t)k);
        /* rho_new = (rhat, r); beta = rho_new/rho * alpha/omega */
        if (!have_d1 && (st = o->dot(o, w.rhat, w.r, d1))) goto done;
        have_d1 = 0;
        for (int j = 0; j < k; j++) {
            if (!act[j]) continue;
            if (!(fabs(d1[j]) > BD_EPS * rhatn[j] * rn[j]) || !isfinite(d1[j])) { bd[j] = 1; continue; }
            beta[j] = (d1[j] / rho[j]) * (alpha[j] / omega[j]);
            rho[j] = d1[j];
            c1[j] = -beta[j] * omega[j];
        }
        for (int j = 0; j < k; j++) rest[j] = act[j] && !bd[j];
        /* p = r + beta (p - omega v) */
        if ((st = o->axpbypcz(o, w.p, one, w.r, c1, w.v, beta, rest))) goto done;
        /* phat = M^{-1} p; v = A phat (all columns, one call each) */
        if ((st = bsr_kops_precond(o, w.p, phat)) || (st = o->matvec(o, phat, w.v))) goto done;
        /* (rhat, v) and ||v||^2 in one sweep */
        {
            const bsr_multivec *Xp[2] = {w.rhat, w.v}, *Yp[2] = {w.v, w.v};
            double *const outp[2] = {d2, c2};
            if ((st = bsr_kops_dotp(o, 2, Xp, Yp, outp))) goto done;
        }
        for (int j = 0; j < k; j++) c2[j] = sqrt(c2[j] > 0 ? c2[j] : (c2[j] == c2[j] ? 0 : c2[j]));
        for (int j = 0; j < k; j++) {
            if (!rest[j]) continue;
            if (!(fabs(d2[j]) > BD_EPS * rhatn[j] * c2[j]) || !isfinite(d2[j])) { bd[j] = 1; rest[j] = 0; continue; }
            alpha[j] = rho[j] / d2[j];
            c3[j] = -alpha[j];
        }
        /* s = r - alpha v (c = 0: s write-only); shat = M^{-1} s; t = A shat;
         * (t, s), (t, t) and ||s||^2 in one sweep: the half-step test on ||s||
         * waits for omega's synchronization, not one of its own (the
         * preconditioner and the product run on all columns either way) */
        if ((st = o->axpbypcz(o, s, one, w.r, c3, w.v, zero, rest))) goto done;
        /* the first step tests ||s|| before the second half: a preconditioner
         * that solves the system (a complete LU, the fallback's) converges
         * there, and the apply it would waste is its costliest operation */
        const int sn_first = ks->it == 0;   /* ||s|| known before the second half */
        int early = 0;
        if (sn_first) {
            if ((st = bsr_kops_norm2(o, s, sn))) goto done;
            early = 1;
            for (int j = 0; j < k; j++)
                if (rest[j] && !(sn[j] <= ks->tol[j])) early = 0;
        }
        if (!early) {   /* (a dot of the sweep has the bits of its lone dot: sn as norm2 made it) */
            const bsr_multivec *Xp[3] = {t, t, s}, *Yp[3] = {s, t, s};
            double *const outp[3] = {d1, d2, sn};
            if ((st = bsr_kops_precond(o, s, shat)) || (st = o->matvec(o, shat, t)) ||
                (st = bsr_kops_dotp(o, sn_first ? 2 : 3, Xp, Yp, outp)) ||
                (!sn_first && (st = bsr_kops_norm2_finish(o, s, sn))))
                goto done;
        }
        int nhalf = 0;
        for (int j = 0; j < k; j++) nhalf += half[j] = rest[j] && sn[j] <= ks->tol[j];
        /* most steps no column converges here: no sweep over x for nothing */
        if (nhalf && (st = o->axpby(o, X, alpha, phat, one, half))) goto done;
        for (int j = 0; j < k; j++) if (half[j]) rest[j] = 0;
        /* omega = (t,s)/(t,t), enlarged to keep |cos(t,s)| >= KAPPA */
        for (int j = 0; j < k; j++) {
            if (!rest[j]) continue;
            if (!(d2[j] > 0) || !(fabs(d1[j]) > BD_EPS * sqrt(d2[j]) * sn[j]) || !isfinite(d1[j] / d2[j])) {
                /* omega ~ 0: keep the half step, then restart the column */
                bd[j] = 1;
                omega[j] = 0;
            } else {
                const double cosang = fabs(d1[j]) / (sqrt(d2[j]) * sn[j]);
                omega[j] = d1[j] / d2[j];
                if (cosang < KAPPA) omega[j] *= KAPPA / cosang;
            }
            c3[j] = -omega[j];
        }
        /* x += alpha phat + omega shat; r = s - omega t; ||r||^2 and the next
         * iteration's (rhat, r): one pass where the backend fuses them (none
         * when every column stopped at the early test) */
        if (!early) {
            bsr_multivec *Z2[2] = {X, w.r};
            const double *a2[2] = {alpha, one}, *b2[2] = {omega, c3}, *cz[2] = {one, zero};
            const bsr_multivec *X2[2] = {phat, s}, *Y2[2] = {shat, t};
            if ((st = bsr_kops_upd_dot(o, 2, Z2, a2, X2, b2, Y2, cz, rest, NULL, rn, w.rhat, d1))) goto done;
            have_d1 = 1;
            for (int j = 0; j < k; j++) rn[j] = sqrt(rn[j] > 0 ? rn[j] : (rn[j] == rn[j] ? 0 : rn[j]));
        }
        ks->it++;
        for (int j = 0; j < k; j++) if (half[j]) rn[j] = sn[j];
        for (int j = 0; j < k; j++) {
            if (!rest[j]) continue;
            still[j] = fabs(rn[j] - prevn[j]) <= STALL_TOL * prevn[j] ? still[j] + 1 : 0;
            prevn[j] = rn[j];
            if (still[j] >= STALL_RUN) bd[j] = 1;
        }
        bsr_kstate_update(ks, rn);
        /* converged columns: confirm with the true residual, reopen on drift */
        int nre = bsr_kstate_verify(o, ks, was, B, X, t, half, &st);
        if (st) goto done;
        /* breakdown columns still active restart from their true residual */
        int nbd = bsr_kstate_breakdowns(ks, bd);
        if (nre || nbd) {
            have_d1 = 0;   /* r and rhat change below */
            for (int j = 0; j < k; j++) bd[j] = bd[j] || half[j]; /* half = reopened by verify */
            if ((st = bsr_kops_residual(o, B, X, t)) || (st = o->copy(o, w.r, t, bd)) ||
                (st = reset_cols(o, &w, bd, rho, alpha, omega, zero)) || (st = bsr_kops_norm2(o, w.r, c2)))
                goto done;
            for (int j = 0; j < k; j++)
                if (bd[j]) { rn[j] = rhatn[j] = c2[j]; prevn[j] = -1; still[j] = 0; }
        }
    }
done:
    bsr_kwork_free(o, &wk);
    return st;
}

/* Traffic of one iteration (krylov_bytes.c's model): p = r + beta (p - omega v):
 * r, p, v read, p written (4); (rhat, v), (v, v): 2; s = r - alpha v: 3; (t, s),
 * (t, t), (s, s): 2; x += alpha phat + omega shat: 4; r = s - omega t with
 * (r, r), (rhat, r): 4; two products, two applies.  The start also copies r to
 * rhat and zeroes p and v (4). */
const bsr_krylov_traffic bsr_krylov_bicgstab_model = {2, 2, 19, 4};

/* The method on columns scaled so that its inner products stay in range. */
bsr_status bsr_krylov_bicgstab(const bsr_kops *o, const bsr_multivec *B, bsr_multivec *X,
                               bsr_kstate *ks)
{
    return bsr_krylov_scaled(o, B, X, ks, run_bicgstab);
}
