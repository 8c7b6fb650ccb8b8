/* SPDX-License-Identifier: BSD-3-Clause */
/* GMRES-DR (krylov_gmres.c, option deflate with method=gmres): the option
 * parses, prints back and is refused where it cannot run; its first cycle is
 * GMRES(m)'s, bit for bit; it converges to the known solution on
 * nonsymmetric problems in double and float, batched; where restarted GMRES
 * stalls on an indefinite coupled system it converges; results are
 * deterministic and a column's iterates do not depend on its batch; its
 * one-pass vector combinations give the separate updates' bits; flexible
 * GMRES (flex=1) keeps the true residual where the factor amplifies. */
#include "harness.h"
#include "internal.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* deflate: default 0 (not printed), printed with method=gmres when set and
 * round-trips; refused out of 0..998, with another method, and where
 * restart < deflate + 2 (the parser and the check name it). */
static void test_options(void)
{
    bsr_solver_options o, p;
    char buf[1024];
    bsr_solver_options_default(&o);
    CU_ASSERT_EQUAL(o.deflate, 0);
    BSR_ASSERT_OK(bsr_solver_options_parse(&o, "method=gmres"));
    CU_ASSERT_PTR_NULL(strstr(bsr_solver_options_string(&o, buf, sizeof buf), "deflate"));
    BSR_ASSERT_OK(bsr_solver_options_parse(&o, "deflate=20,restart=60"));
    BSR_ASSERT_OK(bsr_solver_options_check(&o));
    CU_ASSERT_PTR_NOT_NULL(strstr(bsr_solver_options_string(&o, buf, sizeof buf),
                                  "method=gmres,restart=60,orth=mgs,deflate=20"));
    bsr_test_options_round_trip("method=gmres,restart=12,deflate=10,orth=cgs2,precond=ilut,keep_pattern=0", &o, &p, buf,
                                sizeof buf);
    CU_ASSERT_EQUAL(p.deflate, 10);
    static const char *const bad[] = {"deflate=-1", "deflate=999", "deflate=x", "deflate="};
    for (int i = 0; i < 4; i++) {
        CU_ASSERT_EQUAL(bsr_solver_options_parse(&o, bad[i]), BSR_ERR_ARG);
        CU_ASSERT_PTR_NOT_NULL(strstr(bsr_last_error(), "deflate"));
    }
    static const char *const wrong[] = {"method=gmres,restart=11,deflate=10", "method=bicgstab,deflate=4",
                                        "method=idr,deflate=4"};
    for (int i = 0; i < 3; i++) {
        bsr_solver_options_default(&o);
        BSR_ASSERT_OK(bsr_solver_options_parse(&o, wrong[i]));
        CU_ASSERT_EQUAL(bsr_solver_options_check(&o), BSR_ERR_ARG);
        CU_ASSERT_PTR_NOT_NULL(strstr(bsr_last_error(), "deflate"));
        bsr_solver *s = NULL;
        CU_ASSERT_EQUAL(bsr_solver_create(&s, NULL, &o), BSR_ERR_ARG);
        CU_ASSERT_PTR_NULL(s);
    }
}

/* A solve that converges within GMRES(m)'s first cycle is GMRES(m)'s, bit
 * for bit, with any deflate (the deflation starts at the first restart). */
