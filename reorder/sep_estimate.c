/* SPDX-License-Identifier: BSD-3-Clause */
/* An estimate from below of the block products of a complete LU in a
 * dissection order, in O(|G|) and without the ordering: a dissection
 * eliminates its top separator last, and where both sides are connected its
 * s rows then form a dense triangle whose rows alone take
 * sum_{k<s} k^2 = (s-1) s (2s-1) / 6 products.  The separator is a level of
 * a breadth-first search from a pseudo-peripheral vertex (George-Liu): of
 * the levels that leave at least a quarter of the component on either side,
 * the smallest.  On a cube of N^3 cells that is a diagonal plane of about
 * 0.62 N^2 rows, below METIS's face-parallel N^2, and the whole dissection
 * takes some 50 times that triangle's products on a 3D grid: past a work
 * bound, the ordering and the pattern (10.5 s and 3.5 s at 1M block rows on
 * one host core) need not be made to know the complete factor will not do. */
#include "reorder_impl.h"
#include <stdlib.h>

/* Rounds of the pseudo-peripheral search (each one search); a grid needs 2-3. */
#define SEP_ROUNDS 8

/* Distances from r over r's component into d (-1: not reached; only the
 * component's entries are set); q receives the component level by level.
 * Returns its size, *ecc the largest distance and *far the vertex at that
 * distance of smallest degree, then earliest found. */
static int bfs(const bsr_graph *G, int r, int *d, int *q, int *ecc, int *far)
{
    int t = 1;
    q[0] = r;
    d[r] = 0;
    for (int lo = 0; lo < t; lo++) {
        const int v = q[lo];
        for (int p = G->xadj[v]; p < G->xadj[v + 1]; p++)
            if (d[G->adj[p]] < 0) {
                d[G->adj[p]] = d[v] + 1;
                q[t++] = G->adj[p];
            }
    }
    *ecc = d[q[t - 1]];
    *far = q[t - 1];
    for (int i = t - 1; i >= 0 && d[q[i]] == *ecc; i--)
        if (G->xadj[q[i] + 1] - G->xadj[q[i]] <= G->xadj[*far + 1] - G->xadj[*far]) *far = q[i];
    return t;
}

/* The smallest level of the search in q (t vertices, distances d, the
 * last one ecc) with at least t/4 vertices before and after it; 0 where
 * none has. */
static int balanced_level(const int *q, const int *d, int t, int ecc, int *cnt)
{
    for (int l = 0; l <= ecc; l++) cnt[l] = 0;
    for (int i = 0; i < t; i++) cnt[d[q[i]]]++;
    int best = 0;
    for (int l = 0, before = 0; l <= ecc; before += cnt[l++]) {
        const int after = t - before - cnt[l];
        if (4 * (int64_t)before >= t && 4 * (int64_t)after >= t && (!best || cnt[l] < best)) best = cnt[l];
    }
    return best;
}

bsr_status bsr_graph_sep_products(const bsr_graph *G, double *products, int *sep)
{
    const int n = G->n;
    *products = 0;
    if (sep) *sep = 0;
    int *d = bsr_malloc(sizeof(int) * ((size_t)n + 1), "separator estimate");
    int *q = bsr_malloc(sizeof(int) * ((size_t)n + 1), "separator estimate");
    int *cnt = bsr_malloc(sizeof(int) * ((size_t)n + 1), "separator estimate");
    unsigned char *seen = bsr_calloc((size_t)n + 1, 1, "separator estimate");
    bsr_status s = d && q && cnt && seen ? BSR_OK : BSR_ERR_NOMEM;
    for (int v = 0; v < n && !s; v++) d[v] = -1;
    for (int v0 = 0; v0 < n && !s; v0++) {
        if (seen[v0]) continue;
        int ecc, far;
        const int t = bfs(G, v0, d, q, &ecc, &far);
        for (int round = 1; round < SEP_ROUNDS; round++) {   /* re-rooted while the eccentricity grows */
            for (int i = 0; i < t; i++) d[q[i]] = -1;
            int e2;
            bfs(G, far, d, q, &e2, &far);
            const int grew = e2 > ecc;
            ecc = e2;
            if (!grew) break;
        }
        const double m = balanced_level(q, d, t, ecc, cnt);
        *products += (m - 1) * m * (2 * m - 1) / 6;
        if (sep && m > *sep) *sep = (int)m;
        for (int i = 0; i < t; i++) seen[q[i]] = 1;
    }
    free(d); free(q); free(cnt); free(seen);
    return s;
}

bsr_status bsr_sep_products(const bsr_matrix *A, double *products, int *sep)
{
    BSR_CHECK_ARG(A && products, "bsr_sep_products: NULL argument");
    bsr_graph G;
    BSR_TRY(bsr_graph_build(A, &G));
    bsr_status s = bsr_graph_sep_products(&G, products, sep);
    bsr_graph_free(&G);
    return s;
}
