/* SPDX-License-Identifier: BSD-3-Clause */
/* The distributed solve's report (rank 0): problem, ranks, partition (rows
 * per rank, interface share, halo volume), times (the slowest rank's),
 * communication (halo exchanges and reductions), per-rank figures; one
 * screen or one JSON object in the style of the serial report. */
#ifdef BSR_HAVE_MPI
#include "cli.h"
#include "dsolve.h"
#include "bsrsolve_mpi.h"
#include <string.h>

/* Minimum, mean, maximum and sum of figure f over the ranks. */
typedef struct { double min, mean, max, sum; } spread;
static spread over_ranks(const dsolve_report *r, int f)
{
    spread s = {r->rank[f], 0, r->rank[f], 0};
    for (int p = 0; p < r->ranks; p++) {
        double v = r->rank[(size_t)p * DR_FIGURES + f];
        if (v < s.min) s.min = v;
        if (v > s.max) s.max = v;
        s.sum += v;
    }
    s.mean = s.sum / r->ranks;
    return s;
}

/* The figures both reports print, computed once. */
typedef struct {
    spread rows, ifc, ghosts, nbr, setup, solve, halo, reduce, pcnnz;
    double ifc_share, comm_share, per_iter, fill;
    int iters;
} summary;
static summary summarize(const dsolve_report *r)
{
    summary s;
    s.rows = over_ranks(r, DR_ROWS);
    s.ifc = over_ranks(r, DR_INTERFACE);
    s.ghosts = over_ranks(r, DR_GHOSTS);
    s.nbr = over_ranks(r, DR_NEIGHBOURS);
    s.setup = over_ranks(r, DR_SETUP_S);
    s.solve = over_ranks(r, DR_SOLVE_S);
    s.halo = over_ranks(r, DR_HALO_S);
    s.reduce = over_ranks(r, DR_REDUCE_S);
    s.pcnnz = over_ranks(r, DR_PC_NNZB);
    s.ifc_share = s.rows.sum > 0 ? s.ifc.sum / s.rows.sum : 0;
    /* the share of a rank's solve spent communicating, averaged over the ranks */
    s.comm_share = s.solve.sum > 0 ? (s.halo.sum + s.reduce.sum) / s.solve.sum : 0;
    s.iters = 0;
    for (int j = 0; j < r->st->k; j++)
        if (r->st->col[j].iterations > s.iters) s.iters = r->st->col[j].iterations;
    s.per_iter = s.iters > 0 ? s.solve.max / s.iters : 0;
    s.fill = r->nnzb > 0 ? s.pcnnz.sum / (double)r->nnzb : 0;
    return s;
}

/* The profiled figures, in the order printed: label, JSON key, figure. */
static const struct { const char *label, *key; int f; } prof_rows[] = {
    /* the product, the halo exchange */
    {"product interior rows", "spmm_interior_s", DR_P_INT}, {"product interface rows", "spmm_interface_s", DR_P_IFC},
    {"halo pack", "halo_pack_s", DR_P_PACK}, {"halo post (transfer start)", "halo_post_s", DR_P_POST},
    {"halo wait", "halo_wait_s", DR_P_WAIT}, {"halo unpack", "halo_unpack_s", DR_P_UNPACK},
    /* the preconditioner, the reductions and the wait in them */
    {"preconditioner", "precond_s", DR_P_PRECOND},
    {"reductions (collective)", "reduce_s", DR_REDUCE_S}, {"  of which idle (later ranks)", "reduce_idle_s", DR_P_IDLE},
    /* the Krylov method's own parts */
    {"Krylov: products", "krylov_spmm_s", DR_K_SPMM}, {"Krylov: preconditioner", "krylov_precond_s", DR_K_PC},
    {"Krylov: vector updates", "krylov_update_s", DR_K_UPD}, {"Krylov: reductions", "krylov_reduce_s", DR_K_RED},
};
enum { NPROF = sizeof prof_rows / sizeof prof_rows[0] };

/* What the halo path does, in words. */
static const char *path_words(int path)
{
    switch (path) {
    case BSR_DHALO_CPU: return "host vectors (CPU backend)";
    case BSR_DHALO_HOST: return "device rows staged through pinned host buffers";
    case BSR_DHALO_MPI: return "device pointers to CUDA-aware MPI";
    case BSR_DHALO_IPC: return "GPU to GPU by CUDA IPC";
    default: return "?";
    }
}