static void test_first_cycle(void)
{
    bsr_problem P;
    bsr_multivec *B, *Xs;
    bsr_test_problem_k("convdiff2d:16,30", 2, 17, &P, &B, &Xs);
    bsr_multivec *X1 = bsr_test_x_like(B), *X2 = bsr_test_x_like(B);
    for (int orth = 0; orth < 2; orth++) {
        char c1[96], c2[128];
        snprintf(c1, sizeof c1, "method=gmres,restart=200,precond=ilu0,rtol=1e-10,orth=%s", orth ? "cgs2" : "mgs");
        snprintf(c2, sizeof c2, "%s,deflate=30", c1);
        bsr_solver_stats s1, s2;
        BSR_ASSERT_OK(bsr_test_solve(NULL, c1, P.A, B, X1, &s1));
        BSR_ASSERT_OK(bsr_test_solve(NULL, c2, P.A, B, X2, &s2));
        CU_ASSERT(s1.col[0].iterations < 200 && s1.col[0].iterations > 5);
        CU_ASSERT(bsr_test_same_bits(X1, X2));
        for (int j = 0; j < 2; j++) CU_ASSERT_EQUAL(s1.col[j].iterations, s2.col[j].iterations);
        bsr_solver_stats_free(&s1);
        bsr_solver_stats_free(&s2);
    }
    bsr_multivec_destroy(B); bsr_multivec_destroy(Xs); bsr_multivec_destroy(X1); bsr_multivec_destroy(X2);
    bsr_problem_free(&P);
}

/* GMRES-DR(m, K), two right-hand sides, double and float: converged past
 * several restarts to the known solution, on nonsymmetric problems. */
static void test_converges(void)
{
    static const char *const specs[] = {"convdiff2d:24,30", "convdiff2d:32,300", "rotconv3d:8"};
    for (int g = 0; g < 3; g++) {
        bsr_problem P;
        bsr_multivec *B, *Xs, *X;
        bsr_test_problem_k(specs[g], 2, 17, &P, &B, &Xs);
        BSR_ASSERT_OK(bsr_multivec_create(&X, bsr_multivec_rows(B), 2, BSR_DOUBLE));
        for (int fl = 0; fl < 2; fl++)
            for (int q = 0; q < 2; q++) {
                char cfg[192];
                snprintf(cfg, sizeof cfg, "method=gmres,restart=%d,deflate=%d,orth=%s,precond=ilu0,rtol=%s,maxit=4000%s",
                         q ? 16 : 10, q ? 6 : 4, q ? "cgs2" : "mgs", fl ? "1e-5" : "1e-10",
                         fl ? ",precision=float,precond_precision=float" : "");
                bsr_solver_stats st;
                bsr_status r = bsr_test_solve(NULL, cfg, P.A, B, X, &st);
                double e = bsr_test_rel_err(X, Xs);
                printf("\n  %s %s: %s, %d iterations, error %.3e", specs[g], cfg, r ? bsr_last_error() : "ok",
                       r ? -1 : st.col[0].iterations, e);
                CU_ASSERT_EQUAL(r, BSR_OK);
                if (r) continue;
                for (int j = 0; j < 2; j++) {
                    CU_ASSERT(bsr_reason_converged(st.col[j].reason));
                    CU_ASSERT(st.col[j].relres <= (fl ? 1e-5 : 1e-10) * 1.0001);
                    if (!fl) CU_ASSERT(st.col[j].iterations > (q ? 16 : 10));   /* past a restart */
                }
                CU_ASSERT(e < (fl ? 1e-2 : 1e-6));
                bsr_solver_stats_free(&st);
            }
        bsr_multivec_destroy(B); bsr_multivec_destroy(Xs); bsr_multivec_destroy(X);
        bsr_problem_free(&P);
    }
}

/* An indefinite coupled system (coupled3d, coupling 0.4) with ILU(0): GMRES(20)
 * stalls above 1e-3 in 1500 iterations; GMRES-DR(20, 8) converges to 1e-8
 * in a fraction of them, with the error of its residual's conditioning. */
