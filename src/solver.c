/* SPDX-License-Identifier: BSD-3-Clause */
/* The solver object: options, setup (working-precision operator, preconditioner,
 * device uploads), refactor, solve (one Krylov loop for every backend), stats. */
#include "krylov_table.h"
#include "order_ahead.h"
#include <float.h>
#include <limits.h>
#include <stdatomic.h>
#include <math.h>
#include <string.h>
#include <time.h>

const char *bsr_reason_string(bsr_reason r)
{
    switch (r) {
    case BSR_REASON_NONE: return "none";
    case BSR_CONVERGED_RTOL: case BSR_CONVERGED_ATOL: case BSR_CONVERGED_FLOOR: return "converged";
    case BSR_DIVERGED_MAXIT: return "maxit";
    case BSR_DIVERGED_DTOL: return "diverged";
    case BSR_DIVERGED_STAGNATION: return "stagnated";
    case BSR_DIVERGED_BREAKDOWN: return "breakdown";
    case BSR_DIVERGED_INDEFINITE: return "indefinite";
    case BSR_DIVERGED_NAN: return "nan";
    case BSR_DIVERGED_INACCURATE: return "inaccurate";
    }
    return "?";
}

int bsr_reason_converged(bsr_reason r)
{
    return r == BSR_CONVERGED_RTOL || r == BSR_CONVERGED_ATOL || r == BSR_CONVERGED_FLOOR;
}

void bsr_solver_stats_free(bsr_solver_stats *st)
{
    if (!st) return;
    for (int j = 0; st->col && j < st->k; j++) free(st->col[j].history);
    free(st->col);
    memset(st, 0, sizeof *st);
}

bsr_status bsr_solver_create(bsr_solver **out, bsr_context *ctx, const bsr_solver_options *o)
{
    BSR_CHECK_ARG(out, "bsr_solver_create: solver pointer is NULL");
    *out = NULL;
    bsr_threads_default();
    bsr_solver *s = bsr_calloc(1, sizeof *s, "solver");
    if (!s) return BSR_ERR_NOMEM;
    if (o) s->opt = *o; else bsr_solver_options_default(&s->opt);
    bsr_status st = bsr_solver_options_check(&s->opt); /* refused here, not after a long setup */
    if (st) {
        free(s);
        return st;
    }
    s->ctx = ctx;
    s->device = bsr_solver_ctx_is_device(ctx);
    *out = s;
    return BSR_OK;
}

bsr_status bsr_solver_create_str(bsr_solver **out, bsr_context *ctx, const char *options)
{
    bsr_solver_options o;
    bsr_solver_options_default(&o);
    BSR_TRY(bsr_solver_options_parse(&o, options));
    return bsr_solver_create(out, ctx, &o);
}

const bsr_solver_options *bsr_solver_get_options(const bsr_solver *s) { return s ? &s->opt : NULL; }

bsr_status bsr_solver_set_tolerances(bsr_solver *s, double rtol, double atol, int maxit)
{
    BSR_CHECK_ARG(s, "bsr_solver_set_tolerances: solver is NULL");
    /* the option parser's ranges (rtol=, atol=, maxit=) */
    if (!(rtol >= 0 && rtol < 1e300))
        return bsr_error(BSR_ERR_ARG, "bsr_solver_set_tolerances: rtol=%g: expected a number >= 0", rtol);
    if (!(atol >= 0 && atol < 1e300))
        return bsr_error(BSR_ERR_ARG, "bsr_solver_set_tolerances: atol=%g: expected a number >= 0", atol);
    if (maxit < 0)
        return bsr_error(BSR_ERR_ARG, "bsr_solver_set_tolerances: maxit=%d: expected an integer >= 0", maxit);
    /* read by each solve's stopping tests only (bsr_kstate_init, bsr_kstate_update) */
    s->opt.rtol = rtol;
    s->opt.atol = atol;
    s->opt.maxit = maxit;
    return BSR_OK;
}

/* Free what setup built. */
static void teardown(bsr_solver *s)
{
    bsr_vpool_clear(&s->pool);
    bsr_pc_destroy(s->pc);
    bsr_matrix_destroy(s->A_work);
    s->pc = NULL;
    s->A_work = NULL;
    s->A_user = NULL;
}

/* s's ordering made ahead (s may be NULL) let go without waiting: a thread
 * the last solve called off may still be in a METIS call (a whole
 * METIS_NodeND: seconds at 1M rows), and frees itself when it ends. */
static void ahead_drop(bsr_solver *s)
{
    if (!s) return;
    bsr_order_ahead_release(s->ahead);
    s->ahead = NULL;
}

void bsr_solver_destroy(bsr_solver *s)
{
    if (!s) return;
    teardown(s);
    ahead_drop(s);
    free(s);
}

/* The operator in working precision. */
static const bsr_matrix *work_matrix(const bsr_solver *s)
{
    return s->A_work ? s->A_work : s->A_user;
}

/* A block row of the user's A whose largest |a| is nonzero but below the
 * smallest normal number of the precision the preconditioner works in
 * (DBL_MIN, or FLT_MIN when the operator or the preconditioner is float) is
 * badly scaled, not zero: its inverse diagonal block (Jacobi, SSOR, the ILUs'
 * scaling) overflows, and so would x for b = O(1); in float the working copy
 * even holds zeros there.  BSR_ERR_VALUE naming the first such row
 * ("rescale") instead of the preconditioner's "zero" or "singular"; a zero row is left to the preconditioner's own message.  Each row's
 * scan stops at its first value >= tiny: one read per row in practice. */
bsr_status bsr_check_subnormal_rows(const bsr_solver_options *o, const bsr_matrix *A)
{
    if (o->precond == BSR_PC_NONE) return BSR_OK;
    const int single = o->precision == BSR_FLOAT || o->precond_precision == BSR_FLOAT;
    const double tiny = single ? FLT_MIN : DBL_MIN;
    const int bb = A->b * A->b;
    int bad = INT_MAX;
    double badmax = 0;
    #pragma omp parallel for schedule(static) reduction(min : bad) num_threads(bsr_team(A->nbrows, 2048))
    for (int i = 0; i < A->nbrows; i++) {
        double m = 0;
        for (int64_t e = (int64_t)A->rowptr[i] * bb; e < (int64_t)A->rowptr[i + 1] * bb && m < tiny; e++) {
            double v = A->prec == BSR_DOUBLE ? fabs(((const double *)A->val)[e]) : fabs((double)((const float *)A->val)[e]);
            if (v > m) m = v;   /* (a NaN never is: the preconditioner reports it) */
        }
        if (m > 0 && m < tiny && i < bad) bad = i;
    }
    if (bad == INT_MAX) return BSR_OK;
    for (int64_t e = (int64_t)A->rowptr[bad] * bb; e < (int64_t)A->rowptr[bad + 1] * bb; e++) {
        double v = A->prec == BSR_DOUBLE ? fabs(((const double *)A->val)[e]) : fabs((double)((const float *)A->val)[e]);
        if (v > badmax) badmax = v;
    }
    return bsr_error(BSR_ERR_VALUE, "block row %d of A has only subnormal values (|a| < %.3g, the smallest normal "
                     "%s-precision number; the largest is %.3g): rescale A (and b)", bad, tiny,
                     single ? "single" : "double", badmax);
}

/* o->factor and o->cap resolved for the preconditioner of A (working
 * precision) applied on the device (device) or the host: factor=auto is gpu
 * for an ILU (and ic0, the device ILU(0)) on the device unless a matching is
 * applied (mpt, or auto on a weak diagonal); factor=gpu without the device
 * or an ILU, or with a matching, is BSR_ERR_UNSUPPORTED. */
