/* SPDX-License-Identifier: BSD-3-Clause */
/* `bsrsolve bench pyramid`: explicit heat scheme on a grid larger than the
 * device budget.  Prints ns per point update for in-core (plain and
 * temporally blocked), trivial and pyramid (strips, tiles), the model's
 * choice of height, predicted vs measured times, PCIe bandwidth achieved vs
 * the H2D/D2H bandwidth measured in the same run, a sweep over the height
 * (plot: time against n, model and measurement) and the long-vector variant
 * (plot: time against N, model and measurement). */
#include "cli.h"
#include "plot.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* "512M", "1G", "100K", "12345" -> bytes (0 on error). */
static size_t parse_size(const char *s)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || v <= 0) return 0;
    switch (*end) {
    case 'k': case 'K': v *= 1024.0; end++; break;
    case 'm': case 'M': v *= 1024.0 * 1024; end++; break;
    case 'g': case 'G': v *= 1024.0 * 1024 * 1024; end++; break;
    default: break;
    }
    if (*end == 'B' || *end == 'b') end++;
    return *end ? 0 : (size_t)v;
}

static void usage(void)
{
    printf("usage: bsrsolve bench pyramid [--dim 1|2|3] [--grid N] [--steps K] [--device-mem SIZE]\n"
           "         [--height auto|N] [--float] [--slots S] [--trivial-steps T] [--sweep-steps K2]\n"
           "         [--heights 4,8,...] [--plot FILE.png] [--lv-plot FILE.png] [--lv-max N] [--no-longvec]\n"
           "  heat equation, N^dim grid (pinned host), r = 0.9/(2 dim); SIZE like 512M or 1G\n"
           "  (default: free device memory); in-core runs use all free device memory.\n"
           "  Trivial runs T steps (default min(K, 8)), reported per point update.\n");
}

/* Run and print one line; returns seconds (NAN on failure). */
static double run_line(const char *name, bsr_grid *G, const bsr_grid *init, const bsr_grid *ref,
                       bsr_pyr_opts *o, const bsr_pyr_model *M, double h2d_bw, double d2h_bw,
                       bsr_pyr_info *out)
{
    bsr_pyr_info info;
    if (bsr_grid_copy(G, init) != BSR_OK) { cli_fail(BSR_ERR_NOMEM); return NAN; }
    bsr_status s = bsr_pyr_run_gpu(G, o, M, &info);
    if (s != BSR_OK) {
        printf("%-22s failed: %s: %s\n", name, bsr_status_string(s), bsr_last_error());
        return NAN;
    }
    double ns = 1e9 * info.seconds / info.updates;
    char bits[64] = "";
    if (ref) {
        double md;
        int64_t nd;
        bsr_grid_compare(G, ref, &md, &nd);
        snprintf(bits, sizeof bits, nd ? "DIFFERS (%lld pts, max %.2g)" : "bitwise = in-core", (long long)nd, md);
        if (!nd) snprintf(bits, sizeof bits, "bitwise = in-core");
    }
    double pcie = (info.h2d_bytes + info.d2h_bytes) / info.seconds;
    printf("%-22s n=%-4d split %dx%dx%d (%4d sub) steps %4d  %9.4f s  %7.4f ns/upd  pred %9.4f s (%+5.1f%%)",
           name, info.height, info.split[0], info.split[1], info.split[2], info.nsub, info.iters,
           info.seconds, ns, info.predicted, 100 * (info.predicted - info.seconds) / info.seconds);
    if (info.h2d_bytes > 0)
        printf("  PCIe %.1f GB/s (h2d %.1f + d2h %.1f measured alone)", pcie / 1e9, h2d_bw / 1e9, d2h_bw / 1e9);
    printf("  recompute x%.3f  %s\n", info.computed / info.updates, bits);
    if (out) *out = info;
    return info.seconds;
}

