/* SPDX-License-Identifier: BSD-3-Clause */
/* `bsrsolve bench trsvcpu`: the CPU triangular solves L then U of ILU(0)
 * (or, with --kind, ILUT / ILU2 at --cap) factors along each path of trsv.c, timed in one process: reference (the
 * generic row kernel in level-schedule order, which is what the library ran
 * on one thread before the natural path), natural, levels and auto (what
 * bsr_trsv_lower/upper pick), plus one whole bsr_ilu_apply; every path's
 * result compared bit for bit with the reference's. */
#include "cli.h"
#include "internal.h"
#include <omp.h>
#include <string.h>

static void usage(void)
{
    fprintf(stderr, "usage: bsrsolve bench trsvcpu [FILE.mtx | --gen SPEC] [--block B|auto] [--orders natural,rcm,nd]\n"
                    "         [--k K] [--reps N] [--float] [--kind ilu0|ilut|ilu2] [--cap auto|none|P]\n");
}

/* Median seconds of reps runs of L then U along path (Y = U^{-1} L^{-1} X). */
static double time_path(const bsr_ilu_factors *f, bsr_trsv_cpu_path path, const bsr_multivec *X,
                        bsr_multivec *Y, int reps, bsr_status *s)
{
    double t[64];
    if (reps > 64) reps = 64;
    for (int r = 0; r < reps && !*s; r++) {
        double t0 = omp_get_wtime();
        *s = bsr_trsv_cpu(f->L, f->lvL, 0, path, X, Y);
        if (!*s) *s = bsr_trsv_cpu(f->U, f->lvU, 1, path, Y, Y);
        t[r] = omp_get_wtime() - t0;
    }
    return bsr_median(t, reps);
}

