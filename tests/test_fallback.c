/* SPDX-License-Identifier: BSD-3-Clause */
/* options.fallback (on by default): a solve whose capped ILU2 factor does
 * not converge is set up again as the complete block LU factored on the
 * host, or (where that stage is left out) without the cap, with
 * growth-weighted dropping, and solved from the same initial guess,
 * that factor kept for later solves and refactors; an uncapped factor
 * without growth weights is set up again as the complete one, or with
 * growth weights in its own order, and
 * where that leaves it as it was there is no second solve; off never falls
 * back, and an uncapped growth-weighted factor, or one that converges, has
 * nothing to fall back from.  A fallback whose setup passes its work bound
 * (option work) leaves the solver as it was and reports the first failure.
 * On a GPU: the device's default cap, and cap=none, fall back first to the
 * complete block LU factored on the device, then as on the host.  The probe's two rules on
 * residual sequences made up for them. */
#include "harness.h"
#include "solver_impl.h"
#include <math.h>
#include <string.h>

/* coupled3d at 12^3, couple 0.45: the capped ILU2 (cap=auto) does not
 * converge in 300 iterations, the uncapped one in about 25 */
#define HARD "coupled3d:12,5,couple=0.45"
/* coupled3d at 16^3, b = 4, couple 0.5: the uncapped ILU2 without growth
 * weights (the CPU's default) stays at relative residual 1e2 after 300
 * iterations; with grow=1 (a growth-weighted refactorization) it converges
 * in about 15 */
#define HARD_UNCAPPED "coupled3d:16,4,couple=0.5"

/* Solve P with s from X = x0 (NULL: zero); stats into st; returns the status. */
static bsr_status solve(bsr_solver *s, const bsr_problem *P, const bsr_multivec *x0, bsr_multivec *X,
                        bsr_solver_stats *st)
{
    if (x0) BSR_ASSERT_OK(bsr_multivec_copy(X, x0));
    else BSR_ASSERT_OK(bsr_multivec_fill(X, 0));
    memset(st, 0, sizeof *st);
    return bsr_solver_solve(s, P->rhs, X, st);
}

/* Largest |X - xexact| over |xexact|'s largest. */
static double error_vs_exact(const bsr_problem *P, const bsr_multivec *X)
{
    const double *x = bsr_multivec_cdata(X), *e = bsr_multivec_cdata(P->xexact);
    double d = 0, m = 0;
    for (int64_t i = 0; i < bsr_multivec_rows(X); i++) {
        d = fmax(d, fabs(x[i] - e[i]));
        m = fmax(m, fabs(e[i]));
    }
    return d / m;
}

/* A problem with two solvers side by side on it: s with the options under
 * test, u with the fallback off, and a solution vector each (X, Y). */
typedef struct {
    bsr_problem P;
    int64_t n;
    bsr_multivec *X, *Y;
    bsr_solver *s, *u;
} pair;

/* t for spec, s set up with cfg, u with cfg_off. */
static void pair_open(pair *t, const char *spec, const char *cfg, const char *cfg_off)
{
    BSR_ASSERT_OK(bsr_generate(spec, BSR_DOUBLE, &t->P));
    t->n = bsr_multivec_rows(t->P.rhs);
    BSR_ASSERT_OK(bsr_multivec_create(&t->X, t->n, 1, BSR_DOUBLE));
    BSR_ASSERT_OK(bsr_multivec_create(&t->Y, t->n, 1, BSR_DOUBLE));
    t->s = bsr_test_solver(NULL, cfg, t->P.A);
    t->u = bsr_test_solver(NULL, cfg_off, t->P.A);
}

static void pair_close(pair *t)
{
    bsr_solver_destroy(t->s);
    bsr_solver_destroy(t->u);
    bsr_multivec_destroy(t->X);
    bsr_multivec_destroy(t->Y);
    bsr_problem_free(&t->P);
}

/* 1 when X and Y hold the same bits. */
static int pair_same(const pair *t)
{
    return !memcmp(bsr_multivec_cdata(t->X), bsr_multivec_cdata(t->Y), sizeof(double) * (size_t)t->n);
}

/* spec's problem solved from a random x0 (seed) by a solver of cfg whose
 * first factor the probe gives up: the fallback converges in fewer than
 * max_its iterations to the exact solution, bit for bit as a fresh solver
 * of the options the fallback took (fresh) solves it from x0; the next
 * solve falls back no more.  Returns the solver (its options for the
 * caller to check; the caller destroys it). */
static bsr_solver *fallback_matches(const bsr_problem *P, const char *cfg, const char *fresh, uint64_t seed,
                                    int max_its)
{
    const int64_t n = bsr_multivec_rows(P->rhs);
    bsr_multivec *x0, *X, *Y;
    BSR_ASSERT_OK(bsr_multivec_create(&x0, n, 1, BSR_DOUBLE));
    BSR_ASSERT_OK(bsr_multivec_create(&X, n, 1, BSR_DOUBLE));
    BSR_ASSERT_OK(bsr_multivec_create(&Y, n, 1, BSR_DOUBLE));
    BSR_ASSERT_OK(bsr_multivec_random(x0, seed));
    bsr_solver *s = bsr_test_solver(NULL, cfg, P->A);
    bsr_solver_stats st;
    BSR_ASSERT_OK(solve(s, P, x0, X, &st));
    CU_ASSERT_EQUAL(st.fallbacks, 1);
    CU_ASSERT(st.fallback_s > 0);   /* the second setup's time, beside the first's */
    /* the probe gave the first solve up: no halving in its first iterations */
    CU_ASSERT_EQUAL(st.fallback_iterations, BSR_FALLBACK_PROBE);
    CU_ASSERT_PTR_NOT_NULL(strstr(st.fallback_reason, "stagnated"));
    /* the fallback's factor: growth-weighted, or complete (nothing dropped) */
    CU_ASSERT_PTR_NOT_NULL(strstr(st.precond_info, strstr(fresh, "grow=1") ? "growth-weighted refactorization"
                                                                           : ", 0 dropped"));
    CU_ASSERT(st.col[0].iterations < max_its);
    CU_ASSERT(error_vs_exact(P, X) < 1e-6);
    bsr_solver_stats_free(&st);
    bsr_solver *u = bsr_test_solver(NULL, fresh, P->A);
    BSR_ASSERT_OK(solve(u, P, x0, Y, &st));
    CU_ASSERT_EQUAL(st.fallbacks, 0);
    bsr_solver_stats_free(&st);
    CU_ASSERT_EQUAL(memcmp(bsr_multivec_cdata(X), bsr_multivec_cdata(Y), sizeof(double) * (size_t)n), 0);
    BSR_ASSERT_OK(solve(s, P, NULL, X, &st));
    CU_ASSERT_EQUAL(st.fallbacks, 0);
    CU_ASSERT(st.col[0].iterations < max_its);
    bsr_solver_stats_free(&st);
    bsr_solver_destroy(u);
    bsr_multivec_destroy(x0); bsr_multivec_destroy(X); bsr_multivec_destroy(Y);
    return s;
}

/* A refactor of s on P's values keeps the fallback's factor: the next solve
 * falls back no more and converges in fewer than max_its iterations. */
static void refactor_keeps(bsr_solver *s, const bsr_problem *P, int max_its)
{
    bsr_multivec *X;
    BSR_ASSERT_OK(bsr_multivec_create(&X, bsr_multivec_rows(P->rhs), 1, BSR_DOUBLE));
    BSR_ASSERT_OK(bsr_solver_refactor(s, P->A));
    bsr_solver_stats st;
    BSR_ASSERT_OK(solve(s, P, NULL, X, &st));
    CU_ASSERT_EQUAL(st.fallbacks, 0);
    CU_ASSERT(st.col[0].iterations < max_its);
    bsr_solver_stats_free(&st);
    bsr_multivec_destroy(X);
}

/* The default (fallback on): the capped solve fails, and the complete
 * block LU factored on the host (the CPU backend's first stage, as the
 * device's is on the device) solves the columns again from the initial
 * guess, bit for bit as a fresh solver with its options solves them; the
 * solver keeps that factor (its options say so, with the host's work bound)
 * for the next solve and refactor, which fall back no more. */
