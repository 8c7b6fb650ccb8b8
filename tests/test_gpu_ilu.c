/* SPDX-License-Identifier: BSD-3-Clause */
/* On-device block ILU(0) (kernels/ilu/ilu0_gpu.cu) against the CPU ILU(0) of the
 * ILU module (same scaling, ordering and pivot rule): factors and scaling of
 * random diagonally dominant matrices b = 1..10, stencil and cfd3d problems,
 * natural / RCM / ND orderings, A in double and float, factors equal bit
 * for bit in double (no FMA contraction on either side), to 1e-5 in float; the values written into the device
 * preconditioner (stale values of another matrix there first) applied
 * against bsr_ilu_apply; refactor = fresh factorization; regularized pivots
 * and scaling fallbacks counted like the CPU; strict pivots, overflow to
 * Inf and NaN input give the CPU's status and message (naming the row); the
 * solver with factor=gpu converges like factor=cpu, through refactor too;
 * every device plan equals the host reference (BSR_ILU0_PLAN_CHECK); the
 * symbolic phase done on the device (natural order) equals the host's array
 * for array (BSR_ILU0_SYM_CHECK) and solves bit for bit the same; the
 * factorization in place in the preconditioner's arrays (create_into, double
 * factors) gives the workspace's bits and refuses other targets.
 * GPU parts skip without a GPU; the option checks run everywhere.
 * BSR_TEST_QUICK (sanitizer runs): b = 1, 4, 5, 10 and natural / ND only,
 * the solver in natural order, three of the device symbolic cases. */
#include "harness.h"
#include "internal.h"
#include "ilu_impl.h"
#include "solver_impl.h"
#include "gpu_ilu.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* max |Y - R| / max |R| over every entry (infinite when Y holds a NaN or
 * Inf): the device apply Y against the host's R. */
static double apply_err(const bsr_multivec *Y, const bsr_multivec *R)
{
    const int64_t len = bsr_multivec_rows(Y) * bsr_multivec_cols(Y);
    const int dbl = bsr_multivec_precision(Y) == BSR_DOUBLE;
    double m = 0, rm = 0;
    for (int64_t e = 0; e < len; e++) {
        double y = dbl ? ((const double *)bsr_multivec_cdata(Y))[e] : ((const float *)bsr_multivec_cdata(Y))[e];
        double r = dbl ? ((const double *)bsr_multivec_cdata(R))[e] : ((const float *)bsr_multivec_cdata(R))[e];
        if (!isfinite(y)) return INFINITY;
        if (fabs(y - r) > m) m = fabs(y - r);
        if (fabs(r) > rm) rm = fabs(r);
    }
    return m / (rm > 0 ? rm : 1);
}

static bsr_context *ctx;
static const bsr_order_kind orders[] = {BSR_ORDER_NATURAL, BSR_ORDER_RCM, BSR_ORDER_ND};
static const char *order_name[] = {"natural", "rcm", "nd"};

/* A copy of A with every value multiplied by (1 + eps * hash(e)): same
 * pattern, other values. */
static bsr_matrix *perturbed(const bsr_matrix *A, double eps)
{
    bsr_matrix *B = NULL;
    BSR_ASSERT_OK(bsr_matrix_copy(A, BSR_DOUBLE, &B));
    size_t m = (size_t)bsr_matrix_nnzb(A) * bsr_matrix_block(A) * bsr_matrix_block(A);
    double *v = malloc(sizeof(double) * (m ? m : 1));
    memcpy(v, bsr_matrix_values(B), sizeof(double) * m);
    for (size_t e = 0; e < m; e++) v[e] *= 1.0 + eps * (double)((e * 2654435761u) % 1000) / 1000.0;
    BSR_ASSERT_OK(bsr_matrix_set_values(B, v, 0));
    free(v);
    if (bsr_matrix_precision(A) == BSR_FLOAT) {
        bsr_matrix *F = NULL;
        BSR_ASSERT_OK(bsr_matrix_copy(B, BSR_FLOAT, &F));
        bsr_matrix_destroy(B);
        B = F;
    }
    return B;
}

/* Factor A on the CPU and on the device (ordering ord, factors in fprec,
 * -1 = A's) and compare factors, scaling and counters; then the values
 * written into a device preconditioner holding another matrix's factors,
 * applied against the CPU (relative tolerance apply_tol in double: the
 * regularized-pivot cases are ill-conditioned on purpose). */
