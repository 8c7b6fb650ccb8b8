/* SPDX-License-Identifier: BSD-3-Clause */
/* Test harness shared by the CUnit suites: registration, GPU skip, helpers. */
#ifndef BSR_TEST_HARNESS_H
#define BSR_TEST_HARNESS_H

#include <CUnit/Basic.h>
#include "bsrsolve.h"

typedef struct { const char *name; void (*fn)(void); } bsr_test;

/* Run one suite of tests (only those whose name contains $BSR_TEST_FILTER when set); returns the process exit code (0 ok, 1 failures,
 * 77 = skipped, which ctest reports as a skip). */
int bsr_test_main(const char *suite, const bsr_test *tests, int argc, char **argv);

/* bsr_test_main with a fresh temporary folder: dir (size n) receives
 * "$TMPDIR/bsr_<suite>_XXXXXX" before the tests run; removed afterwards. */
int bsr_test_main_tmpdir(const char *suite, const bsr_test *tests, int argc, char **argv, char *dir,
                         size_t n);

/* Nonzero when a CUDA device is usable; otherwise prints why once. */
int bsr_test_have_gpu(void);
/* Nonzero when BSR_TEST_QUICK is set to a value other than "0"
 * (scripts/gpu-sanitize.sh sets it: under compute-sanitizer the GPU suites
 * run 10-100x slower): the GPU suites then take fewer sizes, block sizes and
 * combinations, each kernel path still at least once. */
int bsr_test_quick(void);
/* Skip the rest of a test, saying why: prints "[skip] why" and records one
 * passing assert, so that a suite whose checks all skipped says so instead
 * of passing with 0 asserts.  Suites that need a GPU throughout return 77
 * instead (bsr_test_gpu_main), which ctest reports as skipped. */
#define BSR_TEST_SKIP(why)                    \
    do {                                      \
        printf("\n  [skip] %s ... ", (why)); \
        CU_PASS(why);                         \
    } while (0)
/* bsr_test_main for a suite that needs a GPU: 77 (skipped) without one, else
 * *ctx = a CUDA context on device 0 (printed) for the tests, destroyed after. */
int bsr_test_gpu_main(const char *suite, const bsr_test *tests, int argc, char **argv, bsr_context **ctx);
/* Path to a real-matrix folder ("" when absent: tests skip with a message). */
const char *bsr_test_real_dir(void);
/* Paths of the *.mtx files of the real-matrix folder, sorted by name (so every
 * run and file system tests the same ones), at most max; *list is NULL and the
 * count 0 when the folder is absent or empty.  Free with bsr_test_free_list. */
int bsr_test_real_list(char ***list, int max);
void bsr_test_free_list(char **list, int n);
/* The tests' LCG (Knuth's MMIX constants): the next state of *s, and
 * uniform values from it in [0, 1) and in [-1, 1) (53 bits, exact). */
uint64_t bsr_test_lcg(uint64_t *s);
double bsr_test_unif(uint64_t *s);
double bsr_test_unif_pm(uint64_t *s);
/* Random sparse BSR matrix: nbrows x nbcols, row lengths drawn in [minlen,maxlen],
 * values in [-1,1), deterministic from seed. */
bsr_matrix *bsr_test_random_matrix(int nbrows, int nbcols, int b, int minlen, int maxlen,
                                   bsr_precision prec, uint64_t seed);
/* Square random pattern with irregular rows (setup thread-count tests): most
 * rows have 1..8 blocks, mostly near the diagonal, every 97th row ~45, every
 * 7th row lacks its diagonal (the row above covers that column), so no row or
 * column is empty; values in [-1,1) plus 4 on the diagonal; deterministic. */
bsr_matrix *bsr_test_irregular_matrix(int n, int b, uint64_t seed);
/* n block rows: the first n - nt with no lower block (one wide level of a
 * natural-order L), about 3 upper blocks near the diagonal and a quarter of
 * the last nt columns; the last nt reading every row of the chain before
 * them and 3 in 4 of the others (a separator's rows after fill); values in
 * [-1, 1), 4 b on the diagonal blocks' diagonal; deterministic. */
bsr_matrix *bsr_test_chain_tail_matrix(int n, int nt, int b, uint64_t seed);
/* R with a block added on each diagonal (summed with R's own): diagonal
 * entries diag * b * (row length + 1), off-diagonal entry e of the block
 * off * e / b^2, so that ILU of a random pattern is stable. */
bsr_matrix *bsr_test_dominant(const bsr_matrix *R, double diag, double off);
/* A copy of A (precision prec) with its off-diagonal blocks times f: new
 * values on A's pattern. */
bsr_matrix *bsr_test_offdiag_scaled(const bsr_matrix *A, double f, bsr_precision prec);
/* Symbolic-only ILU(0) setup of A under ordering kind (default options, ND
 * depth auto): the patterns, map and schedules without values; NULL (and a
 * failed assertion) on error. */
bsr_ilu *bsr_test_ilu0_symbolic(const bsr_matrix *A, bsr_order_kind kind);
/* ILU(0) setup of A under ordering kind (default options otherwise, ND depth
 * auto), factors included; NULL (and a failed assertion) on error. */
bsr_ilu *bsr_test_ilu0(const bsr_matrix *A, bsr_order_kind kind);
/* A solver on ctx (NULL: the CPU) from the option string cfg, set up for A
 * (each step asserted). */
bsr_solver *bsr_test_solver(bsr_context *ctx, const char *cfg, const bsr_matrix *A);
/* A X = B solved from X = 0 by a solver made for A under cfg on ctx (NULL:
 * the CPU), then freed; returns the solve's status, its stats in *st. */
