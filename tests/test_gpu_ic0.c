/* SPDX-License-Identifier: BSD-3-Clause */
/* IC(0) on the CUDA backend (precond=ic0: the device ILU(0) of a symmetric
 * A, src/precond/precond_ic0_cuda.c) against the host IC(0) under CG: the
 * symmetric generators (b = 1) and Kronecker block matrices A (x) K (b = 2,
 * 4, 5, K symmetric positive definite), double, float factors and float
 * iterations: the device takes the host's iterations (to 2, or 5%), reaches
 * rtol in the true residual and gives the host's solution to the tolerance;
 * a time step (refactor with new values) the same; a matrix that is not
 * symmetric is refused at setup and at refactor naming ic0, and after a
 * refused refactor the solver does not solve until a good one.  Skips (77)
 * without a GPU. */
#include "harness.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

static bsr_context *ctx;

/* A (x) K for a scalar symmetric A (b = 1) and a random symmetric positive
 * definite b x b block K: symmetric, positive definite when A is. */
static bsr_matrix *kron(const bsr_matrix *A, int b, uint64_t seed)
{
    const int n = bsr_matrix_nbrows(A), nnzb = bsr_matrix_nnzb(A), bb = b * b;
    double K[BSR_MAX_BLOCK * BSR_MAX_BLOCK];
    uint64_t s = seed;
    for (int r = 0; r < b; r++)
        for (int c = 0; c <= r; c++) K[r * b + c] = K[c * b + r] = 0.3 * bsr_test_unif_pm(&s);
    for (int r = 0; r < b; r++) K[r * b + r] = 1.0 + 0.3 * b;   /* diagonally dominant */
    const double *av = bsr_matrix_values(A);
    double *v = malloc(sizeof(double) * (size_t)nnzb * bb);
    CU_ASSERT_PTR_NOT_NULL_FATAL(v);
    for (int p = 0; p < nnzb; p++)
        for (int e = 0; e < bb; e++) v[(size_t)p * bb + e] = av[p] * K[e];
    bsr_matrix *B = NULL;
    BSR_ASSERT_OK(bsr_matrix_create(&B, n, n, b, bsr_matrix_rowptr(A), bsr_matrix_colind(A), v, BSR_DOUBLE, 0));
    free(v);
    return B;
}

/* B = A with its diagonal blocks times f (still symmetric): new values on A's pattern. */
static bsr_matrix *diag_scaled(const bsr_matrix *A, double f)
{
    bsr_matrix *B = NULL;
    BSR_ASSERT_OK(bsr_matrix_copy(A, BSR_DOUBLE, &B));
    const int n = bsr_matrix_nbrows(B), b = bsr_matrix_block(B), bb = b * b;
    const int *rp = bsr_matrix_rowptr(B), *ci = bsr_matrix_colind(B);
    const double *av = bsr_matrix_values(B);
    double *v = malloc(sizeof(double) * (size_t)bsr_matrix_nnzb(B) * bb);
    CU_ASSERT_PTR_NOT_NULL_FATAL(v);
    memcpy(v, av, sizeof(double) * (size_t)bsr_matrix_nnzb(B) * bb);
    for (int i = 0; i < n; i++)
        for (int p = rp[i]; p < rp[i + 1]; p++)
            if (ci[p] == i)
                for (int e = 0; e < bb; e++) v[(size_t)p * bb + e] *= f;
    BSR_ASSERT_OK(bsr_matrix_set_values(B, v, 0));
    free(v);
    return B;
}

/* A in precision prec (a copy). */
static bsr_matrix *in_prec(const bsr_matrix *A, bsr_precision prec)
{
    bsr_matrix *B = NULL;
    BSR_ASSERT_OK(bsr_matrix_copy(A, prec, &B));
    return B;
}

/* One solve from x = 0 with s: iterations, converged, true relres and x. */
static int solve(bsr_solver *s, const bsr_multivec *B, bsr_multivec *X, double *relres, int *converged)
{
    bsr_solver_stats st;
    memset(&st, 0, sizeof st);
    BSR_ASSERT_OK(bsr_multivec_fill(X, 0));
    bsr_status rc = bsr_solver_solve(s, B, X, &st);
    *relres = st.col[0].relres;
    *converged = rc == BSR_OK && bsr_reason_converged(st.col[0].reason);
    const int it = st.col[0].iterations;
    bsr_solver_stats_free(&st);
    return it;
}

/* CG + IC(0) on the host and on the device for A (then A2, a refactor):
 * the same iterations (to 2 or 5%), rtol met in the true residual, the same
 * solution to the tolerance. */
