/* SPDX-License-Identifier: BSD-3-Clause */
/* --reorder SPEC summary: for each ordering, time, separator tree (ND),
 * p-bordered check, bandwidth, and level counts of the lower/upper triangles. */
#include "cli.h"
#include <string.h>

/* Largest |i - j| over stored blocks (block bandwidth). */
static int bandwidth(const bsr_matrix *A)
{
    const int *rp = bsr_matrix_rowptr(A), *ci = bsr_matrix_colind(A);
    int bw = 0;
    for (int i = 0; i < bsr_matrix_nbrows(A); i++)
        for (int p = rp[i]; p < rp[i + 1]; p++) {
            int d = ci[p] > i ? ci[p] - i : i - ci[p];
            if (d > bw) bw = d;
        }
    return bw;
}

/* Order, permute and summarize A under one spec; returns 0 or 1 (error printed).
 * A NULL: only check that spec parses. */
static int one(const bsr_matrix *A, const char *spec, int json, int *first)
{
    bsr_order_options o;
    bsr_status s = bsr_order_parse(spec, &o);
    if (s) return cli_fail(s);
    if (!A) return 0;
    bsr_ordering *ord = NULL;
    bsr_matrix *B = NULL;
    bsr_levels *lo = NULL, *up = NULL;
    double t0 = bsr_now();
    s = bsr_order(A, &o, &ord);
    double tord = bsr_now() - t0;
    if (!s) { t0 = bsr_now(); s = bsr_permute(A, ord, &B); }
    double tperm = bsr_now() - t0;
    if (!s) s = bsr_levels_build(B, 0, &lo);
    if (!s) s = bsr_levels_build(B, 1, &up);
    bsr_pbordered_report r;
    bsr_status chk = BSR_OK;
    char chkmsg[512] = "";
    memset(&r, 0, sizeof r);
    if (!s && ord->nnodes) {
        chk = bsr_pbordered_check(B, ord, &r);
        if (chk) snprintf(chkmsg, sizeof chkmsg, "%s", bsr_last_error());
    }
    if (s) {
        bsr_ordering_free(ord); bsr_matrix_destroy(B); bsr_levels_free(lo);
        return cli_fail(s);
    }
    int bw = bandwidth(B);
    if (json) {
        printf("%s{\"spec\": ", *first ? "" : ", ");
        cli_json_str(stdout, spec);
        printf(", \"kind\": \"%s\", \"order_s\": %.4g, \"permute_s\": %.4g, "
               "\"bandwidth\": %d, \"lower_levels\": %d, \"lower_max_width\": %d, "
               "\"lower_mean_width\": %.4g, \"upper_levels\": %d, \"upper_max_width\": %d, "
               "\"upper_mean_width\": %.4g",
               bsr_order_kind_name(ord->kind), tord, tperm, bw,
               lo->nlevels, lo->max_width, lo->mean_width, up->nlevels, up->max_width,
               up->mean_width);
        if (ord->nnodes) {
            printf(", \"depth\": %d, \"depth_asked\": %d, \"depth_auto\": %s, \"leaves\": %d, "
                   "\"leaf_min\": %d, \"leaf_mean\": %.4g, \"leaf_max\": %d, \"border_rows\": %d, "
                   "\"border_share\": %.4g, \"pbordered\": %s, \"sep_rows_per_level\": [",
                   ord->depth, ord->depth_asked, ord->depth_auto ? "true" : "false", r.nleaves,
                   r.leaf_min, r.leaf_mean, r.leaf_max, r.border_rows, r.border_share,
                   chk ? "false" : "true");
            for (int l = 0; l < ord->depth; l++) printf("%s%d", l ? ", " : "", r.sep_rows[l]);
            printf("]");
        }
        printf("}");
    } else {
        printf("\nordering      %s (%s): %.3f s, permute %.3f s, block bandwidth %d\n", spec,
               bsr_order_kind_name(ord->kind), tord, tperm, bw);
        if (ord->nnodes) {
            printf("nd tree       depth %d (%s %d), %d nodes, %d leaves of %d..%d rows (mean %.1f)\n",
                   ord->depth, ord->depth_auto ? "auto chose" : "asked", ord->depth_asked,
                   ord->nnodes, r.nleaves, r.leaf_min, r.leaf_max, r.leaf_mean);
            for (int l = 0; l < ord->depth; l++)
                if (r.sep_nodes[l])
                    printf("  level %-3d   %d separators, %d rows (largest %d)\n", l, r.sep_nodes[l],
                           r.sep_rows[l], r.sep_max[l]);
            printf("border        %d rows (%.2f%% of %d), %lld blocks in border rows/columns\n",
                   r.border_rows, 100.0 * r.border_share, ord->n, (long long)r.border_blocks);
            printf("p-bordered    %s%s\n", chk ? "VIOLATED: " : "ok", chkmsg);
        }
        printf("levels lower  %d (width max %d, mean %.1f)\n", lo->nlevels, lo->max_width, lo->mean_width);
        printf("levels upper  %d (width max %d, mean %.1f)\n", up->nlevels, up->max_width, up->mean_width);
    }
    *first = 0;
    bsr_ordering_free(ord);
    bsr_matrix_destroy(B);
    bsr_levels_free(lo);
    bsr_levels_free(up);
    return chk ? 1 : 0;
}

/* Order, permute and summarize A under each spec of spec ("all" or a '+'-separated list);
 * A NULL: only check every spec (nothing printed unless an error). */
int cli_reorder_info(const bsr_matrix *A, const char *spec, int json)
{
    static const char *const all[] = {"natural", "rcm", "center", "nd:auto", "metis", "amd", NULL};
    char buf[512];
    if (strlen(spec) >= sizeof buf) { fprintf(stderr, "bsrsolve: --reorder spec too long\n"); return 2; }
    int first = 1, rc = 0;
    json = json && A;
    if (json) printf(", \"reorder\": [");
    if (!strcmp(spec, "all")) {
        for (int k = 0; all[k]; k++) rc |= one(A, all[k], json, &first);
    } else {
        /* several orderings separated by '+', e.g. natural+nd:4,seed=2 */
        strcpy(buf, spec);
        for (char *save = NULL, *tok = strtok_r(buf, "+", &save); tok; tok = strtok_r(NULL, "+", &save))
            rc |= one(A, tok, json, &first);
    }
    if (json) printf("]");
    return rc;
}
