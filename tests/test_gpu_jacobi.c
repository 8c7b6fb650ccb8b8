/* SPDX-License-Identifier: BSD-3-Clause */
/* Device Jacobi triangular sweeps (trisolve=jacobi:N, issue 22) against the
 * host reference bsr_trsv_jacobi_host: each factor alone and the whole apply,
 * b = 1..10 on random dominant matrices, a stencil and a real matrix, float,
 * double and mixed (float factors, double vectors), k = 1, 5, 16, 1..3
 * sweeps; outputs NaN-poisoned on the device; the same bits twice; enough
 * sweeps give the exact solve; the solver option end to end (a CUDA solve
 * with trisolve=jacobi:2 converges and reports the profile's bound); more
 * than 16 right-hand sides (the apply in chunks of 16 columns).  Skips (exit
 * 77) without a GPU. */
#include "harness.h"
#include "gpu_ilu.h"
#include <math.h>
#include <string.h>

static bsr_context *ctx;
static uint64_t seed = 5000;
enum { MODE_DOUBLE, MODE_FLOAT, MODE_MIXED };
static const char *mode_name[] = {"double", "float", "mixed"};

/* Scaling block (row i, entry e) of s (n blocks of b*b in precision sp). */
static double sblk(const void *s, bsr_precision sp, size_t e)
{
    return sp == BSR_DOUBLE ? ((const double *)s)[e] : ((const float *)s)[e];
}

/* t_i = S_i x_{perm[i]} (scatter 0) or y_{perm[i]} = S_i t_i (scatter 1) on host
 * data of precision vp (S NULL: identity; perm NULL: none), summed in double. */
static void host_permscale(const bsr_ilu_factors *f, const void *S, bsr_precision sp, int scatter,
                           const bsr_multivec *in, bsr_multivec *out)
{
    const int n = bsr_matrix_nbrows(f->L), b = bsr_matrix_block(f->L), k = bsr_multivec_cols(in);
    const int dbl = bsr_multivec_precision(in) == BSR_DOUBLE;
    const void *x = bsr_multivec_cdata(in);
    void *y = bsr_multivec_data(out);
    for (int i = 0; i < n; i++) {
        const int pi = f->ord && f->ord->perm ? f->ord->perm[i] : i;
        const size_t src = (size_t)(scatter ? i : pi) * b * k, dst = (size_t)(scatter ? pi : i) * b * k;
        for (int r = 0; r < b; r++)
            for (int j = 0; j < k; j++) {
                double v = 0;
                for (int c = 0; c < b; c++) {
                    double xv = dbl ? ((const double *)x)[src + c * k + j] : ((const float *)x)[src + c * k + j];
                    v += S ? sblk(S, sp, (size_t)i * b * b + r * b + c) * xv : (c == r ? xv : 0);
                }
                if (dbl) ((double *)y)[dst + r * k + j] = v;
                else ((float *)y)[dst + r * k + j] = (float)v;
            }
    }
}

/* The host composition of the Jacobi apply: gather + left scaling, the L and
 * U sweeps, right scaling + scatter (as kernels/trsv/trsv_ilu.cu applies it). */
static void host_apply(const bsr_ilu_factors *f, bsr_precision sp, int N, const bsr_multivec *X, bsr_multivec *R)
{
    bsr_multivec *T = NULL, *T2 = NULL;
    const int64_t n = bsr_multivec_rows(X);
    const int k = bsr_multivec_cols(X);
    BSR_ASSERT_OK(bsr_multivec_create(&T, n, k, bsr_multivec_precision(X)));
    BSR_ASSERT_OK(bsr_multivec_create(&T2, n, k, bsr_multivec_precision(X)));
    host_permscale(f, f->scale_left, sp, 0, X, T);
    BSR_ASSERT_OK(bsr_trsv_jacobi_host(f->L, 0, N, T, T2));
    BSR_ASSERT_OK(bsr_trsv_jacobi_host(f->U, 1, N, T2, T));
    host_permscale(f, f->scale_right, sp, 1, T, R);
    bsr_multivec_destroy(T);
    bsr_multivec_destroy(T2);
}

