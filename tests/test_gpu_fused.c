/* SPDX-License-Identifier: BSD-3-Clause */
/* Fused Krylov update + inner products on the device (kernels/blas_multivec.cu,
 * issue 22) against the separate device calls (bit for bit) and a host
 * computation in double: one and two updates, with and without a second
 * inner product, masks, k = 1..64, float and double; the one-pass
 * combination of m vectors (GMRES's) likewise; BiCGStab and GMRES(-DR) with
 * the fused calls against the separate ones (bsr_kops_set_unfused) on a
 * stencil, a coupled system and a real matrix: the same iterations and the
 * same bits of x.  Skips (exit 77) without a GPU. */
#include "harness.h"
#include "internal.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

static bsr_context *ctx;
static uint64_t seed = 9000;

/* A device copy of X (host copy too). */
static bsr_multivec *dev_copy(const bsr_multivec *X)
{
    bsr_multivec *Y = NULL;
    bsr_multivec_create(&Y, bsr_multivec_rows(X), bsr_multivec_cols(X), bsr_multivec_precision(X));
    bsr_multivec_copy(Y, X);
    bsr_multivec_upload(ctx, Y);
    return Y;
}

static double val(const bsr_multivec *X, int64_t e)
{
    const void *d = bsr_multivec_cdata(X);
    return bsr_multivec_precision(X) == BSR_DOUBLE ? ((const double *)d)[e] : ((const float *)d)[e];
}

/* One case: nu updates (Z0 = a0 X0 + b0 Y0 + c0 Z0, Z1 = a1 X1 + b1 Y1 + c1 Z1
 * with c1 = 0: write-only), then (D, D) and, with two, (D, W). */
static void check_case(int64_t n, int k, bsr_precision p, int nu, int two, int masked)
{
    double a[2][64], b[2][64], c[2][64], o1[64], o2[64], r1[64], r2[64];
    int done[64];
    for (int j = 0; j < k; j++) {
        a[0][j] = 0.5 + j; b[0][j] = -0.25 * (j + 1); c[0][j] = 1;
        a[1][j] = 1; b[1][j] = -0.75 + 0.1 * j; c[1][j] = 0;
        done[j] = masked && j % 3 == 1;
    }
    bsr_multivec *X0 = bsr_test_dev_random(ctx, n, k, p, seed++), *Y0 = bsr_test_dev_random(ctx, n, k, p, seed++);
    bsr_multivec *Z0 = bsr_test_dev_random(ctx, n, k, p, seed++), *X1 = bsr_test_dev_random(ctx, n, k, p, seed++);
    bsr_multivec *Y1 = bsr_test_dev_random(ctx, n, k, p, seed++), *Z1 = bsr_test_dev_random(ctx, n, k, p, seed++);
    bsr_multivec *W = bsr_test_dev_random(ctx, n, k, p, seed++);
    bsr_multivec *Z0s = dev_copy(Z0), *Z1s = dev_copy(Z1);
    bsr_multivec *Z0h = dev_copy(Z0), *Z1h = dev_copy(Z1); /* host reference starts */
    /* fused */
    bsr_multivec *Z[2] = {Z0, Z1};
    const double *A[2] = {a[0], a[1]}, *Bc[2] = {b[0], b[1]}, *C[2] = {c[0], c[1]};
    const bsr_multivec *Xs[2] = {X0, X1}, *Ys[2] = {Y0, Y1};
    BSR_ASSERT_OK(bsr_cuda_mv_upd_dot(ctx, nu, Z, A, Xs, Bc, Ys, C, masked ? done : NULL, NULL, o1, two ? W : NULL,
                                      two ? o2 : NULL));
    /* separate calls */
    BSR_ASSERT_OK(bsr_ctx_axpbypcz(ctx, a[0], X0, b[0], Y0, c[0], Z0s, masked ? done : NULL));
    if (nu == 2) BSR_ASSERT_OK(bsr_ctx_axpbypcz(ctx, a[1], X1, b[1], Y1, c[1], Z1s, masked ? done : NULL));
    bsr_multivec *Ds = nu == 2 ? Z1s : Z0s, *D = nu == 2 ? Z1 : Z0;
    /* each inner product the bits of its lone dot */
    BSR_ASSERT_OK(bsr_ctx_dot(ctx, Ds, Ds, r1));
    if (two) BSR_ASSERT_OK(bsr_ctx_dot(ctx, W, Ds, r2));
    CU_ASSERT(!memcmp(o1, r1, sizeof(double) * k));
    if (two) CU_ASSERT(!memcmp(o2, r2, sizeof(double) * k));
    BSR_ASSERT_OK(bsr_multivec_download(ctx, Z0)); BSR_ASSERT_OK(bsr_multivec_download(ctx, Z0s));
    BSR_ASSERT_OK(bsr_multivec_download(ctx, Z1)); BSR_ASSERT_OK(bsr_multivec_download(ctx, Z1s));
    CU_ASSERT(bsr_test_same_bits(Z0, Z0s));
    if (nu == 2) CU_ASSERT(bsr_test_same_bits(Z1, Z1s));
    /* host reference in double */
    const double tol = p == BSR_DOUBLE ? 1e-12 : 1e-5;
    double worst = 0, dots[2][64];
    memset(dots, 0, sizeof dots);
    for (int64_t e = 0; e < n * k; e++) {
        int j = (int)(e % k);
        double z0 = val(Z0h, e), z1 = val(Z1h, e);
        if (!(masked && done[j])) {
            z0 = a[0][j] * val(X0, e) + b[0][j] * val(Y0, e) + c[0][j] * z0;
            if (nu == 2) z1 = a[1][j] * val(X1, e) + b[1][j] * val(Y1, e);
        }
        double ref = nu == 2 ? z1 : z0, got = val(D, e);
        double err = fabs(got - ref) / (fabs(ref) > 1 ? fabs(ref) : 1);
        if (err > worst) worst = err;
        dots[0][j] += got * got;
        dots[1][j] += got * val(W, e);
    }
    CU_ASSERT(worst <= tol);
    for (int j = 0; j < k; j++) {
        CU_ASSERT(fabs(o1[j] - dots[0][j]) <= 1e-10 * fabs(dots[0][j]) + 1e-300);
        if (two) CU_ASSERT(fabs(o2[j] - dots[1][j]) <= 1e-10 * (fabs(dots[0][j]) + 1));
    }
    bsr_multivec *all[] = {X0, Y0, Z0, X1, Y1, Z1, W, Z0s, Z1s, Z0h, Z1h};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) bsr_multivec_destroy(all[i]);
}

