/* SPDX-License-Identifier: BSD-3-Clause */
/* An estimate from below of the block products of a complete LU in a
 * dissection order, in O(|G| SEP_LEVELS) and without the ordering, so that
 * a complete factor past a work bound is known to be so before its
 * ordering and pattern are made (10.5 s and 3.5 s on one host core at 1M
 * block rows of a 3D grid).
 *
 * The model: the top SEP_LEVELS levels of a dissection, each part split by
 * a level of a breadth-first search from a pseudo-peripheral vertex
 * (George-Liu) restricted to the part, of the levels that leave at least a
 * quarter of it on either side the smallest.  A separator of m rows is
 * eliminated after its part's sides and before the separators around the
 * part; both sides connected, its rows then hold every later row of it and
 * every one of the beta separator rows adjacent to the part (its boundary):
 * sum_{j<m} (j + beta)^2 products.  The parts below the last level are not
 * counted, nor the sides' own fill.  On a cube of N^3 cells the top level is
 * a diagonal plane of about 0.62 N^2 rows (METIS's is a face-parallel N^2);
 * the estimate is 1.2-2.8x below the products of METIS's complete LU on the
 * 3D and 2D grids and coupled systems of the tests (test_reorder's
 * sep_estimate).  Its searches are serial: 0.16-0.23 s at 1M block rows on
 * one core of the H200's host (stopped once past a bound; bench/RESULTS.md). */
#include "reorder_impl.h"
#include <stdlib.h>

/* Rounds of the pseudo-peripheral search (each one search); a grid needs 2-3. */
#define SEP_ROUNDS 8
/* Levels of the dissection counted: 1 + 2 + 4 + 8 separators a component. */
#define SEP_LEVELS 4
/* Parts smaller than this are not split further. */
#define SEP_MIN_PART 64

/* The level of the search in q (t vertices, distances d, the last one ecc)
 * with at least t/4 vertices before and after it and the fewest vertices, in
 * *level; its count, 0 where no level has. */
static int balanced_level(const int *q, const int *d, int t, int ecc, int *cnt, int *level)
{
    for (int l = 0; l <= ecc; l++) cnt[l] = 0;
    for (int i = 0; i < t; i++) cnt[d[q[i]]]++;
    int best = 0;
    for (int l = 0, before = 0; l <= ecc; before += cnt[l++]) {
        const int after = t - before - cnt[l];
        if (4 * (int64_t)before >= t && 4 * (int64_t)after >= t && (!best || cnt[l] < best)) {
            best = cnt[l];
            *level = l;
        }
    }
    return best;
}

/* sum_{j<m} (j + beta)^2 = S(beta + m - 1) - S(beta - 1), S(x) = x (x+1) (2x+1) / 6. */
static double front_products(double m, double beta)
{
    const double x = beta + m - 1, y = beta - 1;
    return x * (x + 1) * (2 * x + 1) / 6 - (y > 0 ? y * (y + 1) * (2 * y + 1) / 6 : 0);
}

bsr_status bsr_graph_sep_products(const bsr_graph *G, double limit, double *products, int *sep)
{
    const int n = G->n;
    *products = 0;
    if (sep) *sep = 0;
    const size_t sz = sizeof(int) * ((size_t)n + 1);
    int *d = bsr_malloc(sz, "separator estimate"), *q = bsr_malloc(sz, "separator estimate");
    int *cnt = bsr_malloc(sz, "separator estimate"), *label = bsr_calloc((size_t)n + 1, sizeof(int), "separator estimate");
    int *seen = bsr_malloc(sz, "separator estimate");   /* the component (its root + 1) a vertex was last reached from */
    bsr_status s = d && q && cnt && label && seen ? BSR_OK : BSR_ERR_NOMEM;
    for (int v = 0; v < n && !s; v++) d[v] = -1;
    int parts = 1;   /* labels: >= 0 a part, -1 a separator's row */
    for (int lev = 0; lev < SEP_LEVELS && !s && !(limit > 0 && *products > limit); lev++) {
        for (int v = 0; v < n; v++) seen[v] = 0;
        for (int v0 = 0; v0 < n && !(limit > 0 && *products > limit); v0++) {
            if (seen[v0] || label[v0] < 0) continue;
            int ecc, far;
            const int t = bsr_bfs_dist(G, label, v0, d, q, &ecc, &far);
            for (int round = 1; round < SEP_ROUNDS && t >= SEP_MIN_PART; round++) {
                for (int i = 0; i < t; i++) d[q[i]] = -1;   /* re-rooted while the eccentricity grows */
                int e2;
                bsr_bfs_dist(G, label, far, d, q, &e2, &far);
                const int grew = e2 > ecc;
                ecc = e2;
                if (!grew) break;
            }
            int at = 0;
            const int m = t >= SEP_MIN_PART ? balanced_level(q, d, t, ecc, cnt, &at) : 0;
            /* the boundary: separator rows adjacent to the component, each once */
            int beta = 0;
            for (int i = 0; i < t && m; i++)
                for (int p = G->xadj[q[i]]; p < G->xadj[q[i] + 1]; p++) {
                    const int u = G->adj[p];
                    if (label[u] < 0 && seen[u] != v0 + 1) { seen[u] = v0 + 1; beta++; }
                }
            for (int i = 0; i < t; i++) seen[q[i]] = v0 + 1;
            if (m) {
                *products += front_products(m, beta);
                if (sep && lev == 0 && m > *sep) *sep = m;
                const int a = parts++, b = parts++;   /* the sides: new parts */
                for (int i = 0; i < t; i++) label[q[i]] = d[q[i]] < at ? a : d[q[i]] > at ? b : -1;
            }
            for (int i = 0; i < t; i++) d[q[i]] = -1;
        }
    }
    free(d); free(q); free(cnt); free(label); free(seen);
    return s;
}

bsr_status bsr_sep_products(const bsr_matrix *A, double limit, double *products, int *sep)
{
    BSR_CHECK_ARG(A && products, "bsr_sep_products: NULL argument");
    bsr_graph G;
    BSR_TRY(bsr_graph_build(A, &G));
    bsr_status s = bsr_graph_sep_products(&G, limit, products, sep);
    bsr_graph_free(&G);
    return s;
}
