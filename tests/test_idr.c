/* SPDX-License-Identifier: BSD-3-Clause */
/* The Krylov table (krylov_table.c) and IDR(s) (krylov_idr.c): every row's
 * name parses and prints back, an unknown method keeps its message; IDR(s)
 * converges on nonsymmetric problems for s = 1, 2, 4, 8 in double and float
 * to the known solution, IDR(1) takes about BiCGStab's products, NaN and
 * breakdown stop a column with their status, results are deterministic and a
 * column's iterates do not depend on the other columns of the batch. */
#include "harness.h"
#include "krylov_table.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Solve A X = B from X = 0 under cfg on the CPU; returns the status, stats in *st. */
static bsr_status solve(const char *cfg, const bsr_matrix *A, const bsr_multivec *B, bsr_multivec *X,
                        bsr_solver_stats *st)
{
    return bsr_test_solve(NULL, cfg, A, B, X, st);
}

/* Every row: a public method value once, its name parses to it and prints
 * back (with its parameter, which round-trips at both ends of its range). */
static void test_table_rows(void)
{
    int n;
    const bsr_krylov_row *rows = bsr_krylov_rows(&n);
    CU_ASSERT_EQUAL(n, BSR_IDR + 1);
    for (int m = BSR_BICGSTAB; m <= BSR_IDR; m++) {
        int found = 0;
        for (int i = 0; i < n; i++) found += rows[i].method == (bsr_method)m;
        CU_ASSERT_EQUAL(found, 1);
        CU_ASSERT_EQUAL(bsr_krylov_row_of((bsr_method)m)->method, (bsr_method)m);
    }
    CU_ASSERT_PTR_NULL(bsr_krylov_row_of((bsr_method)(BSR_IDR + 1)));
    CU_ASSERT_STRING_EQUAL(bsr_method_name((bsr_method)(BSR_IDR + 1)), "?");
    for (int i = 0; i < n; i++) {
        const bsr_krylov_row *r = &rows[i];
        CU_ASSERT_PTR_NOT_NULL(r->solve);
        CU_ASSERT_PTR_EQUAL(bsr_krylov_row_named(r->name), r);
        CU_ASSERT_STRING_EQUAL(bsr_method_name(r->method), r->name);
        /* a method that refuses some preconditioner says what it needs */
        if (r->pcs != BSR_PCS_ALL) {
            CU_ASSERT_PTR_NOT_NULL(r->pcs_need);
        }
        int ends[2] = {r->param_min, r->param_max};
        for (int e = 0; e < (r->param ? 2 : 1); e++) {
            char opt[64], buf[1024], want[64];
            bsr_solver_options o, p;
            bsr_solver_options_default(&o);
            o.precond = BSR_PC_JACOBI;   /* one every method takes */
            if (r->param) snprintf(opt, sizeof opt, "method=%s,%s=%d", r->name, r->param, ends[e]);
            else snprintf(opt, sizeof opt, "method=%s", r->name);
            BSR_ASSERT_OK(bsr_solver_options_parse(&o, opt));
            BSR_ASSERT_OK(bsr_solver_options_check(&o));
            CU_ASSERT_EQUAL(o.method, r->method);
            bsr_solver_options_string(&o, buf, sizeof buf);
            snprintf(want, sizeof want, "method=%s,", r->name);
            CU_ASSERT_EQUAL(strncmp(buf, want, strlen(want)), 0);
            if (r->param) {
                CU_ASSERT_EQUAL(*bsr_krylov_param(&o, r), ends[e]);
                snprintf(want, sizeof want, ",%s=%d,", r->param, ends[e]);
                CU_ASSERT_PTR_NOT_NULL(strstr(buf, want));
            }
            bsr_solver_options_default(&p);
            BSR_ASSERT_OK(bsr_solver_options_parse(&p, buf));
            CU_ASSERT_EQUAL(p.method, o.method);
            if (r->param) {
                CU_ASSERT_EQUAL(*bsr_krylov_param(&p, r), ends[e]);
            }
        }
        if (r->param) {
            /* the default, and one past the range refused naming the key */
            bsr_solver_options o;
            bsr_solver_options_default(&o);
            CU_ASSERT_EQUAL(*bsr_krylov_param(&o, r), r->param_def);
            char opt[64];
            snprintf(opt, sizeof opt, "%s=%d", r->param, r->param_max + 1);
            CU_ASSERT_EQUAL(bsr_solver_options_parse(&o, opt), BSR_ERR_ARG);
            CU_ASSERT_PTR_NOT_NULL(strstr(bsr_last_error(), r->param));
            CU_ASSERT_EQUAL(*bsr_krylov_param(&o, r), r->param_def);   /* unchanged */
        }
    }
}

