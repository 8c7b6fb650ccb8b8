/* SPDX-License-Identifier: BSD-3-Clause */
/* Device multivector reductions and updates the Krylov loop uses: the fused dot of up to three pairs (one sweep, one
 * launch, each pair the bits of its lone dot) and
 * the masked update against CPU references, double and float, k = 1..16,
 * sizes that exercise the 32-bit column index and several grid shapes;
 * reductions bit-identical run to run; norms of columns whose squares leave
 * the double range; the Gram matrix and X R^{-1} of the two-level
 * preconditioner, the host's bits.  Skips without a GPU. */
#include "harness.h"
#include "internal.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Device copy of the host multivector H (same precision), or NULL. */
static bsr_multivec *to_dev(bsr_context *ctx, const bsr_multivec *H)
{
    bsr_multivec *D = NULL;
    if (bsr_multivec_create_device(ctx, &D, H->n, H->k, H->prec)) return NULL;
    if (bsr_cuda_multivec_xfer(ctx, D, H->data, 1)) { bsr_multivec_destroy(D); return NULL; }
    return D;
}

/* max_j |a_j - r_j| / max(|r_j|, scale_j): relative error of per-column sums. */
static double col_err(int k, const double *a, const double *r, const double *scale)
{
    double e = 0;
    for (int j = 0; j < k; j++) {
        double d = fabs(a[j] - r[j]) / fmax(fabs(r[j]), scale[j]);
        if (!(d <= e)) e = d;   /* NaN propagates */
    }
    return e;
}

/* dotp of three pairs: (x0, x1), (x2, x2), (x1, x2). */
static bsr_status dot3(bsr_context *ctx, bsr_multivec *const *D, double *o1, double *o2, double *o3)
{
    const bsr_multivec *X[3] = {D[0], D[2], D[1]}, *Y[3] = {D[1], D[2], D[2]};
    double *const out[3] = {o1, o2, o3};
    return bsr_cuda_mv_dotp(ctx, 3, X, Y, out);
}