bsr_status bsr_pc_options_resolve(bsr_solver_options *o, int device, const bsr_matrix *A)
{
    const int ilu = BSR_PC_IS_ILU(o->precond);
    const int factored = ilu || (device && o->precond == BSR_PC_IC0);   /* an ILU factors it */
    if (o->factor == BSR_FACTOR_GPU && (!device || !factored))
        return bsr_error(BSR_ERR_UNSUPPORTED, "bsr_solver_setup: factor=gpu needs the CUDA backend and an ILU "
                         "preconditioner (ilu0, ilut, ilu2; ic0 on the device)");
    /* a matching (mpt, or auto on a weak diagonal) is applied by the host
     * factorization: its factors are uploaded, the device refactors none */
    const int match = bsr_match_applies(o, A);
    if (o->factor == BSR_FACTOR_GPU && match)
        return bsr_error(BSR_ERR_UNSUPPORTED, "bsr_solver_setup: factor=gpu takes no matching (match=%s on a "
                         "weak diagonal): use factor=auto or cpu (host factors, applied on the device)",
                         o->match == BSR_MATCH_MPT ? "mpt" : "auto");
    if (o->factor == BSR_FACTOR_AUTO)
        o->factor = device && factored && !match ? BSR_FACTOR_GPU : BSR_FACTOR_CPU;
    if (o->factor == BSR_FACTOR_GPU) o->cap = bsr_cap_resolved(o, 1, A->nbrows);   /* printed as it ran */
    return BSR_OK;
}

/* Nonzero when a refactor of ILUT/ILU2 (or of two levels: the coarse space)
 * is to choose a new pattern (a full setup): pattern=refresh, or auto once
 * the iterations (iters_last) grew past pattern_growth times those on this
 * pattern (iters_base, 0: none yet). */
int bsr_pc_pattern_refresh(const bsr_solver_options *o, int iters_base, int iters_last)
{
    return bsr_pattern_applies(o) && (o->pattern == BSR_SOLVER_PATTERN_REFRESH ||
                         (o->pattern == BSR_SOLVER_PATTERN_AUTO && iters_base > 0 &&
                          iters_last > o->pattern_growth * iters_base));
}

/* What a setup's end leaves: a new pattern, no solve on it yet. */
static void fresh_pattern(bsr_solver *s)
{
    s->pattern_new = 1;
    s->pattern_refreshes = 0;
    s->refactor_failed = 0;
    s->iters_base = s->iters_last = 0;
    s->err_amp = s->err_meas = 0;
    s->aim_off = 0;
}

/* bsr_solver_setup; warm 0 (the fallback's setup, whose solve follows at
 * once): on a device no throwaway product and apply (bsr_solver_device_warm)
 * at setup nor in the solve, whose first product and apply pay their
 * one-time costs instead: a complete LU's apply costs far more than those. */
static bsr_status setup_as(bsr_solver *s, const bsr_matrix *A, int warm)
{
    BSR_CHECK_ARG(s && A, "bsr_solver_setup: NULL argument");
    if (A->nbrows != A->nbcols)
        return bsr_error(BSR_ERR_SIZE, "bsr_solver_setup: matrix is not square (%d x %d blocks)",
                         A->nbrows, A->nbcols);
    double t0 = bsr_now();
    if (s->opt.profile) bsr_prof_enable(1);
    bsr_prof_mark(NULL);
    teardown(s);
    s->fallback_stopped = 0;
    s->setup_fb[0] = 0;
    s->refactor_setup = 0;
    if (s->device) bsr_cuda_mem_bytes(s->ctx, NULL, NULL, 1);   /* this setup's peak from here */
    s->A_user = A;
    s->nbrows = A->nbrows;
    /* once a setup (refactors keep the pattern), not at every solve's look at the fallback */
    s->pattern_sym = s->opt.fallback == 1 && (s->opt.precond == BSR_PC_ILUT || s->opt.precond == BSR_PC_ILU2) &&
                     bsr_complete_known(&s->opt, A);
    bsr_status st = BSR_OK;
    if (A->prec != s->opt.precision && (st = bsr_matrix_copy(A, s->opt.precision, &s->A_work))) goto fail;
    if ((st = bsr_check_subnormal_rows(&s->opt, A))) goto fail;
    if ((st = bsr_pc_options_resolve(&s->opt, s->device, work_matrix(s)))) goto fail;
    double t1 = bsr_now();
    /* a device row uploads A after its host work (A's upload is not
     * overlapped with that work on a second thread: the setup was slower in
     * the median, bench/RESULTS.md) */
    st = bsr_pc_create(work_matrix(s), &s->opt, s->device ? s->ctx : NULL, s->ahead, s->smoother, &s->pc);
    double t2 = bsr_now();
    bsr_prof_mark("setup: preconditioner (rest)");
    if (s->device && (st = bsr_solver_device_operator(s, st))) goto fail;
    if (st) goto fail;
    if (s->device) {
        bsr_prof_mark("setup: upload of A");
        s->warm_k = warm ? 0 : ~(uint64_t)0;   /* a new operator or preconditioner */
        if (warm && (st = bsr_solver_device_warm(s, 1))) goto fail;
        bsr_prof_mark("setup: first product + apply (kernel choice, module loads)");
        bsr_cuda_mem_bytes(s->ctx, &s->dev_held, &s->dev_peak, 0);
    }
    s->setup_s = bsr_now() - t0;
    s->setup_pc_s = t2 - t1 - s->pc->dev_s;
    s->setup_dev_s = s->device ? s->pc->dev_s + (bsr_now() - t2) : 0;
    fresh_pattern(s);
    return BSR_OK;
fail:
    teardown(s);
    return st;
}

typedef struct first_factor first_factor;
static int fallback_stages(bsr_solver *s, const bsr_matrix *A, first_factor *keep, int *stage, char *fb,
                           size_t len, double *secs);
static int fallback_options(const bsr_solver *s, int stage, bsr_solver_options *f);

/* For the next solve's stats: what broke down at a setup or refactor (why),
 * set up again by the fallback, and the seconds it had taken. */
static void note_setup_fallback(bsr_solver *s, const char *what, const char *why, double secs)
{
    snprintf(s->setup_fb, sizeof s->setup_fb, "%s broke down: %s", what, why);
    s->setup_fb_s = secs;
}

/* bsr_solver_setup: where the first factor's setup breaks down (a pivot or
 * a block of the factor not finite, BSR_ERR_SINGULAR: an unstable capped
 * factor of an indefinite system can overflow before any solve) the
 * fallback's stages are set up as after a failed solve; the next solve's
 * stats say so.  A failure of all of them reports the first one's. */
bsr_status bsr_solver_setup(bsr_solver *s, const bsr_matrix *A)
{
    ahead_drop(s);
    const double t0 = bsr_now();
    bsr_status st = setup_as(s, A, 1);
    bsr_solver_options fo;
    if (st != BSR_ERR_SINGULAR || !fallback_options(s, 0, &fo)) return st;
    char why[150], fb[512] = "";   /* (why fits setup_fb after its words) */
    snprintf(why, sizeof why, "%s", bsr_last_error());
    const double first_s = bsr_now() - t0;
    int stage = 0;
    if (!fallback_stages(s, A, NULL, &stage, fb, sizeof fb, NULL))   /* (s->opt as it was; fb names every stage's failure) */
        return bsr_error(st, "%s; the fallback's setups failed too: %s", why, fb);
    note_setup_fallback(s, "the first factor's setup", why, first_s);
    return BSR_OK;
}

/* A refactor whose factor broke down (BSR_ERR_SINGULAR) with the fallback
 * on: A set up again, a new pattern on these values (with the setup's own
 * fallback where that breaks down too); the next solve's stats say so.
 * Where that setup fails, the solves refuse as after any failed refactor,
 * and the next refactor sets its A up.  t0: the refactor's start. */
static bsr_status refactor_fallback(bsr_solver *s, const bsr_matrix *A, double t0)
{
    char why[160];
    snprintf(why, sizeof why, "%s", bsr_last_error());
    const double failed_s = bsr_now() - t0;
    bsr_status st = bsr_solver_setup(s, A);
    if (st) {
        s->refactor_failed = 1;
        s->refactor_setup = 1;
        return bsr_error(st, "bsr_solver_refactor: the factor broke down (%s), and the setup again on these values "
                         "failed: %s", why, bsr_last_error());
    }
    note_setup_fallback(s, "the refactor", why, failed_s);
    return BSR_OK;
}

