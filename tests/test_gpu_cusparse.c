/* SPDX-License-Identifier: BSD-3-Clause */
/* The cuSPARSE comparison of `bsrsolve --compare cusparse`: b = 1 runs on
 * cuSPARSE's CSR path and converges; a structural zero pivot (a block row
 * without its diagonal block) is reported as cuSPARSE's result ("failed" with
 * the message), not as "not run", while the CLI's exit code follows its own
 * solve; the outcome names; "not run" without a device.  The CLI comes from
 * $BSR_CLI (set by CMake); the device checks skip without a GPU. */
#include "harness.h"
#include "cusparse_ref.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

BSR_TEST_CLI_SUITE

/* The "cusparse" object of the last --json output (NULL when absent). */
static const char *cusparse_json(void) { return strstr(out, "\"cusparse\":"); }

/* Whether the "cusparse" object's status is want. */
static int cusparse_status_is(const char *want)
{
    const char *c = cusparse_json();
    char pat[64];
    snprintf(pat, sizeof pat, "\"status\": \"%s\"", want);
    const char *p = c ? strstr(c, pat) : NULL;
    const char *close = c ? strchr(c, '}') : NULL;
    return p && close && p < close;
}

/* Block tridiagonal matrix with 2 x 2 blocks, block rows mb, where block row
 * z lacks its diagonal block (the rest is diagonally dominant): written to
 * path as Matrix Market.  0, or -1 when the file cannot be written. */
static int write_missing_diag(const char *path, int mb, int z)
{
    static const double lo[4] = {-1, 0.2, 0.1, -1}, di[4] = {4, 1, 0.5, 4}, up[4] = {-1, 0.3, 0.2, -1};
    FILE *f = fopen(path, "w");
    if (!f) return -1;
    int nblocks = 3 * mb - 2 - 1;
    fprintf(f, "%%%%MatrixMarket matrix coordinate real general\n%d %d %d\n", 2 * mb, 2 * mb, 4 * nblocks);
    for (int i = 0; i < mb; i++)
        for (int d = -1; d <= 1; d++) {
            int j = i + d;
            if (j < 0 || j >= mb || (i == z && d == 0)) continue;
            const double *v = d < 0 ? lo : d > 0 ? up : di;
            for (int a = 0; a < 2; a++)
                for (int c = 0; c < 2; c++) fprintf(f, "%d %d %.17g\n", 2 * i + a + 1, 2 * j + c + 1, v[2 * a + c]);
        }
    return fclose(f) ? -1 : 0;
}

/* Test: the outcome names the reports use (no device needed). */
static void test_outcome_names(void)
{
    /* the status of a run and the outcome it is reported as; cuSPARSE ran
     * and stopped (singular, CUDA error, no memory): its result, not "not run" */
    static const struct { bsr_status status; const char *outcome; } t[] = {
        {BSR_OK, "converged"},        {BSR_ERR_NOCONV, "not converged"}, {BSR_ERR_NODEVICE, "not run"},
        {BSR_ERR_SINGULAR, "failed"}, {BSR_ERR_CUDA, "failed"},          {BSR_ERR_NOMEM, "failed"},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        bsr_cusparse_result r;
        memset(&r, 0, sizeof r);
        r.status = t[i].status;
        CU_ASSERT_STRING_EQUAL(bsr_cusparse_outcome(&r), t[i].outcome);
    }
}

/* Test: without a device the comparison says "not run" and why (text and JSON). */
static void test_not_run_without_device(void)
{
    if (bsr_device_count() > 0) { BSR_TEST_SKIP("a CUDA device is present: cuSPARSE runs"); return; }
    CU_ASSERT_EQUAL(run("--gen stencil3d:6:2 --compare cusparse"), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "cuSPARSE    not run: "));
    CU_ASSERT_EQUAL(run("--gen stencil3d:6:2 --compare cusparse --json"), 0);
    CU_ASSERT(cusparse_status_is("not run"));
    CU_ASSERT_PTR_NOT_NULL(cusparse_json() ? strstr(cusparse_json(), "\"message\": \"") : NULL);
}

/* Test: b = 1 (CSR path: csrilu02, SpSV, SpMV) converges to the tolerance. */
static void test_b1_converges(void)
{
    if (!bsr_test_have_gpu()) { BSR_TEST_SKIP("no CUDA device: cuSPARSE b = 1 not checked"); return; }
    const double rtol = 1e-8;
    int rc = run("--gen stencil3d:20:1 --config rtol=1e-8 --compare cusparse --json");
    CU_ASSERT_EQUAL(rc, 0);
    const char *c = cusparse_json();
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    CU_ASSERT(cusparse_status_is("converged"));
    double it = bsr_test_json_num(c, "iterations"), rel = bsr_test_json_num(c, "true_relres");
    CU_ASSERT(it >= 1);
    CU_ASSERT(rel < 10 * rtol);
    if (!cusparse_status_is("converged") || !(rel < 10 * rtol))
        printf("\n  cuSPARSE b = 1: %.300s\n", c);
    /* poisson3d (symmetric) as well, in the text report */
    rc = run("--gen poisson3d:16 --config rtol=1e-8 --compare cusparse");
    CU_ASSERT_EQUAL(rc, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "cuSPARSE    ILU(0)+BiCGStab"));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "(converged)"));
}

/* Test: a structural zero pivot at b = 2 is cuSPARSE's result: "failed" with
 * bsrilu02's message; the exit code is that of bsrsolve's own solve. */
static void test_zero_pivot_reported(void)
{
    if (!bsr_test_have_gpu()) { BSR_TEST_SKIP("no CUDA device: cuSPARSE zero pivot not checked"); return; }
    char path[512], args[1024];
    snprintf(path, sizeof path, "%s/missing_diag_b2.mtx", dir);
    CU_ASSERT_EQUAL_FATAL(write_missing_diag(path, 30, 7), 0);
    snprintf(args, sizeof args, "'%s' --block 2 --compare cusparse", path);
    int rc = run(args);
    CU_ASSERT(rc == 0 || rc == 3);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "cuSPARSE    failed: "));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "zero pivot at block row 7"));
    CU_ASSERT_PTR_NULL(strstr(out, "not run"));
    if (!strstr(out, "cuSPARSE    failed: ")) printf("\n  output:\n%s\n  stderr:\n%s\n", out, err);
    snprintf(args, sizeof args, "'%s' --block 2 --compare cusparse --json", path);
    rc = run(args);
    CU_ASSERT(rc == 0 || rc == 3);
    CU_ASSERT(cusparse_status_is("failed"));
    const char *c = cusparse_json();
    CU_ASSERT_PTR_NOT_NULL(c ? strstr(c, "zero pivot at block row 7") : NULL);
}

int main(int argc, char **argv)
{
    static const bsr_test tests[] = {
        {"outcome names", test_outcome_names},
        {"not run without a device", test_not_run_without_device},
        {"b = 1 on the CSR path converges", test_b1_converges},
        {"structural zero pivot reported as failed", test_zero_pivot_reported},
        {NULL, NULL},
    };
    return bsr_test_cli_main("gpu_cusparse", tests, argc, argv, &cli, dir, sizeof dir, 1);
}
