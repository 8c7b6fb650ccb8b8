/* SPDX-License-Identifier: BSD-3-Clause */
/* Breadth-first distances over a block graph, within a labelled part where
 * labels are given: the centre ordering's searches (center.c) and the
 * separator estimate's (sep_estimate.c). */
#include "reorder_impl.h"
#include <string.h>

/* Vertices of a level a thread searches: a level of fewer than two grains is
 * searched serially, a wider one by one thread a grain (the whole team took
 * every level of 4096 vertices or more: 64 vertices a thread of 64, less
 * work than opening the region, level after level, costs). */
#define BFS_GRAIN 2048

int bsr_bfs_dist(const bsr_graph *G, const int *label, int r, int *d, int *q, int *ecc, int *far)
{
    const int lr = label ? label[r] : 0;
    int lo = 0, t = 1, lvl = 0;
    q[0] = r;
    d[r] = 0;
    while (lo < t) {
        const int hi = t, team = bsr_team(hi - lo, BFS_GRAIN);
        if (team < 2) {
            for (int i = lo; i < hi; i++) {
                const int v = q[i];
                for (int p = G->xadj[v]; p < G->xadj[v + 1]; p++) {
                    const int u = G->adj[p];
                    if (d[u] < 0 && (!label || label[u] == lr)) { d[u] = lvl + 1; q[t++] = u; }
                }
            }
        } else {
#pragma omp parallel num_threads(team)
            {
                int buf[256], nb = 0;
#pragma omp for schedule(static)
                for (int i = lo; i < hi; i++) {
                    const int v = q[i];
                    for (int p = G->xadj[v]; p < G->xadj[v + 1]; p++) {
                        const int u = G->adj[p];
                        int unseen = -1;
                        if ((!label || label[u] == lr) && __atomic_load_n(&d[u], __ATOMIC_RELAXED) < 0 &&
                            __atomic_compare_exchange_n(&d[u], &unseen, lvl + 1, 0, __ATOMIC_RELAXED,
                                                        __ATOMIC_RELAXED)) {
                            buf[nb++] = u;
                            if (nb == 256) {
                                const int at = __atomic_fetch_add(&t, nb, __ATOMIC_RELAXED);
                                memcpy(q + at, buf, sizeof buf);
                                nb = 0;
                            }
                        }
                    }
                }
                if (nb) {
                    const int at = __atomic_fetch_add(&t, nb, __ATOMIC_RELAXED);
                    memcpy(q + at, buf, sizeof(int) * (size_t)nb);
                }
            }
        }
        lo = hi;
        if (t > hi) lvl++;
    }
    *ecc = lvl;
    int best = q[t - 1];
    for (int i = t - 1; i >= 0 && d[q[i]] == lvl; i--) {
        const int v = q[i], dv = G->xadj[v + 1] - G->xadj[v], db = G->xadj[best + 1] - G->xadj[best];
        if (dv < db || (dv == db && v < best)) best = v;
    }
    *far = best;
    return t;
}
