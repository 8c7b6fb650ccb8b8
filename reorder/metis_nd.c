/* SPDX-License-Identifier: BSD-3-Clause */
/* METIS_NodeND fill-reducing ordering (no tree) and the METIS glue shared with nd.c. */
#include "reorder_impl.h"
#include <pthread.h>
#include <string.h>

static pthread_mutex_t metis_mutex = PTHREAD_MUTEX_INITIALIZER;

/* METIS draws from the C library's one rand(), which each call seeds first:
 * calls made one at a time (an ordering made ahead on a second thread, a
 * solver ordering on the first) each see their own sequence, so the same
 * orderings every run. */
void bsr_metis_lock(void) { pthread_mutex_lock(&metis_mutex); }
void bsr_metis_unlock(void) { pthread_mutex_unlock(&metis_mutex); }

/* METIS options from o (seed, separators tried, ufactor). */
void bsr_metis_options(const bsr_order_options *o, idx_t *options)
{
    METIS_SetDefaultOptions(options);
    options[METIS_OPTION_NUMBERING] = 0;
    options[METIS_OPTION_SEED] = o->seed;
    /* 0 keeps METIS's default; anything else (even invalid) is passed so that
     * METIS's own validation reports it */
    if (o->nseps) options[METIS_OPTION_NSEPS] = o->nseps;
    if (o->ufactor) options[METIS_OPTION_UFACTOR] = o->ufactor;
}

/* BSR_ERR_METIS (or NOMEM) naming fn and its return code rc. */
bsr_status bsr_metis_status(int rc, const char *fn, int nvtxs)
{
    if (rc == METIS_OK) return BSR_OK;
    const char *what = rc == METIS_ERROR_INPUT ? "invalid input or options"
                     : rc == METIS_ERROR_MEMORY ? "out of memory" : "error";
    return bsr_error(BSR_ERR_METIS, "%s on a graph of %d vertices returned %d (%s)", fn, nvtxs,
                     rc, what);
}

/* perm = METIS_NodeND fill-reducing ordering of G (no tree). */
bsr_status bsr_order_metis_nd(const bsr_graph *G, const bsr_order_options *o, int *perm)
{
    int n = G->n, m = G->xadj[n];
    if (m == 0) {   /* no edges: nothing to reduce, and METIS dislikes empty graphs */
        for (int i = 0; i < n; i++) perm[i] = i;
        return BSR_OK;
    }
    idx_t options[METIS_NOPTIONS];
    bsr_metis_options(o, options);
    idx_t nv = n;
    idx_t *xadj = bsr_malloc(sizeof(idx_t) * ((size_t)n + 1), "METIS xadj");
    idx_t *adj = bsr_malloc(sizeof(idx_t) * (size_t)m, "METIS adjncy");
    idx_t *mp = bsr_malloc(sizeof(idx_t) * (size_t)n, "METIS perm");
    idx_t *mip = bsr_malloc(sizeof(idx_t) * (size_t)n, "METIS iperm");
    bsr_status s = BSR_ERR_NOMEM;
    if (xadj && adj && mp && mip) {
        for (int i = 0; i <= n; i++) xadj[i] = G->xadj[i];
        for (int p = 0; p < m; p++) adj[p] = G->adj[p];
        bsr_metis_lock();
        int rc = METIS_NodeND(&nv, xadj, adj, NULL, options, mp, mip);
        bsr_metis_unlock();
        s = bsr_metis_status(rc, "METIS_NodeND", n);
        /* METIS: row i of the permuted matrix is row perm[i] of A (= our perm) */
        if (!s) for (int i = 0; i < n; i++) perm[i] = (int)mp[i];
    }
    free(xadj); free(adj); free(mp); free(mip);
    return s;
}
