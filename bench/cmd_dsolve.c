/* SPDX-License-Identifier: BSD-3-Clause */
/* `mpiexec -n P bsrsolve FILE.mtx|--gen SPEC [options]` (MPI builds, P > 1):
 * the distributed solve.  A generator builds each rank's rows in place
 * (equal consecutive ranges: slabs of the grid); a matrix file is read by
 * rank 0, partitioned with METIS k-way and scattered.  Every step that can
 * fail on one rank is agreed on before the next collective call, so every
 * rank exits with the same code; rank 0 alone prints (the report, the one
 * JSON object, progress and errors). */
#ifdef BSR_HAVE_MPI
#include "cli.h"
#include "dsolve.h"
#include "internal.h"
#include "bsrsolve_mpi.h"
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

static int rank0;   /* this process is rank 0 of MPI_COMM_WORLD */

/* Exit code of an agreed failure: rank 0 prints it (cli_fail), the others
 * return the same code silently. */
static int dfail(bsr_status s)
{
    if (rank0) return cli_fail(s);
    return s == BSR_ERR_ARG ? 2 : 1;
}

/* The options of the serial command that have no distributed meaning yet. */
static const char *const serial_only[] = {"--x0", "--out", "--reference", "--compare", "--exact", "--plot",
                                          "--warm", "--error-estimate", NULL};

/* The usage verdict of rank 0 (which prints why): 0, or 2 for an unknown
 * option (the option list follows, as in the serial command), a serial-only
 * one, a bad value. */
static int usage_rank0(int argc, char **argv, const char *const *known, const char *const *valued)
{
    if (cli_check_options(argc, argv, known, valued)) { cli_usage_solve(stderr); return 2; }
    for (int i = 0; serial_only[i]; i++)
        if (cli_flag(argc, argv, serial_only[i])) {
            fprintf(stderr, "bsrsolve: %s is not supported in a distributed solve (mpiexec with more than one rank)\n",
                    serial_only[i]);
            return 2;
        }
    const char *backend = cli_opt(argc, argv, "--backend"), *rhs = cli_opt(argc, argv, "--rhs");
    const char *steps = cli_opt(argc, argv, "--steps");
    if (backend && strcmp(backend, "cpu") && strcmp(backend, "cuda")) {
        fprintf(stderr, "bsrsolve: --backend takes cpu or cuda\n");
        return 2;
    }
    if (rhs && !strncmp(rhs, "random:", 7)) {
        fprintf(stderr, "bsrsolve: --rhs random:K is not supported in a distributed solve (ones or a file)\n");
        return 2;
    }
    if (cli_check_rhs(rhs, 0)) return 2;
    char *end;
    long ns = steps ? strtol(steps, &end, 10) : 1;
    if (steps && (*end || ns < 1 || ns > 1000)) {
        fprintf(stderr, "bsrsolve: --steps takes 1..1000\n");
        return 2;
    }
    return 0;
}

/* Rank 0's usage verdict on every rank (argv is the same everywhere; one
 * message). */
static int check_usage(int argc, char **argv, const char *const *known, const char *const *valued)
{
    int rc = rank0 ? usage_rank0(argc, argv, known, valued) : 0;
    MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
    return rc;
}

/* The rank's backend: NULL for the CPU, else a CUDA context on device
 * (rank on its node) % (devices).  cuda < 0: CUDA when every rank has a
 * device, as the serial command's default. */
static bsr_status make_backend(bsr_dist *d0, int cuda, bsr_context **ctx)
{
    *ctx = NULL;
    MPI_Comm node;
    int local = 0, ndev = bsr_device_count(), all = 0;
    if (MPI_Comm_split_type(bsr_dist_comm(d0), MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) == MPI_SUCCESS) {
        MPI_Comm_rank(node, &local);
        MPI_Comm_free(&node);
    }
    int have = ndev > 0;
    MPI_Allreduce(&have, &all, 1, MPI_INT, MPI_MIN, bsr_dist_comm(d0));
    if (cuda < 0) cuda = all;
    bsr_status st = BSR_OK;
    if (cuda)
        st = ndev > 0 ? bsr_context_create(ctx, BSR_BACKEND_CUDA, local % ndev, NULL)
                      : bsr_error(BSR_ERR_NODEVICE, "--backend cuda: no usable CUDA device (or built without CUDA)");
    return bsr_dist_agree(d0, st);
}

