/* SPDX-License-Identifier: BSD-3-Clause */
/* The CLI's exit codes (0 done, 1 error, 2 usage, 3 not converged), the
 * precision it reports for --float, one block-size limit, and the benchmark
 * drivers' output on a machine without a GPU ("n/a", "needs a GPU"). */
#include "harness.h"
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

BSR_TEST_CLI_SUITE

/* Write text to dir/name; the path in path (size 512). */
static void put(const char *name, const char *text, char *path)
{
    snprintf(path, 512, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fputs(text, f);
    fclose(f);
}

/* Exit code of args is want; prints the command's stderr when not. */
static void expect_rc(const char *args, int want)
{
    int rc = run(args);
    CU_ASSERT_EQUAL(rc, want);
    if (rc != want) printf("\n  `bsrsolve %s`: exit %d, want %d; stderr: %s", args, rc, want, err);
}

/* 0 done, 1 error, 2 usage, 3 not converged (breakdown included). */
static void test_codes(void)
{
    char p[512], args[1024];
    expect_rc("--help", 0);
    expect_rc("--gen poisson2d:8 --backend cpu", 0);
    expect_rc("--bogus", 2);
    expect_rc("--gen poisson2d:8 --backend cpu --config bogus=1", 2);
    expect_rc("--gen poisson2d:8 --backend cpu --config rtol=x", 2);
    expect_rc("--gen nosuch:3", 2);
    /* a --rhs that is no keyword and no file: a usage error naming the forms (issue 40) */
    expect_rc("--gen poisson2d:8 --backend cpu --rhs zeros", 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "'zeros'"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "ones"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "random:K"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "B.mtx"));
    CU_ASSERT_PTR_NULL(strstr(err, "cannot open"));
    expect_rc("--gen poisson2d:8 --backend cpu --rhs random:0", 2);
    /* a combination the solver refuses is refused before the matrix is read */
    expect_rc("no-such-file.mtx --backend cpu --config method=cg,precond=ilut", 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "method=cg"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "precond=ilut"));
    expect_rc("--gen poisson2d:8 --backend gpu", 2);
    put("bad.mtx", "%%MatrixMarket matrix coordinate real general\n3 3 1\n4 1 1\n", p);
    snprintf(args, sizeof args, "'%s' --backend cpu", p);
    expect_rc(args, 1);
    snprintf(args, sizeof args, "'%s/none.mtx' --info", dir);
    expect_rc(args, 1);
    /* an existing --rhs file that is not a right-hand side stays an error (1) */
    snprintf(args, sizeof args, "--gen poisson2d:8 --backend cpu --rhs '%s'", p);
    expect_rc(args, 1);
    /* a --plot that cannot be written is an error naming the path */
    snprintf(args, sizeof args, "--gen poisson2d:8 --backend cpu --plot '%s/no/such/dir/h.png'", dir);
    expect_rc(args, 1);
    snprintf(p, sizeof p, "%s/no/such/dir/h.png", dir);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, p));
    expect_rc("--gen poisson2d:8 --backend cpu --config maxit=1,rtol=1e-12", 3);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "maxit"));
    /* ILU(0)-BiCGStab on a cyclic permutation: breakdown, promptly */
    put("perm.mtx", "%%MatrixMarket matrix coordinate real general\n3 3 3\n1 2 1\n2 3 1\n3 1 1\n", p);
    snprintf(args, sizeof args, "'%s' --backend cpu --config precond=ilu0 --json", p);
    expect_rc(args, 3);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "\"breakdown\""));
    CU_ASSERT_PTR_NULL(strstr(out, "\"iterations\": [1000]"));
    /* its zero diagonal is what match=auto solves: the failure says so (issue 40) */
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "\"hint_config\": \"precond=ilu0,match=auto\""));
    snprintf(args, sizeof args, "'%s' --backend cpu", p);
    expect_rc(args, 3);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "zero, missing or singular diagonal block"));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "try --config match=auto"));
    snprintf(args, sizeof args, "'%s' --backend cpu --config precond=ilu2,pivot=strict", p);
    expect_rc(args, 1);   /* a singular pivot at setup: the hint on stderr */
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "hint: A has a zero, missing or singular diagonal block"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "try --config precond=ilu2,pivot=strict,match=auto"));
    snprintf(args, sizeof args, "'%s' --backend cpu --config precond=ilu0,match=auto", p);
    expect_rc(args, 0);   /* which solves it */
    CU_ASSERT_PTR_NULL(strstr(out, "hint"));
    /* no hint where the diagonal is regular */
    expect_rc("--gen poisson2d:8 --backend cpu --config maxit=1,rtol=1e-12", 3);
    CU_ASSERT_PTR_NULL(strstr(out, "hint"));
    /* ILU2 with a per-row cap that fails: the hint is the run without the cap */
    expect_rc("--gen rotconv3d:8,4 --backend cpu --config precond=ilu2,cap=auto,maxit=1,rtol=1e-12 --json", 3);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "\"hint_config\": \"precond=ilu2,cap=auto,maxit=1,rtol=1e-12,cap=none\""));
    expect_rc("--gen rotconv3d:8,4 --backend cpu --config precond=ilu2,cap=auto,maxit=1,rtol=1e-12", 3);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "can cost a coupled system its convergence"));
    /* without a cap (the CPU's default) no such hint; the inverse factors grow less than 1e3
     * there (662), so no grow=1 hint either */
    expect_rc("--gen rotconv3d:8,4 --backend cpu --config precond=ilu2,maxit=1,rtol=1e-12", 3);
    CU_ASSERT_PTR_NULL(strstr(out, "hint"));
    /* ILU2 failing where its inverse factors grow past 1e3 (8e5): the hint is grow=1, not
     * repeated once grow=1 is on */
    expect_rc("--gen coupled3d:10,5,shift=0 --backend cpu --config precond=ilu2,maxit=1,rtol=1e-12 --json", 3);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "\"hint_config\": \"precond=ilu2,maxit=1,rtol=1e-12,grow=1\""));
    expect_rc("--gen coupled3d:10,5,shift=0 --backend cpu --config precond=ilu2,maxit=1,rtol=1e-12", 3);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "inverse factors of the ILU grow past 1e3"));
    expect_rc("--gen coupled3d:10,5,shift=0 --backend cpu --config precond=ilu2,maxit=1,rtol=1e-12,grow=1", 3);
    CU_ASSERT_PTR_NULL(strstr(out, "hint"));
    /* a row of subnormal values (1e-320) is badly scaled, not zero: an error saying so */
    put("denormal.mtx", "%%MatrixMarket matrix coordinate real general\n3 3 4\n1 1 1e-320\n2 1 0.5\n2 2 1\n3 3 1\n", p);
    snprintf(args, sizeof args, "'%s' --backend cpu", p);
    expect_rc(args, 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "block row 0 of A has only subnormal values"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "rescale"));
    CU_ASSERT_PTR_NULL(strstr(err, "is zero"));
}