static void check(const char *what, bsr_matrix *A, bsr_order_kind ord, int fprec, double apply_tol)
{
    bsr_ilu_options o;
    bsr_ilu_options_default(&o, BSR_ILU0);
    o.order.kind = ord;
    o.prec = fprec;
    bsr_ilu *F = NULL;
    BSR_ASSERT_OK(bsr_ilu_setup(A, &o, &F));
    bsr_ilu_factors f;
    bsr_ilu_stats st;
    BSR_ASSERT_OK(bsr_ilu_get_factors(F, &f));
    BSR_ASSERT_OK(bsr_ilu_get_stats(F, &st));
    const int n = bsr_matrix_nbrows(A), b = bsr_matrix_block(A), bb = b * b;
    const int nL = bsr_matrix_nnzb(f.L), nU = bsr_matrix_nnzb(f.U);
    const bsr_precision hp = bsr_matrix_precision(f.L);
    const double tol = hp == BSR_DOUBLE ? 0.0 : 1e-5;   /* double: the same bits */

    bsr_gpu_ilu0 *D = NULL;
    BSR_ASSERT_OK(bsr_gpu_ilu0_create(ctx, F, &D));
    double *Lv = malloc(sizeof(double) * ((size_t)nL * bb + 1)), *Uv = malloc(sizeof(double) * ((size_t)nU * bb + 1));
    double *S = malloc(sizeof(double) * ((size_t)n * bb + 1));
    CU_ASSERT_EQUAL(bsr_gpu_ilu0_download(D, Lv, Uv, S), BSR_ERR_ARG); /* nothing factored yet */
    BSR_ASSERT_OK(bsr_matrix_upload(ctx, A));
    BSR_ASSERT_OK(bsr_gpu_ilu0_factor(D, A, NULL));
    BSR_ASSERT_OK(bsr_gpu_ilu0_download(D, Lv, Uv, S));
    double eL = bsr_test_rel_diff(Lv, bsr_matrix_values(f.L), hp, (size_t)nL * bb);
    double eU = bsr_test_rel_diff(Uv, bsr_matrix_values(f.U), hp, (size_t)nU * bb);
    double eS = bsr_test_rel_diff(S, f.scale_left, hp, (size_t)n * bb);
    int nreg = -1, nfb = -1;
    double fs = -1;
    BSR_ASSERT_OK(bsr_gpu_ilu0_stats(D, &nreg, &nfb, &fs));
    if (!(eL <= tol && eU <= tol && eS <= tol) || nreg != st.pivots_regularized || nfb != st.scaling_fallbacks)
        printf("\n  %s %s prec %d: L %.2e U %.2e scale %.2e (tol %.0e), pivots %d/%d, fallbacks %d/%d\n", what,
               order_name[ord == BSR_ORDER_NATURAL ? 0 : ord == BSR_ORDER_RCM ? 1 : 2], (int)hp, eL, eU, eS, tol,
               nreg, st.pivots_regularized, nfb, st.scaling_fallbacks);
    CU_ASSERT(eL <= tol);
    CU_ASSERT(eU <= tol);
    CU_ASSERT(eS <= tol);
    CU_ASSERT_EQUAL(nreg, st.pivots_regularized);
    CU_ASSERT_EQUAL(nfb, st.scaling_fallbacks);
    CU_ASSERT(fs >= 0);

    /* into a device preconditioner that holds the factors of another matrix */
    bsr_matrix *A2 = perturbed(A, 0.3);
    bsr_ilu *F2 = NULL;
    BSR_ASSERT_OK(bsr_ilu_setup(A2, &o, &F2));
    bsr_gpu_ilu *G = NULL;
    bsr_gpu_ilu_options go;
    bsr_gpu_ilu_options_default(&go);
    BSR_ASSERT_OK(bsr_gpu_ilu_create(ctx, F2, &go, &G));
    BSR_ASSERT_OK(bsr_gpu_ilu0_factor(D, A, G));
    int64_t rows = (int64_t)n * b;
    bsr_multivec *X = NULL, *Y = NULL, *R = NULL;
    bsr_precision vp = hp;
    BSR_ASSERT_OK(bsr_multivec_create(&X, rows, 3, vp));
    BSR_ASSERT_OK(bsr_multivec_create(&Y, rows, 3, vp));
    BSR_ASSERT_OK(bsr_multivec_create(&R, rows, 3, vp));
    BSR_ASSERT_OK(bsr_multivec_random(X, 77));
    BSR_ASSERT_OK(bsr_gpu_ilu_apply(G, X, Y));
    BSR_ASSERT_OK(bsr_ilu_apply(F, X, R));
    double ea = apply_err(Y, R), atol = vp == BSR_DOUBLE ? apply_tol : 1e-4;
    if (!(ea <= atol)) printf("\n  %s: device apply after device factor: %.2e\n", what, ea);
    CU_ASSERT(ea <= atol);

    /* refactor with other values = a fresh factorization of them */
    BSR_ASSERT_OK(bsr_matrix_upload(ctx, A2));
    BSR_ASSERT_OK(bsr_gpu_ilu0_factor(D, A2, NULL));
    BSR_ASSERT_OK(bsr_gpu_ilu0_download(D, Lv, Uv, S));
    bsr_ilu_factors f2;
    BSR_ASSERT_OK(bsr_ilu_get_factors(F2, &f2));
    CU_ASSERT(bsr_test_rel_diff(Lv, bsr_matrix_values(f2.L), hp, (size_t)nL * bb) <= tol);
    CU_ASSERT(bsr_test_rel_diff(Uv, bsr_matrix_values(f2.U), hp, (size_t)nU * bb) <= tol);

    /* in place (create_into): the factorization writes the preconditioner's
     * own arrays where its factors are double, with the same bits as the
     * workspace's (A2 on the device now); another preconditioner is refused
     * as the target, and so are the preconditioner's own value uploads */
    bsr_gpu_ilu *G3 = NULL;
    bsr_gpu_ilu0 *D3 = NULL;
    BSR_ASSERT_OK(bsr_gpu_ilu_create(ctx, F, &go, &G3));
    BSR_ASSERT_OK(bsr_gpu_ilu0_create_into(ctx, F, G3, &D3));
    CU_ASSERT_EQUAL(bsr_gpu_ilu0_in_place(D3), hp == BSR_DOUBLE);
    BSR_ASSERT_OK(bsr_gpu_ilu0_factor(D3, A2, NULL));
    double *L3 = malloc(sizeof(double) * ((size_t)nL * bb + 1)), *U3 = malloc(sizeof(double) * ((size_t)nU * bb + 1));
    double *S3 = malloc(sizeof(double) * ((size_t)n * bb + 1));
    BSR_ASSERT_OK(bsr_gpu_ilu0_download(D3, L3, U3, S3));
    CU_ASSERT(memcmp(L3, Lv, sizeof(double) * (size_t)nL * bb) == 0);
    CU_ASSERT(memcmp(U3, Uv, sizeof(double) * (size_t)nU * bb) == 0);
    CU_ASSERT(memcmp(S3, S, sizeof(double) * (size_t)n * bb) == 0);
    if (bsr_gpu_ilu0_in_place(D3)) {
        CU_ASSERT_EQUAL(bsr_gpu_ilu0_factor(D3, A2, G), BSR_ERR_ARG);
        CU_ASSERT_EQUAL(bsr_gpu_ilu_refactor(G3, F2), BSR_ERR_ARG);
    }
    BSR_ASSERT_OK(bsr_gpu_ilu0_factor(D3, A2, G3));   /* its own target: fine */
    BSR_ASSERT_OK(bsr_gpu_ilu_apply(G3, X, Y));
    BSR_ASSERT_OK(bsr_ilu_apply(F2, X, R));
    ea = apply_err(Y, R);
    if (!(ea <= atol)) printf("\n  %s: device apply after the factorization in place: %.2e\n", what, ea);
    CU_ASSERT(ea <= atol);
    bsr_gpu_ilu0_destroy(D3);
    bsr_gpu_ilu_destroy(G3);
    free(L3); free(U3); free(S3);

    bsr_multivec_destroy(X); bsr_multivec_destroy(Y); bsr_multivec_destroy(R);
    bsr_gpu_ilu_destroy(G);
    bsr_ilu_destroy(F2);
    bsr_matrix_destroy(A2);
    bsr_gpu_ilu0_destroy(D);
    bsr_ilu_destroy(F);
    free(Lv); free(Uv); free(S);
}