/* The sweeps on the ILU(0) factors of A (natural order) in one
 * precision mode, every k and sweep count: device = host reference within
 * rounding, repeatable bit for bit. */
static void check_factors(const char *name, const bsr_matrix *A0, int mode)
{
    bsr_matrix *A = NULL;
    BSR_ASSERT_OK(bsr_matrix_copy(A0, mode == MODE_FLOAT ? BSR_FLOAT : BSR_DOUBLE, &A));
    bsr_ilu *F = bsr_test_ilu0(A, BSR_ORDER_NATURAL);
    bsr_ilu_factors f;
    BSR_ASSERT_OK(bsr_ilu_get_factors(F, &f));
    /* the host reference runs on factors in the device's precision */
    bsr_matrix *Lh = NULL, *Uh = NULL;
    const bsr_precision fp = mode == MODE_DOUBLE ? BSR_DOUBLE : BSR_FLOAT;
    BSR_ASSERT_OK(bsr_matrix_copy(f.L, fp, &Lh));
    BSR_ASSERT_OK(bsr_matrix_copy(f.U, fp, &Uh));
    bsr_ilu_factors fh = f;
    fh.L = Lh;
    fh.U = Uh;
    bsr_gpu_ilu_options go;
    bsr_gpu_ilu_options_default(&go);
    go.factor_float = mode == MODE_MIXED;
    go.jacobi = 1;
    bsr_gpu_ilu *G = NULL;
    BSR_ASSERT_OK(bsr_gpu_ilu_create(ctx, F, &go, &G));
    const int64_t n = (int64_t)bsr_matrix_nbrows(A) * bsr_matrix_block(A);
    const bsr_precision vp = mode == MODE_FLOAT ? BSR_FLOAT : BSR_DOUBLE;
    /* double: rounding only (fused multiply-adds on the device); float and
     * mixed: float factors (and float scalings on the device) */
    const double tol = mode == MODE_DOUBLE ? 1e-12 : 1e-5;
    static const int ks[] = {1, 5, 16};
    for (int N = 1; N <= 3; N++) {
        BSR_ASSERT_OK(bsr_gpu_ilu_set_jacobi(G, N));
        for (int ki = 0; ki < 3; ki++) {
            const int k = ks[ki];
            for (int which = 0; which < 3; which++) {   /* L, U, the whole apply */
                bsr_multivec *X = bsr_test_dev_random(ctx, n, k, vp, seed++), *Y = bsr_test_dev_poisoned(ctx, n, k, vp), *Y2 = bsr_test_dev_poisoned(ctx, n, k, vp),
                             *R = NULL;
                BSR_ASSERT_OK(bsr_multivec_create(&R, n, k, vp));
                if (which < 2) {
                    BSR_ASSERT_OK(bsr_gpu_ilu_trsv(G, which, X, Y));
                    BSR_ASSERT_OK(bsr_gpu_ilu_trsv(G, which, X, Y2));
                    BSR_ASSERT_OK(bsr_trsv_jacobi_host(which ? Uh : Lh, which, N, X, R));
                } else {
                    BSR_ASSERT_OK(bsr_gpu_ilu_apply(G, X, Y));
                    BSR_ASSERT_OK(bsr_gpu_ilu_apply(G, X, Y2));
                    host_apply(&fh, bsr_matrix_precision(f.L), N, X, R);
                }
                BSR_ASSERT_OK(bsr_multivec_download(ctx, Y));
                BSR_ASSERT_OK(bsr_multivec_download(ctx, Y2));
                double e = bsr_test_max_rel_err(Y, R);
                if (!(e <= tol))
                    fprintf(stderr, "\n  %s %s N=%d k=%d %s: error %.3g\n", name, mode_name[mode], N, k,
                            which == 0 ? "L" : which == 1 ? "U" : "apply", e);
                CU_ASSERT(e <= tol);
                CU_ASSERT(bsr_test_same_bits(Y, Y2));   /* deterministic */
                bsr_multivec_destroy(X); bsr_multivec_destroy(Y); bsr_multivec_destroy(Y2); bsr_multivec_destroy(R);
            }
        }
    }
    bsr_gpu_ilu_destroy(G);
    bsr_matrix_destroy(Lh);
    bsr_matrix_destroy(Uh);
    bsr_ilu_destroy(F);
    bsr_matrix_destroy(A);
}