static void test_dotp(void)
{
    if (!bsr_test_have_gpu()) return;
    bsr_context *ctx = NULL;
    BSR_ASSERT_OK(bsr_context_create(&ctx, BSR_BACKEND_CUDA, 0, NULL));
    if (!ctx) return;
    static const int ks[] = {1, 2, 3, 4, 7, 9, 16};
    static const int64_t ns[] = {1, 100, 4099, 300007};
    for (int p = 0; p < 2; p++)
        for (int ik = 0; ik < 7; ik++)
            for (int in = 0; in < 4; in++) {
                bsr_precision prec = p ? BSR_FLOAT : BSR_DOUBLE;
                int k = ks[ik];
                int64_t n = ns[in];
                bsr_multivec *H[3] = {0}, *D[3] = {0};
                for (int v = 0; v < 3; v++) {
                    BSR_ASSERT_OK(bsr_multivec_create(&H[v], n, k, prec));
                    BSR_ASSERT_OK(bsr_multivec_random(H[v], 100 + v + 7 * k));
                    D[v] = to_dev(ctx, H[v]);
                    CU_ASSERT_PTR_NOT_NULL_FATAL(D[v]);
                }
                double r1[16], r2[16], r3[16], a1[16], a2[16], a3[16], b1[16], b2[16], b3[16], s1[16], s2[16],
                    s3[16];
                BSR_ASSERT_OK(bsr_multivec_dot(H[0], H[1], r1));
                BSR_ASSERT_OK(bsr_multivec_dot(H[2], H[2], r2));
                BSR_ASSERT_OK(bsr_multivec_dot(H[1], H[2], r3));
                /* scale: sum |x||y| (the size cancellation can reach) */
                for (int j = 0; j < k; j++) {
                    s1[j] = s2[j] = s3[j] = 0;
                    for (int64_t i = 0; i < n; i++) {
                        int64_t e = i * k + j;
                        double x = prec ? ((float *)H[0]->data)[e] : ((double *)H[0]->data)[e];
                        double y = prec ? ((float *)H[1]->data)[e] : ((double *)H[1]->data)[e];
                        double z = prec ? ((float *)H[2]->data)[e] : ((double *)H[2]->data)[e];
                        s1[j] += fabs(x * y);
                        s2[j] += z * z;
                        s3[j] += fabs(y * z);
                    }
                }
                for (int j = 0; j < 16; j++) a1[j] = a2[j] = a3[j] = b1[j] = b2[j] = b3[j] = NAN;   /* poisoned */
                BSR_ASSERT_OK(dot3(ctx, D, a1, a2, a3));
                BSR_ASSERT_OK(dot3(ctx, D, b1, b2, b3));
                CU_ASSERT(col_err(k, a1, r1, s1) < 1e-13);
                CU_ASSERT(col_err(k, a2, r2, s2) < 1e-13);
                CU_ASSERT(col_err(k, a3, r3, s3) < 1e-13);
                CU_ASSERT(!memcmp(a1, b1, sizeof(double) * k) && !memcmp(a2, b2, sizeof(double) * k) &&
                          !memcmp(a3, b3, sizeof(double) * k));
                for (int j = k; j < 16; j++) CU_ASSERT(isnan(a1[j]) && isnan(a2[j]) && isnan(a3[j]));   /* nothing past k */
                /* each pair the bits of its lone dot, and of the same pair swept with one other */
                double c[3][16];
                BSR_ASSERT_OK(bsr_ctx_dot(ctx, D[0], D[1], c[0]));
                BSR_ASSERT_OK(bsr_ctx_dot(ctx, D[2], D[2], c[1]));
                BSR_ASSERT_OK(bsr_ctx_dot(ctx, D[1], D[2], c[2]));
                CU_ASSERT(!memcmp(a1, c[0], sizeof(double) * k) && !memcmp(a2, c[1], sizeof(double) * k) &&
                          !memcmp(a3, c[2], sizeof(double) * k));
                {
                    const bsr_multivec *X2[2] = {D[2], D[1]}, *Y2[2] = {D[2], D[2]};
                    double *const o2[2] = {b2, b3};
                    BSR_ASSERT_OK(bsr_cuda_mv_dotp(ctx, 2, X2, Y2, o2));
                    CU_ASSERT(!memcmp(a2, b2, sizeof(double) * k) && !memcmp(a3, b3, sizeof(double) * k));
                }
                for (int v = 0; v < 3; v++) { bsr_multivec_destroy(H[v]); bsr_multivec_destroy(D[v]); }
            }
    /* A CUDA call failing at each point of a dotp (the launch reported
     * failed after it ran, the transfer refused, ...): an error, and the next
     * call still gives the same bits (the launch's block counter is reset by
     * the block that finishes last, not left counting). */
    {
        bsr_multivec *H = NULL, *D = NULL;
        BSR_ASSERT_OK(bsr_multivec_create(&H, 300007, 3, BSR_DOUBLE));
        BSR_ASSERT_OK(bsr_multivec_random(H, 11));
        D = to_dev(ctx, H);
        CU_ASSERT_PTR_NOT_NULL_FATAL(D);
        double r1[3], r2[3], r3[3], a1[3], a2[3], a3[3];
        bsr_multivec *const DD[3] = {D, D, D};
        BSR_ASSERT_OK(dot3(ctx, DD, r1, r2, r3));
        int failed = 0;
        for (long f = 1; f <= 8; f++) {
            bsr_fault_arm(BSR_FAULT_CUDA_CALL, f);
            bsr_status st = dot3(ctx, DD, a1, a2, a3);
            bsr_fault_arm(BSR_FAULT_CUDA_CALL, 0);
            failed += st == BSR_ERR_CUDA;
            CU_ASSERT(st == BSR_OK || st == BSR_ERR_CUDA);
            BSR_ASSERT_OK(dot3(ctx, DD, a1, a2, a3));
            CU_ASSERT(!memcmp(a1, r1, sizeof r1) && !memcmp(a2, r2, sizeof r2) && !memcmp(a3, r3, sizeof r3));
        }
        CU_ASSERT(failed >= 2);   /* at least the launch and the transfer */
        bsr_multivec_destroy(D);
        bsr_multivec_destroy(H);
    }
    /* shape mismatch is an error, not garbage */
    bsr_multivec *X = NULL, *Y = NULL;
    BSR_ASSERT_OK(bsr_multivec_create_device(ctx, &X, 100, 2, BSR_DOUBLE));
    BSR_ASSERT_OK(bsr_multivec_create_device(ctx, &Y, 100, 3, BSR_DOUBLE));
    bsr_ctx_fill(ctx, X, 1.0);
    bsr_ctx_fill(ctx, Y, 1.0);
    double o1[4], o2[4];
    {
        const bsr_multivec *Xs[2] = {X, X}, *Ys[2] = {X, Y};
        double *const os[2] = {o1, o2};
        CU_ASSERT_EQUAL(bsr_cuda_mv_dotp(ctx, 2, Xs, Ys, os), BSR_ERR_SIZE);
        CU_ASSERT_EQUAL(bsr_cuda_mv_dotp(ctx, 4, Xs, Ys, os), BSR_ERR_ARG);
    }
    bsr_multivec_destroy(X); bsr_multivec_destroy(Y);
    bsr_context_destroy(ctx);
}

