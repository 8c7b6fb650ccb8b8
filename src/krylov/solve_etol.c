/* SPDX-License-Identifier: BSD-3-Clause */
/* Error control (options.etol): a converged column's relative error estimated
 * by a second solve from its residual, and corrected where it is above the
 * target; the same estimate of a given X (bsr_solver_error_estimate).  The residual is a weak bound on ill-conditioned systems; the
 * estimate's solve, A e = r from zero with the same method and
 * preconditioner, finds the slow modes that r hides (on the generators
 * within a few percent of the true error, bench/RESULTS.md). */
#include "krylov_table.h"
#include <float.h>
#include <math.h>
#include <string.h>

/* A correction must take the estimate under this fraction of the last one
 * for another to follow. */
#define ETOL_PROGRESS 0.5
/* Once a column's x is corrected, its corrections go on until its estimate
 * is under this fraction of etol: a correction that takes the estimate
 * under etol lands just under it (errors of 7.9e-7 and 8.3e-7 under etol
 * 1e-6 at 64k and 1M block rows of the coupled class), and the estimate is
 * itself a few percent off the error.  A first estimate within etol leaves
 * x as it is. */
#define ETOL_ROOM 0.5
/* The estimates' solves together take at most this many times the solve's
 * iterations (each at most as many as the solve): a slow solve's error
 * control at most triples its time. */
#define ETOL_BUDGET 2

/* A later solve on the pattern takes the error its relres predicts (the
 * last estimate's error over relres, times its own) where that is under
 * etol / ETOL_MARGIN, ETOL_REMEASURE - 1 solves in a row at most. */
#define ETOL_MARGIN 10
#define ETOL_REMEASURE 8

/* A solve aims no tighter than this many units of its working precision's
 * rounding: below, its residual is mostly rounding (the floor), and the
 * error is measured instead. */
#define ETOL_AIM_EPS 1000
/* The aim leaves this fraction of room under the prediction's bound (the
 * true residual that predicts is not quite the recurrence's that stops). */
#define ETOL_AIM_ROOM 0.5

/* The next estimate's rtol: the reduction 1 / ask that an estimate ask
 * times the target asks for, between BSR_ETOL_INNER_MIN and BSR_ERREST_RTOL. */
static double inner_rtol(double ask)
{
    const double r = 1 / ask;
    return r < BSR_ETOL_INNER_MIN ? BSR_ETOL_INNER_MIN : r > BSR_ERREST_RTOL ? BSR_ERREST_RTOL : r;
}

/* The estimate's solve options: opt's method and preconditioner to rtol
 * within maxit, no atol, monitor, history, progress or error control. */
static void erest_options(const bsr_solver_options *opt, double rtol, int maxit, bsr_solver_options *io)
{
    *io = *opt;
    io->atol = 0;
    io->etol = 0;
    io->monitor = NULL;
    io->history = 0;
    io->progress = 0;
    io->rtol = rtol;
    io->maxit = maxit;
}

/* One estimate: E solves A E = R from zero by io for the columns of on (the
 * others not at all); est[j] = ||E_j|| / ||X_j|| (||E_j|| where X_j = 0); ic
 * its stats. */
static bsr_status estimate(const bsr_kops *o, const bsr_solver_options *io, const unsigned char *on,
                           const bsr_multivec *R, const bsr_multivec *X, bsr_multivec *E, double *est,
                           bsr_col_stats *ic, const bsr_krecycle *rec)
{
    double rn[BSR_KMAX], xn[BSR_KMAX];
    bsr_kstate ks;
    memset(&ks, 0, sizeof ks);
    memset(ic, 0, sizeof *ic * (size_t)o->k);
    BSR_TRY(o->zero(o, E));
    BSR_TRY(bsr_kops_norm2(o, R, rn));
    bsr_status st = bsr_kstate_init(&ks, io, o->k, rn, ic);
    ks.proj = rec;
    for (int j = 0; !st && j < o->k; j++)
        if (!on[j]) bsr_kstate_stop(&ks, j, BSR_REASON_NONE);
    if (!st) st = bsr_krylov_row_of(io->method)->solve(o, R, E, &ks);
    bsr_kstate_free(&ks);
    if (!st) st = bsr_kops_norm2(o, X, xn);
    if (!st) st = bsr_kops_norm2(o, E, rn);
    for (int j = 0; !st && j < o->k; j++) est[j] = xn[j] > 0 ? rn[j] / xn[j] : rn[j];
    return st;
}

