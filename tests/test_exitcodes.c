/* SPDX-License-Identifier: BSD-3-Clause */
/* The CLI's exit codes (0 done, 1 error, 2 usage, 3 not converged), the
 * precision it reports for --float, one block-size limit, and the benchmark
 * drivers' output on a machine without a GPU ("n/a", "needs a GPU"). */
#include "harness.h"
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

BSR_TEST_CLI_SUITE

/* `bsrsolve args` exits with want, and text (out or err, read after the run)
 * holds each needle of the NULL-ended list ap, or, for one written "!needle",
 * does not; prints the command and what failed where a check fails. */
static void vexpect(const char *args, int want, const char *text, va_list ap)
{
    int rc = run(args);
    CU_ASSERT_EQUAL(rc, want);
    if (rc != want) printf("\n  `bsrsolve %s`: exit %d, want %d; stderr: %s", args, rc, want, err);
    for (const char *n; (n = va_arg(ap, const char *)) != NULL;) {
        int absent = n[0] == '!', found = strstr(text, n + absent) != NULL;
        CU_ASSERT_NOT_EQUAL(found, absent);
        if (found == absent)
            printf("\n  `bsrsolve %s`: \"%s\" %s in\n%s", args, n + absent, absent ? "present" : "missing", text);
    }
}

/* vexpect of args with the needles that follow text (NULL-ended). */
static void expect(const char *args, int want, const char *text, ...)
{
    va_list ap;
    va_start(ap, text);
    vexpect(args, want, text, ap);
    va_end(ap);
}

/* vexpect of `bsrsolve 'path' rest` with the needles that follow text (NULL-ended). */
static void expect_file(const char *path, const char *rest, int want, const char *text, ...)
{
    char args[1024];
    snprintf(args, sizeof args, "'%s' %s", path, rest);
    va_list ap;
    va_start(ap, text);
    vexpect(args, want, text, ap);
    va_end(ap);
}

