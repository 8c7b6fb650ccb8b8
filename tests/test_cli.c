/* SPDX-License-Identifier: BSD-3-Clause */
/* The bsrsolve CLI (binary from $BSR_CLI, set by CMake; skip 77 if unset):
 * --help, --info --json on a file and on a generator, errors on stderr with
 * file:line, non-zero exit codes on bad input. */
#include "harness.h"
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

BSR_TEST_CLI_SUITE

/* Test: --help. */
static void test_help(void)
{
    CU_ASSERT_EQUAL(run("--help"), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "usage"));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "--gen"));
}

/* run() of the command line fmt with its one %s replaced by s. */
static int run_with(const char *fmt, const char *s)
{
    char args[1400];
    snprintf(args, sizeof args, fmt, s);
    return run(args);
}

/* Asserts that text (stdout or stderr of the last run) holds the string
 * fmt formats (printf) with the arguments that follow; prints both when not. */
static void expect_has(const char *text, const char *fmt, ...)
{
    char want[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(want, sizeof want, fmt, ap);
    va_end(ap);
    CU_ASSERT_PTR_NOT_NULL(strstr(text, want));
    if (!strstr(text, want)) printf("\n  want %s in\n%.400s", want, text);
}

/* The JSON of `--info --json` matches what the library says of the same matrix. */
static void expect_info(const char *json, const bsr_matrix *A)
{
    bsr_matrix_info f;
    BSR_ASSERT_OK(bsr_matrix_get_info(A, &f));
    CU_ASSERT_EQUAL(bsr_test_json_num(json, "n"), (double)f.n);
    CU_ASSERT_EQUAL(bsr_test_json_num(json, "block"), f.b);
    CU_ASSERT_EQUAL(bsr_test_json_num(json, "block_rows"), f.nbrows);
    CU_ASSERT_EQUAL(bsr_test_json_num(json, "nnzb"), f.nnzb);
    CU_ASSERT_DOUBLE_EQUAL(bsr_test_json_num(json, "fill_ratio"), f.fill_ratio, 1e-5 * f.fill_ratio);
    const char *s = json;
    while (*s == ' ' || *s == '\n') s++;
    CU_ASSERT_EQUAL(*s, '{');
    CU_ASSERT_PTR_NOT_NULL(strstr(json, "}"));
}

/* Test: --info --json FILE. */
static void test_info_file(void)
{
    /* a 3 x 3 block stencil with one zero-padded block: fill ratio > 1 */
    bsr_problem P;
    BSR_ASSERT_OK(bsr_generate("stencil3d:3:3", BSR_DOUBLE, &P));
    bsr_csr C;
    BSR_ASSERT_OK(bsr_to_csr(P.A, 0, &C));
    C.val[1] = 0; /* an explicit zero inside a block: info's fill ratio (stored / nonzero) > 1 */
    char path[512], args[1024];
    snprintf(path, sizeof path, "%s/small.mtx", dir);
    BSR_ASSERT_OK(bsr_mm_write_csr(path, &C));
    bsr_csr_free(&C);
    bsr_problem_free(&P);
    for (int b = 0; b <= 3; b += 3) {
        bsr_matrix *A;
        BSR_ASSERT_OK(bsr_mm_read(path, b, BSR_DOUBLE, &A, NULL));
        snprintf(args, sizeof args, "--info --json '%s' --block %s", path, b ? "3" : "auto");
        CU_ASSERT_EQUAL(run(args), 0);
        expect_info(out, A);
        CU_ASSERT_EQUAL(bsr_test_json_num(out, "n"), 81);
        CU_ASSERT_EQUAL(bsr_test_json_num(out, "block_rows"), 81 / bsr_matrix_block(A));
        bsr_matrix_destroy(A);
    }
    CU_ASSERT_EQUAL(bsr_test_json_num(out, "block"), 3);
    CU_ASSERT_EQUAL(bsr_test_json_num(out, "nnzb"), 27 + 6 * 2 * 9);
    CU_ASSERT(bsr_test_json_num(out, "fill_ratio") > 1.0);
    /* plain text mode also succeeds and says the sizes */
    CU_ASSERT_EQUAL(run_with("'%s' --info", path), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "81"));
    /* a file name with a quote and a backslash stays one valid JSON string */
    char odd[600];
    bsr_test_put(dir, "a\"b\\c.mtx", "%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 1\n2 2 1\n", odd,
                 sizeof odd);
    CU_ASSERT_EQUAL(run_with("--info --json '%s' --reorder rcm", odd), 0);
    expect_has(out, "{\"name\": \"%s/a\\\"b\\\\c.mtx\", \"n\": 2,", dir);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "\"reorder\": [{\"spec\": \"rcm\", "));
}

