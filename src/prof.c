/* SPDX-License-Identifier: BSD-3-Clause */
/* Phase timer for setup profiling: with BSR_PROFILE=1 in the environment (or
 * after bsr_prof_enable(1), e.g. from the solver's profile=1 option) every
 * bsr_prof_mark prints the wall time since the previous mark to stderr, so one
 * run shows where a setup's seconds go.  Off, a mark costs one branch. */
#include "internal.h"
#include <stdlib.h>
#include <time.h>

static int prof_on = -1;    /* -1: environment not read yet */
static double prof_last;

static double prof_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

/* Whether marks print (the environment decides unless enabled explicitly). */
int bsr_prof_on(void)
{
    if (prof_on < 0) {
        const char *e = getenv("BSR_PROFILE");
        prof_on = e && e[0] == '1';
        prof_last = prof_now();
    }
    return prof_on;
}

void bsr_prof_enable(int on)
{
    if (on && !bsr_prof_on()) prof_last = prof_now();
    prof_on = on || (prof_on > 0);
}

/* Print "prof: WHAT  seconds" since the previous mark, then restart the clock;
 * what = NULL only restarts it. */
void bsr_prof_mark(const char *what)
{
    if (!bsr_prof_on()) return;
    double t = prof_now();
    if (what) fprintf(stderr, "prof: %-44s %9.4f s\n", what, t - prof_last);
    prof_last = t;
}

/* qsort comparison of doubles, ascending. */
static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median of the timings v[0..n) (sorts v; 0 when n <= 0). */
double bsr_median(double *v, int n)
{
    if (n <= 0) return 0;
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}