static void test_on(void)
{
    bsr_problem P;
    BSR_ASSERT_OK(bsr_generate(HARD, BSR_DOUBLE, &P));
    bsr_solver *s = fallback_matches(&P, "precond=ilu2,cap=auto,rtol=1e-8,maxit=300",
                                     "precond=ilu2,tau1=0,tau2=0,cap=none,factor=cpu,reorder=metis,lift=1,"
                                     "work=2e12,fallback=off,rtol=1e-8,maxit=300", 5, 3);
    const bsr_solver_options *o = bsr_solver_get_options(s);
    CU_ASSERT(o->cap == BSR_ILU_CAP_NONE && o->tau1 == 0 && o->tau2 == 0 && o->grow == 0);
    CU_ASSERT_EQUAL(o->factor, BSR_FACTOR_CPU);
    CU_ASSERT_STRING_EQUAL(o->reorder, "metis,lift=1");
    CU_ASSERT_EQUAL(o->work, BSR_FALLBACK_WORK_COMPLETE);
    refactor_keeps(s, &P, 3);
    bsr_solver_destroy(s);
    bsr_problem_free(&P);
}

/* A fill bound of the user's (fill=2) is not carried into the complete
 * factor, which keeps every block: on a small instance whose capped factor
 * under that bound stagnates, the fallback converges in one or two
 * iterations, nothing dropped, its options saying fill=0. */
static void test_complete_fill(void)
{
    bsr_problem P;
    BSR_ASSERT_OK(bsr_generate("coupled3d:8,5,couple=0.8", BSR_DOUBLE, &P));
    bsr_multivec *X;
    BSR_ASSERT_OK(bsr_multivec_create(&X, bsr_multivec_rows(P.rhs), 1, BSR_DOUBLE));
    bsr_solver *s = bsr_test_solver(NULL, "precond=ilu2,cap=auto,fill=2,rtol=1e-8,maxit=300", P.A);
    bsr_solver_stats st;
    BSR_ASSERT_OK(solve(s, &P, NULL, X, &st));
    CU_ASSERT(st.fallbacks == 1 && st.col[0].iterations <= 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(st.precond_info, ", 0 dropped"));
    CU_ASSERT(bsr_solver_get_options(s)->fill == 0 && bsr_solver_get_options(s)->tau1 == 0);
    CU_ASSERT(error_vs_exact(&P, X) < 1e-9);
    bsr_solver_stats_free(&st);
    bsr_solver_destroy(s);
    bsr_multivec_destroy(X);
    bsr_problem_free(&P);
}

/* Without the complete factor's stage (a test switch: on HARD the complete
 * factor's work, 1e9 block multiply-adds, is below the uncapped one's, so
 * no work bound passes over it alone): the capped solve fails (and so do
 * two levels on it: test_bound sees them tried), the columns are solved
 * again from the initial guess without the cap, bit for bit as a fresh
 * solver with cap=none,grow=1,factor=cpu,reorder=nd:auto,leafnd=1 solves
 * them; the solver keeps that factor for the next solve and refactor. */
static void test_on_uncapped(void)
{
    bsr_problem P;
    BSR_ASSERT_OK(bsr_generate(HARD, BSR_DOUBLE, &P));
    bsr_solver_test_complete_stage(0);
    bsr_solver *s = fallback_matches(&P, "precond=ilu2,cap=auto,rtol=1e-8,maxit=300",
                                     "precond=ilu2,cap=none,grow=1,factor=cpu,reorder=nd:auto,leafnd=1,rtol=1e-8,"
                                     "maxit=300", 5, 100);
    bsr_solver_test_complete_stage(1);
    CU_ASSERT_EQUAL(bsr_solver_get_options(s)->cap, BSR_ILU_CAP_NONE);
    CU_ASSERT_EQUAL(bsr_solver_get_options(s)->grow, 1);
    CU_ASSERT_EQUAL(bsr_solver_get_options(s)->factor, BSR_FACTOR_CPU);
    CU_ASSERT_STRING_EQUAL(bsr_solver_get_options(s)->reorder, "nd:auto,leafnd=1");
    CU_ASSERT_EQUAL(bsr_solver_get_options(s)->work, BSR_FALLBACK_WORK);
    refactor_keeps(s, &P, 100);
    bsr_solver_destroy(s);
    bsr_problem_free(&P);
}

/* An uncapped factor (the CPU's default, cap=none) that does not converge:
 * the probe gives it up, and the complete factor on the host solves it from
 * the initial guess, bit for bit as a fresh solver of its options; without
 * that stage (the test switch) it is set up again with grow=1 in its own
 * order, bit for bit as a fresh solver with grow=1 solves it.  The options
 * say so.  (A first factor that is complete already goes to growth weights:
 * test_first.) */
static void test_uncapped(void)
{
    bsr_problem P;
    BSR_ASSERT_OK(bsr_generate(HARD_UNCAPPED, BSR_DOUBLE, &P));
    bsr_solver *s = fallback_matches(&P, "precond=ilu2,cap=none,rtol=1e-8,maxit=300",
                                     "precond=ilu2,tau1=0,tau2=0,cap=none,factor=cpu,reorder=metis,lift=1,"
                                     "work=2e12,fallback=off,rtol=1e-8,maxit=300", 7, 3);
    CU_ASSERT(bsr_solver_get_options(s)->tau1 == 0 && bsr_solver_get_options(s)->grow == 0);
    CU_ASSERT_STRING_EQUAL(bsr_solver_get_options(s)->reorder, "metis,lift=1");
    CU_ASSERT_EQUAL(bsr_solver_get_options(s)->work, BSR_FALLBACK_WORK_COMPLETE);
    bsr_solver_destroy(s);
    bsr_solver_test_complete_stage(0);
    s = fallback_matches(&P, "precond=ilu2,cap=none,rtol=1e-8,maxit=300",
                         "precond=ilu2,cap=none,grow=1,rtol=1e-8,maxit=300", 7, 50);
    bsr_solver_test_complete_stage(1);
    CU_ASSERT_EQUAL(bsr_solver_get_options(s)->cap, BSR_ILU_CAP_NONE);
    CU_ASSERT_EQUAL(bsr_solver_get_options(s)->grow, 1);
    CU_ASSERT_EQUAL(bsr_solver_get_options(s)->reorder[0], 0);   /* its own order */
    CU_ASSERT_EQUAL(bsr_solver_get_options(s)->work, BSR_FALLBACK_WORK);
    bsr_solver_destroy(s);
    bsr_problem_free(&P);
}

/* On a structurally nonsymmetric A the complete factor's pattern is the
 * rows' own, its work not known before them, so it takes the rows' bound:
 * HARD_UNCAPPED without its block (0, 1), whose uncapped factor fails as
 * before, falls back to the complete factor under BSR_FALLBACK_WORK (the
 * pattern's symmetric form under BSR_FALLBACK_WORK_COMPLETE, unless a
 * matching permutes its rows), which solves it in one or two iterations. */
static void test_complete_nonsymmetric(void)
{
    bsr_problem P;
    BSR_ASSERT_OK(bsr_generate(HARD_UNCAPPED, BSR_DOUBLE, &P));
    const int n = bsr_matrix_nbrows(P.A), b = bsr_matrix_block(P.A), nnzb = bsr_matrix_nnzb(P.A);
    const int *rp = bsr_matrix_rowptr(P.A), *ci = bsr_matrix_colind(P.A);
    const double *v = bsr_matrix_values(P.A);
    int *rq = malloc(sizeof(int) * ((size_t)n + 1)), *cj = malloc(sizeof(int) * (size_t)nnzb);
    double *w = malloc(sizeof(double) * (size_t)nnzb * b * b);
    int q = 0;
    for (int i = 0; i < n; i++) {
        rq[i] = q;
        for (int p = rp[i]; p < rp[i + 1]; p++) {
            if (i == 0 && ci[p] == 1) continue;   /* (0, 1) left out, (1, 0) kept */
            cj[q] = ci[p];
            memcpy(w + (size_t)q * b * b, v + (size_t)p * b * b, sizeof(double) * b * b);
            q++;
        }
    }
    rq[n] = q;
    CU_ASSERT_EQUAL(q, nnzb - 1);
    bsr_matrix *A;
    BSR_ASSERT_OK(bsr_matrix_create(&A, n, n, b, rq, cj, w, BSR_DOUBLE, 0));
    free(rq); free(cj); free(w);
    bsr_solver_options mo;
    bsr_solver_options_default(&mo);
    mo.precond = BSR_PC_ILU2;
    CU_ASSERT(!bsr_complete_known(&mo, A) && bsr_complete_known(&mo, P.A));
    /* a matching permutes the rows: the symmetric P.A's matched pattern is not known symmetric;
     * auto on its regular diagonal applies none */
    mo.match = BSR_MATCH_MPT;
    CU_ASSERT(bsr_match_applies(&mo, P.A) && !bsr_complete_known(&mo, P.A));
    mo.match = BSR_MATCH_AUTO;
    CU_ASSERT(!bsr_match_applies(&mo, P.A) && bsr_complete_known(&mo, P.A));
    bsr_multivec *X;
    BSR_ASSERT_OK(bsr_multivec_create(&X, bsr_multivec_rows(P.rhs), 1, BSR_DOUBLE));
    bsr_solver *s = bsr_test_solver(NULL, "precond=ilu2,cap=none,rtol=1e-8,maxit=300", A);
    bsr_solver_stats st;
    BSR_ASSERT_OK(bsr_solver_solve(s, P.rhs, X, &st));
    CU_ASSERT(st.fallbacks == 1 && st.col[0].iterations <= 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(st.precond_info, ", 0 dropped"));
    const bsr_solver_options *o = bsr_solver_get_options(s);
    CU_ASSERT(o->tau1 == 0 && o->work == BSR_FALLBACK_WORK);
    bsr_solver_stats_free(&st);
    bsr_solver_destroy(s);
    bsr_multivec_destroy(X);
    bsr_matrix_destroy(A);
    bsr_problem_free(&P);
}