static void check_matrix(const char *name, const bsr_matrix *A)
{
    for (int mode = 0; mode < 3; mode++) check_factors(name, A, mode);
}

static void test_random(void)
{
    if (!bsr_test_have_gpu()) return;
    for (int b = 1; b <= 10; b++) {
        if (bsr_test_quick() && b != 1 && b != 4 && b != 5) continue;
        bsr_matrix *R = bsr_test_random_matrix(200, 200, b, 0, 8, BSR_DOUBLE, 71 + b);
        bsr_matrix *A = bsr_test_dominant(R, 2.0, 0.0);
        char name[64];
        snprintf(name, sizeof name, "random b=%d", b);
        check_matrix(name, A);
        bsr_matrix_destroy(R);
        bsr_matrix_destroy(A);
    }
}

static void test_stencil(void)
{
    if (!bsr_test_have_gpu()) return;
    bsr_problem P;
    BSR_ASSERT_OK(bsr_generate("stencil3d:10:4", BSR_DOUBLE, &P));
    check_matrix("stencil3d:10:4", P.A);
    bsr_problem_free(&P);
}

static void test_real(void)
{
    if (!bsr_test_have_gpu()) return;
    char **files;
    int nf = bsr_test_real_list(&files, 1 << 20), done = 0;
    for (int fi = 0; fi < nf && done < 1; fi++) {
        bsr_matrix *A = NULL;
        if (bsr_mm_read(files[fi], 0, BSR_DOUBLE, &A, NULL) != BSR_OK) continue;
        /* one that ILU(0) factors without regularized pivots on the CPU */
        bsr_ilu_options io;
        bsr_ilu_options_default(&io, BSR_ILU0);
        bsr_order_options_default(&io.order, BSR_ORDER_NATURAL);
            bsr_ilu *F = NULL;
        bsr_ilu_stats st;
        int ok = bsr_ilu_setup(A, &io, &F) == BSR_OK && bsr_ilu_get_stats(F, &st) == BSR_OK && !st.pivots_regularized;
        bsr_ilu_destroy(F);
        if (ok) {
            printf("\n  real %s (%d block rows, b=%d)\n", files[fi], bsr_matrix_nbrows(A), bsr_matrix_block(A));
            check_matrix(files[fi], A);
            done++;
        }
        bsr_matrix_destroy(A);
    }
    bsr_test_free_list(files, nf);
    if (!done) BSR_TEST_SKIP("no real-matrix folder, or none factors without regularization");
}

/* With at least as many sweeps as levels the sweeps are the exact solve. */
static void test_exact_limit(void)
{
    if (!bsr_test_have_gpu()) return;
    bsr_problem P;
    BSR_ASSERT_OK(bsr_generate("stencil3d:4:3", BSR_DOUBLE, &P));   /* 10 levels in natural order */
    bsr_ilu *F = bsr_test_ilu0(P.A, BSR_ORDER_NATURAL);
    bsr_gpu_ilu_options go;
    bsr_gpu_ilu_options_default(&go);
    go.jacobi = 12;
    bsr_gpu_ilu *G = NULL;
    BSR_ASSERT_OK(bsr_gpu_ilu_create(ctx, F, &go, &G));
    const int64_t n = (int64_t)bsr_matrix_nbrows(P.A) * 3;
    bsr_multivec *X = bsr_test_dev_random(ctx, n, 2, BSR_DOUBLE, seed++), *Y = bsr_test_dev_poisoned(ctx, n, 2, BSR_DOUBLE), *R = NULL;
    BSR_ASSERT_OK(bsr_multivec_create(&R, n, 2, BSR_DOUBLE));
    BSR_ASSERT_OK(bsr_gpu_ilu_apply(G, X, Y));
    BSR_ASSERT_OK(bsr_multivec_download(ctx, Y));
    BSR_ASSERT_OK(bsr_ilu_apply(F, X, R));
    CU_ASSERT(bsr_test_max_rel_err(Y, R) <= 1e-12);
    bsr_multivec_destroy(X); bsr_multivec_destroy(Y); bsr_multivec_destroy(R);
    bsr_gpu_ilu_destroy(G);
    bsr_ilu_destroy(F);
    bsr_problem_free(&P);
}