static void test_random(void)
{
    if (!ctx) { BSR_TEST_SKIP("no CUDA device"); return; }
    for (int b = 1; b <= 10; b++)
        for (int oi = 0; oi < 3; oi++) {
            if (bsr_test_quick() && ((b != 1 && b != 4 && b != 5 && b != 10) || oi == 1)) continue;
            bsr_matrix *R = bsr_test_random_matrix(b <= 4 ? 400 : 150, b <= 4 ? 400 : 150, b, 1, 6, BSR_DOUBLE, 500 + 10 * b + oi);
            bsr_matrix *A = bsr_test_dominant(R, 1.5, 0.1);
            char what[64];
            snprintf(what, sizeof what, "random b=%d", b);
            check(what, A, orders[oi], -1, 1e-10);
            if (oi == 0 && (b == 1 || b == 4 || b == 7)) {
                check(what, A, orders[oi], BSR_FLOAT, 1e-10);           /* float factors */
                bsr_matrix *Af = NULL;
                BSR_ASSERT_OK(bsr_matrix_copy(A, BSR_FLOAT, &Af)); /* float A */
                check(what, Af, orders[oi], -1, 1e-10);
                bsr_matrix_destroy(Af);
            }
            bsr_matrix_destroy(A);
            bsr_matrix_destroy(R);
        }
}

static void test_generators(void)
{
    if (!ctx) { BSR_TEST_SKIP("no CUDA device"); return; }
    const char *specs[] = {"stencil3d:8:4", "stencil3d:6:5", "stencil3d:5:9", "stencil3d:10:1", "cfd3d:8,4,10", "cfd3d:6,5,10"};
    for (int s = 0; s < 6; s++) {
        bsr_problem P;
        BSR_ASSERT_OK(bsr_generate(specs[s], BSR_DOUBLE, &P));
        for (int oi = 0; oi < 3; oi++)
            if (!bsr_test_quick() || oi != 1) check(specs[s], P.A, orders[oi], -1, 1e-10);
        bsr_problem_free(&P);
    }
}