bsr_status bsr_solver_refactor(bsr_solver *s, const bsr_matrix *A)
{
    BSR_CHECK_ARG(s && A, "bsr_solver_refactor: NULL argument");
    if (!s->pc && s->refactor_setup) return bsr_solver_setup(s, A);   /* refactor_fallback's setup failed */
    if (!s->pc) return bsr_error(BSR_ERR_ARG, "bsr_solver_refactor: call bsr_solver_setup first");
    const bsr_matrix *P = s->A_user;
    if (A->nbrows != P->nbrows || A->b != P->b || A->nnzb != P->nnzb ||
        memcmp(A->rowptr, P->rowptr, sizeof(int) * (size_t)(A->nbrows + 1)) ||
        memcmp(A->colind, P->colind, sizeof(int) * (size_t)A->nnzb))
        return bsr_error(BSR_ERR_STRUCTURE, "bsr_solver_refactor: the pattern differs from the one given to setup");
    /* ILUT/ILU2: a new pattern (pattern=refresh, or auto once the iterations
     * grew past pattern_growth times those on this pattern) is chosen on the
     * setup's ordering where the preconditioner can (pc->refresh), else by a
     * full setup */
    const int fresh = bsr_pc_pattern_refresh(&s->opt, s->iters_base, s->iters_last);
    if (fresh && !s->pc->refresh) {
        int refreshes = s->pattern_refreshes + 1;
        BSR_TRY(bsr_solver_setup(s, A));
        s->pattern_refreshes = refreshes;
        return BSR_OK;
    }
    double t0 = bsr_now();
    bsr_prof_mark(NULL);   /* the refactor's phases from here */
    s->pattern_new = 0;
    s->A_user = A;
    s->refactor_failed = 1;   /* until the operator and every factor hold A's values */
    /* the working copy as setup makes it: from A's precision, not from whether
     * one existed (a failed copy left none) */
    bsr_matrix_destroy(s->A_work);
    s->A_work = NULL;
    if (A->prec != s->opt.precision) BSR_TRY(bsr_matrix_copy(A, s->opt.precision, &s->A_work));
    BSR_TRY(bsr_check_subnormal_rows(&s->opt, A));
    double t1 = bsr_now();
    bsr_status st = fresh ? s->pc->refresh(s->pc, work_matrix(s))
                          : s->pc->refactor ? s->pc->refactor(s->pc, work_matrix(s)) : BSR_OK;
    double t2 = bsr_now();
    if (s->device) st = bsr_solver_device_operator(s, st);
    bsr_solver_options fo;
    if (st == BSR_ERR_SINGULAR && fallback_options(s, 0, &fo)) return refactor_fallback(s, A, t0);
    BSR_TRY(st);
    if (fresh && s->device) {   /* a new factor on the device: warmed as a setup's */
        s->warm_k = 0;
        BSR_TRY(bsr_solver_device_warm(s, 1));
    }
    s->refactor_failed = 0;
    if (fresh) {   /* as after a setup: a new pattern, its own first solve */
        s->pattern_new = 1;
        s->pattern_refreshes++;
        s->iters_base = s->iters_last = 0;
        s->err_amp = s->err_meas = 0;
        s->aim_off = 0;
        s->fallback_stopped = 0;
    }
    s->setup_s = bsr_now() - t0;
    s->setup_pc_s = t2 - t1 - s->pc->dev_s;
    s->setup_dev_s = s->device ? s->pc->dev_s + (bsr_now() - t2) : 0;
    return BSR_OK;
}

void bsr_col_residual(bsr_col_stats *c, double rn)
{
    c->resnorm = rn;
    c->relres = c->bnorm > 0 ? rn / c->bnorm : rn;
}

/* Set the final true residual of every column and choose the return status;
 * a column that ran out of iterations or stagnated at the rounding floor has
 * converged as far as the precision shows (krylov_floor.c), unless x is no
 * answer there (no better than 0, or grown without bound: col.singular). */
static bsr_status finish(const bsr_kops *o, const bsr_kstate *ks, const bsr_multivec *B,
                         const bsr_multivec *X, bsr_multivec *R, bsr_col_stats *col)
{
    double rn[BSR_KMAX], floor[BSR_KMAX];
    BSR_TRY(bsr_kops_residual(o, B, X, R));
    BSR_TRY(bsr_kops_norm2(o, R, rn));
    int short_of_tol = 0;
    for (int j = 0; j < o->k; j++)
        short_of_tol |= col[j].reason == BSR_DIVERGED_MAXIT || col[j].reason == BSR_DIVERGED_STAGNATION;
    if (short_of_tol) BSR_TRY(bsr_kops_floor(o, B, X, floor));
    int bad = -1, breakdown = 0;
    for (int j = 0; j < o->k; j++) {
        bsr_col_residual(&col[j], rn[j]);
        if (col[j].reason == BSR_DIVERGED_MAXIT || col[j].reason == BSR_DIVERGED_STAGNATION)
            bsr_floor_accept(&col[j], ks->tol[j], rn[j], floor[j]);
        if (!bsr_reason_converged(col[j].reason)) {
            if (bad < 0) bad = j;
            breakdown |= col[j].reason == BSR_DIVERGED_BREAKDOWN || col[j].reason == BSR_DIVERGED_INDEFINITE;
        }
    }
    if (bad < 0) return BSR_OK;
    return bsr_error(breakdown ? BSR_ERR_BREAKDOWN : BSR_ERR_NOCONV,
                     "bsr_solver_solve: column %d stopped (%s) after %d iterations at relative residual %.3e%s",
                     bad, bsr_reason_string(col[bad].reason), col[bad].iterations, col[bad].relres,
                     col[bad].singular ? ": system singular or too ill-conditioned in this precision" : "");
}

/* A preconditioner that is A's complete factorization stops the Krylov
 * method after one or two applies, as soon as the residual is below rtol;
 * its rounding (the block LU's, without pivoting, and float factors') may
 * leave it just below, and the error cond(A) times that (coupled3d:40,4,
 * couple=0.4 on the device in METIS's order: relres 6e-9, error 2e-5), where
 * one more apply takes both to the rounding of the double iterate.  So a
 * column whose relative residual is above BSR_EXACT_REFINE rtol gets one
 * step of iterative refinement, X + M^{-1} (B - A X), kept where it lowers
 * the residual (R = B - A X on entry, scratch on return; col's norms follow X). */
#define BSR_EXACT_REFINE 1e-3
static bsr_status refine_exact(const bsr_kops *o, const bsr_solver_options *opt, const bsr_multivec *B,
                               bsr_multivec *X, bsr_multivec *R, bsr_col_stats *col)
{
    unsigned char use[BSR_KMAX];
    int any = 0;
    for (int j = 0; j < o->k; j++) any |= use[j] = col[j].relres > BSR_EXACT_REFINE * opt->rtol;
    if (!any) return BSR_OK;
    bsr_multivec *E = NULL;
    double one[BSR_KMAX], rn[BSR_KMAX];
    for (int j = 0; j < o->k; j++) one[j] = 1;
    bsr_status st = o->vnew(o, &E);
    if (!st) st = bsr_kops_precond(o, R, E);              /* E = M^{-1} (B - A X) */
    if (!st) st = o->axpby(o, E, one, X, one, NULL);      /* E = X + E, the refined X */
    if (!st) st = bsr_kops_residual(o, B, E, R);          /* R = B - A E */
    if (!st) st = bsr_kops_norm2(o, R, rn);
    for (int j = 0; !st && j < o->k; j++) {
        use[j] = use[j] && rn[j] < col[j].resnorm;
        if (use[j]) bsr_col_residual(&col[j], rn[j]);
    }
    if (!st) st = o->copy(o, X, E, use);
    if (E) o->vfree(o, E);
    return st;
}

/* profile=1 on the device: the Krylov phase's least traffic by the model of
 * krylov_bytes.c (iterations = the most any column ran) and the copy
 * bandwidth measured in this process, into the stats; bound / tk is the
 * fraction of the bandwidth bound reached. */
static void profile_bound(bsr_solver *s, const bsr_kops *o, const bsr_col_stats *col, double tk,
                          bsr_solver_stats *stats)
{
    int its = 0;
    for (int j = 0; j < o->k; j++) if (col[j].iterations > its) its = col[j].iterations;
    stats->prof_iter_bytes = bsr_krylov_iter_bytes(o, &s->opt);
    stats->prof_bytes = its * stats->prof_iter_bytes + bsr_krylov_extra_bytes(o, &s->opt);
    stats->prof_krylov_s = tk;
    if (!s->device) return;
    /* 2 x 256 MiB copied 10 times (~2 ms), once per solver */
    if (s->copy_gbs <= 0 && bsr_cuda_copy_gbs(s->ctx, (size_t)1 << 28, 10, &s->copy_gbs) != BSR_OK) s->copy_gbs = 0;
    stats->prof_copy_gbs = s->copy_gbs;
}