/* Masked Z = a X + b Y (c = 0, Z write-only) against the CPU formula (to an
 * FMA's rounding); the frozen columns keep their (poisoned) values bit for
 * bit, and with every column frozen all of Z does. */
static void test_update_mask(void)
{
    if (!bsr_test_have_gpu()) return;
    bsr_context *ctx = NULL;
    BSR_ASSERT_OK(bsr_context_create(&ctx, BSR_BACKEND_CUDA, 0, NULL));
    if (!ctx) return;
    static const int ks[] = {1, 3, 9, 16};
    for (int ik = 0; ik < 4; ik++) {
        int k = ks[ik];
        int64_t n = 200003;
        bsr_multivec *H[3] = {0}, *D[3] = {0};
        for (int v = 0; v < 3; v++) {
            BSR_ASSERT_OK(bsr_multivec_create(&H[v], n, k, BSR_DOUBLE));
            BSR_ASSERT_OK(bsr_multivec_random(H[v], 5 + v));
            if (v == 2) BSR_ASSERT_OK(bsr_multivec_fill(H[v], NAN));
            D[v] = to_dev(ctx, H[v]);
            CU_ASSERT_PTR_NOT_NULL_FATAL(D[v]);
        }
        double a[16], b[16], c[16];
        int done[16];
        for (int j = 0; j < k; j++) { a[j] = 1.0; b[j] = -0.25 * (j + 1); c[j] = 0; done[j] = j % 3 == 1; }
        BSR_ASSERT_OK(bsr_ctx_axpbypcz(ctx, a, D[0], b, D[1], c, D[2], done));
        double *z = malloc(sizeof(double) * (size_t)n * k);
        BSR_ASSERT_OK(bsr_cuda_multivec_xfer(ctx, D[2], z, 0));
        const double *x = H[0]->data, *y = H[1]->data;
        int bad = 0;
        for (int64_t e = 0; e < n * k; e++) {
            int j = (int)(e % k);
            if (done[j]) bad += !isnan(z[e]);
            else bad += !(fabs(z[e] - (a[j] * x[e] + b[j] * y[e])) <= 1e-15 * (fabs(a[j] * x[e]) + fabs(b[j] * y[e])));
        }
        CU_ASSERT_EQUAL(bad, 0);
        /* every column frozen: Z keeps its values bit for bit */
        for (int j = 0; j < k; j++) done[j] = 1;
        double *z2 = malloc(sizeof(double) * (size_t)n * k);
        CU_ASSERT_PTR_NOT_NULL_FATAL(z2);
        BSR_ASSERT_OK(bsr_ctx_axpbypcz(ctx, a, D[0], b, D[1], c, D[2], done));
        BSR_ASSERT_OK(bsr_cuda_multivec_xfer(ctx, D[2], z2, 0));
        CU_ASSERT(!memcmp(z, z2, sizeof(double) * (size_t)n * k));
        free(z2);
        free(z);
        for (int v = 0; v < 3; v++) { bsr_multivec_destroy(H[v]); bsr_multivec_destroy(D[v]); }
    }
    bsr_context_destroy(ctx);
}

