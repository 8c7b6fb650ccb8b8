/* SPDX-License-Identifier: BSD-3-Clause */
/* `bsrsolve [FILE.mtx | --gen SPEC] [options]`: read or generate a system, set
 * up the solver, solve, and report (one screen, or one JSON object with
 * --json).  Optional UMFPACK reference and cuSPARSE ILU(0)+BiCGStab comparison
 * in the same run, error against a known solution, residual-history plot. */
#include "cli.h"
#include "internal.h"
#include "cusparse_ref.h"
#include "plot.h"
#include "solver_impl.h"   /* bsr_ilu_diagonal_weak: where match=auto acts; bsr_fallback_work */
#include "ilu_impl.h"      /* bsr_ilu_stability: diag=1 */
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    int steps;                  /* --steps: time steps run after the first solve */
    double step_refactor, step_solve; /* their median refactor and solve seconds */
    int step_iters;             /* iterations of the last step (worst column) */
    int step_failed;            /* steps whose solve failed (a column not converged) */
    int step_measured, step_predicted, step_corrected; /* steps whose error control (etol) measured, predicted, corrected */
    double umf_setup, umf_solve;
    double *ref_diff;           /* [k] with --reference */
    double *err;                /* [k] vs the exact solution, NULL when none */
    double *est;                /* [k] --error-estimate (bsr_solver_error_estimate), NULL when not asked */
    int est_its;                /* its solve's iterations */
    int est_low;                /* that solve did not converge: the figures are lower bounds */
    bsr_cusparse_result cus;
    int have_cus;
    int warm;                   /* --warm: both pipelines ran once untimed first */
    int diag;                   /* diag=1: stab (or, when not computed, stab_note) is reported */
    const char *stab_note;
    bsr_ilu_stab stab;
} extras;

/* A CUDA context on device 0 for --backend cuda. */
static bsr_status cli_cuda_context(bsr_context **ctx)
{
    *ctx = NULL;
    if (bsr_device_count() <= 0)
        return bsr_error(BSR_ERR_NODEVICE, "--backend cuda: no usable CUDA device (or built without CUDA)");
    return bsr_context_create(ctx, BSR_BACKEND_CUDA, 0, NULL);
}

/* The solve options, for --help and after a bad solve option. */
void cli_usage_solve(FILE *f)
{
    fprintf(f,
        "solve options:\n"
        "  --rhs B.mtx|ones|random:K   right-hand side(s) (default: the generator's, else ones)\n"
        "  --x0 X0.mtx                 initial guess (default 0)\n"
        "  --out X.mtx                 write the solution\n"
        "  --backend cpu|cuda          where to iterate (default cuda when a device is usable)\n"
        "  --config STRING             solver options, e.g. method=bicgstab,precond=ilu2,tau1=1e-2,\n"
        "                              reorder=nd:auto,rtol=1e-8,maxit=500; keys: method precond tau1 tau2\n"
        "                              keep_pattern fill omega reorder factor pattern pattern_growth rtol\n"
        "                              atol dtol maxit restart deflate flex idr_s orth stag max_restarts\n"
        "                              precision precond_precision history progress profile cap match\n"
        "                              pivot grow trisolve diag overlap halo fallback work etol coarse\n"
        "                              (README: Solver options);\n"
        "                              precond: ilu0 (default) none jacobi ssor ilut ilu2 ic0 (block IC(0),\n"
        "                              SPD A, CPU only); method: bicgstab (default) gmres cg idr\n"
        "                              (IDR(s), s = idr_s, default 4); gmres with deflate=K: GMRES-DR(restart, K),\n"
        "                              with flex=1: flexible (the preconditioned vectors kept);\n"
        "                              method=cg takes none, jacobi, ssor or ic0; coarse=M: two levels\n"
        "                              around an ILU, M vectors an aggregate\n"
        "  --reference umfpack         also solve with UMFPACK; report the difference and times\n"
        "  --compare cusparse          also run cuSPARSE bsrilu02+bsrsv2+BiCGStab on the device\n"
        "                              (b = 1: csrilu02 + SpSV + SpMV); a zero pivot shows as failed\n"
        "  --exact X.mtx               known solution to compare with\n"
        "  --error-estimate            estimate each column's error: ||e|| / ||x|| with A e = b - A x solved\n"
        "                              to rtol 0.01 by the same solver (the residual does not bound the error on\n"
        "                              ill-conditioned systems)\n"
        "  --plot history.png          residual histories\n"
        "  --steps N                   then N time steps: refactor (same pattern) + solve from zero;\n"
        "                              reports the median step times, the steps whose solve failed\n"
        "                              and what their error control (etol) did\n"
        "  --warm                      one untimed setup + solve of each pipeline first (times without\n"
        "                              one-time costs such as kernel loading; A is uploaded again)\n"
        "  --json                      one JSON object on stdout\n"
        "  --progress, --no-progress   report each setup phase of 1 s or more on stderr as it ends\n"
        "                              (\"bsrsolve: ilu setup: ordering 6.4 s\"; default: when stderr is a\n"
        "                              terminal; BSR_PROGRESS=S: phases of S seconds or more)\n");
}

