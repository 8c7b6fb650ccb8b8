/* SPDX-License-Identifier: BSD-3-Clause */
/* GPU SpMM kernels (P11-P14, WARP, cuSPARSE) against the CPU reference, device
 * multivector operations against the host ones, residency and errors.
 * Skips (exit 77) without a CUDA device.  BSR_TEST_QUICK (sanitizer runs):
 * fewer block sizes and vector counts, every kernel still. */
#include "harness.h"
#include "internal.h" /* the GPU SpMM variants */
#include <math.h>
#include <stdlib.h>
#include <string.h>

static bsr_context *ctx;

static const bsr_kernel gpu_kernels[] = {BSR_KERNEL_P11, BSR_KERNEL_P12, BSR_KERNEL_P13, BSR_KERNEL_P14,
                                         BSR_KERNEL_WARP, BSR_KERNEL_ROWJ, BSR_KERNEL_AUTO, BSR_KERNEL_CUSPARSE};
#define NKERN ((int)(sizeof gpu_kernels / sizeof gpu_kernels[0]))
static const int ks[] = {1, 2, 3, 5, 8, 9, 16};
#define NK ((int)(sizeof ks / sizeof ks[0]))
/* alpha/beta combinations; beta == 0 runs on a NaN-poisoned Y */
static const double ab[][2] = {{1, 0}, {-0.7, 0.3}, {2, 1}, {0.5, 0}, {0, -1}};
#define NAB ((int)(sizeof ab / sizeof ab[0]))

/* A copy of A with one extra first row of `len` blocks (the "huge row"). */
static bsr_matrix *with_huge_row(const bsr_matrix *A, int len, uint64_t seed)
{
    int nb = bsr_matrix_nbrows(A), nc = bsr_matrix_nbcols(A), b = bsr_matrix_block(A);
    int nnzb = bsr_matrix_nnzb(A);
    bsr_precision p = bsr_matrix_precision(A);
    size_t es = bsr_precision_size(p), bb = (size_t)b * b;
    if (len > nc) len = nc;
    int *rp = malloc(sizeof(int) * (nb + 2)), *ci = malloc(sizeof(int) * (nnzb + len + 1));
    char *v = malloc((nnzb + len + 1) * bb * es);
    bsr_matrix *H = bsr_test_random_matrix(1, nc, b, len, len, p, seed);
    rp[0] = 0; rp[1] = len;
    memcpy(ci, bsr_matrix_colind(H), sizeof(int) * len);
    memcpy(v, bsr_matrix_values(H), len * bb * es);
    for (int i = 0; i < nb; i++) rp[i + 2] = len + bsr_matrix_rowptr(A)[i + 1];
    memcpy(ci + len, bsr_matrix_colind(A), sizeof(int) * nnzb);
    memcpy(v + len * bb * es, bsr_matrix_values(A), nnzb * bb * es);
    bsr_matrix *M = NULL;
    bsr_status s = bsr_matrix_create(&M, nb + 1, nc, b, rp, ci, v, p, 0);
    CU_ASSERT_EQUAL(s, BSR_OK);
    bsr_matrix_destroy(H);
    free(rp); free(ci); free(v);
    return M;
}

static bsr_multivec *random_mv(int64_t n, int k, bsr_precision p, uint64_t seed)
{
    bsr_multivec *X = NULL;
    bsr_multivec_create(&X, n, k, p);
    bsr_multivec_random(X, seed);
    return X;
}

/* Run kernel on A with k vectors and (alpha, beta) through device-resident
 * operands (code > 0: ROWJ with that J code and `threads`); returns the
 * status and, on success, the error vs the reference in *err and the result
 * in Yout (host, caller frees). */
