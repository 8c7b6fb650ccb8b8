/* SPDX-License-Identifier: BSD-3-Clause */
/* `bsrsolve bench spmm`: the T1 harness for Y = A*X (issue 3).
 *
 * Per matrix and per k: every selected GPU kernel timed with CUDA events
 * (median of --reps after warm-up, device-resident operands, beta = 0), its
 * effective bandwidth counting the minimal bytes (A's values and indices
 * once, X read once, Y written once), that as a fraction of the device-to-
 * device copy bandwidth measured in the same run, the ratio to cuSPARSE
 * (bsrmv for k = 1, bsrmm otherwise), and the speedups over the sequential
 * CPU kernel S1 on one core and over the OpenMP kernel.  Each result is
 * checked against S1 (rel_err).
 *
 * cuSPARSE layout: bsrmm wants column-major dense matrices, our multivectors
 * are row-interleaved.  The cuSPARSE row converts X (and Y) to column-major
 * scratch copies outside the timed region and times only the bsrmm call
 * (transB = N, ldb = rows of X, ldc = rows of Y); for k = 1 bsrmv reads the
 * multivector in place. */
#include "cli.h"
#include "internal.h"
#include "anchors.h"
#include "plot.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAXK 16
#define MAXMAT 32

static const char *const valued[] = {"--gen", "--k", "--kernels", "--csv", "--plot", "--plot-k", "--reps",
                                     "--cpu-reps", "--block", "--device", NULL};
static const char *const known[] = {"--float", "--help", "--no-cpu", NULL};

static void usage(void)
{
    printf("usage: bsrsolve bench spmm [FILE.mtx | --gen SPEC[,SPEC...]] [options]\n"
           "  --k 1,5,9           vector counts (1..16)\n"
           "  --kernels all|LIST  p11,p12,p13,p14,warp,rowj,auto,cusparse (all: every one but auto)\n"
           "  --reps N            timed repetitions per kernel, median reported (default 20)\n"
           "  --cpu-reps N        repetitions of the CPU kernels S1 and OpenMP (default 3)\n"
           "  --no-cpu            skip the CPU timings (no speedup columns)\n"
           "  --float             single precision (default double)\n"
           "  --block B|auto      block size for FILE (default auto)\n"
           "  --device D          CUDA device (default 0)\n"
           "  --csv F             also write every row to F\n"
           "  --plot F.png        speedup over S1 against the number of blocks, one line per kernel\n"
           "  --plot-k K          the k plotted (default: the largest given)\n"
           "default problem: --gen stencil3d:96:4\n");
}

/* Parse "1,5,9" into v (at most max values in lo..hi); returns the count or -1. */
static int parse_ints(const char *s, int *v, int max, int lo, int hi)
{
    int n = 0;
    while (s && *s) {
        char *end;
        long x = strtol(s, &end, 10);
        if (end == s || x < lo || x > hi || n >= max) return -1;
        v[n++] = (int)x;
        s = *end == ',' ? end + 1 : end;
        if (*end && *end != ',') return -1;
    }
    return n;
}

typedef struct {
    bsr_context *ctx;
    bsr_kernel kern;
    const bsr_matrix *A;
    const bsr_multivec *X;
    bsr_multivec *Y;
} spmm_arg;

static bsr_status spmm_once(void *p)
{
    spmm_arg *a = p;
    return bsr_ctx_spmm(a->ctx, a->kern, 1.0, a->A, a->X, 0.0, a->Y);
}

/* max |Y - Yref| / max |Yref| over host copies. */
static double rel_err(const bsr_multivec *Y, const bsr_multivec *R)
{
    int64_t m = bsr_multivec_rows(Y) * bsr_multivec_cols(Y);
    int dbl = bsr_multivec_precision(Y) == BSR_DOUBLE;
    const void *y = bsr_multivec_cdata(Y), *r = bsr_multivec_cdata(R);
    double num = 0, den = 0;
    for (int64_t e = 0; e < m; e++) {
        double a = dbl ? ((const double *)y)[e] : ((const float *)y)[e];
        double b = dbl ? ((const double *)r)[e] : ((const float *)r)[e];
        double d = fabs(a - b);
        if (!(d <= num)) num = isnan(d) ? INFINITY : d;
        if (fabs(b) > den) den = fabs(b);
    }
    return num / (den > 0 ? den : 1);
}

