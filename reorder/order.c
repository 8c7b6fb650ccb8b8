/* SPDX-License-Identifier: BSD-3-Clause */
/* bsr_order: options, spec parsing, dispatch to the orderings, lifetime. */
#include "reorder_impl.h"
#include <stdio.h>
#include <string.h>
#include <stdlib.h>

/* The orderings computed from A's block graph, in one signature (stop: see
 * bsr_order_graph; only the dissection, a sequence of METIS calls, reads it). */
typedef bsr_status (*order_fn)(const bsr_graph *G, const bsr_order_options *o, const atomic_int *stop,
                               bsr_ordering *ord);
static bsr_status run_rcm(const bsr_graph *G, const bsr_order_options *o, const atomic_int *stop, bsr_ordering *ord)
{ (void)stop; return bsr_order_rcm(G, o->variant, ord->perm); }
static bsr_status run_center(const bsr_graph *G, const bsr_order_options *o, const atomic_int *stop,
                             bsr_ordering *ord)
{ (void)o; (void)stop; return bsr_order_center(G, ord->perm); }
static bsr_status run_metis(const bsr_graph *G, const bsr_order_options *o, const atomic_int *stop,
                            bsr_ordering *ord)
{ (void)stop; return bsr_order_metis_nd(G, o, ord->perm); }
static bsr_status run_amd(const bsr_graph *G, const bsr_order_options *o, const atomic_int *stop, bsr_ordering *ord)
{ (void)o; (void)stop; return bsr_order_amd(G, ord->perm); }

/* One row per ordering kind: what the spec parser, the defaults, the name
 * and bsr_order know of it.  The rows' order is the order of the unknown-
 * ordering message's list. */
static const struct order_row {
    bsr_order_kind kind;
    const char *name;       /* bsr_order_kind_name, and the spec's word */
    const char *listed;     /* in the parser's list of orderings; NULL: no spec gives it */
    int tree;               /* makes a tree (ND): takes ':depth', balance and separator defaults */
    order_fn run;           /* from A's block graph; NULL: the identity (no graph built) */
    const char *elsewhere;  /* not bsr_order's: where it comes from instead */
} order_rows[] = {
    {BSR_ORDER_NATURAL, "natural", "natural", 0, NULL, NULL},
    {BSR_ORDER_RCM, "rcm", "rcm", 0, run_rcm, NULL},
    {BSR_ORDER_CENTER, "center", "center", 0, run_center, NULL},
    {BSR_ORDER_ND, "nd", "nd[:auto|:H]", 1, bsr_order_nd, NULL},
    {BSR_ORDER_METIS_ND, "metis", "metis", 0, run_metis, NULL},
    {BSR_ORDER_AMD, "amd", "amd", 0, run_amd, NULL},
    {BSR_ORDER_LEVELS, "levels", NULL, 0, NULL, "level-ordered renumbering comes from bsr_order_levels"},
};
enum { ORDER_ROWS = (int)(sizeof order_rows / sizeof order_rows[0]) };

/* The row of kind k, or NULL. */
static const struct order_row *order_row_of(bsr_order_kind k)
{
    for (int i = 0; i < ORDER_ROWS; i++)
        if (order_rows[i].kind == k) return &order_rows[i];
    return NULL;
}

/* Defaults for kind (ND: auto depth, METIS seed/nseps/ufactor defaults). */
void bsr_order_options_default(bsr_order_options *o, bsr_order_kind kind)
{
    if (!o) return;
    memset(o, 0, sizeof *o);
    o->kind = kind;
    o->depth = -1;
    o->seed = 1;
    o->nseps = 0;   /* 0 = METIS default */
    /* ND: tighter balance than METIS's vertex-separator default (200): with
     * per-SM leaves the largest leaf sets the pace, and at depth 8 the default
     * gives leaves 6x apart for ~2 points less border (stencil3d:64) */
    const struct order_row *r = order_row_of(kind);
    const int tree = r && r->tree;
    o->ufactor = tree ? 30 : 0;
    o->nsm = 0;
    o->sepcolor = tree;
}

