/* SPDX-License-Identifier: BSD-3-Clause */
/* Numerical edge cases of the solvers: right-hand sides near the ends of the
 * double range (norms and inner products must neither overflow nor
 * underflow), rows of tiny or subnormal values, and a BiCGStab that cannot
 * progress reports breakdown promptly. */
#include "harness.h"
#include "blockops.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Norms of vectors whose squares overflow or underflow. */
static void test_norm_range(void)
{
    enum { N = 1000 };
    bsr_multivec *X;
    BSR_ASSERT_OK(bsr_multivec_create(&X, N, 3, BSR_DOUBLE));
    double *x = bsr_multivec_data(X);
    for (int i = 0; i < N; i++) { x[3 * i] = 1e300; x[3 * i + 1] = 1e-300; x[3 * i + 2] = i == 7 ? 3e-320 : 0; }
    double nr[3];
    BSR_ASSERT_OK(bsr_multivec_norm2(X, nr));
    CU_ASSERT_DOUBLE_EQUAL(nr[0] / (1e300 * sqrt(N)), 1, 1e-14);
    CU_ASSERT_DOUBLE_EQUAL(nr[1] / (1e-300 * sqrt(N)), 1, 1e-14);
    CU_ASSERT_DOUBLE_EQUAL(nr[2] / 3e-320, 1, 1e-3); /* subnormal: 1e-3 is its own precision */
    bsr_multivec_destroy(X);
}

/* b scaled by 1e300 and 1e-300 on every method: the same iterations and the
 * solution scaled alike, as b = O(1) gives. */
static void test_solve_range(void)
{
    static const char *cfgs[] = {"method=bicgstab,precond=ilu0,rtol=1e-10", "method=gmres,precond=ilu0,rtol=1e-10",
                                 "method=cg,precond=jacobi,rtol=1e-10", "method=bicgstab,precond=none,rtol=1e-10",
                                 "method=idr,precond=ilu0,rtol=1e-10"};
    static const double scales[] = {1e300, 1e-300, 1e200};
    bsr_problem P;
    BSR_ASSERT_OK(bsr_generate("poisson2d:12", BSR_DOUBLE, &P));
    int64_t n = bsr_multivec_rows(P.rhs);
    for (size_t c = 0; c < sizeof cfgs / sizeof cfgs[0]; c++) {
        bsr_solver *s;
        bsr_solver_stats st;
        bsr_multivec *X1, *B, *X;
        BSR_ASSERT_OK(bsr_solver_create_str(&s, NULL, cfgs[c]));
        BSR_ASSERT_OK(bsr_solver_setup(s, P.A));
        BSR_ASSERT_OK(bsr_multivec_create(&X1, n, 1, BSR_DOUBLE));
        BSR_ASSERT_OK(bsr_solver_solve(s, P.rhs, X1, &st));
        int it1 = st.col[0].iterations;
        bsr_solver_stats_free(&st);
        for (int q = 0; q < 3; q++) {
            BSR_ASSERT_OK(bsr_multivec_create(&B, n, 1, BSR_DOUBLE));
            BSR_ASSERT_OK(bsr_multivec_create(&X, n, 1, BSR_DOUBLE));
            const double *b = bsr_multivec_cdata(P.rhs);
            double *bs = bsr_multivec_data(B);
            for (int64_t i = 0; i < n; i++) bs[i] = b[i] * scales[q];
            bsr_status r = bsr_solver_solve(s, B, X, &st);
            CU_ASSERT_EQUAL(r, BSR_OK);
            CU_ASSERT(isfinite(st.col[0].relres) && st.col[0].relres <= 1e-10);
            CU_ASSERT(isfinite(st.col[0].bnorm) && st.col[0].bnorm > 0);
            CU_ASSERT(abs(st.col[0].iterations - it1) <= 1);
            if (r != BSR_OK || !(st.col[0].relres <= 1e-10))
                printf("\n  %s, b x %g: %s, relres %g after %d iterations", cfgs[c], scales[q],
                       bsr_status_string(r), st.col[0].relres, st.col[0].iterations);
            const double *x = bsr_multivec_cdata(X), *x1 = bsr_multivec_cdata(X1);
            double err = 0;
            for (int64_t i = 0; i < n; i++) err = fmax(err, fabs(x[i] / scales[q] - x1[i]));
            CU_ASSERT(err <= 1e-6);
            bsr_solver_stats_free(&st);
            bsr_multivec_destroy(B);
            bsr_multivec_destroy(X);
        }
        bsr_multivec_destroy(X1);
        bsr_solver_destroy(s);
    }
    bsr_problem_free(&P);
}