/* A 2 x 2 block matrix from row-major 2b x 2b dense values (all 4 blocks). */
static bsr_matrix *dense2(int b, const double *a)
{
    int rp[3] = {0, 2, 4}, ci[4] = {0, 1, 0, 1}, bb = b * b;
    double *v = malloc(sizeof(double) * 4 * bb);
    for (int I = 0; I < 2; I++)
        for (int J = 0; J < 2; J++)
            for (int r = 0; r < b; r++)
                for (int c = 0; c < b; c++) v[(I * 2 + J) * bb + r * b + c] = a[(I * b + r) * 2 * b + J * b + c];
    bsr_matrix *A = NULL;
    BSR_ASSERT_OK(bsr_matrix_create(&A, 2, 2, b, rp, ci, v, BSR_DOUBLE, 0));
    free(v);
    return A;
}

/* Zero pivot (regularized and counted), zero diagonal block (scaling
 * fallback), strict pivots (error naming the row, as the CPU). */
static void test_pivots(void)
{
    if (!ctx) { BSR_TEST_SKIP("no CUDA device"); return; }
    const double sing[4] = {1, 1, 1, 1};      /* b = 1: pivot of row 1 is 1 - 1 = 0 */
    bsr_matrix *A = dense2(1, sing);
    check("zero pivot", A, BSR_ORDER_NATURAL, -1, 1e-6);
    bsr_ilu *F = bsr_test_ilu0(A, BSR_ORDER_NATURAL);
    bsr_ilu_stats st;
    bsr_ilu_get_stats(F, &st);
    CU_ASSERT_EQUAL(st.pivots_regularized, 1);
    bsr_ilu_destroy(F);
    /* strict: both fail with the same status and a message naming block row 1 */
    bsr_ilu_options o;
    bsr_ilu_options_default(&o, BSR_ILU0);
    o.order.kind = BSR_ORDER_NATURAL;
    o.strict_pivots = 1;
    bsr_matrix *A0 = dense2(1, (const double[4]){2, 1, 1, 2});
    BSR_ASSERT_OK(bsr_ilu_setup(A0, &o, &F));
    bsr_gpu_ilu0 *D = NULL;
    BSR_ASSERT_OK(bsr_gpu_ilu0_create(ctx, F, &D));
    BSR_ASSERT_OK(bsr_matrix_upload(ctx, A));
    CU_ASSERT_EQUAL(bsr_gpu_ilu0_factor(D, A, NULL), BSR_ERR_SINGULAR);
    char gmsg[512];
    snprintf(gmsg, sizeof gmsg, "%s", bsr_last_error());
    CU_ASSERT(strstr(gmsg, "block row 1") != NULL);
    CU_ASSERT_EQUAL(bsr_ilu_refactor(F, A), BSR_ERR_SINGULAR);
    CU_ASSERT_STRING_EQUAL(gmsg, bsr_last_error());
    /* usable again afterwards */
    BSR_ASSERT_OK(bsr_matrix_upload(ctx, A0));
    BSR_ASSERT_OK(bsr_gpu_ilu0_factor(D, A0, NULL));
    bsr_gpu_ilu0_destroy(D);
    bsr_ilu_destroy(F);
    bsr_matrix_destroy(A0);
    bsr_matrix_destroy(A);
    /* b = 2, zero diagonal block in row 0: scalar fallback scaling, counted */
    const double zd[16] = {0, 0, 1, 0.5,  0, 0, 0.5, 1,  1, 0.2, 4, 1,  0.3, 1, 1, 4};
    A = dense2(2, zd);
    check("zero diagonal block", A, BSR_ORDER_NATURAL, -1, 1e-6);
    bsr_matrix_destroy(A);
}

/* ILU(0) set up on A0 (natural order), factored on the device with A's
 * values: BSR_ERR_SINGULAR with a message naming `want`, the CPU's status
 * and message; a matrix not on the device (A0) refused.  Frees A0 and A. */
static void overflow_as_cpu(bsr_matrix *A0, bsr_matrix *A, const char *want)
{
    bsr_ilu_options o;
    bsr_ilu_options_default(&o, BSR_ILU0);
    o.order.kind = BSR_ORDER_NATURAL;
    bsr_ilu *F = NULL;
    bsr_gpu_ilu0 *D = NULL;
    BSR_ASSERT_OK(bsr_ilu_setup(A0, &o, &F));
    BSR_ASSERT_OK(bsr_gpu_ilu0_create(ctx, F, &D));
    BSR_ASSERT_OK(bsr_matrix_upload(ctx, A));
    CU_ASSERT_EQUAL(bsr_gpu_ilu0_factor(D, A, NULL), BSR_ERR_SINGULAR);
    char gmsg[512];
    snprintf(gmsg, sizeof gmsg, "%s", bsr_last_error());
    CU_ASSERT(strstr(gmsg, want) != NULL);
    CU_ASSERT_EQUAL(bsr_ilu_refactor(F, A), BSR_ERR_SINGULAR);
    CU_ASSERT_STRING_EQUAL(gmsg, bsr_last_error());
    CU_ASSERT_EQUAL(bsr_gpu_ilu0_factor(D, A0, NULL), BSR_ERR_ARG); /* A0 has no device mirror */
    bsr_gpu_ilu0_destroy(D);
    bsr_ilu_destroy(F);
    bsr_matrix_destroy(A);
    bsr_matrix_destroy(A0);
}