/* Short name of an ordering kind ("natural", "rcm", ...). */
const char *bsr_order_kind_name(bsr_order_kind k)
{
    const struct order_row *r = order_row_of(k);
    return r ? r->name : "?";
}

/* Parse a decimal int in [lo,hi] from s (whole string). */
static int parse_int(const char *s, int lo, int hi, int *v)
{
    char *end;
    long x = strtol(s, &end, 10);
    if (end == s || *end || x < lo || x > hi) return 0;
    *v = (int)x;
    return 1;
}

/* o = the ordering of a spec like "nd:auto,seed=2"; BSR_ERR_ARG naming the bad part. */
bsr_status bsr_order_parse(const char *spec, bsr_order_options *o)
{
    BSR_CHECK_ARG(spec && o, "bsr_order_parse: NULL argument");
    char buf[256];
    if (strlen(spec) >= sizeof buf) return bsr_error(BSR_ERR_ARG, "ordering spec too long");
    strcpy(buf, spec);
    char *opts = strchr(buf, ',');
    if (opts) *opts++ = 0;
    char *arg = strchr(buf, ':');
    if (arg) *arg++ = 0;
    const struct order_row *row = NULL;
    char list[128] = "";
    for (int i = 0; i < ORDER_ROWS; i++) {
        if (!order_rows[i].listed) continue;
        if (!strcmp(buf, order_rows[i].name)) row = &order_rows[i];
        snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", list[0] ? ", " : "", order_rows[i].listed);
    }
    if (!row) return bsr_error(BSR_ERR_ARG, "ordering spec '%s': unknown ordering '%s' (%s)", spec, buf, list);
    bsr_order_options_default(o, row->kind);
    if (arg) {
        if (!row->tree)
            return bsr_error(BSR_ERR_ARG, "ordering spec '%s': only nd takes ':depth'", spec);
        if (strcmp(arg, "auto") && !parse_int(arg, 0, BSR_TREE_MAX_LEVELS - 2, &o->depth))
            return bsr_error(BSR_ERR_ARG, "ordering spec '%s': depth '%s' is not auto or 0..%d",
                             spec, arg, BSR_TREE_MAX_LEVELS - 2);
    }
    while (opts && *opts) {
        char *next = strchr(opts, ',');
        if (next) *next++ = 0;
        char *eq = strchr(opts, '=');
        int ok = 0;
        if (eq) {
            *eq = 0;
            const char *v = eq + 1;
            if (!strcmp(opts, "seed")) ok = parse_int(v, -2147483647, 2147483647, &o->seed);
            else if (!strcmp(opts, "nseps")) ok = parse_int(v, -1000, 1000, &o->nseps);
            else if (!strcmp(opts, "ufactor")) ok = parse_int(v, -100000, 100000, &o->ufactor);
            else if (!strcmp(opts, "nsm")) ok = parse_int(v, 0, 1 << 20, &o->nsm);
            else if (!strcmp(opts, "sepcolor")) ok = parse_int(v, 0, 1, &o->sepcolor);
            else if (!strcmp(opts, "leafnd")) ok = parse_int(v, 0, 1, &o->leafnd);
            else if (!strcmp(opts, "variant")) ok = parse_int(v, 0, 3, &o->variant);
            else if (!strcmp(opts, "lift")) ok = parse_int(v, 0, 1, &o->lift);
            *eq = '=';
        }
        if (ok && o->lift && row->tree)
            return bsr_error(BSR_ERR_ARG, "ordering spec '%s': lift moves rows across %s's tree: not with %s", spec,
                             row->name, row->name);
        if (!ok) return bsr_error(BSR_ERR_ARG, "ordering spec '%s': bad option '%s' "
                                  "(seed=S, nseps=N, ufactor=U, nsm=M, sepcolor=0|1, leafnd=0|1, variant=0..3, "
                                  "lift=0|1)", spec, opts);
        opts = next;
    }
    return BSR_OK;
}

/* ND depth for n block rows: leaves of a few thousand rows, p >= nsm when that many rows
 * exist. */
