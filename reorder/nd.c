/* SPDX-License-Identifier: BSD-3-Clause */
/* Nested dissection to depth h with vertex separators: the p-bordered form
 * and its separator tree.  Each node's rows are numbered [left subtree |
 * right subtree | own separator], so subtrees are contiguous and a subtree
 * couples only with the separators of its ancestors. */
#include "reorder_impl.h"
#include <string.h>

typedef struct {
    const bsr_graph *G;
    idx_t options[METIS_NOPTIONS];
    int *perm;          /* perm[first..last) = vertices of the node being split */
    int *loc;           /* global vertex -> local index in the current subgraph, -1 else */
    int *tmp;           /* [n] scratch for the stable 3-way partition */
    bsr_tree_node *nodes;
    int nnodes, cap, maxlevel, nleaves;
    int leafnd;         /* leaves in METIS_NodeND's order (else as the dissection left them) */
    int64_t placed;     /* rows in finished leaves and separators: the progress count */
    const atomic_int *stop; /* set: give up before the next METIS call (NULL: never) */
} nd_ctx;

/* BSR_ERR_ARG once c's caller has called the dissection off, else BSR_OK. */
static bsr_status nd_stopped(const nd_ctx *c)
{
    if (c->stop && atomic_load_explicit(c->stop, memory_order_relaxed))
        return bsr_error(BSR_ERR_ARG, "nested dissection: called off");
    return BSR_OK;
}

/* nv more rows placed for good (a leaf, a separator): say so now and then
 * (BSR_PROGRESS), since METIS itself is silent for seconds at 1M rows. */
static void nd_placed(nd_ctx *c, int nv)
{
    c->placed += nv;
    bsr_progress_tick("nested dissection (METIS separators)", c->placed, c->G->n, "rows placed");
}

/* Smallest subgraph we try to split; below, a subgraph is a leaf. */
#define ND_MIN_SPLIT 3

/* Append a node; returns its index or -1 (out of memory). */
static int nd_node(nd_ctx *c, int first, int last, int level, int parent)
{
    if (c->nnodes == c->cap) {
        int cap = c->cap ? 2 * c->cap : 64;
        bsr_tree_node *p = bsr_realloc(c->nodes, sizeof *p * (size_t)cap, "dissection tree");
        if (!p) return -1;
        c->nodes = p;
        c->cap = cap;
    }
    bsr_tree_node *t = &c->nodes[c->nnodes];
    t->first = t->sep_first = first;
    t->last = last;
    t->level = level;
    t->parent = parent;
    t->child[0] = t->child[1] = -1;
    if (level > c->maxlevel) c->maxlevel = level;
    return c->nnodes++;
}

/* qsort comparison of int64, ascending. */
static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Vertex separator of the connected subgraph (xadj, adj) by METIS. */
static bsr_status nd_metis(nd_ctx *c, idx_t nv, idx_t *xadj, idx_t *adj, idx_t *part)
{
    idx_t sepsize = 0;
    bsr_metis_lock();
    int rc = METIS_ComputeVertexSeparator(&nv, xadj, adj, NULL, c->options, &sepsize, part);
    bsr_metis_unlock();
    bsr_status s = bsr_metis_status(rc, "METIS_ComputeVertexSeparator", (int)nv);
    for (idx_t v = 0; !s && v < nv; v++)
        if (part[v] < 0 || part[v] > 2)
            s = bsr_error(BSR_ERR_METIS, "METIS_ComputeVertexSeparator: part[%d] = %d", (int)v,
                          (int)part[v]);
    return s;
}

/* Label the nv local vertices of subgraph (xadj, adj) with part 0/1/2
 * (2 = separator).  A connected subgraph goes to METIS.  A disconnected one
 * is separated for free (empty separator): its components, largest first,
 * go onto the lighter side; but when one component holds most vertices,
 * that component is bisected by METIS first so that both sides stay
 * balanced and the tree keeps its depth. */