/* Tridiagonal [-1 4 -1] of n rows with row 0 times f. */
static bsr_matrix *tridiag_row0(int n, double f)
{
    int *rp = malloc(sizeof(int) * (n + 1)), *ci = malloc(sizeof(int) * 3 * n);
    double *v = malloc(sizeof(double) * 3 * n);
    int nz = 0;
    for (int i = 0; i < n; i++) {
        rp[i] = nz;
        for (int j = i - 1; j <= i + 1; j++)
            if (j >= 0 && j < n) { ci[nz] = j; v[nz++] = (j == i ? 4.0 : -1.0) * (i ? 1.0 : f); }
    }
    rp[n] = nz;
    bsr_matrix *A = NULL;
    BSR_ASSERT_OK(bsr_matrix_create(&A, n, n, 1, rp, ci, v, BSR_DOUBLE, 0));
    free(rp); free(ci); free(v);
    return A;
}

/* A row of tiny values is not a zero row (issue 40): the squares of 1e-170
 * underflow to 0, and the ILU scaling read that as "block row 0 of A is
 * zero"; now it solves.  A row of subnormal values (1e-320, denormal.mtx) is
 * refused by every preconditioner that inverts diagonal blocks with "has only
 * subnormal values ...: rescale" (BSR_ERR_VALUE), in float already a row
 * below FLT_MIN; a row of stored zeros is still "zero". */