/* An unknown method: BSR_ERR_ARG with the message naming the known ones. */
static void test_unknown_method(void)
{
    bsr_solver_options o;
    bsr_solver_options_default(&o);
    CU_ASSERT_EQUAL(bsr_solver_options_parse(&o, "method=qmr"), BSR_ERR_ARG);
    CU_ASSERT_STRING_EQUAL(bsr_last_error(), "solver options: method=qmr: expected bicgstab, gmres, cg or idr");
    CU_ASSERT_EQUAL(o.method, BSR_BICGSTAB);
    CU_ASSERT_EQUAL(bsr_solver_options_parse(&o, "frobnicate=1"), BSR_ERR_ARG);
    CU_ASSERT_PTR_NOT_NULL(strstr(bsr_last_error(), "unknown key 'frobnicate'"));
    CU_ASSERT_PTR_NOT_NULL(strstr(bsr_last_error(), "restart"));
    CU_ASSERT_PTR_NOT_NULL(strstr(bsr_last_error(), "idr_s"));
    /* the CG rule keeps its words */
    BSR_ASSERT_OK(bsr_solver_options_parse(&o, "method=cg,precond=ilut"));
    CU_ASSERT_EQUAL(bsr_solver_options_check(&o), BSR_ERR_ARG);
    CU_ASSERT_STRING_EQUAL(bsr_last_error(), "solver options: method=cg needs a symmetric preconditioner "
                                             "(precond=none, jacobi, ssor, ic0 or ic2), not precond=ilut");
}

/* idr_s: default 4, printed with method=idr only, refused outside 1..16 (by
 * the parser and, for a struct filled by hand, by the check); IDR takes
 * every preconditioner. */
static void test_idr_options(void)
{
    bsr_solver_options o;
    char buf[1024];
    bsr_solver_options_default(&o);
    CU_ASSERT_EQUAL(o.idr_s, 4);
    CU_ASSERT_PTR_NULL(strstr(bsr_solver_options_string(&o, buf, sizeof buf), "idr_s"));
    BSR_ASSERT_OK(bsr_solver_options_parse(&o, "idr_s=8,method=idr,precond=ilu2"));
    BSR_ASSERT_OK(bsr_solver_options_check(&o));
    CU_ASSERT_EQUAL(o.method, BSR_IDR);
    CU_ASSERT_EQUAL(o.idr_s, 8);
    CU_ASSERT_PTR_NOT_NULL(strstr(bsr_solver_options_string(&o, buf, sizeof buf), "method=idr,idr_s=8,precond=ilu2"));
    CU_ASSERT_PTR_NULL(strstr(buf, "restart"));
    static const char *const bad[] = {"idr_s=0", "idr_s=17", "idr_s=x", "idr_s=4.5", "idr_s="};
    for (int i = 0; i < 5; i++) {
        CU_ASSERT_EQUAL(bsr_solver_options_parse(&o, bad[i]), BSR_ERR_ARG);
        CU_ASSERT_PTR_NOT_NULL(strstr(bsr_last_error(), "idr_s"));
        CU_ASSERT_EQUAL(o.idr_s, 8);
    }
    for (int pc = BSR_PC_NONE; pc <= BSR_PC_IC2; pc++) {
        o.precond = (bsr_pc_kind)pc;
        BSR_ASSERT_OK(bsr_solver_options_check(&o));
    }
    o.precond = BSR_PC_ILU0;
    o.idr_s = 0;
    CU_ASSERT_EQUAL(bsr_solver_options_check(&o), BSR_ERR_ARG);
    CU_ASSERT_PTR_NOT_NULL(strstr(bsr_last_error(), "idr_s"));
    bsr_solver *s = NULL;
    CU_ASSERT_EQUAL(bsr_solver_create(&s, NULL, &o), BSR_ERR_ARG);
    CU_ASSERT_PTR_NULL(s);
    o.method = BSR_BICGSTAB;   /* not its parameter: not read */
    BSR_ASSERT_OK(bsr_solver_options_check(&o));
    /* the printed string reproduces the options field for field */
    static const char *const cfgs[] = {"method=idr,idr_s=7,precond=ilut,tau1=0.02,keep_pattern=0,stag=6,dtol=1e5",
                                       "precond=jacobi,idr_s=16,method=idr,precision=float,max_restarts=2",
                                       "method=idr,idr_s=1,precond=none,rtol=1e-12,maxit=77"};
    for (int c = 0; c < 3; c++) {
        bsr_solver_options p;
        bsr_test_options_round_trip(cfgs[c], &o, &p, buf, sizeof buf);
        CU_ASSERT_EQUAL(p.idr_s, o.idr_s);
    }
}

