/* SPDX-License-Identifier: BSD-3-Clause */
/* The benchmarks' PNG plotter writes a valid PNG (deflated when built with
 * zlib) and rejects unwritable paths; its axes' ticks are round numbers. */
#include "harness.h"
#include "plot.h"
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef BSR_HAVE_ZLIB
#include <zlib.h>
#endif

/* Test: PNG plot written. */
static void test_png_written(void)
{
    double x[] = {1e3, 1e4, 1e5}, y[] = {1, NAN, 4}, y2[] = {-1, 2, 3};
    plot_series s[2] = {{"a", 3, x, y}, {"b", 3, x, y2}};
    char path[64]; /* per process: suites of several builds may run at once */
    snprintf(path, sizeof path, "/tmp/bsr_plot_test_%ld.png", (long)getpid());
    CU_ASSERT_EQUAL(plot_png(path, "t", "x", "y", s, 2, 1, 1), 0);
    FILE *f = fopen(path, "rb");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    unsigned char sig[16];
    CU_ASSERT_EQUAL(fread(sig, 1, 16, f), 16);
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fclose(f);
    CU_ASSERT_EQUAL(memcmp(sig, "\x89PNG\r\n\x1a\n", 8), 0);
    CU_ASSERT_EQUAL(memcmp(sig + 12, "IHDR", 4), 0);
#ifdef BSR_HAVE_ZLIB
    CU_ASSERT(size < 100000); /* deflated: a mostly white canvas shrinks ~50x */
    if (!(size < 100000)) printf("\n  PNG of %ld bytes: not deflated", size);
    /* the IDAT stream inflates to the rows: a filter byte 0 and 800 RGB pixels each */
    unsigned char *png = malloc((size_t)size), *rows = malloc(520 * 2401 + 1);
    f = fopen(path, "rb");
    CU_ASSERT_FATAL(png && rows && f && fread(png, 1, (size_t)size, f) == (size_t)size);
    fclose(f);
    long at = 8 + 25; /* signature, IHDR */
    CU_ASSERT_EQUAL_FATAL(memcmp(png + at + 4, "IDAT", 4), 0);
    uLong zlen = (uLong)png[at] << 24 | (uLong)png[at + 1] << 16 | (uLong)png[at + 2] << 8 | png[at + 3];
    uLongf rlen = 520 * 2401 + 1;
    CU_ASSERT_EQUAL(uncompress(rows, &rlen, png + at + 8, zlen), Z_OK);
    CU_ASSERT_EQUAL(rlen, 520 * 2401);
    for (int y = 0; y < 520 && rlen == 520 * 2401; y++) CU_ASSERT_EQUAL(rows[(size_t)y * 2401], 0);
    free(png); free(rows);
#else
    CU_ASSERT(size > 800 * 520 * 3); /* stored blocks: at least the raw pixels */
#endif
    remove(path);
    CU_ASSERT_EQUAL(plot_png("/nonexistent/dir/p.png", "t", "x", "y", s, 2, 0, 0), -1);
}

/* The 1, 2 or 5 x 10^k nearest to s (relatively). */
static double nearest_nice(double s)
{
    static const double m[3] = {1, 2, 5};
    double best = 0;
    for (int k = (int)floor(log10(s)) - 1; k <= (int)floor(log10(s)) + 1; k++)
        for (int i = 0; i < 3; i++) {
            double c = k >= 0 ? m[i] * pow(10, k) : m[i] / pow(10, -k);
            if (!best || fabs(c / s - 1) < fabs(best / s - 1)) best = c;
        }
    return best;
}

/* Ticks t[0..n) of an axis widened to [lo, hi]: at least 2, at most maxt,
 * evenly spaced by a step of 1, 2 or 5 x 10^k from lo to hi, on its
 * multiples, covering [a, b] (to the rounding of values of lo's and hi's
 * magnitude). */
static void check_ticks(const double *t, int n, double lo, double hi, double a, double b, int maxt)
{
    CU_ASSERT(n >= 2 && n <= maxt);
    if (n < 2) return;
    double err = 8 * DBL_EPSILON * fmax(fabs(lo), fabs(hi)), step = nearest_nice(t[1] - t[0]);
    CU_ASSERT(fabs(t[1] - t[0] - step) <= err + 1e-12 * step);
    for (int i = 1; i < n; i++) CU_ASSERT(fabs(t[i] - t[i - 1] - step) <= err + 1e-12 * step);
    CU_ASSERT(t[0] == lo && t[n - 1] == hi);
    CU_ASSERT(lo <= a + 1e-9 * step + err && hi >= b - 1e-9 * step - err);   /* the ticks' slack of 1e-9 step */
    double q = t[0] / step;
    CU_ASSERT(fabs(q - round(q)) * step <= err + 1e-12 * step);   /* on multiples of the step */
}

