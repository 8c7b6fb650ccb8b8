/* SPDX-License-Identifier: BSD-3-Clause */
/* The distributed command line: `mpiexec -n $BSR_NP bsrsolve ...` (ctest
 * runs 2 and 4 ranks; this program itself is not an MPI program).  One
 * report and one JSON object from rank 0 with the partition and
 * communication figures; a generated problem solved to its exact solution;
 * a matrix file read by rank 0 and scattered; every failure an exit code on
 * every rank, one message, no hang (each run under `timeout`). */
#include "harness.h"
#include <stdlib.h>
#include <string.h>

static const char *cli, *mpiexec, *np, *src;
static char dir[256];
static char out[1 << 17], err[1 << 16];

/* Run `mpiexec -n NP bsrsolve args` (at most 120 s); its exit code. */
static int run(const char *args)
{
    char a[4096];
    snprintf(a, sizeof a, "120 '%s' -n %s '%s' %s", mpiexec, np, cli, args);
    return bsr_test_run_cli("timeout", dir, a, out, err, sizeof out);
}

/* Exit code of args is want; prints the run's stderr when not. */
static void expect_rc(const char *args, int want)
{
    int rc = run(args);
    CU_ASSERT_EQUAL(rc, want);
    if (rc != want) printf("\n  `bsrsolve %s` on %s ranks: exit %d, want %d; stderr: %s", args, np, rc, want, err);
}

/* Occurrences of s in text. */
static int count(const char *text, const char *s)
{
    int n = 0;
    for (const char *p = strstr(text, s); p; p = strstr(p + 1, s)) n++;
    return n;
}

/* A generated problem, JSON: converged to its exact solution, one object
 * with the partition, communication and per-rank figures. */
static void test_json(void)
{
    expect_rc("--gen stencil3d:12:4 --backend cpu --config precond=ilu0 --json", 0);
    CU_ASSERT_EQUAL(count(out, "\"problem\""), 1);
    CU_ASSERT_EQUAL(bsr_test_json_num(out, "ranks"), atoi(np));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "\"result\": \"ok\""));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "\"partition\": {\"method\": \"generated in place, equal row ranges\""));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "\"version\": \"" BSR_VERSION "\""));
    const char *keys[] = {"rows_min", "rows_mean", "rows_max", "interface_share", "halo_blocks_sum",
                          "halo_blocks_max", "neighbours_max", "halo_s_max", "reduce_s_mean", "share_of_solve",
                          "time_per_iteration_s", "setup_s", "solve_s", NULL};
    for (int i = 0; keys[i]; i++) {
        double v = bsr_test_json_num(out, keys[i]);
        if (!(v >= 0)) printf("\n  no \"%s\" in: %s", keys[i], out);
        CU_ASSERT(v >= 0);
    }
    CU_ASSERT_EQUAL(bsr_test_json_num(out, "rows_min") * atoi(np), 1728);   /* 1728 rows split evenly */
    CU_ASSERT(bsr_test_json_num(out, "interface_share") > 0 && bsr_test_json_num(out, "interface_share") < 1);
    CU_ASSERT(bsr_test_json_num(out, "halo_blocks_sum") > 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "\"per_rank\": {"));
    /* each rank's preconditioner words: one string a rank */
    const char *pr = strstr(out, "\"precond_info_ranks\": [");
    CU_ASSERT_PTR_NOT_NULL(pr);
    if (pr) CU_ASSERT_EQUAL(count(pr, "ilu0") - count(strchr(pr, ']'), "ilu0"), atoi(np));
    CU_ASSERT_EQUAL(bsr_test_json_num(out, "threads"), 1);   /* OMP_NUM_THREADS=1 (the ctest's), left as it is */
    CU_ASSERT(bsr_test_json_num(out, "true_relres") <= 1e-8);
    CU_ASSERT(bsr_test_json_num(out, "error_vs_exact") < 1e-6);
    /* --steps: the medians of refactor + solve */
    expect_rc("--gen stencil3d:8:3 --backend cpu --json --steps 2", 0);
    CU_ASSERT_EQUAL(bsr_test_json_num(out, "steps"), 2);
    CU_ASSERT(bsr_test_json_num(out, "step_solve_s") >= 0);
}

/* The text report: one of it, with the partition, communication, per-rank
 * lines; rotconv3d's rows generated in place, single precision. */