/* Non-finite input (BSR_ERR_VALUE) and overflow to Inf during the
 * factorization (BSR_ERR_SINGULAR): same status and message as the CPU. */
static void test_nonfinite(void)
{
    if (!ctx) { BSR_TEST_SKIP("no CUDA device"); return; }
    bsr_problem P;
    BSR_ASSERT_OK(bsr_generate("stencil3d:6:3", BSR_DOUBLE, &P));
    bsr_ilu_options o;
    bsr_ilu_options_default(&o, BSR_ILU0);
    o.order.kind = BSR_ORDER_RCM;
    bsr_ilu *F = NULL;
    BSR_ASSERT_OK(bsr_ilu_setup(P.A, &o, &F));
    bsr_gpu_ilu0 *D = NULL;
    BSR_ASSERT_OK(bsr_gpu_ilu0_create(ctx, F, &D));
    bsr_matrix *B = NULL;
    BSR_ASSERT_OK(bsr_matrix_copy(P.A, BSR_DOUBLE, &B));
    /* bsr_matrix_set_values refuses NaN, so plant it in the host array of a
     * fresh copy (as a corrupted assembly would) before its first upload */
    size_t m = (size_t)bsr_matrix_nnzb(B) * 9;
    ((double *)bsr_matrix_values(B))[m / 2 + 4] = NAN;
    BSR_ASSERT_OK(bsr_matrix_upload(ctx, B));
    CU_ASSERT_EQUAL(bsr_gpu_ilu0_factor(D, B, NULL), BSR_ERR_VALUE);
    char gmsg[512];
    snprintf(gmsg, sizeof gmsg, "%s", bsr_last_error());
    CU_ASSERT_EQUAL(bsr_ilu_refactor(F, B), BSR_ERR_VALUE);
    CU_ASSERT_STRING_EQUAL(gmsg, bsr_last_error());
    bsr_gpu_ilu0_destroy(D);
    bsr_ilu_destroy(F);
    bsr_matrix_destroy(B);
    bsr_problem_free(&P);

    /* b = 1: row 1's pivot becomes 1 - 1e301 * 1e8 = -Inf (row 0's pivot 1 is not
     * regularized: its largest entry 1e8 keeps pivot_rel * 1e8 below 1) */
    overflow_as_cpu(dense2(1, (const double[4]){2, 1, 1, 2}), dense2(1, (const double[4]){1, 1e8, 1e301, 1}),
                    "block row 1");
    /* b = 1, n = 3: row 1's upper block U(1,2) = 1 - 1e301 * 1e8 = -Inf while
     * its pivot stays finite (regularized: its row's size is 1e301), a check
     * the device makes after the rows, not in row 1's warp */
    const int rp[4] = {0, 2, 5, 6}, ci[6] = {0, 2, 0, 1, 2, 2};
    bsr_matrix *A0 = NULL, *A = NULL;
    BSR_ASSERT_OK(bsr_matrix_create(&A0, 3, 3, 1, rp, ci, (const double[6]){2, 1, 1, 2, 1, 2}, BSR_DOUBLE, 0));
    BSR_ASSERT_OK(bsr_matrix_create(&A, 3, 3, 1, rp, ci, (const double[6]){1, 1e8, 1e301, 1, 1, 1}, BSR_DOUBLE, 0));
    overflow_as_cpu(A0, A, "non-finite block U(1,2) in block row 1");
}

/* ||x - x*|| / ||x*|| of host X (k = 1). */
static double err_exact(const bsr_multivec *X, const bsr_multivec *Xs)
{
    int64_t m = bsr_multivec_rows(X);
    const double *x = bsr_multivec_cdata(X), *y = bsr_multivec_cdata(Xs);
    double d = 0, r = 0;
    for (int64_t e = 0; e < m; e++) { d += (x[e] - y[e]) * (x[e] - y[e]); r += y[e] * y[e]; }
    return sqrt(d / (r > 0 ? r : 1));
}

/* Solve P with config cfg on ctx; returns iterations, *err = error vs exact. */
static int solve_once(bsr_solver *s, const bsr_matrix *A, const bsr_multivec *B, const bsr_multivec *Xs,
                      double *err, char *info, size_t len)
{
    bsr_multivec *X = NULL;
    BSR_ASSERT_OK(bsr_multivec_create(&X, bsr_multivec_rows(Xs), 1, BSR_DOUBLE));
    (void)A;
    bsr_solver_stats st;
    memset(&st, 0, sizeof st);
    BSR_ASSERT_OK(bsr_solver_solve(s, B, X, &st));
    *err = err_exact(X, Xs);
    int it = st.col ? st.col[0].iterations : -1;
    if (info) snprintf(info, len, "%s", st.precond_info);
    bsr_solver_stats_free(&st);
    bsr_multivec_destroy(X);
    return it;
}

