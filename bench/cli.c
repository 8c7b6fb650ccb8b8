/* SPDX-License-Identifier: BSD-3-Clause */
/* Option parsing, problem loading and small utilities for the CLI. */
#include "cli.h"
#include "internal.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* 1 when s is one of the NULL-terminated list. */
static int in_list(const char *s, const char *const *list)
{
    for (; list && *list; list++)
        if (!strcmp(s, *list)) return 1;
    return 0;
}

/* Value following option name in argv, or NULL. */
const char *cli_opt(int argc, char **argv, const char *name)
{
    for (int i = 1; i < argc - 1; i++)
        if (!strcmp(argv[i], name)) return argv[i + 1];
    return NULL;
}

/* 1 when flag name is in argv. */
int cli_flag(int argc, char **argv, const char *name)
{
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], name)) return 1;
    return 0;
}

void cli_progress(int argc, char **argv, int show)
{
    if (!show || cli_flag(argc, argv, "--no-progress")) { bsr_progress_enable(0); return; }
    if (bsr_progress_min() > 0) return;   /* BSR_PROGRESS: already on, its threshold kept */
    if (cli_flag(argc, argv, "--progress") || isatty(STDERR_FILENO)) bsr_progress_enable(1.0);
}

/* First argument that is neither an option nor the value of a valued option, or NULL. */
const char *cli_positional(int argc, char **argv, const char *const *valued)
{
    for (int i = 1; i < argc; i++) {
        if (argv[i][0] == '-' && argv[i][1]) { if (in_list(argv[i], valued)) i++; continue; }
        return argv[i];
    }
    return NULL;
}

/* 0 when every option is known (valued ones followed by a value); otherwise 1 with the
 * offender on stderr. */
int cli_check_options(int argc, char **argv, const char *const *known, const char *const *valued)
{
    int npos = 0;
    for (int i = 1; i < argc; i++) {
        if (argv[i][0] == '-' && argv[i][1]) {
            if (in_list(argv[i], valued)) {
                if (i + 1 >= argc) { fprintf(stderr, "bsrsolve: option %s needs a value\n", argv[i]); return 2; }
                i++;
            } else if (!in_list(argv[i], known)) {
                fprintf(stderr, "bsrsolve: unknown option %s (see --help)\n", argv[i]);
                return 2;
            }
        } else if (++npos > 1) {
            fprintf(stderr, "bsrsolve: unexpected argument '%s'\n", argv[i]);
            return 2;
        }
    }
    return 0;
}

/* A --rhs value that is none of the forms (random only where allowed): 2
 * with the accepted forms on stderr, else 0.  A name that is no keyword is a
 * file when it exists; one that does not is a usage error, not "cannot open". */
int cli_check_rhs(const char *rhs, int random)
{
    if (!rhs || !strcmp(rhs, "ones") || (random && !strncmp(rhs, "random:", 7))) return 0;
    if (!access(rhs, F_OK)) return 0;
    fprintf(stderr, "bsrsolve: --rhs '%s': no such file, and not a keyword; --rhs takes B.mtx (a Matrix Market "
            "file), ones%s\n", rhs, random ? " or random:K (K = 1..64 random columns)" : "");
    return 2;
}

/* BSR_ERR_ARG for a matrix file and --gen together, or --block without a file. */
bsr_status cli_load_args(const char *file, const char *gen, const char *block)
{
    if (file && gen) return bsr_error(BSR_ERR_ARG, "give a matrix file or --gen, not both");
    if (!file && block) {
        return bsr_error(BSR_ERR_ARG, "--block applies to Matrix Market files; a generator takes its block size in its spec");
    }
    return BSR_OK;
}