static atomic_int ahead_on_cpu;
void bsr_solver_test_order_ahead(int on) { atomic_store(&ahead_on_cpu, on != 0); }

/* The probe's hook (bsr_kstate.ahead), as the probe may stop the first
 * solve: the fallback's first stage's ordering (or, while two levels' or
 * GMRES-DR's stage is probed, the next stage's: s->ahead_opt) started on a second host
 * thread (s->ahead) where it is a nested dissection and the solve runs on
 * the device, whose host thread is idle meanwhile (tests: on the CPU too).
 * METIS's 0.4-0.6 s at 64k block rows then overlap the probe's iterations
 * (from the tenth on, or from where the residual stopped gaining) instead
 * of following them (2.3 s at 216k block rows with b = 5).  Nothing started where it
 * cannot be (the stage's setup then orders as always). */
static void start_ahead(void *data)
{
    bsr_solver *s = data;
    bsr_solver_options fo;
    bsr_ilu_options io;
    if (s->ahead || !(s->device || atomic_load(&ahead_on_cpu))) return;
    if (s->ahead_opt) fo = *s->ahead_opt;
    else if (!fallback_options(s, 0, &fo)) return;
    if (bsr_ilu_options_from_solver(&fo, &io)) { bsr_clear_error(); return; }
    /* a stage factored on the host may permute A by a matching first (the
     * device's takes none): its ordering is then not of A's graph */
    if (fo.factor != BSR_FACTOR_GPU && io.match != BSR_MATCH_NONE) return;
    if (io.order.kind != BSR_ORDER_ND && io.order.kind != BSR_ORDER_METIS_ND) return;
    /* the complete factor under its bound: no ordering where it would pass it */
    const double line = bsr_ilu_complete_line(&io, bsr_matrix_block(s->A_user));
    if (bsr_order_ahead_start(s->A_user, &io.order, line, &s->ahead)) bsr_clear_error();
}

/* One solve of A X = B on the current preconditioner (bsr_solver_solve
 * without the fallback); probe: bsr_kstate.probe (0: none), *probed (may be
 * NULL) set when it stopped a column; estimate: no solve, X's error
 * estimated instead (bsr_estimate_x; X, s's iteration marks and error control
 * as they were). */
static bsr_status solve_once(bsr_solver *s, const bsr_multivec *B, bsr_multivec *X, bsr_solver_stats *stats,
                             int probe, int *probed, int estimate)
{
    if (probed) *probed = 0;
    BSR_CHECK_ARG(s && B && X, "bsr_solver_solve: NULL argument");
    if (stats) memset(stats, 0, sizeof *stats);
    if (s->refactor_failed)
        return bsr_error(BSR_ERR_ARG, "bsr_solver_solve: the last bsr_solver_refactor failed; refactor (or set up) "
                         "again before solving");
    if (!s->pc) return bsr_error(BSR_ERR_ARG, "bsr_solver_solve: call bsr_solver_setup first");
    const bsr_matrix *A = work_matrix(s);
    int64_t n = (int64_t)A->nbrows * A->b;
    int k = B->k;
    if (B->n != n || X->n != n || X->k != k)
        return bsr_error(BSR_ERR_SIZE, "bsr_solver_solve: A has %lld rows; B is %lld x %d, X %lld x %d",
                         (long long)n, (long long)B->n, B->k, (long long)X->n, X->k);
    if (k > BSR_KMAX) return bsr_error(BSR_ERR_UNSUPPORTED, "bsr_solver_solve: %d right-hand sides (at most %d)", k, BSR_KMAX);
    if (X == B) return bsr_error(BSR_ERR_ARG, "bsr_solver_solve: B and X must be different multivectors");
    double t0 = bsr_now();
    bsr_prof_mark(NULL);
    bsr_kops o;
    bsr_status st;
    if (s->device) {
        BSR_TRY(bsr_solver_device_warm(s, k));
        bsr_prof_mark("solve: first product + apply with k columns (once a k)");
        BSR_TRY(bsr_kops_cuda(&o, s->ctx, A, s->pc, k));
    } else {
        bsr_kops_cpu(&o, A, s->pc, k);
    }
    bsr_kops_use_pool(&o, &s->pool, s->device);
    if (s->kops_hook && (st = s->kops_hook(s->kops_hook_data, &o))) return st;
    /* a wrapping layer (the distributed solve) makes the reductions global:
     * the fused update + dot would sum this rank's rows only */
    if (s->kops_hook) o.upd_dot = NULL;
    struct bsr_kprof prof;
    if (s->opt.profile) bsr_kops_profile(&o, &prof, s->device ? s->ctx : NULL);
    bsr_col_stats *col = bsr_calloc((size_t)k, sizeof *col, "solver stats");
    if (!col) {
        if (s->opt.profile) bsr_kops_profile_finish(&prof);
        return BSR_ERR_NOMEM;
    }
    /* working copies of B and X when precision or residency differ */
    bsr_multivec *Bw = NULL, *Xw = NULL, *R = NULL;
    bsr_multivec *X0 = NULL;   /* the initial guess, while the solve aims past rtol */
    bsr_kstate ks;
    memset(&ks, 0, sizeof ks);
    bsr_krecycle rec;   /* a GMRES-DR solve's deflation space, for its error control's solves */
    memset(&rec, 0, sizeof rec);
    int ownB = 0, ownX = 0;
    double tk = 0;   /* wall seconds of the Krylov phase (profile) */
    double etol;     /* the error control's target (options.etol) */
    if ((st = bsr_solver_work_vec(s, &o, B, &Bw, &ownB)) || (st = bsr_solver_work_vec(s, &o, X, &Xw, &ownX)) ||
        (st = o.vnew(&o, &R)))
        goto done;
    bsr_prof_mark("solve: B, X to working vectors");
    if (estimate) {
        st = bsr_estimate_x(&o, &s->opt, Bw, Xw, R, col);
        goto done;
    }
    double bn[BSR_KMAX];
    if ((st = bsr_kops_norm2(&o, Bw, bn))) goto done;
    /* (a rank's exact factor is no exact preconditioner of the distributed A:
     * a distributed solve controls its error as a serial one does) */
    etol = s->pc->exact && !s->kops_hook ? 0 : bsr_etol_resolved(&s->opt);
    const double aim =
        etol > 0 && !s->aim_off ? bsr_etol_aim(s->err_amp, s->err_meas, s->err_since, etol, &s->opt) : 0;
    if (aim > 0 && ((st = o.vnew(&o, &X0)) || (st = o.copy(&o, X0, Xw, NULL)))) goto done;
    for (int pass = 0;; pass++) {
        if ((st = bsr_kstate_init(&ks, &s->opt, k, bn, col))) goto done;
        ks.probe = probe;
        if (etol > 0) ks.keep = &rec;
        if (probe && !pass) {
            ks.ahead = start_ahead;
            ks.ahead_data = s;
        }
        if (aim > 0 && !pass) bsr_kstate_aim(&ks, aim);
        const double t1 = bsr_now();
        st = bsr_krylov_row_of(s->opt.method)->solve(&o, Bw, Xw, &ks);   /* a row: the options were checked */
        tk += bsr_now() - t1;
        if (st) goto done;
        if (!bsr_kstate_aim_missed(&ks)) break;
        /* short of the aim after meeting rtol: the solve again without it,
         * from the same start, stops where the solve that never aimed did;
         * later solves on the pattern aim no more (each would pay twice) */
        s->aim_off = 1;
        bsr_kstate_free(&ks);
        bsr_krecycle_free(&o, &rec);
        memset(&rec, 0, sizeof rec);
        for (int j = 0; j < k; j++) {
            free(col[j].history);
            memset(&col[j], 0, sizeof col[j]);
        }
        if ((st = o.copy(&o, Xw, X0, NULL))) goto done;
    }
    bsr_prof_mark("solve: Krylov iterations");
    st = finish(&o, &ks, Bw, Xw, R, col);
    /* (a distributed solve's preconditioner is its rank's: never A's whole factorization) */
    if (!st && s->pc->exact && !s->kops_hook) st = refine_exact(&o, &s->opt, Bw, Xw, R, col);
    /* (the complete factorization's error is its refinement's: at the rounding) */
    else if (!st && etol > 0)
        st = bsr_solve_etol(&o, &s->opt, etol, Bw, Xw, R, col, &s->err_amp, &s->err_meas, &s->err_since, &rec);
    s->iters_last = 0;   /* (an aimed column's to rtol: the growth pattern=auto watches is the factor's) */
    for (int j = 0; j < k; j++) {
        const int it = ks.aimed && ks.reached[j] >= 0 ? ks.reached[j] : col[j].iterations;
        if (it > s->iters_last) s->iters_last = it;
    }
    if (!s->iters_base) s->iters_base = s->iters_last;   /* the first solve on this pattern */
    if (ownX) {
        bsr_status s2 = bsr_solver_work_back(s, &o, Xw, X);
        if (s2) st = s2;
    }
    bsr_prof_mark("solve: true residual, error control, X back");
done:
    if (s->opt.profile) {
        bsr_kops_profile_finish(&prof);
        if (tk > 0 && stats) profile_bound(s, &o, col, tk, stats);
    }
    if (probed) *probed = ks.probe_hit;
    bsr_kstate_free(&ks);
    bsr_krecycle_free(&o, &rec);
    if (R) o.vfree(&o, R);
    if (X0) o.vfree(&o, X0);
    if (ownB && Bw) o.vfree(&o, Bw);
    if (ownX && Xw) o.vfree(&o, Xw);
    if (stats && col) {
        stats->k = k;
        stats->col = col;
        stats->setup_s = s->setup_s;
        stats->setup_pc_s = s->setup_pc_s;
        stats->setup_dev_s = s->setup_dev_s;
        stats->solve_s = bsr_now() - t0;
        stats->pc_nnzb = s->pc->nnzb;
        stats->fill = A->nnzb ? (double)s->pc->nnzb / A->nnzb : 0;
        stats->pivots_regularized = s->pc->pivots_regularized;
        stats->device = s->device;
        stats->dev_bytes = (double)s->dev_held;
        stats->dev_peak_bytes = (double)s->dev_peak;
        stats->pattern_new = s->pattern_new;
        stats->pattern_refreshes = s->pattern_refreshes;
        if (s->opt.profile)
            for (int c = 0; c < 4; c++) { stats->prof_s[c] = prof.s[c]; stats->prof_calls[c] = prof.calls[c]; }
        snprintf(stats->precond_info, sizeof stats->precond_info, "%.16s%s%.479s", s->pc->name,
                 s->pc->info[0] ? ": " : "", s->pc->info);
    } else {
        for (int j = 0; j < k; j++) free(col[j].history);
        free(col);
    }
    return st;
}

