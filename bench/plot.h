/* SPDX-License-Identifier: BSD-3-Clause */
/* Tiny dependency-free PNG line plots for the benchmarks (bench/plot.c). */
#ifndef BSR_PLOT_H
#define BSR_PLOT_H

typedef struct {
    const char *name;      /* legend text */
    int n;                 /* number of points */
    const double *x, *y;   /* points; non-finite or (log axes) non-positive ones are skipped */
} plot_series;

/* Draw the series as lines with markers into an 800x520 PNG at path, with a
 * title, axis labels, ticks and a legend; logx/logy select log10 axes.
 * Returns 0, or -1 (with a message on stderr) when the file cannot be written. */
int plot_png(const char *path, const char *title, const char *xlabel, const char *ylabel,
             const plot_series *s, int ns, int logx, int logy);

/* Ticks of a linear axis over [*lo, *hi]: the step is 1, 2 or 5 x 10^k (at
 * least 1 when integer: an iteration axis), the smallest that gives at most
 * maxt ticks once [*lo, *hi] is widened to multiples of it; the ticks, the
 * multiples of the step from *lo to *hi, go to t[0..maxt); returns their
 * count (>= 2).  maxt >= 2. */
int plot_ticks_linear(double *lo, double *hi, int maxt, int integer, double *t);
/* Ticks of a log10 axis whose range *lo..*hi is in decades (integer
 * exponents): every decade when at most maxt fit, else every s-th for the
 * smallest s of 1, 2, 5 x 10^k that fits, with *lo and *hi widened to
 * multiples of s; the exponents go to t[0..maxt); returns their count. */
int plot_ticks_log(double *lo, double *hi, int maxt, double *t);

#endif