/* Test: --gen --info --json. */
static void test_info_gen(void)
{
    CU_ASSERT_EQUAL(run("--gen stencil3d:4:3 --info --json"), 0);
    CU_ASSERT_EQUAL(bsr_test_json_num(out, "n"), 192);
    CU_ASSERT_EQUAL(bsr_test_json_num(out, "block"), 3);
    CU_ASSERT_EQUAL(bsr_test_json_num(out, "block_rows"), 64);
    CU_ASSERT_EQUAL(bsr_test_json_num(out, "nnzb"), 64 + 6 * 3 * 16);
    bsr_problem P;
    BSR_ASSERT_OK(bsr_generate("stencil3d:4:3", BSR_DOUBLE, &P));
    expect_info(out, P.A);
    bsr_problem_free(&P);
}

/* JSON validator: advances *p past one value (RFC 8259 grammar, no depth
 * limit needed for the CLI's flat objects); 0 on a syntax error. */
static int json_value(const char **p)
{
    const char *s = *p;
    while (*s == ' ' || *s == '\n' || *s == '\t' || *s == '\r') s++;
    if (*s == '{' || *s == '[') {
        char close = *s == '{' ? '}' : ']';
        int obj = *s++ == '{', first = 1;
        for (;;) {
            while (*s == ' ' || *s == '\n') s++;
            if (*s == close && first) { s++; break; }
            if (obj) {
                while (*s == ' ' || *s == '\n') s++;
                if (*s != '"' || !json_value(&s)) return 0;
                while (*s == ' ' || *s == '\n') s++;
                if (*s++ != ':') return 0;
            }
            if (!json_value(&s)) return 0;
            while (*s == ' ' || *s == '\n') s++;
            if (*s == close) { s++; break; }
            if (*s++ != ',') return 0;
            first = 0;
        }
    } else if (*s == '"') {
        for (s++; *s != '"'; s++) {
            if ((unsigned char)*s < 0x20) return 0; /* raw control byte, or the end */
            if (*s == '\\' && (!*++s || !strchr("\"\\/bfnrtu", *s))) return 0;
        }
        s++;
    } else if (!strncmp(s, "true", 4) || !strncmp(s, "null", 4)) {
        s += 4;
    } else if (!strncmp(s, "false", 5)) {
        s += 5;
    } else {
        char *end;
        strtod(s, &end);
        if (end == s) return 0;
        s = end;
    }
    *p = s;
    return 1;
}

/* Is text exactly one JSON value (surrounding white space allowed)? */
static int json_valid(const char *text)
{
    const char *p = text;
    if (!json_value(&p)) return 0;
    while (*p == ' ' || *p == '\n') p++;
    return *p == 0;
}

/* Test: solve --json on a file whose name holds a quote and a backslash. */
static void test_solve_json_name(void)
{
    const char *src = getenv("BSR_SOURCE_DIR");
    if (!src) { BSR_TEST_SKIP("BSR_SOURCE_DIR unset (run through ctest)"); return; }
    char from[512], odd[600], want[700];
    snprintf(from, sizeof from, "%s/matrices/stencil3d_4_4.mtx", src);
    char *text = malloc(1 << 20);
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    bsr_test_slurp(from, text, 1 << 20);
    CU_ASSERT_FATAL(text[0] != 0);
    bsr_test_put(dir, "s\"q\\t.mtx", text, odd, sizeof odd);
    free(text);
    CU_ASSERT_EQUAL(run_with("'%s' --backend cpu --json --config rtol=1e-6", odd), 0);
    snprintf(want, sizeof want, "\"problem\": \"%s/s\\\"q\\\\t.mtx\",", dir);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, want));
    CU_ASSERT(json_valid(out));
    if (!strstr(out, want) || !json_valid(out)) printf("\n  want %s in\n%s", want, out);
    /* the validator itself rejects the unescaped form */
    CU_ASSERT(!json_valid("{\"problem\": \"a\"b\"}"));
    CU_ASSERT(json_valid("{\"problem\": \"a\\\"b\\\\\", \"k\": [1, 2e-3, null]}"));
}

/* Test: progress of long setups (issue 40: a 73 s ILU2 setup printed one
 * line in 73 s).  Each phase of at least the threshold is reported on stderr
 * as it ends ("bsrsolve: ilu setup: ordering 0.0 s"): BSR_PROGRESS=S sets the
 * threshold (and turns it on); --progress turns it on at 1 s (these phases
 * are far shorter: nothing), --no-progress off; by default only when stderr
 * is a terminal (here it is a file: nothing).  stdout is never touched. */