/* Host <-> device transfers, small (plain copies) and large (through the
 * pinned staging buffers, 16 MiB chunks): byte-exact both ways for sizes
 * below, at and across chunk boundaries, through both the multivector calls
 * and the direct transfers the solver uses; a matrix whose values exceed a
 * chunk gives the same SpMM as the CPU. */
static void test_transfers(void)
{
    if (!bsr_test_have_gpu()) return;
    bsr_context *ctx = NULL;
    BSR_ASSERT_OK(bsr_context_create(&ctx, BSR_BACKEND_CUDA, 0, NULL));
    if (!ctx) return;
    static const int64_t ns[] = {1000, (1 << 19) - 1, 2 << 20, 4 * (1 << 20) + 3, 5 * (1 << 20) + 17};
    for (int t = 0; t < 5; t++) {
        int64_t n = ns[t];
        bsr_multivec *H = NULL, *D = NULL;
        BSR_ASSERT_OK(bsr_multivec_create(&H, n, 1, BSR_DOUBLE));
        BSR_ASSERT_OK(bsr_multivec_random(H, 40 + t));
        double *copy = malloc(sizeof(double) * (size_t)n), *back = malloc(sizeof(double) * (size_t)n);
        CU_ASSERT_PTR_NOT_NULL_FATAL(copy);
        CU_ASSERT_PTR_NOT_NULL_FATAL(back);
        memcpy(copy, H->data, sizeof(double) * (size_t)n);
        /* upload, wipe the host copy, download: the data made the round trip */
        BSR_ASSERT_OK(bsr_multivec_upload(ctx, H));
        memset(H->data, 0, sizeof(double) * (size_t)n);
        BSR_ASSERT_OK(bsr_multivec_download(ctx, H));
        CU_ASSERT(!memcmp(H->data, copy, sizeof(double) * (size_t)n));
        /* direct transfers into / out of a device vector */
        BSR_ASSERT_OK(bsr_multivec_create_device(ctx, &D, n, 1, BSR_DOUBLE));
        BSR_ASSERT_OK(bsr_cuda_multivec_xfer(ctx, D, copy, 1));
        for (int64_t i = 0; i < n; i++) back[i] = NAN;
        BSR_ASSERT_OK(bsr_cuda_multivec_xfer(ctx, D, back, 0));
        CU_ASSERT(!memcmp(back, copy, sizeof(double) * (size_t)n));
        free(copy); free(back);
        bsr_multivec_destroy(H);
        bsr_multivec_destroy(D);
    }
    /* a matrix with 3.7 chunks of values (b = 4: 128 bytes a block) */
    bsr_matrix *A = bsr_test_random_matrix(70000, 70000, 4, 5, 9, BSR_DOUBLE, 77);
    CU_ASSERT_PTR_NOT_NULL_FATAL(A);
    const int64_t n = 70000 * 4;
    bsr_multivec *X = NULL, *Y = NULL;
    BSR_ASSERT_OK(bsr_multivec_create(&X, n, 2, BSR_DOUBLE));
    BSR_ASSERT_OK(bsr_multivec_random(X, 9));
    BSR_ASSERT_OK(bsr_multivec_create(&Y, n, 2, BSR_DOUBLE));
    BSR_ASSERT_OK(bsr_matrix_upload(ctx, A));
    BSR_ASSERT_OK(bsr_ctx_spmm(ctx, BSR_KERNEL_AUTO, 1.0, A, X, 0.0, Y));
    CU_ASSERT(bsr_test_spmm_error(1.0, A, X, 0.0, NULL, Y) < 1e-13);
    bsr_multivec_destroy(X);
    bsr_multivec_destroy(Y);
    bsr_matrix_destroy(A);
    bsr_context_destroy(ctx);
}

/* Norms on the device of columns whose squares overflow (1e300), underflow
 * (1e-300, a lone subnormal) or neither, through bsr_ctx_norm2 and through
 * bsr_multivec_norm2 on a device-only vector: finite and right, as on the host. */