/* An estimate is a lower bound where its solve stopped short of its rtol,
 * and where the column's residual is at the rounding floor: r is mostly
 * rounding then, which the estimate solves for, and it may miss the error
 * (a float solve on the device: 2.9e-7 against 7.5e-6). */
static int estimate_low(const bsr_col_stats *ic, const bsr_col_stats *c)
{
    return !bsr_reason_converged(ic->reason) || c->reason == BSR_CONVERGED_FLOOR;
}

bsr_status bsr_estimate_x(const bsr_kops *o, const bsr_solver_options *opt, const bsr_multivec *B,
                          const bsr_multivec *X, bsr_multivec *R, bsr_col_stats *col)
{
    unsigned char on[BSR_KMAX];
    double est[BSR_KMAX], rn[BSR_KMAX], floor[BSR_KMAX];
    bsr_col_stats ic[BSR_KMAX];
    bsr_solver_options io;
    bsr_multivec *E = NULL;
    memset(on, 1, sizeof on);
    erest_options(opt, BSR_ERREST_RTOL, opt->maxit, &io);
    bsr_status st = bsr_kops_residual(o, B, X, R);
    if (!st) st = bsr_kops_norm2(o, R, rn);
    if (!st) st = bsr_kops_floor(o, B, X, floor);
    if (!st) st = o->vnew(o, &E);
    if (!st) st = estimate(o, &io, on, R, X, E, est, ic, NULL);
    for (int j = 0; !st && j < o->k; j++) {
        col[j].err_est = est[j];
        col[j].err_its = ic[j].iterations;
        col[j].reason = rn[j] > 0 && rn[j] <= floor[j] ? BSR_CONVERGED_FLOOR : ic[j].reason;
        col[j].err_low = estimate_low(&ic[j], &col[j]);
    }
    if (E) o->vfree(o, E);
    return st;
}

/* 1 when every converged column's error is predicted from amp, the
 * amplification the last estimate measured (err_est, err_predicted; a
 * prediction more in *since), 0 when an estimate's solve must run. */
static int predicted(double amp, int *since, double etol, bsr_col_stats *col, int k)
{
    if (!(amp > 0) || *since >= ETOL_REMEASURE - 1) return 0;
    for (int j = 0; j < k; j++)
        if (bsr_reason_converged(col[j].reason) && !(amp * col[j].relres * ETOL_MARGIN <= etol)) return 0;
    for (int j = 0; j < k; j++)
        if (bsr_reason_converged(col[j].reason)) {
            col[j].err_est = amp * col[j].relres;
            col[j].err_predicted = 1;
        }
    ++*since;
    return 1;
}

double bsr_etol_aim(double amp, double meas, int since, double etol, const bsr_solver_options *opt)
{
    const double eps = opt->precision == BSR_FLOAT ? FLT_EPSILON : DBL_EPSILON;
    const double bound = amp > 0 ? etol / (ETOL_MARGIN * amp) : 0;   /* the residual that predicts etol / 10 */
    const double aim = ETOL_AIM_ROOM * bound;
    return meas * ETOL_MARGIN > etol && bound < opt->rtol && aim >= ETOL_AIM_EPS * eps &&
                   since < ETOL_REMEASURE - 1 ? aim : 0;
}

