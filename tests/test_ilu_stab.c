/* SPDX-License-Identifier: BSD-3-Clause */
/* Stability diagnostics of host ILU factors (bsr_ilu_stability): the growth
 * estimates of L^{-1} and U^{-1} against known and dense-computed norms, the
 * pivot condition numbers against blocks of known conditioning, and the
 * separation of a stable from an unstable coupled system. */
#include "harness.h"
#include "ilu_impl.h"
#include "blockops.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Block tridiagonal n x n (blocks b): diagonal I, sub-diagonal lo*I, super-diagonal up*I. */
static bsr_matrix *bidiag(int n, int b, double lo, double up)
{
    int *rp = malloc(sizeof(int) * (n + 1)), *ci = malloc(sizeof(int) * 3 * n);
    double *v = calloc((size_t)3 * n * b * b, sizeof(double));
    int q = 0;
    rp[0] = 0;
    for (int k = 0; k < n; k++) {
        const int cols[3] = {k - 1, k, k + 1};
        const double s[3] = {lo, 1.0, up};
        for (int t = 0; t < 3; t++) {
            if (cols[t] < 0 || cols[t] >= n || s[t] == 0.0) continue;
            ci[q] = cols[t];
            for (int i = 0; i < b; i++) v[(size_t)q * b * b + i * b + i] = s[t];
            q++;
        }
        rp[k + 1] = q;
    }
    bsr_matrix *A = NULL;
    BSR_ASSERT_OK(bsr_matrix_create(&A, n, n, b, rp, ci, v, BSR_DOUBLE, 0));
    free(rp); free(ci); free(v);
    return A;
}

/* ILU(0) of A in natural order (no ND: the rows stay as built). */
static bsr_ilu *ilu0_natural(const bsr_matrix *A) { return bsr_test_ilu0(A, BSR_ORDER_NATURAL); }

/* A = I - 2 S (S the block shift down): L = A, U = I, and row k of L^{-1}
 * holds 2^(k-j), so its 1-norm is 2^(k+1) - 1; the greedy signs reach it. */
static void test_lower_growth(void)
{
    const int n = 30;
    for (int b = 1; b <= 3; b += 2) {
        bsr_matrix *A = bidiag(n, b, -2.0, 0.0);
        bsr_ilu *F = ilu0_natural(A);
        double lr[30], ur[30], pc[30];
        bsr_ilu_stab t = {.l_row = lr, .u_row = ur, .piv_cond = pc};
        BSR_ASSERT_OK(bsr_ilu_stability(F, &t));
        for (int k = 0; k < n; k++) {
            double exact = ldexp(1.0, k + 1) - 1.0;
            CU_ASSERT(lr[k] <= exact * (1 + 1e-14));   /* a lower bound ... */
            CU_ASSERT(lr[k] >= 0.5 * exact);            /* ... within 2x (here: equal) */
            CU_ASSERT_DOUBLE_EQUAL(lr[k], exact, 1e-12 * exact);
            CU_ASSERT_DOUBLE_EQUAL(ur[k], 1.0, 1e-14);
            CU_ASSERT_DOUBLE_EQUAL(pc[k], 1.0, 1e-14);
        }
        CU_ASSERT_EQUAL(t.l_at, n - 1);
        CU_ASSERT_DOUBLE_EQUAL(t.l_max, ldexp(1.0, n) - 1.0, 1e-6);
        CU_ASSERT_DOUBLE_EQUAL(t.u_max, 1.0, 1e-14);
        /* 2^(k+1) - 1 > 1e4 first at k = 13 */
        CU_ASSERT_EQUAL(t.first, 13);
        CU_ASSERT_EQUAL(t.first_which, 'L');
        CU_ASSERT_EQUAL(t.over, n - 13);
        int64_t h = 0;
        for (int d = 0; d < BSR_STAB_DECADES; d++) h += t.hist_l[d];
        CU_ASSERT_EQUAL(h, n);
        CU_ASSERT_EQUAL(t.hist_l[0], 3);   /* 1, 3, 7 */
        CU_ASSERT_EQUAL(t.hist_l[1], 3);   /* 15, 31, 63 */
        CU_ASSERT_EQUAL(t.hist_u[0], n);
        bsr_ilu_destroy(F);
        bsr_matrix_destroy(A);
    }
}