static void test_norm_range(void)
{
    enum { N = 1000, K = 5 };
    bsr_context *ctx = NULL;
    BSR_ASSERT_OK(bsr_context_create(&ctx, BSR_BACKEND_CUDA, 0, NULL));
    if (!ctx) return;
    bsr_multivec *H = NULL;
    BSR_ASSERT_OK(bsr_multivec_create(&H, N, K, BSR_DOUBLE));
    double *x = bsr_multivec_data(H);
    for (int i = 0; i < N; i++) {
        x[K * i] = 1e300;
        x[K * i + 1] = 1e-300;
        x[K * i + 2] = i == 7 ? 3e-320 : 0;
        x[K * i + 3] = i % 2 ? -2.0 : 2.0;
        x[K * i + 4] = 0;
    }
    const double want[K] = {1e300 * sqrt(N), 1e-300 * sqrt(N), 3e-320, 2 * sqrt(N), 0};
    bsr_multivec *D = to_dev(ctx, H);
    CU_ASSERT_PTR_NOT_NULL_FATAL(D);
    double a[K], b[K], h[K];
    BSR_ASSERT_OK(bsr_ctx_norm2(ctx, D, a));
    BSR_ASSERT_OK(bsr_multivec_norm2(D, b)); /* device-only: runs on the device too */
    BSR_ASSERT_OK(bsr_multivec_norm2(H, h));
    for (int j = 0; j < K; j++) {
        const double tol = j == 2 ? 1e-3 : 1e-14; /* a subnormal has only a few digits */
        CU_ASSERT(isfinite(a[j]) && isfinite(b[j]));
        CU_ASSERT_DOUBLE_EQUAL(a[j], want[j], tol * want[j]);
        CU_ASSERT_DOUBLE_EQUAL(b[j], a[j], 0);
        CU_ASSERT_DOUBLE_EQUAL(h[j], want[j], tol * want[j]);
        if (!(fabs(a[j] - want[j]) <= tol * want[j])) printf("\n  column %d: %.17g, want %.17g", j, a[j], want[j]);
    }
    bsr_multivec_destroy(D);
    bsr_multivec_destroy(H);
    bsr_context_destroy(ctx);
}

/* bsr_ctx_gram and bsr_ctx_rsolve on the device against the host's (the
 * two-level preconditioner's orthonormalization): the same bits, sizes
 * around the sums' chunk of BSR_GRAM_CHUNK rows and K = 1..20; the Gram
 * matrix within rounding of a plain sum, (X R^{-1}) R within rounding of X
 * (relative to the sum of its terms' sizes); a float X and too many columns
 * refused. */