/* An uncapped factor whose growth stays below grow's trigger (a Poisson
 * system, stopped by maxit), the complete factor's stage left out (the test
 * switch): the growth-weighted setup is that factor again,
 * so there is no second solve; the first failure is reported saying so, bit
 * for bit the solve with fallback=off, the options as before; the next
 * solve does not try again.  With the complete factor's stage (the default)
 * the complete factor solves it in one iteration. */
static void test_unchanged(void)
{
    pair t;
    bsr_solver_test_complete_stage(0);
    pair_open(&t, "stencil3d:12:4", "precond=ilu2,cap=none,rtol=1e-12,maxit=2",
              "precond=ilu2,cap=none,rtol=1e-12,maxit=2,fallback=off");
    bsr_solver_stats st, su;
    for (int round = 0; round < 2; round++) {
        CU_ASSERT_EQUAL(solve(t.s, &t.P, NULL, t.X, &st), BSR_ERR_NOCONV);
        CU_ASSERT_EQUAL(strstr(bsr_last_error(), "growth weights left the factor as it was") != NULL, round == 0);
        CU_ASSERT_EQUAL(st.fallbacks, 0);
        CU_ASSERT_EQUAL(st.fallback_s > 0, round == 0);
        CU_ASSERT_EQUAL(bsr_solver_get_options(t.s)->grow, 0);
        CU_ASSERT_EQUAL(bsr_solver_get_options(t.s)->work, 0);
        CU_ASSERT_EQUAL(solve(t.u, &t.P, NULL, t.Y, &su), BSR_ERR_NOCONV);
        CU_ASSERT(pair_same(&t));
        bsr_solver_stats_free(&st);
        bsr_solver_stats_free(&su);
    }
    bsr_solver_test_complete_stage(1);
    pair_close(&t);
    pair_open(&t, "stencil3d:12:4", "precond=ilu2,cap=none,rtol=1e-12,maxit=2",
              "precond=ilu2,cap=none,rtol=1e-12,maxit=2,fallback=off");
    BSR_ASSERT_OK(solve(t.s, &t.P, NULL, t.X, &st));
    CU_ASSERT(st.fallbacks == 1 && st.col[0].iterations == 1);
    CU_ASSERT_EQUAL(bsr_solver_get_options(t.s)->tau1, 0);
    bsr_solver_stats_free(&st);
    pair_close(&t);
}

/* No fallback: off, no cap with growth weights, ILU(0), and a capped factor
 * that converges. */
static void test_none(void)
{
    static const struct { const char *spec, *cfg; bsr_status want; } c[] = {
        {HARD, "precond=ilu2,cap=auto,rtol=1e-8,maxit=300,fallback=off", BSR_ERR_NOCONV},
        {HARD, "precond=ilu2,cap=none,grow=1,rtol=1e-8,maxit=3,fallback=on", BSR_ERR_NOCONV},
        {HARD, "precond=ilu0,rtol=1e-8,maxit=30,fallback=on", BSR_ERR_NOCONV},
        {"coupled3d:10,5", "precond=ilu2,cap=auto,rtol=1e-8,maxit=300,fallback=on", BSR_OK},
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        bsr_problem P;
        BSR_ASSERT_OK(bsr_generate(c[i].spec, BSR_DOUBLE, &P));
        bsr_multivec *X;
        BSR_ASSERT_OK(bsr_multivec_create(&X, bsr_multivec_rows(P.rhs), 1, BSR_DOUBLE));
        bsr_solver *s = bsr_test_solver(NULL, c[i].cfg, P.A);
        const int cap = bsr_solver_get_options(s)->cap;
        bsr_solver_stats st;
        bsr_status r = solve(s, &P, NULL, X, &st);
        if (r != c[i].want) printf("\n  %s %s: status %d\n", c[i].spec, c[i].cfg, (int)r);
        CU_ASSERT_EQUAL(r, c[i].want);
        CU_ASSERT_EQUAL(st.fallbacks, 0);
        CU_ASSERT_EQUAL(bsr_solver_get_options(s)->cap, cap);
        bsr_solver_stats_free(&st);
        bsr_solver_destroy(s);
        bsr_multivec_destroy(X);
        bsr_problem_free(&P);
    }
}

/* The fallback past its work bound: the complete factor's setup (the host
 * chain's first stage) stops, two levels on the capped factor under
 * flexible GMRES-DR and under BiCGStab are probed and given up, in that
 * order, the setup without the
 * cap stops, the last two levels' solve is the answer (the first setup's
 * seconds reported), the solver goes on with the capped factor (kept
 * aside, not set up again: the next solve reports the first setup's
 * seconds too), and the failure is reported, the message saying why there
 * was no solve after the two levels';
 * its next solve does not try again (no probe, no fallback time: bit for bit
 * the solve with fallback=off), until a new setup.  The bound 1e8 lies
 * between the capped factor's work (2.9e7 multiply-adds) and the complete
 * and uncapped ones' (1.0e9, 1.4e9). */
static void test_bound(void)
{
    pair t;
    pair_open(&t, HARD, "precond=ilu2,cap=auto,rtol=1e-8,maxit=300,work=1e8",
              "precond=ilu2,cap=auto,rtol=1e-8,maxit=300,fallback=off");
    bsr_solver_stats st, su;
    double setup0 = -1;
    for (int round = 0; round < 3; round++) {
        if (round == 2) BSR_ASSERT_OK(bsr_solver_setup(t.s, t.P.A));   /* a new setup tries it again */
        CU_ASSERT_EQUAL(solve(t.s, &t.P, NULL, t.X, &st), BSR_ERR_NOCONV);
        const int tried = round != 1;
        CU_ASSERT_EQUAL(strstr(bsr_last_error(), "no fallback") != NULL, tried);
        CU_ASSERT_EQUAL(strstr(bsr_last_error(), "work bound, 1e+08 block multiply-adds") != NULL, tried);
        CU_ASSERT_EQUAL(strstr(bsr_last_error(), "the setup of the complete factor on the host failed") != NULL, tried);
        const char *t2 = strstr(bsr_last_error(), "nor two levels'");
        const char *t2dr = strstr(bsr_last_error(), "nor flexible GMRES-DR's on two levels");
        CU_ASSERT_EQUAL(t2 != NULL, tried);
        CU_ASSERT_EQUAL(t2dr != NULL && t2dr < t2, tried);
        CU_ASSERT_EQUAL(st.fallbacks, tried);        /* the last two levels' solve, given up */
        CU_ASSERT_EQUAL(st.fallback_s > 0, tried);   /* two levels' setup and the stopped one */
        if (round == 0) setup0 = st.setup_s;
        if (round == 1) CU_ASSERT_EQUAL(st.setup_s, setup0);   /* the first factor's, not a second setup's */
        if (tried) {
            CU_ASSERT_EQUAL(st.fallback_iterations, 100);   /* the first solve's probe */
            CU_ASSERT(st.col[0].iterations < 300 && !bsr_reason_converged(st.col[0].reason));
        } else {
            CU_ASSERT_EQUAL(st.col[0].iterations, 300);
            CU_ASSERT_EQUAL(st.col[0].reason, BSR_DIVERGED_MAXIT);
        }
        CU_ASSERT_EQUAL(bsr_solver_get_options(t.s)->coarse, 0);
        CU_ASSERT_EQUAL(bsr_solver_get_options(t.s)->cap, 0);   /* the capped options again */
        CU_ASSERT_EQUAL(bsr_solver_get_options(t.s)->grow, 0);
        CU_ASSERT_EQUAL(bsr_solver_get_options(t.s)->reorder[0], 0);
        CU_ASSERT_EQUAL(solve(t.u, &t.P, NULL, t.Y, &su), BSR_ERR_NOCONV);
        CU_ASSERT_EQUAL(su.fallback_s, 0);
        if (!tried) CU_ASSERT(pair_same(&t));
        bsr_solver_stats_free(&st);
        bsr_solver_stats_free(&su);
    }
    /* the same solver with a bound the complete factor stays within falls back */
    bsr_solver_destroy(t.s);
    t.s = bsr_test_solver(NULL, "precond=ilu2,cap=auto,rtol=1e-8,maxit=300,work=1e10", t.P.A);
    BSR_ASSERT_OK(solve(t.s, &t.P, NULL, t.X, &st));
    CU_ASSERT_EQUAL(st.fallbacks, 1);
    CU_ASSERT_EQUAL(bsr_solver_get_options(t.s)->work, 1e10);   /* a bound given is kept */
    CU_ASSERT(error_vs_exact(&t.P, t.X) < 1e-6);
    bsr_solver_stats_free(&st);
    pair_close(&t);
}