/* Problem from a Matrix Market file, a generator spec, or the default problem. */
bsr_status cli_load(const char *file, const char *gen, const char *block, bsr_precision prec,
                    const char *def, bsr_problem *P, bsr_convert_info *cinfo)
{
    memset(P, 0, sizeof *P);
    if (cinfo) { cinfo->b = 0; cinfo->fill_ratio = 1.0; }
    BSR_TRY(cli_load_args(file, gen, block));
    if (!file) return bsr_generate(gen ? gen : def, prec, P);
    int b = 0;
    if (block && strcmp(block, "auto")) {
        char *end;
        long v = strtol(block, &end, 10);
        if (*end || v < 1 || v > BSR_MAX_BLOCK) {
            return bsr_error(BSR_ERR_ARG, "--block must be 1..%d or auto, got '%s'", BSR_MAX_BLOCK, block);
        }
        b = (int)v;
    }
    bsr_status s = bsr_mm_read(file, b, prec, &P->A, cinfo);
    if (s == BSR_OK && bsr_matrix_nbrows(P->A) != bsr_matrix_nbcols(P->A))
        s = bsr_error(BSR_ERR_SIZE, "%s: matrix is not square", file);
    if (s) { bsr_problem_free(P); return s; }
    snprintf(P->name, sizeof P->name, "%s", file);
    return BSR_OK;
}

/* Dense Matrix Market file into an n x k multivector (k = its columns). */
bsr_status cli_read_dense(const char *path, int64_t n, bsr_precision prec, int kwant, bsr_multivec **X)
{
    int nr, nc;
    double *v = NULL;
    BSR_TRY(bsr_mm_read_dense(path, &nr, &nc, &v));
    bsr_status s = BSR_OK;
    if (nr != n || (kwant > 0 && nc != kwant))
        s = bsr_error(BSR_ERR_SIZE, "%s: %d x %d, expected %lld rows%s", path, nr, nc, (long long)n,
                      kwant > 0 ? " and the right-hand sides' column count" : "");
    else if (nc < 1 || nc > 64)
        s = bsr_error(BSR_ERR_UNSUPPORTED, "%s: %d columns (1..64 supported)", path, nc);
    if (!s && !(s = bsr_multivec_create(X, n, nc, prec)) && (s = bsr_multivec_from_colmajor(*X, v, n))) {
        bsr_multivec_destroy(*X);
        *X = NULL;
    }
    free(v);
    return s;
}

/* X (n x k) as a dense Matrix Market file. */
bsr_status cli_write_dense(const char *path, const bsr_multivec *X)
{
    const int64_t n = bsr_multivec_rows(X);
    const int k = bsr_multivec_cols(X);
    double *v = malloc(sizeof(double) * ((size_t)n * k + 1));
    if (!v) return bsr_error(BSR_ERR_NOMEM, "%s: out of memory for %lld x %d values", path, (long long)n, k);
    bsr_status s = bsr_multivec_to_colmajor(X, v, n);
    if (!s) s = bsr_mm_write_dense(path, (int)n, k, v);
    free(v);
    return s;
}

/* Print the status and last error on stderr; return the exit code: 2 for a
 * bad argument (a value given on the command line: --block, --config, a
 * generator spec), 1 for any other error. */
int cli_fail(bsr_status s)
{
    const char *d = bsr_last_error();
    fprintf(stderr, "bsrsolve: %s%s%s\n", bsr_status_string(s), d[0] ? ": " : "", d);
    return s == BSR_ERR_ARG ? 2 : 1;
}

/* Print s to f as a JSON string literal, escaping '"', '\\' and control bytes. */
void cli_json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; p && *p; p++) {
        if (*p == '"' || *p == '\\') fprintf(f, "\\%c", *p);
        else if (*p < 0x20) fprintf(f, "\\u%04x", *p);
        else fputc(*p, f);
    }
    fputc('"', f);
}

/* "key": [v0, v1, ...] on stdout: null for a non-finite value (a missing
 * figure), all null when v is NULL; "," when comma; a newline. */
void cli_json_array_d(const char *key, const double *v, int k, int comma)
{
    printf("\"%s\": [", key);
    for (int j = 0; j < k; j++) {
        if (v && isfinite(v[j])) printf("%s%.6e", j ? ", " : "", v[j]);
        else printf("%snull", j ? ", " : "");
    }
    printf("]%s\n", comma ? "," : "");
}