/* The distributed matrix, its rows' right-hand side from the generator
 * (R->rhs, R->xexact), or from rank 0's file with *perm its renumbering. */
static bsr_status load(bsr_dist *d, const char *file, const char *gen, const char *block, bsr_precision prec,
                       bsr_dmatrix **A, bsr_problem_rows *R, int64_t **perm, const char **partition)
{
    memset(R, 0, sizeof *R);
    BSR_TRY(cli_load_args(file, gen, block));   /* the same verdict on every rank */
    if (!file) {
        *partition = "generated in place, equal row ranges";
        return bsr_dmatrix_generate(A, d, gen ? gen : CLI_DEFAULT_PROBLEM, prec, R);
    }
    *partition = "METIS k-way";
    bsr_problem P;
    memset(&P, 0, sizeof P);
    bsr_status st = rank0 ? cli_load(file, NULL, block, prec, NULL, &P, NULL) : BSR_OK;
    if (!(st = bsr_dist_agree(d, st))) st = bsr_dmatrix_scatter(A, d, P.A, BSR_PART_METIS, perm);
    snprintf(R->name, sizeof R->name, "%s", file);
    bsr_problem_free(&P);
    return st;
}

/* B = this rank's rows of the right-hand side(s): the generator's (with
 * its exact solution *xex) unless --rhs says ones or a file (read by rank 0,
 * scattered in the matrix's numbering). */
static bsr_status make_rhs(bsr_dist *d, const bsr_dmatrix *A, const char *rhs, bsr_problem_rows *R,
                           const int64_t *perm, bsr_precision prec, bsr_multivec **B, const bsr_multivec **xex)
{
    *B = NULL;
    *xex = NULL;
    int64_t n = (int64_t)bsr_dmatrix_nrows(A) * bsr_dmatrix_block(A);
    if (!rhs && R->rhs) {
        *B = R->rhs;
        R->rhs = NULL;   /* now the caller's */
        *xex = R->xexact;
        return BSR_OK;
    }
    if (!rhs || !strcmp(rhs, "ones")) {
        bsr_status st = bsr_multivec_create(B, n, 1, prec);
        if (!st) st = bsr_multivec_fill(*B, 1.0);
        return bsr_dist_agree(d, st);
    }
    bsr_multivec *G = NULL;
    bsr_status st = rank0 ? cli_read_dense(rhs, bsr_dmatrix_nglobal(A) * bsr_dmatrix_block(A), prec, 0, &G) : BSR_OK;
    if (!(st = bsr_dist_agree(d, st))) st = bsr_dmatrix_scatter_vec(A, perm, G, B);
    bsr_multivec_destroy(G);
    return st;
}

/* *err = [k] ||X(:,j) - xex(:,j)|| / ||xex(:,j)|| over all ranks (one
 * agreement, then one sum). */
static bsr_status global_error(bsr_dist *d, const bsr_multivec *X, const bsr_multivec *xex, double **err)
{
    int k = bsr_multivec_cols(X);
    int64_t n = bsr_multivec_rows(X);
    double *part = calloc(2 * (size_t)k, sizeof(double)), *sum = calloc(2 * (size_t)k, sizeof(double));
    *err = malloc(sizeof(double) * (size_t)k);
    bsr_status st = part && sum && *err ? BSR_OK : bsr_error(BSR_ERR_NOMEM, "error vs exact: out of memory");
    bsr_multivec *Xd = NULL, *Ed = NULL;   /* in double, whatever the precision */
    if (!st) st = bsr_multivec_create(&Xd, n, k, BSR_DOUBLE);
    if (!st) st = bsr_multivec_create(&Ed, n, k, BSR_DOUBLE);
    if (!st) st = bsr_multivec_copy(Xd, X);
    if (!st) st = bsr_multivec_copy(Ed, xex);
    if (!st) {
        const double *x = bsr_multivec_cdata(Xd), *e = bsr_multivec_cdata(Ed);
        for (int64_t i = 0; i < n; i++)
            for (int j = 0; j < k; j++) {
                double dx = x[i * k + j] - e[i * k + j];
                part[j] += dx * dx;
                part[k + j] += e[i * k + j] * e[i * k + j];
            }
    }
    if (!(st = bsr_dist_agree(d, st))) {
        MPI_Allreduce(part, sum, 2 * k, MPI_DOUBLE, MPI_SUM, bsr_dist_comm(d));
        for (int j = 0; j < k; j++) (*err)[j] = sum[k + j] > 0 ? sqrt(sum[j] / sum[k + j]) : sqrt(sum[j]);
    }
    bsr_multivec_destroy(Xd);
    bsr_multivec_destroy(Ed);
    free(part);
    free(sum);
    return st;
}