static void test_text(void)
{
    expect_rc("--gen rotconv3d:8,3,conv=30 --backend cpu --config precond=ilu2,rtol=1e-5 --float", 0);
    CU_ASSERT_EQUAL(count(out, "problem     "), 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "partition   generated in place"));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "interface rows"));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "halo per exchange"));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "comm        halo"));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "per rank"));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "precision=float"));
    /* a preconditioner line for each rank, its own levels */
    char line[32];
    for (int p = 0; p < atoi(np); p++) {
        snprintf(line, sizeof line, " rank %d: ilu2: ", p);
        CU_ASSERT_PTR_NOT_NULL(strstr(out, line));
    }
    CU_ASSERT_EQUAL(count(out, ": ilu2: "), atoi(np));
}

/* A matrix file read by rank 0, partitioned with METIS, two right-hand
 * sides from a file scattered the same way. */
static void test_file(void)
{
    char args[2048];
    snprintf(args, sizeof args, "'%s/matrices/stencil3d_4_4.mtx' --rhs '%s/matrices/stencil3d_4_4_rhs.mtx' "
             "--backend cpu --config rtol=1e-10 --json", src, src);
    expect_rc(args, 0);
    CU_ASSERT_EQUAL(bsr_test_json_num(out, "k"), 2);
    CU_ASSERT_EQUAL(bsr_test_json_num(out, "block_rows"), 64);
    CU_ASSERT_EQUAL(bsr_test_json_num(out, "block"), 4);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "\"method\": \"METIS k-way\""));
    CU_ASSERT(bsr_test_json_num(out, "true_relres") <= 1e-10);
}

/* Failures: exit 1 for an unreadable file (rank 0's message, once), 2 for
 * usage errors and serial-only options, 3 when not converged; no hang. */
static void test_failures(void)
{
    char args[1024];
    snprintf(args, sizeof args, "'%s/no/such.mtx' --backend cpu", dir);
    expect_rc(args, 1);
    CU_ASSERT_EQUAL(count(err, "bsrsolve: I/O error"), 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "no/such.mtx"));
    expect_rc("--gen stencil3d:6 --backend cpu --plot h.png", 2);
    CU_ASSERT_EQUAL(count(err, "--plot is not supported in a distributed solve"), 1);
    expect_rc("--gen stencil3d:6 --bogus", 2);
    CU_ASSERT_EQUAL(count(err, "unknown option --bogus"), 1);
    expect_rc("--gen stencil3d:6 --backend cpu --config bogus=1", 2);
    CU_ASSERT_EQUAL(count(err, "unknown key 'bogus'"), 1);
    expect_rc("--gen nosuch:3 --backend cpu", 2);
    expect_rc("--gen stencil3d:6 --block 4 --backend cpu", 2);
    /* a --rhs that is no keyword and no file: a usage error naming the forms */
    snprintf(args, sizeof args, "'%s/matrices/stencil3d_4_4.mtx' --rhs '%s/none.mtx' --backend cpu", src, dir);
    expect_rc(args, 2);
    CU_ASSERT_EQUAL(count(err, "none.mtx"), 1);
    CU_ASSERT_EQUAL(count(err, "--rhs takes B.mtx (a Matrix Market file), ones"), 1);
    expect_rc("--gen stencil3d:6 --backend cpu --config maxit=2,rtol=1e-12", 3);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "maxit"));
    if (!bsr_test_have_gpu()) {
        expect_rc("--gen stencil3d:6 --backend cuda", 1);
        CU_ASSERT_EQUAL(count(err, "no usable CUDA device"), 1);
    }
}

int main(int argc, char **argv)
{
    cli = getenv("BSR_CLI");
    mpiexec = getenv("BSR_MPIEXEC");
    np = getenv("BSR_NP");
    src = getenv("BSR_SOURCE_DIR");
    if (!cli || !mpiexec || !np || !src) {
        printf("test_dist_cli: BSR_CLI, BSR_MPIEXEC, BSR_NP and BSR_SOURCE_DIR must be set (ctest sets them)\n");
        return 77;
    }
    static const bsr_test tests[] = {
        {"JSON: one object with the partition and communication", test_json},
        {"text report", test_text},
        {"matrix file read by rank 0 and scattered", test_file},
        {"failures: exit codes, one message, no hang", test_failures},
        {NULL, NULL},
    };
    char suite[32];
    snprintf(suite, sizeof suite, "dist_cli_np%s", np);
    return bsr_test_main_tmpdir(suite, tests, argc, argv, dir, sizeof dir);
}