/* Median wall time of reps CPU SpMMs (the first also yields the reference). */
static double time_cpu(bsr_spmm_kernel kern, const bsr_matrix *A, const bsr_multivec *X, bsr_multivec *Y, int reps)
{
    double *t = malloc(sizeof(double) * reps);
    for (int r = 0; r < reps; r++) {
        double t0 = bsr_now();
        bsr_spmm_cpu(kern, 1.0, A, X, 0.0, Y);
        t[r] = bsr_now() - t0;
    }
    double m = bsr_median(t, reps);
    free(t);
    return m * 1e3;
}

typedef struct {
    FILE *csv;
    int nk, ks[MAXK], nkern, reps, cpu_reps, plot_k;
    bsr_kernel kerns[BSR_KERNEL_COUNT];
    double copy_gbs;
    double best_cus;   /* the fastest cuSPARSE product of the current point (ms; NAN: none) */
    /* plot data: [kernel][matrix] */
    double px[MAXMAT], py[BSR_KERNEL_COUNT][MAXMAT];
    int nplot;
} bench;

/* v printed as printf("%*.*f") in width w, or "n/a" when it is not a number
 * (no device, no cuSPARSE, no CPU timing); pct adds a '%'. */
static const char *num(char *buf, size_t len, int w, int prec, double v, int pct)
{
    if (v != v) snprintf(buf, len, "%*s", w + pct, "n/a");
    else snprintf(buf, len, "%*.*f%s", w, prec, v, pct ? "%" : "");
    return buf;
}

static void row_out(bench *B, const char *mat, const bsr_matrix *A, const char *kname, int k, double ms,
                    double bytes, double cus_ms, double s1_ms, double omp_ms, int det, double err,
                    const char *status)
{
    double gbs = ms > 0 ? bytes / (ms * 1e-3) / 1e9 : NAN;
    double frac = B->copy_gbs > 0 ? gbs / B->copy_gbs : NAN;
    double rc = cus_ms > 0 && ms > 0 ? cus_ms / ms : NAN;
    double rb = B->best_cus > 0 && ms > 0 ? B->best_cus / ms : NAN;
    double r1 = s1_ms > 0 && ms > 0 ? s1_ms / ms : NAN, ro = omp_ms > 0 && ms > 0 ? omp_ms / ms : NAN;
    if (status)
        printf("%-9s %3d  %s\n", kname, k, status);
    else {
        char c[7][32];
        printf("%-9s %3d %s %s %s %s %s %s %s  %-3s %9.2e\n", kname, k, num(c[0], 32, 9, 4, ms, 0),
               num(c[1], 32, 8, 1, gbs, 0), num(c[2], 32, 6, 1, 100 * frac, 1), num(c[3], 32, 9, 2, rc, 0),
               num(c[6], 32, 8, 2, rb, 0), num(c[4], 32, 8, 1, r1, 0), num(c[5], 32, 7, 2, ro, 0),
               det ? "yes" : "no", err);
    }
    if (B->csv)
        fprintf(B->csv, "%s,%d,%d,%d,%s,%s,%d,%.6f,%.2f,%.4f,%.4f,%.3f,%.3f,%s,%.3e,%s,%.4f\n", mat,
                bsr_matrix_nbrows(A), bsr_matrix_block(A), bsr_matrix_nnzb(A),
                bsr_matrix_precision(A) == BSR_DOUBLE ? "double" : "float", kname, k, ms, gbs, frac, rc, r1, ro,
                det ? "yes" : "no", err, status ? status : "ok", rb);
}