static bsr_status nd_split(nd_ctx *c, idx_t nv, idx_t *xadj, idx_t *adj, idx_t *part)
{
    int *comp = bsr_malloc(sizeof(int) * (size_t)nv * 3, "ND components");
    if (!comp) return BSR_ERR_NOMEM;
    int *queue = comp + nv, *sz = comp + 2 * nv, nc = 0;
    for (idx_t v = 0; v < nv; v++) comp[v] = -1;
    for (idx_t s = 0; s < nv; s++) {
        if (comp[s] >= 0) continue;
        int h = 0, t = 0;
        queue[t++] = (int)s;
        comp[s] = nc;
        while (h < t) {
            int v = queue[h++];
            for (idx_t p = xadj[v]; p < xadj[v + 1]; p++)
                if (comp[adj[p]] < 0) { comp[adj[p]] = nc; queue[t++] = (int)adj[p]; }
        }
        sz[nc++] = t;
    }
    if (nc == 1) { free(comp); return nd_metis(c, nv, xadj, adj, part); }
    /* components by decreasing size, ties by id: key = (-size, id) */
    int64_t *key = bsr_malloc(sizeof(int64_t) * (size_t)nc, "ND component keys");
    if (!key) { free(comp); return BSR_ERR_NOMEM; }
    for (int k = 0; k < nc; k++) key[k] = ((int64_t)(nv - sz[k]) << 32) | k;
    qsort(key, (size_t)nc, sizeof(int64_t), cmp_i64);
    int big = (int)(key[0] & 0xffffffff), k0 = 0;
    int64_t w[2] = {0, 0};
    bsr_status s = BSR_OK;
    for (idx_t v = 0; v < nv; v++) part[v] = -1;
    if (sz[big] >= ND_MIN_SPLIT && 3 * (int64_t)sz[big] > 2 * (int64_t)nv) {
        /* bisect the dominant component alone (its own local numbering) */
        int m = sz[big], e = 0;
        int *lid = queue;   /* local index inside the component */
        for (idx_t v = 0, k = 0; v < nv; v++) lid[v] = comp[v] == big ? (int)k++ : -1;
        idx_t *cx = bsr_malloc(sizeof(idx_t) * ((size_t)2 * m + 1 + (size_t)xadj[nv]), "ND component graph");
        if (!cx) { free(key); free(comp); return BSR_ERR_NOMEM; }
        idx_t *cp = cx + m + 1, *ca = cp + m;
        for (idx_t v = 0; v < nv; v++) {
            if (lid[v] < 0) continue;
            cx[lid[v]] = e;
            for (idx_t p = xadj[v]; p < xadj[v + 1]; p++) ca[e++] = lid[adj[p]];
        }
        cx[m] = e;
        s = nd_metis(c, m, cx, ca, cp);
        for (idx_t v = 0; !s && v < nv; v++)
            if (lid[v] >= 0) {
                part[v] = cp[lid[v]];
                if (part[v] < 2) w[part[v]]++;
            }
        free(cx);
        k0 = 1;
    }
    for (int k = k0; k < nc; k++) {      /* reuse sz as the component's side */
        int id = (int)(key[k] & 0xffffffff), side = w[1] < w[0];
        w[side] += sz[id];
        sz[id] = side;
    }
    for (idx_t v = 0; !s && v < nv; v++)
        if (part[v] < 0) part[v] = sz[comp[v]];
    free(key);
    free(comp);
    return s;
}

/* The local subgraph of vertices vs[0..nv) (edges leaving them dropped):
 * xadj (nv + 1), then room for 2 nv more (a partition, or a permutation and
 * its inverse), then adj; NULL when out of memory.  loc: -1 on entry and on return. */
static idx_t *nd_subgraph(const bsr_graph *G, int *loc, const int *vs, int nv)
{
    int64_t m = 0;
    for (int k = 0; k < nv; k++) {
        loc[vs[k]] = k;
        m += G->xadj[vs[k] + 1] - G->xadj[vs[k]];
    }
    idx_t *xadj = bsr_malloc(sizeof(idx_t) * ((size_t)nv * 3 + 1 + (size_t)m), "ND subgraph");
    if (xadj) {
        idx_t e = 0, *adj = xadj + 2 * (size_t)nv + 1 + nv;
        for (int k = 0; k < nv; k++) {
            xadj[k] = e;
            for (int p = G->xadj[vs[k]]; p < G->xadj[vs[k] + 1]; p++)
                if (loc[G->adj[p]] >= 0) adj[e++] = loc[G->adj[p]];
        }
        xadj[nv] = e;
    }
    for (int k = 0; k < nv; k++) loc[vs[k]] = -1;
    return xadj;
}

/* A leaf's rows perm[first..last) in METIS_NodeND's fill-reducing order of
 * its subgraph. */