/* 0 done, 1 error, 2 usage, 3 not converged (breakdown included). */
static void test_codes(void)
{
    char p[512], args[1024];
    expect("--help", 0, out, NULL);
    expect("--gen poisson2d:8 --backend cpu", 0, out, NULL);
    expect("--bogus", 2, out, NULL);
    expect("--gen poisson2d:8 --backend cpu --config bogus=1", 2, out, NULL);
    expect("--gen poisson2d:8 --backend cpu --config rtol=x", 2, out, NULL);
    expect("--gen nosuch:3", 2, out, NULL);
    /* a --rhs that is no keyword and no file: a usage error naming the forms (issue 40) */
    expect("--gen poisson2d:8 --backend cpu --rhs zeros", 2, err, "'zeros'", "ones", "random:K", "B.mtx",
           "!cannot open", NULL);
    expect("--gen poisson2d:8 --backend cpu --rhs random:0", 2, out, NULL);
    /* a combination the solver refuses is refused before the matrix is read */
    expect("no-such-file.mtx --backend cpu --config method=cg,precond=ilut", 2, err, "method=cg", "precond=ilut",
           NULL);
    expect("--gen poisson2d:8 --backend gpu", 2, out, NULL);
    bsr_test_put(dir, "bad.mtx", "%%MatrixMarket matrix coordinate real general\n3 3 1\n4 1 1\n", p, sizeof p);
    expect_file(p, "--backend cpu", 1, out, NULL);
    snprintf(args, sizeof args, "'%s/none.mtx' --info", dir);
    expect(args, 1, out, NULL);
    /* --info --write: the problem's files, read back by a solve to the same exact solution; a
     * path that cannot be written is an error naming it */
    snprintf(args, sizeof args, "--gen coupled3d:5,3 --info --write '%s/w'", dir);
    expect(args, 0, out, NULL);
    snprintf(args, sizeof args, "'%s/w.mtx' --block 3 --rhs '%s/w_rhs.mtx' --exact '%s/w_xexact.mtx' --backend cpu "
             "--config precond=ilu2,rtol=1e-10 --json", dir, dir, dir);
    expect(args, 0, out, "\"error_vs_exact\": [", NULL);
    CU_ASSERT(bsr_test_json_num(out, "error_vs_exact") < 1e-8);
    /* --error-estimate: a column of estimates, its iterations, in the text and the JSON */
    expect("--gen coupled3d:8,5 --backend cpu --config precond=ilu2,rtol=1e-8 --error-estimate", 0, out,
           "error estimate", "with A e = r solved to rtol 0.01 in", NULL);
    expect("--gen coupled3d:8,5 --backend cpu --config precond=ilu2,rtol=1e-8 --error-estimate --json", 0, out,
           "\"error_estimate\": [", "\"error_estimate_lower_bound\": false", NULL);
    CU_ASSERT(bsr_test_json_num(out, "error_estimate") > 0);
    CU_ASSERT(bsr_test_json_num(out, "error_estimate") < 10 * bsr_test_json_num(out, "error_vs_exact"));
    snprintf(args, sizeof args, "--gen coupled3d:5,3 --info --write '%s/no/such/dir/w'", dir);
    expect(args, 1, err, "no/such/dir/w.mtx", NULL);
    /* an existing --rhs file that is not a right-hand side stays an error (1) */
    snprintf(args, sizeof args, "--gen poisson2d:8 --backend cpu --rhs '%s'", p);
    expect(args, 1, out, NULL);
    /* a --plot that cannot be written is an error naming the path */
    snprintf(args, sizeof args, "--gen poisson2d:8 --backend cpu --plot '%s/no/such/dir/h.png'", dir);
    snprintf(p, sizeof p, "%s/no/such/dir/h.png", dir);
    expect(args, 1, err, p, NULL);
    expect("--gen poisson2d:8 --backend cpu --config maxit=1,rtol=1e-12", 3, out, "maxit", NULL);
    /* ILU(0)-BiCGStab on a cyclic permutation: breakdown, promptly; its zero
     * diagonal is what match=auto solves: the failure says so */
    bsr_test_put(dir, "perm.mtx", "%%MatrixMarket matrix coordinate real general\n3 3 3\n1 2 1\n2 3 1\n3 1 1\n", p,
                 sizeof p);
    expect_file(p, "--backend cpu --config precond=ilu0 --json", 3, out, "\"breakdown\"", "!\"iterations\": [1000]",
                "\"hint_config\": \"precond=ilu0,match=auto\"", NULL);
    expect_file(p, "--backend cpu", 3, out, "zero, missing or singular diagonal block", "try --config match=auto",
                NULL);
    /* a singular pivot at setup: the hint on stderr */
    expect_file(p, "--backend cpu --config precond=ilu2,pivot=strict", 1, err,
                "hint: A has a zero, missing or singular diagonal block",
                "try --config precond=ilu2,pivot=strict,match=auto", NULL);
    /* which match=auto solves */
    expect_file(p, "--backend cpu --config precond=ilu0,match=auto", 0, out, "!hint", NULL);
    /* no hint where the diagonal is regular */
    expect("--gen poisson2d:8 --backend cpu --config maxit=1,rtol=1e-12", 3, out, "!hint", NULL);
    /* ILU2 with a per-row cap that fails, its fallback off: the hint is the run without the cap */
    expect("--gen rotconv3d:8,4 --backend cpu --config precond=ilu2,cap=auto,maxit=1,rtol=1e-12,fallback=off --json", 3, out,
           "\"hint_config\": \"precond=ilu2,maxit=1,rtol=1e-12,fallback=off,cap=none\"", NULL);
    expect("--gen rotconv3d:8,4 --backend cpu --config precond=ilu2,cap=auto,maxit=1,rtol=1e-12,fallback=off", 3, out,
           "can cost a coupled system its convergence", NULL);
    /* the fallback tried the complete factor and, after both two levels (given up), the factor
     * without the cap, which both stopped at their work bound (1e8, between the capped factor's
     * 2.9e7 and the complete and uncapped ones' 1.0e9 and 1.4e9): no cap=none hint (cap=none alone
     * has no bound), but the bound four times over, the work given replaced */
    expect("--gen coupled3d:12,5,couple=0.45 --backend cpu --config precond=ilu2,cap=auto,maxit=300,work=1e8", 3, out,
           "no fallback: the setup of the complete factor on the host failed", "; the setup without the cap failed",
           "nor two levels'", "nor flexible GMRES-DR's on two levels",
           "!nested dissection without a cap", "stopped at its work bound (1e+08 block multiply-adds)",
           "try --config precond=ilu2,cap=auto,maxit=300,work=4e+08 (", NULL);
    /* a capped factor's fallback solved by two levels under flexible GMRES-DR (the complete
     * factor past its bound, 1e8, the capped one's 2.9e7 within it): the solver line prints the
     * options they ran with (a run given them reproduces it) */
    expect("--gen coupled3d:16,4,couple=0.4 --backend cpu --config precond=ilu2,cap=auto,rtol=1e-10,maxit=100,work=1e8",
           0, out, "method=gmres,restart=80,orth=cgs2,deflate=30,flex=1,", "coarse=10,", "by the fallback's stage",
           NULL);
    /* without a cap (the CPU's default) no such hint; the inverse factors grow less than 1e3
     * there (662), so no grow=1 hint either; with the fallback (the default) the complete
     * factor solves it */
    expect("--gen rotconv3d:8,4 --backend cpu --config precond=ilu2,maxit=1,rtol=1e-12,fallback=off", 3, out, "!hint",
           NULL);
    expect("--gen rotconv3d:8,4 --backend cpu --config precond=ilu2,maxit=1,rtol=1e-12", 0, out,
           "precond=ilu2,tau1=0,tau2=0,", "by the fallback's stage the options now say", "!hint", NULL);
    /* ILU2 failing where its inverse factors grow past 1e3 (8e5), its fallback off: the hint
     * is grow=1, not repeated once grow=1 is on; with the fallback (the default) the second
     * setup is the complete factor (its work, 2.1e8, below the growth-weighted one's 3.7e8),
     * and the options say so */
    expect("--gen coupled3d:10,5,shift=0 --backend cpu --config precond=ilu2,maxit=1,rtol=1e-12,fallback=off --json",
           3, out, "\"hint_config\": \"precond=ilu2,maxit=1,rtol=1e-12,fallback=off,grow=1\"", NULL);
    expect("--gen coupled3d:10,5,shift=0 --backend cpu --config precond=ilu2,maxit=1,rtol=1e-12,fallback=off", 3, out,
           "inverse factors of the ILU grow past 1e3", NULL);
    expect("--gen coupled3d:10,5,shift=0 --backend cpu --config precond=ilu2,maxit=1,rtol=1e-12", 0, out,
           "tau1=0,tau2=0,", "work=2e+12", ", 0 dropped", "by the fallback's stage the options now say", "!hint", NULL);
    expect("--gen coupled3d:10,5,shift=0 --backend cpu --config precond=ilu2,maxit=1,rtol=1e-12,grow=1", 3, out,
           "!hint", NULL);
    /* a row of subnormal values (1e-320) is badly scaled, not zero: an error saying so */
    bsr_test_put(dir, "denormal.mtx",
                 "%%MatrixMarket matrix coordinate real general\n3 3 4\n1 1 1e-320\n2 1 0.5\n2 2 1\n3 3 1\n", p,
                 sizeof p);
    expect_file(p, "--backend cpu", 1, err, "block row 0 of A has only subnormal values", "rescale", "!is zero",
                NULL);
}