/* The per-rank profile (profile=1): min / mean / max over the ranks of each
 * part, then each rank's parts (up to 16 ranks). */
static void profile_text(const dsolve_report *r, const summary *s)
{
    printf("profile     seconds of this solve per rank (device synchronized at each part's end)%s\n",
           r->ranks > 1 ? ":  min / mean / max over the ranks" : "");
    for (int q = 0; q < NPROF; q++) {
        spread v = over_ranks(r, prof_rows[q].f);
        if (prof_rows[q].f == DR_P_IDLE && v.min < 0) {
            printf("            %-30s unknown (the ranks share no host clock)\n", prof_rows[q].label);
            continue;
        }
        printf("            %-30s %9.4f / %9.4f / %9.4f  (%4.1f%% of the solve, max rank)\n", prof_rows[q].label,
               v.min, v.mean, v.max, s->solve.max > 0 ? 100 * v.max / s->solve.max : 0.0);
    }
    if (r->ranks > 16) return;
    printf("per rank    rank   int s   ifc s  pack s  post s  wait s unpack s  prec s   red s  idle s\n");
    for (int p = 0; p < r->ranks; p++) {
        const double *f = r->rank + (size_t)p * DR_FIGURES;
        printf("            %4d %7.4f %7.4f %7.4f %7.4f %7.4f %8.4f %7.4f %7.4f %7.4f\n", p, f[DR_P_INT],
               f[DR_P_IFC], f[DR_P_PACK], f[DR_P_POST], f[DR_P_WAIT], f[DR_P_UNPACK], f[DR_P_PRECOND],
               f[DR_REDUCE_S], f[DR_P_IDLE]);
    }
}