/* A singular system (1D Laplacian with Neumann ends, b = ones: inconsistent)
 * whose GMRES + ILU(0) iterate grows without bound: not "converged at the
 * rounding floor" with exit 0 (issue 40), but maxit, exit 3, and the note. */
static void test_floor_singular(void)
{
    enum { N = 8 };
    char text[2048], p[512], args[1024];
    int o = snprintf(text, sizeof text, "%%%%MatrixMarket matrix coordinate real general\n%d %d %d\n", N, N, 3 * N - 2);
    for (int i = 1; i <= N; i++) {
        if (i > 1) o += snprintf(text + o, sizeof text - o, "%d %d -1\n", i, i - 1);
        o += snprintf(text + o, sizeof text - o, "%d %d %d\n", i, i, (i > 1) + (i < N));
        if (i < N) o += snprintf(text + o, sizeof text - o, "%d %d -1\n", i, i + 1);
    }
    put("neumann.mtx", text, p);
    snprintf(args, sizeof args, "'%s' --backend cpu --config method=gmres,precond=ilu0,maxit=100", p);
    expect_rc(args, 3);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "stopped at maxit, system singular or too ill-conditioned in this precision"));
    CU_ASSERT_PTR_NULL(strstr(out, "converged at the rounding floor"));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "  maxit "));
    snprintf(args, sizeof args, "'%s' --backend cpu --config method=gmres,precond=ilu0,maxit=100 --json", p);
    expect_rc(args, 3);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "\"singular\": [true]"));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "\"at_rounding_floor\": [false]"));
}

/* --float is reported as single precision; --config can still ask for double. */
static void test_float(void)
{
    expect_rc("--gen poisson2d:8 --backend cpu --float --json --config rtol=1e-5", 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "precision=float,precond_precision=float"));
    expect_rc("--gen poisson2d:8 --backend cpu --float --json --config precision=double,rtol=1e-5", 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "precision=double,precond_precision=float"));
    expect_rc("--gen poisson2d:8 --backend cpu --json", 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "precision=double,precond_precision=double"));
}

/* The block size limit is the library's (BSR_MAX_BLOCK) in the CLI too. */
static void test_block_limit(void)
{
    enum { B = BSR_MAX_BLOCK + 1, N = 2 * B };
    char text[8192], p[512], args[1024];
    int o = snprintf(text, sizeof text, "%%%%MatrixMarket matrix coordinate real general\n%d %d %d\n", N, N, N);
    for (int i = 1; i <= N; i++) o += snprintf(text + o, sizeof text - o, "%d %d 2\n", i, i);
    put("b11.mtx", text, p);
    snprintf(args, sizeof args, "'%s' --info --block %d", p, B);
    expect_rc(args, 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "--block"));
    snprintf(args, sizeof args, "'%s' --info --block %d", p, 2);
    expect_rc(args, 0);
    bsr_matrix *A = NULL;
    int rp[] = {0, 1}, ci[] = {0};
    double v[B * B] = {0};
    CU_ASSERT_EQUAL(bsr_matrix_create(&A, 1, 1, B, rp, ci, v, BSR_DOUBLE, 0), BSR_ERR_ARG);
    CU_ASSERT_PTR_NULL(A);
}

/* Without a GPU: no "nan" in bench spmm's table, a plain message from bench pyramid. */
static void test_bench_nogpu(void)
{
    expect_rc("bench spmm --gen stencil3d:4:2 --k 1 --cpu-reps 1 --reps 20", 0);
    CU_ASSERT_PTR_NULL(strstr(out, "nan"));
    if (bsr_device_count() > 0) {
        printf("\n  [skip] a GPU is present: the no-GPU messages are not checked");
        CU_PASS("GPU present");
        return;
    }
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "n/a"));
    expect_rc("bench pyramid --grid 64 --steps 4", 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "needs a GPU"));
    CU_ASSERT_PTR_NULL(strstr(err, "driver version"));
}

int main(int argc, char **argv)
{
    static const bsr_test tests[] = {
        {"exit codes 0/1/2/3", test_codes},
        {"a singular system is not converged at the floor", test_floor_singular},
        {"--float reports float", test_float},
        {"one block-size limit", test_block_limit},
        {"benchmarks without a GPU", test_bench_nogpu},
        {NULL, NULL},
    };
    return bsr_test_cli_main("exitcodes", tests, argc, argv, &cli, dir, sizeof dir, 1);
}
