/* SPDX-License-Identifier: BSD-3-Clause */
/* The host reference of the Jacobi triangular sweeps (src/trsv/trsv_jacobi.c, the
 * check of kernels/trsv/trsv_jacobi.cu): one sweep is x - L x (lower) and
 * D^-1 (x - U_off D^-1 x) (upper) computed independently here; as many
 * sweeps as levels give the exact solves bsr_trsv_lower/upper; float and
 * mixed precisions; bad arguments refused. */
#include "harness.h"
#include "gpu_ilu.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ILU(0) of stencil3d:5:b in natural order. */
static bsr_ilu *factors(int b, bsr_problem *P, bsr_ilu_factors *f)
{
    char spec[32];
    snprintf(spec, sizeof spec, "stencil3d:5:%d", b);
    BSR_ASSERT_OK(bsr_generate(spec, BSR_DOUBLE, P));
    bsr_ilu_options io;
    bsr_ilu_options_default(&io, BSR_ILU0);
    bsr_order_options_default(&io.order, BSR_ORDER_NATURAL);
    bsr_ilu *F = NULL;
    BSR_ASSERT_OK(bsr_ilu_setup(P->A, &io, &F));
    BSR_ASSERT_OK(bsr_ilu_get_factors(F, f));
    return F;
}

/* Y = T_off X by the definition (T's blocks, the pivot of U skipped), in double. */
static void off_product(const bsr_matrix *T, int upper, const double *x, double *y, int k)
{
    const int b = bsr_matrix_block(T), n = bsr_matrix_nbrows(T);
    const int *rp = bsr_matrix_rowptr(T), *ci = bsr_matrix_colind(T);
    const double *v = (const double *)bsr_matrix_values(T);
    memset(y, 0, sizeof(double) * (size_t)n * b * k);
    for (int i = 0; i < n; i++)
        for (int p = rp[i] + (upper ? 1 : 0); p < rp[i + 1]; p++)
            for (int r = 0; r < b; r++)
                for (int c = 0; c < b; c++)
                    for (int j = 0; j < k; j++)
                        y[((size_t)i * b + r) * k + j] += v[(size_t)p * b * b + r * b + c] * x[((size_t)ci[p] * b + c) * k + j];
}

/* Y = D^-1 X with U's inverted pivots. */
static void dinv_product(const bsr_matrix *U, const double *x, double *y, int k)
{
    const int b = bsr_matrix_block(U), n = bsr_matrix_nbrows(U);
    const int *rp = bsr_matrix_rowptr(U);
    const double *v = (const double *)bsr_matrix_values(U);
    for (int i = 0; i < n; i++)
        for (int r = 0; r < b; r++)
            for (int j = 0; j < k; j++) {
                double s = 0;
                for (int c = 0; c < b; c++) s += v[(size_t)rp[i] * b * b + r * b + c] * x[((size_t)i * b + c) * k + j];
                y[((size_t)i * b + r) * k + j] = s;
            }
}

static double maxdiff(const double *a, const double *b, size_t m)
{
    double d = 0, s = 0;
    for (size_t e = 0; e < m; e++) {
        if (fabs(a[e] - b[e]) > d) d = fabs(a[e] - b[e]);
        if (fabs(b[e]) > s) s = fabs(b[e]);
    }
    return d / (s > 0 ? s : 1);
}

static void test_one_sweep(void)
{
    for (int b = 1; b <= 5; b += 2) {
        bsr_problem P;
        bsr_ilu_factors f;
        bsr_ilu *F = factors(b, &P, &f);
        const int k = 3;
        const int64_t n = (int64_t)bsr_matrix_nbrows(P.A) * b;
        const size_t m = (size_t)n * k;
        bsr_multivec *X = NULL, *Y = NULL;
        BSR_ASSERT_OK(bsr_multivec_create(&X, n, k, BSR_DOUBLE));
        BSR_ASSERT_OK(bsr_multivec_create(&Y, n, k, BSR_DOUBLE));
        BSR_ASSERT_OK(bsr_multivec_random(X, 11 + b));
        const double *x = bsr_multivec_cdata(X);
        double *r = malloc(sizeof(double) * m), *t = malloc(sizeof(double) * m), *u = malloc(sizeof(double) * m);
        /* lower: x - L x */
        BSR_ASSERT_OK(bsr_trsv_jacobi_host(f.L, 0, 1, X, Y));
        off_product(f.L, 0, x, t, k);
        for (size_t e = 0; e < m; e++) r[e] = x[e] - t[e];
        CU_ASSERT(maxdiff(bsr_multivec_cdata(Y), r, m) <= 1e-14);
        /* upper: D^-1 (x - U_off D^-1 x) */
        BSR_ASSERT_OK(bsr_trsv_jacobi_host(f.U, 1, 1, X, Y));
        dinv_product(f.U, x, u, k);
        off_product(f.U, 1, u, t, k);
        for (size_t e = 0; e < m; e++) t[e] = x[e] - t[e];
        dinv_product(f.U, t, r, k);
        CU_ASSERT(maxdiff(bsr_multivec_cdata(Y), r, m) <= 1e-14);
        free(r); free(t); free(u);
        bsr_multivec_destroy(X); bsr_multivec_destroy(Y);
        bsr_ilu_destroy(F);
        bsr_problem_free(&P);
    }
}