/* One matrix: all k, all kernels. */
static int bench_matrix(bench *B, bsr_context *ctx, const char *name, bsr_matrix *A)
{
    int b = bsr_matrix_block(A), nb = bsr_matrix_nbrows(A), nc = bsr_matrix_nbcols(A), nnzb = bsr_matrix_nnzb(A);
    bsr_precision prec = bsr_matrix_precision(A);
    size_t es = bsr_precision_size(prec);
    double abytes = (double)nnzb * b * b * es + 4.0 * nnzb + 4.0 * (nb + 1);
    printf("\n== %s: %d block rows, b = %d, %d blocks (%.1f per row), %s, %.1f MB of matrix\n", name, nb, b, nnzb,
           nb ? (double)nnzb / nb : 0, prec == BSR_DOUBLE ? "double" : "float", abytes / 1e6);
    if (ctx) {
        bsr_status s = bsr_matrix_upload(ctx, A);
        if (s) return cli_fail(s);
        printf("   D2D copy %.0f GB/s (same run); GB/s counts A once + X read + Y written; x_cusparse = "
               "cuSPARSE time / kernel time (bsrmv at k = 1, bsrmm otherwise); x_best = the fastest of bsrmv/bsrmm "
               "and the generic SpMV/SpMM with A as BSR (cusp-bsr) and as scalar CSR (cusp-csr) / kernel time\n",
               B->copy_gbs);
    }
    printf("%-9s %3s %9s %8s %7s %9s %8s %8s %7s  %-3s %9s\n", "kernel", "k", "time_ms", "GB/s", "%copy", "x_cusparse",
           "x_best", "x_S1", "x_OMP", "det", "rel_err");
    int mi = B->nplot < MAXMAT ? B->nplot++ : MAXMAT - 1;
    B->px[mi] = nnzb;
    for (int q = 0; q < BSR_KERNEL_COUNT; q++) B->py[q][mi] = NAN;
    for (int ki = 0; ki < B->nk; ki++) {
        int k = B->ks[ki];
        double bytes = abytes + (double)nc * b * k * es + (double)nb * b * k * es;
        bsr_multivec *X = NULL, *Yref = NULL, *Y = NULL;
        bsr_status s = bsr_multivec_create(&X, (int64_t)nc * b, k, prec);
        if (!s) s = bsr_multivec_random(X, 1234 + k);
        if (!s) s = bsr_multivec_create(&Yref, (int64_t)nb * b, k, prec);
        if (s) { bsr_multivec_destroy(X); bsr_multivec_destroy(Yref); return cli_fail(s); }
        double s1 = NAN, omp = NAN;
        /* the S1 result is the reference for every kernel's rel_err */
        if (B->cpu_reps > 0) {
            s1 = time_cpu(BSR_SPMM_S1, A, X, Yref, B->cpu_reps);
            omp = time_cpu(BSR_SPMM_OMP, A, X, Yref, B->cpu_reps);
        } else
            bsr_spmm_cpu(BSR_SPMM_OMP, 1.0, A, X, 0.0, Yref);
        row_out(B, name, A, "S1", k, s1, bytes, NAN, s1, omp, 1, 0, B->cpu_reps > 0 ? NULL : "skipped (--no-cpu)");
        row_out(B, name, A, "omp", k, omp, bytes, NAN, s1, omp, 1, 0, B->cpu_reps > 0 ? NULL : "skipped (--no-cpu)");
        if (!ctx) { bsr_multivec_destroy(X); bsr_multivec_destroy(Yref); continue; }
        s = bsr_multivec_upload(ctx, X);
        if (!s) s = bsr_multivec_create_device(ctx, &Y, (int64_t)nb * b, k, prec);
        if (s) { bsr_multivec_destroy(X); bsr_multivec_destroy(Yref); return cli_fail(s); }
        /* cuSPARSE first: its time is every other row's anchor */
        double cus = NAN, *t = malloc(sizeof(double) * B->reps);
        char msg[512];
        B->best_cus = NAN;
        s = bsr_cuda_cusparse_bench(ctx, 1.0, A, X, 0.0, Y, 3, B->reps, &cus);
        if (s) cus = NAN;
        else B->best_cus = cus;
        /* the generic API (issue 22): A as BSR and as scalar CSR, rows of their own */
        int want_cus = 0;
        for (int q = 0; q < B->nkern; q++) want_cus |= B->kerns[q] == BSR_KERNEL_CUSPARSE;
        double gen_ms[2] = {NAN, NAN};
        char gen_name[2][64], gen_msg[2][256];
        double gen_err[2] = {NAN, NAN};
        for (int c = 0; c < 2 && want_cus; c++) {
            gen_msg[c][0] = 0;
            if ((s = bsr_ctx_fill(ctx, Y, NAN)) == BSR_OK &&
                (s = bsr_cuda_cusparse_generic_bench(ctx, c, A, X, Y, 3, B->reps, &gen_ms[c], gen_name[c],
                                                     sizeof gen_name[c])) == BSR_OK &&
                (s = bsr_multivec_download(ctx, Y)) == BSR_OK) {
                gen_err[c] = rel_err(Y, Yref);
                if (!(B->best_cus <= gen_ms[c])) B->best_cus = gen_ms[c];
            } else {
                gen_ms[c] = NAN;
                snprintf(gen_msg[c], sizeof gen_msg[c], "%s: %s", s == BSR_ERR_UNSUPPORTED ? "refused" : "failed",
                         bsr_last_error());
            }
        }
        for (int c = 0; c < 2 && want_cus; c++) {
            const char *kn = c ? "cusp-csr" : "cusp-bsr";
            row_out(B, name, A, kn, k, gen_ms[c], bytes, cus, s1, omp, 0, gen_err[c], gen_msg[c][0] ? gen_msg[c] : NULL);
            if (!gen_msg[c][0]) printf("          (%s%s)\n", gen_name[c], c ? "; bytes counted as for A in BSR" : "");
        }
        for (int q = 0; q < B->nkern; q++) {
            bsr_kernel kern = B->kerns[q];
            char kname[32];
            snprintf(kname, sizeof kname, "%s", bsr_kernel_name(kern));
            if (kern == BSR_KERNEL_AUTO)
                snprintf(kname, sizeof kname, "auto:%s", bsr_kernel_name(bsr_kernel_auto(ctx, A, k)));
            double ms = NAN;
            if (kern == BSR_KERNEL_CUSPARSE) {
                if (isnan(cus)) {
                    snprintf(msg, sizeof msg, "failed: %s", bsr_last_error());
                    row_out(B, name, A, k == 1 ? "cusp-mv" : "cusp-mm", k, NAN, bytes, cus, s1, omp, 0, NAN, msg);
                    continue;
                }
                /* rerun so that Y holds cuSPARSE's result for the check */
                s = bsr_cuda_cusparse_bench(ctx, 1.0, A, X, 0.0, Y, 0, 1, &ms);
                ms = cus;
                snprintf(kname, sizeof kname, "%s", k == 1 ? "cusp-mv" : "cusp-mm");
            } else {
                s = bsr_ctx_fill(ctx, Y, NAN); /* poisoned: every entry must be written */
                if (s) { free(t); return cli_fail(s); }
                spmm_arg arg = {ctx, kern, A, X, Y};
                s = bsr_cuda_time(ctx, spmm_once, &arg, 3, B->reps, t);
                if (s == BSR_OK) ms = bsr_median(t, B->reps);
            }
            if (s == BSR_OK) s = bsr_multivec_download(ctx, Y);
            if (s != BSR_OK) {
                snprintf(msg, sizeof msg, "%s: %s", s == BSR_ERR_UNSUPPORTED ? "refused" : "failed", bsr_last_error());
                row_out(B, name, A, kname, k, NAN, bytes, cus, s1, omp, 0, NAN, msg);
                continue;
            }
            double err = rel_err(Y, Yref);
            row_out(B, name, A, kname, k, ms, bytes, cus, s1, omp, bsr_kernel_deterministic(kern), err, NULL);
            if (kern == BSR_KERNEL_AUTO) {
                int code = 0, th = 0;
                bsr_cuda_spmm_auto_pick(A, k < 16 ? k : 16, &code, &th);
                if (code) printf("          (ROWJ code %d, %d threads; sliced copy %s)\n", code, th,
                                 bsr_cuda_matrix_sliced(A) == 1 ? "current" : bsr_cuda_matrix_sliced(A) < 0 ? "not kept" : "not built");
            }
            if (k == B->plot_k) B->py[kern][mi] = s1 / ms;
        }
        free(t);
        bsr_multivec_destroy(X); bsr_multivec_destroy(Y); bsr_multivec_destroy(Yref);
    }
    return 0;
}