/* IDR(s), s = 1, 2, 4, 8, double and float, two right-hand sides: converged
 * on nonsymmetric problems, the solution near the known one. */
static void test_converges(void)
{
    static const char *const specs[] = {"convdiff2d:24,30", "rotconv3d:8", "cfd3d:6,4"};
    static const int ss[] = {1, 2, 4, 8};
    for (int g = 0; g < 3; g++) {
        bsr_problem P;
        bsr_multivec *B, *Xs, *X;
        bsr_test_problem_k(specs[g], 2, 17, &P, &B, &Xs);
        BSR_ASSERT_OK(bsr_multivec_create(&X, bsr_multivec_rows(B), 2, BSR_DOUBLE));
        for (int fl = 0; fl < 2; fl++)
            for (int q = 0; q < 4; q++) {
                char cfg[160];
                snprintf(cfg, sizeof cfg, "method=idr,idr_s=%d,precond=ilu0,rtol=%s,maxit=3000%s", ss[q],
                         fl ? "1e-5" : "1e-10", fl ? ",precision=float,precond_precision=float" : "");
                bsr_solver_stats st;
                bsr_status r = solve(cfg, P.A, B, X, &st);
                double e = bsr_test_rel_err(X, Xs);
                if (r || !(e < (fl ? 1e-2 : 1e-6)))
                    printf("\n  %s %s: %s, error %.3e", specs[g], cfg, r ? bsr_last_error() : "ok", e);
                CU_ASSERT_EQUAL(r, BSR_OK);
                for (int j = 0; j < 2; j++) {
                    CU_ASSERT(bsr_reason_converged(st.col[j].reason));
                    CU_ASSERT(st.col[j].relres <= (fl ? 1e-5 : 1e-10) * 1.0001);
                    CU_ASSERT(st.col[j].iterations > 0);
                }
                CU_ASSERT(e < (fl ? 1e-2 : 1e-6));
                bsr_solver_stats_free(&st);
            }
        bsr_multivec_destroy(B); bsr_multivec_destroy(Xs); bsr_multivec_destroy(X);
        bsr_problem_free(&P);
    }
}

/* IDR(1) is of BiCGStab's class: its products with A (its iterations) within
 * a factor 2 of BiCGStab's (two a step), either way. */