/* ||X(:,j) - Y(:,j)|| / ||Y(:,j)|| for each column. */
static bsr_status rel_diff(const bsr_multivec *X, const bsr_multivec *Y, double *out)
{
    int k = bsr_multivec_cols(X);
    bsr_multivec *D = NULL;
    double *m1 = malloc(sizeof(double) * (size_t)k * 2);
    if (!m1) return BSR_ERR_NOMEM;
    bsr_status s;
    if (!(s = bsr_multivec_create(&D, bsr_multivec_rows(X), k, BSR_DOUBLE)) && !(s = bsr_multivec_copy(D, X))) {
        for (int j = 0; j < k; j++) m1[j] = -1;
        if (!(s = bsr_multivec_axpy(D, m1, Y)) && !(s = bsr_multivec_norm2(D, out)) &&
            !(s = bsr_multivec_norm2(Y, m1 + k)))
            for (int j = 0; j < k; j++) out[j] = m1[k + j] > 0 ? out[j] / m1[k + j] : out[j];
    }
    bsr_multivec_destroy(D);
    free(m1);
    return s;
}

/* Residual history plot: one series per column (at most 16).  0, or -1 when
 * the file cannot be written (plot_png has named the path on stderr). */
static int plot_history(const char *path, const bsr_solver_stats *st, const char *title)
{
    int ns = st->k < 16 ? st->k : 16;
    plot_series s[16];
    double *x[16] = {0};
    char names[16][32];
    for (int j = 0; j < ns; j++) {
        const bsr_col_stats *c = &st->col[j];
        x[j] = malloc(sizeof(double) * (size_t)(c->hist_len > 0 ? c->hist_len : 1));
        for (int i = 0; x[j] && i < c->hist_len; i++) x[j][i] = i;
        snprintf(names[j], sizeof names[j], "rhs %d", j);
        s[j].name = names[j];
        s[j].n = x[j] ? c->hist_len : 0;
        s[j].x = x[j];
        s[j].y = c->history;
    }
    fflush(stdout);
    int rc = plot_png(path, title, "iteration", "relative residual", s, ns, 0, 1);
    if (rc == 0) fprintf(stderr, "bsrsolve: residual history written to %s\n", path);
    for (int j = 0; j < ns; j++) free(x[j]);
    return rc;
}

/* profile=1 on the device: the Krylov phase against its bandwidth bound
 * (issue 22): the least bytes it moves (model of src/krylov/krylov_bytes.c) over the
 * copy bandwidth measured in this process, and the fraction reached. */
/* A solve's wall time: the first setup, the fallback's setups, the solves. */
static double stats_total(const bsr_solver_stats *st)
{
    return st->setup_s + st->fallback_s + st->solve_s;
}

static void profile_bound_line(const bsr_solver_stats *st)
{
    if (!(st->prof_copy_gbs > 0 && st->prof_iter_bytes > 0 && st->prof_krylov_s > 0)) return;
    int its = 0;
    for (int j = 0; j < st->k; j++) if (st->col[j].iterations > its) its = st->col[j].iterations;
    const double bw = st->prof_copy_gbs * 1e9, bound = st->prof_bytes / bw;
    printf("profile     bound: %.3f GB an iteration (%.3f ms at the %.0f GB/s D2D copy of this process); Krylov phase "
           "%.2f GB, bound %.2f ms, measured %.2f ms (%.3f ms an iteration, %d): %.1f%% of the bound\n",
           st->prof_iter_bytes / 1e9, 1e3 * st->prof_iter_bytes / bw, st->prof_copy_gbs, st->prof_bytes / 1e9,
           1e3 * bound, 1e3 * st->prof_krylov_s, its ? 1e3 * st->prof_krylov_s / its : 0.0, its,
           100 * bound / st->prof_krylov_s);
}

/* 1 when item (a "key=value" of a --config string, len bytes) sets one of
 * the keys of the items in add. */
static int config_key_in(const char *item, size_t len, const char *add)
{
    const char *eq = memchr(item, '=', len);
    size_t k = eq ? (size_t)(eq - item) : len;
    for (const char *a = add; *a; a += strcspn(a, ","), a += *a == ',') {
        size_t ka = strcspn(a, "=,");
        if (ka == k && !strncmp(a, item, k)) return 1;
    }
    return 0;
}

/* buf = config with add's items appended, the items of config that set one
 * of add's keys left out (a hint's --config then says each key once). */
static const char *config_with(const char *config, const char *add, char *buf, size_t n)
{
    size_t m = 0;
    buf[0] = '\0';
    for (const char *c = config ? config : ""; *c; c += strcspn(c, ","), c += *c == ',') {
        size_t len = strcspn(c, ",");
        if (!len || config_key_in(c, len, add)) continue;
        m += (size_t)snprintf(buf + (m < n ? m : n - 1), m < n ? n - m : 1, "%.*s,", (int)len, c);
    }
    snprintf(buf + (m < n ? m : n - 1), m < n ? n - m : 1, "%s", add);
    return buf;
}

/* The --config to try after an ILU failed, into buf, with *why the reason
 * (NULL: no hint).  A failure (a breakdown, a singular pivot, or no
 * convergence with regularized pivots) on an A whose diagonal has a zero,
 * missing or singular block, without a matching: match=auto (factor=auto
 * too after factor=gpu, which takes no matching), what it is for.  Else an
 * ILUT/ILU2 failure with a per-row cap (the CUDA backend's default) whose
 * fallback set up nothing (fb_stopped 0; 1: its stages were set up and
 * failed, 2: one stopped at its work bound, where cap=none alone would not
 * stop): cap=none, whose nested dissection without the cap converged on
 * rotconv3d where the capped rows broke down.  Else, the fallback stopped
 * at its work bound: work at 4 times that bound, the complete factor's where
 * that is the first stage (a setup several times longer, which may not fit
 * the device, and the factor may still not converge).  Else an
 * ILUT/ILU2 failure with host factors whose inverse factors grow past 1e3
 * (S's, estimated here: one pass): grow=1, whose weighted refactorization
 * converged on coupled3d at 27k and 64k block rows where the plain factor
 * diverged. */