/* Whether the factor of options o for nbrows block rows has a per-row cap
 * (the fallback's chains follow it). */
static int fallback_capped(const bsr_solver_options *o, int nbrows)
{
    return bsr_cap_resolved(o, o->factor == BSR_FACTOR_GPU, nbrows) != BSR_ILU_CAP_NONE;
}

/* The options of stage `stage` (0, 1, ...) of the fallback's setups, in *f,
 * after a failed solve with the solver's current ones, and its kind;
 * BSR_FB_NONE where there is no such stage (options.fallback off, not a
 * threshold ILU, distributed, or a fallback stopped on this matrix since
 * its setup).  The chains, their stages set up in turn until one succeeds:
 *   a capped factor on the device: COMPLETE, TWOLEVEL_DR, TWOLEVEL, DEFLATED,
 *   UNCAPPED;
 *   a capped factor on the host: COMPLETE, TWOLEVEL_DR, TWOLEVEL, UNCAPPED;
 *   an uncapped factor without growth weights: COMPLETE (unless it keeps
 *   every block already), GROW;
 * TWOLEVEL_DR and TWOLEVEL unless the first factor has a coarse level or
 * the solve is in float, DEFLATED unless the first solve was GMRES-DR's.
 * - COMPLETE: the complete block LU (tau1 = tau2 = 0 without the cap, a
 *   fill bound or a coarse level: every block kept, the pattern from the elimination tree,
 *   ilu_complete.c), factored where the first factor was (the device's
 *   sync-free rows, or the host's rows on its team), in METIS_NodeND's order
 *   unless an order was given (its rows need no tree, and its fill is the
 *   least: 15-20% fewer block products than the tree's nested dissection
 *   on coupled3d at 64k rows); its block products bounded as the rows' are
 *   (work: BSR_FALLBACK_WORK_DEVICE on the device; on the host
 *   BSR_FALLBACK_WORK_COMPLETE where A's pattern is symmetric, its exact work
 *   then known from its pattern before the rows, else the rows' bound).
 *   On indefinite coupled systems it is stable where every dropping factor
 *   is not (coupled3d at 27k and 64k block rows converges in one
 *   iteration; on the host the real fasp_lns__131, on which every
 *   dropping factor diverges, in 9); past its bound (a 3D problem's
 *   products grow as n^2) or the device's memory, the next stage; refused
 *   before its ordering where the estimate of a dissection's top levels
 *   passes twice the bound (ilu_complete_bound: at 1M block rows METIS's
 *   10.5 s on one host core and the pattern's 3.5 s not spent, the solve
 *   33.0 -> 19.2 s).  A stage whose setup succeeds is the one solved with;
 *   its solve failing ends the fallback.
 * - UNCAPPED: the same preconditioner without the cap, dropping by the
 *   growth of the inverse factors (grow=1 unless set), in nested dissection
 *   with METIS's order inside each leaf unless an order was given (on
 *   indefinite coupled systems fewer iterations than the leaves as found, at
 *   the same fill).
 * - TWOLEVEL_DR: two levels (coarse=BSR_FALLBACK_COARSE_DR) on the first
 *   factor's options, solved by flexible GMRES-DR (BSR_FALLBACK_TWODR_M,
 *   BSR_FALLBACK_TWODR_K, flex=1): where the complete factor does not fit
 *   (and on the host before the uncapped factor's longer setup), the ILU's
 *   iterations grow with the grid on indefinite coupled systems, and a
 *   coarse space of the modes it misses holds them.  Flexible, since the
 *   capped smoother amplifies 1e4-1e6-fold at 1M block rows, where GMRES-DR
 *   made its correction as M^{-1} (V y) ended at relres 1.6e-8 by its own
 *   count and 5.6e-2 in truth; BiCGStab diverges there.  On coupled3d with
 *   b = 5, couple=0.3 (H200): 512k block rows in 4.3 s against 13.2 s by
 *   TWOLEVEL, 1M converged (27.5 s, error 2.3e-8), 216k level with TWOLEVEL
 *   (27 iterations either way).  Their smoother is the first factor itself,
 *   shared, not made again; their solve is probed, and a failure goes on to
 *   the next stage.
 * - TWOLEVEL: two levels (coarse=BSR_FALLBACK_COARSE) under the first
 *   factor's method, sharing its factor the same way, probed the same way.
 * - DEFLATED: the first factor again, solved by GMRES-DR
 *   (BSR_FALLBACK_DR_M, BSR_FALLBACK_DR_K):
 *   where the complete factor does not fit, the capped factor's BiCGStab
 *   may have failed on the Krylov method's side (coupled3d:60,5 at 216k
 *   block rows: BiCGStab's probe at relres 0.67, GMRES-DR converged in 212
 *   iterations, 6.5 s in all against the next stage's 22 s).  It solves with
 *   the first factor itself, kept aside while the complete factor was tried;
 *   its solve is probed, and a failure goes on to the next stage.
 * - GROW: the same uncapped factor in the same order, with grow=1 (the
 *   order is kept: METIS's leaves lose small real matrices that the order
 *   as found solves).
 * Except COMPLETE after a first factor factored on the device, factored on
 * the host (grow needs host factors; on the CUDA backend the solves stay on
 * the device), its rows' work bounded (work, BSR_FALLBACK_WORK unless set;
 * the complete factor's as above). */