static void test_idr1_like_bicgstab(void)
{
    static const char *const specs[] = {"convdiff2d:32,30", "convdiff2d:32,300", "cfd3d:8,4"};
    for (int g = 0; g < 3; g++) {
        bsr_problem P;
        bsr_multivec *B, *Xs, *X;
        bsr_test_problem_k(specs[g], 1, 17, &P, &B, &Xs);
        BSR_ASSERT_OK(bsr_multivec_create(&X, bsr_multivec_rows(B), 1, BSR_DOUBLE));
        bsr_solver_stats sb, si;
        BSR_ASSERT_OK(solve("method=bicgstab,precond=ilu0,rtol=1e-10", P.A, B, X, &sb));
        BSR_ASSERT_OK(solve("method=idr,idr_s=1,precond=ilu0,rtol=1e-10", P.A, B, X, &si));
        int pb = 2 * sb.col[0].iterations, pi = si.col[0].iterations;
        printf("\n  %s: BiCGStab %d products, IDR(1) %d", specs[g], pb, pi);
        CU_ASSERT(pi <= 2 * pb && 2 * pi >= pb);
        bsr_solver_stats_free(&sb);
        bsr_solver_stats_free(&si);
        bsr_multivec_destroy(B); bsr_multivec_destroy(Xs); bsr_multivec_destroy(X);
        bsr_problem_free(&P);
    }
}

/* Stopping: maxit exact, x0 = x* at iteration 0, a NaN column stops as NaN
 * while the others converge and a b = 0 column stays 0; a preconditioned
 * operator of rank one (ILU(0) of a cyclic permutation) is a breakdown
 * within a few restarts, never a false convergence. */