bsr_status bsr_test_solve(bsr_context *ctx, const char *cfg, const bsr_matrix *A, const bsr_multivec *B,
                          bsr_multivec *X, bsr_solver_stats *st);
/* Column j of the double multivector B (n x k) solved alone from 0 as
 * bsr_test_solve does on the CPU (its status asserted, its stats in *st):
 * 1 when that solution has the bits of column j of X (B's batch solution,
 * double), 0 otherwise. */
int bsr_test_column_alone(const char *cfg, const bsr_matrix *A, const bsr_multivec *B, const bsr_multivec *X, int j,
                          bsr_solver_stats *st);
/* Dense reference Y = alpha*A*X + beta*Y0 in double for checking kernels;
 * returns max over entries of |Y - ref| / (|A||X| + |beta||Y0|)_entry. */
double bsr_test_spmm_error(double alpha, const bsr_matrix *A, const bsr_multivec *X, double beta,
                           const bsr_multivec *Y0, const bsr_multivec *Y);
/* Worst column of ||X(:,j) - Y(:,j)|| / ||Y(:,j)||, computed in double. */
double bsr_test_rel_err(const bsr_multivec *X, const bsr_multivec *Y);
/* *P the generator spec's problem (double) with k exact solutions *Xs
 * (bsr_multivec_random of seed) and *B = A Xs. */
void bsr_test_problem_k(const char *spec, int k, uint64_t seed, bsr_problem *P, bsr_multivec **B,
                        bsr_multivec **Xs);
/* A new double multivector of B's rows and columns (a solution's). */
bsr_multivec *bsr_test_x_like(const bsr_multivec *B);
/* max |Y - R| / max |R| over the host copies, any precisions (INFINITY when Y
 * holds a NaN or Inf: a kernel that left its NaN-poisoned output unwritten). */
double bsr_test_max_rel_err(const bsr_multivec *Y, const bsr_multivec *R);
/* max |d - c| / max |c| over m values, c of precision p (device factors
 * against the host's); INFINITY when some d is not finite. */
double bsr_test_rel_diff(const double *d, const void *c, bsr_precision p, size_t m);
/* n x k random values of precision p (seed), uploaded to ctx's device, host copy kept. */
bsr_multivec *bsr_test_dev_random(bsr_context *ctx, int64_t n, int k, bsr_precision p, uint64_t seed);
/* n x k of NaN on the host and ctx's device: output a kernel must overwrite. */
bsr_multivec *bsr_test_dev_poisoned(bsr_context *ctx, int64_t n, int k, bsr_precision p);
/* Nonzero when the host copies of A and B (same shape and precision) are equal bit for bit. */
int bsr_test_same_bits(const bsr_multivec *A, const bsr_multivec *B);
/* Read the file at path into buf (NUL-terminated, truncated to cap - 1
 * bytes; empty when it cannot be opened). */
void bsr_test_slurp(const char *path, char *buf, size_t cap);
/* Write text to dir/name (a failed assertion, fatal to the test, when it
 * cannot be opened); path (cap bytes) receives "dir/name" and is returned. */
const char *bsr_test_put(const char *dir, const char *name, const char *text, char *path, size_t cap);
/* Run `cli args` (stdin /dev/null) with stdout and stderr captured through
 * files in dir into out and err (each of cap bytes); the exit code, -1 when
 * the command did not exit normally. */
int bsr_test_run_cli(const char *cli, const char *dir, const char *args, char *out, char *err, size_t cap);
/* A suite that runs the CLI: its file-scope state, cli ($BSR_CLI), dir (the
 * suite's temporary folder), out and err (stdout and stderr of the last run),
 * and run(args), `$BSR_CLI args` captured into out and err, its exit code. */
#define BSR_TEST_CLI_SUITE                                                      \
    static const char *cli;                                                     \
    static char dir[256];                                                       \
    static char out[1 << 16], err[1 << 16];                                     \
    static int run(const char *args) { return bsr_test_run_cli(cli, dir, args, out, err, sizeof out); }
/* bsr_test_main_tmpdir (into dir, size n) for a suite that runs the CLI:
 * *cli = $BSR_CLI (NULL when unset or empty); without it, need_cli makes the
 * suite a skip (77), else the tests that need it skip themselves. */
int bsr_test_cli_main(const char *suite, const bsr_test *tests, int argc, char **argv, const char **cli,
                      char *dir, size_t n, int need_cli);
/* The number after "key": in a JSON text (spaces and an opening '[' passed
 * over); NAN when the key is absent, json is NULL or no number follows. */
double bsr_test_json_num(const char *json, const char *key);
/* Solver options *o parsed from cfg, printed into buf (cap bytes) and parsed
 * back into *p: asserts that p equals o byte for byte (printing cfg and buf
 * when not); returns whether. */
int bsr_test_options_round_trip(const char *cfg, bsr_solver_options *o, bsr_solver_options *p, char *buf,
                                size_t cap);
/* Nonzero when a[0..n) and b[0..n) are equal. */
int bsr_test_same_ints(const int *a, const int *b, size_t n);
/* Assert a status and print the last error if it differs. */
#define BSR_ASSERT_OK(expr)                                                                     \
    do {                                                                                        \
        bsr_status _s = (expr);                                                                 \
        if (_s != BSR_OK) fprintf(stderr, "\n  %s -> %s: %s\n", #expr, bsr_status_string(_s), \
                                  bsr_last_error());                                            \
        CU_ASSERT_EQUAL_FATAL(_s, BSR_OK);                                                      \
    } while (0)

#endif