static int fallback_options(const bsr_solver *s, int stage, bsr_solver_options *f)
{
    const bsr_solver_options *o = &s->opt;
    if (o->fallback != 1 || s->fallback_stopped || s->kops_hook) return 0;
    if (o->precond != BSR_PC_ILUT && o->precond != BSR_PC_ILU2) return 0;
    *f = *o;
    f->work = bsr_fallback_work(o, 0, 0);
    if (!o->reorder[0]) snprintf(f->reorder, sizeof f->reorder, "nd:auto,leafnd=1");
    const int first = bsr_fallback_first(o, s->device, s->nbrows);
    /* after the complete factor: for a capped factor two levels under
     * flexible GMRES-DR and under the first method (unless the first factor
     * has a coarse level, or a float solve), on the device GMRES-DR (unless
     * solved by it), the factor without its cap; for an uncapped one
     * growth weights */
    const int twolevel = !o->coarse && o->precision == BSR_DOUBLE;
    const int capped = fallback_capped(o, s->nbrows);
    int chain[6], len = 0;
    if (first == BSR_FB_COMPLETE) chain[len++] = BSR_FB_COMPLETE;
    if (first != BSR_FB_NONE && capped) {
        if (twolevel) {
            chain[len++] = BSR_FB_TWOLEVEL_DR;
            chain[len++] = BSR_FB_TWOLEVEL;
        }
        if (s->device && !(o->method == BSR_GMRES && o->deflate > 0)) chain[len++] = BSR_FB_DEFLATED;
        chain[len++] = BSR_FB_UNCAPPED;
    } else if (first != BSR_FB_NONE) {
        chain[len++] = BSR_FB_GROW;
    }
    const int kind = stage < len ? chain[stage] : BSR_FB_NONE;
    if (kind == BSR_FB_TWOLEVEL) {   /* the first factor's options, and a coarse level */
        *f = *o;
        f->coarse = BSR_FALLBACK_COARSE;
        return kind;
    }
    if (kind == BSR_FB_TWOLEVEL_DR) {   /* the same with more vectors, under flexible GMRES-DR */
        *f = *o;
        f->coarse = BSR_FALLBACK_COARSE_DR;
        f->method = BSR_GMRES;
        if (f->restart < BSR_FALLBACK_TWODR_M) f->restart = BSR_FALLBACK_TWODR_M;
        f->deflate = BSR_FALLBACK_TWODR_K;
        f->orth = BSR_ORTH_CGS2;
        f->flex = 1;
        return kind;
    }
    if (kind == BSR_FB_DEFLATED) {   /* the first factor as it was */
        *f = *o;
        f->method = BSR_GMRES;
        if (f->restart < BSR_FALLBACK_DR_M) f->restart = BSR_FALLBACK_DR_M;
        f->deflate = BSR_FALLBACK_DR_K;
        f->orth = BSR_ORTH_CGS2;
        return kind;
    }
    f->cap = BSR_ILU_CAP_NONE;
    f->factor = BSR_FACTOR_CPU;
    if (kind == BSR_FB_COMPLETE) {
        /* factored where the first factor was: on the device unless that
         * one's rows and values were the host's (factor=cpu, or a matching,
         * which the device's factor takes none of) */
        const int on_device = s->device && o->factor == BSR_FACTOR_GPU;
        if (!o->reorder[0]) snprintf(f->reorder, sizeof f->reorder, "metis,lift=1");
        f->work = bsr_fallback_work(o, on_device || s->pattern_sym, on_device);
        f->tau1 = f->tau2 = 0;
        f->fill = 0;   /* every block kept: no fill bound either */
        f->grow = 0;
        f->coarse = 0;   /* an exact factor leaves no modes for a coarse level */
        if (on_device) f->factor = BSR_FACTOR_GPU;
    } else if (kind == BSR_FB_UNCAPPED) {
        if (!f->grow) f->grow = 1;
    } else if (kind == BSR_FB_GROW) {
        f->grow = 1;
        snprintf(f->reorder, sizeof f->reorder, "%s", o->reorder);
    }
    return kind;
}

static atomic_int complete_stage = 1;
void bsr_solver_test_complete_stage(int on) { atomic_store(&complete_stage, on != 0); }

int bsr_fallback_first(const bsr_solver_options *o, int device, int nbrows)
{
    const int capped = fallback_capped(o, nbrows);
    const int complete = device || atomic_load(&complete_stage);
    if (capped) return complete ? BSR_FB_COMPLETE : BSR_FB_UNCAPPED;
    if (o->grow) return BSR_FB_NONE;
    if (!complete) return BSR_FB_GROW;
    /* an uncapped factor: the complete one first, unless it is that already */
    bsr_ilu_options io;
    if (bsr_ilu_options_from_solver(o, &io)) {
        bsr_clear_error();
        return BSR_FB_GROW;
    }
    return bsr_ilu_keeps_all(&io) ? BSR_FB_GROW : BSR_FB_COMPLETE;
}

int bsr_match_applies(const bsr_solver_options *o, const bsr_matrix *A)
{
    return BSR_PC_IS_ILU(o->precond) &&
           (o->match == BSR_MATCH_MPT || (o->match == BSR_MATCH_AUTO && bsr_ilu_diagonal_weak(A)));
}

int bsr_complete_known(const bsr_solver_options *o, const bsr_matrix *A)
{
    return !bsr_match_applies(o, A) && bsr_pattern_symmetric(A->nbrows, A->rowptr, A->colind);
}

double bsr_fallback_work(const bsr_solver_options *o, int complete, int device)
{
    if (o->work > 0) return o->work;
    return !complete ? BSR_FALLBACK_WORK : device ? BSR_FALLBACK_WORK_DEVICE : BSR_FALLBACK_WORK_COMPLETE;
}

/* The most iterations any column of st ran. */
static int stats_iterations(const bsr_solver_stats *st)
{
    int its = 0;
    for (int j = 0; j < st->k; j++)
        if (st->col[j].iterations > its) its = st->col[j].iterations;
    return its;
}

/* The first factor, kept aside while a failed solve's fallback sets its
 * stages up: two levels share it as their smoother, GMRES-DR's stage solves
 * with it, and a fallback whose stages all fail goes on with it, none
 * setting it up again (0.25 s at 216k block rows with b = 5 on the device,
 * 0.8 s at 1M). */
struct first_factor {
    bsr_pc *pc;              /* NULL: none kept */
    bsr_matrix *A_work;
    double setup_s, setup_pc_s, setup_dev_s;
    size_t dev_held, dev_peak;
    uint64_t warm_k;
    int lent;                /* it is s's preconditioner again */
};

/* Before a stage's setup (f may be NULL: nothing kept): s's preconditioner
 * into f when f holds none, or f's lent one taken back, so that the setup's
 * teardown frees neither. */
static void first_park(bsr_solver *s, first_factor *f)
{
    if (!f || !s->pc || (f->pc && !f->lent)) return;
    if (!f->lent) {
        f->pc = s->pc;
        f->A_work = s->A_work;
        f->setup_s = s->setup_s;
        f->setup_pc_s = s->setup_pc_s;
        f->setup_dev_s = s->setup_dev_s;
        f->dev_held = s->dev_held;
        f->dev_peak = s->dev_peak;
        f->warm_k = s->warm_k;
    }
    f->lent = 0;
    bsr_vpool_clear(&s->pool);
    s->pc = NULL;
    s->A_work = NULL;
}

/* s set up on A with f's factor, as a setup would leave it; 0 when f
 * holds none (f may be NULL). */
static int first_lend(bsr_solver *s, first_factor *f, const bsr_matrix *A)
{
    if (!f || !f->pc) return 0;
    if (!f->lent) {
        teardown(s);
        s->pc = f->pc;
        s->A_work = f->A_work;
        s->setup_s = f->setup_s;
        s->setup_pc_s = f->setup_pc_s;
        s->setup_dev_s = f->setup_dev_s;
        s->dev_held = f->dev_held;
        s->dev_peak = f->dev_peak;
        s->warm_k = f->warm_k;
    }
    s->A_user = A;
    s->nbrows = A->nbrows;
    s->fallback_stopped = 0;
    s->setup_fb[0] = 0;
    s->refactor_setup = 0;
    fresh_pattern(s);
    f->lent = 1;
    return 1;
}

/* f's factor freed unless lent (f may be NULL). */
static void first_drop(first_factor *f)
{
    if (!f || !f->pc || f->lent) return;
    bsr_pc_destroy(f->pc);
    bsr_matrix_destroy(f->A_work);
    f->pc = NULL;
    f->A_work = NULL;
}