static void test_stall(void)
{
    bsr_problem P;
    BSR_ASSERT_OK(bsr_generate("coupled3d:12,4,couple=0.4", BSR_DOUBLE, &P));
    bsr_multivec *X;
    BSR_ASSERT_OK(bsr_multivec_create(&X, bsr_multivec_rows(P.rhs), 1, BSR_DOUBLE));
    bsr_solver_stats s1, s2;
    const char *plain = "method=gmres,restart=20,precond=ilu0,rtol=1e-8,etol=off,maxit=1500";
    const char *dr = "method=gmres,restart=20,deflate=8,precond=ilu0,rtol=1e-8,etol=off,maxit=1500";
    CU_ASSERT_EQUAL(bsr_test_solve(NULL, plain, P.A, P.rhs, X, &s1), BSR_ERR_NOCONV);
    BSR_ASSERT_OK(bsr_test_solve(NULL, dr, P.A, P.rhs, X, &s2));
    double e = bsr_test_rel_err(X, P.xexact);
    printf("\n    GMRES(20): %s at %d, relres %.2e; GMRES-DR(20, 8): %d iterations, relres %.2e, error %.2e",
           bsr_reason_string(s1.col[0].reason), s1.col[0].iterations, s1.col[0].relres, s2.col[0].iterations,
           s2.col[0].relres, e);
    CU_ASSERT_EQUAL(s1.col[0].reason, BSR_DIVERGED_MAXIT);
    CU_ASSERT(s1.col[0].relres > 1e-3);
    CU_ASSERT(bsr_reason_converged(s2.col[0].reason));
    CU_ASSERT(s2.col[0].iterations < 500);
    CU_ASSERT(e < 1e-4);
    bsr_solver_stats_free(&s1);
    bsr_solver_stats_free(&s2);
    bsr_multivec_destroy(X);
    bsr_problem_free(&P);
}

/* The same bits twice; column 1 of a batch of 3 as alone (the columns' own
 * Hessenberg matrices, rotations and deflations; no column restarts here).
 * Its iterations count the batch's steps: where its deflated start is a
 * step later than another column's (a complex pair kept whole), it waits
 * that step, at most one a cycle of m - K - 1 or more. */
static void test_deterministic(void)
{
    bsr_problem P;
    bsr_multivec *B, *Xs, *X1, *X2;
    bsr_test_problem_k("rotconv3d:8", 3, 17, &P, &B, &Xs);
    int64_t n = bsr_multivec_rows(B);
    BSR_ASSERT_OK(bsr_multivec_create(&X1, n, 3, BSR_DOUBLE));
    BSR_ASSERT_OK(bsr_multivec_create(&X2, n, 3, BSR_DOUBLE));
    const char *cfg = "method=gmres,restart=10,deflate=4,precond=ilu0,rtol=1e-10,maxit=3000";
    bsr_solver_stats s1, s2, s3;
    BSR_ASSERT_OK(bsr_test_solve(NULL, cfg, P.A, B, X1, &s1));
    BSR_ASSERT_OK(bsr_test_solve(NULL, cfg, P.A, B, X2, &s2));
    CU_ASSERT(bsr_test_same_bits(X1, X2));
    for (int j = 0; j < 3; j++) CU_ASSERT_EQUAL(s1.col[j].iterations, s2.col[j].iterations);
    CU_ASSERT(bsr_test_column_alone(cfg, P.A, B, X1, 1, &s3));
    printf("\n    column 1 in the batch %d iterations, alone %d", s1.col[1].iterations, s3.col[0].iterations);
    CU_ASSERT(s1.col[1].iterations > 10);
    CU_ASSERT_EQUAL(s1.col[1].restarts, 0);
    const int ib = s1.col[1].iterations, ia = s3.col[0].iterations;
    CU_ASSERT(ia <= ib && ib <= ia + ia / (10 - 4 - 1) + 1);
    bsr_solver_stats_free(&s1); bsr_solver_stats_free(&s2); bsr_solver_stats_free(&s3);
    bsr_multivec_destroy(B); bsr_multivec_destroy(Xs); bsr_multivec_destroy(X1); bsr_multivec_destroy(X2);
    bsr_problem_free(&P);
}