static void test_solver(void)
{
    if (!ctx) { BSR_TEST_SKIP("no CUDA device"); return; }
    const char *specs[] = {"stencil3d:10:4", "cfd3d:8,4,10"};
    const char *orders_s[] = {"natural", "rcm", "nd:auto"};
    for (int sp = 0; sp < 2; sp++)
        for (int oi = 0; oi < 3; oi++) {
            if (bsr_test_quick() && oi != 0) continue;
            bsr_problem P;
            BSR_ASSERT_OK(bsr_generate(specs[sp], BSR_DOUBLE, &P));
            CU_ASSERT_FATAL(P.xexact != NULL);
            char cg[160], cc[160], info[512];
            snprintf(cg, sizeof cg, "precond=ilu0,factor=gpu,rtol=1e-12,reorder=%s", orders_s[oi]);
            snprintf(cc, sizeof cc, "precond=ilu0,factor=cpu,rtol=1e-12,reorder=%s", orders_s[oi]);
            bsr_solver *sg = bsr_test_solver(ctx, cg, P.A), *sc = bsr_test_solver(ctx, cc, P.A);
            double eg, ec;
            int ig = solve_once(sg, P.A, P.rhs, P.xexact, &eg, info, sizeof info);
            int ic = solve_once(sc, P.A, P.rhs, P.xexact, &ec, NULL, 0);
            CU_ASSERT(strstr(info, "on the device") != NULL);
            CU_ASSERT(eg <= fmax(1e-9, 10 * ec));
            CU_ASSERT(abs(ig - ic) <= 1 + ic / 10);
            if (!(eg <= fmax(1e-9, 10 * ec)) || abs(ig - ic) > 1 + ic / 10)
                printf("\n  %s %s: gpu %d its err %.2e, cpu %d its err %.2e (%s)\n", specs[sp], orders_s[oi], ig, eg, ic, ec, info);
            /* new values (same pattern, same exact solution): refactor both */
            bsr_matrix *A2 = perturbed(P.A, 0.2);
            bsr_multivec *B2 = NULL;
            BSR_ASSERT_OK(bsr_multivec_create(&B2, bsr_multivec_rows(P.rhs), 1, BSR_DOUBLE));
            BSR_ASSERT_OK(bsr_spmm(1.0, A2, P.xexact, 0.0, B2));
            BSR_ASSERT_OK(bsr_solver_refactor(sg, A2));
            BSR_ASSERT_OK(bsr_solver_refactor(sc, A2));
            ig = solve_once(sg, A2, B2, P.xexact, &eg, info, sizeof info);
            ic = solve_once(sc, A2, B2, P.xexact, &ec, NULL, 0);
            CU_ASSERT(eg <= fmax(1e-9, 10 * ec));
            CU_ASSERT(abs(ig - ic) <= 1 + ic / 10);
            if (!(eg <= fmax(1e-9, 10 * ec)) || abs(ig - ic) > 1 + ic / 10)
                printf("\n  %s %s refactor: gpu %d its err %.2e, cpu %d its err %.2e\n", specs[sp], orders_s[oi], ig, eg, ic, ec);
            bsr_solver_destroy(sg);
            bsr_solver_destroy(sc);
            bsr_multivec_destroy(B2);
            bsr_matrix_destroy(A2);
            bsr_problem_free(&P);
        }
}

/* Setup and one solve of A with factor=gpu in natural order, the symbolic
 * phase on the host when where is "host" (NULL: the default, on the device); X into x
 * (n*b values), precond info into info (or the setup's error message).
 * Returns the iterations, or -1 with *st the setup's status. */
static int solve_sym(const bsr_matrix *A, const char *where, double *x, char *info, size_t len, bsr_status *st)
{
    bsr_ilu_test_symbolic_host(where && !strcmp(where, "host"));
    const int64_t m = (int64_t)bsr_matrix_nbrows(A) * bsr_matrix_block(A);
    bsr_solver *s = NULL;
    BSR_ASSERT_OK(bsr_solver_create_str(&s, ctx, "precond=ilu0,factor=gpu,reorder=natural,rtol=1e-10,maxit=300"));
    *st = bsr_solver_setup(s, A);
    bsr_ilu_test_symbolic_host(0);
    if (*st != BSR_OK) {
        snprintf(info, len, "%s", bsr_last_error());
        bsr_solver_destroy(s);
        return -1;
    }
    /* the symbolic value and the device numeric value only: no host numbers */
    const bsr_ilu *F = bsr_solver_host_ilu(s);
    CU_ASSERT(F && !F->valid && !F->pattern_only && !F->aval && !F->scale_left && !F->rows && !F->piv);
    bsr_multivec *B = NULL, *X = NULL;
    BSR_ASSERT_OK(bsr_multivec_create(&B, m, 1, BSR_DOUBLE));
    BSR_ASSERT_OK(bsr_multivec_create(&X, m, 1, BSR_DOUBLE));
    double *b = bsr_multivec_data(B);
    for (int64_t e = 0; e < m; e++) b[e] = 1.0 + (double)((e * 7919) % 13) / 13.0;
    bsr_solver_stats sts;
    memset(&sts, 0, sizeof sts);
    BSR_ASSERT_OK(bsr_solver_solve(s, B, X, &sts));
    memcpy(x, bsr_multivec_cdata(X), sizeof(double) * (size_t)m);
    int it = sts.col ? sts.col[0].iterations : -2;
    snprintf(info, len, "%s", sts.precond_info);
    bsr_solver_stats_free(&sts);
    bsr_multivec_destroy(B);
    bsr_multivec_destroy(X);
    bsr_solver_destroy(s);
    return it;
}