static void test_stops(void)
{
    bsr_problem P;
    bsr_multivec *B, *Xs, *X;
    bsr_test_problem_k("convdiff2d:16,30", 3, 17, &P, &B, &Xs);
    int64_t n = bsr_multivec_rows(B);
    BSR_ASSERT_OK(bsr_multivec_create(&X, n, 3, BSR_DOUBLE));
    bsr_solver_stats st;
    CU_ASSERT_EQUAL(solve("method=idr,precond=none,maxit=7,rtol=1e-14", P.A, B, X, &st), BSR_ERR_NOCONV);
    for (int j = 0; j < 3; j++) {
        CU_ASSERT_EQUAL(st.col[j].reason, BSR_DIVERGED_MAXIT);
        CU_ASSERT_EQUAL(st.col[j].iterations, 7);
        CU_ASSERT(st.col[j].relres < 1 && st.col[j].relres > 1e-10);
    }
    bsr_solver_stats_free(&st);
    /* x0 = x*: converged at iteration 0 */
    bsr_solver *s;
    BSR_ASSERT_OK(bsr_solver_create_str(&s, NULL, "method=idr,precond=ilu0,rtol=1e-10"));
    BSR_ASSERT_OK(bsr_solver_setup(s, P.A));
    BSR_ASSERT_OK(bsr_multivec_copy(X, Xs));
    BSR_ASSERT_OK(bsr_solver_solve(s, B, X, &st));
    for (int j = 0; j < 3; j++) CU_ASSERT_EQUAL(st.col[j].iterations, 0);
    bsr_solver_stats_free(&st);
    /* column 1: b = 0, column 2: a NaN */
    double *b = bsr_multivec_data(B);
    for (int64_t i = 0; i < n; i++) b[i * 3 + 1] = 0;
    b[5 * 3 + 2] = NAN;
    BSR_ASSERT_OK(bsr_multivec_fill(X, 0.0));
    CU_ASSERT_EQUAL(bsr_solver_solve(s, B, X, &st), BSR_ERR_NOCONV);
    CU_ASSERT_EQUAL(st.col[0].reason, BSR_CONVERGED_RTOL);
    CU_ASSERT_EQUAL(st.col[1].reason, BSR_CONVERGED_RTOL);
    CU_ASSERT_EQUAL(st.col[1].iterations, 0);
    CU_ASSERT_EQUAL(st.col[2].reason, BSR_DIVERGED_NAN);
    CU_ASSERT_PTR_NOT_NULL(strstr(bsr_last_error(), "column 2"));
    const double *x = bsr_multivec_cdata(X), *xs = bsr_multivec_cdata(Xs);
    double e = 0, mx = 0;
    for (int64_t i = 0; i < n; i++) {
        CU_ASSERT_EQUAL(x[i * 3 + 1], 0.0);
        e = fmax(e, fabs(x[i * 3] - xs[i * 3]));
        mx = fmax(mx, fabs(xs[i * 3]));
    }
    CU_ASSERT(e <= 1e-7 * mx);
    bsr_solver_stats_free(&st);
    bsr_solver_destroy(s);
    bsr_multivec_destroy(B); bsr_multivec_destroy(Xs); bsr_multivec_destroy(X);
    bsr_problem_free(&P);

    /* the rank-one preconditioned operator of test_numerics' BiCGStab stall */
    int rp[] = {0, 1, 2, 3}, ci[] = {1, 2, 0};
    double v[] = {1, 1, 1};
    bsr_matrix *A;
    BSR_ASSERT_OK(bsr_matrix_create(&A, 3, 3, 1, rp, ci, v, BSR_DOUBLE, 0));
    BSR_ASSERT_OK(bsr_multivec_create(&B, 3, 2, BSR_DOUBLE));
    BSR_ASSERT_OK(bsr_multivec_create(&X, 3, 2, BSR_DOUBLE));
    b = bsr_multivec_data(B);
    for (int i = 0; i < 6; i++) b[i] = i % 2 ? 1.0 + i : 1.0;
    for (int q = 1; q <= 4; q *= 2) {
        char cfg[96];
        snprintf(cfg, sizeof cfg, "method=idr,idr_s=%d,precond=ilu0,maxit=1000", q);
        bsr_status r = solve(cfg, A, B, X, &st);
        for (int j = 0; j < 2; j++) {
            printf("\n  IDR(%d) column %d: %s after %d iterations, %d restarts, relres %.3e", q, j,
                   bsr_reason_string(st.col[j].reason), st.col[j].iterations, st.col[j].restarts, st.col[j].relres);
            /* whatever it reports is true: converged only with a true residual under tol */
            if (bsr_reason_converged(st.col[j].reason)) {
                CU_ASSERT(st.col[j].relres <= 1e-8 * 1.0001);
            } else {
                CU_ASSERT_EQUAL(st.col[j].reason, BSR_DIVERGED_BREAKDOWN);
            }
            CU_ASSERT(st.col[j].iterations < 200);
        }
        CU_ASSERT(r == BSR_OK || r == BSR_ERR_BREAKDOWN);
        if (q > 1) {   /* here column 1 does break down: the status says so */
            CU_ASSERT_EQUAL(r, BSR_ERR_BREAKDOWN);
            CU_ASSERT_EQUAL(st.col[1].reason, BSR_DIVERGED_BREAKDOWN);
            CU_ASSERT_EQUAL(st.col[1].restarts, 5);
            CU_ASSERT_PTR_NOT_NULL(strstr(bsr_last_error(), "column 1 stopped (breakdown)"));
        }
        bsr_solver_stats_free(&st);
    }
    /* without the preconditioner it is solved: IDR(s) is exact in n + n/s products */
    for (int q = 1; q <= 4; q *= 2) {
        char cfg[96];
        snprintf(cfg, sizeof cfg, "method=idr,idr_s=%d,precond=none,rtol=1e-12", q);
        CU_ASSERT_EQUAL(solve(cfg, A, B, X, &st), BSR_OK);
        bsr_solver_stats_free(&st);
    }
    bsr_multivec_destroy(B); bsr_multivec_destroy(X);
    bsr_matrix_destroy(A);
}

/* Two runs are bit-identical; a column solved in a batch of three gives the
 * bits it gives alone (the shadow space is the same in every column and the
 * columns' scalars are their own), and its iterations unless it restarted. */