/* A = I - 2 S^T: L = I, U = A, and column k of U^{-1} has 1-norm 2^(k+1) - 1. */
static void test_upper_growth(void)
{
    const int n = 20, b = 2;
    bsr_matrix *A = bidiag(n, b, 0.0, -2.0);
    bsr_ilu *F = ilu0_natural(A);
    double lr[20], ur[20];
    bsr_ilu_stab t = {.l_row = lr, .u_row = ur};
    BSR_ASSERT_OK(bsr_ilu_stability(F, &t));
    for (int k = 0; k < n; k++) {
        double exact = ldexp(1.0, k + 1) - 1.0;
        CU_ASSERT_DOUBLE_EQUAL(ur[k], exact, 1e-12 * exact);
        CU_ASSERT_DOUBLE_EQUAL(lr[k], 1.0, 1e-14);
    }
    CU_ASSERT_EQUAL(t.first, 13);
    CU_ASSERT_EQUAL(t.first_which, 'U');
    bsr_ilu_destroy(F);
    bsr_matrix_destroy(A);
}

/* Dense n x n copy of a factor (unit diagonal for L; U's stored diagonal
 * block, the inverted pivot, inverted back). */
static double *dense_factor(const bsr_matrix *M, int upper)
{
    bsr_matrix_info f;
    bsr_matrix_get_info(M, &f);
    const int b = f.b, N = f.nbrows * b;
    double *D = calloc((size_t)N * N, sizeof(double));
    const double *val = M->val;
    for (int k = 0; k < f.nbrows; k++) {
        if (!upper) for (int i = 0; i < b; i++) D[(size_t)(k * b + i) * N + k * b + i] = 1.0;
        for (int p = M->rowptr[k]; p < M->rowptr[k + 1]; p++) {
            const double *blk = val + (size_t)p * b * b;
            double inv[BSR_MAX_BLOCK * BSR_MAX_BLOCK];
            if (upper && M->colind[p] == k) { bsr_blk_inv(b, blk, inv, 0.0); blk = inv; }
            for (int i = 0; i < b; i++)
                for (int j = 0; j < b; j++) D[(size_t)(k * b + i) * N + M->colind[p] * b + j] = blk[i * b + j];
        }
    }
    return D;
}

/* inv = D^{-1} (N x N, Gauss-Jordan with partial pivoting); D is overwritten. */
static void dense_inv(int N, double *D, double *inv)
{
    memset(inv, 0, sizeof(double) * N * N);
    for (int i = 0; i < N; i++) inv[(size_t)i * N + i] = 1.0;
    for (int c = 0; c < N; c++) {
        int p = c;
        for (int r = c + 1; r < N; r++) if (fabs(D[(size_t)r * N + c]) > fabs(D[(size_t)p * N + c])) p = r;
        for (int j = 0; j < N; j++) {
            double t = D[(size_t)c * N + j]; D[(size_t)c * N + j] = D[(size_t)p * N + j]; D[(size_t)p * N + j] = t;
            t = inv[(size_t)c * N + j]; inv[(size_t)c * N + j] = inv[(size_t)p * N + j]; inv[(size_t)p * N + j] = t;
        }
        double d = D[(size_t)c * N + c];
        for (int j = 0; j < N; j++) { D[(size_t)c * N + j] /= d; inv[(size_t)c * N + j] /= d; }
        for (int r = 0; r < N; r++) {
            if (r == c) continue;
            double m = D[(size_t)r * N + c];
            if (m == 0.0) continue;
            for (int j = 0; j < N; j++) { D[(size_t)r * N + j] -= m * D[(size_t)c * N + j]; inv[(size_t)r * N + j] -= m * inv[(size_t)c * N + j]; }
        }
    }
}

/* A nonsymmetric block tridiagonal matrix with dense blocks (no fill: ILU(0)
 * is its LU): every row's estimates are lower bounds of the norms of the
 * dense inverses of the stored factors, the largest within a modest factor. */
