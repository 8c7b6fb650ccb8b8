/* SPDX-License-Identifier: BSD-3-Clause */
/* Contexts without a GPU: the CPU backend end to end, kernel names, and the
 * error a CUDA context gives when there is no device (runs in CI). */
#include "harness.h"
#include "internal.h" /* the GPU SpMM variants */
#include <math.h>
#include <stdlib.h>
#include <string.h>

static bsr_multivec *random_mv(int64_t n, int k, bsr_precision p, uint64_t seed)
{
    bsr_multivec *X = NULL;
    bsr_multivec_create(&X, n, k, p);
    bsr_multivec_random(X, seed);
    return X;
}

static void test_cpu_context(void)
{
    bsr_context *ctx = NULL;
    BSR_ASSERT_OK(bsr_context_create(&ctx, BSR_BACKEND_CPU, 0, NULL));
    CU_ASSERT_EQUAL(bsr_context_backend(ctx), BSR_BACKEND_CPU);
    CU_ASSERT_PTR_NOT_NULL(strstr(bsr_context_describe(ctx), "cpu"));
    BSR_ASSERT_OK(bsr_context_sync(ctx));
    bsr_matrix *A = bsr_test_random_matrix(200, 150, 3, 0, 9, BSR_DOUBLE, 5);
    BSR_ASSERT_OK(bsr_matrix_upload(ctx, A)); /* no-op on the CPU */
    bsr_multivec *X = random_mv(450, 5, BSR_DOUBLE, 1), *Y0 = random_mv(600, 5, BSR_DOUBLE, 2);
    for (int kn = BSR_KERNEL_AUTO; kn <= BSR_KERNEL_OMP; kn++) {
        bsr_multivec *Y = random_mv(600, 5, BSR_DOUBLE, 2);
        BSR_ASSERT_OK(bsr_ctx_spmm(ctx, (bsr_kernel)kn, -1.5, A, X, 0.5, Y));
        CU_ASSERT(bsr_test_spmm_error(-1.5, A, X, 0.5, Y0, Y) <= 1e-14);
        bsr_multivec_destroy(Y);
    }
    /* GPU kernels need a CUDA context */
    CU_ASSERT_EQUAL(bsr_ctx_spmm(ctx, BSR_KERNEL_WARP, 1, A, X, 0, Y0), BSR_ERR_ARG);
    CU_ASSERT_PTR_NOT_NULL(strstr(bsr_last_error(), "CUDA context"));
    CU_ASSERT_EQUAL(bsr_ctx_spmm(ctx, (bsr_kernel)99, 1, A, X, 0, Y0), BSR_ERR_ARG);
    /* device-only creation falls back to a host multivector */
    bsr_multivec *D = NULL;
    BSR_ASSERT_OK(bsr_multivec_create_device(ctx, &D, 10, 2, BSR_FLOAT));
    CU_ASSERT_PTR_NOT_NULL(bsr_multivec_data(D));
    BSR_ASSERT_OK(bsr_multivec_upload(ctx, D));
    BSR_ASSERT_OK(bsr_multivec_download(ctx, D));
    CU_ASSERT(!bsr_multivec_on_device(D));
    bsr_multivec_destroy(D);
    bsr_multivec_destroy(X); bsr_multivec_destroy(Y0);
    bsr_matrix_destroy(A);
    bsr_context_destroy(ctx);
    bsr_context_destroy(NULL);
}