static void test_tiny_rows(void)
{
    /* the block norm itself */
    const double t170[4] = {1e-170, 0, 0, 1e-170}, t320[4] = {1e-320, 0, 0, 0}, z[4] = {0, 0, 0, 0};
    CU_ASSERT_DOUBLE_EQUAL(bsr_blk_fnorm(2, t170) / (sqrt(2.0) * 1e-170), 1, 1e-14);
    CU_ASSERT(bsr_blk_fnorm(2, t320) > 0);
    CU_ASSERT_EQUAL(bsr_blk_fnorm(2, z), 0.0);
    enum { N = 30 };
    static const char *const pcs[] = {"precond=ilu0", "precond=ilu2", "precond=ilut", "precond=jacobi",
                                      "method=gmres,precond=ssor"};
    bsr_multivec *Xs, *B, *X;
    BSR_ASSERT_OK(bsr_multivec_create(&Xs, N, 1, BSR_DOUBLE));
    BSR_ASSERT_OK(bsr_multivec_create(&B, N, 1, BSR_DOUBLE));
    BSR_ASSERT_OK(bsr_multivec_create(&X, N, 1, BSR_DOUBLE));
    double *xs = bsr_multivec_data(Xs);
    for (int i = 0; i < N; i++) xs[i] = 1 + 0.1 * i;
    bsr_matrix *T = tridiag_row0(N, 1e-170), *D = tridiag_row0(N, 1e-320), *Z = tridiag_row0(N, 0);
    BSR_ASSERT_OK(bsr_spmm(1.0, T, Xs, 0.0, B));
    for (int c = 0; c < 5; c++) {
        bsr_solver *s;
        bsr_solver_stats st;
        char cfg[128];
        snprintf(cfg, sizeof cfg, "%s,rtol=1e-12", pcs[c]);
        BSR_ASSERT_OK(bsr_solver_create_str(&s, NULL, cfg));
        /* 1e-170: normal doubles, solved */
        bsr_status r = bsr_solver_setup(s, T);
        if (r) printf("\n  %s, row 0 x 1e-170: %s", cfg, bsr_last_error());
        CU_ASSERT_EQUAL(r, BSR_OK);
        if (!r) {
            BSR_ASSERT_OK(bsr_multivec_fill(X, 0.0));
            BSR_ASSERT_OK(bsr_solver_solve(s, B, X, &st));
            CU_ASSERT(bsr_test_rel_err(X, Xs) < 1e-9);
            bsr_solver_stats_free(&st);
        }
        /* 1e-320: subnormal, refused with the reason */
        CU_ASSERT_EQUAL(bsr_solver_setup(s, D), BSR_ERR_VALUE);
        if (!strstr(bsr_last_error(), "block row 0 of A has only subnormal values"))
            printf("\n  %s, row 0 x 1e-320: %s", cfg, bsr_last_error());
        CU_ASSERT_PTR_NOT_NULL(strstr(bsr_last_error(), "block row 0 of A has only subnormal values"));
        CU_ASSERT_PTR_NOT_NULL(strstr(bsr_last_error(), "rescale"));
        CU_ASSERT_PTR_NULL(strstr(bsr_last_error(), "zero"));
        /* refactor to it from a good setup: the same */
        BSR_ASSERT_OK(bsr_solver_setup(s, T));
        CU_ASSERT_EQUAL(bsr_solver_refactor(s, D), BSR_ERR_VALUE);
        CU_ASSERT_PTR_NOT_NULL(strstr(bsr_last_error(), "only subnormal values"));
        bsr_solver_destroy(s);
    }
    /* float: 1e-170 is below FLT_MIN (zero in the working copy) */
    bsr_solver *s;
    BSR_ASSERT_OK(bsr_solver_create_str(&s, NULL, "precond=ilu0,precision=float,precond_precision=float"));
    CU_ASSERT_EQUAL(bsr_solver_setup(s, T), BSR_ERR_VALUE);
    CU_ASSERT_PTR_NOT_NULL(strstr(bsr_last_error(), "block row 0 of A has only subnormal values (|a| < 1.18e-38"));
    bsr_solver_destroy(s);
    /* stored zeros: a zero row, as before */
    BSR_ASSERT_OK(bsr_solver_create_str(&s, NULL, "precond=ilu0"));
    CU_ASSERT_EQUAL(bsr_solver_setup(s, Z), BSR_ERR_SINGULAR);
    CU_ASSERT_PTR_NOT_NULL(strstr(bsr_last_error(), "block row 0 of A is zero"));
    bsr_solver_destroy(s);
    bsr_matrix_destroy(T); bsr_matrix_destroy(D); bsr_matrix_destroy(Z);
    bsr_multivec_destroy(Xs); bsr_multivec_destroy(B); bsr_multivec_destroy(X);
}

/* bsr_ilu_setup called directly (not through the solver, whose setup checks
 * A first) on a row of only subnormal values: the ILU scaling names the row
 * and the cause, "only subnormal values ...: rescale A" (BSR_ERR_VALUE),
 * instead of "overflows (diagonal block nearly singular)" (issue 40); the
 * same row of 1e-170 still factors, a row of stored zeros is still "zero". */
static void test_ilu_subnormal_row(void)
{
    enum { N = 30 };
    bsr_matrix *T = tridiag_row0(N, 1e-170), *D = tridiag_row0(N, 1e-320), *Z = tridiag_row0(N, 0);
    static const bsr_ilu_kind kinds[] = {BSR_ILU0, BSR_ILUT, BSR_ILU2};
    for (int q = 0; q < 3; q++)
        for (int nat = 0; nat < 2; nat++) {
            bsr_ilu_options o;
            bsr_ilu_options_default(&o, kinds[q]);
            if (nat) bsr_order_options_default(&o.order, BSR_ORDER_NATURAL);
            bsr_ilu *F = NULL;
            BSR_ASSERT_OK(bsr_ilu_setup(T, &o, &F));
            bsr_ilu_destroy(F);
            F = NULL;
            CU_ASSERT_EQUAL(bsr_ilu_setup(D, &o, &F), BSR_ERR_VALUE);
            CU_ASSERT_PTR_NULL(F);
            const char *e = bsr_last_error();
            if (!strstr(e, "ILU: block row 0 of A has only subnormal values (|a| < 2.23e-308): rescale A"))
                printf("\n  kind %d, order %s: %s", (int)kinds[q], nat ? "natural" : "nd", e);
            CU_ASSERT_PTR_NOT_NULL(strstr(e, "ILU: block row 0 of A has only subnormal values (|a| < 2.23e-308): rescale A"));
            CU_ASSERT_PTR_NULL(strstr(e, "overflows"));
            bsr_ilu_destroy(F);
            F = NULL;
            CU_ASSERT_EQUAL(bsr_ilu_setup(Z, &o, &F), BSR_ERR_SINGULAR);
            CU_ASSERT_PTR_NOT_NULL(strstr(bsr_last_error(), "block row 0 of A is zero"));
            bsr_ilu_destroy(F);
        }
    bsr_matrix_destroy(T); bsr_matrix_destroy(D); bsr_matrix_destroy(Z);
}