static void test_dense_bounds(void)
{
    const int n = 12, b = 3, bb = b * b, N = n * b;
    int rp[13], ci[36], q = 0;
    double v[36 * 9];
    unsigned s = 12345;
    rp[0] = 0;
    for (int k = 0; k < n; k++) {
        for (int j = k - 1; j <= k + 1; j++) {
            if (j < 0 || j >= n) continue;
            ci[q] = j;
            for (int e = 0; e < bb; e++) {
                s = s * 1103515245u + 12345u;
                double r = ((s >> 8) & 0xffff) / 65536.0 - 0.5;   /* [-0.5, 0.5) */
                v[q * bb + e] = j == k ? (e % (b + 1) == 0 ? 1.0 : 0.0) + 0.6 * r : 1.6 * r;
            }
            q++;
        }
        rp[k + 1] = q;
    }
    bsr_matrix *A = NULL;
    BSR_ASSERT_OK(bsr_matrix_create(&A, n, n, b, rp, ci, v, BSR_DOUBLE, 0));
    bsr_ilu *F = ilu0_natural(A);
    bsr_ilu_factors fa;
    BSR_ASSERT_OK(bsr_ilu_get_factors(F, &fa));
    double lr[12], ur[12];
    bsr_ilu_stab t = {.l_row = lr, .u_row = ur};
    BSR_ASSERT_OK(bsr_ilu_stability(F, &t));
    double *Ld = dense_factor(fa.L, 0), *Ud = dense_factor(fa.U, 1);
    double *Li = malloc(sizeof(double) * N * N), *Ui = malloc(sizeof(double) * N * N);
    dense_inv(N, Ld, Li);
    dense_inv(N, Ud, Ui);
    double lmax = 0, umax = 0, emax_l = 0, emax_u = 0;
    for (int k = 0; k < n; k++) {
        double rl = 0, cu = 0;   /* largest scalar row norm of L^{-1}, column norm of U^{-1} in block k */
        for (int i = 0; i < b; i++) {
            double a = 0, c = 0;
            for (int j = 0; j < N; j++) { a += fabs(Li[(size_t)(k * b + i) * N + j]); c += fabs(Ui[(size_t)j * N + k * b + i]); }
            if (a > rl) rl = a;
            if (c > cu) cu = c;
        }
        CU_ASSERT(lr[k] <= rl * (1 + 1e-12));
        CU_ASSERT(ur[k] <= cu * (1 + 1e-12));
        CU_ASSERT(lr[k] >= 1.0);
        if (rl > lmax) lmax = rl;
        if (cu > umax) umax = cu;
        if (lr[k] > emax_l) emax_l = lr[k];
        if (ur[k] > emax_u) emax_u = ur[k];
    }
    printf("\n    ||L^-1||_inf %.4g est %.4g, ||U^-1||_1 %.4g est %.4g ... ", lmax, emax_l, umax, emax_u);
    CU_ASSERT(emax_l >= lmax / 10);
    CU_ASSERT(emax_u >= umax / 10);
    CU_ASSERT(umax > 2.0);   /* the case is not trivial */
    free(Ld); free(Ud); free(Li); free(Ui);
    bsr_ilu_destroy(F);
    bsr_matrix_destroy(A);
}

/* Pivots of known conditioning: A = [I B_1 B_2 B_3; I I; I . I; I . . I]
 * (b = 2) has d_0 = I and d_k = I - B_k, no fill; ||d||_1 ||d^{-1}||_1 is
 * 1, 5 (diag(.5, .1)), 500 (diag(1, 2e-3)) and 4 ([1 1; 0 1]). */