int bench_pyramid(int argc, char **argv)
{
    static const char *const valued[] = {"--dim", "--grid", "--steps", "--device-mem", "--height", "--slots",
                                         "--trivial-steps", "--sweep-steps", "--heights", "--plot",
                                         "--lv-plot", "--lv-max", NULL};
    static const char *const known[] = {"--float", "--no-longvec", "--help", NULL};
    if (cli_flag(argc, argv, "--help")) { usage(); return 0; }
    if (cli_check_options(argc, argv, known, valued)) return 2;
    const char *v;
    int dim = (v = cli_opt(argc, argv, "--dim")) ? atoi(v) : 2;
    int64_t N = (v = cli_opt(argc, argv, "--grid")) ? atoll(v) : 4096;
    int K = (v = cli_opt(argc, argv, "--steps")) ? atoi(v) : 256;
    size_t budget = 0;
    if ((v = cli_opt(argc, argv, "--device-mem")) && !(budget = parse_size(v))) {
        fprintf(stderr, "bsrsolve: --device-mem: bad size '%s' (e.g. 512M, 1G)\n", v);
        return 2;
    }
    const char *hs = cli_opt(argc, argv, "--height");
    int height = hs && strcmp(hs, "auto") ? atoi(hs) : 0;
    int slots = (v = cli_opt(argc, argv, "--slots")) ? atoi(v) : 3;
    int Kt = (v = cli_opt(argc, argv, "--trivial-steps")) ? atoi(v) : (K < 8 ? K : 8);
    int Ks = (v = cli_opt(argc, argv, "--sweep-steps")) ? atoi(v) : (K < 128 ? K : 128);
    const char *plot = (v = cli_opt(argc, argv, "--plot")) ? v : "pyramid_time_vs_n.png";
    const char *lvplot = (v = cli_opt(argc, argv, "--lv-plot")) ? v : "pyramid_longvec.png";
    int64_t lvmax = (v = cli_opt(argc, argv, "--lv-max")) ? atoll(v) : 8192;
    bsr_precision prec = cli_flag(argc, argv, "--float") ? BSR_FLOAT : BSR_DOUBLE;
    if (dim < 1 || dim > 3 || N < 3 || K < 1 || height < 0 || slots < 1 || Kt < 1 || Ks < 1 ||
        (hs && strcmp(hs, "auto") && height < 1)) {
        fprintf(stderr, "bsrsolve: bad --dim/--grid/--steps/--height/--slots value\n");
        return 2;
    }
    if (bsr_device_count() < 1) {
        /* the whole benchmark compares device schemes: nothing to run on the CPU alone */
        fprintf(stderr, "bsrsolve: bench pyramid needs a GPU: no usable CUDA device here "
                        "(none present, no driver, or bsrsolve built without CUDA)\n");
        return 1;
    }
    int64_t n[3] = {N, N, N};
    bsr_grid *G = NULL, *init = NULL, *ref = NULL;
    bsr_status s;
    double t0 = bsr_now();
    if ((s = bsr_grid_create(&G, dim, n, prec, 1)) || (s = bsr_grid_create(&init, dim, n, prec, 0)) ||
        (s = bsr_grid_create(&ref, dim, n, prec, 0)) ||
        (s = bsr_grid_fill_test(init, 1, 0))) {
        cli_fail(s);
        bsr_grid_destroy(G); bsr_grid_destroy(init); bsr_grid_destroy(ref);
        return 1;
    }
    const size_t vs = bsr_precision_size(prec);
    const double gbytes = (double)bsr_grid_points(G) * vs;
    printf("pyramid: heat %dD, %lld^%d %s points (%.2f GiB), K = %d steps, r = %.3f, %d slots, set-up %.1f s\n",
           dim, (long long)N, dim, prec == BSR_DOUBLE ? "double" : "float", gbytes / (1 << 30), K,
           0.9 / (2 * dim), slots, bsr_now() - t0);
    bsr_pyr_model M;
    if ((s = bsr_pyr_calibrate(dim, prec, budget, &M))) {
        cli_fail(s);
        bsr_grid_destroy(G); bsr_grid_destroy(init); bsr_grid_destroy(ref);
        return 1;
    }
    double h2d_bw = vs / M.tau_h2d, d2h_bw = vs / M.tau_d2h;
    printf("calibration: H2D %.2f GB/s, D2H %.2f GB/s (pinned, alone), both at once %.2f GB/s total (duplex x%.3f),\n"
           "             strided (4096-value rows) H2D %.2f / D2H %.2f GB/s, D2D copy %.1f GB/s,\n"
           "             tau_a %.4f ns/update, launch %.2f us\n",
           h2d_bw / 1e9, d2h_bw / 1e9, 2 * vs / (M.duplex * (M.tau_h2d > M.tau_d2h ? M.tau_h2d : M.tau_d2h)) / 1e9,
           M.duplex, vs / M.tau_h2d_2d / 1e9, vs / M.tau_d2h_2d / 1e9, M.d2d_bw / 1e9, 1e9 * M.tau_a,
           1e6 * M.t_launch);
    printf("device budget: %s%.3f GiB (grid is %.1fx the budget)\n", budget ? "" : "free memory ",
           budget ? budget / 1073741824.0 : 0.0, budget ? gbytes / budget : 0.0);
    bsr_pyr_opts o;
    bsr_pyr_opts_default(&o);
    o.r = 0.9 / (2 * dim);
    o.steps = K;
    o.nslots = slots;
    o.device_mem = budget;

    /* trivial (Kt steps) against in-core of the same steps, then in-core K steps:
     * the reference result and throughput */
    o.algo = BSR_PYR_INCORE;
    o.device_mem = 0;
    o.steps = Kt;
    run_line("in-core (trivial's K)", G, init, NULL, &o, &M, h2d_bw, d2h_bw, NULL);
    bsr_grid_copy(ref, G);
    bsr_pyr_info itr;
    o.algo = BSR_PYR_TRIVIAL;
    o.device_mem = budget;
    double t_tr = run_line("trivial", G, init, ref, &o, &M, h2d_bw, d2h_bw, &itr);
    double ns_tr = t_tr == t_tr ? 1e9 * t_tr / itr.updates : NAN;
    bsr_pyr_info iin;
    o.algo = BSR_PYR_INCORE;
    o.device_mem = 0;
    o.steps = K;
    double t_in = run_line("in-core", G, init, NULL, &o, &M, h2d_bw, d2h_bw, &iin);
    int have_ref = t_in == t_in;
    if (have_ref) bsr_grid_copy(ref, G);
    o.device_mem = budget;

    /* pyramid per decomposition at the chosen (or given) height */
    double best = INFINITY;
    bsr_pyr_opts bo = o;
    for (int d = 0; d < (dim > 1 ? 2 : 1); d++) {
        bsr_pyr_opts w = o;
        w.algo = BSR_PYR_PYRAMID;
        w.decomp = (bsr_pyr_decomp)d;
        w.device_mem = budget;
        double pred = 0;
        if (!budget) {
            printf("pyramid: give --device-mem to run out of core\n");
            break;
        }
        if (height == 0) {
            if ((s = bsr_pyr_choose(G, &w, &M, K < 256 ? K : 256, 0, &pred))) { cli_fail(s); continue; }
        } else {
            w.height = height;
        }
        bsr_pyr_info ip;
        char name[64];
        snprintf(name, sizeof name, "pyramid %s", d ? "tiles" : "strips");
        double t = run_line(name, G, init, have_ref ? ref : NULL, &w, &M, h2d_bw, d2h_bw, &ip);
        if (t != t) continue;
        double ns = 1e9 * t / ip.updates;
        /* the original closed formula, tau_c = mean of h2d/d2h per value */
        double tc = 0.5 * (M.tau_h2d + M.tau_d2h), orig;
        double R1 = (double)N / ip.split[dim - 1] + 2.0 * ip.height;
        if (d == 0) orig = bsr_pyr_model_strips(K, (double)N, dim == 3 ? (double)N * N : (double)N, R1, ip.height, tc, M.tau_a);
        else orig = bsr_pyr_model_tiles(K, (double)N, (double)N, R1, (double)N / ip.split[dim - 2] + 2.0 * ip.height,
                                        ip.height, tc, M.tau_a) * (dim == 3 ? (double)N : 1);
        printf("    -> %.2fx faster than trivial, %.0f%% of in-core throughput; original serial formula %.4f s (%+.1f%%)\n",
               ns_tr / ns, have_ref ? 100 * (1e9 * t_in / iin.updates) / ns : NAN, orig, 100 * (orig - t) / t);
        if (t < best) { best = t; bo = w; bo.height = ip.height; }
    }
    if (best < INFINITY) {
        printf("chosen (--height %s): %s, n = %d\n", height ? "given" : "auto", bo.decomp ? "tiles" : "strips", bo.height);
        /* in-core with the same temporal blocking (grid on the device) */
        bsr_pyr_opts w = bo;
        w.algo = BSR_PYR_INCORE_BLOCKED;
        w.split[0] = w.split[1] = w.split[2] = 0;
        /* the two device grids plus the out-of-core run's slot budget: same subdomains */
        w.device_mem = (size_t)2 * (size_t)gbytes + budget;
        run_line("in-core blocked", G, init, have_ref ? ref : NULL, &w, &M, h2d_bw, d2h_bw, NULL);

        /* sweep over n: model vs measurement */
        const char *hl = (v = cli_opt(argc, argv, "--heights")) ? v : "4,8,16,24,32,48,64,96,128";
        double xs[64], ym[64], yp[64], yo[64];
        int np = 0;
        printf("sweep (%s, K = %d):\n     n     measured s   model s   err%%   orig-formula s\n", bo.decomp ? "tiles" : "strips", Ks);
        double errsum = 0;
        for (const char *c = hl; *c && np < 64;) {
            int h = atoi(c);
            while (*c && *c != ',') c++;
            if (*c == ',') c++;
            if (h < 1 || h > Ks) continue;
            bsr_pyr_opts x = bo;
            x.height = h;
            x.steps = Ks;
            x.split[0] = x.split[1] = x.split[2] = 0;
            bsr_pyr_info ip;
            if (bsr_grid_copy(G, init) != BSR_OK) break;
            if ((s = bsr_pyr_run_gpu(G, &x, &M, &ip))) { printf("  n=%d: %s\n", h, bsr_last_error()); continue; }
            double tc = 0.5 * (M.tau_h2d + M.tau_d2h);
            double R1 = (double)N / ip.split[dim - 1] + 2.0 * h;
            double orig = bo.decomp == BSR_PYR_STRIPS
                              ? bsr_pyr_model_strips(Ks, (double)N, dim == 3 ? (double)N * N : (double)N, R1, h, tc, M.tau_a)
                              : bsr_pyr_model_tiles(Ks, (double)N, (double)N, R1, (double)N / ip.split[dim - 2] + 2.0 * h, h, tc, M.tau_a);
            xs[np] = h; ym[np] = ip.seconds; yp[np] = ip.predicted; yo[np] = orig;
            double e = fabs(ip.seconds - ip.predicted) / ip.seconds;
            errsum += e;
            printf("  %4d  %11.4f  %9.4f  %5.1f  %11.4f   (%d sub)\n", h, ip.seconds, ip.predicted, 100 * e, orig, ip.nsub);
            np++;
        }
        if (np) {
            printf("model error (mean |t - tau|/t over %d heights): %.1f%%\n", np, 100 * errsum / np);
            plot_series ps[3] = {{"measured", np, xs, ym}, {"model", np, xs, yp},
                                 {"orig. formula", np, xs, yo}};
            char title[160];
            snprintf(title, sizeof title, "pyramid %dD %lld^%d, %s, K=%d, budget %.2f GiB", dim, (long long)N, dim,
                     bo.decomp ? "tiles" : "strips", Ks, budget / 1073741824.0);
            if (!plot_png(plot, title, "height n", "time (s)", ps, 3, 1, 1)) printf("plot: %s\n", plot);
        }
    }
    bsr_grid_destroy(G); bsr_grid_destroy(init); bsr_grid_destroy(ref);

    /* long-vector variant: sweep N, model vs measurement */
    if (!cli_flag(argc, argv, "--no-longvec")) {
        bsr_lv_model L;
        if ((s = bsr_lv_calibrate(&L))) return cli_fail(s);
        printf("long-vector (cuBLAS, %d ops/step): launch %.2f us, wave %.3f us, resident threads %lld\n", L.ops,
               1e6 * L.t_launch, 1e6 * L.t_wave, (long long)L.resident);
        printf("       N          m  waves   measured us/step   model us/step   err%%\n");
        double xs[128], ym[128], yp[128], se = 0, sm = 0;
        int np = 0;
        for (double x = 10; x <= (double)lvmax && np < 128; x *= 1.18) {
            int64_t NN = (int64_t)x;
            if (np && NN == (int64_t)xs[np - 1]) continue;
            double *u = calloc((size_t)(NN * NN), sizeof(double)), sec = 0;
            if (!u) break;
            int steps = NN < 512 ? 50 : NN < 4096 ? 10 : 3;
            bsr_pyr_longvec_gpu(u, NN, 0.2, 1, &sec);
            s = bsr_pyr_longvec_gpu(u, NN, 0.2, steps, &sec);
            free(u);
            if (s) { printf("  N=%lld: %s\n", (long long)NN, bsr_last_error()); break; }
            double t = sec / steps, p = bsr_lv_predict(&L, NN, 1);
            xs[np] = (double)NN; ym[np] = 1e6 * t; yp[np] = 1e6 * p;
            se += (t - p) * (t - p);
            sm += t;
            printf("  %6lld %10lld %6lld   %14.2f   %13.2f   %5.1f\n", (long long)NN, (long long)(NN * NN),
                   (long long)((NN * NN + L.resident - 1) / L.resident), 1e6 * t, 1e6 * p, 100 * (p - t) / t);
            np++;
        }
        if (np) {
            printf("long-vector normalized RMS deviation: %.1f%%\n", 100 * sqrt(se / np) / (sm / np));
            plot_series ps[2] = {{"measured", np, xs, ym}, {"model", np, xs, yp}};
            if (!plot_png(lvplot, "long-vector 2D heat step (cuBLAS)", "N (grid N x N)", "us per step", ps, 2, 1, 1))
                printf("plot: %s\n", lvplot);
        }
    }
    return 0;
}
