/* SPDX-License-Identifier: BSD-3-Clause */
/* `bsrsolve bench trsv` (issue 6, the T2 harness): GPU block triangular
 * solves L then U of the ILU factors, for each ordering and kernel: levels,
 * median time of L+U, effective GB/s (factors once + vectors), and in the same
 * run the anchors: cuSPARSE bsrsv2 (k = 1) / bsrsm2 (k > 1) on the same
 * factors, the sequential CPU solve S2 on one core and the OpenMP solve.
 * Also our analysis (structure uploads + device layout + tree levels + graph
 * capture) against cuSPARSE's.  CSV and a PNG plot on request. */
#include "cli.h"
#include "plot.h"
#include "internal.h"
#include "../kernels/trsv/trsv.h"
#include "anchors.h"
#include "trsv_kernels.h"
#include <math.h>
#include <string.h>
#include <strings.h>

#define MAXK 8
#define MAXO 6
#define MAXC 8


static void usage(void)
{
    fprintf(stderr,
            "usage: bsrsolve bench trsv [FILE.mtx | --gen SPEC] [--block B|auto] [--k 1,5,9]\n"
            "         [--orders natural/rcm/center/nd] [--kernels level|all|LIST] [--prec double|float|mixed]\n"
            "         [--ilu ilu0|ilut|ilu2] [--tau T] [--reps N] [--renumber none|storage|full]\n"
            "         [--csv F] [--plot F.png] [--variants V1;V2;...] [--jacobi N1,N2] [--config SOLVER_OPTIONS]\n"
            "  kernels: level-syncfree,level-graph,level-launch,level-syncflags,p21,p22,p23,p24; 'level' = the four\n"
            "  level schedules, \"all\" adds P21-P24 on orderings with a tree (name p21.. to force them\n  elsewhere: one CUDA block, sequential).\n"
            "  variants: each a list of knob=value joined by + (team, persist, wide, grab, sleep, pipe, pair, rr, tail: the\n"
            "  fields of bsr_trsv_tuning, src/ilu/gpu_ilu.h), every kernel timed under each; '-' = the built-in rules.\n"
            "  Without --variants the BSR_TRSV_<KNOB> environment variables give one variant.\n"
            "  --jacobi: also time the approximate solves of trisolve=jacobi:N (N sweeps on each factor).\n"
            "  --config: the host factors the solver's CPU preconditioner makes for these options (e.g.\n"
            "  precond=ilu2,cap=none,grow=1,reorder=nd:auto,leafnd=1: the fallback's); --ilu and --tau then\n"
            "  ignored, and the config's order is the one timed unless --orders is given.\n");
}

/* Comma list of ints into v (at most max); returns the count or -1. */
static int parse_ints(const char *s, int *v, int max)
{
    int n = 0;
    while (s && *s) {
        char *end;
        long x = strtol(s, &end, 10);
        if (end == s || x < 1 || x > 16 || n == max) return -1;
        v[n++] = (int)x;
        s = *end == ',' ? end + 1 : end;
        if (*end && *end != ',') return -1;
    }
    return n;
}

/* Knobs of the level kernels: names (also BSR_TRSV_<NAME> in the
 * environment) in the order of their fields in bsr_trsv_tuning. */
static const char *const knobs[] = {"TEAM", "PERSIST", "WIDE", "GRAB", "SLEEP", "PIPE", "PAIR", "RR", "TAIL"};
#define NKNOB ((int)(sizeof knobs / sizeof knobs[0]))

/* Field q of t (in the order of knobs[]). */
static int *knob_field(bsr_trsv_tuning *t, int q)
{
    int *f[NKNOB] = {&t->team, &t->persist, &t->wide, &t->grab, &t->sleep, &t->pipe, &t->pair, &t->rr, &t->tail};
    return f[q];
}

/* Tuning of variant v ("team=8+persist=1", ',' also separates; "-" = the
 * rules; "" = the BSR_TRSV_* variables of the environment), handed to the
 * kernels.  Returns 0, or -1 for an unknown knob. */