static const char *ilu_hint(const bsr_solver_options *opt, const bsr_solver *S, const char *config,
                            const bsr_matrix *A, int failed, int fb_stopped, char *buf, size_t n, const char **why)
{
    *why = NULL;
    if (!failed || opt->precond < BSR_PC_ILU0 || opt->precond > BSR_PC_ILU2) return NULL;
    if (opt->match == BSR_MATCH_NONE && bsr_ilu_diagonal_weak(A)) {
        config_with(config, opt->factor == BSR_FACTOR_GPU ? "match=auto,factor=auto" : "match=auto", buf, n);
        *why = "A has a zero, missing or singular diagonal block, which the ILU cannot pivot on: try --config %s "
               "(a matching moves large entries onto the diagonal first)";
        return buf;
    }
    if (opt->precond != BSR_PC_ILU0 && opt->cap != BSR_ILU_CAP_NONE && opt->cap != BSR_CAP_DEFAULT && !fb_stopped) {
        config_with(config, "cap=none", buf, n);
        *why = "the per-row cap bounds the setup but can cost a coupled system its convergence: try --config %s "
               "(nested dissection without a cap, the pattern's rows on the host: a longer setup)";
        return buf;
    }
    if (fb_stopped == 2) {
        static char whybuf[256];
        char w[48];
        /* its first stage, the complete factor where it runs, is the one to give room */
        const int dev = S && S->device;
        const int gpu = dev && opt->factor == BSR_FACTOR_GPU;
        const double bound = bsr_fallback_work(opt, bsr_fallback_first(opt, dev, A->nbrows) == BSR_FB_COMPLETE &&
                                                        (gpu || bsr_complete_known(opt, A)), gpu);
        snprintf(w, sizeof w, "work=%.3g", 4 * bound);
        config_with(config, w, buf, n);
        snprintf(whybuf, sizeof whybuf, "the fallback's factor stopped at its work bound (%.3g block multiply-adds): "
                 "try --config %%s (4 times the bound: a setup several times longer, whose factor may still not "
                 "converge)", bound);
        *why = whybuf;
        return buf;
    }
    const bsr_ilu *F = S ? bsr_solver_host_ilu(S) : NULL;
    bsr_ilu_stab t;
    memset(&t, 0, sizeof t);
    if (opt->precond != BSR_PC_ILU0 && opt->grow != 1 && F && F->valid) {
        if (bsr_ilu_stability(F, &t)) { bsr_clear_error(); return NULL; }
        if (t.l_max <= 1e3 && t.u_max <= 1e3) return NULL;   /* (NaN: past it) */
        config_with(config, "grow=1", buf, n);
        *why = "the inverse factors of the ILU grow past 1e3 (an indefinite or nearly singular Schur complement): "
               "try --config %s (the factor again, dropping less where they grow: a longer setup)";
        return buf;
    }
    return NULL;
}

/* The hint line of ilu_hint's suggestion (f: stdout in the report, stderr after a failed setup). */
static void print_hint(FILE *f, const char *why, const char *cfg)
{
    fputs(f == stdout ? "hint        " : "bsrsolve: hint: ", f);
    fprintf(f, why, cfg);
    fputc('\n', f);
}

/* diag=1: the stability figures of the solver's host ILU factors into e
 * (e->stab_note says why there are none). */
static void stability_compute(const bsr_solver *S, extras *e)
{
    e->diag = 1;
    const bsr_ilu *F = bsr_solver_host_ilu(S);
    if (!F) { e->stab_note = "no ILU preconditioner"; return; }
    if (!F->valid) { e->stab_note = "host factors only (factor=cpu)"; return; }
    memset(&e->stab, 0, sizeof e->stab);
    if (bsr_ilu_stability(F, &e->stab)) { e->stab_note = "not computed (no valid host factors)"; bsr_clear_error(); }
}

/* Where factor row k lies: "row R (0.97 of the order, separator level 0)". */
static void stab_where(char *buf, size_t len, const bsr_ilu_stab *t, int k, int src, int lev)
{
    if (k < 0) { snprintf(buf, len, "-"); return; }
    snprintf(buf, len, "row %d (%.3f of the order, %s", src, t->n ? (double)k / t->n : 0.0, lev >= 0 ? "separator level " : "leaf");
    if (lev >= 0) snprintf(buf + strlen(buf), len - strlen(buf), "%d", lev);
    snprintf(buf + strlen(buf), len - strlen(buf), ")");
}

/* The report's stability line (diag=1). */
static void stability_text(const extras *e)
{
    if (!e->diag) return;
    if (e->stab_note) { printf("stability   %s\n", e->stab_note); return; }
    const bsr_ilu_stab *t = &e->stab;
    char wl[96], wu[96], wf[96];
    stab_where(wl, sizeof wl, t, t->l_at, t->l_src, t->l_sep_level);
    stab_where(wu, sizeof wu, t, t->u_at, t->u_src, t->u_sep_level);
    stab_where(wf, sizeof wf, t, t->first, t->first_src, t->first_sep_level);
    printf("stability   ||L^-1|| est %.2e at %s, ||U^-1|| est %.2e at %s, worst pivot cond %.2e (row %d); "
           "first past %.0e: %s%s%s; %d rows past (%d in separators of %d rows), max leaf %.2e, separator %.2e\n",
           t->l_max, wl, t->u_max, wu, t->piv_max, t->piv_src, t->thresh, t->first >= 0 ? (t->first_which == 'U' ? "U at " : "L at ") : "",
           t->first >= 0 ? wf : "none", "", t->over, t->over_sep, t->sep_rows, t->max_leaf, t->max_sep);
}