static bsr_status run_code(bsr_kernel kern, int code, int threads, bsr_matrix *A, int k, double alpha, double beta,
                           uint64_t seed, double *err, bsr_multivec **Yout)
{
    bsr_precision p = bsr_matrix_precision(A);
    int b = bsr_matrix_block(A);
    bsr_multivec *X = random_mv((int64_t)bsr_matrix_nbcols(A) * b, k, p, seed);
    bsr_multivec *Y0 = random_mv((int64_t)bsr_matrix_nbrows(A) * b, k, p, seed + 1);
    bsr_multivec *Y = random_mv((int64_t)bsr_matrix_nbrows(A) * b, k, p, seed + 1);
    if (beta == 0) bsr_multivec_fill(Y, NAN);
    BSR_ASSERT_OK(bsr_matrix_upload(ctx, A));
    BSR_ASSERT_OK(bsr_multivec_upload(ctx, X));
    BSR_ASSERT_OK(bsr_multivec_upload(ctx, Y));
    bsr_status s = code ? bsr_cuda_spmm_rowj(ctx, code, threads, alpha, A, X, beta, Y)
                        : bsr_ctx_spmm(ctx, kern, alpha, A, X, beta, Y);
    if (s == BSR_OK) {
        CU_ASSERT(bsr_multivec_on_device(Y));
        BSR_ASSERT_OK(bsr_multivec_download(ctx, Y));
        *err = bsr_test_spmm_error(alpha, A, X, beta, Y0, Y);
        *Yout = Y;
    } else
        bsr_multivec_destroy(Y);
    bsr_multivec_destroy(X);
    bsr_multivec_destroy(Y0);
    return s;
}

static bsr_status run_kernel(bsr_kernel kern, bsr_matrix *A, int k, double alpha, double beta, uint64_t seed,
                             double *err, bsr_multivec **Yout)
{
    return run_code(kern, 0, 0, A, k, alpha, beta, seed, err, Yout);
}

/* Every kernel, b = 1..10, all k, both precisions, on a matrix with rows of
 * 0..200 blocks plus one huge row, and on one with short rows and empty rows. */
static void test_kernels_vs_reference(void)
{
    if (!bsr_test_have_gpu()) return;
    int fails = 0;
    uint64_t seed = 1000;
    for (int pi = 0; pi < 2; pi++) {
        bsr_precision p = pi ? BSR_FLOAT : BSR_DOUBLE;
        double tol = p == BSR_FLOAT ? 1e-5 : 1e-13;
        for (int b = 1; b <= 10; b++) {
            if (bsr_test_quick() && b != 1 && b != 4 && b != 10) continue;
            bsr_matrix *R = bsr_test_random_matrix(60, 900, b, 0, 200, p, seed++);
            bsr_matrix *wide = with_huge_row(R, 850, seed++);
            bsr_matrix *narrow = bsr_test_random_matrix(400, 300, b, 0, 6, p, seed++);
            bsr_matrix_destroy(R);
            for (int ki = 0; ki < NK; ki++)
                for (int kn = 0; kn < NKERN; kn++)
                    for (int m = 0; m < 2; m++) {
                        if (bsr_test_quick() && ks[ki] != 1 && ks[ki] != 9) continue;
                        bsr_matrix *A = m ? narrow : wide;
                        bsr_kernel kern = gpu_kernels[kn];
                        const double *c = ab[(b + ki + kn + m) % NAB];
                        double err = 0;
                        bsr_multivec *Y = NULL;
                        bsr_status s = run_kernel(kern, A, ks[ki], c[0], c[1], seed++, &err, &Y);
                        if (kern == BSR_KERNEL_P12) {
                            /* P12 must refuse exactly when b*k*maxlen > 1024, naming the row */
                            bsr_matrix_info inf;
                            bsr_matrix_get_info(A, &inf);
                            int kk = ks[ki] < 16 ? ks[ki] : 16;
                            int over = (long long)b * kk * (inf.max_row_len ? inf.max_row_len : 1) > 1024;
                            if (over) {
                                CU_ASSERT_EQUAL(s, BSR_ERR_UNSUPPORTED);
                                CU_ASSERT_PTR_NOT_NULL(strstr(bsr_last_error(), "block row"));
                                if (!m) CU_ASSERT_PTR_NOT_NULL(strstr(bsr_last_error(), "block row 0 has 850 blocks"));
                                continue;
                            }
                        }
                        if (kern == BSR_KERNEL_CUSPARSE && b == 1) {   /* bsrmv/bsrmm: blocks of 2 and more */
                            CU_ASSERT_EQUAL(s, BSR_ERR_UNSUPPORTED);
                            CU_ASSERT_PTR_NOT_NULL(strstr(bsr_last_error(), "1 x 1 blocks"));
                            continue;
                        }
                        if (s != BSR_OK) {
                            printf("\n  %s b=%d k=%d %s %s: %s: %s", bsr_kernel_name(kern), b, ks[ki],
                                   p == BSR_FLOAT ? "float" : "double", m ? "narrow" : "wide",
                                   bsr_status_string(s), bsr_last_error());
                            fails++;
                            continue;
                        }
                        if (!(err <= tol)) {
                            printf("\n  %s b=%d k=%d %s %s alpha=%g beta=%g: error %.3g > %.0e", bsr_kernel_name(kern),
                                   b, ks[ki], p == BSR_FLOAT ? "float" : "double", m ? "narrow" : "wide", c[0], c[1],
                                   err, tol);
                            fails++;
                        }
                        bsr_multivec_destroy(Y);
                    }
            bsr_matrix_destroy(wide);
            bsr_matrix_destroy(narrow);
        }
    }
    CU_ASSERT_EQUAL(fails, 0);
}