/* Column j's ||X(:,j) - Y(:,j)|| / ||Y(:,j)||. */
static double col_err(const bsr_multivec *X, const bsr_multivec *Y, int j)
{
    const int64_t n = bsr_multivec_rows(X);
    const int k = bsr_multivec_cols(X);
    double *x = malloc(sizeof(double) * (size_t)(n * k)), *y = malloc(sizeof(double) * (size_t)(n * k)), d = 0, m = 0;
    bsr_multivec_to_colmajor(X, x, n);
    bsr_multivec_to_colmajor(Y, y, n);
    for (int64_t i = j * n; i < (j + 1) * n; i++) {
        d += (x[i] - y[i]) * (x[i] - y[i]);
        m += y[i] * y[i];
    }
    free(x);
    free(y);
    return sqrt(d / m);
}

/* The error control's solves take a flexible GMRES-DR solve's kept space
 * (its Z too) as they take GMRES-DR's: about as many iterations, and each
 * column's estimate within 3x of its true error; k columns of random exact
 * solutions (seed), which in a batch stop at their own iterations, each
 * keeping its own space while the others go on. */
static void flex_space(int k, uint64_t seed)
{
    bsr_problem P;
    bsr_multivec *B, *Xs;
    bsr_test_problem_k("rotconv3d:16,4", k, seed, &P, &B, &Xs);
    bsr_multivec *X1 = bsr_test_x_like(B), *X2 = bsr_test_x_like(B);
    const char *c1 = "method=gmres,restart=20,deflate=8,orth=cgs2,precond=ilu0,rtol=1e-8,etol=1e-7,maxit=3000";
    char c2[160];
    snprintf(c2, sizeof c2, "%s,flex=1", c1);
    bsr_solver_stats s1, s2;
    BSR_ASSERT_OK(bsr_test_solve(NULL, c1, P.A, B, X1, &s1));
    BSR_ASSERT_OK(bsr_test_solve(NULL, c2, P.A, B, X2, &s2));
    int differ = 0;
    for (int j = 0; j < k; j++) {
        const double e2 = col_err(X2, Xs, j);
        printf("\n    rotconv3d:16,4, column %d of %d: %d iterations, the error control's %d, flexible %d and %d "
               "(estimate %.2e, error %.2e)", j, k, s1.col[j].iterations, s1.col[j].err_its, s2.col[j].iterations,
               s2.col[j].err_its, s2.col[j].err_est, e2);
        CU_ASSERT(s1.col[j].err_its > 0 && s2.col[j].err_its > 0);
        CU_ASSERT(abs(s1.col[j].err_its - s2.col[j].err_its) <= 2 + s1.col[j].err_its / 10);
        CU_ASSERT(s2.col[j].err_est < 1e-7 && e2 < 1e-7);
        CU_ASSERT(s2.col[j].err_est > e2 / 3 && s2.col[j].err_est < 3 * e2);
        differ |= s2.col[j].iterations != s2.col[0].iterations;
    }
    CU_ASSERT(k == 1 || differ);   /* a batch's columns stopped apart */
    bsr_solver_stats_free(&s1);
    bsr_solver_stats_free(&s2);
    bsr_multivec_destroy(B); bsr_multivec_destroy(Xs); bsr_multivec_destroy(X1); bsr_multivec_destroy(X2);
    bsr_problem_free(&P);
}

/* flex=1: parsed, printed and refused as deflate is; on stable problems
 * (GMRES(m) and GMRES-DR, two columns, double and float) it converges to
 * the known solution in GMRES's iterations within one, and the error
 * control's solves take its kept space as GMRES-DR's; on an indefinite
 * coupled system whose uncapped ILU2 amplifies (coupling 0.5, b = 5) plain
 * GMRES's own residual meets rtol while its true one does not (a column
 * reopened), and FGMRES's true residual meets it where its own does, in
 * fewer iterations. */