/* v as JSON (null when not finite). */
static void json_num(const char *key, double v, const char *sep)
{
    if (isfinite(v)) printf("\"%s\": %.6e%s", key, v, sep);
    else printf("\"%s\": null%s", key, sep);
}

/* The JSON report's "stability" member (diag=1). */
static void stability_json(const extras *e)
{
    if (!e->diag) return;
    if (e->stab_note) {
        printf("\"stability\": {\"note\": ");
        cli_json_str(stdout, e->stab_note);
        printf("},\n");
        return;
    }
    const bsr_ilu_stab *t = &e->stab;
    const double n = t->n ? t->n : 1;
    printf("\"stability\": {");
    json_num("l_max", t->l_max, ", ");
    printf("\"l_row\": %d, \"l_pos\": %.4f, \"l_sep_level\": %d, ", t->l_src, t->l_at / n, t->l_sep_level);
    json_num("u_max", t->u_max, ", ");
    printf("\"u_row\": %d, \"u_pos\": %.4f, \"u_sep_level\": %d, ", t->u_src, t->u_at / n, t->u_sep_level);
    json_num("pivot_cond_max", t->piv_max, ", ");
    printf("\"pivot_row\": %d, \"pivot_pos\": %.4f, ", t->piv_src, t->piv_at / n);
    printf("\"thresh\": %g, \"first_row\": %d, \"first_pos\": %.4f, \"first_which\": \"%s\", \"first_sep_level\": %d, ",
           t->thresh, t->first_src, t->first >= 0 ? t->first / n : -1.0, t->first < 0 ? "" : t->first_which == 'U' ? "U" : "L",
           t->first_sep_level);
    printf("\"rows_over\": %d, \"rows_over_sep\": %d, \"sep_rows\": %d, ", t->over, t->over_sep, t->sep_rows);
    json_num("max_leaf", t->max_leaf, ", ");
    json_num("max_sep", t->max_sep, ", ");
    const int64_t *h[3] = {t->hist_l, t->hist_u, t->hist_piv};
    const char *hn[3] = {"hist_l", "hist_u", "hist_pivot"};
    for (int q = 0; q < 3; q++) {
        printf("\"%s\": [", hn[q]);
        for (int d = 0; d < BSR_STAB_DECADES; d++) printf("%lld%s", (long long)h[q][d], d + 1 < BSR_STAB_DECADES ? ", " : "");
        printf("]%s", q < 2 ? ", " : "");
    }
    printf("},\n");
}