static void test_progress(void)
{
    static const char *const args = "--gen stencil3d:6:4 --backend cpu --config precond=ilu2 --json";
    char a[256];
    unsetenv("BSR_PROGRESS");
    CU_ASSERT_EQUAL(run(args), 0);
    CU_ASSERT_PTR_NULL(strstr(err, "bsrsolve: ilu"));
    snprintf(a, sizeof a, "%s --progress", args);
    CU_ASSERT_EQUAL(run(a), 0);
    CU_ASSERT_PTR_NULL(strstr(err, "bsrsolve: ilu"));
    setenv("BSR_PROGRESS", "1e-9", 1);
    CU_ASSERT_EQUAL(run(args), 0);
    const char *phases[] = {"bsrsolve: ilu setup: ordering ", "bsrsolve: ilu factor: rows ",
                            "bsrsolve: solve: Krylov iterations ", NULL};
    for (int i = 0; phases[i]; i++) {
        const char *p = strstr(err, phases[i]);
        CU_ASSERT_PTR_NOT_NULL(p);
        if (!p) { printf("\n  no '%s' in stderr:\n%s", phases[i], err); continue; }
        char *end;
        double t = strtod(p + strlen(phases[i]), &end);
        CU_ASSERT(t >= 0 && !strncmp(end, " s\n", 3));
    }
    CU_ASSERT_PTR_NULL(strstr(out, "bsrsolve: ilu"));
    CU_ASSERT(json_valid(out));
    /* within the factorization: its rows counted now and then */
    const char *tick = strstr(err, "bsrsolve: ilu factor: ");
    long long done = -1, total = -1;
    while (tick && sscanf(tick, "bsrsolve: ilu factor: %lld of %lld rows", &done, &total) != 2)
        tick = strstr(tick + 1, "bsrsolve: ilu factor: ");
    CU_ASSERT(tick && done >= 1 && done <= total && total == 216);
    /* within the nested dissection (METIS is silent): rows placed so far */
    const char *nd = strstr(err, "bsrsolve: nested dissection (METIS separators): ");
    done = total = -1;
    CU_ASSERT(nd && sscanf(nd, "bsrsolve: nested dissection (METIS separators): %lld of %lld rows placed", &done,
                           &total) == 2 && done >= 1 && done <= total && total == 216);
    snprintf(a, sizeof a, "%s --no-progress", args);
    CU_ASSERT_EQUAL(run(a), 0);
    CU_ASSERT_PTR_NULL(strstr(err, "bsrsolve: ilu"));
    /* a refactor's phases too (--steps) */
    snprintf(a, sizeof a, "%s --steps 1", args);
    CU_ASSERT_EQUAL(run(a), 0);
    const char *f = strstr(err, "bsrsolve: ilu numeric: scaling");
    CU_ASSERT(f && strstr(f + 1, "bsrsolve: ilu numeric: scaling"));   /* setup, then the step's refactor */
    unsetenv("BSR_PROGRESS");
}

/* Test: errors: exit code and file:line on stderr. */
static void test_errors(void)
{
    char path[512];
    bsr_test_put(dir, "bad.mtx", "%%MatrixMarket matrix coordinate real general\n% c\n3 3 2\n1 1 1\n4 1 2\n", path,
                 sizeof path);
    CU_ASSERT_NOT_EQUAL(run_with("'%s' --info", path), 0);
    expect_has(err, "%s:5: row index 4 out of range 1..3", path);
    CU_ASSERT_EQUAL(out[0], 0); /* nothing half-printed on stdout */
    /* missing file */
    CU_ASSERT_NOT_EQUAL(run_with("'%s/none.mtx' --info --json", dir), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "none.mtx"));
    /* unknown option, bad block size, bad generator */
    CU_ASSERT_NOT_EQUAL(run("--info --bogus"), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "--bogus"));
    /* a bad --reorder spec fails before anything is printed (no half JSON) */
    CU_ASSERT_NOT_EQUAL(run("--gen poisson2d:9 --info --json --reorder rcm+nd:zz"), 0);
    CU_ASSERT_STRING_EQUAL(out, "");
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "nd:zz"));
    CU_ASSERT_NOT_EQUAL(run_with("'%s/small.mtx' --info --block 0", dir), 0); /* written by test_info_file */
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "--block"));
    CU_ASSERT_NOT_EQUAL(run_with("'%s/small.mtx' --info --block 2", dir), 0); /* 81 % 2 != 0 */
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "small.mtx"));
    CU_ASSERT_NOT_EQUAL(run("--gen nosuch:3 --info"), 0);
    CU_ASSERT(err[0] != 0);
    /* a non-square matrix where a square one is needed */
    bsr_test_put(dir, "rect.mtx", "%%MatrixMarket matrix coordinate real general\n2 3 1\n1 3 1\n", path, sizeof path);
    CU_ASSERT_NOT_EQUAL(run_with("'%s' --info", path), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "square"));
}