static void test_flex(void)
{
    bsr_solver_options o;
    char buf[1024];
    bsr_solver_options_default(&o);
    CU_ASSERT_EQUAL(o.flex, 0);
    BSR_ASSERT_OK(bsr_solver_options_parse(&o, "method=gmres,restart=20,deflate=6,flex=1"));
    BSR_ASSERT_OK(bsr_solver_options_check(&o));
    CU_ASSERT_PTR_NOT_NULL(strstr(bsr_solver_options_string(&o, buf, sizeof buf), "deflate=6,flex=1"));
    CU_ASSERT_EQUAL(bsr_solver_options_parse(&o, "flex=2"), BSR_ERR_ARG);
    CU_ASSERT_PTR_NOT_NULL(strstr(bsr_last_error(), "flex"));
    bsr_solver_options_default(&o);
    BSR_ASSERT_OK(bsr_solver_options_parse(&o, "method=bicgstab,flex=1"));
    CU_ASSERT_EQUAL(bsr_solver_options_check(&o), BSR_ERR_ARG);
    CU_ASSERT_PTR_NOT_NULL(strstr(bsr_last_error(), "flex"));

    bsr_problem P;
    bsr_multivec *B, *Xs;
    bsr_test_problem_k("convdiff2d:24,30", 2, 17, &P, &B, &Xs);
    bsr_multivec *X1 = bsr_test_x_like(B), *X2 = bsr_test_x_like(B);
    for (int q = 0; q < 4; q++) {
        const int fl = q & 1;
        char c1[192], c2[200];
        snprintf(c1, sizeof c1, "method=gmres,restart=8,%sorth=cgs2,precond=ilu0,rtol=%s,maxit=3000%s",
                 q & 2 ? "deflate=4," : "", fl ? "1e-5" : "1e-10", fl ? ",precision=float,precond_precision=float" : "");
        snprintf(c2, sizeof c2, "%s,flex=1", c1);
        bsr_solver_stats s1, s2;
        BSR_ASSERT_OK(bsr_test_solve(NULL, c1, P.A, B, X1, &s1));
        BSR_ASSERT_OK(bsr_test_solve(NULL, c2, P.A, B, X2, &s2));
        printf("\n    %s: %d / %d iterations, flexible %d / %d, error %.2e", c1, s1.col[0].iterations,
               s1.col[1].iterations, s2.col[0].iterations, s2.col[1].iterations, bsr_test_rel_err(X2, Xs));
        for (int j = 0; j < 2; j++) {
            CU_ASSERT(bsr_reason_converged(s2.col[j].reason));
            CU_ASSERT(s2.col[j].relres <= (fl ? 1e-5 : 1e-10) * 1.0001);
            CU_ASSERT(s2.col[j].iterations > 8);   /* past a restart */
            CU_ASSERT(abs(s1.col[j].iterations - s2.col[j].iterations) <= 1);
        }
        CU_ASSERT(bsr_test_rel_err(X2, Xs) < (fl ? 1e-2 : 1e-6));
        bsr_solver_stats_free(&s1);
        bsr_solver_stats_free(&s2);
    }
    bsr_multivec_destroy(B); bsr_multivec_destroy(Xs); bsr_multivec_destroy(X1); bsr_multivec_destroy(X2);
    bsr_problem_free(&P);

    /* the error control's solves take the flexible solve's kept space, one column and a batch */
    flex_space(1, 17);
    flex_space(3, 29);

    BSR_ASSERT_OK(bsr_generate("coupled3d:13,5,couple=0.5", BSR_DOUBLE, &P));
    X1 = bsr_test_x_like(P.rhs);
    const char *plain = "method=gmres,restart=200,orth=cgs2,precond=ilu2,cap=none,fallback=off,etol=off,rtol=1e-9,"
                        "maxit=2000";
    char flex[256];
    snprintf(flex, sizeof flex, "%s,flex=1", plain);
    bsr_solver_stats s1, s2;
    BSR_ASSERT_OK(bsr_test_solve(NULL, plain, P.A, P.rhs, X1, &s1));
    BSR_ASSERT_OK(bsr_test_solve(NULL, flex, P.A, P.rhs, X1, &s2));
    double e = bsr_test_rel_err(X1, P.xexact);
    printf("\n    coupled3d:13,5,couple=0.5, ILU2: GMRES(200) %d iterations, %d reopened; FGMRES %d, %d reopened, "
           "relres %.2e, error %.2e", s1.col[0].iterations, s1.col[0].restarts, s2.col[0].iterations,
           s2.col[0].restarts, s2.col[0].relres, e);
    CU_ASSERT(bsr_reason_converged(s1.col[0].reason));
    CU_ASSERT(s1.col[0].restarts >= 1);
    CU_ASSERT(bsr_reason_converged(s2.col[0].reason));
    CU_ASSERT_EQUAL(s2.col[0].restarts, 0);
    CU_ASSERT(s2.col[0].iterations < s1.col[0].iterations);
    CU_ASSERT(s2.col[0].relres <= 1e-9 * 1.0001);
    CU_ASSERT(e < 1e-5);
    bsr_solver_stats_free(&s1);
    bsr_solver_stats_free(&s2);
    bsr_multivec_destroy(X1);
    bsr_problem_free(&P);
}