/* No second solve: the fallback's setup failed (fb: why; past its work
 * bound or out of memory) or made the factor the first one again.  The
 * solver goes on with the first factor and the options before (keep's
 * factor where it holds one, else A set up again), and stops trying the fallback
 * until its next setup; a first solve the probe gave up (probed) goes on
 * from its last iterate X for the iterations maxit leaves, as without the
 * fallback.  *first (the first solve's stats, st1 its status, why its
 * message) becomes the caller's *stats, fallback_s the seconds since tf
 * (the fallback's setup and this one). */
static bsr_status fallback_gave_up(bsr_solver *s, const bsr_matrix *A, const bsr_solver_options *before,
                                   first_factor *keep, const bsr_multivec *B, bsr_multivec *X, bsr_status st1,
                                   const char *why, const char *fb, int probed, double tf,
                                   bsr_solver_stats *first, bsr_solver_stats *stats)
{
    s->opt = *before;
    bsr_status st = first_lend(s, keep, A) ? BSR_OK : bsr_solver_setup(s, A);
    if (st) {
        bsr_solver_stats_free(first);
        return bsr_error(st, "bsr_solver_solve: the first solve did not converge (%s); the fallback's setup failed "
                         "(%s), and the first factor's setup again failed: %s", why, fb, bsr_last_error());
    }
    s->fallback_stopped = 1;
    const double fs = bsr_now() - tf;
    const int its = stats_iterations(first);
    char msg[2048];   /* why (up to the 1024 bytes of the probed stages' failures) or the rest's error */
    snprintf(msg, sizeof msg, "%s", why);
    if (probed && its < s->opt.maxit) {
        const int maxit = s->opt.maxit;
        bsr_solver_stats rest;
        memset(&rest, 0, sizeof rest);
        s->opt.maxit = maxit - its;
        st = solve_once(s, B, X, &rest, 0, NULL, 0);
        s->opt.maxit = maxit;
        if (st != BSR_OK && st != BSR_ERR_NOCONV && st != BSR_ERR_BREAKDOWN) {
            bsr_solver_stats_free(&rest);
            bsr_solver_stats_free(first);
            return st;
        }
        for (int j = 0; j < rest.k && j < first->k; j++) rest.col[j].iterations += first->col[j].iterations;
        rest.solve_s += first->solve_s;
        /* the first setup's times (the setup again is in fallback_s) */
        rest.setup_s = first->setup_s;
        rest.setup_pc_s = first->setup_pc_s;
        rest.setup_dev_s = first->setup_dev_s;
        bsr_solver_stats_free(first);
        *first = rest;
        st1 = st;
        snprintf(msg, sizeof msg, "%s", st ? bsr_last_error() : "");
    }
    first->fallback_s = fs;
    const int all = stats_iterations(first);
    if (stats) *stats = *first;
    else bsr_solver_stats_free(first);
    if (st1 == BSR_OK) return BSR_OK;
    char gone[128] = "";
    if (probed)   /* the message above counts the iterations after the probe */
        snprintf(gone, sizeof gone, " (the first solve went on after the fallback's probe at iteration %d: %d in all)",
                 its, all);
    return bsr_error(st1, "%s%s; no fallback: %s", msg, gone, fb);
}

bsr_status bsr_solver_error_estimate(bsr_solver *s, const bsr_multivec *B, const bsr_multivec *X, double *est,
                                     int *its)
{
    BSR_CHECK_ARG(s && B && X && est, "bsr_solver_error_estimate: NULL argument");
    if (!s->pc || !s->A_user) return bsr_error(BSR_ERR_ARG, "bsr_solver_error_estimate: call bsr_solver_setup first");
    const bsr_matrix *A = s->A_user;
    if (B->prec != A->prec || X->prec != A->prec)
        return bsr_error(BSR_ERR_UNSUPPORTED, "bsr_solver_error_estimate: B and X in A's precision (%s)",
                         A->prec == BSR_FLOAT ? "float" : "double");
    if (!B->data || !X->data || !(B->where & BSR_ON_HOST) || !(X->where & BSR_ON_HOST))
        return bsr_error(BSR_ERR_UNSUPPORTED, "bsr_solver_error_estimate: B and X must be current on the host "
                         "(bsr_multivec_download a device multivector first)");
    if (B->n != X->n || B->k != X->k || X->n != (int64_t)A->nbrows * A->b)
        return bsr_error(BSR_ERR_SIZE, "bsr_solver_error_estimate: A has %lld rows; B is %lld x %d, X %lld x %d",
                         (long long)A->nbrows * A->b, (long long)B->n, B->k, (long long)X->n, X->k);
    if (its) *its = 0;
    bsr_solver_stats ss;
    memset(&ss, 0, sizeof ss);
    /* (the estimate leaves X as given) */
    bsr_status st = solve_once(s, B, (bsr_multivec *)X, &ss, 0, NULL, 1);
    int low = -1;
    for (int j = 0; !st && j < ss.k; j++) {
        const bsr_col_stats *c = &ss.col[j];
        est[j] = c->err_est;
        if (its && c->err_its > *its) *its = c->err_its;
        if (c->err_low && low < 0) low = j;
    }
    if (low >= 0) {
        const bsr_col_stats *c = &ss.col[low];
        const int bd = c->reason == BSR_DIVERGED_BREAKDOWN || c->reason == BSR_DIVERGED_INDEFINITE;
        if (c->reason == BSR_CONVERGED_FLOOR)
            st = bsr_error(BSR_ERR_NOCONV, "bsr_solver_error_estimate: column %d's residual B - A X is at the working "
                           "precision's rounding floor (eps || |A||X| + |B| ||), where A e = r solves for rounding: "
                           "the estimate is a lower bound", low);
        else
            st = bsr_error(bd ? BSR_ERR_BREAKDOWN : BSR_ERR_NOCONV, "bsr_solver_error_estimate: A e = B - A X did "
                           "not reach rtol %g (column %d stopped (%s) after %d iterations): the estimate is a lower "
                           "bound", BSR_ERREST_RTOL, low, bsr_reason_string(c->reason), c->err_its);
    }
    if (ss.col) bsr_solver_stats_free(&ss);
    return st;
}

/* The fallback's stages set up on A in turn from the solver's options
 * (those of the first factor), from stage *stage on, until one succeeds:
 * its kind, *stage its number, s->opt its options from then on; 0 when
 * none did (or there is none), s->opt as it was and fb (len bytes, appended
 * to) naming each stage's failure; *secs (may be NULL) gains the seconds
 * of the setups, failed or not.  After a failed solve keep holds the first factor
 * while the stages are set up, shared with two levels' stage as its
 * smoother, lent to GMRES-DR's stage (no setup: 0 s) and let go once
 * another stage's setup succeeds (but two levels', after which GMRES-DR's
 * may follow; two levels that end the fallback own it then); with keep
 * NULL (a setup's fallback) there is no two levels' or GMRES-DR stage. */
static int fallback_stages(bsr_solver *s, const bsr_matrix *A, first_factor *keep, int *stage, char *fb,
                           size_t len, double *secs)
{
    static const char *const what[] = {[BSR_FB_NONE] = "", [BSR_FB_UNCAPPED] = "without the cap",
                                       [BSR_FB_GROW] = "with growth weights",
                                       [BSR_FB_COMPLETE] = "of the complete factor",
                                       [BSR_FB_DEFLATED] = "of the first factor for GMRES-DR",
                                       [BSR_FB_TWOLEVEL] = "of two levels",
                                       [BSR_FB_TWOLEVEL_DR] = "of two levels for flexible GMRES-DR"};
    const bsr_solver_options before = s->opt;
    bsr_solver_options fo;
    for (int kind; (kind = fallback_options(s, *stage, &fo)); ++*stage) {
        if ((kind == BSR_FB_DEFLATED || BSR_FB_IS_TWOLEVEL(kind)) && !keep) continue;
        s->opt = fo;   /* the options say so from now on */
        const int lent = kind == BSR_FB_DEFLATED && first_lend(s, keep, A);
        if (!lent) first_park(s, keep);
        /* two levels share the first factor (same options but the coarse
         * level, same A) as their smoother instead of making it again */
        if (BSR_FB_IS_TWOLEVEL(kind) && keep->pc && !keep->lent && !keep->A_work) s->smoother = keep->pc;
        const double t0 = bsr_now();
        bsr_status sf = lent ? BSR_OK : setup_as(s, A, 0);
        s->smoother = NULL;
        if (secs && !lent) *secs += bsr_now() - t0;
        /* an uncapped factor whose growth stayed below grow's trigger is the
         * first one, bit for bit: a second solve would repeat the first */
        if (!sf && !(kind == BSR_FB_GROW && !s->pc->grow_passes)) {
            /* solved with this stage's factor, not the first (after two levels, GMRES-DR's may follow) */
            if (!lent && !BSR_FB_IS_TWOLEVEL(kind)) first_drop(keep);
            return kind;
        }
        const size_t at = strlen(fb);
        if (sf) snprintf(fb + at, len - at, "%sthe setup %s%s failed (%s)", at ? "; " : "", what[kind],
                         kind != BSR_FB_COMPLETE ? "" : fo.factor == BSR_FACTOR_GPU ? " on the device" : " on the host",
                         bsr_last_error());
        else snprintf(fb + at, len - at, "%sgrowth weights left the factor as it was (growth below their "
                      "trigger)", at ? "; " : "");
        s->opt = before;   /* the next stage's options derive from the first factor's */
    }
    return 0;
}