/* ROWJ with every vector-group width J and every layout (J codes 1..5,
 * 11..15 on BSR, 21..25, 31..35 on the sliced copy: the AUTO candidates)
 * against the reference, and bit for bit against J = 1: every choice sums an
 * output in the same order, so AUTO's timed choice cannot change results. */
static void test_rowj_widths(void)
{
    if (!bsr_test_have_gpu()) return;
    static const int Js[] = {1, 2, 3, 4, 5, 11, 12, 13, 14, 15, 21, 22, 23, 24, 25, 31, 32, 33, 34, 35};
    const int nj = (int)(sizeof Js / sizeof Js[0]);
    /* b = 2, 4, 8, 10: layout V's 16-byte loads of A (float2/float4, double2) */
    static const int bs[] = {1, 2, 4, 5, 8, 9, 10}, kk[] = {3, 5, 9, 16};
    int fails = 0;
    for (int pi = 0; pi < 2; pi++) {
        const bsr_precision p = pi ? BSR_FLOAT : BSR_DOUBLE;
        const double tol = p == BSR_FLOAT ? 1e-5 : 1e-13;
        for (int bi = 0; bi < (int)(sizeof bs / sizeof bs[0]); bi++) {
            if (bsr_test_quick() && bs[bi] != 1 && bs[bi] != 4 && bs[bi] != 9) continue;
            bsr_matrix *A = bsr_test_random_matrix(500, 400, bs[bi], 0, 12, p, 300 + bi);
            for (int ki = 0; ki < 4; ki++) {
                if (bsr_test_quick() && ki != 0 && ki != 3) continue;   /* k = 3, 16 */
                bsr_multivec *Y1 = NULL;
                for (int ji = 0; ji < nj; ji++) {
                    double err = 0;
                    bsr_multivec *Y = NULL;
                    /* 512 threads: layout V's 128-register build on the sliced copy */
                    const int threads = Js[ji] >= 21 && Js[ji] <= 25 && ki % 2 ? 512 : 0;
                    bsr_status s = run_code(BSR_KERNEL_ROWJ, Js[ji], threads, A, kk[ki], 0.9, 0, 11, &err, &Y);
                    if (s != BSR_OK || !(err <= tol)) {
                        printf("\n  rowj J=%d b=%d k=%d %s: %s, error %.3g", Js[ji], bs[bi], kk[ki],
                               pi ? "float" : "double", bsr_status_string(s), err);
                        fails++;
                    }
                    if (s != BSR_OK) continue;
                    if (!Y1) Y1 = Y;
                    else {
                        const size_t bytes = (size_t)bsr_multivec_rows(Y) * kk[ki] * bsr_precision_size(p);
                        if (memcmp(bsr_multivec_data(Y1), bsr_multivec_data(Y), bytes)) {
                            printf("\n  rowj J=%d b=%d k=%d %s: not bitwise J = 1's", Js[ji], bs[bi], kk[ki],
                                   pi ? "float" : "double");
                            fails++;
                        }
                        bsr_multivec_destroy(Y);
                    }
                }
                bsr_multivec_destroy(Y1);
            }
            bsr_matrix_destroy(A);
        }
    }
    CU_ASSERT_EQUAL(fails, 0);
}

/* The sliced copy follows A's values: after bsr_matrix_set_values and a new
 * upload, every sliced kernel (and AUTO, which picked its kernel on the old
 * values) computes with the new ones; 512 threads a block (layout V's
 * 128-register build) included.  Rows of 0..40 blocks: slices of uneven
 * length, empty rows. */