/* Entry point: see usage(). */
int bench_trsvcpu(int argc, char **argv)
{
    static const char *const valued[] = {"--gen", "--block", "--orders", "--k", "--reps", "--kind", "--cap", NULL};
    static const char *const known[] = {"--float", "--help", NULL};
    if (cli_flag(argc, argv, "--help")) { usage(); return 0; }
    if (cli_check_options(argc, argv, known, valued)) { usage(); return 2; }
    const char *file = cli_positional(argc, argv, valued);
    int k = cli_opt(argc, argv, "--k") ? atoi(cli_opt(argc, argv, "--k")) : 1;
    int reps = cli_opt(argc, argv, "--reps") ? atoi(cli_opt(argc, argv, "--reps")) : 21;
    if (k < 1 || k > 64 || reps < 1 || reps > 64) { fprintf(stderr, "bsrsolve: --k and --reps: 1..64\n"); return 2; }
    bsr_precision fp = cli_flag(argc, argv, "--float") ? BSR_FLOAT : BSR_DOUBLE;
    const char *ks = cli_opt(argc, argv, "--kind") ? cli_opt(argc, argv, "--kind") : "ilu0";
    const char *cs = cli_opt(argc, argv, "--cap") ? cli_opt(argc, argv, "--cap") : "none";
    const bsr_ilu_kind kind = !strcmp(ks, "ilut") ? BSR_ILUT : !strcmp(ks, "ilu2") ? BSR_ILU2 : BSR_ILU0;
    const int cap = !strcmp(cs, "auto") ? 0 : !strcmp(cs, "none") ? BSR_ILU_CAP_NONE : atoi(cs);
    if ((kind == BSR_ILU0 && strcmp(ks, "ilu0")) || (cap <= 0 && strcmp(cs, "auto") && strcmp(cs, "none"))) {
        fprintf(stderr, "bsrsolve: --kind ilu0|ilut|ilu2, --cap auto|none|P (P > 0)\n");
        return 2;
    }
    char olist[256];
    snprintf(olist, sizeof olist, "%s", cli_opt(argc, argv, "--orders") ? cli_opt(argc, argv, "--orders") : "natural,rcm,nd");
    bsr_problem P;
    bsr_status s = cli_load(file, cli_opt(argc, argv, "--gen"), cli_opt(argc, argv, "--block"), BSR_DOUBLE,
                            CLI_DEFAULT_PROBLEM, &P, NULL);
    if (s) return cli_fail(s);
    bsr_matrix *A = P.A, *Af = NULL;
    if (fp == BSR_FLOAT && (s = bsr_matrix_copy(P.A, BSR_FLOAT, &Af))) { bsr_problem_free(&P); return cli_fail(s); }
    if (Af) A = Af;
    int b = bsr_matrix_block(A), nb = bsr_matrix_nbrows(A);
    int64_t N = (int64_t)nb * b;
    printf("bench trsvcpu: %s  n = %lld (%d block rows, b = %d), k = %d, %d threads, %s factors (cap %s) in %s, median of %d\n",
           P.name, (long long)N, nb, b, k, omp_get_max_threads(), ks, cs, fp == BSR_FLOAT ? "float" : "double", reps);
    printf("%-8s %7s %6s %9s %9s %9s %9s %9s %8s %s\n", "order", "levels", "width", "ref_ms", "natural", "levels",
           "auto", "apply_ms", "speedup", "bits");
    static const bsr_trsv_cpu_path paths[3] = {BSR_TRSV_CPU_NATURAL, BSR_TRSV_CPU_LEVELS, BSR_TRSV_CPU_AUTO};
    int rc = 0;
    for (char *sv = NULL, *tok = strtok_r(olist, ",", &sv); tok && !s; tok = strtok_r(NULL, ",", &sv)) {
        bsr_ilu_options io;
        bsr_ilu_options_default(&io, kind);
        io.cap = cap;
        if ((s = bsr_order_parse(tok, &io.order))) break;
        bsr_ilu *F = NULL;
        bsr_ilu_factors f;
        bsr_multivec *X = NULL, *Y0 = NULL, *Y = NULL, *Xa = NULL, *Ya = NULL;
        if ((s = bsr_ilu_setup(A, &io, &F)) || (s = bsr_ilu_get_factors(F, &f)) ||
            (s = bsr_multivec_create(&X, N, k, fp)) || (s = bsr_multivec_create(&Y0, N, k, fp)) ||
            (s = bsr_multivec_create(&Y, N, k, fp)) || (s = bsr_multivec_create(&Xa, N, k, BSR_DOUBLE)) ||
            (s = bsr_multivec_create(&Ya, N, k, BSR_DOUBLE)) || (s = bsr_multivec_random(X, 7)) ||
            (s = bsr_multivec_random(Xa, 7))) {
            bsr_ilu_destroy(F);
            bsr_multivec_destroy(X); bsr_multivec_destroy(Y0); bsr_multivec_destroy(Y);
            bsr_multivec_destroy(Xa); bsr_multivec_destroy(Ya);
            break;
        }
        double tref = time_path(&f, BSR_TRSV_CPU_REFERENCE, X, Y0, reps, &s), tp[3];
        int same = 1;
        for (int q = 0; q < 3 && !s; q++) {
            bsr_multivec_fill(Y, 0.0);
            tp[q] = time_path(&f, paths[q], X, Y, reps, &s);
            same &= !memcmp(bsr_multivec_cdata(Y), bsr_multivec_cdata(Y0), bsr_precision_size(fp) * (size_t)N * k);
        }
        double ta[64];
        for (int r = 0; r < reps && !s; r++) {
            double t0 = omp_get_wtime();
            s = bsr_ilu_apply(F, Xa, Ya);
            ta[r] = omp_get_wtime() - t0;
        }
        if (!s) {
            printf("%-8s %7d %6d %9.3f %9.3f %9.3f %9.3f %9.3f %7.2fx %s\n", tok, f.lvL->nlevels, f.lvL->max_width,
                   1e3 * tref, 1e3 * tp[0], 1e3 * tp[1], 1e3 * tp[2], 1e3 * bsr_median(ta, reps), tref / tp[2],
                   same ? "same" : "DIFFER");
            if (!same) rc = 1;
        }
        bsr_ilu_destroy(F);
        bsr_multivec_destroy(X); bsr_multivec_destroy(Y0); bsr_multivec_destroy(Y);
        bsr_multivec_destroy(Xa); bsr_multivec_destroy(Ya);
    }
    bsr_matrix_destroy(Af);
    bsr_problem_free(&P);
    if (s) return cli_fail(s);
    return rc;
}