/* The first stage by options and backend: the complete factor for a
 * capped factor and for an uncapped one without growth weights (either
 * backend), unless that keeps every block already (then growth weights);
 * none for an uncapped factor with growth weights; without the complete
 * factor's stage (the test switch) the host's stages as before it.  The
 * stages' work bounds: the rows' BSR_FALLBACK_WORK, the complete factor's
 * BSR_FALLBACK_WORK_COMPLETE on the host and BSR_FALLBACK_WORK_DEVICE on the
 * device, work when given for all. */
static void test_first(void)
{
    static const struct { const char *cfg; int device, want, without; } c[] = {
        {"precond=ilu2,cap=auto", 0, BSR_FB_COMPLETE, BSR_FB_UNCAPPED},
        {"precond=ilut,cap=8", 1, BSR_FB_COMPLETE, BSR_FB_COMPLETE},
        {"precond=ilu2,cap=none", 0, BSR_FB_COMPLETE, BSR_FB_GROW},
        {"precond=ilu2,cap=none", 1, BSR_FB_COMPLETE, BSR_FB_COMPLETE},
        {"precond=ilu2,tau1=0,tau2=0,cap=none", 1, BSR_FB_GROW, BSR_FB_GROW},
        {"precond=ilu2,tau1=0,tau2=0,cap=none", 0, BSR_FB_GROW, BSR_FB_GROW},
        {"precond=ilu2,tau1=0,cap=none", 0, BSR_FB_GROW, BSR_FB_GROW},   /* tau2 defaults to tau1^2 */
        {"precond=ilu2,cap=none,grow=1", 0, BSR_FB_NONE, BSR_FB_NONE},
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        bsr_solver_options o;
        bsr_solver_options_default(&o);
        BSR_ASSERT_OK(bsr_solver_options_parse(&o, c[i].cfg));
        const int got = bsr_fallback_first(&o, c[i].device, 1000);
        if (got != c[i].want) printf("\n  %s on %s: stage %d, not %d", c[i].cfg, c[i].device ? "the device" : "the host",
                                     got, c[i].want);
        CU_ASSERT_EQUAL(got, c[i].want);
        bsr_solver_test_complete_stage(0);
        CU_ASSERT_EQUAL(bsr_fallback_first(&o, c[i].device, 1000), c[i].without);
        bsr_solver_test_complete_stage(1);
    }
    bsr_solver_options o;
    bsr_solver_options_default(&o);
    CU_ASSERT_EQUAL(bsr_fallback_work(&o, 0, 0), BSR_FALLBACK_WORK);
    CU_ASSERT_EQUAL(bsr_fallback_work(&o, 0, 1), BSR_FALLBACK_WORK);
    CU_ASSERT_EQUAL(bsr_fallback_work(&o, 1, 0), BSR_FALLBACK_WORK_COMPLETE);
    CU_ASSERT_EQUAL(bsr_fallback_work(&o, 1, 1), BSR_FALLBACK_WORK_DEVICE);
    BSR_ASSERT_OK(bsr_solver_options_parse(&o, "work=7e9"));
    for (int c = 0; c < 4; c++) CU_ASSERT_EQUAL(bsr_fallback_work(&o, c & 1, c >> 1), 7e9);
}

/* The keys: fallback on by default, printed only when off; work printed
 * when set; both refused out of range. */
static void test_options(void)
{
    bsr_solver_options o;
    char buf[1024];
    bsr_solver_options_default(&o);
    CU_ASSERT_EQUAL(o.fallback, 1);
    CU_ASSERT_EQUAL(o.work, 0);
    BSR_ASSERT_OK(bsr_solver_options_parse(&o, "precond=ilu2"));
    CU_ASSERT_PTR_NULL(strstr(bsr_solver_options_string(&o, buf, sizeof buf), "fallback"));
    CU_ASSERT_PTR_NULL(strstr(buf, "work"));
    BSR_ASSERT_OK(bsr_solver_options_parse(&o, "fallback=off,work=2.5e9"));
    CU_ASSERT_EQUAL(o.fallback, 0);
    CU_ASSERT_EQUAL(o.work, 2.5e9);
    CU_ASSERT_PTR_NOT_NULL(strstr(bsr_solver_options_string(&o, buf, sizeof buf), ",fallback=off,work=2.5e+09"));
    bsr_solver_options o2;
    bsr_solver_options_default(&o2);
    BSR_ASSERT_OK(bsr_solver_options_parse(&o2, buf));
    CU_ASSERT_EQUAL(o2.fallback, 0);
    CU_ASSERT_EQUAL(o2.work, 2.5e9);
    BSR_ASSERT_OK(bsr_solver_options_parse(&o2, "fallback=on"));
    CU_ASSERT_EQUAL(o2.fallback, 1);
    CU_ASSERT_EQUAL(bsr_solver_options_parse(&o, "fallback=maybe"), BSR_ERR_ARG);
    CU_ASSERT_PTR_NOT_NULL(strstr(bsr_last_error(), "fallback"));
    CU_ASSERT_EQUAL(bsr_solver_options_parse(&o, "work=-1"), BSR_ERR_ARG);
    CU_ASSERT_PTR_NOT_NULL(strstr(bsr_last_error(), "work"));
    CU_ASSERT_EQUAL(bsr_solver_options_parse(&o, "work=nan"), BSR_ERR_ARG);
    o.fallback = 7;
    CU_ASSERT_EQUAL(bsr_solver_options_check(&o), BSR_ERR_ARG);
    o.fallback = 1;
    o.work = -3;
    CU_ASSERT_EQUAL(bsr_solver_options_check(&o), BSR_ERR_ARG);
}

/* The iteration at which the probe's hook ran (-1: never). */
static int ahead_it;
static void ahead_hook(void *data) { ahead_it = *(const int *)data; }

/* The iteration at which a probed column (probe BSR_FALLBACK_PROBE, maxit
 * 300) stops on the relative residuals r(it) = seq(it) (r(0) = 1), and
 * whether the probe stopped it; ahead_it where its hook ran. */
static int probe_stops(double (*seq)(int), int *hit)
{
    bsr_solver_options o;
    bsr_solver_options_default(&o);
    o.maxit = 300;
    bsr_col_stats col;
    memset(&col, 0, sizeof col);
    const double bn = 1;
    bsr_kstate ks;
    BSR_ASSERT_OK(bsr_kstate_init(&ks, &o, 1, &bn, &col));
    ks.probe = BSR_FALLBACK_PROBE;
    ks.ahead = ahead_hook;
    ks.ahead_data = &ks.it;
    ahead_it = -1;
    for (ks.it = 0; ks.it <= o.maxit; ks.it++) {
        const double r = ks.it ? seq(ks.it) : 1.0;
        if (!bsr_kstate_update(&ks, &r)) break;
    }
    *hit = ks.probe_hit;
    const int it = col.iterations;
    CU_ASSERT_EQUAL(col.reason, *hit ? BSR_DIVERGED_STAGNATION : BSR_DIVERGED_MAXIT);
    bsr_kstate_free(&ks);
    return it;
}

