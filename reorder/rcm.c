/* SPDX-License-Identifier: BSD-3-Clause */
/* Reverse Cuthill-McKee from a pseudo-peripheral vertex (George-Liu), per
 * component, level by level: each level of the breadth-first search is
 * found from the previous one in parallel when it is wide, and numbered
 * exactly as the serial queue would number it, so the ordering does not
 * depend on the number of threads. */
#include "reorder_impl.h"
#include <limits.h>
#include <omp.h>
#include <string.h>

/* A level this wide or wider is searched in parallel (a thread per half this
 * width); narrower ones serially. */
#define RCM_PAR_WIDTH 1024

#define DEG(v) (G->xadj[(v) + 1] - G->xadj[v])

/* The search's state: lev[v] = level of v once reached (-1 before), par[v] =
 * the queue position of the first vertex of the previous level adjacent to
 * v (INT_MAX before); cnt: per-vertex scratch of one level. */
typedef struct {
    const bsr_graph *G;
    int *lev, *par, *cnt;
} rcm_bfs;

/* par[u] = min(par[u], pos), atomically. */
static void min_into(int *par, int u, int pos)
{
    int old = __atomic_load_n(&par[u], __ATOMIC_RELAXED);
    while (pos < old &&
           !__atomic_compare_exchange_n(&par[u], &old, pos, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {}
}

/* Children of the vertex at queue position pos (level t), written to out in
 * the order the serial queue appends them: adjacency order (plain search),
 * or by (degree, index) for Cuthill-McKee (cm); returns their count (out
 * NULL: count only). */
static int children(const rcm_bfs *S, const int *q, int pos, int t, int cm, int *out)
{
    const bsr_graph *G = S->G;
    int v = q[pos], c = 0;
    for (int p = G->xadj[v]; p < G->xadj[v + 1]; p++) {
        int u = G->adj[p];
        if (S->lev[u] != t + 1 || S->par[u] != pos) continue;
        if (out) {
            int j = c;
            while (cm && j > 0 && (DEG(out[j - 1]) > DEG(u) || (DEG(out[j - 1]) == DEG(u) && out[j - 1] > u))) {
                out[j] = out[j - 1];
                j--;
            }
            out[j] = u;
        }
        c++;
    }
    return c;
}

/* Level t = q[a..b): finds level t+1, appends it to q at b and returns its
 * end.  Each new vertex belongs to the first vertex of level t (in queue
 * order) adjacent to it, which is where the serial queue would find it. */
static int next_level(rcm_bfs *S, int *q, int a, int b, int t, int cm)
{
    const bsr_graph *G = S->G;
    const int w = b - a, team = bsr_team(w, RCM_PAR_WIDTH / 2);   /* a thread per half width */
    if (w < RCM_PAR_WIDTH || team < 2) {   /* the serial queue itself */
        int at = b;
        for (int pos = a; pos < b; pos++) {
            int v = q[pos], c = at;
            for (int p = G->xadj[v]; p < G->xadj[v + 1]; p++) {
                int u = G->adj[p];
                if (S->lev[u] != -1) continue;
                S->lev[u] = t + 1;
                S->par[u] = pos;
                int j = at++;
                while (cm && j > c && (DEG(q[j - 1]) > DEG(u) || (DEG(q[j - 1]) == DEG(u) && q[j - 1] > u))) {
                    q[j] = q[j - 1];
                    j--;
                }
                q[j] = u;
            }
        }
        return at;
    }
    /* one region a level, its three passes separated by barriers (a region
     * a pass forked the team three times a level) */
    int at = b;
    #pragma omp parallel num_threads(team)
    {
        #pragma omp for schedule(static)
        for (int pos = a; pos < b; pos++) {
            int v = q[pos];
            for (int p = G->xadj[v]; p < G->xadj[v + 1]; p++) {
                int u = G->adj[p], l = __atomic_load_n(&S->lev[u], __ATOMIC_RELAXED);
                if (l == -1) {
                    int none = -1;
                    __atomic_compare_exchange_n(&S->lev[u], &none, t + 1, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
                    l = t + 1;
                }
                if (l == t + 1) min_into(S->par, u, pos);
            }
        }
        #pragma omp for schedule(static)
        for (int pos = a; pos < b; pos++) S->cnt[pos - a] = children(S, q, pos, t, cm, NULL);
        #pragma omp single
        for (int i = 0; i < w; i++) { int c = S->cnt[i]; S->cnt[i] = at; at += c; }
        #pragma omp for schedule(static) nowait
        for (int pos = a; pos < b; pos++) children(S, q, pos, t, cm, q + S->cnt[pos - a]);
    }
    return at;
}

/* Breadth-first search from r into q in the serial queue's order (cm: each
 * vertex's children by degree); returns the count, *nlev the number of
 * levels and *last the start of the last level in q.  lev/par of the
 * reached vertices are reset unless keep. */
static int bfs(rcm_bfs *S, int r, int *q, int cm, int keep, int *nlev, int *last)
{
    int a = 0, b = 1, t = 0;
    q[0] = r;
    S->lev[r] = 0;
    for (;;) {
        int e = next_level(S, q, a, b, t, cm);
        if (e == b) break;
        a = b; b = e; t++;
    }
    *nlev = t + 1;
    *last = a;
    if (!keep) {
        #pragma omp parallel for schedule(static) num_threads(bsr_team(b, BSR_ROW_GRAIN))
        for (int i = 0; i < b; i++) { S->lev[q[i]] = -1; S->par[q[i]] = INT_MAX; }
    }
    return b;
}

/* M = G with its vertices numbered backwards (v -> n-1-v; adjacency kept
 * sorted). */
static bsr_status mirror(const bsr_graph *G, bsr_graph *M)
{
    const int n = G->n;
    M->n = n;
    M->xadj = bsr_malloc(sizeof(int) * ((size_t)n + 1), "RCM mirror");
    M->adj = bsr_malloc(sizeof(int) * ((size_t)G->xadj[n] + 1), "RCM mirror");
    if (!M->xadj || !M->adj) { free(M->xadj); free(M->adj); return BSR_ERR_NOMEM; }
    M->xadj[0] = 0;
    for (int v = 0; v < n; v++) {
        const int w = n - 1 - v, d = G->xadj[w + 1] - G->xadj[w];
        M->xadj[v + 1] = M->xadj[v] + d;
        for (int t = 0; t < d; t++) M->adj[M->xadj[v] + t] = n - 1 - G->adj[G->xadj[w + 1] - 1 - t];
    }
    return BSR_OK;
}

/* perm = reverse Cuthill-McKee of G, each component from a pseudo-peripheral
 * vertex (variant, bsr_order_options: bit 0 from the far end of its search,
 * the vertex it would try next; bit 1 of G numbered backwards, which starts
 * the search elsewhere and breaks the ties between equal degrees the other
 * way: the same levels of the search on a box mesh, swept the other way). */
bsr_status bsr_order_rcm(const bsr_graph *G, int variant, int *perm)
{
    if (variant & 2) {
        bsr_graph M;
        BSR_TRY(mirror(G, &M));
        bsr_status s = bsr_order_rcm(&M, variant & 1, perm);
        for (int i = 0; i < G->n; i++) perm[i] = G->n - 1 - perm[i];
        free(M.xadj);
        free(M.adj);
        return s;
    }
    int n = G->n;
    rcm_bfs S = {G, bsr_malloc(sizeof(int) * ((size_t)n + 1), "RCM levels"),
                 bsr_malloc(sizeof(int) * ((size_t)n + 1), "RCM parents"),
                 bsr_malloc(sizeof(int) * ((size_t)n + 1), "RCM counts")};
    int *q = bsr_malloc(sizeof(int) * ((size_t)n + 1), "RCM queue");
    if (!S.lev || !S.par || !S.cnt || !q) { free(S.lev); free(S.par); free(S.cnt); free(q); return BSR_ERR_NOMEM; }
    #pragma omp parallel for schedule(static) num_threads(bsr_team(n, BSR_ROW_GRAIN))
    for (int i = 0; i < n; i++) { S.lev[i] = -1; S.par[i] = INT_MAX; }
    int k = 0;
    for (int s = 0; s < n; s++) {
        if (S.lev[s] != -1) continue;
        /* pseudo-peripheral vertex: restart from a minimum-degree vertex of the
         * last level while the eccentricity grows */
        int r = s, nlev, last, cnt = bfs(&S, r, q, 0, 0, &nlev, &last), end = r;
        for (int it = 0; it < 16; it++) {
            int best = q[last];
            for (int t = last + 1; t < cnt; t++)
                if (DEG(q[t]) < DEG(best)) best = q[t];
            end = best;
            int nlev2, last2;
            cnt = bfs(&S, best, q, 0, 0, &nlev2, &last2);
            if (nlev2 <= nlev) break;
            r = best; nlev = nlev2; last = last2;
        }
        if (variant & 1) r = end;
        /* Cuthill-McKee from r: its component numbered from k on (lev kept:
         * numbered) */
        k += bfs(&S, r, perm + k, 1, 1, &nlev, &last);
    }
    /* reverse */
    #pragma omp parallel for schedule(static) num_threads(bsr_team(n, BSR_ROW_GRAIN))
    for (int i = 0; i < n / 2; i++) { int t = perm[i]; perm[i] = perm[n - 1 - i]; perm[n - 1 - i] = t; }
    free(S.lev); free(S.par); free(S.cnt); free(q);
    return BSR_OK;
}