static void test_gram(void)
{
    bsr_context *ctx = NULL, *hc = NULL;
    BSR_ASSERT_OK(bsr_context_create(&ctx, BSR_BACKEND_CUDA, 0, NULL));
    BSR_ASSERT_OK(bsr_context_create(&hc, BSR_BACKEND_CPU, 0, NULL));
    if (!ctx || !hc) return;
    static const int ks[] = {1, 5, 16, 20};
    static const int64_t ns[] = {1, BSR_GRAM_CHUNK - 1, BSR_GRAM_CHUNK + 1, 300007};
    for (int ik = 0; ik < 4; ik++)
        for (int in = 0; in < 4; in++) {
            const int K = ks[ik];
            const int64_t n = ns[in];
            bsr_multivec *H = NULL;
            BSR_ASSERT_OK(bsr_multivec_create(&H, n, K, BSR_DOUBLE));
            BSR_ASSERT_OK(bsr_multivec_random(H, 500 + K + (uint64_t)n));
            bsr_multivec *D = to_dev(ctx, H);
            CU_ASSERT_PTR_NOT_NULL_FATAL(D);
            double Gh[400], Gd[400], R[400];
            BSR_ASSERT_OK(bsr_ctx_gram(hc, H, Gh));
            BSR_ASSERT_OK(bsr_ctx_gram(ctx, D, Gd));
            const int same = !memcmp(Gh, Gd, sizeof(double) * K * K);
            if (!same) printf("\n  Gram n=%lld K=%d: the device's bits differ from the host's", (long long)n, K);
            CU_ASSERT(same);
            const double *x = bsr_multivec_data(H);
            double worst = 0;
            for (int p = 0; p < K; p++)
                for (int q = 0; q < K; q++) {
                    double r = 0, a = 0;
                    for (int64_t i = 0; q >= p && i < n; i++) { r += x[i * K + p] * x[i * K + q]; a += fabs(x[i * K + p] * x[i * K + q]); }
                    const double e = fabs(Gh[p * K + q] - r) / (a > 0 ? a : 1);
                    if (!(e <= worst)) worst = e;
                }
            CU_ASSERT(worst <= 1e-12);
            /* R: upper triangular, diagonal 1..2, off-diagonal in [-0.5, 0.5) */
            for (int p = 0; p < K; p++)
                for (int q = 0; q < K; q++)
                    R[p * K + q] = q < p ? 0 : q == p ? 1 + Gh[p * K + q] / (Gh[p * K + q] + 1) : Gh[p * K + q] / (fabs(Gh[p * K + q]) + 1) * 0.5;
            bsr_multivec *H0 = NULL;
            BSR_ASSERT_OK(bsr_multivec_create(&H0, n, K, BSR_DOUBLE));
            BSR_ASSERT_OK(bsr_multivec_copy(H0, H));
            BSR_ASSERT_OK(bsr_ctx_rsolve(hc, H, R));
            BSR_ASSERT_OK(bsr_ctx_rsolve(ctx, D, R));
            BSR_ASSERT_OK(bsr_multivec_download(ctx, D));
            const int same_x = !memcmp(bsr_multivec_data(H), bsr_multivec_data(D), sizeof(double) * (size_t)n * K);
            if (!same_x) printf("\n  X R^-1 n=%lld K=%d: the device's bits differ from the host's", (long long)n, K);
            CU_ASSERT(same_x);
            const double *y = bsr_multivec_data(H), *x0 = bsr_multivec_data(H0);
            double res = 0;
            for (int64_t i = 0; i < n; i++)
                for (int q = 0; q < K; q++) {
                    double v = 0, a = fabs(x0[i * K + q]);
                    for (int p = 0; p <= q; p++) { v += y[i * K + p] * R[p * K + q]; a += fabs(y[i * K + p] * R[p * K + q]); }
                    const double e = fabs(v - x0[i * K + q]) / (a > 0 ? a : 1);
                    if (!(e <= res)) res = e;
                }
            CU_ASSERT(res <= 1e-14 * K);
            bsr_multivec_destroy(H0);
            bsr_multivec_destroy(D);
            bsr_multivec_destroy(H);
        }
    bsr_multivec *F = NULL, *W = NULL;
    double G[441];
    BSR_ASSERT_OK(bsr_multivec_create_device(ctx, &F, 100, 3, BSR_FLOAT));
    BSR_ASSERT_OK(bsr_ctx_fill(ctx, F, 1.0));
    CU_ASSERT_EQUAL(bsr_ctx_gram(ctx, F, G), BSR_ERR_ARG);
    BSR_ASSERT_OK(bsr_multivec_create_device(ctx, &W, 100, 21, BSR_DOUBLE));
    BSR_ASSERT_OK(bsr_ctx_fill(ctx, W, 1.0));
    CU_ASSERT_EQUAL(bsr_ctx_gram(ctx, W, G), BSR_ERR_ARG);
    CU_ASSERT_EQUAL(bsr_ctx_rsolve(ctx, W, G), BSR_ERR_ARG);
    bsr_clear_error();
    bsr_multivec_destroy(F);
    bsr_multivec_destroy(W);
    bsr_context_destroy(hc);
    bsr_context_destroy(ctx);
}

int main(int argc, char **argv)
{
    static const bsr_test tests[] = {
        {"host <-> device transfers, small and staged", test_transfers},
        {"fused dot of up to three pairs vs CPU, each the bits of its lone dot, deterministic", test_dotp},
        {"masked update vs CPU", test_update_mask},
        {"norms out of the squares' range", test_norm_range},
        {"Gram matrix and X R^-1 vs CPU, the same bits", test_gram},
        {NULL, NULL}};
    if (!bsr_test_have_gpu()) return 77; /* every check needs the device: ctest reports a skip */
    return bsr_test_main("gpu_blas", tests, argc, argv);
}
