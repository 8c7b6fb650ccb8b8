/* SPDX-License-Identifier: BSD-3-Clause */
/* `bsrsolve FILE --info`: what the matrix is (sizes, blocks, symmetry,
 * dominance); --write PREFIX saves the problem as Matrix Market files. */
#include "cli.h"
#include <string.h>

/* The problem P as Matrix Market files for other solvers: PREFIX.mtx (A),
 * PREFIX_rhs.mtx and, when known, PREFIX_xexact.mtx (the names the CLI and
 * bench scripts read: FILE_rhs.mtx beside FILE.mtx). */
static bsr_status write_problem(const bsr_problem *P, const char *prefix)
{
    char path[4096];
    snprintf(path, sizeof path, "%s.mtx", prefix);
    BSR_TRY(bsr_mm_write(path, P->A));
    snprintf(path, sizeof path, "%s_rhs.mtx", prefix);
    BSR_TRY(cli_write_dense(path, P->rhs));
    if (!P->xexact) return BSR_OK;
    snprintf(path, sizeof path, "%s_xexact.mtx", prefix);
    return cli_write_dense(path, P->xexact);
}

/* `bsrsolve FILE|--gen SPEC --info [--json] [--reorder SPECS] [--write PREFIX]`: print the
 * matrix statistics (and orderings), write the problem's files. */
int cmd_info(int argc, char **argv)
{
    static const char *const valued[] = {"--gen", "--block", "--reorder", "--write", NULL};
    static const char *const known[] = {"--info", "--json", "--float", NULL};
    if (cli_check_options(argc, argv, known, valued)) return 2;
    int json = cli_flag(argc, argv, "--json");
    const char *ro = cli_opt(argc, argv, "--reorder");
    if (ro && cli_reorder_info(NULL, ro, 0)) return 2; /* a bad spec fails before any output */
    bsr_problem P;
    bsr_convert_info ci;
    double t0 = bsr_now();
    bsr_status s = cli_load(cli_positional(argc, argv, valued), cli_opt(argc, argv, "--gen"),
                            cli_opt(argc, argv, "--block"),
                            cli_flag(argc, argv, "--float") ? BSR_FLOAT : BSR_DOUBLE,
                            CLI_DEFAULT_PROBLEM, &P, &ci);
    if (s) return cli_fail(s);
    double tread = bsr_now() - t0;
    bsr_matrix_info f;
    const char *wr = cli_opt(argc, argv, "--write");
    if ((s = bsr_matrix_get_info(P.A, &f)) || (wr && (s = write_problem(&P, wr)))) {
        bsr_problem_free(&P);
        return cli_fail(s);
    }
    if (json) {
        printf("{\"name\": ");
        cli_json_str(stdout, P.name);
        printf(", \"n\": %lld, \"block\": %d, \"block_rows\": %d, \"nnzb\": %d, "
               "\"nnz\": %lld, \"fill_ratio\": %.6g, \"structurally_symmetric\": %s, "
               "\"numerically_symmetric\": %s, \"diag_dominant_rows\": %d, \"empty_rows\": %d, "
               "\"missing_diag_blocks\": %d, \"row_blocks_min\": %g, \"row_blocks_mean\": %.4g, "
               "\"row_blocks_max\": %d, \"read_s\": %.4g, \"version\": \"%s\"",
               (long long)f.n, f.b, f.nbrows, f.nnzb, (long long)f.nnz_nonzero, f.fill_ratio,
               f.structurally_symmetric ? "true" : "false", f.numerically_symmetric ? "true" : "false",
               f.diag_dominant_rows, f.empty_rows, f.missing_diag, f.min_row_len, f.mean_row_len,
               f.max_row_len, tread, bsr_version());
    } else {
        printf("matrix        %s\n", P.name);
        printf("n             %lld (block rows %d x block size %d)\n", (long long)f.n, f.nbrows, f.b);
        printf("blocks        %d stored (%.2f per row: min %g, max %d), %lld nonzeros\n", f.nnzb,
               f.mean_row_len, f.min_row_len, f.max_row_len, (long long)f.nnz_nonzero);
        printf("fill ratio    %.4f (stored block entries / nonzeros)\n", f.fill_ratio);
        printf("symmetry      structural %s, numerical %s\n", f.structurally_symmetric ? "yes" : "no",
               f.numerically_symmetric ? "yes" : "no");
        printf("diag. dom.    %d of %lld rows\n", f.diag_dominant_rows, (long long)f.n);
        printf("empty rows    %d block rows; %d without a diagonal block\n", f.empty_rows, f.missing_diag);
        printf("read          %.3f s\n", tread);
    }
    int rc = 0;
    if (ro) rc = cli_reorder_info(P.A, ro, json);
    if (json) printf("}\n");
    bsr_problem_free(&P);
    return rc;
}
