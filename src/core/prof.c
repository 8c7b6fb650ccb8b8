/* SPDX-License-Identifier: BSD-3-Clause */
/* Phase timer for setup profiling: with BSR_PROFILE=1 in the environment (or
 * after bsr_prof_enable(1), e.g. from the solver's profile=1 option) every
 * bsr_prof_mark prints the wall time since the previous mark to stderr, so one
 * run shows where a setup's seconds go.  Off, a mark costs one branch.
 *
 * Progress (a long setup is otherwise silent until it ends): with
 * BSR_PROGRESS=S (S > 0 seconds) in the environment, or after
 * bsr_progress_enable(S) (the CLI's --progress, and its default when stderr
 * is a terminal), a phase that took at least S seconds is reported as it ends,
 * "bsrsolve: ilu setup: ordering 6.4 s" on stderr, and within a long phase
 * its count now and then ("bsrsolve: ilu factor: 410000 of 1000000 rows (41%)
 * after 12.3 s", bsr_progress_tick).  Off unless asked. */
#include "internal.h"
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

static int prof_on = -1;           /* -1: environment not read yet */
static double progress_min = -1;   /* -1: environment not read yet; 0: off */
static double prof_last;           /* the previous mark (both share it) */

/* Monotonic wall-clock seconds: the library's one timer. */
double bsr_now(void)
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
        prof_last = bsr_now();
    }
    return prof_on;
}

void bsr_prof_enable(int on)
{
    if (on && !bsr_prof_on() && bsr_progress_min() == 0) prof_last = bsr_now();
    prof_on = on || (prof_on > 0);
}

/* Seconds a phase must last to be reported; 0: progress off. */
double bsr_progress_min(void)
{
    if (progress_min < 0) {
        const char *e = getenv("BSR_PROGRESS");
        char *end;
        double v = e ? strtod(e, &end) : 0;
        progress_min = e && end != e && !*end && v > 0 && v < 1e9 ? v : 0;
        if (!bsr_prof_on()) prof_last = bsr_now();
    }
    return progress_min;
}

void bsr_progress_enable(double min_s)
{
    bsr_progress_min();   /* the environment read once, and overridden */
    if (!(min_s > 0)) { progress_min = 0; return; }
    if (!bsr_prof_on() && progress_min == 0) prof_last = bsr_now();
    progress_min = min_s;
}

/* Device memory in use (bytes), reported with each profile mark once a
 * CUDA context set it (bsr_prof_set_memory); NULL in a CPU-only run. */
static double (*prof_memory)(void);

void bsr_prof_set_memory(double (*used)(void))
{
    prof_memory = used;
}

/* Print "prof: WHAT  seconds" since the previous mark (profiling), or
 * "bsrsolve: WHAT S s" when that took at least the progress threshold, then
 * restart the clock; what = NULL only restarts it. */
void bsr_prof_mark(const char *what)
{
    const int prof = bsr_prof_on();
    const double pmin = bsr_progress_min();
    if (!prof && pmin == 0) return;
    double t = bsr_now(), dt = t - prof_last;
    if (what && prof && prof_memory)   /* where a setup's device memory goes, step by step */
        fprintf(stderr, "prof: %-44s %9.4f s  (device memory in use %.2f GB)\n", what, dt, prof_memory() / 1e9);
    else if (what && prof) fprintf(stderr, "prof: %-44s %9.4f s\n", what, dt);
    if (what && pmin > 0 && dt >= pmin) {
        fprintf(stderr, "bsrsolve: %s %.*f s\n", what, dt < 10 ? 1 : 0, dt);
        fflush(stderr);
    }
    prof_last = t;
}

void bsr_progress_tick(const char *what, int64_t done, int64_t total, const char *unit)
{
    static atomic_flag busy = ATOMIC_FLAG_INIT;   /* one thread reports; the others go on */
    static double last;                           /* the previous tick */
    if (bsr_progress_min() == 0 || atomic_flag_test_and_set(&busy)) return;
    const double t = bsr_now(), from = last > prof_last ? last : prof_last;
    if (t - from >= progress_min) {
        fprintf(stderr, "bsrsolve: %s: %lld of %lld %s (%.0f%%) after %.1f s\n", what, (long long)done,
                (long long)total, unit, total > 0 ? 100.0 * (double)done / (double)total : 0.0, t - prof_last);
        fflush(stderr);
        last = t;
    }
    atomic_flag_clear(&busy);
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