static void test_deterministic(void)
{
    bsr_problem P;
    bsr_multivec *B, *Xs, *X1, *X2;
    bsr_test_problem_k("rotconv3d:8", 3, 17, &P, &B, &Xs);
    int64_t n = bsr_multivec_rows(B);
    BSR_ASSERT_OK(bsr_multivec_create(&X1, n, 3, BSR_DOUBLE));
    BSR_ASSERT_OK(bsr_multivec_create(&X2, n, 3, BSR_DOUBLE));
    static const char *const cfgs[] = {"method=idr,precond=ilu0,rtol=1e-10",
                                       "method=idr,idr_s=3,precond=jacobi,rtol=1e-5,precision=float"};
    const int sof[] = {4, 3};
    for (int c = 0; c < 2; c++) {
        bsr_solver_stats s1, s2, s3;
        BSR_ASSERT_OK(solve(cfgs[c], P.A, B, X1, &s1));
        BSR_ASSERT_OK(solve(cfgs[c], P.A, B, X2, &s2));
        CU_ASSERT(bsr_test_same_bits(X1, X2));
        for (int j = 0; j < 3; j++) CU_ASSERT_EQUAL(s1.col[j].iterations, s2.col[j].iterations);
        CU_ASSERT(bsr_test_column_alone(cfgs[c], P.A, B, X1, 1, &s3));
        /* a column that restarts mid-cycle waits for the cycle's end in a
         * batch (at most s products), alone it starts the next one at once */
        const int ib = s1.col[1].iterations, ia = s3.col[0].iterations, re = s3.col[0].restarts;
        printf("\n  %s: column 1 in the batch %d iterations, alone %d, %d restarts", cfgs[c], ib, ia, re);
        CU_ASSERT_EQUAL(s1.col[1].restarts, re);
        CU_ASSERT(ia <= ib && ib <= ia + sof[c] * re);
        bsr_solver_stats_free(&s1); bsr_solver_stats_free(&s2); bsr_solver_stats_free(&s3);
    }
    bsr_multivec_destroy(B); bsr_multivec_destroy(Xs); bsr_multivec_destroy(X1); bsr_multivec_destroy(X2);
    bsr_problem_free(&P);
}

/* profile=1: the bandwidth model prices an IDR iteration (nonzero, growing with s). */
static void test_traffic(void)
{
    bsr_problem P;
    bsr_multivec *B, *Xs, *X;
    bsr_test_problem_k("convdiff2d:16,30", 1, 17, &P, &B, &Xs);
    BSR_ASSERT_OK(bsr_multivec_create(&X, bsr_multivec_rows(B), 1, BSR_DOUBLE));
    double last = 0;
    for (int q = 1; q <= 8; q *= 2) {
        char cfg[96];
        snprintf(cfg, sizeof cfg, "method=idr,idr_s=%d,precond=ilu0,profile=1", q);
        bsr_solver_stats st;
        BSR_ASSERT_OK(solve(cfg, P.A, B, X, &st));
        bsr_prof_enable(0);   /* profile=1 also turned on the phase printout */
        CU_ASSERT(st.prof_iter_bytes > last);
        CU_ASSERT(st.prof_bytes > st.col[0].iterations * st.prof_iter_bytes);
        last = st.prof_iter_bytes;
        bsr_solver_stats_free(&st);
    }
    bsr_multivec_destroy(B); bsr_multivec_destroy(Xs); bsr_multivec_destroy(X);
    bsr_problem_free(&P);
}

int main(int argc, char **argv)
{
    static const bsr_test tests[] = {
        {"Krylov table: every row parses and prints back", test_table_rows},
        {"unknown method: the message naming the known ones", test_unknown_method},
        {"IDR options: idr_s default, range, round trip", test_idr_options},
        {"IDR(s) s = 1, 2, 4, 8, double and float: converged to x*", test_converges},
        {"IDR(1) within a factor 2 of BiCGStab's products", test_idr1_like_bicgstab},
        {"IDR stops: maxit, x0 = x*, NaN, b = 0, breakdown", test_stops},
        {"IDR deterministic, columns independent of the batch", test_deterministic},
        {"IDR traffic model", test_traffic},
        {NULL, NULL},
    };
    return bsr_test_main("idr", tests, argc, argv);
}