/* --steps: N x (refactor on the same values + solve from zero); the medians
 * over the steps of the slowest rank's refactor and solve seconds. */
static bsr_status run_steps(bsr_dist *d, bsr_dsolver *S, bsr_dmatrix *A, const bsr_multivec *B, int ns,
                            dsolve_report *r)
{
    double *tr = malloc(sizeof(double) * (size_t)ns), *ts = malloc(sizeof(double) * (size_t)ns);
    bsr_multivec *X2 = NULL;
    bsr_status st = tr && ts ? BSR_OK : bsr_error(BSR_ERR_NOMEM, "--steps: out of memory");
    if (!st) st = bsr_multivec_create(&X2, bsr_multivec_rows(B), bsr_multivec_cols(B), bsr_multivec_precision(B));
    st = bsr_dist_agree(d, st);
    for (int i = 0; i < ns && !st; i++) {
        double t0 = MPI_Wtime(), t[2];
        if ((st = bsr_dsolver_refactor(S, A))) break;
        t[0] = MPI_Wtime() - t0;
        bsr_multivec_fill(X2, 0.0);
        bsr_solver_stats s2;
        bsr_status ss = bsr_dsolver_solve(S, B, X2, &s2);
        if (ss != BSR_OK && ss != BSR_ERR_NOCONV && ss != BSR_ERR_BREAKDOWN) st = ss;
        t[1] = s2.solve_s;
        r->step_iters = 0;
        for (int j = 0; j < s2.k; j++)
            if (s2.col[j].iterations > r->step_iters) r->step_iters = s2.col[j].iterations;
        bsr_solver_stats_free(&s2);
        MPI_Allreduce(MPI_IN_PLACE, t, 2, MPI_DOUBLE, MPI_MAX, bsr_dist_comm(d));
        tr[i] = t[0];
        ts[i] = t[1];
    }
    if (!st) {
        r->steps = ns;
        r->step_refactor = bsr_median(tr, ns);
        r->step_solve = bsr_median(ts, ns);
    }
    bsr_multivec_destroy(X2);
    free(tr);
    free(ts);
    return st;
}

/* Every rank's figures on rank 0 (*all [size][DR_FIGURES], NULL elsewhere)
 * and its preconditioner words (*info [size][DR_INFO]: each rank's own
 * ordering, levels and fill). */