static void test_pivot_condition(void)
{
    const int n = 4, b = 2;
    int rp[5] = {0, 4, 6, 8, 10}, ci[10] = {0, 1, 2, 3, 0, 1, 0, 2, 0, 3};
    const double I2[4] = {1, 0, 0, 1};
    const double B[4][4] = {{0}, {0.5, 0, 0, 0.9}, {0, 0, 0, 0.998}, {0, -1, 0, 0}};
    double v[10 * 4];
    int q = 0;
    for (int k = 0; k < n; k++)
        for (int p = rp[k]; p < rp[k + 1]; p++, q++)
            memcpy(v + q * 4, k == 0 && ci[p] > 0 ? B[ci[p]] : I2, sizeof I2);
    bsr_matrix *A = NULL;
    BSR_ASSERT_OK(bsr_matrix_create(&A, n, n, b, rp, ci, v, BSR_DOUBLE, 0));
    bsr_ilu *F = ilu0_natural(A);
    double pc[4];
    bsr_ilu_stab t = {.piv_cond = pc};
    BSR_ASSERT_OK(bsr_ilu_stability(F, &t));
    const double want[4] = {1, 5, 500, 4};
    for (int k = 0; k < n; k++) CU_ASSERT_DOUBLE_EQUAL(pc[k], want[k], 1e-9 * want[k]);
    CU_ASSERT_EQUAL(t.piv_at, 2);
    CU_ASSERT_DOUBLE_EQUAL(t.piv_max, 500, 1e-6);
    CU_ASSERT_EQUAL(t.hist_piv[0], 3);
    CU_ASSERT_EQUAL(t.hist_piv[2], 1);
    bsr_ilu_destroy(F);
    bsr_matrix_destroy(A);
}

/* ILU2 as the solver sets it up on the host (ND, keep_pattern, no cap): the
 * largest growth estimate of L^{-1} and U^{-1} of spec's matrix. */
static double coupled_growth(const char *spec, bsr_ilu_stab *t)
{
    bsr_problem P;
    BSR_ASSERT_OK(bsr_generate(spec, BSR_DOUBLE, &P));
    bsr_ilu_options o;
    bsr_ilu_options_default(&o, BSR_ILU2);
    o.keep_pattern = 1;
    bsr_ilu *F = NULL;
    BSR_ASSERT_OK(bsr_ilu_setup(P.A, &o, &F));
    memset(t, 0, sizeof *t);
    BSR_ASSERT_OK(bsr_ilu_stability(F, t));
    bsr_ilu_destroy(F);
    bsr_problem_free(&P);
    return t->l_max > t->u_max ? t->l_max : t->u_max;
}

/* coupled3d:10,5: the default shift gives a stable factor, shift=0 one whose
 * inverse factors grow more than tenfold, the growth in the separators. */
static void test_coupled_shift(void)
{
    bsr_ilu_stab a, z;
    double ga = coupled_growth("coupled3d:10,5", &a), gz = coupled_growth("coupled3d:10,5,shift=0", &z);
    printf("\n    coupled3d:10,5 default: L %.3g U %.3g pivot %.3g; shift=0: L %.3g U %.3g pivot %.3g "
           "(leaf %.3g, separator %.3g) ... ", a.l_max, a.u_max, a.piv_max, z.l_max, z.u_max, z.piv_max,
           z.max_leaf, z.max_sep);
    CU_ASSERT(ga >= 1.0);
    CU_ASSERT(gz >= 10.0 * ga);
    CU_ASSERT(z.max_sep > z.max_leaf);
    CU_ASSERT(z.sep_rows > 0 && z.sep_rows < z.n);
}

/* Factors that live on the device (symbolic_only) are refused. */
static void test_symbolic_refused(void)
{
    bsr_matrix *A = bidiag(8, 2, -0.5, 0.5);
    bsr_ilu_options o;
    bsr_ilu_options_default(&o, BSR_ILU0);
    o.symbolic_only = 1;
    bsr_ilu *F = NULL;
    BSR_ASSERT_OK(bsr_ilu_setup(A, &o, &F));
    bsr_ilu_stab t = {0};
    CU_ASSERT_EQUAL(bsr_ilu_stability(F, &t), BSR_ERR_ARG);
    bsr_clear_error();
    bsr_ilu_destroy(F);
    bsr_matrix_destroy(A);
}

int main(int argc, char **argv)
{
    static const bsr_test tests[] = {
        {"L^-1 growth 2^k: estimate exact", test_lower_growth},
        {"U^-1 growth 2^k: estimate exact", test_upper_growth},
        {"estimates bound the dense inverses' norms from below", test_dense_bounds},
        {"pivot condition numbers", test_pivot_condition},
        {"coupled3d: default vs shift=0", test_coupled_shift},
        {"symbolic_only factors refused", test_symbolic_refused},
        {NULL, NULL}};
    return bsr_test_main("ilu_stab", tests, argc, argv);
}