#define CLI_KMAX 64 /* the most columns bsr_solver_solve takes */
void cli_json_columns(const bsr_solver_stats *st, int k)
{
    printf("\"status\": [");
    for (int j = 0; j < k; j++) printf("%s\"%s\"", j ? ", " : "", bsr_reason_string(st->col[j].reason));
    printf("],\n\"iterations\": [");
    for (int j = 0; j < k; j++) printf("%s%d", j ? ", " : "", st->col[j].iterations);
    printf("],\n\"restarts\": [");
    for (int j = 0; j < k; j++) printf("%s%d", j ? ", " : "", st->col[j].restarts);
    printf("],\n\"at_rounding_floor\": [");
    for (int j = 0; j < k; j++) printf("%s%s", j ? ", " : "", st->col[j].reason == BSR_CONVERGED_FLOOR ? "true" : "false");
    printf("],\n\"singular\": [");
    for (int j = 0; j < k; j++) printf("%s%s", j ? ", " : "", st->col[j].singular ? "true" : "false");
    printf("],\n\"etol_corrections\": [");
    for (int j = 0; j < k; j++) printf("%s%d", j ? ", " : "", st->col[j].err_rounds);
    printf("],\n\"etol_iterations\": [");
    for (int j = 0; j < k; j++) printf("%s%d", j ? ", " : "", st->col[j].err_its);
    printf("],\n\"etol_predicted\": [");
    for (int j = 0; j < k; j++) printf("%s%s", j ? ", " : "", st->col[j].err_predicted ? "true" : "false");
    printf("],\n");
    double rr[CLI_KMAX] = {0};
    for (int j = 0; j < k && j < CLI_KMAX; j++) rr[j] = st->col[j].err_est > 0 ? st->col[j].err_est : NAN;
    cli_json_array_d("etol_error_estimate", rr, k < CLI_KMAX ? k : CLI_KMAX, 1);
    for (int j = 0; j < k && j < CLI_KMAX; j++) rr[j] = st->col[j].relres;
    cli_json_array_d("true_relres", rr, k < CLI_KMAX ? k : CLI_KMAX, 1);
}

/* What the columns' verdicts leave unsaid, in words (nothing when nothing):
 * converged at the rounding floor, singular, gone on past rtol for the error. */
void cli_col_notes(const bsr_solver_stats *st)
{
    int n = 0;
    for (int j = 0; j < st->k; j++) n += st->col[j].reason == BSR_CONVERGED_FLOOR;
    if (n)
        printf("note        %d column(s) converged at the rounding floor: the true residual is above rtol*||b|| but "
               "within eps*|| |A||x| + |b| ||, the accuracy to which the working precision can evaluate it "
               "(rtol asks for more than this system allows)\n", n);
    /* within the floor, but with no answer: no better than x = 0, or x grown without bound */
    for (int j = 0; j < st->k; j++)
        if (st->col[j].singular)
            printf("note        rhs %d %s, system singular or too ill-conditioned in this precision (true relres "
                   "%.3e; the floor eps*|| |A||x| + |b| || is no verdict when x is no better than 0 or has grown "
                   "without bound)\n", j, st->col[j].reason == BSR_DIVERGED_MAXIT ? "stopped at maxit" : "stagnated",
                   st->col[j].relres);
    for (int j = 0; j < st->k; j++) {
        const bsr_col_stats *c = &st->col[j];
        if (c->err_rounds || c->err_low)
            printf("note        rhs %d: error estimate ||x - x*|| / ||x|| %s%.1e (option etol) after %d "
                   "correction(s), its solves %d iterations%s\n", j, c->err_low ? ">= " : "", c->err_est,
                   c->err_rounds, c->err_its,
                   !c->err_low ? ""
                   : c->reason == BSR_CONVERGED_FLOOR ? " (the residual at the rounding floor: a lower bound)"
                                                      : " (the last one short of its rtol: a lower bound)");
    }
}