static int set_variant(const char *v)
{
    bsr_trsv_tuning t;
    for (int q = 0; q < NKNOB; q++) {
        char name[32];
        snprintf(name, sizeof name, "BSR_TRSV_%s", knobs[q]);
        const char *e = v[0] ? NULL : getenv(name);
        *knob_field(&t, q) = e && *e ? atoi(e) : -1;
    }
    char buf[128];
    snprintf(buf, sizeof buf, "%s", v);
    for (char *sv = NULL, *tok = strtok_r(buf, ",+", &sv); tok; tok = strtok_r(NULL, ",+", &sv)) {
        if (!strcmp(tok, "-")) continue;
        char *eq = strchr(tok, '=');
        if (!eq) return -1;
        *eq = 0;
        int q = 0;
        while (q < NKNOB && strcasecmp(tok, knobs[q])) q++;
        if (q == NKNOB) return -1;
        *knob_field(&t, q) = atoi(eq + 1);
    }
    bsr_trsv_set_tuning(&t);
    return 0;
}

/* Median seconds of the CPU solves L then U (lv NULL: S2; else OpenMP levels). */
static double cpu_time(const bsr_ilu_factors *f, int use_levels, bsr_multivec *X, bsr_multivec *Y,
                       int reps, double max_s)
{
    double v[32], spent = 0;
    int r = 0;
    for (; r < reps && r < 32; r++) {
        double t0 = bsr_now();
        if (bsr_trsv_lower(f->L, use_levels ? f->lvL : NULL, X, Y) ||
            bsr_trsv_upper(f->U, use_levels ? f->lvU : NULL, Y, Y))
            return NAN;
        v[r] = bsr_now() - t0;
        spent += v[r];
        if (spent > max_s) { r++; break; }
    }
    return bsr_median(v, r);
}