/* Below half the initial residual from the start (the first rule passes)
 * and 1.5% lower every iteration (a slow solve, short of rtol at maxit),
 * then: */
static double creep(int it) { return 0.4 * pow(0.985, it); }
static double rise(int it) { return it < 90 ? creep(it) : 3.0; }                    /* above twice from 90 */
static double spike(int it) { return it >= 90 && it < 90 + BSR_FALLBACK_PROBE_RUN - 1 ? 30.0 : creep(it); }
static double late(int it) { return it < 150 ? creep(it) : it < 150 + BSR_FALLBACK_PROBE_RUN ? 2.5 : creep(it); }
static double never(int it) { (void)it; return 0.9; }                              /* no halving at all */
static double dip(int it) { return it <= 5 ? 0.4 : 0.9; }             /* halved at once, then no gain */
static double stall(int it) { return it <= 120 ? creep(it) : creep(120); }     /* a gain to 120, none after */
static double slow(int it) { return creep(120) * pow(0.988, it / 99); }        /* a 1.2% gain each 99 */

/* The probe: no halving by iteration 100 stops the solve there; past it, a
 * residual above twice the initial one for BSR_FALLBACK_PROBE_RUN
 * iterations in a row stops it, one iteration fewer does not, and a best
 * residual without a 1% gain in BSR_FALLBACK_PROBE iterations stops it, a
 * gain of 1% in 99 does not.  The hook that starts the fallback's ordering
 * runs once, from the tenth of the probe on, where the residual is above
 * half the initial one or has gained no 1% in a tenth of the probe. */
static void test_probe_rules(void)
{
    int hit;
    const int tenth = BSR_FALLBACK_PROBE / 10;
    CU_ASSERT_EQUAL(probe_stops(never, &hit), BSR_FALLBACK_PROBE);
    CU_ASSERT_EQUAL(hit, 1);
    CU_ASSERT_EQUAL(ahead_it, tenth);   /* above half at the tenth */
    CU_ASSERT_EQUAL(probe_stops(creep, &hit), 300);
    CU_ASSERT_EQUAL(hit, 0);
    CU_ASSERT_EQUAL(ahead_it, -1);   /* gaining 1.5% every iteration */
    CU_ASSERT_EQUAL(probe_stops(dip, &hit), 1 + BSR_FALLBACK_PROBE);
    CU_ASSERT_EQUAL(hit, 1);
    CU_ASSERT_EQUAL(ahead_it, 1 + tenth);   /* no gain since iteration 1 */
    CU_ASSERT_EQUAL(probe_stops(stall, &hit), 120 + BSR_FALLBACK_PROBE);
    CU_ASSERT_EQUAL(hit, 1);
    CU_ASSERT_EQUAL(ahead_it, 120 + tenth);   /* no gain since iteration 120 */
    CU_ASSERT_EQUAL(probe_stops(slow, &hit), 300);
    CU_ASSERT_EQUAL(hit, 0);
    CU_ASSERT_EQUAL(probe_stops(rise, &hit), 90 + BSR_FALLBACK_PROBE_RUN - 1);
    CU_ASSERT_EQUAL(hit, 1);
    CU_ASSERT_EQUAL(probe_stops(spike, &hit), 300);
    CU_ASSERT_EQUAL(hit, 0);
    CU_ASSERT_EQUAL(probe_stops(late, &hit), 150 + BSR_FALLBACK_PROBE_RUN - 1);
    CU_ASSERT_EQUAL(hit, 1);
}

/* On a GPU: the device's default cap (auto) fails on HARD as on the host,
 * and falls back first to the complete block LU factored on the device:
 * one or two iterations to the exact solution, the options saying so, bit
 * for bit as a fresh device solver of those options solves it from the
 * same x0; the complete factor equals the host's (the host's complete
 * factor solves to the same error).  Under a work bound below both stages'
 * products, both setups fail, in turn, with two levels under flexible
 * GMRES-DR, two levels under BiCGStab and GMRES-DR on the first factor
 * between them, in that order (they fail on HARD too: the probe gives them up), and the
 * first factor stays.  A user's coarse level is dropped for
 * the complete factor.  An uncapped factor (cap=none, its rows the
 * host's, its values the device's) that does not converge falls back to
 * the complete factor on the device too, bit for bit a fresh solver of its
 * options; after a capped first factor of the host's (factor=cpu) the
 * complete factor is the host's too, under the host's bound.  Where two levels converge (coupled3d at
 * coupling 0.4, the first solve's BiCGStab out of iterations) their solve
 * (under flexible GMRES-DR) is the answer, the options saying so, bit for
 * bit as two levels set up
 * afresh (their smoother is the first factor, shared), and later solves
 * and a refactor keep them; a float
 * solve has no two levels, and GMRES-DR's solve is the answer there. */