static void report_text(const bsr_problem *P, const bsr_matrix_info *f, const char *cfg,
                        const char *backend, const bsr_solver_stats *st, bsr_status s,
                        const extras *e, int have_ref, int ref_ok, const char *hint, const char *why)
{
    printf("problem     %s\n", P->name);
    printf("            n = %lld, block %d x %d, %d block rows, %d blocks (%.1f per row)\n",
           (long long)f->n, f->b, f->b, f->nbrows, f->nnzb, f->mean_row_len);
    printf("solver      %s  [%s, %d thread%s]\n", cfg, backend, omp_get_max_threads(), omp_get_max_threads() > 1 ? "s" : "");
    printf("precond     %s\n", st->precond_info[0] ? st->precond_info : "-");
    if (st->fallbacks && !st->fallback_iterations)
        printf("fallback    %s: set up again as the options now say\n", st->fallback_reason);
    else if (st->fallbacks)
        printf("fallback    the first factor did not converge (%d iterations: %s): solved again from the initial "
               "guess by the fallback's stage the options now say (a new factor, two levels, or GMRES-DR on the first)\n",
               st->fallback_iterations, st->fallback_reason);
    printf("            fill %.2f (%lld blocks)%s\n", st->fill, (long long)st->pc_nnzb,
           st->pivots_regularized ? ", pivots regularized" : "");
    char fb[64] = "";   /* the fallback's setups, beside the first setup's */
    if (st->fallback_s > 0) snprintf(fb, sizeof fb, ", fallback setup %.3f s", st->fallback_s);
    printf("time        setup %.3f s%s, solve %.3f s, total %.3f s%s\n", st->setup_s, fb, st->solve_s,
           stats_total(st), e->warm ? "  (warm: after one untimed pass of each pipeline)" : "");
    if (st->dev_bytes > 0)   /* what a GPU holds after the setup: the largest problem a GPU takes */
        printf("memory      device %.3f GB after setup (%.0f bytes a block row), peak %.3f GB during it\n",
               st->dev_bytes / 1e9, f->nbrows ? st->dev_bytes / f->nbrows : 0.0, st->dev_peak_bytes / 1e9);
    int show = st->k <= 8 ? st->k : 8;
    printf("rhs  status      iters  restarts  true relres%s%s%s\n", e->err ? "   error vs exact" : "",
           e->est ? "  error estimate" : "", have_ref && ref_ok ? "   vs UMFPACK" : "");
    for (int j = 0; j < show; j++) {
        const bsr_col_stats *c = &st->col[j];
        printf("%3d  %-10s %6d  %8d  %11.3e", j, bsr_reason_string(c->reason), c->iterations, c->restarts,
               c->relres);
        if (e->err) printf("   %15.3e", e->err[j]);
        if (e->est) printf("  %s%13.3e", e->est_low ? ">" : " ", e->est[j]);
        if (have_ref && ref_ok) printf("   %11.3e", e->ref_diff[j]);
        printf("\n");
    }
    if (show < st->k) printf("  ... %d more right-hand sides (use --json for all)\n", st->k - show);
    if (e->est)
        printf("            error estimate: ||e|| / ||x|| with A e = r solved to rtol %g in %d iterations%s\n",
               BSR_ERREST_RTOL, e->est_its, e->est_low ? " (not reached: lower bounds)" : "");
    cli_col_notes(st);
    if (have_ref) {
        if (ref_ok)
            printf("UMFPACK     factor %.3f s, solve %.3f s, total %.3f s  (bsrsolve total %.3f s: %.2fx)\n",
                   e->umf_setup, e->umf_solve, e->umf_setup + e->umf_solve, stats_total(st),
                   (e->umf_setup + e->umf_solve) / stats_total(st));
        else
            printf("UMFPACK     failed: %s\n", bsr_last_error());
    }
    if (st->prof_calls[0] || st->prof_calls[2])
        printf("profile     setup: preconditioner (host) %.3f s, device uploads + analysis %.3f s, other %.3f s\n",
               st->setup_pc_s, st->setup_dev_s,
               (st->fallbacks ? st->fallback_s : st->setup_s) - st->setup_pc_s - st->setup_dev_s);
    if (st->prof_calls[0] || st->prof_calls[2])
        printf("profile     SpMM %.2f ms (%d, %.3f ms each), preconditioner %.2f ms (%d, %.3f ms each), updates %.2f ms (%d), "
               "reductions %.2f ms (%d)%s\n",
               1e3 * st->prof_s[0], st->prof_calls[0], st->prof_calls[0] ? 1e3 * st->prof_s[0] / st->prof_calls[0] : 0.0,
               1e3 * st->prof_s[1], st->prof_calls[1], st->prof_calls[1] ? 1e3 * st->prof_s[1] / st->prof_calls[1] : 0.0,
               1e3 * st->prof_s[2], st->prof_calls[2], 1e3 * st->prof_s[3], st->prof_calls[3],
               st->device ? " (device time by events; fused update + dot counted as reductions)" : "");
    profile_bound_line(st);
    if (e->steps) {
        printf("time steps  %d x (refactor + solve): median refactor %.3f s, solve %.3f s, step %.3f s (%d iterations)\n",
               e->steps, e->step_refactor, e->step_solve, e->step_refactor + e->step_solve, e->step_iters);
        if (e->step_measured || e->step_predicted)
            printf("            error control (etol): %d step(s) estimated the error, %d predicted it, %d corrected x\n",
                   e->step_measured, e->step_predicted, e->step_corrected);
        if (e->step_failed) printf("            %d step(s) failed: a column not converged\n", e->step_failed);
    }
    if (e->have_cus) {
        const bsr_cusparse_result *c = &e->cus;
        if (c->status == BSR_OK || c->status == BSR_ERR_NOCONV) {
            printf("cuSPARSE    ILU(0)+BiCGStab: setup %.3f s (factor %.3f s), solve %.3f s, total %.3f s, %d iterations, "
                   "true relres %.3e (%s)\n",
                   c->setup_s, c->factor_s, c->solve_s, c->setup_s + c->solve_s, c->iterations, c->relres,
                   c->status == BSR_OK ? "converged" : "not converged");
            printf("            bsrsolve vs cuSPARSE: total %.2fx, solve %.2fx", (c->setup_s + c->solve_s) / (st->setup_s + st->solve_s),
                   c->solve_s / st->solve_s);
            if (e->steps) printf(", time step (refactor + solve) %.2fx", (c->factor_s + c->solve_s) / (e->step_refactor + e->step_solve));
            printf("  (>1: bsrsolve faster)\n");
        } else {
            /* "failed: ..." when cuSPARSE ran and stopped (a zero pivot is its result), "not run: ..." without a device */
            printf("cuSPARSE    %s: %s\n", bsr_cusparse_outcome(c), c->message);
        }
    }
    stability_text(e);
    if (s != BSR_OK) printf("result      %s: %s\n", bsr_status_string(s), bsr_last_error());
    if (hint) print_hint(stdout, why, hint);
}

