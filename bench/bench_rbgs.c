/* SPDX-License-Identifier: BSD-3-Clause */
/* `bsrsolve bench rbgs`: red-black Gauss-Seidel on elliptic2d (or another
 * scalar structured generator) to a relative-increment tolerance, GPU vs the
 * OpenMP CPU version vs one CPU core, in the same run.  The GPU's rate is
 * printed next to the measured D2D copy bandwidth.  A CPU run whose full
 * length would exceed --cpu-budget seconds is timed over fewer iterations
 * (same start, same kernel) and extrapolated to the reference iteration
 * count; such figures are marked '~'. */
#include "cli.h"
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

/* Parse "81,161,401" into v[0..max-1]; returns the count, or -1 with a message. */
static int stc_bench_int_list(const char *s, int *v, int max, int lo, int hi, const char *what)
{
    int n = 0;
    while (*s) {
        char *end;
        long x = strtol(s, &end, 10);
        if (end == s || (*end && *end != ',') || x < lo || x > hi || n == max) {
            fprintf(stderr, "bsrsolve: %s must be a list of up to %d integers %d..%d, got '%s'\n", what, max, lo, hi, s);
            return -1;
        }
        v[n++] = (int)x;
        s = *end ? end + 1 : end;
    }
    if (!n) fprintf(stderr, "bsrsolve: empty %s\n", what);
    return n ? n : -1;
}

/* Relative 2-norm error of u against S's exact solution. */
static double err_exact(const bsr_stencil *S, const double *u)
{
    double e = 0, m = 0;
    for (int64_t p = 0; p < S->n; p++) {
        e += (u[p] - S->xexact[p]) * (u[p] - S->xexact[p]);
        m += S->xexact[p] * S->xexact[p];
    }
    return sqrt(e / m);
}

/* Time of backend be to `iters` iterations from u = 0: measured, or (when
 * longer than budget) extrapolated from a shorter run; *est set then. */
static bsr_status cpu_time(bsr_stencil_backend be, const bsr_stencil *S, double omega, double tol, int check,
                           int iters, double budget, double *u, double *t, int *est, bsr_iter_info *I)
{
    memset(u, 0, (size_t)S->n * sizeof(double));
    bsr_status s = bsr_rbgs(be, S, omega, tol, 2 < iters ? 2 : iters, check, u, I);
    if (s && s != BSR_ERR_NOCONV) return s;
    double per = I->seconds / I->iters;
    int k = per * iters <= budget ? iters : (int)fmax(2, budget / per);
    memset(u, 0, (size_t)S->n * sizeof(double));
    s = bsr_rbgs(be, S, omega, k < iters ? 0 : tol, k, check, u, I);
    if (s && s != BSR_ERR_NOCONV) return s;
    *est = I->iters < iters;
    *t = I->seconds / I->iters * iters;
    return BSR_OK;
}

/* The start of a stencil benchmark (bench rbgs, bench sor): --help prints
 * usage (*rc = 0), an unknown option or a bad --grid (def when absent: up to
 * max sizes in [lo, hi]) is an error (*rc = 2).  Returns the number of sizes
 * parsed into grid, or -1 where the command is done with exit code *rc. */
int stc_bench_start(int argc, char **argv, const char *usage, const char *const *known, const char *const *valued,
                    const char *def, int *grid, int max, int lo, int hi, int *rc)
{
    *rc = 0;
    if (cli_flag(argc, argv, "--help")) {
        fputs(usage, stdout);
        return -1;
    }
    *rc = 2;
    if (cli_check_options(argc, argv, known, valued)) return -1;
    const char *g = cli_opt(argc, argv, "--grid");
    return stc_bench_int_list(g ? g : def, grid, max, lo, hi, "--grid");
}

/* The scalar generator gen ("name" or "name:params") at size n: "name:n" or
 * "name:n,params" generated into *S. */
