/* SPDX-License-Identifier: BSD-3-Clause */
/* An ordering made ahead on a second host thread: the fallback's nested
 * dissection runs beside the device solve that decides whether it is needed
 * (the host is idle there), so that its seconds leave the critical path. */
#include "reorder_impl.h"
#include "order_ahead.h"
#include <pthread.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

/* Who frees h: the thread when it ends after a release, the releasing
 * caller when the thread has ended before (state, exchanged by both). */
enum { AHEAD_RUNNING, AHEAD_ENDED, AHEAD_RELEASED };

struct bsr_order_ahead {
    pthread_t th;
    int joined;
    atomic_int state;       /* AHEAD_*: see above */
    bsr_graph G;            /* a copy of A's block graph: A may change meanwhile */
    bsr_order_options opt;
    double max_products;    /* > 0: nothing ordered where the estimate passes it */
    int n;                  /* A's block rows */
    int estimated;          /* the estimate below was made (under max_products) */
    double est;             /* bsr_sep_products' estimate (stopped past max_products) */
    int sep;                /* and its top separator's rows */
    atomic_int stop;        /* set: the dissection gives up before its next METIS call */
    bsr_ordering *ord;      /* the thread's ordering; NULL where it failed or was called off */
    double secs;            /* the thread's seconds */
};

/* h and all it holds. */
static void ahead_destroy(bsr_order_ahead *h)
{
    bsr_graph_free(&h->G);
    bsr_ordering_free(h->ord);
    free(h);
}

/* The thread: h's ordering of h->G, on one core (no OpenMP team beside the
 * caller's); its errors stay in its own thread's message.  Released while
 * it ran (detached then), it frees h itself. */
static void *ahead_main(void *arg)
{
    bsr_order_ahead *h = arg;
#ifdef _OPENMP
    omp_set_num_threads(1);
#endif
    const double t = bsr_now();
    if (h->max_products > 0) h->estimated = !bsr_graph_sep_products(&h->G, h->max_products, &h->est, &h->sep);
    if (h->max_products > 0 && !(h->estimated && h->est <= h->max_products))
        h->ord = NULL;
    else if (bsr_order_graph(&h->G, &h->opt, &h->stop, &h->ord)) h->ord = NULL;
    h->secs = bsr_now() - t;
    if (atomic_exchange(&h->state, AHEAD_ENDED) == AHEAD_RELEASED) ahead_destroy(h);
    return NULL;
}

bsr_status bsr_order_ahead_start(const bsr_matrix *A, const bsr_order_options *opt, double max_products,
                                 bsr_order_ahead **out)
{
    BSR_CHECK_ARG(A && opt && out, "bsr_order_ahead_start: NULL argument");
    *out = NULL;
    bsr_order_ahead *h = bsr_calloc(1, sizeof *h, "ordering ahead");
    if (!h) return BSR_ERR_NOMEM;
    h->opt = *opt;
    h->max_products = max_products;
    atomic_init(&h->stop, 0);
    atomic_init(&h->state, AHEAD_RUNNING);
    h->n = A->nbrows;
    bsr_status s = bsr_graph_build(A, &h->G);
    if (s) { free(h); return s; }
    if (pthread_create(&h->th, NULL, ahead_main, h)) {   /* no thread: ordered when needed */
        bsr_graph_free(&h->G);
        free(h);
        return BSR_OK;
    }
    *out = h;
    return BSR_OK;
}

void bsr_order_ahead_stop(bsr_order_ahead *h)
{
    if (h) atomic_store(&h->stop, 1);
}

void bsr_order_ahead_wait(bsr_order_ahead *h)
{
    if (!h || h->joined) return;
    pthread_join(h->th, NULL);
    h->joined = 1;
    bsr_graph_free(&h->G);
    if (atomic_load(&h->stop)) {   /* called off: whatever it made is not the ordering asked for */
        bsr_ordering_free(h->ord);
        h->ord = NULL;
    }
}

int bsr_order_ahead_estimate(const bsr_order_ahead *h, double line, int n, double *est, int *sep)
{
    if (!h || !h->joined || !h->estimated || h->max_products != line || h->n != n) return 0;
    *est = h->est;
    if (sep) *sep = h->sep;
    return 1;
}

bsr_ordering *bsr_order_ahead_copy(const bsr_order_ahead *h, const bsr_order_options *opt, int n, double *secs)
{
    if (!h || !h->joined || !h->ord || h->ord->n != n || !bsr_order_options_same(&h->opt, opt)) return NULL;
    if (secs) *secs = h->secs;
    return bsr_ordering_copy(h->ord);
}

void bsr_order_ahead_release(bsr_order_ahead *h)
{
    if (!h) return;
    bsr_order_ahead_stop(h);
    if (h->joined) { ahead_destroy(h); return; }
    pthread_detach(h->th);
    if (atomic_exchange(&h->state, AHEAD_RELEASED) == AHEAD_ENDED) ahead_destroy(h);
}