static void report_json(const bsr_problem *P, const bsr_matrix_info *f, const char *cfg,
                        const char *backend, const bsr_solver_stats *st, bsr_status s,
                        const extras *e, int have_ref, int ref_ok, const char *hint)
{
    int k = st->k;
    /* the name, config and backend come from the user (file names may hold any byte) */
    printf("{\n\"problem\": ");
    cli_json_str(stdout, P->name);
    printf(",\n\"n\": %lld,\n\"block\": %d,\n\"block_rows\": %d,\n\"nnzb\": %d,\n\"config\": ",
           (long long)f->n, f->b, f->nbrows, f->nnzb);
    cli_json_str(stdout, cfg);
    printf(",\n\"backend\": ");
    cli_json_str(stdout, backend);
    printf(",\n\"threads\": %d", omp_get_max_threads());   /* the host's OpenMP team (README: Threads) */
    printf(",\n\"k\": %d,\n\"result\": \"%s\",\n", k, bsr_status_string(s));
    cli_json_columns(st, k);
    cli_json_array_d("error_vs_exact", e->err, k, 1);
    if (e->est) {
        cli_json_array_d("error_estimate", e->est, k, 1);
        printf("\"error_estimate_iterations\": %d,\n\"error_estimate_lower_bound\": %s,\n", e->est_its,
               e->est_low ? "true" : "false");
    }
    cli_json_array_d("ref_rel_diff", have_ref && ref_ok ? e->ref_diff : NULL, k, 1);
    printf("\"warm\": %s,\n", e->warm ? "true" : "false");
    printf("\"setup_s\": %.6f,\n\"solve_s\": %.6f,\n\"fill\": %.4f,\n\"pc_nnzb\": %lld,\n", st->setup_s,
           st->solve_s, st->fill, (long long)st->pc_nnzb);
    if (st->fallback_s > 0) printf("\"fallback_s\": %.6f,\n", st->fallback_s);
    if (st->dev_bytes > 0)
        printf("\"device_bytes\": %.0f,\n\"device_bytes_per_block_row\": %.1f,\n\"device_peak_bytes\": %.0f,\n",
               st->dev_bytes, f->nbrows ? st->dev_bytes / f->nbrows : 0.0, st->dev_peak_bytes);
    if (have_ref && ref_ok)
        printf("\"umfpack_setup_s\": %.6f,\n\"umfpack_solve_s\": %.6f,\n", e->umf_setup, e->umf_solve);
    if (st->prof_copy_gbs > 0 && st->prof_krylov_s > 0)
        printf("\"profile\": {\"iter_bytes\": %.6e, \"krylov_bytes\": %.6e, \"copy_gbs\": %.1f, \"krylov_s\": %.6f, "
               "\"fraction_of_bound\": %.4f},\n", st->prof_iter_bytes, st->prof_bytes, st->prof_copy_gbs,
               st->prof_krylov_s, st->prof_bytes / (st->prof_copy_gbs * 1e9) / st->prof_krylov_s);
    if (e->steps)
        printf("\"steps\": %d,\n\"step_refactor_s\": %.6f,\n\"step_solve_s\": %.6f,\n\"steps_failed\": %d,\n"
               "\"steps_etol_measured\": %d,\n\"steps_etol_predicted\": %d,\n\"steps_etol_corrected\": %d,\n", e->steps,
               e->step_refactor, e->step_solve, e->step_failed, e->step_measured, e->step_predicted, e->step_corrected);
    if (e->have_cus) {
        const bsr_cusparse_result *c = &e->cus;
        printf("\"cusparse\": {\"status\": \"%s\", \"message\": ", bsr_cusparse_outcome(c));
        cli_json_str(stdout, c->message);
        printf(", \"iterations\": %d, \"true_relres\": %.6e, \"setup_s\": %.6f, \"factor_s\": %.6f, "
               "\"solve_s\": %.6f},\n",
               c->iterations, c->relres, c->setup_s, c->factor_s, c->solve_s);
    }
    stability_json(e);
    if (hint) {   /* the --config to try (ilu_hint) */
        printf("\"hint_config\": ");
        cli_json_str(stdout, hint);
        printf(",\n");
    }
    if (st->fallbacks) {
        printf("\"fallback\": {\"iterations\": %d, \"reason\": ", st->fallback_iterations);
        cli_json_str(stdout, st->fallback_reason);
        printf("},\n");
    }
    printf("\"precond_info\": ");
    cli_json_str(stdout, st->precond_info);
    printf(",\n\"version\": \"%s\"\n}\n", bsr_version());
}

/* --warm: one untimed setup + solve of each pipeline first, so the timed run
 * pays no one-time costs (kernel module loading, first allocations); A's
 * device copy is dropped afterwards so the timed setup uploads it again. */
static bsr_status warm_up(bsr_solver *S, const bsr_problem *P, const bsr_multivec *B, int cus,
                          const bsr_solver_options *opt)
{
    bsr_multivec *X = NULL;
    bsr_solver_stats st;
    memset(&st, 0, sizeof st);
    bsr_status s = bsr_multivec_create(&X, bsr_multivec_rows(B), bsr_multivec_cols(B), bsr_matrix_precision(P->A));
    if (!s) s = bsr_solver_setup(S, P->A);
    if (!s) {
        bsr_status ss = bsr_solver_solve(S, B, X, &st);
        if (ss != BSR_ERR_NOCONV && ss != BSR_ERR_BREAKDOWN) s = ss;
    }
    bsr_solver_stats_free(&st);
    bsr_multivec_destroy(X);
    bsr_cuda_matrix_release(P->A);
    if (!s && cus) {
        bsr_cusparse_result r;
        bsr_cusparse_run(P->A, B, opt->rtol, opt->maxit, &r);
    }
    return s;
}