static void test_kernel(void)
{
    if (!bsr_test_have_gpu()) return;
    static const int ks[] = {1, 2, 3, 5, 9, 16, 33, 64};
    for (int ki = 0; ki < 8; ki++)
        for (int p = 0; p < 2; p++)
            for (int v = 0; v < 8; v++) {
                const int64_t n = ks[ki] > 16 ? 3001 : 40007;   /* several blocks of the grid, a ragged end */
                check_case(n, ks[ki], p ? BSR_FLOAT : BSR_DOUBLE, 1 + (v & 1), (v >> 1) & 1, (v >> 2) & 1);
            }
}

/* One combination Y = b Y + sum_l c_l V_l of m vectors (over LC_MAX a
 * launch from m = 7 on), some coefficients zero, b zero in some columns:
 * the device's one pass against its separate axpby calls (bit for bit) and
 * against the host in double. */
static void lincomb_case(int64_t n, int k, bsr_precision p, int m, int masked)
{
    double b[64], c[13 * 64];
    int done[64];
    bsr_multivec *V[13], *Vh[13];
    for (int j = 0; j < k; j++) {
        b[j] = j % 4 == 2 ? 0 : 1 - 0.3 * j;
        done[j] = masked && j % 3 == 1;
        for (int l = 0; l < m; l++) c[l * k + j] = (l + j) % 5 == 3 ? 0 : 0.7 - 0.11 * l + 0.05 * j;
    }
    for (int l = 0; l < m; l++) V[l] = bsr_test_dev_random(ctx, n, k, p, seed++);
    bsr_multivec *Y = bsr_test_dev_random(ctx, n, k, p, seed++);
    bsr_multivec *Ys = dev_copy(Y), *Yh = dev_copy(Y);
    BSR_ASSERT_OK(bsr_cuda_mv_lincomb(ctx, Y, b, m, V, c, masked ? done : NULL));
    double one[64];
    for (int j = 0; j < k; j++) one[j] = 1;
    for (int l = 0; l < m; l++) BSR_ASSERT_OK(bsr_ctx_axpby(ctx, c + l * k, V[l], l ? one : b, Ys, masked ? done : NULL));
    BSR_ASSERT_OK(bsr_multivec_download(ctx, Y));
    BSR_ASSERT_OK(bsr_multivec_download(ctx, Ys));
    CU_ASSERT(bsr_test_same_bits(Y, Ys));
    for (int l = 0; l < m; l++) Vh[l] = V[l];
    const double tol = p == BSR_DOUBLE ? 1e-12 : 1e-5;
    double worst = 0;
    for (int64_t e = 0; e < n * k; e++) {
        int j = (int)(e % k);
        double ref = val(Yh, e);
        if (!(masked && done[j])) {
            ref *= b[j];
            for (int l = 0; l < m; l++) ref += c[l * k + j] * val(Vh[l], e);
        }
        double err = fabs(val(Y, e) - ref) / (fabs(ref) > 1 ? fabs(ref) : 1);
        if (err > worst) worst = err;
    }
    CU_ASSERT(worst <= tol);
    for (int l = 0; l < m; l++) bsr_multivec_destroy(V[l]);
    bsr_multivec_destroy(Y); bsr_multivec_destroy(Ys); bsr_multivec_destroy(Yh);
}