/* Test: diag=1 adds the stability line (text) and object (JSON) of the host
 * ILU factors; nothing without it; a preconditioner that is no ILU says so. */
static void test_solve_diag(void)
{
    const char *gen = "--gen coupled3d:6,5 --backend cpu --no-progress";
    CU_ASSERT_EQUAL(run_with("%s --config method=gmres,precond=ilu2", gen), 0);
    CU_ASSERT_PTR_NULL(strstr(out, "stability"));
    CU_ASSERT_EQUAL(run_with("%s --config method=gmres,precond=ilu2,diag=1", gen), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "stability   ||L^-1|| est "));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, ",diag=1"));
    CU_ASSERT_EQUAL(run_with("%s --json --config method=gmres,precond=ilu2,diag=1", gen), 0);
    CU_ASSERT(json_valid(out));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "\"stability\": {"));
    double l = bsr_test_json_num(out, "l_max"), u = bsr_test_json_num(out, "u_max"), pc = bsr_test_json_num(out, "pivot_cond_max");
    CU_ASSERT(l >= 1.0 && u > 0.0 && pc >= 1.0);
    if (!(l >= 1.0 && u > 0.0 && pc >= 1.0)) printf("\n%s", out);
    CU_ASSERT_EQUAL(run_with("%s --config precond=jacobi,diag=1", gen), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "stability   no ILU preconditioner"));
}

/* Test: --steps says how the steps' error control went, in the report and
 * the JSON: on stencil3d the first solve's estimate lets every step predict
 * its error; on coupled3d (error / relres larger) every step aims past rtol
 * and predicts it, and with a target the aim cannot reach (etol 1e-13)
 * every step estimates it; etol=off: no line.  And how many steps failed
 * (maxit 2: every one). */
static void test_solve_steps(void)
{
    const char *st = "--gen stencil3d:10:4 --backend cpu --no-progress --steps 3";
    const char *cp = "--gen coupled3d:8,4 --backend cpu --no-progress --steps 3";
    const char *cfg = "precond=ilu2,cap=auto,reorder=rcm,rtol=1e-8";
    char a[256];
    snprintf(a, sizeof a, "%s --config %s", st, cfg);
    CU_ASSERT_EQUAL(run(a), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "error control (etol): 0 step(s) estimated the error, 3 predicted it"));
    CU_ASSERT_PTR_NULL(strstr(out, "step(s) failed"));
    snprintf(a, sizeof a, "%s --config %s", cp, cfg);
    CU_ASSERT_EQUAL(run(a), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "error control (etol): 0 step(s) estimated the error, 3 predicted it"));
    snprintf(a, sizeof a, "%s --json --config %s,etol=1e-13", cp, cfg);
    CU_ASSERT_EQUAL(run(a), 0);
    CU_ASSERT(json_valid(out));
    CU_ASSERT_EQUAL(bsr_test_json_num(out, "steps_etol_measured"), 3);
    CU_ASSERT_EQUAL(bsr_test_json_num(out, "steps_etol_predicted"), 0);
    CU_ASSERT_EQUAL(bsr_test_json_num(out, "steps_failed"), 0);
    CU_ASSERT_EQUAL(run_with("%s --config precond=ilu2,etol=off,maxit=2,fallback=off", cp), 3);
    CU_ASSERT_PTR_NULL(strstr(out, "error control (etol)"));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "3 step(s) failed: a column not converged"));
}

int main(int argc, char **argv)
{
    static const bsr_test tests[] = {
        {"--help", test_help},
        {"--info --json FILE", test_info_file},
        {"--gen --info --json", test_info_gen},
        {"errors: exit code and file:line on stderr", test_errors},
        {"solve --json escapes the file name", test_solve_json_name},
        {"progress of the setup phases", test_progress},
        {"solve diag=1: the stability report", test_solve_diag},
        {"solve --steps: the steps' error control and failures", test_solve_steps},
        {NULL, NULL},
    };
    return bsr_test_cli_main("cli", tests, argc, argv, &cli, dir, sizeof dir, 1);
}