static void test_device(void)
{
    if (!bsr_test_have_gpu()) return;
    bsr_context *ctx = NULL;
    BSR_ASSERT_OK(bsr_context_create(&ctx, BSR_BACKEND_CUDA, 0, NULL));
    bsr_problem P;
    BSR_ASSERT_OK(bsr_generate(HARD, BSR_DOUBLE, &P));
    const int64_t n = bsr_multivec_rows(P.rhs);
    bsr_multivec *x0, *X, *Y;
    BSR_ASSERT_OK(bsr_multivec_create(&x0, n, 1, BSR_DOUBLE));
    BSR_ASSERT_OK(bsr_multivec_create(&X, n, 1, BSR_DOUBLE));
    BSR_ASSERT_OK(bsr_multivec_create(&Y, n, 1, BSR_DOUBLE));
    BSR_ASSERT_OK(bsr_multivec_random(x0, 5));
    bsr_solver *s = bsr_test_solver(ctx, "precond=ilu2,rtol=1e-10,maxit=300", P.A);
    bsr_solver_stats st;
    BSR_ASSERT_OK(solve(s, &P, x0, X, &st));
    CU_ASSERT_EQUAL(st.fallbacks, 1);
    CU_ASSERT(st.col[0].iterations <= 2);
    CU_ASSERT(error_vs_exact(&P, X) < 1e-9);
    const bsr_solver_options *o = bsr_solver_get_options(s);
    CU_ASSERT(o->cap == BSR_ILU_CAP_NONE && o->tau1 == 0 && o->tau2 == 0 && o->factor == BSR_FACTOR_GPU);
    CU_ASSERT_STRING_EQUAL(o->reorder, "metis,lift=1");
    CU_ASSERT_PTR_NOT_NULL(strstr(st.precond_info, "0 dropped"));
    bsr_solver_stats_free(&st);
    const char *fresh = "precond=ilu2,tau1=0,cap=none,factor=gpu,reorder=metis,lift=1,fallback=off,rtol=1e-10,"
                        "maxit=300,work=3e12";
    bsr_solver *u = bsr_test_solver(ctx, fresh, P.A);
    BSR_ASSERT_OK(solve(u, &P, x0, Y, &st));
    CU_ASSERT_EQUAL(memcmp(bsr_multivec_cdata(X), bsr_multivec_cdata(Y), sizeof(double) * (size_t)n), 0);
    bsr_solver_stats_free(&st);
    bsr_solver_destroy(u);
    /* the host's complete factor: the same exact solve */
    u = bsr_test_solver(NULL, "precond=ilu2,tau1=0,cap=none,reorder=nd:auto,leafnd=1,fallback=off,rtol=1e-10", P.A);
    BSR_ASSERT_OK(solve(u, &P, x0, Y, &st));
    CU_ASSERT(st.col[0].iterations <= 2);
    CU_ASSERT(error_vs_exact(&P, Y) < 1e-9);
    bsr_solver_stats_free(&st);
    bsr_solver_destroy(u);
    bsr_solver_destroy(s);
    /* a coarse level of the user's is not carried into the complete factor,
     * which is exact: no modes are left for it */
    s = bsr_test_solver(ctx, "precond=ilu2,coarse=4,rtol=1e-10,maxit=300", P.A);
    BSR_ASSERT_OK(solve(s, &P, x0, X, &st));
    CU_ASSERT_EQUAL(st.fallbacks, 1);
    o = bsr_solver_get_options(s);
    CU_ASSERT(o->coarse == 0 && o->tau1 == 0 && o->cap == BSR_ILU_CAP_NONE);
    CU_ASSERT_PTR_NULL(strstr(st.precond_info, "coarse level"));
    CU_ASSERT(error_vs_exact(&P, X) < 1e-9);
    bsr_solver_stats_free(&st);
    bsr_solver_destroy(s);
    /* the uncapped factor on the device */
    bsr_problem U;
    BSR_ASSERT_OK(bsr_generate(HARD_UNCAPPED, BSR_DOUBLE, &U));
    bsr_multivec *Xu, *Yu;
    BSR_ASSERT_OK(bsr_multivec_create(&Xu, bsr_multivec_rows(U.rhs), 1, BSR_DOUBLE));
    BSR_ASSERT_OK(bsr_multivec_create(&Yu, bsr_multivec_rows(U.rhs), 1, BSR_DOUBLE));
    s = bsr_test_solver(ctx, "precond=ilu2,cap=none,rtol=1e-10,maxit=300", U.A);
    CU_ASSERT_EQUAL(bsr_solver_get_options(s)->factor, BSR_FACTOR_GPU);
    BSR_ASSERT_OK(bsr_solver_solve(s, U.rhs, Xu, &st));
    CU_ASSERT(st.fallbacks == 1 && st.col[0].iterations <= 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(st.precond_info, "0 dropped"));
    o = bsr_solver_get_options(s);
    CU_ASSERT(o->tau1 == 0 && o->grow == 0 && o->factor == BSR_FACTOR_GPU && o->work == BSR_FALLBACK_WORK_DEVICE);
    CU_ASSERT(bsr_test_rel_err(Xu, U.xexact) < 1e-9);
    bsr_solver_stats_free(&st);
    bsr_solver_destroy(s);
    u = bsr_test_solver(ctx, "precond=ilu2,tau1=0,cap=none,factor=gpu,reorder=metis,lift=1,fallback=off,"
                        "rtol=1e-10,maxit=300,work=3e12", U.A);
    BSR_ASSERT_OK(bsr_solver_solve(u, U.rhs, Yu, &st));
    CU_ASSERT(bsr_test_same_bits(Xu, Yu));
    bsr_solver_stats_free(&st);
    bsr_solver_destroy(u);
    bsr_multivec_destroy(Xu);
    bsr_multivec_destroy(Yu);
    bsr_problem_free(&U);
    /* a capped first factor of the host's: the complete factor on the host */
    s = bsr_test_solver(ctx, "precond=ilu2,cap=auto,factor=cpu,rtol=1e-10,maxit=300", P.A);
    BSR_ASSERT_OK(solve(s, &P, x0, X, &st));
    CU_ASSERT(st.fallbacks == 1 && st.col[0].iterations <= 2);
    o = bsr_solver_get_options(s);
    CU_ASSERT(o->tau1 == 0 && o->cap == BSR_ILU_CAP_NONE && o->factor == BSR_FACTOR_CPU &&
              o->work == BSR_FALLBACK_WORK_COMPLETE);
    CU_ASSERT(error_vs_exact(&P, X) < 1e-9);
    bsr_solver_stats_free(&st);
    bsr_solver_destroy(s);
    /* both stages past a bound of 1e8 block multiply-adds (about 1.2e9 each) */
    s = bsr_test_solver(ctx, "precond=ilu2,rtol=1e-10,maxit=300,work=1e8", P.A);
    CU_ASSERT_EQUAL(solve(s, &P, x0, X, &st), BSR_ERR_NOCONV);
    CU_ASSERT_EQUAL(st.fallbacks, 1);   /* GMRES-DR's solve */
    const char *e = bsr_last_error();
    printf("\n    %s", e);
    const char *c1 = strstr(e, "of the complete factor on the device failed"), *c2 = strstr(e, "without the cap failed");
    CU_ASSERT(c1 && c2 && c1 < c2);
    const char *t2 = strstr(e, "nor two levels'"), *dr = strstr(e, "nor GMRES-DR's on the first factor");
    const char *t2dr = strstr(e, "nor flexible GMRES-DR's on two levels");
    CU_ASSERT(t2 && t2dr && dr && t2dr < t2 && t2 < dr);
    CU_ASSERT_PTR_NOT_NULL(strstr(e, "work bound"));
    o = bsr_solver_get_options(s);
    CU_ASSERT(o->cap != BSR_ILU_CAP_NONE && o->method == BSR_BICGSTAB);   /* the first factor again */
    bsr_solver_stats_free(&st);
    bsr_solver_destroy(s);
    /* two levels on the first factor's options converge: their solve is the answer */
    bsr_problem Q;
    BSR_ASSERT_OK(bsr_generate("coupled3d:16,4,couple=0.4", BSR_DOUBLE, &Q));
    bsr_multivec *Xq;
    BSR_ASSERT_OK(bsr_multivec_create(&Xq, bsr_multivec_rows(Q.rhs), 1, BSR_DOUBLE));
    s = bsr_test_solver(ctx, "precond=ilu2,rtol=1e-10,maxit=100,work=1e6", Q.A);
    BSR_ASSERT_OK(bsr_solver_solve(s, Q.rhs, Xq, &st));
    printf("\n    two levels after the complete factor's bound: %d iterations, relres %.2e, error %.2e; %s",
           st.col[0].iterations, st.col[0].relres, bsr_test_rel_err(Xq, Q.xexact), st.fallback_reason);
    CU_ASSERT_EQUAL(st.fallbacks, 1);
    CU_ASSERT(st.fallback_iterations == 100 && st.fallback_s > 0);   /* the complete factor's setup tried */
    CU_ASSERT(bsr_reason_converged(st.col[0].reason) && st.col[0].iterations < 100);
    CU_ASSERT(bsr_test_rel_err(Xq, Q.xexact) < 1e-6);
    CU_ASSERT_PTR_NOT_NULL(strstr(st.precond_info, "coarse level"));
    o = bsr_solver_get_options(s);
    CU_ASSERT(o->coarse == BSR_FALLBACK_COARSE_DR && o->method == BSR_GMRES && o->flex == 1 &&
              o->deflate == BSR_FALLBACK_TWODR_K && o->restart == BSR_FALLBACK_TWODR_M);
    CU_ASSERT(o->cap != BSR_ILU_CAP_NONE && o->tau1 > 0);   /* the first factor's options */
    bsr_solver_stats_free(&st);
    /* their smoother is the first factor, shared, not made again: the bits
     * of two levels set up afresh, solving from the same x0 (zero); a
     * refactor (the shared factor's, as a time step's) solves to x* */
    bsr_multivec *Xa, *Xb;
    BSR_ASSERT_OK(bsr_multivec_create(&Xa, bsr_multivec_rows(Q.rhs), 1, BSR_DOUBLE));
    BSR_ASSERT_OK(bsr_multivec_create(&Xb, bsr_multivec_rows(Q.rhs), 1, BSR_DOUBLE));
    BSR_ASSERT_OK(bsr_multivec_copy(Xa, Xq));
    bsr_solver *u2 = bsr_test_solver(ctx, "precond=ilu2,rtol=1e-10,maxit=100,work=1e6,coarse=10,method=gmres,"
                                     "restart=80,deflate=30,orth=cgs2,flex=1,fallback=off", Q.A);
    BSR_ASSERT_OK(bsr_solver_solve(u2, Q.rhs, Xb, &st));
    bsr_solver_stats_free(&st);
    bsr_solver_destroy(u2);
    CU_ASSERT(bsr_test_same_bits(Xa, Xb));
    BSR_ASSERT_OK(bsr_solver_refactor(s, Q.A));
    BSR_ASSERT_OK(bsr_multivec_fill(Xb, 0));
    BSR_ASSERT_OK(bsr_solver_solve(s, Q.rhs, Xb, &st));
    CU_ASSERT_EQUAL(st.fallbacks, 0);
    CU_ASSERT(bsr_reason_converged(st.col[0].reason) && st.col[0].iterations < 100);
    bsr_solver_stats_free(&st);
    CU_ASSERT(bsr_test_rel_err(Xb, Q.xexact) < 1e-6);
    bsr_multivec_destroy(Xa);
    bsr_multivec_destroy(Xb);
    /* a later solve keeps them, with no fallback */
    BSR_ASSERT_OK(bsr_solver_solve(s, Q.rhs, Xq, &st));
    CU_ASSERT_EQUAL(st.fallbacks, 0);
    CU_ASSERT(bsr_reason_converged(st.col[0].reason) && st.col[0].iterations < 100);
    CU_ASSERT_EQUAL(bsr_solver_get_options(s)->coarse, BSR_FALLBACK_COARSE_DR);
    bsr_solver_stats_free(&st);
    bsr_solver_destroy(s);
    /* in float: no two levels; GMRES-DR on the first factor converges, its solve the answer */
    bsr_multivec *Xf;
    bsr_problem Qf;
    BSR_ASSERT_OK(bsr_generate("coupled3d:16,4,couple=0.4", BSR_FLOAT, &Qf));
    BSR_ASSERT_OK(bsr_multivec_create(&Xf, bsr_multivec_rows(Qf.rhs), 1, BSR_FLOAT));
    s = bsr_test_solver(ctx, "precond=ilu2,precision=float,rtol=1e-5,maxit=400,work=1e6", Qf.A);
    BSR_ASSERT_OK(bsr_solver_solve(s, Qf.rhs, Xf, &st));
    printf("\n    GMRES-DR in float after the complete factor's bound: %d iterations, relres %.2e; %s",
           st.col[0].iterations, st.col[0].relres, st.fallback_reason);
    CU_ASSERT_EQUAL(st.fallbacks, 1);
    CU_ASSERT(bsr_reason_converged(st.col[0].reason));
    o = bsr_solver_get_options(s);
    CU_ASSERT(o->method == BSR_GMRES && o->deflate == BSR_FALLBACK_DR_K && o->restart == BSR_FALLBACK_DR_M);
    CU_ASSERT(o->cap != BSR_ILU_CAP_NONE && o->tau1 > 0 && o->coarse == 0);   /* the first factor's options */
    /* the first factor itself, not set up again: a later solve reports its setup's seconds */
    const double setup0 = st.setup_s;
    bsr_solver_stats_free(&st);
    BSR_ASSERT_OK(bsr_solver_solve(s, Qf.rhs, Xf, &st));
    CU_ASSERT_EQUAL(st.fallbacks, 0);
    CU_ASSERT_EQUAL(st.setup_s, setup0);
    bsr_solver_stats_free(&st);
    bsr_solver_destroy(s);
    bsr_multivec_destroy(Xf);
    bsr_problem_free(&Qf);
    bsr_multivec_destroy(Xq);
    bsr_problem_free(&Q);
    bsr_multivec_destroy(x0); bsr_multivec_destroy(X); bsr_multivec_destroy(Y);
    bsr_problem_free(&P);
    bsr_context_destroy(ctx);
}