static void test_sliced_refresh(void)
{
    if (!bsr_test_have_gpu()) return;
    static const int Js[] = {21, 22, 25, 31, 33, 0}; /* 0: AUTO */
    int fails = 0;
    for (int pi = 0; pi < 2; pi++) {
        const bsr_precision p = pi ? BSR_FLOAT : BSR_DOUBLE;
        const double tol = p == BSR_FLOAT ? 1e-5 : 1e-13;
        for (int b = 1; b <= 5; b += 2) {
            bsr_matrix *A = bsr_test_random_matrix(300, 260, b, 0, 40, p, 900 + b);
            /* other values on the same pattern: v -> 0.25 - 2 v */
            const size_t nv = (size_t)bsr_matrix_nnzb(A) * b * b;
            void *v2 = malloc(nv * bsr_precision_size(p) + 1);
            for (size_t q = 0; q < nv; q++)
                if (p == BSR_DOUBLE) ((double *)v2)[q] = 0.25 - 2 * ((const double *)bsr_matrix_values(A))[q];
                else ((float *)v2)[q] = 0.25f - 2 * ((const float *)bsr_matrix_values(A))[q];
            for (int ji = 0; ji < 6; ji++)
                for (int t = 0; t < 2; t++) {
                    for (int round = 0; round < 2; round++) {
                        if (round) BSR_ASSERT_OK(bsr_matrix_set_values(A, v2, 0));
                        double err = 0;
                        bsr_multivec *Y = NULL;
                        bsr_status s = run_code(BSR_KERNEL_AUTO, Js[ji], t ? 512 : 64, A, 6, 1.3, round ? -0.5 : 0,
                                                40 + round, &err, &Y);
                        if (s != BSR_OK || !(err <= tol)) {
                            printf("\n  sliced J=%d T=%d b=%d %s round %d: %s, error %.3g", Js[ji], t ? 512 : 64, b,
                                   pi ? "float" : "double", round, bsr_status_string(s), err);
                            fails++;
                        }
                        if (s == BSR_OK) bsr_multivec_destroy(Y);
                        if (Js[ji] && bsr_cuda_matrix_sliced(A) != 1) {
                            printf("\n  sliced J=%d b=%d round %d: the sliced copy is not current", Js[ji], b, round);
                            fails++;
                        }
                    }
                    /* back to the first values for the next kernel */
                    bsr_matrix_destroy(A);
                    A = bsr_test_random_matrix(300, 260, b, 0, 40, p, 900 + b);
                }
            bsr_matrix_destroy(A);
            free(v2);
        }
    }
    CU_ASSERT_EQUAL(fails, 0);
}

/* A matrix whose slices would pad past twice its blocks plus 32K entries
 * (one row of 4000 blocks) keeps no sliced copy; the sliced J codes then run the BSR kernel
 * of the same mapping, bit for bit what the sliced copy gives on the rest. */
static void test_sliced_declined(void)
{
    if (!bsr_test_have_gpu()) return;
    for (int b = 2; b <= 5; b += 3) {
        bsr_matrix *R = bsr_test_random_matrix(60, 5000, b, 0, 12, BSR_DOUBLE, 70 + b);
        bsr_matrix *H = with_huge_row(R, 4000, 71 + b);
        double e1 = 1, e2 = 1;
        bsr_multivec *Y1 = NULL, *Y2 = NULL;
        BSR_ASSERT_OK(run_code(BSR_KERNEL_ROWJ, 22, 0, H, 5, 1.0, 0, 5, &e1, &Y1));
        CU_ASSERT_EQUAL(bsr_cuda_matrix_sliced(H), -1);
        CU_ASSERT(e1 <= 1e-13);
        BSR_ASSERT_OK(run_code(BSR_KERNEL_ROWJ, 12, 0, H, 5, 1.0, 0, 5, &e2, &Y2));
        if (Y1 && Y2) CU_ASSERT(!memcmp(bsr_multivec_data(Y1), bsr_multivec_data(Y2), sizeof(double) * bsr_multivec_rows(Y1) * 5));
        bsr_multivec_destroy(Y1); bsr_multivec_destroy(Y2);
        /* without the long row the copy is kept */
        BSR_ASSERT_OK(run_code(BSR_KERNEL_ROWJ, 22, 0, R, 5, 1.0, 0, 5, &e1, &Y1));
        CU_ASSERT_EQUAL(bsr_cuda_matrix_sliced(R), 1);
        CU_ASSERT(e1 <= 1e-13);
        bsr_multivec_destroy(Y1);
        bsr_matrix_destroy(R); bsr_matrix_destroy(H);
    }
}