static bsr_status nd_leaf_order(nd_ctx *c, int first, int last)
{
    int nv = last - first, *vs = c->perm + first;
    if (nv < 3) return BSR_OK;
    BSR_TRY(nd_stopped(c));
    idx_t *xadj = nd_subgraph(c->G, c->loc, vs, nv);
    if (!xadj) return bsr_error(BSR_ERR_NOMEM, "ND: out of memory ordering a leaf of %d rows", nv);
    idx_t *mp = xadj + nv + 1, *mip = mp + nv, *adj = mip + nv, n = nv;
    bsr_status s = BSR_OK;
    if (xadj[nv] > 0) {
        bsr_metis_lock();
        const int rc = METIS_NodeND(&n, xadj, adj, NULL, c->options, mp, mip);
        bsr_metis_unlock();
        s = bsr_metis_status(rc, "METIS_NodeND", nv);
        if (!s) {
            for (int k = 0; k < nv; k++) c->tmp[k] = vs[mp[k]];
            memcpy(vs, c->tmp, sizeof(int) * (size_t)nv);
        }
    }
    free(xadj);
    return s;
}

/* Build the node of rows [first,last) (vertices perm[first..last)) at level,
 * splitting it while hleft > 0; *id receives its index. */
static bsr_status nd_rec(nd_ctx *c, int first, int last, int level, int parent, int hleft, int *id)
{
    int me = nd_node(c, first, last, level, parent);
    if (me < 0) return bsr_error(BSR_ERR_NOMEM, "ND: out of memory for a tree of %d nodes", c->nnodes + 1);
    *id = me;
    int nv = last - first;
    if (hleft == 0 || nv < ND_MIN_SPLIT) {
        c->nleaves++;
        nd_placed(c, nv);
        return c->leafnd ? nd_leaf_order(c, first, last) : BSR_OK;
    }
    BSR_TRY(nd_stopped(c));
    int *vs = c->perm + first;
    /* local subgraph: edges to vertices outside this node are dropped */
    idx_t *xadj = nd_subgraph(c->G, c->loc, vs, nv);
    if (!xadj) return BSR_ERR_NOMEM;
    idx_t *part = xadj + nv + 1, *adj = part + 2 * nv;
    bsr_status s = nd_split(c, nv, xadj, adj, part);
    if (s) { free(xadj); return s; }
    int cnt[3] = {0, 0, 0};
    for (int k = 0; k < nv; k++) cnt[part[k]]++;
    if (cnt[0] == 0 || cnt[1] == 0) {   /* no useful split: keep it a leaf */
        free(xadj);
        c->nleaves++;
        nd_placed(c, nv);
        return c->leafnd ? nd_leaf_order(c, first, last) : BSR_OK;
    }
    /* stable partition [part 0 | part 1 | separator] */
    int off[3] = {0, cnt[0], cnt[0] + cnt[1]};
    for (int k = 0; k < nv; k++) c->tmp[off[part[k]]++] = vs[k];
    memcpy(vs, c->tmp, sizeof(int) * (size_t)nv);
    free(xadj);
    int sep = first + cnt[0] + cnt[1], c0, c1;
    c->nodes[me].sep_first = sep;
    nd_placed(c, cnt[2]);
    BSR_TRY(nd_rec(c, first, first + cnt[0], level + 1, me, hleft - 1, &c0));
    BSR_TRY(nd_rec(c, first + cnt[0], sep, level + 1, me, hleft - 1, &c1));
    c->nodes[me].child[0] = c0;
    c->nodes[me].child[1] = c1;
    return BSR_OK;
}

/* Neighbours of at most this degree pass distance-2 conflicts on.  Through a
 * hub (a row coupled to thousands) the walk would cost its degree for every
 * separator row beside it, and the fill through a hub couples all its
 * neighbours anyway, which no order of them can make parallel. */
#define ND_COLOR_MAXDEG 256

/* Marks the colours of the rows within distance 2 of u that are coloured
 * already (col[] indexed by the separator-local mark[]): seen[c] = stamp, a
 * value no earlier row used, so nothing has to be cleared afterwards. */
static void nd_near_colours(const bsr_graph *G, int u, const int *mark, const int *col, int *seen, int stamp)
{
    for (int p = G->xadj[u]; p < G->xadj[u + 1]; p++) {
        const int w = G->adj[p];
        if (mark[w] >= 0 && col[mark[w]] >= 0) seen[col[mark[w]]] = stamp;
        if (G->xadj[w + 1] - G->xadj[w] > ND_COLOR_MAXDEG) continue;
        for (int r = G->xadj[w]; r < G->xadj[w + 1]; r++) {
            const int x = G->adj[r];
            if (x != u && mark[x] >= 0 && col[mark[x]] >= 0) seen[col[mark[x]]] = stamp;
        }
    }
}

