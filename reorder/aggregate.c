/* SPDX-License-Identifier: BSD-3-Clause */
/* Aggregates of A's block rows by rounds of heavy-edge matching of the block
 * graph, each round contracting the pairs it matched (the coarsening of
 * multilevel partitioners; pairwise aggregation, as AGMG builds its
 * aggregates): linear work a round and about log2(rows) rounds, where a
 * k-way partition into n / rows parts costs METIS seconds at 1M rows. */
#include "reorder_impl.h"
#include <string.h>

/* The contracted graph of one round: xadj/adj/w of the current vertices. */
typedef struct {
    int n;
    int *xadj, *adj, *w;   /* w: the fine edges between two vertices */
    int *sz;               /* fine rows in each vertex */
} agg_graph;

static void agg_free(agg_graph *g)
{
    free(g->xadj); free(g->adj); free(g->w); free(g->sz);
    memset(g, 0, sizeof *g);
}

/* One round: match each vertex, in order, with its unmatched neighbour of
 * heaviest coupling (ties: the smaller merged size, then the lower index)
 * whose merged size stays within cap; id[v] = v's vertex in the contracted
 * graph *h, numbered in order of first member.  *merged: whether any pair was. */
static bsr_status agg_round(const agg_graph *g, int cap, int *id, agg_graph *h, int *merged)
{
    const int n = g->n;
    int *mate = bsr_malloc(sizeof(int) * ((size_t)n + 1), "aggregate matches");
    if (!mate) return BSR_ERR_NOMEM;
    for (int v = 0; v < n; v++) mate[v] = -1;
    *merged = 0;
    for (int v = 0; v < n; v++) {
        if (mate[v] >= 0) continue;
        int best = -1;
        for (int e = g->xadj[v]; e < g->xadj[v + 1]; e++) {
            const int u = g->adj[e];
            if (mate[u] >= 0 || g->sz[u] + g->sz[v] > cap) continue;
            if (best < 0 || g->w[e] > g->w[best] || (g->w[e] == g->w[best] && g->sz[u] < g->sz[g->adj[best]]))
                best = e;
        }
        mate[v] = best < 0 ? v : g->adj[best];
        if (best >= 0) { mate[g->adj[best]] = v; *merged = 1; }
    }
    int nn = 0;
    for (int v = 0; v < n; v++)
        if (mate[v] >= v) id[v] = id[mate[v]] = nn++;
    free(mate);
    memset(h, 0, sizeof *h);
    h->n = nn;
    h->xadj = bsr_calloc((size_t)nn + 1, sizeof(int), "aggregate graph");
    h->sz = bsr_calloc((size_t)nn + 1, sizeof(int), "aggregate sizes");
    int *first = bsr_malloc(sizeof(int) * ((size_t)nn + 1), "aggregate members");
    int *mark = bsr_malloc(sizeof(int) * ((size_t)nn + 1), "aggregate marks");
    const size_t m = (size_t)g->xadj[n];
    h->adj = bsr_malloc(sizeof(int) * (m + 1), "aggregate graph");
    h->w = bsr_malloc(sizeof(int) * (m + 1), "aggregate weights");
    if (!h->xadj || !h->sz || !first || !mark || !h->adj || !h->w) {
        free(first); free(mark); agg_free(h);
        return BSR_ERR_NOMEM;
    }
    for (int c = 0; c < nn; c++) { first[c] = -1; mark[c] = -1; }
    for (int v = n - 1; v >= 0; v--) {   /* first[c]: c's lower member; the other is its mate */
        h->sz[id[v]] += g->sz[v];
        first[id[v]] = v;
    }
    int e2 = 0;
    for (int c = 0; c < nn; c++) {
        h->xadj[c] = e2;
        const int v0 = first[c];
        int v1 = -1;   /* v0's mate, the next member of c */
        for (int e = g->xadj[v0]; e < g->xadj[v0 + 1] && v1 < 0; e++)
            if (id[g->adj[e]] == c) v1 = g->adj[e];
        for (int t = 0; t < 2; t++) {
            const int v = t ? v1 : v0;
            if (v < 0) continue;
            for (int e = g->xadj[v]; e < g->xadj[v + 1]; e++) {
                const int d = id[g->adj[e]];
                if (d == c) continue;
                if (mark[d] < h->xadj[c]) { mark[d] = e2; h->adj[e2] = d; h->w[e2++] = g->w[e]; }
                else h->w[mark[d]] += g->w[e];
            }
        }
    }
    h->xadj[nn] = e2;
    free(first); free(mark);
    return BSR_OK;
}

bsr_status bsr_aggregate_pairs(const bsr_matrix *A, int rows, int *part, int *nparts)
{
    const int n = A->nbrows;
    *nparts = 0;
    if (n == 0) return BSR_OK;
    bsr_graph G;
    BSR_TRY(bsr_graph_build(A, &G));
    agg_graph g = {0};
    g.n = n;
    g.xadj = G.xadj;
    g.adj = G.adj;
    g.w = bsr_malloc(sizeof(int) * ((size_t)G.xadj[n] + 1), "aggregate weights");
    g.sz = bsr_malloc(sizeof(int) * ((size_t)n + 1), "aggregate sizes");
    int *id = bsr_malloc(sizeof(int) * ((size_t)n + 1), "aggregate ids");
    bsr_status s = g.w && g.sz && id ? BSR_OK : BSR_ERR_NOMEM;
    for (int e = 0; !s && e < G.xadj[n]; e++) g.w[e] = 1;
    for (int i = 0; !s && i < n; i++) { g.sz[i] = 1; part[i] = i; }
    const int cap = rows + rows / 4;   /* 216: pairs of 2^k rows up to 256 */
    int own = 0;                       /* g's arrays are G's until the first round */
    while (!s && (int64_t)g.n * rows > n) {
        agg_graph h;
        int merged = 0;
        s = agg_round(&g, cap, id, &h, &merged);
        if (s) break;
        for (int i = 0; i < n; i++) part[i] = id[part[i]];
        if (own) agg_free(&g);
        else { free(g.w); free(g.sz); }
        g = h;
        own = 1;
        if (!merged) break;
    }
    if (own) agg_free(&g);
    else { free(g.w); free(g.sz); }
    free(id);
    bsr_graph_free(&G);
    if (s) return s;
    /* part[] is in [0, g.n) already, numbered in order of first row */
    int np = 0;
    for (int i = 0; i < n; i++) if (part[i] + 1 > np) np = part[i] + 1;
    *nparts = np;
    return BSR_OK;
}