static void test_lincomb(void)
{
    if (!bsr_test_have_gpu()) return;
    static const int ks[] = {1, 3, 9, 64}, ms[] = {1, 5, 6, 7, 13};
    for (int ki = 0; ki < 4; ki++)
        for (int mi = 0; mi < 5; mi++)
            for (int p = 0; p < 2; p++)
                for (int masked = 0; masked < 2; masked++)
                    lincomb_case(ks[ki] > 16 ? 3001 : 20011, ks[ki], p ? BSR_FLOAT : BSR_DOUBLE, ms[mi], masked);
}

/* BiCGStab on A, fused against separate calls: same iterations, same bits of x. */
static void solve_both(const char *name, const bsr_matrix *A, const char *cfg)
{
    const int64_t n = (int64_t)bsr_matrix_nbrows(A) * bsr_matrix_block(A);
    bsr_multivec *B = NULL, *X[2] = {NULL, NULL};
    BSR_ASSERT_OK(bsr_multivec_create(&B, n, 2, BSR_DOUBLE));
    BSR_ASSERT_OK(bsr_multivec_random(B, 77));
    int its[2][2];
    for (int u = 0; u < 2; u++) {
        bsr_kops_set_unfused(u);
        BSR_ASSERT_OK(bsr_multivec_create(&X[u], n, 2, BSR_DOUBLE));
        bsr_solver *s = NULL;
        bsr_solver_stats st;
        BSR_ASSERT_OK(bsr_solver_create_str(&s, ctx, cfg));
        BSR_ASSERT_OK(bsr_solver_setup(s, A));
        bsr_status e = bsr_solver_solve(s, B, X[u], &st);
        CU_ASSERT(e == BSR_OK || e == BSR_ERR_NOCONV);
        for (int j = 0; j < 2; j++) its[u][j] = st.col[j].iterations;
        bsr_solver_stats_free(&st);
        bsr_solver_destroy(s);
    }
    bsr_kops_set_unfused(0);
    CU_ASSERT(its[0][0] == its[1][0] && its[0][1] == its[1][1]);
    CU_ASSERT(bsr_test_same_bits(X[0], X[1]));
    if (!bsr_test_same_bits(X[0], X[1])) fprintf(stderr, "\n  %s: fused and separate solves differ\n", name);
    bsr_multivec_destroy(B); bsr_multivec_destroy(X[0]); bsr_multivec_destroy(X[1]);
}

static void test_solve(void)
{
    if (!bsr_test_have_gpu()) return;
    bsr_problem P;
    BSR_ASSERT_OK(bsr_generate("stencil3d:12:4", BSR_DOUBLE, &P));
    solve_both("stencil3d:12:4", P.A, "precond=ilu0,rtol=1e-10");
    solve_both("stencil3d:12:4 float", P.A, "precond=ilu0,precision=float,precond_precision=float,rtol=1e-5");
    bsr_problem_free(&P);
    /* GMRES's CGS2 and GMRES-DR's restarts and error control: combinations in one pass against axpby calls */
    BSR_ASSERT_OK(bsr_generate("coupled3d:10,4,couple=0.4", BSR_DOUBLE, &P));
    solve_both("coupled3d GMRES", P.A, "method=gmres,restart=20,orth=cgs2,precond=ilu0,rtol=1e-10");
    solve_both("coupled3d GMRES-DR", P.A, "method=gmres,restart=20,deflate=8,orth=cgs2,precond=ilu0,rtol=1e-10,etol=1e-9");
    solve_both("coupled3d GMRES-DR float", P.A,
               "method=gmres,restart=12,deflate=5,precond=ilu0,precision=float,precond_precision=float,rtol=1e-5");
    bsr_problem_free(&P);
    char **files;
    int nf = bsr_test_real_list(&files, 1 << 20), done = 0;
    for (int fi = 0; fi < nf && done < 2; fi++) {
        bsr_matrix *A = NULL;
        if (strstr(files[fi], "sherman5") == NULL && strstr(files[fi], "spe01") == NULL) continue;
        if (bsr_mm_read(files[fi], 0, BSR_DOUBLE, &A, NULL) != BSR_OK) continue;
        solve_both(files[fi], A, "precond=ilu0,rtol=1e-8");
        bsr_matrix_destroy(A);
        done++;
    }
    bsr_test_free_list(files, nf);
    if (!done) BSR_TEST_SKIP("no real-matrix folder (sherman5, spe01)");
}

int main(int argc, char **argv)
{
    static const bsr_test tests[] = {{"fused update + dot against separate calls", test_kernel},
                                     {"one-pass combination against separate calls", test_lincomb},
                                     {"BiCGStab and GMRES(-DR) fused against separate", test_solve},
                                     {NULL, NULL}};
    return bsr_test_gpu_main("gpu_fused", tests, argc, argv, &ctx);
}