int cmd_solve(int argc, char **argv)
{
    static const char *const valued[] = {"--gen", "--block", "--rhs", "--x0", "--out", "--backend", "--config",
                                         "--reference", "--compare", "--exact", "--plot", "--steps", NULL};
    static const char *const known[] = {"--json", "--float", "--warm", "--progress", "--no-progress",
                                        "--error-estimate", NULL};
    if (cli_check_options(argc, argv, known, valued)) { cli_usage_solve(stderr); return 2; }
    cli_progress(argc, argv, 1);
    int json = cli_flag(argc, argv, "--json");
    const char *ref = cli_opt(argc, argv, "--reference"), *cmp = cli_opt(argc, argv, "--compare");
    const char *backend = cli_opt(argc, argv, "--backend"), *rhs = cli_opt(argc, argv, "--rhs");
    if (ref && strcmp(ref, "umfpack")) { fprintf(stderr, "bsrsolve: --reference takes umfpack\n"); return 2; }
    if (cmp && strcmp(cmp, "cusparse")) { fprintf(stderr, "bsrsolve: --compare takes cusparse\n"); return 2; }
    if (backend && strcmp(backend, "cpu") && strcmp(backend, "cuda")) {
        fprintf(stderr, "bsrsolve: --backend takes cpu or cuda\n");
        return 2;
    }
    if (cli_check_rhs(rhs, 1)) return 2;   /* before the matrix is read */

    /* benchmark knob (issue 22): the Krylov methods' separate update and dot
     * calls instead of the fused ones, to time one against the other */
    const char *unf = getenv("BSR_KRYLOV_UNFUSED");
    if (unf && unf[0] == '1') bsr_kops_set_unfused(1);

    bsr_solver_options opt;
    bsr_solver_options_default(&opt);
    opt.progress = 100;
    if (cli_flag(argc, argv, "--float")) opt.precision = opt.precond_precision = BSR_FLOAT; /* --config may override */
    bsr_status s = bsr_solver_options_parse(&opt, cli_opt(argc, argv, "--config"));
    if (!s) s = bsr_solver_options_check(&opt); /* before the matrix is read */
    if (s) return cli_fail(s);
    if (cli_opt(argc, argv, "--plot")) opt.history = 1;

    bsr_problem P;
    s = cli_load(cli_positional(argc, argv, valued), cli_opt(argc, argv, "--gen"), cli_opt(argc, argv, "--block"),
                 cli_flag(argc, argv, "--float") ? BSR_FLOAT : BSR_DOUBLE, CLI_DEFAULT_PROBLEM, &P, NULL);
    if (s) return cli_fail(s);
    bsr_matrix_info f;
    bsr_matrix_get_info(P.A, &f);
    bsr_precision prec = bsr_matrix_precision(P.A);
    bsr_multivec *B = NULL, *X = NULL, *Xex = NULL, *Xref = NULL;
    bsr_solver *S = NULL;
    bsr_context *ctx = NULL;
    bsr_solver_stats st;
    memset(&st, 0, sizeof st);
    extras e;
    memset(&e, 0, sizeof e);
    int rc = 1, have_ref = 0, ref_ok = 0;

    /* right-hand sides and the exact solution when known */
    const bsr_multivec *xex = NULL;
    if (!rhs && P.rhs) {
        B = P.rhs;
        xex = P.xexact;
    } else if (!rhs || !strcmp(rhs, "ones")) {
        if ((s = bsr_multivec_create(&B, f.n, 1, prec)) || (s = bsr_multivec_fill(B, 1.0))) goto fail;
    } else if (!strncmp(rhs, "random:", 7)) {
        char *end;
        long k = strtol(rhs + 7, &end, 10);
        if (*end || k < 1 || k > 64) { fprintf(stderr, "bsrsolve: --rhs random:K needs K in 1..64\n"); rc = 2; goto out; }
        if ((s = bsr_multivec_create(&B, f.n, (int)k, prec)) || (s = bsr_multivec_random(B, 12345))) goto fail;
    } else if ((s = cli_read_dense(rhs, f.n, prec, 0, &B))) {
        goto fail;
    }
    int k = bsr_multivec_cols(B);
    const char *exf = cli_opt(argc, argv, "--exact");
    if (exf) {
        if ((s = cli_read_dense(exf, f.n, BSR_DOUBLE, k, &Xex))) goto fail;
        xex = Xex;
    }
    if (xex && bsr_multivec_cols(xex) != k) xex = NULL;
    const char *x0 = cli_opt(argc, argv, "--x0");
    if (x0) {
        if ((s = cli_read_dense(x0, f.n, prec, k, &X))) goto fail;
    } else if ((s = bsr_multivec_create(&X, f.n, k, prec)) || (s = bsr_multivec_fill(X, 0.0))) {
        goto fail; /* filled: written like a user's array, so the solve pays no first-touch faults */
    }

    /* backend */
    int want_cuda = backend ? !strcmp(backend, "cuda") : bsr_device_count() > 0;
    if (want_cuda && (s = cli_cuda_context(&ctx))) goto fail;
    const char *bname = want_cuda ? bsr_context_describe(ctx) : "cpu";

    if ((s = bsr_solver_create(&S, ctx, &opt))) goto fail;
    if (!json)
        printf("bsrsolve: %s, n = %lld, b = %d, %d right-hand side%s; setting up...\n", P.name, (long long)f.n,
               f.b, k, k > 1 ? "s" : "");
    fflush(stdout);
    e.warm = cli_flag(argc, argv, "--warm");
    if (e.warm && (s = warm_up(S, &P, B, cmp != NULL, &opt))) goto fail;
    char hintbuf[600];
    if ((s = bsr_solver_setup(S, P.A))) {
        rc = cli_fail(s);
        const char *why, *h = ilu_hint(&opt, NULL, cli_opt(argc, argv, "--config"), P.A, s == BSR_ERR_SINGULAR, 0,
                                       hintbuf, sizeof hintbuf, &why);
        if (h) print_hint(stderr, why, h);
        goto out;
    }
    bsr_status ss = bsr_solver_solve(S, B, X, &st);
    if (ss != BSR_OK && ss != BSR_ERR_NOCONV && ss != BSR_ERR_BREAKDOWN) { s = ss; goto fail; }
    char errbuf[1024];
    snprintf(errbuf, sizeof errbuf, "%s", bsr_last_error());
    const char *steps = cli_opt(argc, argv, "--steps");
    if (steps) {
        char *end;
        long ns = strtol(steps, &end, 10);
        if (*end || ns < 1 || ns > 1000) { fprintf(stderr, "bsrsolve: --steps takes 1..1000\n"); rc = 2; goto out; }
        double tr[1000], ts[1000];
        bsr_multivec *X2 = NULL;
        if ((s = bsr_multivec_create(&X2, f.n, k, prec))) goto fail;
        for (long i = 0; i < ns; i++) {
            bsr_solver_stats s2;
            double t0 = bsr_now();
            if ((s = bsr_solver_refactor(S, P.A))) { bsr_multivec_destroy(X2); goto fail; }
            tr[i] = bsr_now() - t0;
            bsr_multivec_fill(X2, 0.0); /* every step from zero: comparable with the first solve */
            e.step_failed += bsr_solver_solve(S, B, X2, &s2) != BSR_OK;
            ts[i] = s2.solve_s;
            e.step_iters = 0;
            int meas = 0, pred = 0, corr = 0;
            for (int j = 0; j < s2.k; j++) {
                const bsr_col_stats *c = &s2.col[j];
                if (c->iterations > e.step_iters) e.step_iters = c->iterations;
                pred |= c->err_predicted;
                meas |= !c->err_predicted && (c->err_its > 0 || c->err_est > 0);
                corr |= c->err_rounds > 0;
            }
            e.step_measured += meas;
            e.step_predicted += pred && !meas;   /* (every converged column predicted, or none) */
            e.step_corrected += corr;
            bsr_solver_stats_free(&s2);
        }
        bsr_multivec_destroy(X2);
        e.steps = (int)ns;
        e.step_refactor = bsr_median(tr, (int)ns);
        e.step_solve = bsr_median(ts, (int)ns);
    }

    if (xex) {
        e.err = malloc(sizeof(double) * (size_t)k);
        if (!e.err || (s = rel_diff(X, xex, e.err))) goto fail;
    }
    if (cli_flag(argc, argv, "--error-estimate")) {
        if (!(e.est = malloc(sizeof(double) * (size_t)k))) { s = BSR_ERR_NOMEM; goto fail; }
        bsr_status se = bsr_solver_error_estimate(S, B, X, e.est, &e.est_its);
        if (se == BSR_ERR_NOCONV || se == BSR_ERR_BREAKDOWN) e.est_low = 1;
        else if (se) { s = se; goto fail; }
    }
    if (ref) {
        have_ref = 1;
        double t[2];
        e.ref_diff = malloc(sizeof(double) * (size_t)k);
        if (e.ref_diff && !bsr_multivec_create(&Xref, f.n, k, BSR_DOUBLE) &&
            bsr_umfpack_solve(P.A, B, Xref, t) == BSR_OK && rel_diff(X, Xref, e.ref_diff) == BSR_OK) {
            ref_ok = 1;
            e.umf_setup = t[0];
            e.umf_solve = t[1];
        } else if (!json) {
            fprintf(stderr, "bsrsolve: UMFPACK reference failed: %s\n", bsr_last_error());
        }
    }
    if (cmp) {
        e.have_cus = 1;
        bsr_cusparse_run(P.A, B, opt.rtol, opt.maxit, &e.cus);
    }
    if (opt.diag) stability_compute(S, &e);
    char cfg[512];
    opt.cap = bsr_solver_get_options(S)->cap;   /* as the setup resolved it: the printed options reproduce the run */
    if (st.fallbacks) opt = *bsr_solver_get_options(S);   /* and as the fallback set it up again, all of them */
    bsr_solver_options_string(&opt, cfg, sizeof cfg);
    if (ss != BSR_OK) bsr_error(ss, "%s", errbuf);
    const char *why, *hint = ilu_hint(&opt, S, cli_opt(argc, argv, "--config"), P.A,
                                      ss == BSR_ERR_BREAKDOWN || ss == BSR_ERR_NOCONV ||
                                          (ss != BSR_OK && st.pivots_regularized > 0),
                                      st.fallback_s > 0 ? 1 + !!strstr(errbuf, "work bound") : 0,
                                      hintbuf, sizeof hintbuf, &why);
    if (json) report_json(&P, &f, cfg, bname, &st, ss, &e, have_ref, ref_ok, hint);
    else report_text(&P, &f, cfg, bname, &st, ss, &e, have_ref, ref_ok, hint, why);
    const char *outf = cli_opt(argc, argv, "--out");
    if (outf && (s = cli_write_dense(outf, X))) goto fail;
    rc = ss == BSR_OK ? 0 : 3;
    /* a plot that was asked for and not written is an error, whatever the solve did */
    if (cli_opt(argc, argv, "--plot") && plot_history(cli_opt(argc, argv, "--plot"), &st, P.name)) rc = 1;
    goto out;
fail:
    rc = cli_fail(s);
out:
    bsr_solver_stats_free(&st);
    bsr_solver_destroy(S);
    if (B != P.rhs) bsr_multivec_destroy(B);
    bsr_multivec_destroy(X);
    bsr_multivec_destroy(Xex);
    bsr_multivec_destroy(Xref);
    free(e.err);
    free(e.est);
    free(e.ref_diff);
    bsr_problem_free(&P);
    bsr_context_destroy(ctx); /* after the objects living on it */
    return rc;
}
