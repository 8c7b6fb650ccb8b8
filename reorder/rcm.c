/* SPDX-License-Identifier: BSD-3-Clause */
/* Reverse Cuthill-McKee from a pseudo-peripheral vertex (George-Liu), per component. */
#include "reorder_impl.h"
#include <string.h>

/* BFS from r over the component (stamp marks visited): fills q with the
 * vertices by level; returns the count, *nlev the number of levels and
 * *last the start of the last level in q. */
static int bfs(const bsr_graph *G, int r, int *stamp, int mark, int *q, int *nlev, int *last)
{
    int h = 0, t = 0, lvl_end = 1;
    q[t++] = r;
    stamp[r] = mark;
    *nlev = 1;
    *last = 0;
    while (h < t) {
        if (h == lvl_end) { (*nlev)++; *last = h; lvl_end = t; }
        int v = q[h++];
        for (int p = G->xadj[v]; p < G->xadj[v + 1]; p++)
            if (stamp[G->adj[p]] != mark) { stamp[G->adj[p]] = mark; q[t++] = G->adj[p]; }
    }
    return t;
}

#define DEG(v) (G->xadj[(v) + 1] - G->xadj[v])

/* perm = reverse Cuthill-McKee of G (each component from a pseudo-peripheral vertex). */
bsr_status bsr_order_rcm(const bsr_graph *G, int *perm)
{
    int n = G->n;
    int *stamp = bsr_calloc((size_t)n + 1, sizeof(int), "RCM marks");
    int *q = bsr_malloc(sizeof(int) * ((size_t)n + 1), "RCM queue");
    int *done = bsr_calloc((size_t)n + 1, sizeof(int), "RCM numbered");
    if (!stamp || !q || !done) { free(stamp); free(q); free(done); return BSR_ERR_NOMEM; }
    int mark = 0, k = 0;
    for (int s = 0; s < n; s++) {
        if (done[s]) continue;
        /* pseudo-peripheral vertex: restart from a minimum-degree vertex of the
         * last BFS level while the eccentricity grows */
        int r = s, nlev, last, cnt = bfs(G, r, stamp, ++mark, q, &nlev, &last);
        for (int it = 0; it < 16; it++) {
            int best = q[last];
            for (int t = last + 1; t < cnt; t++)
                if (DEG(q[t]) < DEG(best)) best = q[t];
            int nlev2, last2;
            bfs(G, best, stamp, ++mark, q, &nlev2, &last2);
            if (nlev2 <= nlev) break;
            r = best; nlev = nlev2; last = last2;
        }
        /* Cuthill-McKee from r: neighbours in increasing degree (ties by index) */
        int h = k;
        perm[k++] = r;
        done[r] = 1;
        while (h < k) {
            int v = perm[h++], b = k;
            for (int p = G->xadj[v]; p < G->xadj[v + 1]; p++) {
                int u = G->adj[p];
                if (done[u]) continue;
                done[u] = 1;
                /* insertion by (degree, index) among this vertex's new neighbours */
                int j = k++;
                while (j > b && (DEG(perm[j - 1]) > DEG(u) ||
                                 (DEG(perm[j - 1]) == DEG(u) && perm[j - 1] > u))) {
                    perm[j] = perm[j - 1];
                    j--;
                }
                perm[j] = u;
            }
        }
    }
    /* reverse */
    for (int i = 0, j = n - 1; i < j; i++, j--) { int t = perm[i]; perm[i] = perm[j]; perm[j] = t; }
    free(stamp); free(q); free(done);
    return BSR_OK;
}