/* A singular system (1D Laplacian with Neumann ends, b = ones: inconsistent)
 * whose GMRES + ILU(0) iterate grows without bound: not "converged at the
 * rounding floor" with exit 0 (issue 40), but maxit, exit 3, and the note. */
static void test_floor_singular(void)
{
    enum { N = 8 };
    char text[2048], p[512];
    int o = snprintf(text, sizeof text, "%%%%MatrixMarket matrix coordinate real general\n%d %d %d\n", N, N, 3 * N - 2);
    for (int i = 1; i <= N; i++) {
        if (i > 1) o += snprintf(text + o, sizeof text - o, "%d %d -1\n", i, i - 1);
        o += snprintf(text + o, sizeof text - o, "%d %d %d\n", i, i, (i > 1) + (i < N));
        if (i < N) o += snprintf(text + o, sizeof text - o, "%d %d -1\n", i, i + 1);
    }
    bsr_test_put(dir, "neumann.mtx", text, p, sizeof p);
    expect_file(p, "--backend cpu --config method=gmres,precond=ilu0,maxit=100", 3, out,
                "stopped at maxit, system singular or too ill-conditioned in this precision",
                "!converged at the rounding floor", "  maxit ", NULL);
    expect_file(p, "--backend cpu --config method=gmres,precond=ilu0,maxit=100 --json", 3, out,
                "\"singular\": [true]", "\"at_rounding_floor\": [false]", NULL);
}

/* --float is reported as single precision; --config can still ask for double. */
static void test_float(void)
{
    expect("--gen poisson2d:8 --backend cpu --float --json --config rtol=1e-5", 0, out,
           "precision=float,precond_precision=float", NULL);
    expect("--gen poisson2d:8 --backend cpu --float --json --config precision=double,rtol=1e-5", 0, out,
           "precision=double,precond_precision=float", NULL);
    expect("--gen poisson2d:8 --backend cpu --json", 0, out, "precision=double,precond_precision=double", NULL);
}

/* The block size limit is the library's (BSR_MAX_BLOCK) in the CLI too. */
static void test_block_limit(void)
{
    enum { B = BSR_MAX_BLOCK + 1, N = 2 * B };
    char text[8192], p[512], rest[64];
    int o = snprintf(text, sizeof text, "%%%%MatrixMarket matrix coordinate real general\n%d %d %d\n", N, N, N);
    for (int i = 1; i <= N; i++) o += snprintf(text + o, sizeof text - o, "%d %d 2\n", i, i);
    bsr_test_put(dir, "b11.mtx", text, p, sizeof p);
    snprintf(rest, sizeof rest, "--info --block %d", B);
    expect_file(p, rest, 2, err, "--block", NULL);
    expect_file(p, "--info --block 2", 0, out, NULL);
    bsr_matrix *A = NULL;
    int rp[] = {0, 1}, ci[] = {0};
    double v[B * B] = {0};
    CU_ASSERT_EQUAL(bsr_matrix_create(&A, 1, 1, B, rp, ci, v, BSR_DOUBLE, 0), BSR_ERR_ARG);
    CU_ASSERT_PTR_NULL(A);
}

/* Without a GPU: no "nan" in bench spmm's table, a plain message from bench pyramid. */
static void test_bench_nogpu(void)
{
    expect("bench spmm --gen stencil3d:4:2 --k 1 --cpu-reps 1 --reps 20", 0, out, "!nan", NULL);
    if (bsr_device_count() > 0) {
        printf("\n  [skip] a GPU is present: the no-GPU messages are not checked");
        CU_PASS("GPU present");
        return;
    }
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "n/a"));
    expect("bench pyramid --grid 64 --steps 4", 1, err, "needs a GPU", "!driver version", NULL);
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