int bench_spmm(int argc, char **argv)
{
    if (cli_flag(argc, argv, "--help")) { usage(); return 0; }
    if (cli_check_options(argc, argv, known, valued)) return 2;
    bench B;
    memset(&B, 0, sizeof B);
    const char *ks = cli_opt(argc, argv, "--k"), *kl = cli_opt(argc, argv, "--kernels");
    B.nk = parse_ints(ks ? ks : "1,5,9", B.ks, MAXK, 1, 16);
    if (B.nk <= 0) { fprintf(stderr, "bsrsolve: --k wants a list of 1..16, got '%s'\n", ks); return 2; }
    const char *rs = cli_opt(argc, argv, "--reps"), *cr = cli_opt(argc, argv, "--cpu-reps");
    B.reps = rs ? atoi(rs) : 20;
    B.cpu_reps = cli_flag(argc, argv, "--no-cpu") ? 0 : cr ? atoi(cr) : 3;
    if (B.reps < 1 || B.reps > 100000 || B.cpu_reps < 0) { fprintf(stderr, "bsrsolve: bad --reps/--cpu-reps\n"); return 2; }
    if (B.reps < 20) fprintf(stderr, "bsrsolve: note: --reps %d < 20, medians are less reliable\n", B.reps);
    const char *pk = cli_opt(argc, argv, "--plot-k");
    B.plot_k = B.ks[0];
    for (int i = 1; i < B.nk; i++) if (B.ks[i] > B.plot_k) B.plot_k = B.ks[i];
    if (pk) B.plot_k = atoi(pk);
    if (!kl || !strcmp(kl, "all")) {
        static const bsr_kernel all[] = {BSR_KERNEL_P11, BSR_KERNEL_P12, BSR_KERNEL_P13, BSR_KERNEL_P14,
                                         BSR_KERNEL_WARP, BSR_KERNEL_ROWJ, BSR_KERNEL_CUSPARSE};
        B.nkern = (int)(sizeof all / sizeof all[0]);
        memcpy(B.kerns, all, sizeof all);
    } else {
        char buf[256];
        snprintf(buf, sizeof buf, "%s", kl);
        for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
            bsr_kernel k;
            if (bsr_kernel_parse(tok, &k) != BSR_OK || k == BSR_KERNEL_S1 || k == BSR_KERNEL_OMP) {
                fprintf(stderr, "bsrsolve: --kernels: '%s' is not a GPU kernel (p11,p12,p13,p14,warp,rowj,auto,cusparse)\n", tok);
                return 2;
            }
            if (B.nkern < BSR_KERNEL_COUNT) B.kerns[B.nkern++] = k;
        }
    }
    bsr_precision prec = cli_flag(argc, argv, "--float") ? BSR_FLOAT : BSR_DOUBLE;
    const char *file = cli_positional(argc, argv, valued), *gen = cli_opt(argc, argv, "--gen");
    const char *csv = cli_opt(argc, argv, "--csv"), *plot = cli_opt(argc, argv, "--plot");
    const char *dev = cli_opt(argc, argv, "--device");
    if (file && gen) { fprintf(stderr, "bsrsolve: give a file or --gen, not both\n"); return 2; }

    bsr_context *ctx = NULL;
    bsr_status s = bsr_context_create(&ctx, BSR_BACKEND_CUDA, dev ? atoi(dev) : 0, NULL);
    if (s != BSR_OK) {
        fprintf(stderr, "bsrsolve: no GPU (%s): CPU rows only\n", bsr_last_error());
        ctx = NULL;
    } else {
        printf("device: %s\n", bsr_context_describe(ctx));
        s = bsr_cuda_copy_gbs(ctx, (size_t)1 << 29, 20, &B.copy_gbs);
        if (s) { bsr_context_destroy(ctx); return cli_fail(s); }
        printf("device-to-device copy: %.0f GB/s (2 x 512 MiB, read + write, median of 20)\n", B.copy_gbs);
    }
    if (csv && !(B.csv = fopen(csv, "w"))) {
        fprintf(stderr, "bsrsolve: cannot write %s\n", csv);
        bsr_context_destroy(ctx);
        return 1;
    }
    if (B.csv)
        fprintf(B.csv, "matrix,nbrows,b,nnzb,precision,kernel,k,time_ms,gbs,frac_copy,x_cusparse,x_s1,x_omp,"
                       "deterministic,rel_err,status,x_best_cusparse\n");

    int rc = 0;
    char specs[1024];
    snprintf(specs, sizeof specs, "%s", gen ? gen : "stencil3d:96:4");
    char *save = NULL;
    for (char *spec = file ? NULL : strtok_r(specs, ",", &save); file || spec; spec = strtok_r(NULL, ",", &save)) {
        bsr_problem P;
        double t0 = bsr_now();
        s = cli_load(file, file ? NULL : spec, cli_opt(argc, argv, "--block"), prec, NULL, &P, NULL);
        if (s) { rc = cli_fail(s); break; }
        fprintf(stderr, "(loaded %s in %.1f s)\n", P.name, bsr_now() - t0);
        if (bsr_matrix_block(P.A) > BSR_MAX_BLOCK) printf("\n== %s: b = %d > %d, GPU kernels not built for it\n", P.name, bsr_matrix_block(P.A), BSR_MAX_BLOCK);
        else rc = bench_matrix(&B, ctx, P.name, P.A);
        bsr_problem_free(&P);
        if (rc || file) break;
    }
    if (B.csv) fclose(B.csv);
    if (plot && rc == 0) {
        plot_series ser[BSR_KERNEL_COUNT];
        int ns = 0;
        for (int q = 0; q < B.nkern; q++) {
            bsr_kernel kern = B.kerns[q];
            ser[ns].name = bsr_kernel_name(kern);
            ser[ns].n = B.nplot;
            ser[ns].x = B.px;
            ser[ns].y = B.py[kern];
            ns++;
        }
        char title[128];
        snprintf(title, sizeof title, "SpMM speedup over S1 (one CPU core), k = %d", B.plot_k);
        if (plot_png(plot, title, "blocks (nnzb)", "speedup over S1", ser, ns, 1, 1)) rc = 1;
        else printf("plot: %s\n", plot);
    }
    bsr_context_destroy(ctx);
    return rc;
}