static bsr_status gather_figures(bsr_dist *d, const bsr_dmatrix *A, const bsr_dsolver *S,
                                 const bsr_solver_stats *st, double **all, char **info)
{
    bsr_dmatrix_info in;
    bsr_dsolver_comm c;
    bsr_dsolver_profile p;
    bsr_dmatrix_get_info(A, &in);
    bsr_dsolver_get_comm(S, &c);
    bsr_dsolver_get_profile(S, &p);
    double f[DR_FIGURES];
    f[DR_ROWS] = in.nrows;
    f[DR_INTERFACE] = in.interface;
    f[DR_GHOSTS] = in.ghosts;
    f[DR_SENT] = in.sent;
    f[DR_NEIGHBOURS] = in.neighbours;
    f[DR_NNZB] = (double)in.nnzb;
    f[DR_PC_NNZB] = (double)st->pc_nnzb;
    f[DR_SETUP_S] = st->setup_s;
    f[DR_SOLVE_S] = st->solve_s;
    f[DR_HALO_S] = c.halo_s;
    f[DR_REDUCE_S] = c.reduce_s;
    f[DR_THREADS] = omp_get_max_threads();   /* as bsr_dist_create left it (README: Threads) */
    f[DR_P_INT] = p.spmm_interior_s;
    f[DR_P_IFC] = p.spmm_interface_s;
    f[DR_P_PACK] = p.halo_pack_s;
    f[DR_P_POST] = p.halo_post_s;
    f[DR_P_WAIT] = p.halo_wait_s;
    f[DR_P_UNPACK] = p.halo_unpack_s;
    f[DR_P_PRECOND] = p.precond_s;
    f[DR_P_IDLE] = p.reduce_idle_s;
    for (int q = 0; q < 4; q++) f[DR_K_SPMM + q] = st->prof_s[q];
    f[DR_HALO_PATH] = p.halo_path;
    f[DR_DEV_BYTES] = st->dev_bytes;
    f[DR_DEV_PEAK] = st->dev_peak_bytes;
    char words[DR_INFO];
    _Static_assert(sizeof st->precond_info == DR_INFO, "DR_INFO is bsr_solver_stats.precond_info's size");
    memcpy(words, st->precond_info, DR_INFO);
    *all = NULL;
    *info = NULL;
    bsr_status s = BSR_OK;
    const size_t size = (size_t)bsr_dist_size(d);
    if (rank0 && (!(*all = malloc(sizeof f * size)) || !(*info = malloc(DR_INFO * size))))
        s = bsr_error(BSR_ERR_NOMEM, "per-rank figures: out of memory");
    BSR_TRY(bsr_dist_agree(d, s));
    MPI_Gather(f, DR_FIGURES, MPI_DOUBLE, *all, DR_FIGURES, MPI_DOUBLE, 0, bsr_dist_comm(d));
    MPI_Gather(words, DR_INFO, MPI_CHAR, *info, DR_INFO, MPI_CHAR, 0, bsr_dist_comm(d));
    return BSR_OK;
}