/* The solver option end to end: converges, the CPU backend refuses it, and
 * profile=1 fills the bound's fields (no speed is asserted). */
static void test_solver_option(void)
{
    if (!bsr_test_have_gpu()) return;
    bsr_problem P;
    BSR_ASSERT_OK(bsr_generate("stencil3d:16:4", BSR_DOUBLE, &P));
    const int64_t n = (int64_t)bsr_matrix_nbrows(P.A) * 4;
    bsr_multivec *B = NULL, *X = NULL;
    BSR_ASSERT_OK(bsr_multivec_create(&B, n, 1, BSR_DOUBLE));
    BSR_ASSERT_OK(bsr_multivec_create(&X, n, 1, BSR_DOUBLE));
    BSR_ASSERT_OK(bsr_multivec_fill(B, 1.0));
    const char *cfg[] = {"precond=ilu0,trisolve=jacobi:2,profile=1", "precond=ilu0,profile=1",
                         "precond=ilu2,tau1=0.05,reorder=natural,trisolve=jacobi:3"};
    for (int c = 0; c < 3; c++) {
        bsr_solver *s = NULL;
        bsr_solver_stats st;
        BSR_ASSERT_OK(bsr_multivec_fill(X, 0.0));
        BSR_ASSERT_OK(bsr_solver_create_str(&s, ctx, cfg[c]));
        BSR_ASSERT_OK(bsr_solver_setup(s, P.A));
        BSR_ASSERT_OK(bsr_solver_solve(s, B, X, &st));
        CU_ASSERT(st.col[0].relres <= 1e-8);
        if (c < 2) {
            CU_ASSERT(st.prof_copy_gbs > 0);
            CU_ASSERT(st.prof_iter_bytes > 0 && st.prof_bytes > st.prof_iter_bytes);
            CU_ASSERT(st.prof_krylov_s > 0);
            CU_ASSERT(st.prof_calls[0] >= 2 * st.col[0].iterations && st.prof_s[0] > 0);
        }
        bsr_solver_stats_free(&st);
        bsr_solver_destroy(s);
    }
    bsr_solver *s = NULL;
    BSR_ASSERT_OK(bsr_solver_create_str(&s, NULL, "precond=ilu0,trisolve=jacobi:2"));
    CU_ASSERT_EQUAL(bsr_solver_setup(s, P.A), BSR_ERR_UNSUPPORTED);
    bsr_solver_destroy(s);
    bsr_multivec_destroy(B);
    bsr_multivec_destroy(X);
    bsr_problem_free(&P);
}

/* Columns [j0, j0+kk) of X as a new host multivector (also uploaded). */
static bsr_multivec *columns(const bsr_multivec *X, int j0, int kk)
{
    const int64_t n = bsr_multivec_rows(X);
    const int k = bsr_multivec_cols(X);
    bsr_multivec *C = NULL;
    bsr_multivec_create(&C, n, kk, BSR_DOUBLE);
    const double *x = bsr_multivec_cdata(X);
    double *c = bsr_multivec_data(C);
    for (int64_t r = 0; r < n; r++)
        for (int j = 0; j < kk; j++) c[r * kk + j] = x[r * k + j0 + j];
    bsr_multivec_upload(ctx, C);
    return C;
}

/* More right-hand sides than the triangular solves take (16): the apply runs
 * in chunks of 16 columns, each giving the bits of a solve of its columns
 * alone (exact and Jacobi); a solver with 40 right-hand sides converges. */
