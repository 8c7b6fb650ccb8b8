/* SPDX-License-Identifier: BSD-3-Clause */
/* Shared pieces of the bsrsolve command-line tool. */
#ifndef BSR_CLI_H
#define BSR_CLI_H

#include "bsrsolve.h"
#include "internal.h" /* bsr_now: the library's timer */
#include <stdio.h>

/* Subcommands, one file each: `bsrsolve bench NAME ...` calls bench_NAME(argc, argv)
 * with argv[0] = NAME. */
int bench_spmm(int argc, char **argv);    /* bench/bench_spmm.c */
int bench_ilu(int argc, char **argv);     /* bench/bench_ilu.c */
int bench_trsv(int argc, char **argv);    /* bench/bench_trsv.c */
int bench_trsvcpu(int argc, char **argv); /* bench/bench_trsvcpu.c */
int bench_rbgs(int argc, char **argv);    /* bench/bench_rbgs.c */
int bench_sor(int argc, char **argv);     /* bench/bench_sor.c */
int bench_pyramid(int argc, char **argv); /* bench/bench_pyramid.c */

/* `bsrsolve FILE --info`: matrix statistics (bench/cmd_info.c). */
int cmd_info(int argc, char **argv);
/* `bsrsolve [FILE]`: read/generate, set up, solve, report (bench/cmd_solve.c). */
int cmd_solve(int argc, char **argv);
#ifdef BSR_HAVE_MPI
/* The same under mpiexec with more than one rank: the distributed solve
 * (bench/cmd_dsolve.c); MPI is initialized. */
int cmd_dsolve(int argc, char **argv);
#endif
/* Print the solve options (bench/cmd_solve.c). */
void cli_usage_solve(FILE *f);
/* Print ordering/tree/level summary for --reorder SPEC (bench/cmd_reorder.c);
 * json: append keys to an open JSON object on stdout.  A NULL: only check
 * that every spec parses (0, or 1 with the error on stderr). */
int cli_reorder_info(const bsr_matrix *A, const char *spec, int json);

/* Option helpers (bench/cli.c). */
/* Value following option `name` (e.g. "--block"), or NULL if absent. */
const char *cli_opt(int argc, char **argv, const char *name);
/* Nonzero when flag `name` is present. */
int cli_flag(int argc, char **argv, const char *name);
/* Progress of long setups (the library's phase marks, prof.c): each phase of
 * 1 s or more reported on stderr as it ends, with --progress or when stderr is
 * a terminal (BSR_PROGRESS=S in the environment: the threshold, and on without
 * a terminal); off with --no-progress or when show is 0 (ranks other than 0). */
void cli_progress(int argc, char **argv, int show);
/* First argument that is not an option or an option's value (the matrix file), or NULL.
 * valued: NULL-terminated list of options that take a value. */
const char *cli_positional(int argc, char **argv, const char *const *valued);
/* Reject any option not in `known` (NULL-terminated, valued ones too); prints and returns nonzero. */
int cli_check_options(int argc, char **argv, const char *const *known, const char *const *valued);
/* 0 when the --rhs value is ones, random:K (where random is nonzero) or an existing file;
 * else 2 with the accepted forms on stderr (a usage error). */
int cli_check_rhs(const char *rhs, int random);
/* BSR_ERR_ARG for a matrix file with --gen, or --block without a file. */
bsr_status cli_load_args(const char *file, const char *gen, const char *block);
/* Load the problem: from FILE (Matrix Market, --block B|auto) or --gen SPEC;
 * with neither, the embedded default `def` (a generator spec). */
bsr_status cli_load(const char *file, const char *gen, const char *block, bsr_precision prec,
                    const char *def, bsr_problem *P, bsr_convert_info *cinfo);
/* A dense Matrix Market file as an n x k multivector (k = its columns;
 * kwant > 0: it must have that many). */
bsr_status cli_read_dense(const char *path, int64_t n, bsr_precision prec, int kwant, bsr_multivec **X);
/* X (n x k) written as a dense Matrix Market file (`array real general`). */
bsr_status cli_write_dense(const char *path, const bsr_multivec *X);
/* Print "bsrsolve: <status>: <detail>" to stderr and return the exit code:
 * 2 for BSR_ERR_ARG (a bad command-line value), else 1. */
int cli_fail(bsr_status s);
/* Print s to f as a JSON string literal (quotes, backslashes and control
 * characters escaped): file names and specs may contain any of them. */
void cli_json_str(FILE *f, const char *s);
/* "key": [v0, ...] on stdout (%.6e; null for a non-finite value, all null
 * when v is NULL), then "," when comma, and a newline. */
void cli_json_array_d(const char *key, const double *v, int k, int comma);
/* The per-column fields of a solve's JSON object on stdout: "status",
 * "iterations", "restarts", "at_rounding_floor", "singular", "true_relres", each followed by ",". */
void cli_json_columns(const bsr_solver_stats *st, int k);
/* A "note" line when columns converged at the rounding floor (BSR_CONVERGED_FLOOR), one
 * for each column whose floor verdict was refused (col.singular): "rhs J stopped at maxit,
 * system singular or too ill-conditioned in this precision", and one for each column whose
 * error estimate (option etol) corrected it or is a lower bound. */
void cli_col_notes(const bsr_solver_stats *st);

#define CLI_DEFAULT_PROBLEM "stencil3d:40:4"

#endif