/* 13 levels in natural order at 5^3: 13 sweeps solve exactly. */
static void test_exact_limit(void)
{
    for (int mode = 0; mode < 3; mode++) {   /* double, float, mixed (float factors, double vectors) */
        bsr_problem P;
        bsr_ilu_factors f;
        bsr_ilu *F = factors(4, &P, &f);
        const bsr_precision fp = mode ? BSR_FLOAT : BSR_DOUBLE, vp = mode == 1 ? BSR_FLOAT : BSR_DOUBLE;
        bsr_matrix *L = NULL, *U = NULL;
        BSR_ASSERT_OK(bsr_matrix_copy(f.L, fp, &L));
        BSR_ASSERT_OK(bsr_matrix_copy(f.U, fp, &U));
        const int64_t n = (int64_t)bsr_matrix_nbrows(P.A) * 4;
        bsr_multivec *X = NULL, *Y = NULL, *R = NULL, *Xd = NULL, *Rd = NULL;
        BSR_ASSERT_OK(bsr_multivec_create(&X, n, 2, vp));
        BSR_ASSERT_OK(bsr_multivec_create(&Y, n, 2, vp));
        BSR_ASSERT_OK(bsr_multivec_create(&Xd, n, 2, BSR_DOUBLE));
        BSR_ASSERT_OK(bsr_multivec_create(&R, n, 2, BSR_DOUBLE));
        BSR_ASSERT_OK(bsr_multivec_create(&Rd, n, 2, BSR_DOUBLE));
        BSR_ASSERT_OK(bsr_multivec_random(X, 3));
        BSR_ASSERT_OK(bsr_multivec_copy(Xd, X));
        const double tol = mode ? 1e-5 : 1e-13;
        for (int upper = 0; upper < 2; upper++) {
            BSR_ASSERT_OK(bsr_trsv_jacobi_host(upper ? U : L, upper, 13, X, Y));
            if (upper) BSR_ASSERT_OK(bsr_trsv_upper(f.U, NULL, Xd, R));
            else BSR_ASSERT_OK(bsr_trsv_lower(f.L, NULL, Xd, R));
            BSR_ASSERT_OK(bsr_multivec_copy(Rd, Y));
            CU_ASSERT(bsr_test_rel_err(Rd, R) <= tol);
            /* fewer sweeps than levels: an approximation, not the solve */
            BSR_ASSERT_OK(bsr_trsv_jacobi_host(upper ? U : L, upper, 2, X, Y));
            BSR_ASSERT_OK(bsr_multivec_copy(Rd, Y));
            CU_ASSERT(bsr_test_rel_err(Rd, R) > 1e-6);
        }
        bsr_multivec_destroy(X); bsr_multivec_destroy(Y); bsr_multivec_destroy(R);
        bsr_multivec_destroy(Xd); bsr_multivec_destroy(Rd);
        bsr_matrix_destroy(L); bsr_matrix_destroy(U);
        bsr_ilu_destroy(F);
        bsr_problem_free(&P);
    }
}

static void test_errors(void)
{
    bsr_problem P;
    bsr_ilu_factors f;
    bsr_ilu *F = factors(2, &P, &f);
    const int64_t n = (int64_t)bsr_matrix_nbrows(P.A) * 2;
    bsr_multivec *X = NULL, *Y = NULL, *Z = NULL;
    BSR_ASSERT_OK(bsr_multivec_create(&X, n, 1, BSR_DOUBLE));
    BSR_ASSERT_OK(bsr_multivec_create(&Y, n, 1, BSR_FLOAT));
    BSR_ASSERT_OK(bsr_multivec_create(&Z, n + 2, 1, BSR_DOUBLE));
    CU_ASSERT_EQUAL(bsr_trsv_jacobi_host(f.L, 0, 0, X, X), BSR_ERR_ARG);   /* X == Y, no sweeps */
    CU_ASSERT_EQUAL(bsr_trsv_jacobi_host(f.L, 0, 1, X, Y), BSR_ERR_SIZE);  /* precisions differ */
    CU_ASSERT_EQUAL(bsr_trsv_jacobi_host(f.L, 0, 1, X, Z), BSR_ERR_SIZE);
    bsr_multivec_destroy(X); bsr_multivec_destroy(Y); bsr_multivec_destroy(Z);
    bsr_ilu_destroy(F);
    bsr_problem_free(&P);
}

int main(int argc, char **argv)
{
    static const bsr_test tests[] = {{"one sweep by the definition", test_one_sweep},
                                     {"as many sweeps as levels are exact", test_exact_limit},
                                     {"errors", test_errors},
                                     {NULL, NULL}};
    return bsr_test_main("trsv_jacobi", tests, argc, argv);
}