/* The stages whose solve is probed (a failure goes on to the next stage),
 * by kind: their name in the failure's message; NULL for the others. */
static const char *const probed_name[] = {[BSR_FB_TWOLEVEL_DR] = "flexible GMRES-DR's on two levels",
                                          [BSR_FB_TWOLEVEL] = "two levels'",
                                          [BSR_FB_DEFLATED] = "GMRES-DR's on the first factor"};

/* bsr_solver_solve, its fallback's ordering made ahead (s->ahead) used and
 * freed, or called off and kept until the next solve, setup or destroy lets it go. */
static bsr_status solve_fallback(bsr_solver *s, const bsr_multivec *B, bsr_multivec *X, bsr_solver_stats *stats)
{
    bsr_solver_options fo;
    if (!(s && B && X && s->pc && fallback_options(s, 0, &fo))) return solve_once(s, B, X, stats, 0, NULL, 0);
    if (stats) memset(stats, 0, sizeof *stats);   /* a failure below may leave none */
    /* the initial guess, for the second solve (where it cannot be kept, as
     * for X only on a device, the solve runs without the fallback) */
    bsr_multivec *x0 = NULL;
    bsr_status st = bsr_multivec_create(&x0, X->n, X->k, X->prec);
    if (!st) st = bsr_multivec_copy(x0, X);
    if (st) {
        bsr_multivec_destroy(x0);
        bsr_clear_error();
        return solve_once(s, B, X, stats, 0, NULL, 0);
    }
    /* the first solve, given up early where its residual has not halved in
     * BSR_FALLBACK_PROBE iterations: a factor that is unstable on an
     * indefinite coupled system leaves the residual near or above the
     * initial one from the start, while one that converges slowly has
     * halved it by then */
    bsr_solver_stats first;
    const double t0 = bsr_now();
    int probed;
    st = solve_once(s, B, X, &first, BSR_FALLBACK_PROBE, &probed, 0);
    if (st != BSR_ERR_NOCONV && st != BSR_ERR_BREAKDOWN) {
        /* no fallback: the ordering the probe started is called off, not
         * waited for (a later solve, setup or destroy lets it go) */
        bsr_order_ahead_stop(s->ahead);
        bsr_multivec_destroy(x0);
        if (stats) *stats = first;
        else bsr_solver_stats_free(&first);
        return st;
    }
    char why[192];
    snprintf(why, sizeof why, "%s", bsr_last_error());
    const int its = stats_iterations(&first);
    const bsr_solver_options before = s->opt;
    const double setup0 = s->setup_s;
    const bsr_matrix *A = s->A_user;   /* a failed setup forgets it */
    const double tf = bsr_now();
    bsr_order_ahead_wait(s->ahead);   /* the stages' setups take its ordering */
    bsr_prof_mark("fallback: waiting for the ordering made beside the first solve");
    char fb[512] = "";
    int stage = 0;
    first_factor keep;
    memset(&keep, 0, sizeof keep);
    double fsetup = 0;   /* the stages' setups, failed or not */
    int kind = fallback_stages(s, A, &keep, &stage, fb, sizeof fb, &fsetup);
    ahead_drop(s);
    if (!kind) {
        bsr_multivec_destroy(x0);
        st = fallback_gave_up(s, A, &before, &keep, B, X, st, why, fb, probed, tf, &first, stats);
        first_drop(&keep);
        return st;
    }
    bsr_solver_stats_free(&first);
    bsr_solver_stats sec;
    memset(&sec, 0, sizeof sec);
    char nor[768] = "";   /* the probed stages' failures */
    for (;;) {
        st = bsr_multivec_copy(X, x0);
        if (st) break;
        /* two levels and GMRES-DR on the first factor are probed, the next
         * stage's ordering made beside them where the probe starts it: the
         * stages after them follow their failure */
        const char *tried = probed_name[kind];
        const int more = tried != NULL;
        int p2 = 0;
        bsr_solver_options next;
        const bsr_solver_options cur = s->opt;
        s->opt = before;
        if (more && fallback_options(s, stage + 1, &next)) s->ahead_opt = &next;
        s->opt = cur;
        st = solve_once(s, B, X, &sec, more ? BSR_FALLBACK_PROBE : 0, more ? &p2 : NULL, 0);
        s->ahead_opt = NULL;
        if (!more || (st != BSR_ERR_NOCONV && st != BSR_ERR_BREAKDOWN)) {
            bsr_order_ahead_stop(s->ahead);   /* called off, not waited for */
            break;
        }
        const size_t at = strlen(nor);
        snprintf(nor + at, sizeof nor - at, "%s%s (%.190s)", at ? ", nor " : "", tried, bsr_last_error());
        s->opt = before;
        ++stage;
        bsr_order_ahead_wait(s->ahead);
        bsr_prof_mark("fallback: waiting for the ordering made beside a probed stage's solve");
        kind = fallback_stages(s, A, &keep, &stage, fb, sizeof fb, &fsetup);
        ahead_drop(s);
        if (!kind) {
            /* no stage after it: its solve is the answer, with the first factor */
            bsr_multivec_destroy(x0);
            sec.fallbacks = 1;
            sec.fallback_iterations = its;
            sec.setup_s = setup0;   /* the first (the stages' are in fallback_s) */
            snprintf(sec.fallback_reason, sizeof sec.fallback_reason, "%s", why);
            char both[1024];
            snprintf(both, sizeof both, "the first solve did not converge (%s), nor %s", why, nor);
            st = fallback_gave_up(s, A, &before, &keep, B, X, st, both, fb, 0, tf, &sec, stats);
            first_drop(&keep);
            return st;
        }
        bsr_solver_stats_free(&sec);
    }
    first_drop(&keep);
    bsr_multivec_destroy(x0);
    if (stats) {
        *stats = sec;
        stats->fallbacks = 1;
        stats->fallback_iterations = its;
        snprintf(stats->fallback_reason, sizeof stats->fallback_reason, "%s", why);
        stats->solve_s = bsr_now() - t0 - fsetup;   /* the solves */
        stats->fallback_s = fsetup;                 /* the stages' setups */
        stats->setup_s = setup0;                    /* the first */
    } else {
        bsr_solver_stats_free(&sec);
    }
    return st;
}

bsr_status bsr_solver_solve(bsr_solver *s, const bsr_multivec *B, bsr_multivec *X,
                            bsr_solver_stats *stats)
{
    ahead_drop(s);
    bsr_status st = solve_fallback(s, B, X, stats);
    if (s && B && X && s->setup_fb[0] && stats && !stats->fallbacks && stats->col) {
        /* the fallback of the setup or refactor, reported once: the factor
         * broke down before any solve (no iterations) */
        stats->fallbacks = 1;
        stats->fallback_iterations = 0;
        snprintf(stats->fallback_reason, sizeof stats->fallback_reason, "%s", s->setup_fb);
        stats->fallback_s = stats->setup_s;
        stats->setup_s = s->setup_fb_s;
    }
    if (s) s->setup_fb[0] = 0;
    return st;
}