/* The fused updates on the CPU backend, checked element by element. */
static void test_cpu_updates(void)
{
    bsr_context *ctx = NULL;
    BSR_ASSERT_OK(bsr_context_create(&ctx, BSR_BACKEND_CPU, 0, NULL));
    int n = 1000, k = 3;
    bsr_multivec *X = random_mv(n, k, BSR_DOUBLE, 1), *Y = random_mv(n, k, BSR_DOUBLE, 2);
    bsr_multivec *Z = random_mv(n, k, BSR_DOUBLE, 3), *Z0 = random_mv(n, k, BSR_DOUBLE, 3);
    const double *x = bsr_multivec_cdata(X), *y = bsr_multivec_cdata(Y), *z0 = bsr_multivec_cdata(Z0);
    double *z = bsr_multivec_data(Z);
    double a[3] = {1, 2, -1}, b[3] = {0.5, 0, 3}, c[3] = {0, 2, -0.25};
    int done[3] = {0, 0, 1};
    /* c[0] == 0: column 0 is write-only, so NaN there must not survive */
    for (int i = 0; i < n; i++) z[i * k] = NAN;
    BSR_ASSERT_OK(bsr_ctx_axpbypcz(ctx, a, X, b, Y, c, Z, done));
    int bad = 0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < k; j++) {
            double want = done[j] ? z0[i * k + j]
                                  : a[j] * x[i * k + j] + b[j] * y[i * k + j] + (c[j] ? c[j] * z0[i * k + j] : 0);
            bad += !(fabs(z[i * k + j] - want) <= 1e-15 * (1 + fabs(want)));
        }
    CU_ASSERT_EQUAL(bad, 0);
    /* axpby with a mask */
    BSR_ASSERT_OK(bsr_multivec_copy(Z, Z0));
    BSR_ASSERT_OK(bsr_ctx_axpby(ctx, a, X, b, Z, done));
    bad = 0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < k; j++) {
            double want = done[j] ? z0[i * k + j] : a[j] * x[i * k + j] + b[j] * z0[i * k + j];
            bad += !(fabs(z[i * k + j] - want) <= 1e-15 * (1 + fabs(want)));
        }
    CU_ASSERT_EQUAL(bad, 0);
    /* dot / norm2 / fill / copy / axpy / scale go to the core operations */
    double d1[3], d2[3];
    BSR_ASSERT_OK(bsr_ctx_dot(ctx, X, Y, d1));
    BSR_ASSERT_OK(bsr_multivec_dot(X, Y, d2));
    CU_ASSERT(memcmp(d1, d2, sizeof d1) == 0);
    BSR_ASSERT_OK(bsr_ctx_fill(ctx, Z, 2.0));
    BSR_ASSERT_OK(bsr_ctx_norm2(ctx, Z, d1));
    CU_ASSERT(fabs(d1[1] - 2.0 * sqrt(n)) < 1e-12);
    BSR_ASSERT_OK(bsr_ctx_scale(ctx, Z, a));
    CU_ASSERT_EQUAL(z[2], -2.0);
    BSR_ASSERT_OK(bsr_ctx_axpy(ctx, Z, a, Z0));
    CU_ASSERT(fabs(z[1] - (4.0 + 2 * z0[1])) < 1e-15);
    BSR_ASSERT_OK(bsr_ctx_copy(ctx, Z, X));
    CU_ASSERT(memcmp(z, x, sizeof(double) * n * k) == 0);
    /* shape and precision errors */
    bsr_multivec *S = random_mv(n + 1, k, BSR_DOUBLE, 4), *F = random_mv(n, k, BSR_FLOAT, 4);
    CU_ASSERT_EQUAL(bsr_ctx_axpby(ctx, a, S, b, Z, NULL), BSR_ERR_SIZE);
    CU_ASSERT_EQUAL(bsr_ctx_dot(ctx, X, S, d1), BSR_ERR_SIZE);
    CU_ASSERT_EQUAL(bsr_ctx_axpby(ctx, a, F, b, Z, NULL), BSR_ERR_ARG);
    CU_ASSERT_EQUAL(bsr_ctx_axpbypcz(ctx, a, X, b, F, c, Z, NULL), BSR_ERR_ARG);
    CU_ASSERT_EQUAL(bsr_ctx_dot(ctx, X, Y, NULL), BSR_ERR_ARG);
    bsr_multivec_destroy(S); bsr_multivec_destroy(F);
    bsr_multivec_destroy(X); bsr_multivec_destroy(Y); bsr_multivec_destroy(Z); bsr_multivec_destroy(Z0);
    bsr_context_destroy(ctx);
}

static void test_kernel_names(void)
{
    for (int i = 0; i < BSR_KERNEL_COUNT; i++) {
        bsr_kernel k;
        BSR_ASSERT_OK(bsr_kernel_parse(bsr_kernel_name((bsr_kernel)i), &k));
        CU_ASSERT_EQUAL((int)k, i);
    }
    bsr_kernel k;
    CU_ASSERT_EQUAL(bsr_kernel_parse("p15", &k), BSR_ERR_ARG);
    CU_ASSERT_PTR_NOT_NULL(strstr(bsr_last_error(), "p15"));
    CU_ASSERT(bsr_kernel_deterministic(BSR_KERNEL_WARP));
    CU_ASSERT(!bsr_kernel_deterministic(BSR_KERNEL_CUSPARSE));
}

/* Without a device a CUDA context is refused with a message; with one, it works. */
static void test_cuda_context(void)
{
    bsr_context *ctx = (bsr_context *)1;
    bsr_status s = bsr_context_create(&ctx, BSR_BACKEND_CUDA, 0, NULL);
    if (bsr_device_count() == 0) {
        CU_ASSERT_EQUAL(s, BSR_ERR_NODEVICE);
        CU_ASSERT_PTR_NULL(ctx);
        CU_ASSERT(strlen(bsr_last_error()) > 0);
    } else {
        CU_ASSERT_EQUAL(s, BSR_OK);
        CU_ASSERT_EQUAL(bsr_context_backend(ctx), BSR_BACKEND_CUDA);
        CU_ASSERT_PTR_NOT_NULL(strstr(bsr_context_describe(ctx), "cuda:0"));
        bsr_context_destroy(ctx);
    }
    CU_ASSERT_EQUAL(bsr_context_create(&ctx, BSR_BACKEND_CUDA, -1, NULL), BSR_ERR_NODEVICE);
    CU_ASSERT_EQUAL(bsr_context_create(&ctx, (bsr_backend)7, 0, NULL), BSR_ERR_ARG);
    CU_ASSERT_EQUAL(bsr_context_create(NULL, BSR_BACKEND_CPU, 0, NULL), BSR_ERR_ARG);
}

int main(int argc, char **argv)
{
    static const bsr_test tests[] = {
        {"CPU context: SpMM kernels, residency no-ops", test_cpu_context},
        {"CPU context: fused masked updates, reductions, errors", test_cpu_updates},
        {"kernel names", test_kernel_names},
        {"CUDA context: refused without a device", test_cuda_context},
        {NULL, NULL}};
    return bsr_test_main("context", tests, argc, argv);
}