/* Two runs on the same inputs give the same bits (no atomics, fixed orders). */
static void test_determinism(void)
{
    if (!bsr_test_have_gpu()) return;
    for (int b = 3; b <= 9; b += 3)
        for (int kn = 0; kn < NKERN; kn++) {
            bsr_kernel kern = gpu_kernels[kn];
            if (!bsr_kernel_deterministic(kern) || kern == BSR_KERNEL_P12) continue;
            if (bsr_test_quick() && b != 3) continue;
            bsr_matrix *A = bsr_test_random_matrix(3000, 3000, b, 0, 40, BSR_DOUBLE, 77 + b);
            double e1, e2;
            bsr_multivec *Y1 = NULL, *Y2 = NULL;
            BSR_ASSERT_OK(run_kernel(kern, A, 9, 1.3, 0.7, 5, &e1, &Y1));
            BSR_ASSERT_OK(run_kernel(kern, A, 9, 1.3, 0.7, 5, &e2, &Y2));
            size_t bytes = (size_t)bsr_multivec_rows(Y1) * 9 * sizeof(double);
            CU_ASSERT_EQUAL(memcmp(bsr_multivec_data(Y1), bsr_multivec_data(Y2), bytes), 0);
            bsr_multivec_destroy(Y1);
            bsr_multivec_destroy(Y2);
            bsr_matrix_destroy(A);
        }
}

/* A few real CFD matrices, when the folder is present. */
static void test_real_matrices(void)
{
    if (!bsr_test_have_gpu()) return;
    char **files;
    int nf = bsr_test_real_list(&files, 1 << 20), done = 0;
    for (int fi = 0; fi < nf && done < 3; fi++) {
        const char *path = files[fi];
        for (int pi = 0; pi < 2; pi++) {
            bsr_matrix *A = NULL;
            if (bsr_mm_read(path, 0, pi ? BSR_FLOAT : BSR_DOUBLE, &A, NULL) != BSR_OK) break;
            if (bsr_matrix_block(A) > 10 || bsr_matrix_nbrows(A) != bsr_matrix_nbcols(A)) { bsr_matrix_destroy(A); break; }
            for (int kn = 0; kn < NKERN; kn++)
                for (int k = 1; k <= 9; k += 4) {
                    double err = 0;
                    bsr_multivec *Y = NULL;
                    bsr_status s = run_kernel(gpu_kernels[kn], A, k, 1, 0, 3, &err, &Y);
                    if (s == BSR_ERR_UNSUPPORTED) continue; /* P12 on long rows, cuSPARSE at b = 1 */
                    CU_ASSERT_EQUAL(s, BSR_OK);
                    if (s != BSR_OK) { printf("\n  %s %s: %s", path, bsr_kernel_name(gpu_kernels[kn]), bsr_last_error()); continue; }
                    if (!(err <= (pi ? 1e-5 : 1e-13)))
                        printf("\n  %s %s k=%d: error %.3g", path, bsr_kernel_name(gpu_kernels[kn]), k, err);
                    CU_ASSERT(err <= (pi ? 1e-5 : 1e-13));
                    bsr_multivec_destroy(Y);
                }
            bsr_matrix_destroy(A);
        }
        done++;
    }
    bsr_test_free_list(files, nf);
}