static void test_many_rhs(void)
{
    if (!bsr_test_have_gpu()) return;
    bsr_problem P;
    BSR_ASSERT_OK(bsr_generate("stencil3d:8:4", BSR_DOUBLE, &P));
    bsr_ilu *F = bsr_test_ilu0(P.A, BSR_ORDER_ND);
    const int64_t n = (int64_t)bsr_matrix_nbrows(P.A) * 4;
    for (int jac = 0; jac <= 2; jac += 2) {
        bsr_gpu_ilu_options go;
        bsr_gpu_ilu_options_default(&go);
        go.jacobi = jac;
        bsr_gpu_ilu *G = NULL;
        BSR_ASSERT_OK(bsr_gpu_ilu_create(ctx, F, &go, &G));
        const int k = 40;
        bsr_multivec *X = bsr_test_dev_random(ctx, n, k, BSR_DOUBLE, seed++), *Y = bsr_test_dev_poisoned(ctx, n, k, BSR_DOUBLE);
        BSR_ASSERT_OK(bsr_gpu_ilu_apply(G, X, Y));
        BSR_ASSERT_OK(bsr_multivec_download(ctx, Y));
        int same = 1;
        for (int j0 = 0; j0 < k; j0 += 16) {
            const int kk = k - j0 < 16 ? k - j0 : 16;
            bsr_multivec *Xc = columns(X, j0, kk), *Yc = bsr_test_dev_poisoned(ctx, n, kk, BSR_DOUBLE), *Ye = columns(Y, j0, kk);
            BSR_ASSERT_OK(bsr_gpu_ilu_apply(G, Xc, Yc));
            BSR_ASSERT_OK(bsr_multivec_download(ctx, Yc));
            same &= bsr_test_same_bits(Yc, Ye);
            bsr_multivec_destroy(Xc); bsr_multivec_destroy(Yc); bsr_multivec_destroy(Ye);
        }
        CU_ASSERT(same);
        if (!jac) {   /* and the host's exact apply */
            bsr_multivec *R = NULL;
            BSR_ASSERT_OK(bsr_multivec_create(&R, n, k, BSR_DOUBLE));
            BSR_ASSERT_OK(bsr_ilu_apply(F, X, R));
            CU_ASSERT(bsr_test_max_rel_err(Y, R) <= 1e-10);
            bsr_multivec_destroy(R);
        }
        bsr_multivec_destroy(X); bsr_multivec_destroy(Y);
        bsr_gpu_ilu_destroy(G);
    }
    bsr_ilu_destroy(F);
    /* the solver: 40 right-hand sides on the device, each column converged */
    bsr_multivec *B = NULL, *Xs = NULL;
    BSR_ASSERT_OK(bsr_multivec_create(&B, n, 40, BSR_DOUBLE));
    BSR_ASSERT_OK(bsr_multivec_create(&Xs, n, 40, BSR_DOUBLE));
    BSR_ASSERT_OK(bsr_multivec_random(B, 5));
    bsr_solver *s = NULL;
    bsr_solver_stats st;
    BSR_ASSERT_OK(bsr_solver_create_str(&s, ctx, "precond=ilu0,rtol=1e-9"));
    BSR_ASSERT_OK(bsr_solver_setup(s, P.A));
    BSR_ASSERT_OK(bsr_solver_solve(s, B, Xs, &st));
    for (int j = 0; j < 40; j++) CU_ASSERT(st.col[j].relres <= 1e-9);
    bsr_solver_stats_free(&st);
    bsr_solver_destroy(s);
    bsr_multivec_destroy(B); bsr_multivec_destroy(Xs);
    bsr_problem_free(&P);
}

int main(int argc, char **argv)
{
    static const bsr_test tests[] = {
        {"random matrices", test_random},
        {"stencil", test_stencil},
        {"real matrix", test_real},
        {"enough sweeps are exact", test_exact_limit},
        {"solver option and profile", test_solver_option},
        {"more than 16 right-hand sides", test_many_rhs},
        {NULL, NULL}};
    return bsr_test_gpu_main("gpu_jacobi", tests, argc, argv, &ctx);
}
