/* SPDX-License-Identifier: BSD-3-Clause */
/* Distance-from-centre ordering: the rows of each connected component by
 * decreasing graph distance from an approximate centre of the component,
 * in index order within a distance.  Every edge between two distances then
 * points towards the centre, so a triangle's level schedule is about the
 * component's radius deep where the natural order of a grid (a sweep from
 * one corner) is its diameter deep: 151 levels against 298 on a 100^3 grid,
 * each octant still swept in its natural order, towards the centre.  Good
 * for diffusion-dominated systems (ILU(0) as many iterations as in natural
 * order); a convection-dominated system whose numbering follows the flow
 * loses that alignment in all but one octant. */
#include "reorder_impl.h"
#include <stdlib.h>
#include <string.h>

/* Rounds of the centre search (each two breadth-first searches); a grid
 * needs about three. */
#define CENTER_ROUNDS 16

/* Breadth-first search from r after clearing the component q[0..cnt). */
static void bfs_again(const bsr_graph *G, int r, int *d, int *q, int cnt, int *ecc, int *far)
{
    for (int i = 0; i < cnt; i++) d[q[i]] = -1;
    bsr_bfs_dist(G, NULL, r, d, q, ecc, far);
}

/* A centre of the component of the peripheral vertex far (q: its cnt
 * vertices; d left holding the centre's distances, *ecc its eccentricity):
 * the vertex whose largest distance to a set of peripheral vertices is
 * smallest, the set grown by the farthest vertex of each new centre, until
 * the centre's eccentricity is within one of half the largest distance seen
 * (no vertex can do better than half) or the centre repeats. */
static int find_center(const bsr_graph *G, int far, int *d, int *m, int *q, int cnt, int *ecc)
{
    int diam;
    bfs_again(G, far, d, q, cnt, &diam, &far);
    for (int i = 0; i < cnt; i++) m[q[i]] = d[q[i]];
    int best = far, best_ecc = cnt, prev = -1, held = -1;   /* held: whose distances d holds */
    for (int r = 0; r < CENTER_ROUNDS; r++) {
        int e;
        bfs_again(G, far, d, q, cnt, &e, &far);
        if (e > diam) diam = e;
        int c = q[0];
        for (int i = 0; i < cnt; i++) {
            const int v = q[i];
            if (d[v] > m[v]) m[v] = d[v];
            if (m[v] < m[c] || (m[v] == m[c] && v < c)) c = v;
        }
        bfs_again(G, c, d, q, cnt, &e, &far);
        held = c;
        if (e < best_ecc) { best = c; best_ecc = e; }
        if (best_ecc <= (diam + 1) / 2 + 1 || c == prev) break;
        prev = c;
    }
    if (held != best) bfs_again(G, best, d, q, cnt, ecc, &far);
    *ecc = best_ecc;
    return best;
}

/* perm = each component from its farthest rows to its centre (components in
 * the order of their smallest index). */
bsr_status bsr_order_center(const bsr_graph *G, int *perm)
{
    const int n = G->n;
    int *d = bsr_malloc(sizeof(int) * ((size_t)n + 1), "centre ordering distances");
    int *m = bsr_malloc(sizeof(int) * ((size_t)n + 1), "centre ordering maxima");
    int *q = bsr_malloc(sizeof(int) * ((size_t)n + 1), "centre ordering queue");
    int *cntd = bsr_malloc(sizeof(int) * ((size_t)n + 2), "centre ordering counts");
    if (!d || !m || !q || !cntd) { free(d); free(m); free(q); free(cntd); return BSR_ERR_NOMEM; }
    for (int i = 0; i < n; i++) d[i] = -1;
    int k = 0;
    for (int s = 0; s < n; s++) {
        if (d[s] >= 0) continue;   /* numbered with an earlier component */
        int ecc, far;
        const int cnt = bsr_bfs_dist(G, NULL, s, d, q, &ecc, &far);
        if (cnt > 2) find_center(G, far, d, m, q, cnt, &ecc);
        /* by decreasing distance, by index within a distance: a stable
         * counting sort of the component in index order (a connected graph
         * is 0..n-1 already) */
        if (cnt == n) for (int i = 0; i < n; i++) q[i] = i;
        else qsort(q, (size_t)cnt, sizeof(int), bsr_cmp_int);
        memset(cntd, 0, sizeof(int) * ((size_t)ecc + 2));
        for (int i = 0; i < cnt; i++) cntd[ecc - d[q[i]] + 1]++;
        for (int l = 0; l <= ecc; l++) cntd[l + 1] += cntd[l];
        for (int i = 0; i < cnt; i++) perm[k + cntd[ecc - d[q[i]]]++] = q[i];
        k += cnt;
    }
    free(d); free(m); free(q); free(cntd);
    return BSR_OK;
}

int bsr_bfs_depth(const bsr_matrix *A, int start)
{
    if (start < 0 || start >= A->nbrows) return 0;
    bsr_graph G;
    if (bsr_graph_build(A, &G)) return -1;
    const int n = G.n;
    int *d = bsr_malloc(sizeof(int) * (size_t)n * 2, "breadth-first depth"), depth = -1, ecc, far;
    if (d) {
        for (int i = 0; i < n; i++) d[i] = -1;
        bsr_bfs_dist(&G, NULL, start, d, d + n, &ecc, &far);
        depth = ecc + 1;
    }
    bsr_graph_free(&G);
    free(d);
    return depth;
}