bsr_status stc_bench_generate(const char *gen, int n, bsr_stencil *S)
{
    char spec[160];
    const char *colon = strchr(gen, ':');
    if (colon) snprintf(spec, sizeof spec, "%.*s:%d,%s", (int)(colon - gen), gen, n, colon + 1);
    else snprintf(spec, sizeof spec, "%s:%d", gen, n);
    return bsr_stencil_generate(spec, S);
}

/* Whether the GPU runs (a device answers and no --no-gpu), with *d2d its
 * measured device-to-device copy rate in GB/s (the anchor of the tables). */
int stc_bench_gpu(int argc, char **argv, double *d2d)
{
    *d2d = 0;
    return !cli_flag(argc, argv, "--no-gpu") && bsr_stencil_gpu_d2d_gbs((size_t)1 << 28, d2d) == BSR_OK;
}

/* `bsrsolve bench rbgs`: time to tolerance of red-black GS, GPU vs OpenMP vs one core. */
int bench_rbgs(int argc, char **argv)
{
    static const char *const valued[] = {"--grid", "--tol", "--omega", "--check", "--maxit", "--gen", "--cpu-budget", NULL};
    static const char *const known[] = {"--help", "--no-gpu", NULL};
    static const char usage[] =
        "usage: bsrsolve bench rbgs [--grid 81,161,401,801,1601,4001] [--tol 1e-4] [--omega 1]\n"
        "         [--check 1] [--maxit 1000000] [--gen elliptic2d] [--cpu-budget 5] [--no-gpu]\n"
        "  Red-black Gauss-Seidel from u = 0 until max|du|/max|u| < tol on an N x N grid (points incl.\n"
        "  boundary) of the scalar generator --gen (its other parameters may follow, e.g.\n"
        "  'elliptic2d:sigma=one').  Times: GPU (iteration loop; transfers apart), OpenMP, one core.\n";
    int grid[32], rc, ng = stc_bench_start(argc, argv, usage, known, valued, "81,161,401,801,1601,4001", grid, 32, 3,
                                           20000, &rc);
    if (ng < 0) return rc;
    const char *ts = cli_opt(argc, argv, "--tol"), *os = cli_opt(argc, argv, "--omega"), *cs = cli_opt(argc, argv, "--check");
    const char *ms = cli_opt(argc, argv, "--maxit"), *gs = cli_opt(argc, argv, "--gen"), *bs = cli_opt(argc, argv, "--cpu-budget");
    double tol = ts ? atof(ts) : 1e-4, omega = os ? atof(os) : 1.0, budget = bs ? atof(bs) : 5;
    int check = cs ? atoi(cs) : 1, maxit = ms ? atoi(ms) : 1000000;
    if (!(tol > 0) || !(omega > 0 && omega < 2) || check < 1 || maxit < 1 || !(budget > 0)) {
        fprintf(stderr, "bsrsolve: need tol > 0, 0 < omega < 2, check >= 1, maxit >= 1, cpu-budget > 0\n");
        return 2;
    }
    const char *gen = gs ? gs : "elliptic2d";
    double d2d;
    int gpu = stc_bench_gpu(argc, argv, &d2d);
    printf("bench rbgs: %s, tol %g on max|du|/max|u|, omega %g, checked every %d; OpenMP %d threads; %s",
           gen, tol, omega, check, omp_get_max_threads(), gpu ? "" : "no GPU\n");
    if (gpu) printf("GPU D2D copy %.0f GB/s (anchor)\n", d2d);
    printf("%6s %10s %7s %9s %8s %8s %9s %9s %8s %9s %10s %11s\n", "N", "unknowns", "iters", "GPU s", "xfer s",
           "GPU GB/s", "OMP s", "1core s", "GPU/OMP", "GPU/1core", "|GPU-OMP|", "err_exact");
    for (int g = 0; g < ng; g++) {
        bsr_stencil S;
        bsr_status s = stc_bench_generate(gen, grid[g], &S);
        if (s) return cli_fail(s);
        double *ug = calloc((size_t)S.n, sizeof(double)), *uo = calloc((size_t)S.n, sizeof(double));
        if (!ug || !uo) { free(ug); free(uo); bsr_stencil_free(&S); fprintf(stderr, "bsrsolve: out of memory\n"); return 1; }
        bsr_iter_info Ig = {0}, Io = {0}, Is = {0};
        int iters = 0, est_o = 0, est_s = 0;
        double to = 0, t1 = 0, diff = NAN;
        if (gpu) {
            s = bsr_rbgs(BSR_STENCIL_GPU, &S, omega, tol, maxit, check, ug, &Ig);
            if (s) { free(ug); free(uo); bsr_stencil_free(&S); return cli_fail(s); }
            iters = Ig.iters;
        } else { /* the OpenMP run sets the reference count */
            s = bsr_rbgs(BSR_STENCIL_OMP, &S, omega, tol, maxit, check, uo, &Io);
            if (s) { free(ug); free(uo); bsr_stencil_free(&S); return cli_fail(s); }
            iters = Io.iters; to = Io.seconds;
        }
        if (gpu) s = cpu_time(BSR_STENCIL_OMP, &S, omega, tol, check, iters, budget, uo, &to, &est_o, &Io);
        if (s) { free(ug); free(uo); bsr_stencil_free(&S); return cli_fail(s); }
        if (gpu && !est_o) { /* the same arithmetic: expect 0 */
            diff = 0;
            for (int64_t p = 0; p < S.n; p++) diff = fmax(diff, fabs(ug[p] - uo[p]));
            if (Io.iters != Ig.iters) printf("  note: OpenMP took %d iterations, GPU %d\n", Io.iters, Ig.iters);
        }
        double err = err_exact(&S, gpu ? ug : uo);
        s = cpu_time(BSR_STENCIL_SEQ, &S, omega, tol, check, iters, budget, uo, &t1, &est_s, &Is);
        if (s) { free(ug); free(uo); bsr_stencil_free(&S); return cli_fail(s); }
        double bytes = (double)S.n * (S.ncoef + 1 + 3) * sizeof(double) * iters; /* coef+f, u read twice, written once */
        char cg[16] = "-", cx[16] = "-", cb[16] = "-", csg[16] = "-", cs1[16] = "-", cdf[16] = "-";
        if (gpu) {
            snprintf(cg, sizeof cg, "%.4f", Ig.seconds);
            snprintf(cx, sizeof cx, "%.3f", Ig.xfer_seconds);
            snprintf(cb, sizeof cb, "%.0f", bytes / Ig.seconds * 1e-9);
            snprintf(csg, sizeof csg, "%s%.1f", est_o ? "~" : "", to / Ig.seconds);
            snprintf(cs1, sizeof cs1, "%s%.1f", est_s ? "~" : "", t1 / Ig.seconds);
            if (!isnan(diff)) snprintf(cdf, sizeof cdf, "%.1e", diff);
        }
        char co[16], c1[16];
        snprintf(co, sizeof co, "%s%.3f", est_o ? "~" : "", to);
        snprintf(c1, sizeof c1, "%s%.3f", est_s ? "~" : "", t1);
        printf("%6d %10lld %7d %9s %8s %8s %9s %9s %8s %9s %10s %11.3e\n", grid[g], (long long)S.n, iters, cg, cx, cb,
               co, c1, csg, cs1, cdf, err);
        fflush(stdout);
        free(ug); free(uo);
        bsr_stencil_free(&S);
    }
    printf("GB/s: modelled traffic (coefficients + f once, u read twice and written once per iteration) / GPU time;\n"
           "'~': CPU time extrapolated from a shorter run (--cpu-budget); err_exact: ||u - u*||/||u*|| at the grid points.\n");
    return 0;
}