/* The symbolic phase on the device (natural order, factor=gpu): every array
 * equals the host's (BSR_ILU0_SYM_CHECK, set in main), the solve is the
 * host path's bit for bit; a row without its diagonal block falls back to
 * the host; non-finite input gives the host path's status and message. */
static void test_symbolic_dev(void)
{
    if (!ctx) { BSR_TEST_SKIP("no CUDA device"); return; }
    const char *specs[] = {"stencil3d:12:4", "stencil3d:20:2", "stencil3d:10:1", "cfd3d:8,4,10", "stencil3d:6:9"};
    const int nm = 7;
    for (int c = 0; c < nm; c++) {
        /* quick: one stencil, the random 2000 rows (many CUDA blocks of the level walk), the fallback */
        if (bsr_test_quick() && c != 0 && c != 5 && c != 6) continue;
        bsr_problem P;
        bsr_matrix *A = NULL, *R = NULL;
        int fallback = 0;
        memset(&P, 0, sizeof P);
        if (c < 5) {
            BSR_ASSERT_OK(bsr_generate(specs[c], BSR_DOUBLE, &P));
            A = P.A;
        } else if (c == 5) {   /* random, b = 3, 2000 rows: many CUDA blocks, irregular rows */
            R = bsr_test_random_matrix(2000, 2000, 3, 1, 9, BSR_DOUBLE, 4242);
            A = bsr_test_dominant(R, 1.5, 0.1);
        } else {               /* block row 1 without its diagonal block (b = 2) */
            int rp[4] = {0, 2, 4, 6}, ci[6] = {0, 1, 0, 2, 1, 2};
            double v[24];
            for (int q = 0; q < 6; q++)
                for (int e = 0; e < 4; e++) v[q * 4 + e] = (e == 0 || e == 3) ? (ci[q] == q / 2 ? 4.0 : 1.0) : 0.25;
            BSR_ASSERT_OK(bsr_matrix_create(&A, 3, 3, 2, rp, ci, v, BSR_DOUBLE, 0));
            fallback = 1;
        }
        const size_t m = (size_t)bsr_matrix_nbrows(A) * bsr_matrix_block(A);
        double *xd = malloc(sizeof(double) * m), *xh = malloc(sizeof(double) * m);
        char id[512], ih[512];
        bsr_status sd, sh;
        int itd = solve_sym(A, NULL, xd, id, sizeof id, &sd);
        int ith = solve_sym(A, "host", xh, ih, sizeof ih, &sh);
        BSR_ASSERT_OK(sd);
        BSR_ASSERT_OK(sh);
        CU_ASSERT_EQUAL(itd, ith);
        CU_ASSERT(itd > 0);
        CU_ASSERT(memcmp(xd, xh, sizeof(double) * m) == 0);
        CU_ASSERT((strstr(id, "symbolic on the device") != NULL) == !fallback);
        CU_ASSERT(strstr(ih, "symbolic on the device") == NULL);
        if (itd != ith || memcmp(xd, xh, sizeof(double) * m))
            printf("\n  case %d: device symbolic %d its (%s), host %d (%s)\n", c, itd, id, ith, ih);
        free(xd);
        free(xh);
        if (P.A) bsr_problem_free(&P);
        else bsr_matrix_destroy(A);
        bsr_matrix_destroy(R);
    }
    /* default ordering: natural for the device-factored ILU(0), nested dissection otherwise */
    {
        bsr_problem Q;
        BSR_ASSERT_OK(bsr_generate("stencil3d:12:4", BSR_DOUBLE, &Q));
        const char *cfg[2] = {"precond=ilu0", "precond=ilu0,factor=cpu"};
        const char *want[2] = {"order natural (symbolic on the device)", "order nd"};
        for (int c = 0; c < 2; c++) {
            bsr_solver *sv = NULL;
            BSR_ASSERT_OK(bsr_solver_create_str(&sv, ctx, cfg[c]));
            BSR_ASSERT_OK(bsr_solver_setup(sv, Q.A));
            bsr_multivec *X = NULL;
            BSR_ASSERT_OK(bsr_multivec_create(&X, bsr_multivec_rows(Q.rhs), 1, BSR_DOUBLE));
            bsr_solver_stats sts;
            memset(&sts, 0, sizeof sts);
            BSR_ASSERT_OK(bsr_solver_solve(sv, Q.rhs, X, &sts));
            CU_ASSERT(strstr(sts.precond_info, want[c]) != NULL);
            if (!strstr(sts.precond_info, want[c])) printf("\n  %s: %s\n", cfg[c], sts.precond_info);
            bsr_solver_stats_free(&sts);
            bsr_multivec_destroy(X);
            bsr_solver_destroy(sv);
        }
        bsr_problem_free(&Q);
    }
    /* NaN in A: the same status and message on both paths */
    bsr_problem P;
    BSR_ASSERT_OK(bsr_generate("stencil3d:6:3", BSR_DOUBLE, &P));
    bsr_matrix *B = NULL;
    BSR_ASSERT_OK(bsr_matrix_copy(P.A, BSR_DOUBLE, &B));
    ((double *)bsr_matrix_values(B))[(size_t)bsr_matrix_nnzb(B) * 9 / 2 + 4] = NAN;
    const size_t m = (size_t)bsr_matrix_nbrows(B) * 3;
    double *x = malloc(sizeof(double) * m);
    char md[512], mh[512];
    bsr_status sd, sh;
    CU_ASSERT_EQUAL(solve_sym(B, NULL, x, md, sizeof md, &sd), -1);
    CU_ASSERT_EQUAL(solve_sym(B, "host", x, mh, sizeof mh, &sh), -1);
    CU_ASSERT_EQUAL(sd, BSR_ERR_VALUE);
    CU_ASSERT_EQUAL(sh, BSR_ERR_VALUE);
    CU_ASSERT_STRING_EQUAL(md, mh);
    free(x);
    bsr_matrix_destroy(B);
    bsr_problem_free(&P);
}