/* Host operands go through the convenience path and come back on the host. */
static void test_host_convenience(void)
{
    if (!bsr_test_have_gpu()) return;
    bsr_matrix *A = bsr_test_random_matrix(500, 400, 4, 0, 12, BSR_DOUBLE, 9);
    bsr_multivec *X = random_mv(1600, 5, BSR_DOUBLE, 1), *Y0 = random_mv(2000, 5, BSR_DOUBLE, 2);
    bsr_multivec *Y = random_mv(2000, 5, BSR_DOUBLE, 2);
    BSR_ASSERT_OK(bsr_ctx_spmm(ctx, BSR_KERNEL_AUTO, 0.5, A, X, 2.0, Y));
    CU_ASSERT(bsr_multivec_data(Y) != NULL);
    CU_ASSERT(bsr_test_spmm_error(0.5, A, X, 2.0, Y0, Y) <= 1e-13);
    /* new values with the same pattern: the mirror is refreshed */
    size_t nv = (size_t)bsr_matrix_nnzb(A) * 16;
    double *v = malloc(nv * sizeof(double));
    for (size_t i = 0; i < nv; i++) v[i] = ((const double *)bsr_matrix_values(A))[i] * -3.0 + 0.25;
    BSR_ASSERT_OK(bsr_matrix_set_values(A, v, BSR_STORED_ORDER)); /* v follows A's own order */
    CU_ASSERT(!bsr_matrix_on_device(A));
    BSR_ASSERT_OK(bsr_matrix_upload(ctx, A));
    CU_ASSERT(bsr_matrix_on_device(A));
    bsr_multivec_fill(Y, NAN);
    BSR_ASSERT_OK(bsr_ctx_spmm(ctx, BSR_KERNEL_WARP, 1.0, A, X, 0.0, Y));
    CU_ASSERT(bsr_test_spmm_error(1.0, A, X, 0.0, Y0, Y) <= 1e-13);
    free(v);
    bsr_multivec_destroy(X); bsr_multivec_destroy(Y); bsr_multivec_destroy(Y0);
    bsr_matrix_destroy(A);
}

static double maxdiff(bsr_multivec *A, bsr_multivec *B)
{
    int64_t m = bsr_multivec_rows(A) * bsr_multivec_cols(A);
    double w = 0;
    int dA = bsr_multivec_precision(A) == BSR_DOUBLE, dB = bsr_multivec_precision(B) == BSR_DOUBLE;
    for (int64_t e = 0; e < m; e++) {
        double a = dA ? ((double *)bsr_multivec_data(A))[e] : ((float *)bsr_multivec_data(A))[e];
        double b = dB ? ((double *)bsr_multivec_data(B))[e] : ((float *)bsr_multivec_data(B))[e];
        double d = fabs(a - b);
        if (!(d <= w)) w = isnan(d) ? INFINITY : d;
    }
    return w;
}