/* The fallback's ordering made on a second thread beside the probe (the
 * device's way, forced here on the CPU): the fallback's factor takes it
 * (its info says so), and the solve is the one without it, bit for bit.  A
 * solve slow at first that converges without the fallback (coupled3d at
 * couple 0.4: about 220 iterations, above half its first residual at the
 * tenth) calls it off and keeps it, unwaited, until the next solve or
 * setup lets it go; the solution is the one without it. */
static void test_ahead(void)
{
    pair t;
    const char *cfg = "precond=ilu2,cap=auto,rtol=1e-8,maxit=300";
    pair_open(&t, HARD, cfg, cfg);
    bsr_solver_stats st;
    bsr_solver_test_order_ahead(1);
    BSR_ASSERT_OK(solve(t.s, &t.P, NULL, t.X, &st));
    bsr_solver_test_order_ahead(0);
    CU_ASSERT_EQUAL(st.fallbacks, 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(st.precond_info, "made beside the first solve"));
    const int its = st.col[0].iterations;
    bsr_solver_stats_free(&st);
    BSR_ASSERT_OK(solve(t.u, &t.P, NULL, t.Y, &st));
    CU_ASSERT_EQUAL(st.fallbacks, 1);
    CU_ASSERT_PTR_NULL(strstr(st.precond_info, "made beside the first solve"));
    CU_ASSERT_EQUAL(st.col[0].iterations, its);
    bsr_solver_stats_free(&st);
    CU_ASSERT(pair_same(&t));
    pair_close(&t);
    pair_open(&t, "coupled3d:12,5,couple=0.4", cfg, cfg);
    bsr_solver_test_order_ahead(1);
    BSR_ASSERT_OK(solve(t.s, &t.P, NULL, t.X, &st));
    CU_ASSERT_EQUAL(st.fallbacks, 0);
    CU_ASSERT(st.col[0].iterations > 20);
    bsr_solver_stats_free(&st);
    CU_ASSERT_PTR_NOT_NULL(t.s->ahead);   /* started, called off, kept */
    BSR_ASSERT_OK(solve(t.s, &t.P, NULL, t.X, &st));   /* lets it go, starts and calls off another */
    bsr_solver_stats_free(&st);
    bsr_solver_test_order_ahead(0);
    BSR_ASSERT_OK(bsr_solver_setup(t.s, t.P.A));
    CU_ASSERT_PTR_NULL(t.s->ahead);
    BSR_ASSERT_OK(solve(t.u, &t.P, NULL, t.Y, &st));
    bsr_solver_stats_free(&st);
    CU_ASSERT(pair_same(&t));
    pair_close(&t);
}

/* A 5 x 5 system (b = 1, natural order) whose ILU2 with cap=1 drops the
 * fill U(1,4) = -1 (row 1 keeps -3 in U and -2 in W): row 4's pivot is
 * a44 + 1 in the complete LU and a44 there, so a44 = 0 makes a pivot that
 * pivot=strict refuses. */
static bsr_matrix *capped_breaks_down(double a44)
{
    static const int rp[] = {0, 4, 6, 7, 8, 10};
    static const int ci[] = {0, 2, 3, 4, 0, 1, 2, 3, 1, 4};
    const double v[] = {1, 3, 2, 1, 1, 1, 1, 1, 1, a44};
    bsr_matrix *A;
    BSR_ASSERT_OK(bsr_matrix_create(&A, 5, 5, 1, rp, ci, v, BSR_DOUBLE, 0));
    return A;
}

/* The options under which capped_breaks_down(0)'s factor breaks down. */
#define CAPPED_STRICT "precond=ilu2,cap=1,reorder=natural,pivot=strict"

/* For a 5 x 5 system A: B = A times ones, and X (zero). */
static void five_open(const bsr_matrix *A, bsr_multivec **B, bsr_multivec **X)
{
    static const double one[5] = {1, 1, 1, 1, 1};
    bsr_multivec *ones;
    BSR_ASSERT_OK(bsr_multivec_create(&ones, 5, 1, BSR_DOUBLE));
    BSR_ASSERT_OK(bsr_multivec_create(B, 5, 1, BSR_DOUBLE));
    BSR_ASSERT_OK(bsr_multivec_create(X, 5, 1, BSR_DOUBLE));
    memcpy(bsr_multivec_data(ones), one, sizeof one);
    BSR_ASSERT_OK(bsr_spmm(1.0, A, ones, 0.0, *B));
    BSR_ASSERT_OK(bsr_multivec_fill(*X, 0));
    bsr_multivec_destroy(ones);
}

/* A first factor whose setup breaks down (BSR_ERR_SINGULAR) is replaced by
 * the fallback's stage at setup (here: the complete factor), whose solve is the
 * one the stage's options give from scratch; the first solve's stats say
 * so once (no iterations, the first setup's message), the next one not; off
 * reports the breakdown; a matrix no stage can factor reports the first
 * failure, naming the stages' too. */