bsr_status bsr_solve_etol(const bsr_kops *o, const bsr_solver_options *opt, double etol, const bsr_multivec *B,
                          bsr_multivec *X, bsr_multivec *R, bsr_col_stats *col, double *amp, double *meas,
                          int *since, const bsr_krecycle *rec)
{
    if (predicted(*amp, since, etol, col, o->k)) return BSR_OK;
    *since = 0;
    const int k = o->k;
    unsigned char on[BSR_KMAX], fix[BSR_KMAX], last_of_x[BSR_KMAX];
    double est[BSR_KMAX], rn[BSR_KMAX], one[BSR_KMAX], last[BSR_KMAX];
    bsr_col_stats ic[BSR_KMAX];
    bsr_solver_options io;
    int its = 20;                   /* as many iterations as the solve took, at least 20 */
    for (int j = 0; j < k; j++) {
        on[j] = bsr_reason_converged(col[j].reason);
        last_of_x[j] = 0;
        one[j] = 1;
        last[j] = INFINITY;
        if (col[j].iterations > its) its = col[j].iterations;
    }
    int left = ETOL_BUDGET * its;   /* the estimates' solves' iterations, all rounds together */
    erest_options(opt, BSR_ERREST_RTOL, its, &io);
    *amp = 0;
    *meas = 0;
    int low = 0;   /* a first estimate is a lower bound: nothing to predict from */
    bsr_multivec *E = NULL;
    bsr_status st = o->vnew(o, &E);
    for (int round = 0; !st && left > 0 && memchr(on, 1, (size_t)k); round++) {
        io.maxit = its < left ? its : left;
        if ((st = estimate(o, &io, on, R, X, E, est, ic, rec))) break;
        int most = 0;
        for (int j = 0; j < k; j++)
            if (on[j] && ic[j].iterations > most) most = ic[j].iterations;
        left -= most;
        double ask = 0;   /* the largest est / (ETOL_ROOM etol) of the columns corrected */
        for (int j = 0; j < k; j++) {
            fix[j] = 0;
            if (!on[j]) continue;
            bsr_col_stats *c = &col[j];
            c->err_its += ic[j].iterations;
            c->err_est = est[j];
            c->err_low = estimate_low(&ic[j], c);
            if (round == 0 && c->relres > 0 && c->err_est / c->relres > *amp) *amp = c->err_est / c->relres;
            if (round == 0 && c->err_est > *meas) *meas = c->err_est;
            if (round == 0 && c->err_low) low = 1;
            /* within etol (once corrected, within ETOL_ROOM etol): x stays; short of
             * its rtol: e is no correction to trust; the last correction did not halve
             * the estimate: the working precision's rounding (or the estimate's)
             * decides the error now */
            if (!(c->err_est > (round ? ETOL_ROOM * etol : etol)) || c->err_low || round == BSR_ETOL_ROUNDS ||
                !isfinite(c->err_est) || !(c->err_est < ETOL_PROGRESS * last[j])) {
                on[j] = 0;
                last_of_x[j] = 1;   /* no correction follows: the estimate is of the x returned */
                continue;
            }
            last[j] = c->err_est;
            fix[j] = 1;
            c->err_rounds++;
            if (c->err_est / (ETOL_ROOM * etol) > ask) ask = c->err_est / (ETOL_ROOM * etol);
        }
        if (ask == 0) break;
        /* x += e: its residual is e's, at most io.rtol r's */
        if ((st = o->axpby(o, X, one, E, one, fix)) || (st = bsr_kops_residual(o, B, X, R)) ||
            (st = bsr_kops_norm2(o, R, rn)))
            break;
        for (int j = 0; j < k; j++)
            if (fix[j]) bsr_col_residual(&col[j], rn[j]);
        io.rtol = inner_rtol(ask);
    }
    if (E) o->vfree(o, E);
    if (low || st) *amp = *meas = 0;
    return st ? st : bsr_etol_verdict(col, last_of_x, etol, k);
}

bsr_status bsr_etol_verdict(bsr_col_stats *col, const unsigned char *last_of_x, double etol, int k)
{
    int bad = -1;
    for (int j = 0; j < k; j++)
        /* (a non-finite estimate: the estimate failed, not x) */
        if (last_of_x[j] && bsr_reason_converged(col[j].reason) && !col[j].err_low && isfinite(col[j].err_est) &&
            col[j].err_est > etol && col[j].err_est > BSR_ETOL_FAIL) {
            col[j].reason = BSR_DIVERGED_INACCURATE;
            if (bad < 0) bad = j;
        }
    if (bad < 0) return BSR_OK;
    const bsr_col_stats *c = &col[bad];
    return bsr_error(BSR_ERR_NOCONV, "bsr_solver_solve: column %d reached its residual tolerance (relres %.3e, %d "
                     "iterations) but its estimated error %.2e (%d correction(s)) stays over etol = %g and %g: x is "
                     "no solution", bad, c->relres, c->iterations, c->err_est, c->err_rounds, etol, BSR_ETOL_FAIL);
}