/* The host's one-pass combinations (CGS2's updates, the cycle's correction,
 * the deflated restart's basis, the error control's space) against the
 * separate axpby calls (bsr_kops_set_unfused): the same iterations and bits,
 * double and float, one and three columns. */
static void test_fused(void)
{
    bsr_problem P;
    bsr_multivec *B, *Xs, *X[2];
    bsr_test_problem_k("coupled3d:10,4,couple=0.4", 3, 41, &P, &B, &Xs);
    const int64_t n = bsr_multivec_rows(B);
    static const char *const cfgs[] = {
        "method=gmres,restart=20,orth=cgs2,precond=ilu0,rtol=1e-10",
        "method=gmres,restart=20,deflate=8,orth=cgs2,precond=ilu0,rtol=1e-10,etol=1e-9",
        "method=gmres,restart=12,deflate=5,orth=cgs2,precond=ilu0,rtol=1e-5,etol=1e-5,precision=float,"
        "precond_precision=float"};
    for (int c = 0; c < 3; c++) {
        int its[2][3];
        for (int u = 0; u < 2; u++) {
            bsr_solver_stats st;
            bsr_kops_set_unfused(u);
            BSR_ASSERT_OK(bsr_multivec_create(&X[u], n, 3, BSR_DOUBLE));
            BSR_ASSERT_OK(bsr_test_solve(NULL, cfgs[c], P.A, B, X[u], &st));
            for (int j = 0; j < 3; j++) its[u][j] = st.col[j].iterations + st.col[j].err_its;
            bsr_solver_stats_free(&st);
        }
        bsr_kops_set_unfused(0);
        for (int j = 0; j < 3; j++) CU_ASSERT_EQUAL(its[0][j], its[1][j]);
        CU_ASSERT(bsr_test_same_bits(X[0], X[1]));
        bsr_multivec_destroy(X[0]);
        bsr_multivec_destroy(X[1]);
    }
    bsr_multivec_destroy(B); bsr_multivec_destroy(Xs);
    bsr_problem_free(&P);
}

int main(int argc, char **argv)
{
    static const bsr_test tests[] = {
        {"deflate: default, range, method and restart rules, round trip", test_options},
        {"GMRES-DR's first cycle is GMRES(m)'s, bit for bit", test_first_cycle},
        {"GMRES-DR(m, K) double and float, batched: converged to x*", test_converges},
        {"GMRES-DR converges where GMRES(m) stalls (indefinite coupled3d)", test_stall},
        {"GMRES-DR deterministic, columns independent of the batch", test_deterministic},
        {"one-pass combinations: the bits of the separate updates", test_fused},
        {"flex=1: GMRES's iterations where stable, the true residual where the factor amplifies", test_flex},
        {NULL, NULL},
    };
    return bsr_test_main("gmresdr", tests, argc, argv);
}
