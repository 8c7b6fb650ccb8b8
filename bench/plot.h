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

#endif