/* Issue 40: an iteration axis 0..54 had ticks at 10.8, 21.6, ...; a residual
 * axis of 1E0..1E-9 labelled 1E-1, 1E-3, 1E-4, 1E-6, 1E-8 (decades skipped
 * unevenly).  Now: steps of 1, 2, 5 x 10^k, integers on an integer axis,
 * every decade of a log axis while they fit, else a regular stride. */
static void test_ticks(void)
{
    double t[16], lo, hi;
    /* iterations 0..54: 0, 20, 40, 60 */
    lo = 0; hi = 54;
    int n = plot_ticks_linear(&lo, &hi, 6, 1, t);
    CU_ASSERT(n == 4 && t[0] == 0 && t[1] == 20 && t[3] == 60 && lo == 0 && hi == 60);
    /* 0..3 iterations: integer steps only */
    lo = 0; hi = 3;
    n = plot_ticks_linear(&lo, &hi, 6, 1, t);
    CU_ASSERT(n == 4 && t[1] == 1 && t[3] == 3);
    for (int i = 0; i < n; i++) CU_ASSERT(t[i] == floor(t[i]));
    /* 0..1000 */
    lo = 0; hi = 1000;
    n = plot_ticks_linear(&lo, &hi, 6, 1, t);
    CU_ASSERT(n == 6 && t[1] == 200 && t[5] == 1000);
    /* a real-valued axis: 0.3 .. 0.77 in tenths */
    lo = 0.3; hi = 0.77;
    n = plot_ticks_linear(&lo, &hi, 6, 0, t);
    check_ticks(t, n, lo, hi, 0.3, 0.77, 6);
    CU_ASSERT(n == 6 && fabs(t[0] - 0.3) < 1e-12 && fabs(hi - 0.8) < 1e-12);
    /* one value: a little range around it */
    lo = hi = 5;
    n = plot_ticks_linear(&lo, &hi, 6, 1, t);
    check_ticks(t, n, lo, hi, 5, 5, 6);
    lo = hi = 0;
    n = plot_ticks_linear(&lo, &hi, 11, 0, t);
    check_ticks(t, n, lo, hi, 0, 0, 11);
    /* many ranges: the properties */
    uint64_t r = 12345;
    for (int i = 0; i < 2000; i++) {
        double u = bsr_test_unif(&r);
        double a = (u - 0.5) * pow(10, (int)(r % 13) - 6);
        u = bsr_test_unif(&r);
        double b = a + u * pow(10, (int)(r % 11) - 5);
        int maxt = 2 + (int)(r % 10), integer = i % 3 == 0;
        if (integer) { a = floor(a * 1000); b = a + floor(fabs(b - a) * 1000); }
        lo = a; hi = b;
        n = plot_ticks_linear(&lo, &hi, maxt, integer, t);
        check_ticks(t, n, lo, hi, a, b == a ? a : b, maxt);
        if (integer) for (int j = 0; j < n; j++) CU_ASSERT(t[j] == floor(t[j]));
    }
    /* a residual history 1 .. 1e-9: every decade labelled */
    lo = log10(3e-10); hi = 0;
    n = plot_ticks_log(&lo, &hi, 11, t);
    CU_ASSERT_EQUAL(n, 11);
    for (int i = 0; i < n; i++) CU_ASSERT_EQUAL(t[i], -10 + i);
    CU_ASSERT(lo == -10 && hi == 0);
    /* 1e-20 .. 1e0: 21 decades do not fit 11 labels: every second one */
    lo = -20; hi = log10(0.5);
    n = plot_ticks_log(&lo, &hi, 11, t);
    check_ticks(t, n, lo, hi, -20, log10(0.5), 11);
    CU_ASSERT(n == 11 && t[1] - t[0] == 2 && lo == -20 && hi == 0);
    /* 1e-21 .. 1e2 (24 decades): every fifth, from 1E-25 to 1E5 */
    lo = -21; hi = log10(50);
    n = plot_ticks_log(&lo, &hi, 11, t);
    check_ticks(t, n, lo, hi, -21, log10(50), 11);
    CU_ASSERT(n == 7 && t[1] - t[0] == 5 && lo == -25 && hi == 5);
    /* within one decade: its two ends */
    lo = log10(2); hi = log10(7);
    n = plot_ticks_log(&lo, &hi, 8, t);
    CU_ASSERT(n == 2 && t[0] == 0 && t[1] == 1);
    /* and a plot over such axes is still written */
    double x[55], y[55];
    for (int i = 0; i < 55; i++) { x[i] = i; y[i] = pow(10, -i / 6.0); }
    plot_series s = {"rhs 0", 55, x, y};
    char path[64];
    snprintf(path, sizeof path, "/tmp/bsr_plot_ticks_%ld.png", (long)getpid());
    CU_ASSERT_EQUAL(plot_png(path, "t", "iteration", "relative residual", &s, 1, 0, 1), 0);
    remove(path);
}

int main(int argc, char **argv)
{
    static const bsr_test tests[] = {{"PNG plot written", test_png_written},
                                     {"axis ticks at round numbers", test_ticks}, {NULL, NULL}};
    return bsr_test_main("plot", tests, argc, argv);
}