int bench_trsv(int argc, char **argv)
{
    static const char *const known[] = {"--gen", "--block", "--k", "--orders", "--kernels", "--prec", "--ilu",
                                        "--tau", "--reps", "--renumber", "--csv", "--plot", "--variants", "--jacobi",
                                        "--config", "--help", NULL};
    static const char *const valued[] = {"--gen", "--block", "--k", "--orders", "--kernels", "--prec", "--ilu",
                                         "--tau", "--reps", "--renumber", "--csv", "--plot", "--variants", "--jacobi",
                                         "--config", NULL};
    if (cli_flag(argc, argv, "--help")) { usage(); return 0; }
    if (cli_check_options(argc, argv, known, valued)) { usage(); return 2; }
    int ks[MAXK], nk = parse_ints(cli_opt(argc, argv, "--k") ? cli_opt(argc, argv, "--k") : "1,5,9", ks, MAXK);
    if (nk <= 0) { fprintf(stderr, "bsrsolve: --k wants a comma list of 1..16\n"); return 2; }
    int jac[MAXK], njac = cli_opt(argc, argv, "--jacobi") ? parse_ints(cli_opt(argc, argv, "--jacobi"), jac, MAXK) : 0;
    if (njac < 0) { fprintf(stderr, "bsrsolve: --jacobi wants a comma list of sweep counts 1..16\n"); return 2; }
    const char *ps = cli_opt(argc, argv, "--prec") ? cli_opt(argc, argv, "--prec") : "double";
    int mixed = !strcmp(ps, "mixed");
    bsr_precision fprec = !strcmp(ps, "float") ? BSR_FLOAT : BSR_DOUBLE;
    if (!mixed && strcmp(ps, "float") && strcmp(ps, "double")) { usage(); return 2; }
    bsr_precision vprec = fprec;
    int reps = cli_opt(argc, argv, "--reps") ? atoi(cli_opt(argc, argv, "--reps")) : 20;
    if (reps < 1) reps = 1;
    const char *csv = cli_opt(argc, argv, "--csv"), *png = cli_opt(argc, argv, "--plot");
    const char *rn = cli_opt(argc, argv, "--renumber") ? cli_opt(argc, argv, "--renumber") : "storage";
    int renumber = !strcmp(rn, "none") ? 0 : !strcmp(rn, "full") ? 2 : !strcmp(rn, "storage") ? 1 : -1;
    if (renumber < 0) { usage(); return 2; }
    /* variants of the level kernels' tuning knobs */
    char vbuf[512];
    snprintf(vbuf, sizeof vbuf, "%s", cli_opt(argc, argv, "--variants") ? cli_opt(argc, argv, "--variants") : "");
    const char *var[16];
    int nvar = 0;
    for (char *sv = NULL, *tok = strtok_r(vbuf, ";", &sv); tok && nvar < 16; tok = strtok_r(NULL, ";", &sv)) {
        if (set_variant(tok)) { fprintf(stderr, "bsrsolve: --variants: bad variant '%s'\n", tok); return 2; }
        var[nvar++] = tok;
    }
    if (!nvar) var[nvar++] = ""; /* the BSR_TRSV_* variables as they are */
    set_variant(var[0]);

    /* kernels */
    int nrows;
    const bsr_trsv_kernel_row *all_kernels = bsr_trsv_kernel_rows(&nrows);
    int kern[MAXC], nkern = 0;
    const char *kl = cli_opt(argc, argv, "--kernels") ? cli_opt(argc, argv, "--kernels") : "level";
    for (int c = 0; c < nrows && nkern < MAXC; c++) {
        int want = !strcmp(kl, "all") || (!strcmp(kl, "level") && all_kernels[c].kernel == BSR_TRSV_LEVEL);
        if (!want) {
            const char *p = strstr(kl, all_kernels[c].name);
            size_t L = strlen(all_kernels[c].name);
            want = p && (p == kl || p[-1] == ',') && (p[L] == 0 || p[L] == ',');
        }
        if (want) kern[nkern++] = c;
    }
    if (!nkern) { fprintf(stderr, "bsrsolve: no kernel matches --kernels %s\n", kl); return 2; }
    int explicit_tree = strstr(kl, "p2") != NULL; /* P2x named: also on orderings without a tree */

    /* orderings */
    char olist[512];
    snprintf(olist, sizeof olist, "%s", cli_opt(argc, argv, "--orders") ? cli_opt(argc, argv, "--orders") : "natural/rcm/nd");
    bsr_order_options oo[MAXO];
    const char *oname[MAXO];
    int no = 0;
    for (char *sv = NULL, *tok = strtok_r(olist, "/", &sv); tok; tok = strtok_r(NULL, "/", &sv)) {
        if (no == MAXO) break;
        bsr_status s = bsr_order_parse(tok, &oo[no]);
        if (s) return cli_fail(s);
        oname[no++] = tok;
    }

    bsr_ilu_options io;
    const char *ik = cli_opt(argc, argv, "--ilu") ? cli_opt(argc, argv, "--ilu") : "ilu0";
    const char *cfg = cli_opt(argc, argv, "--config");
    bsr_solver_options so;   /* its reorder string names the order below */
    if (cfg) {   /* the solver's CPU factors for these options */
        bsr_solver_options_default(&so);
        bsr_status s = bsr_solver_options_parse(&so, cfg);
        if (!s) s = bsr_ilu_options_from_solver(&so, &io);
        if (s) return cli_fail(s);
        ik = bsr_pc_name(so.precond);
        if (!cli_opt(argc, argv, "--orders")) { oo[0] = io.order; oname[0] = so.reorder[0] ? so.reorder : "default"; no = 1; }
    } else {
        bsr_ilu_options_default(&io, !strcmp(ik, "ilu2") ? BSR_ILU2 : !strcmp(ik, "ilut") ? BSR_ILUT : BSR_ILU0);
        if (cli_opt(argc, argv, "--tau")) io.tau1 = atof(cli_opt(argc, argv, "--tau"));
    }

    bsr_problem P;
    bsr_status st = cli_load(cli_positional(argc, argv, valued), cli_opt(argc, argv, "--gen"),
                             cli_opt(argc, argv, "--block"), fprec, CLI_DEFAULT_PROBLEM, &P, NULL);
    if (st) return cli_fail(st);
    bsr_context *ctx = NULL;
    st = bsr_context_create(&ctx, BSR_BACKEND_CUDA, 0, NULL);
    if (st) { bsr_problem_free(&P); return cli_fail(st); }
    const int n = bsr_matrix_nbrows(P.A), b = bsr_matrix_block(P.A);
    printf("bench trsv: %s  (%d block rows, b=%d, %d blocks)  %s factors, %s vectors, %s, renumber %s\n", P.name, n,
           b, bsr_matrix_nnzb(P.A), mixed ? "float" : ps, vprec == BSR_DOUBLE ? "double" : "float", ik, rn);
    printf("device: %s\n", bsr_context_describe(ctx));
    FILE *fc = csv ? fopen(csv, "w") : NULL;
    if (csv && !fc) fprintf(stderr, "bsrsolve: cannot write %s\n", csv);
    if (fc)
        fprintf(fc, "problem,order,kernel,k,prec,levels_L,levels_U,ms_LU,GBs,cusparse_ms,x_cusparse,s2_ms,x_s2,"
                    "omp_ms,x_omp,ours_analysis_ms,cusparse_analysis_ms,upload_ms\n");

    /* plot: time of L+U against k, one series per (ordering, kernel) + cuSPARSE */
    static double px[MAXO * (MAXC + 1)][MAXK], py[MAXO * (MAXC + 1)][MAXK];
    static char pname[MAXO * (MAXC + 1)][64];
    plot_series ser[MAXO * (MAXC + 1)];
    int nser = 0;

    for (int o = 0; o < no; o++) {
        io.order = oo[o];
        bsr_ilu *F = NULL;
        double t0 = bsr_now();
        st = bsr_ilu_setup(P.A, &io, &F);
        if (st) { cli_fail(st); continue; }
        double setup_s = bsr_now() - t0;
        bsr_ilu_factors f;
        bsr_ilu_get_factors(F, &f);
        const int has_tree = f.ord && f.ord->nnodes > 0;
        bsr_gpu_ilu_options go;
        bsr_gpu_ilu_options_default(&go);
        go.factor_float = mixed;
        go.renumber = renumber;
        bsr_gpu_ilu *G = NULL;
        st = bsr_gpu_ilu_create(ctx, F, &go, &G);
        if (st) { cli_fail(st); bsr_ilu_destroy(F); continue; }
        double up_s = 0, an_s = 0;
        bsr_gpu_ilu_setup_times(G, &up_s, &an_s);
        bsr_gpu_ilu_setup_breakdown bd;
        bsr_gpu_ilu_breakdown(G, &bd);
        const bsr_trsv_tri *TL = bsr_gpu_ilu_tri(G, 0), *TU = bsr_gpu_ilu_tri(G, 1);
        const size_t fs = bsr_precision_size(mixed ? BSR_FLOAT : fprec), vs = bsr_precision_size(vprec);
        const double fbytes = (double)(TL->nnzb + TU->nnzb) * ((double)b * b * fs + 4) + 2.0 * 3 * 4 * n;
        printf("\n== order %s: ILU setup %.2f s; L %d blocks %d levels (max width %d), U %d blocks %d levels (max width %d)%s\n",
               oname[o], setup_s, TL->nnzb, TL->nlevels, TL->max_width, TU->nnzb, TU->nlevels, TU->max_width,
               has_tree ? "" : "; no tree");
        if (has_tree) printf("   tree: %d nodes, depth %d\n", f.ord->nnodes, f.ord->depth);
        printf("   ours (renumber %s): value upload %.1f ms, allocations %.1f ms, analysis %.2f ms = host checks"
               " %.2f ms + structure upload %.2f ms + device layout %.2f ms\n", rn, up_s * 1e3, bd.alloc_s * 1e3,
               an_s * 1e3, bd.host_s * 1e3, bd.index_s * 1e3, bd.device_s * 1e3);
        printf("   %-15s %3s %9s %8s %9s %7s %9s %7s %9s %7s\n", "kernel", "k", "ms(L+U)", "GB/s", "cuSPARSE",
               "x", "S2 ms", "x", "OMP ms", "x");
        double cs_ms[MAXK], cs_an[MAXK], s2_ms[MAXK], omp_ms[MAXK], sv_ms[MAXK];
        int csidx = -1;
        if (!mixed && nser < MAXO * (MAXC + 1)) {
            csidx = nser++;
            snprintf(pname[csidx], 64, "%s cuSPARSE", oname[o]);
            ser[csidx].name = pname[csidx]; ser[csidx].n = 0; ser[csidx].x = px[csidx]; ser[csidx].y = py[csidx];
        }
        for (int q = 0; q < nk; q++) {
            const int k = ks[q];
            bsr_trsv_cusparse cr;
            cs_ms[q] = cs_an[q] = NAN;
            if (!mixed && bsr_trsv_cusparse_time(&f, k, reps, 1, &cr) == BSR_OK && cr.ok) {
                cs_ms[q] = cr.ms_solve;
                cs_an[q] = cr.ms_analysis;
            } else if (!mixed) printf("   cuSPARSE k=%d unavailable: %s\n", k, cr.why[0] ? cr.why : bsr_last_error());
            /* the generic API on the CSR form of the factors (issue 22) */
            bsr_trsv_spsv sv;
            sv_ms[q] = NAN;
            if (!mixed && bsr_trsv_spsv_time(&f, k, reps, &sv) == BSR_OK && sv.ok) {
                sv_ms[q] = sv.ms_solve;
                printf("   %-15s %3d %9.3f   (analysis %.2f ms; %s; rel. diff. from the host solve %.1e)\n", "cusparse-spsv",
                       k, sv.ms_solve, sv.ms_analysis, sv.alg, sv.rel_err);
            } else if (!mixed) printf("   cusparse-spsv k=%d unavailable: %s\n", k, sv.why[0] ? sv.why : bsr_last_error());
            bsr_multivec *X = NULL, *Y = NULL;
            bsr_multivec_create(&X, (int64_t)n * b, k, fprec);
            bsr_multivec_create(&Y, (int64_t)n * b, k, fprec);
            bsr_multivec_random(X, 7);
            s2_ms[q] = 1e3 * cpu_time(&f, 0, X, Y, 3, 2.0);
            omp_ms[q] = 1e3 * cpu_time(&f, 1, X, Y, 5, 2.0);
            bsr_multivec_destroy(X);
            bsr_multivec_destroy(Y);
            printf("   %-15s %3d %9.3f %8s %9s %7s %9.2f %7s %9.2f   (analysis %.2f ms)\n", "cusparse-bsrsv2", k, cs_ms[q],
                   "", "", "", s2_ms[q], "", omp_ms[q], cs_an[q]);
            if (csidx >= 0) { px[csidx][ser[csidx].n] = k; py[csidx][ser[csidx].n] = cs_ms[q]; ser[csidx].n++; }
        }
        for (int cv = 0; cv < nkern * nvar; cv++) {
            const int c = cv / nvar, v = cv % nvar;
            const bsr_trsv_kernel_row *K = &all_kernels[kern[c]];
            if (K->kernel != BSR_TRSV_LEVEL && !has_tree && !explicit_tree) continue;
            if (v > 0 && K->kernel != BSR_TRSV_LEVEL) continue; /* the knobs are the level kernels' */
            st = bsr_gpu_ilu_set_kernel(G, K->kernel, K->sched);
            if (st) { printf("   %-15s n/a: %s\n", K->name, bsr_last_error()); continue; }
            char kname[96];
            set_variant(var[v]);
            if (var[v][0]) snprintf(kname, sizeof kname, "%s[%s]", K->name, var[v]);
            else snprintf(kname, sizeof kname, "%s", K->name);
            int sidx = -1;
            if (nser < MAXO * (MAXC + 1)) {
                sidx = nser++;
                snprintf(pname[sidx], 64, "%.16s %.46s", oname[o], kname);
                ser[sidx].name = pname[sidx]; ser[sidx].n = 0; ser[sidx].x = px[sidx]; ser[sidx].y = py[sidx];
            }
            for (int q = 0; q < nk; q++) {
                const int k = ks[q];
                bsr_trsv_timing tm;
                /* the tree kernels are slow: fewer repetitions, bounded time */
                const int lvl = K->kernel == BSR_TRSV_LEVEL;
                st = bsr_gpu_ilu_time(G, k, vprec, lvl ? reps : 3, lvl ? 3.0 : 1.0, lvl, &tm);
                if (st) { printf("   %-15s %3d failed: %s\n", kname, k, bsr_last_error()); continue; }
                const double ms = tm.ms_L + tm.ms_U;
                const double bytes = fbytes + 2.0 * 2.0 * (double)n * b * k * vs;
                const double gbs = bytes / (ms * 1e-3) / 1e9;
                const double ours_an = an_s * 1e3 + tm.ms_graph_build;
                printf("   %-15s %3d %9.3f %8.1f %9.3f %7.2f %9.2f %7.1f %9.2f %7.1f   x spsv %.2f", kname, k, ms, gbs, cs_ms[q],
                       cs_ms[q] / ms, s2_ms[q], s2_ms[q] / ms, omp_ms[q], omp_ms[q] / ms, sv_ms[q] / ms);
                if (tm.ms_apply > 0) printf("   apply %.3f ms", tm.ms_apply);
                if (tm.ms_graph_build > 0) printf("   (graph build %.2f ms)", tm.ms_graph_build);
                printf("\n");
                if (fc)
                    fprintf(fc, "%s,%s,%s,%d,%s,%d,%d,%.5f,%.2f,%.5f,%.3f,%.4f,%.2f,%.4f,%.2f,%.3f,%.3f,%.2f\n", P.name,
                            oname[o], kname, k, ps, TL->nlevels, TU->nlevels, ms, gbs, cs_ms[q], cs_ms[q] / ms,
                            s2_ms[q], s2_ms[q] / ms, omp_ms[q], omp_ms[q] / ms, ours_an, cs_an[q], up_s * 1e3);
                if (sidx >= 0) { px[sidx][ser[sidx].n] = k; py[sidx][ser[sidx].n] = ms; ser[sidx].n++; }
            }
        }
        /* approximate solves (trisolve=jacobi:N, issue 22): N sweeps on each factor */
        for (int jq = 0; jq < njac; jq++) {
            if (bsr_gpu_ilu_set_jacobi(G, jac[jq])) break;
            for (int q = 0; q < nk; q++) {
                const int k = ks[q], N = jac[jq];
                bsr_trsv_timing tm;
                if (bsr_gpu_ilu_time(G, k, vprec, reps, 3.0, 0, &tm)) { printf("   jacobi:%d failed: %s\n", N, bsr_last_error()); continue; }
                const double ms = tm.ms_L + tm.ms_U;
                /* L read N times, U N times and its pivots once more; vectors 3 a sweep */
                const double bytes = fbytes * N + (double)n * b * b * fs + (6.0 * N + 1) * (double)n * b * k * vs;
                char jn[32];
                snprintf(jn, sizeof jn, "jacobi:%d", N);
                printf("   %-15s %3d %9.3f %8.1f %9.3f %7.2f %9.2f %7.1f %9.2f %7.1f   x spsv %.2f   (approximate: %d sweeps)\n",
                       jn, k, ms,
                       bytes / (ms * 1e-3) / 1e9, cs_ms[q], cs_ms[q] / ms, s2_ms[q], s2_ms[q] / ms, omp_ms[q],
                       omp_ms[q] / ms, sv_ms[q] / ms, N);
            }
            bsr_gpu_ilu_set_jacobi(G, 0);
        }
        printf("   analysis: ours %.2f ms (+ graph capture when used) vs cuSPARSE %.2f ms (k=%d): ratio %.2f\n",
               an_s * 1e3, cs_an[0], ks[0], an_s * 1e3 / cs_an[0]);
        bsr_gpu_ilu_destroy(G);
        bsr_ilu_destroy(F);
    }
    if (fc) fclose(fc);
    if (png && nser) {
        char title[256];
        snprintf(title, sizeof title, "trsv L+U: %s (%s)", P.name, ps);
        plot_png(png, title, "k (vectors)", "ms (L+U)", ser, nser, 0, 1);
    }
    bsr_context_destroy(ctx);
    bsr_problem_free(&P);
    return 0;
}