/* Device multivector ops agree with the host ones; masks freeze columns. */
static void test_device_multivec_ops(void)
{
    if (!bsr_test_have_gpu()) return;
    bsr_context *cpu;
    BSR_ASSERT_OK(bsr_context_create(&cpu, BSR_BACKEND_CPU, 0, NULL));
    static const int kk[] = {1, 3, 16};
    for (int pi = 0; pi < 2; pi++)
        for (int q = 0; q < 3; q++) {
            bsr_precision p = pi ? BSR_FLOAT : BSR_DOUBLE;
            double tol = pi ? 1e-6 : 1e-15;
            int k = kk[q];
            int64_t n = 100003;
            double a[16], b[16], c[16], out_h[16], out_d[16], out_d2[16];
            int done[16];
            for (int j = 0; j < k; j++) { a[j] = 0.5 + j; b[j] = -1.25 + 0.1 * j; c[j] = j % 3 ? 0.75 : 0; done[j] = j % 4 == 2; }
            bsr_multivec *Xh = random_mv(n, k, p, 11), *Yh = random_mv(n, k, p, 12), *Zh = random_mv(n, k, p, 13);
            bsr_multivec *Xd = random_mv(n, k, p, 11), *Yd = random_mv(n, k, p, 12), *Zd = random_mv(n, k, p, 13);
            BSR_ASSERT_OK(bsr_multivec_upload(ctx, Xd));
            BSR_ASSERT_OK(bsr_multivec_upload(ctx, Yd));
            /* c[j] == 0: Z is write-only, so poison it on both sides */
            bsr_multivec_fill(Zh, NAN);
            bsr_multivec_fill(Zd, NAN);
            BSR_ASSERT_OK(bsr_multivec_upload(ctx, Zd));
            for (int j = 0; j < k; j++) c[j] = 0;
            BSR_ASSERT_OK(bsr_ctx_axpbypcz(cpu, a, Xh, b, Yh, c, Zh, NULL));
            BSR_ASSERT_OK(bsr_ctx_axpbypcz(ctx, a, Xd, b, Yd, c, Zd, NULL));
            for (int j = 0; j < k; j++) c[j] = j % 3 ? 0.75 : -0.5;
            BSR_ASSERT_OK(bsr_ctx_axpbypcz(cpu, a, Xh, b, Yh, c, Zh, done));
            BSR_ASSERT_OK(bsr_ctx_axpbypcz(ctx, a, Xd, b, Yd, c, Zd, done));
            BSR_ASSERT_OK(bsr_ctx_axpby(cpu, a, Xh, b, Yh, done));
            BSR_ASSERT_OK(bsr_ctx_axpby(ctx, a, Xd, b, Yd, done));
            BSR_ASSERT_OK(bsr_ctx_axpy(cpu, Yh, c, Zh));
            BSR_ASSERT_OK(bsr_ctx_axpy(ctx, Yd, c, Zd));
            BSR_ASSERT_OK(bsr_ctx_scale(cpu, Xh, b));
            BSR_ASSERT_OK(bsr_ctx_scale(ctx, Xd, b));
            /* plain core calls on device-only vectors run on the device */
            CU_ASSERT(bsr_multivec_on_device(Xd));
            BSR_ASSERT_OK(bsr_ctx_dot(ctx, Xd, Yd, out_d));
            BSR_ASSERT_OK(bsr_ctx_dot(ctx, Xd, Yd, out_d2));
            double nz_d[16], nz_h[16];
            BSR_ASSERT_OK(bsr_multivec_norm2(Zd, nz_d));
            BSR_ASSERT_OK(bsr_multivec_download(ctx, Xd));
            BSR_ASSERT_OK(bsr_multivec_download(ctx, Yd));
            BSR_ASSERT_OK(bsr_multivec_download(ctx, Zd));
            CU_ASSERT(maxdiff(Xh, Xd) <= tol * 4);
            CU_ASSERT(maxdiff(Yh, Yd) <= tol * 16);
            CU_ASSERT(maxdiff(Zh, Zd) <= tol * 16);
            /* reductions against the host's on the same (downloaded) values */
            BSR_ASSERT_OK(bsr_ctx_dot(cpu, Xd, Yd, out_h));
            BSR_ASSERT_OK(bsr_ctx_norm2(cpu, Zd, nz_h));
            for (int j = 0; j < k; j++) {
                CU_ASSERT(fabs(out_h[j] - out_d[j]) <= 1e-13 * (fabs(out_h[j]) + n));
                CU_ASSERT(memcmp(&out_d[j], &out_d2[j], sizeof(double)) == 0); /* deterministic */
                CU_ASSERT(fabs(nz_h[j] - nz_d[j]) <= 1e-13 * nz_h[j]);
            }
            /* precision-converting copy and fill on a device-only vector */
            bsr_multivec *W = NULL;
            BSR_ASSERT_OK(bsr_multivec_create_device(ctx, &W, n, k, pi ? BSR_DOUBLE : BSR_FLOAT));
            CU_ASSERT_PTR_NULL(bsr_multivec_data(W));
            BSR_ASSERT_OK(bsr_ctx_copy(ctx, W, Xd));
            BSR_ASSERT_OK(bsr_multivec_download(ctx, W));
            CU_ASSERT(maxdiff(W, Xh) <= (tol > 1e-7 ? tol * 4 : 1e-6));
            BSR_ASSERT_OK(bsr_multivec_upload(ctx, W));
            BSR_ASSERT_OK(bsr_ctx_fill(ctx, W, 2.5));
            BSR_ASSERT_OK(bsr_multivec_download(ctx, W));
            CU_ASSERT_EQUAL(pi ? ((double *)bsr_multivec_data(W))[n * k - 1] : ((float *)bsr_multivec_data(W))[n * k - 1], 2.5);
            bsr_multivec_destroy(W);
            bsr_multivec_destroy(Xh); bsr_multivec_destroy(Yh); bsr_multivec_destroy(Zh);
            bsr_multivec_destroy(Xd); bsr_multivec_destroy(Yd); bsr_multivec_destroy(Zd);
        }
    bsr_context_destroy(cpu);
}

/* Upload then download gives the same bits; a device-only copy round-trips too. */
static void test_roundtrip(void)
{
    if (!bsr_test_have_gpu()) return;
    bsr_multivec *X = random_mv(12345, 7, BSR_DOUBLE, 3), *Y = NULL;
    BSR_ASSERT_OK(bsr_multivec_upload(ctx, X));
    BSR_ASSERT_OK(bsr_multivec_create_device(ctx, &Y, 12345, 7, BSR_DOUBLE));
    BSR_ASSERT_OK(bsr_ctx_copy(ctx, Y, X));
    BSR_ASSERT_OK(bsr_multivec_download(ctx, Y));
    CU_ASSERT_EQUAL(memcmp(bsr_multivec_data(X), bsr_multivec_data(Y), 12345 * 7 * sizeof(double)), 0);
    /* a host write makes the host copy the current one again */
    bsr_multivec_fill(Y, 1.0);
    CU_ASSERT(!bsr_multivec_on_device(Y));
    bsr_multivec_destroy(X);
    bsr_multivec_destroy(Y);
}