static void compare(const char *what, const bsr_matrix *A, const bsr_matrix *A2, const char *extra, bsr_precision vp)
{
    const double rtol = vp == BSR_FLOAT ? 1e-5 : 1e-10;
    char cfg[192];
    snprintf(cfg, sizeof cfg, "method=cg,precond=ic0,rtol=%g,maxit=3000%s", rtol, extra);
    bsr_solver *sc = bsr_test_solver(NULL, cfg, A), *sg = bsr_test_solver(ctx, cfg, A);
    const int64_t n = (int64_t)bsr_matrix_nbrows(A) * bsr_matrix_block(A);
    bsr_multivec *B, *Xc, *Xg;
    BSR_ASSERT_OK(bsr_multivec_create(&B, n, 1, vp));
    BSR_ASSERT_OK(bsr_multivec_create(&Xc, n, 1, vp));
    BSR_ASSERT_OK(bsr_multivec_create(&Xg, n, 1, vp));
    BSR_ASSERT_OK(bsr_multivec_random(B, 77));
    for (int pass = 0; pass < 2; pass++) {
        if (pass) {
            BSR_ASSERT_OK(bsr_solver_refactor(sc, A2));
            BSR_ASSERT_OK(bsr_solver_refactor(sg, A2));
        }
        double rc, rg;
        int cc, cg;
        const int ic = solve(sc, B, Xc, &rc, &cc), ig = solve(sg, B, Xg, &rg, &cg);
        const double tol = 2 > 0.05 * ic ? 2 : 0.05 * ic;
        printf("\n    %s%s %s pass %d: host %d its (relres %.2e), device %d its (relres %.2e), x differs %.2e", what,
               extra, vp == BSR_FLOAT ? "float" : "double", pass, ic, rc, ig, rg, bsr_test_rel_err(Xg, Xc));
        CU_ASSERT(cc && cg);
        CU_ASSERT(rg <= rtol * 1.0001);
        CU_ASSERT(fabs((double)(ig - ic)) <= tol);
        CU_ASSERT(bsr_test_rel_err(Xg, Xc) <= (vp == BSR_FLOAT ? 1e-2 : 1e-6));
    }
    bsr_multivec_destroy(B);
    bsr_multivec_destroy(Xc);
    bsr_multivec_destroy(Xg);
    bsr_solver_destroy(sc);
    bsr_solver_destroy(sg);
}

/* The symmetric generators (b = 1) and their Kronecker block forms (b = 2, 4, 5). */
static void test_against_host(void)
{
    static const char *specs[] = {"poisson3d:16", "poisson2d:40", "heat3d:12,1e-2"};
    for (size_t g = 0; g < sizeof specs / sizeof specs[0]; g++) {
        bsr_problem P;
        BSR_ASSERT_OK(bsr_generate(specs[g], BSR_DOUBLE, &P));
        bsr_matrix *P2 = diag_scaled(P.A, 1.25);
        compare(specs[g], P.A, P2, "", BSR_DOUBLE);
        compare(specs[g], P.A, P2, ",precond_precision=float", BSR_DOUBLE);
        bsr_matrix *Af = in_prec(P.A, BSR_FLOAT), *A2f = in_prec(P2, BSR_FLOAT);
        compare(specs[g], Af, A2f, ",precision=float,precond_precision=float", BSR_FLOAT);
        bsr_matrix_destroy(Af);
        bsr_matrix_destroy(A2f);
        static const int bs[] = {2, 4, 5};
        for (int t = 0; t < 3 && g < 2; t++) {
            bsr_matrix *K = kron(P.A, bs[t], 100 + bs[t]), *K2 = diag_scaled(K, 1.25);
            char what[64];
            snprintf(what, sizeof what, "%s (x) K%d", specs[g], bs[t]);
            compare(what, K, K2, "", BSR_DOUBLE);
            bsr_matrix_destroy(K);
            bsr_matrix_destroy(K2);
        }
        bsr_matrix_destroy(P2);
        bsr_problem_free(&P);
    }
}