/* Order each node's own separator rows (leaves keep theirs) by the classes of
 * a greedy colouring in which rows conflict when adjacent or sharing a
 * neighbour; classes in turn, the old order kept within a class.  Fill
 * couples separator rows through the eliminated subdomains, i.e. at distance
 * 2: in METIS's order those couplings chain a separator's rows into as many
 * levels as a 2D grid in natural order, in this one into about as many as the
 * classes (stencil3d:100:4, ILU2 at fill 1.19: 363 levels a triangle -> 82).
 * mark: [n] scratch, -1 on entry and on return. */
static bsr_status nd_color_separators(const bsr_graph *G, const bsr_tree_node *nodes, int nnodes, int *perm,
                                      int *mark)
{
    int maxsep = 0;
    for (int q = 0; q < nnodes; q++) {
        const int m = nodes[q].last - nodes[q].sep_first;
        if (m > maxsep) maxsep = m;
    }
    if (maxsep < 2) return BSR_OK;
    /* a row's colour is at most the rows before it: maxsep + 1 classes;
     * seen: the stamp (rows coloured so far, + 1) of the last row that met
     * each colour near it */
    int *col = bsr_malloc(sizeof(int) * ((size_t)4 * maxsep + 3), "separator colours");
    if (!col) return BSR_ERR_NOMEM;
    int *cnt = col + maxsep, *tmp = cnt + maxsep + 2, *seen = tmp + maxsep, stamp = 0;
    for (int c = 0; c <= maxsep; c++) seen[c] = 0;
    for (int q = 0; q < nnodes; q++) {
        const int f = nodes[q].sep_first, m = nodes[q].last - f;
        if (m < 2 || nodes[q].child[0] < 0) continue;
        int *vs = perm + f, nc = 0;
        for (int k = 0; k < m; k++) { mark[vs[k]] = k; col[k] = -1; }
        for (int k = 0; k < m; k++) {
            nd_near_colours(G, vs[k], mark, col, seen, ++stamp);
            int c = 0;
            while (seen[c] == stamp) c++;
            col[k] = c;
            if (c + 1 > nc) nc = c + 1;
        }
        /* stable counting sort by class */
        for (int c = 0; c <= nc; c++) cnt[c] = 0;
        for (int k = 0; k < m; k++) cnt[col[k] + 1]++;
        for (int c = 0; c < nc; c++) cnt[c + 1] += cnt[c];
        for (int k = 0; k < m; k++) tmp[cnt[col[k]]++] = vs[k];
        for (int k = 0; k < m; k++) { mark[vs[k]] = -1; vs[k] = tmp[k]; }
    }
    free(col);
    return BSR_OK;
}

/* Nested dissection of G to depth o->depth (auto: from size) into the p-bordered ordering with
 * its separator tree; given up (an error status) once stop (may be NULL) is set. */
bsr_status bsr_order_nd(const bsr_graph *G, const bsr_order_options *o, const atomic_int *stop, bsr_ordering *ord)
{
    int n = G->n;
    nd_ctx c;
    memset(&c, 0, sizeof c);
    c.G = G;
    c.perm = ord->perm;
    bsr_metis_options(o, c.options);
    c.leafnd = o->leafnd;
    c.stop = stop;
    int h = o->depth >= 0 ? o->depth : bsr_nd_auto_depth(n, o->nsm);
    ord->depth_auto = o->depth < 0;
    ord->depth_asked = h;
    c.loc = bsr_malloc(sizeof(int) * ((size_t)n + 1), "ND local index");
    c.tmp = bsr_malloc(sizeof(int) * ((size_t)n + 1), "ND scratch");
    if (!c.loc || !c.tmp) { free(c.loc); free(c.tmp); return BSR_ERR_NOMEM; }
    for (int i = 0; i < n; i++) { c.perm[i] = i; c.loc[i] = -1; }
    int root;
    bsr_status s = nd_rec(&c, 0, n, 0, -1, h, &root);
    if (!s && o->sepcolor) s = nd_color_separators(G, c.nodes, c.nnodes, c.perm, c.loc);
    free(c.loc);
    free(c.tmp);
    if (s) { free(c.nodes); return s; }
    ord->nodes = c.nodes;
    ord->nnodes = c.nnodes;
    ord->depth = c.maxlevel;
    ord->nleaves = c.nleaves;
    ord->leafnd = c.leafnd;
    return BSR_OK;
}
