/* SPDX-License-Identifier: BSD-3-Clause */
/* `bsrsolve bench sor`: wavefront SSOR (or SOR) on a 3D 7-point grid, a fixed
 * number of sweeps: GPU in natural and in hyperplane storage vs the OpenMP
 * wavefront CPU sweep (both storages) vs the one-core lexicographic sweep,
 * all in the same run, with a check that every result equals the sequential
 * one.  GPU rates are printed next to the measured D2D copy bandwidth. */
#include "cli.h"
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

/* bench_rbgs.c */
int stc_bench_start(int argc, char **argv, const char *usage, const char *const *known, const char *const *valued,
                    const char *def, int *grid, int max, int lo, int hi, int *rc);
bsr_status stc_bench_generate(const char *gen, int n, bsr_stencil *S);
int stc_bench_gpu(int argc, char **argv, double *d2d);

/* max |a - b| / max |b| */
static double rel_diff(const double *a, const double *b, int64_t n)
{
    double d = 0, m = 0;
    for (int64_t i = 0; i < n; i++) { d = fmax(d, fabs(a[i] - b[i])); m = fmax(m, fabs(b[i])); }
    return m > 0 ? d / m : d;
}

/* `bsrsolve bench sor`: wavefront SOR sweeps, natural vs hyperplane layout vs OpenMP CPU. */
int bench_sor(int argc, char **argv)
{
    static const char *const valued[] = {"--grid", "--sweeps", "--omega", "--gen", NULL};
    static const char *const known[] = {"--help", "--sor", "--no-gpu", "--no-seq", NULL};
    static const char usage[] =
        "usage: bsrsolve bench sor [--grid 100,200,400] [--sweeps 5] [--omega 1.5] [--sor]\n"
        "         [--gen poisson3d] [--no-gpu] [--no-seq]\n"
        "  G^3 unknowns of the scalar 3D generator --gen (G+2 points per side incl. boundary),\n"
        "  --sweeps symmetric SOR sweeps (--sor: forward only) from u = 0.  Columns: seconds per\n"
        "  sweep; 'setup' = host<->device copies and layout change.  eq: max relative difference\n"
        "  of each result from the one-core lexicographic sweep (expected 0).\n";
    int grid[16], rc, ng = stc_bench_start(argc, argv, usage, known, valued, "100,200,400", grid, 16, 1, 1000, &rc);
    if (ng < 0) return rc;
    const char *ss = cli_opt(argc, argv, "--sweeps"), *os = cli_opt(argc, argv, "--omega"), *gs = cli_opt(argc, argv, "--gen");
    int sweeps = ss ? atoi(ss) : 5, sym = !cli_flag(argc, argv, "--sor"), seq = !cli_flag(argc, argv, "--no-seq");
    double omega = os ? atof(os) : 1.5;
    if (sweeps < 1 || !(omega > 0 && omega < 2)) { fprintf(stderr, "bsrsolve: need --sweeps >= 1, 0 < omega < 2\n"); return 2; }
    const char *gen = gs ? gs : "poisson3d";
    double d2d;
    int gpu = stc_bench_gpu(argc, argv, &d2d);
    printf("bench sor: %s %s, omega %g, %d sweeps; OpenMP %d threads; ", gen, sym ? "SSOR" : "SOR", omega, sweeps,
           omp_get_max_threads());
    if (gpu) printf("GPU D2D copy %.0f GB/s (anchor)\n", d2d); else printf("no GPU\n");
    printf("%5s %10s | %9s %7s %6s | %9s %7s %6s | %9s %9s | %9s | %8s %8s %8s\n", "G", "unknowns", "GPU nat", "GB/s",
           "setup", "GPU hyp", "GB/s", "setup", "OMP nat", "OMP hyp", "1 core", "hyp/nat", "hyp/OMP", "eq");
    for (int g = 0; g < ng; g++) {
        bsr_stencil S;
        bsr_status s = stc_bench_generate(gen, grid[g] + 2, &S);
        if (s) return cli_fail(s);
        const int64_t n = S.n;
        double *ref = calloc((size_t)n, sizeof(double)), *u = calloc((size_t)n, sizeof(double));
        if (!ref || !u) { free(ref); free(u); bsr_stencil_free(&S); fprintf(stderr, "bsrsolve: out of memory\n"); return 1; }
        /* order: 0 GPU natural, 1 GPU hyperplane, 2 OMP natural, 3 OMP hyperplane, 4 one core */
        static const bsr_stencil_backend be[5] = {BSR_STENCIL_GPU, BSR_STENCIL_GPU, BSR_STENCIL_OMP, BSR_STENCIL_OMP, BSR_STENCIL_SEQ};
        static const bsr_sor_layout lay[5] = {BSR_SOR_NATURAL, BSR_SOR_HYPERPLANE, BSR_SOR_NATURAL, BSR_SOR_HYPERPLANE, BSR_SOR_NATURAL};
        double t[5] = {NAN, NAN, NAN, NAN, NAN}, setup[5] = {0}, eq = 0;
        int have_ref = 0;
        for (int v = 4; v >= 0; v--) { /* the reference first */
            if ((be[v] == BSR_STENCIL_GPU && !gpu) || (v == 4 && !seq)) continue;
            double *w = v == 4 ? ref : u;
            memset(w, 0, (size_t)n * sizeof(double));
            bsr_iter_info I;
            s = bsr_sor(be[v], lay[v], &S, omega, sym, 0, sweeps, w, &I);
            if (s) { free(ref); free(u); bsr_stencil_free(&S); return cli_fail(s); }
            t[v] = I.seconds / sweeps;
            setup[v] = I.xfer_seconds;
            if (v == 4) have_ref = 1;
            else if (have_ref) eq = fmax(eq, rel_diff(u, ref, n));
            else if (v == 3) memcpy(ref, u, (size_t)n * sizeof(double)), have_ref = 1; /* no one-core run */
        }
        double bytes = (double)n * (S.ncoef + 3) * sizeof(double) * (1 + sym); /* coef, f, u read+write per half-sweep */
        char c[5][16], b0[16] = "-", b1[16] = "-", s0[16] = "-", s1[16] = "-";
        for (int v = 0; v < 5; v++) {
            if (isnan(t[v])) snprintf(c[v], sizeof c[v], "-");
            else snprintf(c[v], sizeof c[v], "%.4f", t[v]);
        }
        if (gpu) {
            snprintf(b0, sizeof b0, "%.0f", bytes / t[0] * 1e-9); snprintf(b1, sizeof b1, "%.0f", bytes / t[1] * 1e-9);
            snprintf(s0, sizeof s0, "%.2f", setup[0]); snprintf(s1, sizeof s1, "%.2f", setup[1]);
        }
        printf("%5d %10lld | %9s %7s %6s | %9s %7s %6s | %9s %9s | %9s | %8.2f %8.2f %8.1e\n", grid[g], (long long)n, c[0], b0,
               s0, c[1], b1, s1, c[2], c[3], c[4], gpu ? t[0] / t[1] : NAN, gpu ? t[2] / t[1] : t[2] / t[3], eq);
        fflush(stdout);
        free(ref); free(u);
        bsr_stencil_free(&S);
    }
    printf("seconds per %s sweep (setup apart); GB/s: modelled traffic (7 coefficients, f, u read and written per\n"
           "point and half-sweep) / time; hyp/nat: GPU natural time / GPU hyperplane time; hyp/OMP: OpenMP natural\n"
           "time / GPU hyperplane time (without a GPU: OpenMP natural / OpenMP hyperplane).\n", sym ? "symmetric" : "forward");
    return 0;
}