/* Runs everywhere: option parsing and refusals. */
static void test_options(void)
{
    bsr_solver_options o;
    bsr_solver_options_default(&o);
    CU_ASSERT_EQUAL(o.factor, BSR_FACTOR_AUTO);
    BSR_ASSERT_OK(bsr_solver_options_parse(&o, "factor=gpu"));
    CU_ASSERT_EQUAL(o.factor, BSR_FACTOR_GPU);
    BSR_ASSERT_OK(bsr_solver_options_parse(&o, "factor=cpu"));
    CU_ASSERT_EQUAL(o.factor, BSR_FACTOR_CPU);
    CU_ASSERT_EQUAL(bsr_solver_options_parse(&o, "factor=fpga"), BSR_ERR_ARG);
    bsr_problem P;
    BSR_ASSERT_OK(bsr_generate("stencil3d:4:2", BSR_DOUBLE, &P));
    bsr_solver *s = NULL;
    BSR_ASSERT_OK(bsr_solver_create_str(&s, NULL, "precond=ilu0,factor=gpu"));
    CU_ASSERT_EQUAL(bsr_solver_setup(s, P.A), BSR_ERR_UNSUPPORTED);   /* CPU backend */
    bsr_solver_destroy(s);
    /* symbolic_only: the host factors refuse to be used */
    bsr_ilu_options io;
    bsr_ilu_options_default(&io, BSR_ILU0);
    io.symbolic_only = 1;
    bsr_ilu *F = NULL;
    BSR_ASSERT_OK(bsr_ilu_setup(P.A, &io, &F));
    bsr_multivec *X = NULL;
    BSR_ASSERT_OK(bsr_multivec_create(&X, bsr_multivec_rows(P.rhs), 1, BSR_DOUBLE));
    CU_ASSERT_EQUAL(bsr_ilu_apply(F, P.rhs, X), BSR_ERR_ARG);
    CU_ASSERT_EQUAL(bsr_ilu_refactor(F, P.A), BSR_ERR_ARG);
    bsr_ilu_stats st;
    BSR_ASSERT_OK(bsr_ilu_get_stats(F, &st));
    CU_ASSERT(st.nnzb_L + st.nnzb_U == bsr_matrix_nnzb(P.A));
    bsr_multivec_destroy(X);
    bsr_ilu_destroy(F);
    bsr_problem_free(&P);
}

int main(int argc, char **argv)
{
    /* every device plan (map of A, update lists) is compared with the host reference */
    setenv("BSR_ILU0_PLAN_CHECK", "1", 1);
    /* and every symbolic phase done on the device with the host's */
    setenv("BSR_ILU0_SYM_CHECK", "1", 1);
    if (bsr_test_have_gpu() && bsr_context_create(&ctx, BSR_BACKEND_CUDA, 0, NULL) != BSR_OK) {
        printf("cannot create a CUDA context: %s\n", bsr_last_error());
        return 1;
    }
    if (ctx) printf("device: %s\n", bsr_context_describe(ctx));
    static const bsr_test tests[] = {
        {"options and refusals (no GPU needed)", test_options},
        {"random b=1..10, orderings, float/double", test_random},
        {"stencil and cfd3d generators, orderings", test_generators},
        {"zero pivots, fallback scaling, strict pivots", test_pivots},
        {"non-finite input and overflow: CPU's status and message", test_nonfinite},
        {"solver factor=gpu vs factor=cpu, refactor", test_solver},
        {"symbolic phase on the device vs the host's, fallback, default order, errors", test_symbolic_dev},
        {NULL, NULL}};
    int rc = bsr_test_main("gpu_ilu", tests, argc, argv);
    if (ctx) bsr_context_destroy(ctx);
    return rc;
}