void dsolve_report_text(const dsolve_report *r)
{
    const bsr_solver_stats *st = r->st;
    summary s = summarize(r);
    printf("problem     %s\n", r->problem);
    printf("            n = %lld, block %d x %d, %lld block rows, %lld blocks (%.1f per row)\n",
           (long long)(r->nglobal * r->b), r->b, r->b, (long long)r->nglobal, (long long)r->nnzb,
           r->nglobal > 0 ? (double)r->nnzb / r->nglobal : 0.0);
    spread th = over_ranks(r, DR_THREADS);
    if (th.min == th.max)
        printf("solver      %s  [%s, %d ranks x %.0f thread%s]\n", r->config, r->backend, r->ranks, th.max,
               th.max == 1 ? "" : "s");
    else
        printf("solver      %s  [%s, %d ranks x %.0f-%.0f threads]\n", r->config, r->backend, r->ranks, th.min,
               th.max);
    /* each rank's own words where they differ (orderings and levels do): up to 16 ranks */
    for (int p = 0; p < (r->pc_info && r->ranks <= 16 ? r->ranks : 1); p++) {
        const char *w = r->pc_info ? r->pc_info + (size_t)p * DR_INFO : st->precond_info;
        if (p && !strcmp(w, r->pc_info)) continue;
        printf("%s rank %d: %s\n", p ? "           " : "precond    ", p, w[0] ? w : "-");
    }
    printf("            fill %.2f (%.0f blocks on all ranks)%s\n", s.fill, s.pcnnz.sum,
           st->pivots_regularized ? ", pivots regularized on rank 0" : "");
    printf("partition   %s: rows per rank min %.0f, mean %.1f, max %.0f; interface rows %.0f (%.1f%%)\n",
           r->partition, s.rows.min, s.rows.mean, s.rows.max, s.ifc.sum, 100 * s.ifc_share);
    printf("            halo per exchange: %.0f ghost block rows received (max %.0f on a rank), "
           "neighbours max %.0f\n", s.ghosts.sum, s.ghosts.max, s.nbr.max);
    printf("time        setup %.3f s, solve %.3f s (slowest rank), %d iterations, %.3f ms per iteration\n",
           s.setup.max, s.solve.max, s.iters, 1e3 * s.per_iter);
    printf("comm        halo %.3f s max, %.3f s mean; reductions %.3f s max, %.3f s mean; %.1f%% of the solve\n",
           s.halo.max, s.halo.mean, s.reduce.max, s.reduce.mean, 100 * s.comm_share);
    int path = (int)r->rank[DR_HALO_PATH];
    printf("halo path   %s: %s\n", bsr_dhalo_path_name(path), path_words(path));
    if (r->halo_note && r->halo_note[0]) printf("            note: %s\n", r->halo_note);
    if (r->profiled) profile_text(r, &s);
    if (r->steps)
        printf("time steps  %d x (refactor + solve): median refactor %.3f s, solve %.3f s (%d iterations)\n",
               r->steps, r->step_refactor, r->step_solve, r->step_iters);
    int show = st->k <= 8 ? st->k : 8;
    printf("rhs  status      iters  restarts  true relres%s\n", r->err ? "   error vs exact" : "");
    for (int j = 0; j < show; j++) {
        const bsr_col_stats *c = &st->col[j];
        printf("%3d  %-10s %6d  %8d  %11.3e", j, bsr_reason_string(c->reason), c->iterations, c->restarts,
               c->relres);
        if (r->err) printf("   %15.3e", r->err[j]);
        printf("\n");
    }
    if (show < st->k) printf("  ... %d more right-hand sides (use --json for all)\n", st->k - show);
    cli_col_notes(st);
    if (r->ranks <= 16) {
        printf("per rank    rank     rows  interface   ghosts  neighbours   setup s   solve s    halo s  reduce s\n");
        for (int p = 0; p < r->ranks; p++) {
            const double *f = r->rank + (size_t)p * DR_FIGURES;
            printf("            %4d %8.0f %10.0f %8.0f %11.0f %9.3f %9.3f %9.3f %9.3f\n", p, f[DR_ROWS],
                   f[DR_INTERFACE], f[DR_GHOSTS], f[DR_NEIGHBOURS], f[DR_SETUP_S], f[DR_SOLVE_S], f[DR_HALO_S],
                   f[DR_REDUCE_S]);
        }
    }
    if (over_ranks(r, DR_DEV_BYTES).max > 0) {   /* what each GPU holds: the largest problem a GPU takes */
        spread m = over_ranks(r, DR_DEV_BYTES), pk = over_ranks(r, DR_DEV_PEAK);
        printf("memory      device per rank after setup: max %.3f GB, mean %.3f GB; peak during setup max %.3f GB\n",
               m.max / 1e9, m.mean / 1e9, pk.max / 1e9);
        if (r->ranks <= 16) {
            printf("per rank    rank  device GB  bytes/row    peak GB\n");
            for (int p = 0; p < r->ranks; p++) {
                const double *f = r->rank + (size_t)p * DR_FIGURES;
                printf("            %4d %10.3f %10.0f %10.3f\n", p, f[DR_DEV_BYTES] / 1e9,
                       f[DR_ROWS] > 0 ? f[DR_DEV_BYTES] / f[DR_ROWS] : 0.0, f[DR_DEV_PEAK] / 1e9);
            }
        }
    }
    if (r->result != BSR_OK) printf("result      %s: %s\n", bsr_status_string(r->result), bsr_last_error());
}

/* "key": [figure f of every rank] (integers when whole, %.6f otherwise), then a comma unless last. */
static void json_ranks(const dsolve_report *r, const char *key, int f, int whole, int last)
{
    printf("  \"%s\": [", key);
    for (int p = 0; p < r->ranks; p++) {
        double v = r->rank[(size_t)p * DR_FIGURES + f];
        if (whole) printf("%s%.0f", p ? ", " : "", v);
        else printf("%s%.6f", p ? ", " : "", v);
    }
    printf("]%s\n", last ? "" : ",");
}