/* A 3 x 3 cyclic permutation: ILU(0) has only regularized pivots, so the
 * preconditioned operator is numerically rank one and BiCGStab stops moving;
 * it reports breakdown within a few dozen iterations instead of using maxit. */
static void test_bicgstab_stall(void)
{
    int rp[] = {0, 1, 2, 3}, ci[] = {1, 2, 0};
    double v[] = {1, 1, 1};
    bsr_matrix *A;
    BSR_ASSERT_OK(bsr_matrix_create(&A, 3, 3, 1, rp, ci, v, BSR_DOUBLE, 0));
    bsr_multivec *B, *X;
    BSR_ASSERT_OK(bsr_multivec_create(&B, 3, 2, BSR_DOUBLE));
    BSR_ASSERT_OK(bsr_multivec_create(&X, 3, 2, BSR_DOUBLE));
    double *b = bsr_multivec_data(B);
    for (int i = 0; i < 6; i++) b[i] = i % 2 ? 1.0 + i : 1.0;
    bsr_solver *s;
    bsr_solver_stats st;
    BSR_ASSERT_OK(bsr_solver_create_str(&s, NULL, "method=bicgstab,precond=ilu0,maxit=1000"));
    BSR_ASSERT_OK(bsr_solver_setup(s, A));
    CU_ASSERT_EQUAL(bsr_solver_solve(s, B, X, &st), BSR_ERR_BREAKDOWN);
    for (int j = 0; j < 2; j++) {
        CU_ASSERT_EQUAL(st.col[j].reason, BSR_DIVERGED_BREAKDOWN);
        CU_ASSERT(st.col[j].iterations < 60);
        printf("\n  column %d: %s after %d iterations, %d restarts", j, bsr_reason_string(st.col[j].reason),
               st.col[j].iterations, st.col[j].restarts);
    }
    bsr_solver_stats_free(&st);
    bsr_solver_destroy(s);
    /* without the preconditioner it is solved */
    BSR_ASSERT_OK(bsr_solver_create_str(&s, NULL, "method=bicgstab,precond=none,rtol=1e-12"));
    BSR_ASSERT_OK(bsr_solver_setup(s, A));
    BSR_ASSERT_OK(bsr_multivec_fill(X, 0.0));
    BSR_ASSERT_OK(bsr_solver_solve(s, B, X, &st));
    bsr_solver_stats_free(&st);
    bsr_solver_destroy(s);
    bsr_multivec_destroy(B);
    bsr_multivec_destroy(X);
    bsr_matrix_destroy(A);
}

int main(int argc, char **argv)
{
    static const bsr_test tests[] = {
        {"norms of 1e300 and 1e-300 vectors", test_norm_range},
        {"solves with b x 1e300, 1e-300", test_solve_range},
        {"rows of tiny and of subnormal values", test_tiny_rows},
        {"bsr_ilu_setup on a row of subnormal values", test_ilu_subnormal_row},
        {"BiCGStab without progress: breakdown", test_bicgstab_stall},
        {NULL, NULL},
    };
    return bsr_test_main("numerics", tests, argc, argv);
}