int bsr_nd_auto_depth(int n, int nsm)
{
    if (nsm <= 0) nsm = 132;
    int h = 0;
    while (h < BSR_TREE_MAX_LEVELS - 2 && ((int64_t)n >> h) > 4096) h++;   /* leaves <= 4096 */
    int hsm = 0;
    while ((1 << hsm) < nsm && hsm < 24) hsm++;                           /* p >= nsm */
    int hmin = 0;
    while (hmin < BSR_TREE_MAX_LEVELS - 2 && ((int64_t)n >> (hmin + 1)) >= 128) hmin++; /* leaves >= 128 */
    if (hsm > hmin) hsm = hmin;
    return h > hsm ? h : hsm;
}

/* New ordering of n rows with perm/iperm allocated (uninitialised), no tree. */
bsr_status bsr_ordering_alloc(int n, bsr_order_kind kind, bsr_ordering **ord)
{
    bsr_ordering *o = bsr_calloc(1, sizeof *o, "ordering");
    if (!o) return BSR_ERR_NOMEM;
    o->kind = kind;
    o->n = n;
    o->perm = bsr_malloc(sizeof(int) * ((size_t)n + 1), "ordering perm");
    o->iperm = bsr_malloc(sizeof(int) * ((size_t)n + 1), "ordering iperm");
    if (!o->perm || !o->iperm) { bsr_ordering_free(o); return BSR_ERR_NOMEM; }
    *ord = o;
    return BSR_OK;
}

/* iperm from perm; BSR_ERR_INTERNAL naming who if perm is not a bijection. */
bsr_status bsr_ordering_finish(bsr_ordering *o, const char *who)
{
    const int n = o->n;
    int bad = 0;
    const int team = bsr_team(n, BSR_ROW_GRAIN);
    if (team > 1) {   /* in parallel: a bijection iff every image is in range and inverts back */
        #pragma omp parallel for schedule(static) reduction(| : bad) num_threads(team)
        for (int k = 0; k < n; k++) {
            int i = o->perm[k];
            if (i < 0 || i >= n) bad = 1;
            else o->iperm[i] = k;
        }
        if (!bad) {
            #pragma omp parallel for schedule(static) reduction(| : bad) num_threads(team)
            for (int k = 0; k < n; k++) bad |= o->iperm[o->perm[k]] != k;
        }
        if (!bad) return BSR_OK;   /* else the serial pass below names the first bad position */
    }
    for (int i = 0; i < o->n; i++) o->iperm[i] = -1;
    for (int k = 0; k < o->n; k++) {
        int i = o->perm[k];
        if (i < 0 || i >= o->n || o->iperm[i] >= 0)
            return bsr_error(BSR_ERR_INTERNAL, "%s: perm[%d] = %d is not a permutation of 0..%d",
                             who, k, i, o->n - 1);
        o->iperm[i] = k;
    }
    return BSR_OK;
}

/* The natural (identity) ordering of n rows. */
bsr_status bsr_ordering_identity(int n, bsr_ordering **ord)
{
    BSR_CHECK_ARG(ord && n >= 0, "bsr_ordering_identity: bad argument (n = %d)", n);
    *ord = NULL;
    BSR_TRY(bsr_ordering_alloc(n, BSR_ORDER_NATURAL, ord));
    for (int i = 0; i < n; i++) (*ord)->perm[i] = (*ord)->iperm[i] = i;
    return BSR_OK;
}

/* The row of opt's kind for bsr_order (BSR_ERR_ARG where it has none, or
 * the depth is out of range). */
static bsr_status order_row_checked(const bsr_order_options *opt, const struct order_row **out)
{
    const struct order_row *row = order_row_of(opt->kind);
    BSR_CHECK_ARG(!row || !row->elsewhere, "bsr_order: %s", row->elsewhere);
    BSR_CHECK_ARG(row, "bsr_order: unknown ordering kind %d", (int)opt->kind);
    BSR_CHECK_ARG(opt->depth >= -1 && opt->depth <= BSR_TREE_MAX_LEVELS - 2,
                  "bsr_order: depth %d out of range -1..%d", opt->depth, BSR_TREE_MAX_LEVELS - 2);
    BSR_CHECK_ARG(!opt->lift || !row->tree, "bsr_order: lift moves rows across %s's tree: not with %s",
                  row->name, row->name);
    *out = row;
    return BSR_OK;
}