void dsolve_report_json(const dsolve_report *r)
{
    const bsr_solver_stats *st = r->st;
    summary s = summarize(r);
    int k = st->k;
    printf("{\n\"problem\": ");
    cli_json_str(stdout, r->problem);
    printf(",\n\"n\": %lld,\n\"block\": %d,\n\"block_rows\": %lld,\n\"nnzb\": %lld,\n\"config\": ",
           (long long)(r->nglobal * r->b), r->b, (long long)r->nglobal, (long long)r->nnzb);
    cli_json_str(stdout, r->config);
    printf(",\n\"backend\": ");
    cli_json_str(stdout, r->backend);
    printf(",\n\"ranks\": %d,\n\"k\": %d,\n\"result\": \"%s\",\n", r->ranks, k, bsr_status_string(r->result));
    cli_json_columns(st, k);
    cli_json_array_d("error_vs_exact", r->err, k, 1);
    printf("\"setup_s\": %.6f,\n\"solve_s\": %.6f,\n\"time_per_iteration_s\": %.6e,\n\"fill\": %.4f,\n"
           "\"pc_nnzb\": %.0f,\n", s.setup.max, s.solve.max, s.per_iter, s.fill, s.pcnnz.sum);
    if (r->steps)
        printf("\"steps\": %d,\n\"step_refactor_s\": %.6f,\n\"step_solve_s\": %.6f,\n", r->steps, r->step_refactor,
               r->step_solve);
    printf("\"partition\": {\"method\": ");
    cli_json_str(stdout, r->partition);
    printf(", \"rows_min\": %.0f, \"rows_mean\": %.3f, \"rows_max\": %.0f, \"interface_rows\": %.0f, "
           "\"interface_share\": %.6f, \"halo_blocks_sum\": %.0f, \"halo_blocks_max\": %.0f, \"neighbours_max\": %.0f},\n",
           s.rows.min, s.rows.mean, s.rows.max, s.ifc.sum, s.ifc_share, s.ghosts.sum, s.ghosts.max, s.nbr.max);
    printf("\"comm\": {\"halo_s_max\": %.6f, \"halo_s_mean\": %.6f, \"reduce_s_max\": %.6f, \"reduce_s_mean\": %.6f, "
           "\"share_of_solve\": %.6f},\n", s.halo.max, s.halo.mean, s.reduce.max, s.reduce.mean, s.comm_share);
    printf("\"halo_path\": \"%s\",\n\"halo_note\": ", bsr_dhalo_path_name((int)r->rank[DR_HALO_PATH]));
    cli_json_str(stdout, r->halo_note ? r->halo_note : "");
    printf(",\n\"profiled\": %d,\n", r->profiled);
    if (r->profiled) {   /* min / mean / max over the ranks of each part */
        printf("\"profile\": {");
        for (int q = 0; q < NPROF; q++) {
            spread v = over_ranks(r, prof_rows[q].f);
            printf("%s\n  \"%s\": {\"min\": %.6f, \"mean\": %.6f, \"max\": %.6f}", q ? "," : "", prof_rows[q].key,
                   v.min, v.mean, v.max);
        }
        printf("\n},\n");
    }
    printf("\"per_rank\": {\n");
    /* the per-rank figures: key, field, whole numbers (else seconds) */
    static const struct { const char *key; int f, whole; } fig[] = {
        {"rows", DR_ROWS, 1}, {"interface_rows", DR_INTERFACE, 1}, {"ghosts", DR_GHOSTS, 1},
        {"sent", DR_SENT, 1}, {"neighbours", DR_NEIGHBOURS, 1}, {"nnzb", DR_NNZB, 1},
        {"setup_s", DR_SETUP_S, 0}, {"solve_s", DR_SOLVE_S, 0}, {"halo_s", DR_HALO_S, 0},
        {"reduce_s", DR_REDUCE_S, 0}, {"device_bytes", DR_DEV_BYTES, 1}, {"device_peak_bytes", DR_DEV_PEAK, 1},
    };
    for (size_t q = 0; q < sizeof fig / sizeof fig[0]; q++) json_ranks(r, fig[q].key, fig[q].f, fig[q].whole, 0);
    if (r->profiled)
        for (int q = 0; q < NPROF; q++)
            if (prof_rows[q].f != DR_REDUCE_S) json_ranks(r, prof_rows[q].key, prof_rows[q].f, 0, 0);
    json_ranks(r, "threads", DR_THREADS, 1, 1);
    printf("},\n\"precond_info\": ");
    cli_json_str(stdout, st->precond_info);
    if (r->pc_info) {   /* every rank's */
        printf(",\n\"precond_info_ranks\": [");
        for (int p = 0; p < r->ranks; p++) {
            if (p) printf(", ");
            cli_json_str(stdout, r->pc_info + (size_t)p * DR_INFO);
        }
        printf("]");
    }
    printf(",\n\"version\": \"%s\"\n}\n", bsr_version());
}
#endif