int cmd_dsolve(int argc, char **argv)
{
    static const char *const valued[] = {"--gen", "--block", "--rhs", "--x0", "--out", "--backend", "--config",
                                         "--reference", "--compare", "--exact", "--plot", "--steps", NULL};
    static const char *const known[] = {"--json", "--float", "--warm", "--progress", "--no-progress",
                                        "--error-estimate", NULL};
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    rank0 = rank == 0;
    int rc = check_usage(argc, argv, known, valued);
    if (rc) return rc;
    cli_progress(argc, argv, rank0);   /* rank 0's phases only */
    int json = cli_flag(argc, argv, "--json"), fl = cli_flag(argc, argv, "--float");
    const char *backend = cli_opt(argc, argv, "--backend"), *steps = cli_opt(argc, argv, "--steps");

    bsr_solver_options opt;
    bsr_solver_options_default(&opt);
    opt.progress = rank0 ? 100 : 0;   /* the residuals are global: rank 0 shows them */
    if (fl) opt.precision = opt.precond_precision = BSR_FLOAT; /* --config may override */
    bsr_status s = bsr_solver_options_parse(&opt, cli_opt(argc, argv, "--config"));
    if (!s) s = bsr_solver_options_check(&opt); /* the same verdict on every rank: no agreement needed */
    if (s) return dfail(s);
    bsr_precision prec = fl ? BSR_FLOAT : BSR_DOUBLE;

    bsr_dist *d0 = NULL, *d = NULL;
    bsr_context *ctx = NULL;
    bsr_dmatrix *A = NULL;
    bsr_dsolver *S = NULL;
    bsr_problem_rows R;
    memset(&R, 0, sizeof R);
    int64_t *perm = NULL;
    bsr_multivec *B = NULL, *X = NULL;
    const bsr_multivec *xex = NULL;
    bsr_solver_stats st;
    memset(&st, 0, sizeof st);
    double *figures = NULL, *err = NULL;
    char *pc_info = NULL;
    char halo_note[192] = "";
    const char *partition = "";
    rc = 1;
    if ((s = bsr_dist_create(&d0, MPI_COMM_WORLD, NULL))) goto fail;
    if ((s = make_backend(d0, backend ? !strcmp(backend, "cuda") : -1, &ctx))) goto fail;
    if ((s = bsr_dist_agree(d0, bsr_dist_create(&d, MPI_COMM_WORLD, ctx)))) goto fail;
    if ((s = load(d, cli_positional(argc, argv, valued), cli_opt(argc, argv, "--gen"), cli_opt(argc, argv, "--block"),
                  prec, &A, &R, &perm, &partition)))
        goto fail;
    if ((s = make_rhs(d, A, cli_opt(argc, argv, "--rhs"), &R, perm, prec, &B, &xex))) goto fail;
    int k = bsr_multivec_cols(B);
    if (xex && bsr_multivec_cols(xex) != k) xex = NULL;
    s = bsr_multivec_create(&X, bsr_multivec_rows(B), k, prec);
    if (!s) s = bsr_multivec_fill(X, 0.0);
    if ((s = bsr_dist_agree(d, s))) goto fail;
    if ((s = bsr_dsolver_create(&S, d, &opt))) goto fail;
    if (rank0 && !json)
        printf("bsrsolve: %s, %lld block rows, b = %d, %d right-hand side%s, %d ranks; setting up...\n", R.name,
               (long long)bsr_dmatrix_nglobal(A), bsr_dmatrix_block(A), k, k > 1 ? "s" : "", size);
    fflush(stdout);
    if ((s = bsr_dsolver_setup(S, A))) goto fail;
    bsr_status ss = bsr_dsolver_solve(S, B, X, &st);
    if (ss != BSR_OK && ss != BSR_ERR_NOCONV && ss != BSR_ERR_BREAKDOWN) { s = ss; goto fail; }
    char errbuf[1024];
    snprintf(errbuf, sizeof errbuf, "%s", bsr_last_error());

    dsolve_report r;
    memset(&r, 0, sizeof r);
    /* the first solve's communication, before --steps solves again */
    if ((s = gather_figures(d, A, S, &st, &figures, &pc_info))) goto fail;
    if (steps && (s = run_steps(d, S, A, B, (int)strtol(steps, NULL, 10), &r))) goto fail;
    if (xex && (s = global_error(d, X, xex, &err))) goto fail;
    if (rank0) {
        char cfg[512];
        bsr_solver_options_string(&opt, cfg, sizeof cfg);
        int64_t nnzb = 0;
        for (int p = 0; p < size; p++) nnzb += (int64_t)figures[(size_t)p * DR_FIGURES + DR_NNZB];
        r.problem = R.name;
        r.partition = partition;
        r.config = cfg;
        r.backend = ctx ? bsr_context_describe(ctx) : "cpu";
        r.ranks = size;
        r.b = bsr_dmatrix_block(A);
        r.nglobal = bsr_dmatrix_nglobal(A);
        r.nnzb = nnzb;
        r.rank = figures;
        r.pc_info = pc_info;
        r.st = &st;
        r.err = err;
        r.result = ss;
        r.profiled = opt.profile;
        bsr_dsolver_profile pr;
        bsr_dsolver_get_profile(S, &pr);   /* the path and its note: the same on every rank */
        snprintf(halo_note, sizeof halo_note, "%s", pr.halo_note);
        r.halo_note = halo_note;
        if (ss != BSR_OK) bsr_error(ss, "%s", errbuf);
        if (json) dsolve_report_json(&r);
        else dsolve_report_text(&r);
        fflush(stdout);
    }
    rc = ss == BSR_OK ? 0 : 3;
    goto out;
fail:
    rc = dfail(s);
out:
    free(perm);
    free(figures);
    free(pc_info);
    free(err);
    bsr_solver_stats_free(&st);
    bsr_dsolver_destroy(S);
    bsr_multivec_destroy(B);
    bsr_multivec_destroy(X);
    bsr_dmatrix_destroy(A);
    bsr_problem_rows_free(&R);
    bsr_dist_destroy(d);
    bsr_dist_destroy(d0);
    bsr_context_destroy(ctx); /* after the objects living on it */
    return rc;
}
#endif