/* The ordering under opt of the block graph G (n = G->n rows); stop (may be
 * NULL): once set, a dissection gives up before its next METIS call. */
bsr_status bsr_order_graph(const bsr_graph *G, const bsr_order_options *opt, const atomic_int *stop,
                           bsr_ordering **ord)
{
    BSR_CHECK_ARG(G && opt && ord, "bsr_order: NULL argument");
    *ord = NULL;
    const struct order_row *row;
    BSR_TRY(order_row_checked(opt, &row));
    bsr_ordering *o;
    BSR_TRY(bsr_ordering_alloc(G->n, opt->kind, &o));
    bsr_status s = BSR_OK;
    if (!row->run) for (int i = 0; i < G->n; i++) o->perm[i] = i;
    else s = row->run(G, opt, stop, o);
    if (!s && opt->lift) s = bsr_order_lift(G, o->perm, &o->dense_rows);
    if (!s) s = bsr_ordering_finish(o, row->name);
    if (s) { bsr_ordering_free(o); return s; }
    *ord = o;
    return BSR_OK;
}

/* Ordering of A's block graph under opt (natural, RCM, centre, ND, METIS, AMD). */
bsr_status bsr_order(const bsr_matrix *A, const bsr_order_options *opt, bsr_ordering **ord)
{
    BSR_CHECK_ARG(A && opt && ord, "bsr_order: NULL argument");
    *ord = NULL;
    const struct order_row *row;
    BSR_TRY(order_row_checked(opt, &row));
    if (A->nbrows != A->nbcols)
        return bsr_error(BSR_ERR_SIZE, "bsr_order: matrix is %d x %d block rows, not square",
                         A->nbrows, A->nbcols);
    bsr_graph G = {A->nbrows, NULL, NULL};   /* the identity needs no graph */
    if (row->run || opt->lift) BSR_TRY(bsr_graph_build(A, &G));
    bsr_status s = bsr_order_graph(&G, opt, NULL, ord);
    bsr_graph_free(&G);
    return s;
}

/* A copy of ord (its tree too); NULL where out of memory. */
bsr_ordering *bsr_ordering_copy(const bsr_ordering *ord)
{
    bsr_ordering *c = NULL;
    if (bsr_ordering_alloc(ord->n, ord->kind, &c)) return NULL;
    int *perm = c->perm, *iperm = c->iperm;
    *c = *ord;
    c->perm = perm;
    c->iperm = iperm;
    c->nodes = ord->nnodes ? bsr_malloc(sizeof *c->nodes * (size_t)ord->nnodes, "ordering tree") : NULL;
    if (ord->nnodes && !c->nodes) { c->nnodes = 0; bsr_ordering_free(c); return NULL; }
    memcpy(c->perm, ord->perm, sizeof(int) * (size_t)ord->n);
    memcpy(c->iperm, ord->iperm, sizeof(int) * (size_t)ord->n);
    if (ord->nnodes) memcpy(c->nodes, ord->nodes, sizeof *c->nodes * (size_t)ord->nnodes);
    return c;
}

/* Nonzero when a and b ask for the same ordering. */
int bsr_order_options_same(const bsr_order_options *a, const bsr_order_options *b)
{
    return a->kind == b->kind && a->depth == b->depth && a->seed == b->seed && a->nseps == b->nseps &&
           a->ufactor == b->ufactor && a->nsm == b->nsm && a->sepcolor == b->sepcolor && a->leafnd == b->leafnd &&
           a->variant == b->variant && a->lift == b->lift;
}

/* Free an ordering and its tree (NULL-safe). */
void bsr_ordering_free(bsr_ordering *ord)
{
    if (ord) { free(ord->perm); free(ord->iperm); free(ord->nodes); }
    free(ord);
}