static void test_setup_breaks_down(void)
{
    bsr_matrix *A = capped_breaks_down(0.0);
    bsr_multivec *B, *X;
    five_open(A, &B, &X);
    const char *cfg = CAPPED_STRICT ",rtol=1e-12";
    bsr_solver *s, *u;
    BSR_ASSERT_OK(bsr_solver_create_str(&u, NULL, CAPPED_STRICT ",fallback=off"));
    CU_ASSERT_EQUAL(bsr_solver_setup(u, A), BSR_ERR_SINGULAR);
    CU_ASSERT_PTR_NOT_NULL(strstr(bsr_last_error(), "singular pivot"));
    bsr_solver_destroy(u);
    BSR_ASSERT_OK(bsr_solver_create_str(&s, NULL, cfg));
    BSR_ASSERT_OK(bsr_solver_setup(s, A));
    CU_ASSERT_EQUAL(bsr_solver_get_options(s)->cap, BSR_ILU_CAP_NONE);
    CU_ASSERT_EQUAL(bsr_solver_get_options(s)->tau1, 0);   /* the complete factor's stage */
    bsr_solver_stats st;
    BSR_ASSERT_OK(bsr_multivec_fill(X, 0));
    BSR_ASSERT_OK(bsr_solver_solve(s, B, X, &st));
    CU_ASSERT_EQUAL(st.fallbacks, 1);
    CU_ASSERT_EQUAL(st.fallback_iterations, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(st.fallback_reason, "singular pivot"));
    CU_ASSERT(st.fallback_s > 0 && st.setup_s > 0);
    const int its = st.col[0].iterations;
    bsr_solver_stats_free(&st);
    const double *x = bsr_multivec_cdata(X);
    for (int i = 0; i < 5; i++) CU_ASSERT_DOUBLE_EQUAL(x[i], 1.0, 1e-10);
    /* the stage's options from scratch: the same solve */
    char fo[512];
    bsr_solver_options_string(bsr_solver_get_options(s), fo, sizeof fo);
    BSR_ASSERT_OK(bsr_solver_create_str(&u, NULL, fo));
    BSR_ASSERT_OK(bsr_solver_setup(u, A));
    bsr_multivec *Y;
    BSR_ASSERT_OK(bsr_multivec_create(&Y, 5, 1, BSR_DOUBLE));
    BSR_ASSERT_OK(bsr_multivec_fill(Y, 0));
    BSR_ASSERT_OK(bsr_solver_solve(u, B, Y, &st));
    CU_ASSERT_EQUAL(st.fallbacks, 0);
    CU_ASSERT_EQUAL(st.col[0].iterations, its);
    bsr_solver_stats_free(&st);
    CU_ASSERT_EQUAL(memcmp(bsr_multivec_cdata(X), bsr_multivec_cdata(Y), 5 * sizeof(double)), 0);
    BSR_ASSERT_OK(bsr_multivec_fill(X, 0));
    BSR_ASSERT_OK(bsr_solver_solve(s, B, X, &st));   /* reported once */
    CU_ASSERT_EQUAL(st.fallbacks, 0);
    bsr_solver_stats_free(&st);
    bsr_solver_destroy(u);
    bsr_solver_destroy(s);
    /* a zero row: every stage breaks down as the first factor did */
    static const int rp[] = {0, 1, 1};
    static const int ci[] = {0};
    static const double v[] = {2};
    bsr_matrix *Z;
    BSR_ASSERT_OK(bsr_matrix_create(&Z, 2, 2, 1, rp, ci, v, BSR_DOUBLE, 0));
    BSR_ASSERT_OK(bsr_solver_create_str(&s, NULL, cfg));
    CU_ASSERT_EQUAL(bsr_solver_setup(s, Z), BSR_ERR_SINGULAR);
    CU_ASSERT_PTR_NOT_NULL(strstr(bsr_last_error(), "the fallback's setups failed too"));
    CU_ASSERT_EQUAL(bsr_solver_get_options(s)->cap, 1);   /* the options as they were */
    bsr_solver_destroy(s);
    bsr_matrix_destroy(Z);
    bsr_multivec_destroy(B); bsr_multivec_destroy(X); bsr_multivec_destroy(Y);
    bsr_matrix_destroy(A);
}

/* A refactor whose factor breaks down on new values (the capped one above,
 * a44 from 0.5 to 0) sets A up again: the solve converges, its stats saying
 * so once.  With the fallback off the refactor reports the breakdown and
 * the solve refuses.  New values no stage can factor (a zero row): the
 * refactor reports it, the solve refuses, and a refactor on good values
 * sets them up. */
static void test_refactor_breaks_down(void)
{
    bsr_matrix *A = capped_breaks_down(0.5), *A0 = capped_breaks_down(0.0), *Az;
    static const double vz[] = {1, 3, 2, 1, 1, 1, 1, 1, 0, 0};   /* row 4 zero */
    BSR_ASSERT_OK(bsr_matrix_copy(A, BSR_DOUBLE, &Az));
    BSR_ASSERT_OK(bsr_matrix_set_values(Az, vz, 0));
    bsr_multivec *B, *X;
    five_open(A0, &B, &X);
    const char *cfg = CAPPED_STRICT ",rtol=1e-12";
    bsr_solver_stats st;
    for (int off = 0; off < 2; off++) {
        bsr_solver *s;
        BSR_ASSERT_OK(bsr_solver_create_str(&s, NULL, off ? CAPPED_STRICT ",fallback=off" : cfg));
        BSR_ASSERT_OK(bsr_solver_setup(s, A));
        BSR_ASSERT_OK(bsr_multivec_fill(X, 0));
        if (off) {
            CU_ASSERT_EQUAL(bsr_solver_refactor(s, A0), BSR_ERR_SINGULAR);
            CU_ASSERT_PTR_NOT_NULL(strstr(bsr_last_error(), "singular pivot"));
            CU_ASSERT_EQUAL(bsr_solver_solve(s, B, X, &st), BSR_ERR_ARG);   /* no stale factor */
        } else {
            BSR_ASSERT_OK(bsr_solver_refactor(s, A0));
            CU_ASSERT_EQUAL(bsr_solver_get_options(s)->cap, BSR_ILU_CAP_NONE);
            BSR_ASSERT_OK(bsr_solver_solve(s, B, X, &st));
            CU_ASSERT_EQUAL(st.fallbacks, 1);
            CU_ASSERT_EQUAL(st.fallback_iterations, 0);
            CU_ASSERT_PTR_NOT_NULL(strstr(st.fallback_reason, "the refactor broke down"));
            CU_ASSERT_PTR_NOT_NULL(strstr(st.fallback_reason, "singular pivot"));
            const double *x = bsr_multivec_cdata(X);
            for (int i = 0; i < 5; i++) CU_ASSERT_DOUBLE_EQUAL(x[i], 1.0, 1e-10);
            bsr_solver_stats_free(&st);
            BSR_ASSERT_OK(bsr_multivec_fill(X, 0));
            BSR_ASSERT_OK(bsr_solver_solve(s, B, X, &st));
            CU_ASSERT_EQUAL(st.fallbacks, 0);
        }
        bsr_solver_stats_free(&st);
        bsr_solver_destroy(s);
    }
    bsr_solver *s;
    BSR_ASSERT_OK(bsr_solver_create_str(&s, NULL, cfg));
    BSR_ASSERT_OK(bsr_solver_setup(s, A));
    CU_ASSERT_EQUAL(bsr_solver_refactor(s, Az), BSR_ERR_SINGULAR);
    CU_ASSERT_PTR_NOT_NULL(strstr(bsr_last_error(), "the setup again on these values failed"));
    CU_ASSERT_EQUAL(bsr_solver_solve(s, B, X, &st), BSR_ERR_ARG);
    CU_ASSERT_PTR_NOT_NULL(strstr(bsr_last_error(), "refactor failed"));
    bsr_solver_stats_free(&st);
    BSR_ASSERT_OK(bsr_solver_refactor(s, A0));
    BSR_ASSERT_OK(bsr_multivec_fill(X, 0));
    BSR_ASSERT_OK(bsr_solver_solve(s, B, X, &st));
    CU_ASSERT_DOUBLE_EQUAL(((const double *)bsr_multivec_cdata(X))[4], 1.0, 1e-10);
    bsr_solver_stats_free(&st);
    bsr_solver_destroy(s);
    bsr_matrix_destroy(A0); bsr_matrix_destroy(Az);
    bsr_multivec_destroy(B); bsr_multivec_destroy(X);
    bsr_matrix_destroy(A);
}

int main(int argc, char **argv)
{
    static const bsr_test tests[] = {
        {"on", test_on},
        {"on, without the complete factor", test_on_uncapped},
        {"the complete factor without the user's fill bound", test_complete_fill},
        {"uncapped", test_uncapped},
        {"the complete factor on a nonsymmetric pattern", test_complete_nonsymmetric},
        {"uncapped, growth below the trigger", test_unchanged},
        {"none", test_none},
        {"work bound", test_bound},
        {"options", test_options},
        {"the first stage", test_first},
        {"the probe's rules", test_probe_rules},
        {"device", test_device},
        {"the ordering made ahead", test_ahead},
        {"a first factor whose setup breaks down", test_setup_breaks_down},
        {"a refactor that breaks down", test_refactor_breaks_down},
        {NULL, NULL},
    };
    return bsr_test_main("fallback", tests, argc, argv);
}
