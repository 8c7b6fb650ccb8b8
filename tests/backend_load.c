/* SPDX-License-Identifier: BSD-3-Clause */
/* ctests backend_load and backend_missing: a program linked against
 * libbsrsolve.so only (the public API; no CUDA library at link time), the
 * way an application uses the installed library.
 *   backend_load     with a device: the CUDA backend library is loaded on
 *                    demand and a device solve is right, and equals the
 *                    same solve in the same process twice (skip, 77,
 *                    without a device);
 *   backend_missing  BSR_CUDA_LIBRARY names a file that does not exist: no
 *                    device is counted, a device context is refused with
 *                    BSR_ERR_NODEVICE and a message naming the file (in a
 *                    CPU-only build: "built without CUDA"), and a CPU solve
 *                    is right.
 * The mode is the first argument; BSR_TEST_SPLIT (CMake) is 1 when the
 * library was built with its CUDA backend. */
#include <CUnit/Basic.h>
#include <bsrsolve.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OK(call)                                                                              \
    do {                                                                                      \
        bsr_status s_ = (call);                                                               \
        if (s_ != BSR_OK) fprintf(stderr, "%s: %s: %s\n", #call, bsr_status_string(s_), bsr_last_error()); \
        CU_ASSERT_EQUAL_FATAL(s_, BSR_OK);                                                    \
    } while (0)

/* Solve cfd3d:8,4,10 with ILU(0) + BiCGStab in ctx (NULL: the CPU); the
 * relative error against the exact solution, and the iterate in x[n]. */
static double solve(bsr_context *ctx, double *x, int64_t *n)
{
    bsr_problem P;
    bsr_multivec *X = NULL;
    bsr_solver *S = NULL;
    bsr_solver_stats st;
    double err = INFINITY;
    OK(bsr_generate("cfd3d:8,4,10", BSR_DOUBLE, &P));
    *n = bsr_multivec_rows(P.rhs);
    OK(bsr_multivec_create(&X, *n, 1, BSR_DOUBLE));
    OK(bsr_solver_create_str(&S, ctx, "method=bicgstab,precond=ilu0,reorder=natural,rtol=1e-10"));
    OK(bsr_solver_setup(S, P.A));
    OK(bsr_solver_solve(S, P.rhs, X, &st));
    const double *v = bsr_multivec_cdata(X), *xe = bsr_multivec_cdata(P.xexact);
    double num = 0, den = 0;
    for (int64_t i = 0; i < *n; i++) {
        num += (v[i] - xe[i]) * (v[i] - xe[i]);
        den += xe[i] * xe[i];
        if (x) x[i] = v[i];
    }
    err = sqrt(num / den);
    printf("\n  %s: %d iterations, error vs exact %.2e", ctx ? bsr_context_describe(ctx) : "cpu",
           st.col[0].iterations, err);
    bsr_solver_stats_free(&st);
    bsr_solver_destroy(S);
    bsr_multivec_destroy(X);
    bsr_problem_free(&P);
    return err;
}

/* The backend loaded on demand: a device solve right, and the same twice. */
static void test_load(void)
{
    bsr_context *ctx = NULL;
    OK(bsr_context_create(&ctx, BSR_BACKEND_CUDA, 0, NULL));
    static double x1[8 * 8 * 8 * 4], x2[8 * 8 * 8 * 4];
    int64_t n = 0;
    CU_ASSERT(solve(ctx, x1, &n) < 1e-6);
    CU_ASSERT(solve(ctx, x2, &n) < 1e-6);
    CU_ASSERT_EQUAL(memcmp(x1, x2, (size_t)n * sizeof x1[0]), 0);
    bsr_context_destroy(ctx);
}

/* No backend: refused with its reason, and the CPU still solves. */
static void test_missing(void)
{
    const char *path = getenv("BSR_CUDA_LIBRARY");
    CU_ASSERT_PTR_NOT_NULL_FATAL(path);
    CU_ASSERT_EQUAL(bsr_device_count(), 0);
    bsr_context *ctx = NULL;
    bsr_status s = bsr_context_create(&ctx, BSR_BACKEND_CUDA, 0, NULL);
    const char *msg = bsr_last_error();
    printf("\n  device context refused: %s: %s", bsr_status_string(s), msg);
    CU_ASSERT_EQUAL(s, BSR_ERR_NODEVICE);
    CU_ASSERT_PTR_NULL(ctx);
    CU_ASSERT_PTR_NOT_NULL(strstr(msg, BSR_TEST_SPLIT ? path : "built without CUDA"));
    int64_t n = 0;
    CU_ASSERT(solve(NULL, NULL, &n) < 1e-6);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    int load = !strcmp(mode, "load");
    if (!load && strcmp(mode, "missing") != 0) {
        fprintf(stderr, "usage: %s load|missing\n", argv[0]);
        return 2;
    }
    if (load && bsr_device_count() == 0) {
        printf("backend_load: [skip] no CUDA device (or no CUDA backend: %s)\n", bsr_last_error());
        return 77;
    }
    if (CU_initialize_registry() != CUE_SUCCESS) return 1;
    CU_pSuite suite = CU_add_suite(load ? "backend_load" : "backend_missing", NULL, NULL);
    CU_add_test(suite, load ? "device solve through the loaded backend" : "no backend: refused, CPU solves",
                load ? test_load : test_missing);
    CU_basic_set_mode(CU_BRM_VERBOSE);
    CU_basic_run_tests();
    unsigned failed = CU_get_number_of_failures() + CU_get_number_of_tests_failed();
    CU_cleanup_registry();
    return failed ? 1 : 0;
}