/* Bad sizes, precisions and residency give errors; the objects stay usable. */
static void test_errors(void)
{
    if (!bsr_test_have_gpu()) return;
    bsr_matrix *A = bsr_test_random_matrix(50, 40, 3, 1, 5, BSR_DOUBLE, 4);
    bsr_multivec *X = random_mv(120, 2, BSR_DOUBLE, 1), *Y = random_mv(150, 2, BSR_DOUBLE, 2);
    bsr_multivec *Xbad = random_mv(121, 2, BSR_DOUBLE, 1), *Xf = random_mv(120, 2, BSR_FLOAT, 1);
    CU_ASSERT_EQUAL(bsr_ctx_spmm(ctx, BSR_KERNEL_WARP, 1, A, Xbad, 0, Y), BSR_ERR_SIZE);
    CU_ASSERT_EQUAL(bsr_ctx_spmm(ctx, BSR_KERNEL_WARP, 1, A, Xf, 0, Y), BSR_ERR_ARG);
    CU_ASSERT_EQUAL(bsr_ctx_spmm(ctx, BSR_KERNEL_S1, 1, A, X, 0, Y), BSR_ERR_ARG);
    CU_ASSERT_EQUAL(bsr_ctx_dot(ctx, X, Y, (double[2]){0}), BSR_ERR_SIZE);
    CU_ASSERT_EQUAL(bsr_ctx_norm2(ctx, Xf, (double[2]){0}), BSR_ERR_ARG); /* host-only on a CUDA context */
    /* a device allocation larger than the device (not under the sanitizer,
     * BSR_TEST_QUICK, whose memcheck reports the refused cudaMalloc itself) */
    if (!bsr_test_quick()) {
        bsr_multivec *Big = NULL;
        bsr_status s = bsr_multivec_create_device(ctx, &Big, (int64_t)1 << 42, 16, BSR_DOUBLE);
        CU_ASSERT_EQUAL(s, BSR_ERR_NOMEM);
        CU_ASSERT_PTR_NULL(Big);
        CU_ASSERT(strlen(bsr_last_error()) > 0);
    }
    /* everything still works after the failures */
    BSR_ASSERT_OK(bsr_ctx_spmm(ctx, BSR_KERNEL_WARP, 1, A, X, 0, Y));
    bsr_multivec *Y0 = random_mv(150, 2, BSR_DOUBLE, 2);
    CU_ASSERT(bsr_test_spmm_error(1, A, X, 0, Y0, Y) <= 1e-13);
    bsr_multivec_destroy(Y0);
    bsr_context *bad = NULL;
    CU_ASSERT_EQUAL(bsr_context_create(&bad, BSR_BACKEND_CUDA, 999, NULL), BSR_ERR_NODEVICE);
    CU_ASSERT_PTR_NULL(bad);
    bsr_multivec_destroy(X); bsr_multivec_destroy(Y); bsr_multivec_destroy(Xbad); bsr_multivec_destroy(Xf);
    bsr_matrix_destroy(A);
}

int main(int argc, char **argv)
{
    static const bsr_test tests[] = {
        {"kernels vs CPU reference (b 1..10, k, float/double, alpha/beta, P12 refusal)", test_kernels_vs_reference},
        {"ROWJ vector-group widths: reference and bitwise equal", test_rowj_widths},
        {"sliced copy follows new values (set_values + upload)", test_sliced_refresh},
        {"sliced copy declined for a very long row: BSR kernels, same bits", test_sliced_declined},
        {"bitwise determinism run to run", test_determinism},
        {"real matrices", test_real_matrices},
        {"host operands: convenience path, set_values refresh", test_host_convenience},
        {"device multivector ops vs host", test_device_multivec_ops},
        {"upload/download round trip", test_roundtrip},
        {"errors leave objects usable", test_errors},
        {NULL, NULL}};
    return bsr_test_gpu_main("gpu_spmm", tests, argc, argv, &ctx);
}