/* A copy of A with one upper off-diagonal entry changed by 10%: not symmetric. */
static bsr_matrix *asymmetric(const bsr_matrix *A)
{
    bsr_matrix *B = NULL;
    BSR_ASSERT_OK(bsr_matrix_copy(A, BSR_DOUBLE, &B));
    const int n = bsr_matrix_nbrows(B), bb = bsr_matrix_block(B) * bsr_matrix_block(B);
    const int *rp = bsr_matrix_rowptr(B), *ci = bsr_matrix_colind(B);
    double *v = malloc(sizeof(double) * (size_t)bsr_matrix_nnzb(B) * bb);
    CU_ASSERT_PTR_NOT_NULL_FATAL(v);
    memcpy(v, bsr_matrix_values(B), sizeof(double) * (size_t)bsr_matrix_nnzb(B) * bb);
    int done = 0;
    for (int i = n / 2; i < n && !done; i++)
        for (int p = rp[i]; p < rp[i + 1] && !done; p++)
            if (ci[p] > i) { v[(size_t)p * bb] *= 1.1; done = 1; }
    CU_ASSERT_TRUE(done);
    BSR_ASSERT_OK(bsr_matrix_set_values(B, v, 0));
    free(v);
    return B;
}

/* Not symmetric: refused at setup and at refactor (BSR_ERR_VALUE naming
 * ic0); a refused refactor leaves no factors to solve with until a good
 * refactor, which then solves as before. */
static void test_refuses_asymmetric(void)
{
    bsr_problem P;
    BSR_ASSERT_OK(bsr_generate("poisson3d:10", BSR_DOUBLE, &P));
    bsr_matrix *N = asymmetric(P.A);
    bsr_solver *s = NULL;
    BSR_ASSERT_OK(bsr_solver_create_str(&s, ctx, "method=cg,precond=ic0,rtol=1e-10"));
    CU_ASSERT_EQUAL(bsr_solver_setup(s, N), BSR_ERR_VALUE);
    CU_ASSERT_PTR_NOT_NULL(strstr(bsr_last_error(), "ic0"));
    BSR_ASSERT_OK(bsr_solver_setup(s, P.A));
    const int64_t n = bsr_multivec_rows(P.rhs);
    bsr_multivec *X;
    BSR_ASSERT_OK(bsr_multivec_create(&X, n, 1, BSR_DOUBLE));
    double r;
    int conv;
    const int it0 = solve(s, P.rhs, X, &r, &conv);
    CU_ASSERT(conv && r <= 1e-10 * 1.0001);
    CU_ASSERT_EQUAL(bsr_solver_refactor(s, N), BSR_ERR_VALUE);
    CU_ASSERT_PTR_NOT_NULL(strstr(bsr_last_error(), "ic0"));
    bsr_solver_stats st;
    memset(&st, 0, sizeof st);
    CU_ASSERT_NOT_EQUAL(bsr_solver_solve(s, P.rhs, X, &st), BSR_OK);
    bsr_solver_stats_free(&st);
    BSR_ASSERT_OK(bsr_solver_refactor(s, P.A));
    const int it1 = solve(s, P.rhs, X, &r, &conv);
    CU_ASSERT(conv && it1 == it0);
    bsr_multivec_destroy(X);
    bsr_solver_destroy(s);
    bsr_matrix_destroy(N);
    bsr_problem_free(&P);
}

/* The report names IC(0) and the device ILU(0), in natural order, factored on the device. */
static void test_info(void)
{
    bsr_problem P;
    BSR_ASSERT_OK(bsr_generate("poisson2d:20", BSR_DOUBLE, &P));
    bsr_solver *s = bsr_test_solver(ctx, "method=cg,precond=ic0", P.A);
    bsr_multivec *X;
    BSR_ASSERT_OK(bsr_multivec_create(&X, bsr_multivec_rows(P.rhs), 1, BSR_DOUBLE));
    BSR_ASSERT_OK(bsr_multivec_fill(X, 0));
    bsr_solver_stats st;
    memset(&st, 0, sizeof st);
    BSR_ASSERT_OK(bsr_solver_solve(s, P.rhs, X, &st));
    CU_ASSERT(st.device);
    CU_ASSERT_PTR_NOT_NULL(strstr(st.precond_info, "IC(0) as the device ILU(0)"));
    CU_ASSERT_PTR_NOT_NULL(strstr(st.precond_info, "order natural"));
    CU_ASSERT_PTR_NOT_NULL(strstr(st.precond_info, "factor on the device"));
    printf("\n    %s", st.precond_info);
    bsr_solver_stats_free(&st);
    bsr_multivec_destroy(X);
    bsr_solver_destroy(s);
    bsr_problem_free(&P);
}

int main(int argc, char **argv)
{
    static const bsr_test tests[] = {
        {"against_host", test_against_host},
        {"refuses_asymmetric", test_refuses_asymmetric},
        {"info", test_info},
        {NULL, NULL},
    };
    return bsr_test_gpu_main("gpu_ic0", tests, argc, argv, &ctx);
}
