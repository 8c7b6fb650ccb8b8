/* SPDX-License-Identifier: BSD-3-Clause */
/* Reordering: bijections, exact P^T (P A P^T) P = A, the p-bordered checker
 * on grids / disconnected / real matrices and on a violating matrix, depth
 * degradation, tiny matrices, METIS failure status, level schedules. */
#include "harness.h"
#include "order_ahead.h"
#include "reorder_impl.h"
#include "ilu_impl.h"
#include <math.h>
#include <omp.h>
#include <string.h>
#include <stdlib.h>

/* Matrix from a list of (i,j) block positions with values v(i,j,e) = deterministic. */
static bsr_matrix *from_pairs(int n, int b, int m, const int *pi, const int *pj)
{
    int *rp = calloc((size_t)n + 1, sizeof(int)), *ci = malloc(sizeof(int) * ((size_t)m + 1));
    int *pos = malloc(sizeof(int) * ((size_t)n + 1));
    double *v = malloc(sizeof(double) * ((size_t)m * b * b + 1));
    for (int k = 0; k < m; k++) rp[pi[k] + 1]++;
    for (int i = 0; i < n; i++) rp[i + 1] += rp[i];
    memcpy(pos, rp, sizeof(int) * (size_t)n);
    for (int k = 0; k < m; k++) {
        int p = pos[pi[k]]++;
        ci[p] = pj[k];
        for (int e = 0; e < b * b; e++)
            v[(size_t)p * b * b + e] = (pi[k] == pj[k] ? 10.0 : -1.0) + 0.001 * e + 1e-6 * pi[k] + 1e-9 * pj[k];
    }
    bsr_matrix *A = NULL;
    bsr_status s = bsr_matrix_create(&A, n, n, b, rp, ci, v, BSR_DOUBLE, 0);
    if (s) fprintf(stderr, "from_pairs: %s\n", bsr_last_error());
    free(rp); free(ci); free(pos); free(v);
    return A;
}

/* 2D 5-point grid gx x gy with block b (nonsymmetric values); with `holes`,
 * every 7th node is left without any block (an empty row). */
static bsr_matrix *grid2d(int gx, int gy, int b, int holes)
{
    int n = gx * gy, m = 0;
    int *pi = malloc(sizeof(int) * 5 * (size_t)n), *pj = malloc(sizeof(int) * 5 * (size_t)n);
    for (int y = 0; y < gy; y++)
        for (int x = 0; x < gx; x++) {
            int i = y * gx + x;
            if (holes && i % 7 == 3) continue;
            int nb[5][2] = {{0, 0}, {-1, 0}, {1, 0}, {0, -1}, {0, 1}};
            for (int k = 0; k < 5; k++) {
                int xx = x + nb[k][0], yy = y + nb[k][1];
                if (xx < 0 || yy < 0 || xx >= gx || yy >= gy) continue;
                int j = yy * gx + xx;
                if (holes && j % 7 == 3) continue;
                pi[m] = i; pj[m] = j; m++;
            }
        }
    bsr_matrix *A = from_pairs(n, b, m, pi, pj);
    free(pi); free(pj);
    return A;
}

/* 3D 7-point block stencil on a g^3 grid with b x b blocks. */
static bsr_matrix *stencil3d(int g, int b)
{
    char spec[64];
    bsr_problem P;
    snprintf(spec, sizeof spec, "stencil3d:%d:%d", g, b);
    if (bsr_generate(spec, BSR_DOUBLE, &P)) return NULL;
    bsr_matrix *A = P.A;
    P.A = NULL;
    bsr_problem_free(&P);
    return A;
}

/* A random permutation of n (Fisher-Yates with the tests' LCG from seed). */
static bsr_ordering *shuffled(int n, uint64_t seed)
{
    bsr_ordering *sh;
    BSR_ASSERT_OK(bsr_ordering_identity(n, &sh));
    for (int i = n - 1; i > 0; i--) {
        int j = (int)((bsr_test_lcg(&seed) >> 33) % (uint64_t)(i + 1)), t = sh->perm[i];
        sh->perm[i] = sh->perm[j]; sh->perm[j] = t;
    }
    for (int i = 0; i < n; i++) sh->iperm[sh->perm[i]] = i;
    return sh;
}

/* Exact equality of two matrices (pattern and values bit for bit). */
static int same_matrix(const bsr_matrix *A, const bsr_matrix *B)
{
    int n = bsr_matrix_nbrows(A), b = bsr_matrix_block(A), nz = bsr_matrix_nnzb(A);
    if (n != bsr_matrix_nbrows(B) || b != bsr_matrix_block(B) || nz != bsr_matrix_nnzb(B)) return 0;
    if (bsr_matrix_precision(A) != bsr_matrix_precision(B)) return 0;
    if (memcmp(bsr_matrix_rowptr(A), bsr_matrix_rowptr(B), sizeof(int) * ((size_t)n + 1))) return 0;
    if (nz && memcmp(bsr_matrix_colind(A), bsr_matrix_colind(B), sizeof(int) * (size_t)nz)) return 0;
    size_t vb = (size_t)nz * b * b * bsr_precision_size(bsr_matrix_precision(A));
    return vb == 0 || !memcmp(bsr_matrix_values(A), bsr_matrix_values(B), vb);
}

/* perm and iperm are inverse bijections of 0..n-1. */
static int is_bijection(const bsr_ordering *o)
{
    char *seen = calloc((size_t)o->n + 1, 1);
    int ok = 1;
    for (int k = 0; k < o->n && ok; k++) {
        int i = o->perm[k];
        if (i < 0 || i >= o->n || seen[i] || o->iperm[i] != k) ok = 0;
        else seen[i] = 1;
    }
    free(seen);
    return ok;
}

/* Order A with spec, check the bijection, B(i,j) = A(perm i, perm j), and
 * P^T (P A P^T) P = A exactly; returns the ordering (caller frees). */
static bsr_ordering *roundtrip(const bsr_matrix *A, const char *spec)
{
    bsr_order_options o;
    bsr_ordering *ord = NULL;
    bsr_matrix *B = NULL, *C = NULL;
    CU_ASSERT_EQUAL(bsr_order_parse(spec, &o), BSR_OK);
    BSR_ASSERT_OK(bsr_order(A, &o, &ord));
    CU_ASSERT_EQUAL(ord->n, bsr_matrix_nbrows(A));
    CU_ASSERT(is_bijection(ord));
    BSR_ASSERT_OK(bsr_permute(A, ord, &B));
    /* entry-wise: B(new i, new j) = A(perm i, perm j), colind sorted */
    const int *rp = bsr_matrix_rowptr(B), *ci = bsr_matrix_colind(B);
    const int *arp = bsr_matrix_rowptr(A), *aci = bsr_matrix_colind(A);
    int b = bsr_matrix_block(A), bad = 0;
    const double *bv = bsr_matrix_values(B), *av = bsr_matrix_values(A);
    for (int i = 0; i < ord->n; i++)
        for (int p = rp[i]; p < rp[i + 1]; p++) {
            if (p > rp[i] && ci[p] <= ci[p - 1]) bad++;
            int oi = ord->perm[i], oj = ord->perm[ci[p]], q = arp[oi];
            while (q < arp[oi + 1] && aci[q] != oj) q++;
            if (q == arp[oi + 1] || memcmp(bv + (size_t)p * b * b, av + (size_t)q * b * b, sizeof(double) * b * b)) bad++;
        }
    CU_ASSERT_EQUAL(bad, 0);
    /* back with the inverse permutation */
    bsr_ordering inv = *ord;
    inv.perm = ord->iperm;
    inv.iperm = ord->perm;
    BSR_ASSERT_OK(bsr_permute(B, &inv, &C));
    CU_ASSERT(same_matrix(A, C));
    /* the checker passes on every tree */
    if (ord->nnodes) {
        bsr_pbordered_report r;
        bsr_status s = bsr_pbordered_check(B, ord, &r);
        if (s) fprintf(stderr, "\n  %s: %s\n", spec, bsr_last_error());
        CU_ASSERT_EQUAL(s, BSR_OK);
        CU_ASSERT_EQUAL(r.nleaves, ord->nleaves);
        CU_ASSERT(r.border_rows + (int64_t)(r.leaf_mean * r.nleaves + 0.5) == ord->n);
    }
    bsr_matrix_destroy(B);
    bsr_matrix_destroy(C);
    return ord;
}

static const char *const specs[] = {"natural", "rcm", "center", "nd:auto", "nd:0", "nd:3", "metis", "amd", NULL};

/* Every ordering on 2D/3D grids (with holes): perm is a bijection and P^T (P A P^T) P = A bit
 * for bit, float too. */
static void test_roundtrip_all_orderings(void)
{
    bsr_matrix *A[4] = {grid2d(37, 23, 2, 0), stencil3d(9, 3), grid2d(20, 20, 1, 1),
                        bsr_test_random_matrix(300, 300, 3, 1, 6, BSR_DOUBLE, 7)};
    for (int m = 0; m < 4; m++) {
        CU_ASSERT_PTR_NOT_NULL_FATAL(A[m]);
        for (int k = 0; specs[k]; k++) bsr_ordering_free(roundtrip(A[m], specs[k]));
        bsr_matrix_destroy(A[m]);
    }
    /* float values travel bit for bit too */
    bsr_matrix *F = bsr_test_random_matrix(100, 100, 2, 1, 5, BSR_FLOAT, 3), *B, *C;
    bsr_order_options o;
    bsr_ordering *ord;
    bsr_order_options_default(&o, BSR_ORDER_RCM);
    BSR_ASSERT_OK(bsr_order(F, &o, &ord));
    BSR_ASSERT_OK(bsr_permute(F, ord, &B));
    bsr_ordering inv = *ord;
    inv.perm = ord->iperm; inv.iperm = ord->perm;
    BSR_ASSERT_OK(bsr_permute(B, &inv, &C));
    CU_ASSERT(same_matrix(F, C));
    bsr_matrix_destroy(B); bsr_matrix_destroy(C); bsr_matrix_destroy(F); bsr_ordering_free(ord);
}

/* P and P^T on multivectors are inverse, (P A P^T)(P x) = P (A x); wrong sizes and aliasing
 * rejected. */
static void test_permute_vec(void)
{
    bsr_matrix *A = grid2d(15, 11, 3, 0);
    bsr_ordering *ord = roundtrip(A, "nd:2");
    int n = ord->n, b = 3, k = 2;
    bsr_multivec *X, *Y, *Z, *AX, *PAX, *BY;
    BSR_ASSERT_OK(bsr_multivec_create(&X, (int64_t)n * b, k, BSR_DOUBLE));
    BSR_ASSERT_OK(bsr_multivec_create(&Y, (int64_t)n * b, k, BSR_DOUBLE));
    BSR_ASSERT_OK(bsr_multivec_create(&Z, (int64_t)n * b, k, BSR_DOUBLE));
    BSR_ASSERT_OK(bsr_multivec_create(&AX, (int64_t)n * b, k, BSR_DOUBLE));
    BSR_ASSERT_OK(bsr_multivec_create(&PAX, (int64_t)n * b, k, BSR_DOUBLE));
    BSR_ASSERT_OK(bsr_multivec_create(&BY, (int64_t)n * b, k, BSR_DOUBLE));
    BSR_ASSERT_OK(bsr_multivec_random(X, 5));
    BSR_ASSERT_OK(bsr_multivec_fill(Z, 0.0 / 0.0));
    BSR_ASSERT_OK(bsr_permute_vec(ord, b, X, Y));
    BSR_ASSERT_OK(bsr_permute_vec_inv(ord, b, Y, Z));
    const double *x = bsr_multivec_cdata(X), *y = bsr_multivec_cdata(Y);
    CU_ASSERT_EQUAL(memcmp(x, bsr_multivec_cdata(Z), sizeof(double) * (size_t)n * b * k), 0);
    int bad = 0;
    for (int i = 0; i < n; i++)
        if (memcmp(y + (size_t)i * b * k, x + (size_t)ord->perm[i] * b * k, sizeof(double) * b * k)) bad++;
    CU_ASSERT_EQUAL(bad, 0);
    /* (P A P^T)(P x) = P (A x) */
    bsr_matrix *B;
    BSR_ASSERT_OK(bsr_permute(A, ord, &B));
    BSR_ASSERT_OK(bsr_spmm(1.0, A, X, 0.0, AX));
    BSR_ASSERT_OK(bsr_permute_vec(ord, b, AX, PAX));
    BSR_ASSERT_OK(bsr_spmm(1.0, B, Y, 0.0, BY));
    double d[2];
    const double m1[2] = {-1.0, -1.0};
    BSR_ASSERT_OK(bsr_multivec_axpy(BY, m1, PAX));
    BSR_ASSERT_OK(bsr_multivec_norm2(BY, d));
    CU_ASSERT(d[0] < 1e-12 && d[1] < 1e-12);
    /* wrong sizes, aliasing */
    CU_ASSERT_EQUAL(bsr_permute_vec(ord, 2, X, Y), BSR_ERR_SIZE);
    CU_ASSERT_EQUAL(bsr_permute_vec(ord, b, X, X), BSR_ERR_ARG);
    CU_ASSERT_EQUAL(bsr_permute_vec(NULL, b, X, Y), BSR_ERR_ARG);
    bsr_matrix *S = grid2d(4, 4, 3, 0);
    bsr_matrix *T = NULL;
    CU_ASSERT_EQUAL(bsr_permute(S, ord, &T), BSR_ERR_SIZE);
    CU_ASSERT_PTR_NULL(T);
    bsr_matrix_destroy(S);
    bsr_multivec_destroy(X); bsr_multivec_destroy(Y); bsr_multivec_destroy(Z);
    bsr_multivec_destroy(AX); bsr_multivec_destroy(PAX); bsr_multivec_destroy(BY);
    bsr_matrix_destroy(A); bsr_matrix_destroy(B);
    bsr_ordering_free(ord);
}

/* Tree shape invariants of an ND ordering with full depth h. */
static void check_full_tree(const bsr_ordering *o, int h)
{
    CU_ASSERT_EQUAL(o->depth, h);
    CU_ASSERT_EQUAL(o->nleaves, 1 << h);
    CU_ASSERT_EQUAL(o->nnodes, 2 * (1 << h) - 1);
    CU_ASSERT_EQUAL(o->nodes[0].first, 0);
    CU_ASSERT_EQUAL(o->nodes[0].last, o->n);
    CU_ASSERT_EQUAL(o->nodes[0].parent, -1);
    for (int k = 0; k < o->nnodes; k++) {
        const bsr_tree_node *t = &o->nodes[k];
        if (t->child[0] < 0) CU_ASSERT_EQUAL(t->level, h);
        if (t->parent >= 0) CU_ASSERT(o->nodes[t->parent].child[0] == k || o->nodes[t->parent].child[1] == k);
    }
}

/* ND on grids for depths 0..6: full tree, p-bordered checker passes; the auto depth rule. */
static void test_nd_grids(void)
{
    bsr_matrix *A = grid2d(64, 48, 2, 0);
    for (int h = 0; h <= 6; h++) {
        char spec[32];
        snprintf(spec, sizeof spec, "nd:%d,seed=%d", h, h + 1);
        bsr_ordering *o = roundtrip(A, spec);
        check_full_tree(o, h);
        CU_ASSERT_FALSE(o->depth_auto);
        bsr_ordering_free(o);
    }
    bsr_matrix_destroy(A);
    A = stencil3d(20, 2);     /* 8000 block rows */
    bsr_ordering *o = roundtrip(A, "nd:auto");
    CU_ASSERT(o->depth_auto);
    CU_ASSERT_EQUAL(o->depth_asked, bsr_nd_auto_depth(8000, 0));
    check_full_tree(o, o->depth_asked);
    bsr_ordering_free(o);
    o = roundtrip(A, "nd:auto,nsm=8,nseps=3,ufactor=50");
    CU_ASSERT_EQUAL(o->depth, bsr_nd_auto_depth(8000, 8));
    bsr_ordering_free(o);
    bsr_matrix_destroy(A);
    /* depth auto: leaves <= 4096 rows, p >= nsm while leaves keep >= 128 rows */
    CU_ASSERT_EQUAL(bsr_nd_auto_depth(1, 132), 0);
    CU_ASSERT_EQUAL(bsr_nd_auto_depth(200, 132), 0);
    CU_ASSERT_EQUAL(bsr_nd_auto_depth(1000, 132), 2);
    CU_ASSERT_EQUAL(bsr_nd_auto_depth(64000, 132), 8);
    CU_ASSERT_EQUAL(bsr_nd_auto_depth(64000, 16), 4);
    CU_ASSERT_EQUAL(bsr_nd_auto_depth(1 << 24, 132), 12);
}

/* Runs into which the own rows of every separator (leaves excluded) split
 * when read in order, a run ending where a row lies within distance 2 (in
 * A's symmetrized graph) of a row of the run; the most of any separator. */
static int separator_runs(const bsr_matrix *A, const bsr_ordering *o)
{
    const int n = bsr_matrix_nbrows(A);
    const int *rp = bsr_matrix_rowptr(A), *ci = bsr_matrix_colind(A);
    int *run = malloc(sizeof(int) * (size_t)n), worst = 0;
    for (int i = 0; i < n; i++) run[i] = -1;
    for (int q = 0; q < o->nnodes; q++) {
        const bsr_tree_node *t = &o->nodes[q];
        if (t->child[0] < 0 || t->last - t->sep_first < 2) continue;
        int runs = 1;
        for (int k = t->sep_first; k < t->last; k++) {
            const int u = o->perm[k];
            int clash = 0;
            /* u's neighbours and theirs (A is structurally symmetric here) */
            for (int p = rp[u]; p < rp[u + 1] && !clash; p++) {
                const int w = ci[p];
                if (w != u && run[w] == runs) clash = 1;
                for (int r = rp[w]; r < rp[w + 1] && !clash; r++)
                    if (ci[r] != u && run[ci[r]] == runs) clash = 1;
            }
            if (clash) runs++;
            run[u] = runs;
        }
        for (int k = t->sep_first; k < t->last; k++) run[o->perm[k]] = -1;
        if (runs > worst) worst = runs;
    }
    free(run);
    return worst;
}

/* sepcolor: each separator's own rows in the classes of a distance-2
 * colouring (few runs free of distance-2 pairs; METIS's order has as many
 * runs as rows nearly), the same tree and rows per node, and ILU2's fill no
 * longer chains the separators into deep level schedules. */
static void test_nd_sepcolor(void)
{
    bsr_matrix *A = stencil3d(16, 2);
    bsr_order_options oc, op;
    bsr_order_options_default(&oc, BSR_ORDER_ND);
    CU_ASSERT_EQUAL(oc.sepcolor, 1);
    BSR_ASSERT_OK(bsr_order_parse("nd:auto,sepcolor=0", &op));
    CU_ASSERT_EQUAL(op.sepcolor, 0);
    bsr_ordering *c = roundtrip(A, "nd:auto"), *pl = roundtrip(A, "nd:auto,sepcolor=0");
    CU_ASSERT_EQUAL(c->nnodes, pl->nnodes);
    /* the same rows in each node's own range, reordered only: node of each row */
    int *own = malloc(sizeof(int) * (size_t)c->n), same = 1;
    for (int q = 0; q < pl->nnodes; q++)
        for (int k = pl->nodes[q].sep_first; k < pl->nodes[q].last; k++) own[pl->perm[k]] = q;
    for (int q = 0; q < c->nnodes && same; q++) {
        const bsr_tree_node *a = &c->nodes[q], *b = &pl->nodes[q];
        same = a->first == b->first && a->sep_first == b->sep_first && a->last == b->last;
        for (int k = a->sep_first; same && k < a->last; k++) same = own[c->perm[k]] == q;
    }
    free(own);
    CU_ASSERT(same);
    /* a 7-point stencil's distance-2 neighbourhood has 24 rows: at most 25 classes */
    const int rc = separator_runs(A, c), rpl = separator_runs(A, pl);
    CU_ASSERT(rc <= 25);
    CU_ASSERT(rpl > 2 * rc);
    bsr_ordering_free(c);
    bsr_ordering_free(pl);
    /* ILU2 with fill: L's levels well below those of METIS's separator order */
    int lv[2];
    for (int v = 0; v < 2; v++) {
        bsr_ilu_options io;
        bsr_ilu_options_default(&io, BSR_ILU2);
        io.tau1 = 0.05;
        io.tau2 = 0.0025;
        io.keep_pattern = 1;
        io.order.sepcolor = v;
        bsr_ilu *F = NULL;
        BSR_ASSERT_OK(bsr_ilu_setup(A, &io, &F));
        bsr_ilu_factors f;
        BSR_ASSERT_OK(bsr_ilu_get_factors(F, &f));
        lv[v] = f.lvL->nlevels;
        bsr_ilu_destroy(F);
    }
    CU_ASSERT(3 * lv[1] < 2 * lv[0]);   /* 28 against 54 */
    if (!(3 * lv[1] < 2 * lv[0])) fprintf(stderr, "\n  ILU2 levels: sepcolor 0 %d, 1 %d\n", lv[0], lv[1]);
    bsr_matrix_destroy(A);
}

/* leafnd: the same tree, each node holding the same rows, the leaves' rows
 * reordered (METIS_NodeND inside each), and a complete LU's fill on a 2D
 * grid well below that of the leaves as the dissection left them (their rows
 * in grid order: a band's fill). */
/* An ordering made ahead on a second thread is the one bsr_order makes, bit
 * for bit, tree too, and is handed out only for its own options and size;
 * called off, it hands out nothing; a dissection whose stop is set gives up,
 * an ordering that is no dissection does not read it. */
static void test_ahead(void)
{
    bsr_matrix *A = grid2d(48, 40, 1, 0);
    const int n = bsr_matrix_nbrows(A);
    bsr_order_options o, other;
    BSR_ASSERT_OK(bsr_order_parse("nd:auto,leafnd=1", &o));
    BSR_ASSERT_OK(bsr_order_parse("nd:auto", &other));
    bsr_ordering *ref = NULL;
    BSR_ASSERT_OK(bsr_order(A, &o, &ref));
    bsr_order_ahead *h = NULL;
    BSR_ASSERT_OK(bsr_order_ahead_start(A, &o, 0, &h));
    CU_ASSERT_PTR_NOT_NULL_FATAL(h);
    CU_ASSERT_PTR_NULL(bsr_order_ahead_copy(h, &o, n, NULL));   /* not waited for yet */
    bsr_order_ahead_wait(h);
    bsr_order_ahead_wait(h);   /* a second wait changes nothing */
    double secs = -1;
    bsr_ordering *c = bsr_order_ahead_copy(h, &o, n, &secs);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    CU_ASSERT(secs >= 0);
    CU_ASSERT_EQUAL(memcmp(c->perm, ref->perm, sizeof(int) * (size_t)n), 0);
    CU_ASSERT_EQUAL(memcmp(c->iperm, ref->iperm, sizeof(int) * (size_t)n), 0);
    CU_ASSERT(c->nnodes == ref->nnodes && c->nnodes > 1 && c->leafnd == 1 && c->depth == ref->depth);
    CU_ASSERT_EQUAL(memcmp(c->nodes, ref->nodes, sizeof *c->nodes * (size_t)c->nnodes), 0);
    CU_ASSERT_PTR_NULL(bsr_order_ahead_copy(h, &other, n, NULL));
    CU_ASSERT_PTR_NULL(bsr_order_ahead_copy(h, &o, n - 1, NULL));
    bsr_ordering_free(c);
    bsr_order_ahead_release(h);
    /* called off: nothing handed out, whether or not it had finished */
    BSR_ASSERT_OK(bsr_order_ahead_start(A, &o, 0, &h));
    bsr_order_ahead_stop(h);
    CU_ASSERT_PTR_NULL(bsr_order_ahead_copy(h, &o, n, NULL));
    bsr_order_ahead_wait(h);
    CU_ASSERT_PTR_NULL(bsr_order_ahead_copy(h, &o, n, NULL));
    bsr_order_ahead_release(h);
    for (int r = 0; r < 8; r++) {   /* released unwaited: freed by whichever side ends last */
        BSR_ASSERT_OK(bsr_order_ahead_start(A, &o, 0, &h));
        bsr_order_ahead_release(h);
    }
    /* the stop flag on the calling thread */
    bsr_graph G;
    BSR_ASSERT_OK(bsr_graph_build(A, &G));
    atomic_int stop;
    atomic_init(&stop, 1);
    bsr_ordering *d = NULL;
    CU_ASSERT_NOT_EQUAL(bsr_order_graph(&G, &o, &stop, &d), BSR_OK);
    CU_ASSERT_PTR_NULL(d);
    BSR_ASSERT_OK(bsr_order_parse("rcm", &other));
    BSR_ASSERT_OK(bsr_order_graph(&G, &other, &stop, &d));
    CU_ASSERT_PTR_NOT_NULL(d);
    bsr_ordering_free(d);
    bsr_graph_free(&G);
    bsr_ordering_free(ref);
    bsr_matrix_destroy(A);
}

/* The complete LU of the ILU kind's options in order spec under the work
 * bound max_work (0: none): its status, *products its block products. */
static bsr_status complete_lu_products(const bsr_matrix *A, const char *spec, double max_work, double *products)
{
    bsr_ilu_options io;
    bsr_ilu_options_default(&io, BSR_ILU2);
    io.tau1 = 0;
    io.cap = BSR_ILU_CAP_NONE;
    io.max_work = max_work;
    BSR_ASSERT_OK(bsr_order_parse(spec, &io.order));
    bsr_ilu *F = NULL;
    bsr_status s = bsr_ilu_setup(A, &io, &F);
    *products = 0;
    if (!s) {
        bsr_ilu_stats st;
        bsr_ilu_get_stats(F, &st);
        *products = st.work / pow(bsr_matrix_block(A), 3);
    }
    bsr_ilu_destroy(F);
    return s;
}

/* The estimate from below of a complete LU's block products (a
 * dissection's top levels, sep_estimate.c): below the products of METIS's
 * complete LU and within 4x of them on 3D and 2D grids and the coupled
 * class, 0 on a graph without edges; a complete factor under a bound that
 * the estimate passes BSR_SEP_SLACK times over is refused before it is
 * ordered (the message says so); under one just below its products, refused
 * by their count; at its products, set up; an ordering ahead under a
 * products bound the estimate passes that many times hands out nothing,
 * under the products themselves the ordering; ILUT with a threshold and a
 * structurally unsymmetric matrix are not estimated. */
static void test_sep_estimate(void)
{
    const char *gens[] = {"stencil3d:14:2", "coupled3d:12,4,couple=0.3", "rotconv3d:10,3", "convdiff2d:60"};
    for (int g = 0; g < 4; g++) {
        bsr_problem P;
        BSR_ASSERT_OK(bsr_generate(gens[g], BSR_DOUBLE, &P));
        double est = -1, prod = 0, p2 = 0;
        int sep = 0;
        BSR_ASSERT_OK(bsr_sep_products(P.A, 0, &est, &sep));
        BSR_ASSERT_OK(complete_lu_products(P.A, "metis,lift=1", 0, &prod));
        printf("\n  %s: top separator %d rows, estimate %.3g, complete LU %.3g block products (%.1fx)", gens[g], sep,
               est, prod, prod / est);
        CU_ASSERT(sep > 0 && est > 0 && est < prod && 4 * est > prod);
        const double b3 = pow(bsr_matrix_block(P.A), 3), under = 0.9 * est / BSR_SEP_SLACK;
        /* refused unordered under a bound the estimate passes BSR_SEP_SLACK times */
        CU_ASSERT_EQUAL(complete_lu_products(P.A, "metis,lift=1", under * b3, &p2), BSR_ERR_UNSUPPORTED);
        CU_ASSERT_PTR_NOT_NULL(strstr(bsr_last_error(), "work bound"));
        CU_ASSERT_PTR_NOT_NULL(strstr(bsr_last_error(), "neither ordered nor factored"));
        /* one product under the count: ordered and factored, refused by the count */
        CU_ASSERT_EQUAL(complete_lu_products(P.A, "metis,lift=1", (prod - 1) * b3, &p2), BSR_ERR_UNSUPPORTED);
        CU_ASSERT_PTR_NOT_NULL(strstr(bsr_last_error(), "work bound"));
        CU_ASSERT_PTR_NULL(strstr(bsr_last_error(), "neither ordered nor factored"));
        BSR_ASSERT_OK(complete_lu_products(P.A, "metis,lift=1", prod * b3, &p2));
        CU_ASSERT_EQUAL(p2, prod);
        /* a threshold keeps the estimate out */
        bsr_ilu_options io;
        bsr_ilu_options_default(&io, BSR_ILUT);
        io.tau1 = 1e-2;
        io.cap = BSR_ILU_CAP_NONE;
        CU_ASSERT(!bsr_ilu_keeps_all(&io));
        io.tau1 = 0;
        CU_ASSERT(bsr_ilu_keeps_all(&io));
        /* ahead: nothing under a bound below the estimate, the ordering above it */
        bsr_order_options o;
        BSR_ASSERT_OK(bsr_order_parse("metis,lift=1", &o));
        const int n = bsr_matrix_nbrows(P.A);
        for (int above = 0; above <= 1; above++) {
            bsr_order_ahead *h = NULL;
            BSR_ASSERT_OK(bsr_order_ahead_start(P.A, &o, above ? prod : under, &h));
            CU_ASSERT_PTR_NOT_NULL_FATAL(h);
            bsr_order_ahead_wait(h);
            bsr_ordering *c = bsr_order_ahead_copy(h, &o, n, NULL);
            CU_ASSERT_EQUAL(c != NULL, above);
            bsr_ordering_free(c);
            /* its estimate, the one the setup makes, handed out for its line and size only */
            const double line = above ? prod : under;
            double e1 = -1, e2 = -2;
            int s1 = -1, s2 = -2;
            BSR_ASSERT_OK(bsr_sep_products(P.A, line, &e1, &s1));
            CU_ASSERT(bsr_order_ahead_estimate(h, line, n, &e2, &s2));
            CU_ASSERT(e1 == e2 && s1 == s2);
            CU_ASSERT(!bsr_order_ahead_estimate(h, 2 * line, n, &e2, NULL));
            CU_ASSERT(!bsr_order_ahead_estimate(h, line, n + 1, &e2, NULL));
            bsr_order_ahead_release(h);
        }
        /* the setup takes the estimate of an ahead on its line: one made on a
         * path of n rows (an estimate of a few products) lets the complete
         * factor go on to its ordering under a bound its own estimate passes */
        bsr_matrix *E = grid2d(n, 1, 1, 0);
        CU_ASSERT_EQUAL_FATAL(bsr_matrix_nbrows(E), n);
        bsr_ilu_options ko;
        bsr_ilu_options_default(&ko, BSR_ILU2);
        ko.tau1 = 0;
        ko.cap = BSR_ILU_CAP_NONE;
        ko.max_work = under * b3;
        ko.order = o;
        const double kline = bsr_ilu_complete_line(&ko, bsr_matrix_block(P.A));
        for (int poisoned = 0; poisoned <= 1; poisoned++) {
            bsr_order_ahead *h = NULL;
            BSR_ASSERT_OK(bsr_order_ahead_start(poisoned ? E : P.A, &o, kline, &h));
            CU_ASSERT_PTR_NOT_NULL_FATAL(h);
            bsr_order_ahead_wait(h);
            bsr_ilu *F = NULL;
            const bsr_status ks = ilu_sym_build(P.A, &ko, NULL, h, &F);
            const int unordered = ks && strstr(bsr_last_error(), "neither ordered nor factored");
            CU_ASSERT_EQUAL(unordered, !poisoned);
            bsr_ilu_destroy(F);
            bsr_order_ahead_release(h);
        }
        bsr_matrix_destroy(E);
        bsr_problem_free(&P);
    }
    /* no edges: no separator */
    bsr_matrix *D = grid2d(1, 1, 2, 0);
    double est = -1;
    BSR_ASSERT_OK(bsr_sep_products(D, 0, &est, NULL));
    CU_ASSERT_EQUAL(est, 0);
    bsr_matrix_destroy(D);
    /* a structurally unsymmetric matrix (its upper triangle: no fill at
     * all) is not estimated: set up under a bound far below A + A^T's estimate */
    bsr_matrix *S = stencil3d(10, 1);
    const int n = bsr_matrix_nbrows(S);
    int *rp = calloc((size_t)n + 1, sizeof(int)), *ci = malloc(sizeof(int) * (size_t)bsr_matrix_nnzb(S));
    double *v = malloc(sizeof(double) * (size_t)bsr_matrix_nnzb(S));
    const int *srp = bsr_matrix_rowptr(S), *sci = bsr_matrix_colind(S);
    int m = 0;
    for (int i = 0; i < n; i++) {
        for (int p = srp[i]; p < srp[i + 1]; p++)
            if (sci[p] >= i) { ci[m] = sci[p]; v[m++] = sci[p] == i ? 4.0 : -1.0; }
        rp[i + 1] = m;
    }
    bsr_matrix *U = NULL;
    BSR_ASSERT_OK(bsr_matrix_create(&U, n, n, 1, rp, ci, v, BSR_DOUBLE, 0));
    BSR_ASSERT_OK(bsr_sep_products(S, 0, &est, NULL));
    double prod = -1;
    BSR_ASSERT_OK(complete_lu_products(U, "natural", 0.5 * est, &prod));
    CU_ASSERT_EQUAL(prod, 0);
    bsr_matrix_destroy(U);
    bsr_matrix_destroy(S);
    free(rp); free(ci); free(v);
}

/* Complete LU (no dropping) of A in the order spec: L + U blocks. */
static int64_t complete_lu_blocks(const bsr_matrix *A, const char *spec)
{
    bsr_ilu_options io;
    bsr_ilu_options_default(&io, BSR_ILUT);
    io.tau1 = 0;
    BSR_ASSERT_OK(bsr_order_parse(spec, &io.order));
    bsr_ilu *F = NULL;
    BSR_ASSERT_OK(bsr_ilu_setup(A, &io, &F));
    bsr_ilu_factors f;
    BSR_ASSERT_OK(bsr_ilu_get_factors(F, &f));
    const int64_t nz = (int64_t)bsr_matrix_nnzb(f.L) + bsr_matrix_nnzb(f.U);
    bsr_ilu_destroy(F);
    return nz;
}

static void test_nd_leafnd(void)
{
    bsr_matrix *A = grid2d(48, 40, 1, 0);
    bsr_order_options o;
    bsr_order_options_default(&o, BSR_ORDER_ND);
    CU_ASSERT_EQUAL(o.leafnd, 0);
    BSR_ASSERT_OK(bsr_order_parse("nd:2,leafnd=1", &o));
    CU_ASSERT_EQUAL(o.leafnd, 1);
    CU_ASSERT_EQUAL(bsr_order_parse("nd:2,leafnd=2", &o), BSR_ERR_ARG);
    bsr_ordering *m = roundtrip(A, "nd:2,leafnd=1"), *pl = roundtrip(A, "nd:2");
    CU_ASSERT(m->leafnd && !pl->leafnd);
    CU_ASSERT_EQUAL(m->nnodes, pl->nnodes);
    int *own = malloc(sizeof(int) * (size_t)m->n), same = 1, moved = 0;
    for (int q = 0; q < pl->nnodes; q++)
        for (int k = pl->nodes[q].sep_first; k < pl->nodes[q].last; k++) own[pl->perm[k]] = q;
    for (int q = 0; q < m->nnodes && same; q++) {
        const bsr_tree_node *a = &m->nodes[q], *b = &pl->nodes[q];
        same = a->first == b->first && a->sep_first == b->sep_first && a->last == b->last;
        for (int k = a->sep_first; same && k < a->last; k++) {
            same = own[m->perm[k]] == q;
            moved += a->child[0] < 0 && m->perm[k] != pl->perm[k];
        }
    }
    free(own);
    CU_ASSERT(same);
    CU_ASSERT(moved > m->n / 2);
    /* complete LU (no dropping) in both orders: L + U blocks */
    const int64_t nz[2] = {complete_lu_blocks(A, "nd:2"), complete_lu_blocks(A, "nd:2,leafnd=1")};
    CU_ASSERT(10 * nz[1] < 8 * nz[0]);
    if (!(10 * nz[1] < 8 * nz[0])) fprintf(stderr, "\n  LU blocks: leaves as found %lld, METIS %lld\n",
                                           (long long)nz[0], (long long)nz[1]);
    bsr_ordering_free(m);
    bsr_ordering_free(pl);
    bsr_matrix_destroy(A);
}

/* 1 when the rows k0 .. k1 of a appear in b in the same order. */
static int in_order(const int *a, int k0, int k1, const int *b, int n)
{
    int at = 0;
    for (int k = k0; k < k1; k++) {
        while (at < n && b[at] != a[k]) at++;
        if (at == n) return 0;
    }
    return 1;
}

/* lift=1: METIS's order with the top of its elimination tree moved to the
 * end: the same complete-LU fill, the root chain (the top separator, the
 * last rows of both) kept, the rows before and the lifted rows each in
 * METIS's order; not with ND's tree. */
static void test_metis_lift(void)
{
    /* the option: off by default, 0|1, refused with a tree */
    const char *const spec[] = {"metis", "metis,lift=1", "metis,lift=2", "nd:2,lift=1"};
    const bsr_status want[] = {BSR_OK, BSR_OK, BSR_ERR_ARG, BSR_ERR_ARG};
    for (int k = 0; k < 4; k++) {
        bsr_order_options o;
        CU_ASSERT_EQUAL(bsr_order_parse(spec[k], &o), want[k]);
        if (want[k] == BSR_OK) {
            CU_ASSERT_EQUAL(o.lift, k);
        } else {
            CU_ASSERT_PTR_NOT_NULL(strstr(bsr_last_error(), "lift"));
        }
    }
    bsr_matrix *A = stencil3d(14, 2);
    const int n = bsr_matrix_nbrows(A);
    bsr_ordering *m = roundtrip(A, "metis"), *l = roundtrip(A, "metis,lift=1");
    const int d = l->dense_rows;
    CU_ASSERT_EQUAL(m->dense_rows, 0);
    CU_ASSERT(d > 14 * 14 && d < n / 2);   /* more than a grid plane: the top separator and more */
    CU_ASSERT(in_order(l->perm, 0, n - d, m->perm, n));
    CU_ASSERT(in_order(l->perm, n - d, n, m->perm, n));
    CU_ASSERT_EQUAL(l->perm[n - 1], m->perm[n - 1]);
    int moved = 0;
    for (int k = 0; k < n; k++) moved += l->perm[k] != m->perm[k];
    CU_ASSERT(moved > 0);
    const int64_t zm = complete_lu_blocks(A, "metis"), zl = complete_lu_blocks(A, "metis,lift=1");
    CU_ASSERT_EQUAL(zm, zl);
    printf("\n  lift: %d of %d rows at the end, %d rows moved; complete LU blocks %lld / %lld", d, n, moved,
           (long long)zm, (long long)zl);
    bsr_ordering_free(m);
    bsr_ordering_free(l);
    /* natural order lifted: a valid ordering too */
    l = roundtrip(A, "natural,lift=1");
    CU_ASSERT(l->dense_rows > 0 && l->dense_rows <= n);
    CU_ASSERT_EQUAL(complete_lu_blocks(A, "natural,lift=1"), complete_lu_blocks(A, "natural"));
    bsr_ordering_free(l);
    bsr_matrix_destroy(A);
}

/* ND on disconnected matrices: empty separators where components split for free. */
static void test_nd_disconnected(void)
{
    /* two grids side by side, no coupling, plus isolated rows */
    int g = 12, n = 2 * g * g + 5, m = 0;
    int *pi = malloc(sizeof(int) * 5 * (size_t)n), *pj = malloc(sizeof(int) * 5 * (size_t)n);
    for (int c = 0; c < 2; c++)
        for (int y = 0; y < g; y++)
            for (int x = 0; x < g; x++) {
                int i = c * g * g + y * g + x;
                pi[m] = i; pj[m++] = i;
                if (x + 1 < g) { pi[m] = i; pj[m++] = i + 1; pi[m] = i + 1; pj[m++] = i; }
                if (y + 1 < g) { pi[m] = i; pj[m++] = i + g; pi[m] = i + g; pj[m++] = i; }
            }
    for (int i = 2 * g * g; i < n; i++) { pi[m] = i; pj[m++] = i; }
    bsr_matrix *A = from_pairs(n, 2, m, pi, pj);
    free(pi); free(pj);
    bsr_ordering *o = roundtrip(A, "nd:1");
    CU_ASSERT_EQUAL(o->nodes[0].sep_first, o->nodes[0].last);   /* empty root separator */
    bsr_ordering_free(o);
    o = roundtrip(A, "nd:4");
    CU_ASSERT_EQUAL(o->nleaves, 16);
    bsr_ordering_free(o);
    /* only isolated rows: every split is free */
    int di[64];
    for (int i = 0; i < 64; i++) di[i] = i;
    bsr_matrix *D = from_pairs(64, 1, 64, di, di);
    o = roundtrip(D, "nd:3");
    check_full_tree(o, 3);
    for (int k = 0; k < o->nnodes; k++)   /* all separators empty, leaves of 8 */
        CU_ASSERT_EQUAL(o->nodes[k].child[0] < 0 ? o->nodes[k].last - o->nodes[k].first - 8
                                                 : o->nodes[k].last - o->nodes[k].sep_first, 0);
    bsr_ordering_free(o);
    bsr_matrix_destroy(D);
    bsr_matrix_destroy(A);
}

/* The p-bordered checker rejects a block coupling two leaves of different parents, naming it. */
static void test_checker_fails(void)
{
    bsr_matrix *A = grid2d(30, 30, 1, 0), *B, *C = NULL;
    bsr_order_options opt;
    bsr_ordering *o;
    bsr_pbordered_report r;
    CU_ASSERT_EQUAL(bsr_order_parse("nd:3", &opt), BSR_OK);
    BSR_ASSERT_OK(bsr_order(A, &opt, &o));
    BSR_ASSERT_OK(bsr_permute(A, o, &B));
    BSR_ASSERT_OK(bsr_pbordered_check(B, o, &r));
    /* add one block between the first rows of leaves 0 and 1 of different parents */
    int l0 = -1, l1 = -1;
    for (int k = 0; k < o->nnodes; k++) {
        const bsr_tree_node *t = &o->nodes[k];
        if (t->child[0] >= 0) continue;
        if (l0 < 0) l0 = k;
        else if (o->nodes[t->parent].parent != o->nodes[o->nodes[l0].parent].parent) { l1 = k; break; }
    }
    CU_ASSERT_FATAL(l0 >= 0 && l1 >= 0);
    int i = o->nodes[l0].first, j = o->nodes[l1].first, n = o->n;
    const int *rp = bsr_matrix_rowptr(B), *ci = bsr_matrix_colind(B);
    int nz = bsr_matrix_nnzb(B);
    int *rp2 = malloc(sizeof(int) * (n + 1)), *ci2 = malloc(sizeof(int) * (nz + 1));
    double *v2 = calloc((size_t)nz + 1, sizeof(double));
    rp2[0] = 0;
    for (int r0 = 0, q = 0; r0 < n; r0++) {
        for (int p = rp[r0]; p < rp[r0 + 1]; p++) { ci2[q] = ci[p]; v2[q++] = 1.0; }
        if (r0 == i) { ci2[q] = j; v2[q++] = 1.0; }
        rp2[r0 + 1] = q;
    }
    BSR_ASSERT_OK(bsr_matrix_create(&C, n, n, 1, rp2, ci2, v2, BSR_DOUBLE, 0));
    CU_ASSERT_EQUAL(bsr_pbordered_check(C, o, &r), BSR_ERR_STRUCTURE);
    char want[64];
    snprintf(want, sizeof want, "block (%d,%d)", i, j);
    CU_ASSERT_PTR_NOT_NULL(strstr(bsr_last_error(), want));
    CU_ASSERT_EQUAL(r.nleaves, 8);   /* the report is still filled */
    /* the unpermuted grid is not p-bordered for this tree */
    CU_ASSERT_EQUAL(bsr_pbordered_check(A, o, NULL), BSR_ERR_STRUCTURE);
    /* a corrupted tree is caught */
    int save = o->nodes[1].last;
    o->nodes[1].last = save - 1;
    CU_ASSERT_EQUAL(bsr_pbordered_check(B, o, NULL), BSR_ERR_STRUCTURE);
    o->nodes[1].last = save;
    /* an ordering without a tree cannot be checked */
    bsr_ordering *nat;
    BSR_ASSERT_OK(bsr_ordering_identity(n, &nat));
    CU_ASSERT_EQUAL(bsr_pbordered_check(A, nat, NULL), BSR_ERR_ARG);
    bsr_ordering_free(nat);
    free(rp2); free(ci2); free(v2);
    bsr_matrix_destroy(A); bsr_matrix_destroy(B); bsr_matrix_destroy(C);
    bsr_ordering_free(o);
}

/* A depth beyond what the graph allows degrades to a shallower tree; depth > 30 and bad kinds
 * rejected. */
static void test_depth_too_large(void)
{
    int pi[3 * 10], pj[3 * 10], m = 0;   /* path of 10 rows */
    for (int i = 0; i < 10; i++) {
        pi[m] = i; pj[m++] = i;
        if (i + 1 < 10) { pi[m] = i; pj[m++] = i + 1; pi[m] = i + 1; pj[m++] = i; }
    }
    bsr_matrix *A = from_pairs(10, 2, m, pi, pj);
    bsr_ordering *o = roundtrip(A, "nd:20");
    CU_ASSERT(o->depth < 20);
    CU_ASSERT_EQUAL(o->depth_asked, 20);
    CU_ASSERT(o->nleaves >= 2);
    bsr_ordering_free(o);
    bsr_matrix_destroy(A);
    A = grid2d(9, 7, 1, 1);
    o = roundtrip(A, "nd:30");
    CU_ASSERT(o->depth < 30);
    bsr_ordering_free(o);
    bsr_order_options opt;
    bsr_order_options_default(&opt, BSR_ORDER_ND);
    opt.depth = 40;
    CU_ASSERT_EQUAL(bsr_order(A, &opt, &o), BSR_ERR_ARG);
    CU_ASSERT_PTR_NULL(o);
    opt.kind = (bsr_order_kind)99;
    opt.depth = 2;
    CU_ASSERT_EQUAL(bsr_order(A, &opt, &o), BSR_ERR_ARG);
    bsr_matrix_destroy(A);
}

/* 1x1, empty-row and blockless matrices under every ordering; non-square rejected. */
static void test_tiny(void)
{
    int z = 0;
    bsr_matrix *A = from_pairs(1, 3, 1, &z, &z);
    for (int k = 0; specs[k]; k++) {
        bsr_ordering *o = roundtrip(A, specs[k]);
        CU_ASSERT_EQUAL(o->perm[0], 0);
        bsr_ordering_free(o);
    }
    bsr_levels *lv;
    BSR_ASSERT_OK(bsr_levels_build(A, 0, &lv));
    CU_ASSERT_EQUAL(lv->nlevels, 1);
    bsr_levels_free(lv);
    bsr_matrix_destroy(A);
    /* empty rows (no block at all, not even the diagonal) */
    int pi[] = {0, 0, 2, 4, 4}, pj[] = {0, 4, 2, 0, 4};
    A = from_pairs(6, 2, 5, pi, pj);
    for (int k = 0; specs[k]; k++) bsr_ordering_free(roundtrip(A, specs[k]));
    bsr_matrix_destroy(A);
    /* no blocks at all */
    A = from_pairs(4, 1, 0, pi, pj);
    if (A) {
        for (int k = 0; specs[k]; k++) bsr_ordering_free(roundtrip(A, specs[k]));
        bsr_matrix_destroy(A);
    }
    /* not square */
    bsr_matrix *R = bsr_test_random_matrix(5, 6, 1, 1, 2, BSR_DOUBLE, 1);
    bsr_order_options opt;
    bsr_ordering *o;
    bsr_levels *l2;
    bsr_order_options_default(&opt, BSR_ORDER_ND);
    CU_ASSERT_EQUAL(bsr_order(R, &opt, &o), BSR_ERR_SIZE);
    CU_ASSERT_EQUAL(bsr_levels_build(R, 0, &l2), BSR_ERR_SIZE);
    CU_ASSERT_EQUAL(bsr_order(NULL, &opt, &o), BSR_ERR_ARG);
    bsr_matrix_destroy(R);
}

/* METIS errors come back as BSR_ERR_METIS naming the function and its return code. */
static void test_metis_failure(void)
{
    bsr_matrix *A = grid2d(20, 20, 1, 0);
    bsr_order_options opt;
    bsr_ordering *o = NULL;
    bsr_order_options_default(&opt, BSR_ORDER_ND);
    opt.depth = 2;
    opt.nseps = -3;   /* METIS rejects this */
    CU_ASSERT_EQUAL(bsr_order(A, &opt, &o), BSR_ERR_METIS);
    CU_ASSERT_PTR_NULL(o);
    CU_ASSERT_PTR_NOT_NULL(strstr(bsr_last_error(), "METIS_ComputeVertexSeparator"));
    CU_ASSERT_PTR_NOT_NULL(strstr(bsr_last_error(), "returned -2"));
    opt.kind = BSR_ORDER_METIS_ND;
    CU_ASSERT_EQUAL(bsr_order(A, &opt, &o), BSR_ERR_METIS);
    CU_ASSERT_PTR_NOT_NULL(strstr(bsr_last_error(), "METIS_NodeND"));
    CU_ASSERT_PTR_NULL(o);
    bsr_matrix_destroy(A);
}

/* Ordering specs parsed (kind, depth, METIS options); malformed specs rejected. */
static void test_parse(void)
{
    bsr_order_options o;
    BSR_ASSERT_OK(bsr_order_parse("nd:auto,seed=7,nseps=2,ufactor=30,nsm=114", &o));
    CU_ASSERT(o.kind == BSR_ORDER_ND && o.depth == -1 && o.seed == 7 && o.nseps == 2 &&
              o.ufactor == 30 && o.nsm == 114);
    BSR_ASSERT_OK(bsr_order_parse("nd:5", &o));
    CU_ASSERT_EQUAL(o.depth, 5);
    BSR_ASSERT_OK(bsr_order_parse("amd", &o));
    CU_ASSERT_EQUAL(o.kind, BSR_ORDER_AMD);
    BSR_ASSERT_OK(bsr_order_parse("center", &o));
    CU_ASSERT_EQUAL(o.kind, BSR_ORDER_CENTER);
    CU_ASSERT_STRING_EQUAL(bsr_order_kind_name(BSR_ORDER_CENTER), "center");
    CU_ASSERT_EQUAL(bsr_order_parse("center:2", &o), BSR_ERR_ARG);
    BSR_ASSERT_OK(bsr_order_parse("rcm,variant=3", &o));
    CU_ASSERT(o.kind == BSR_ORDER_RCM && o.variant == 3);
    const char *bad[] = {"foo", "nd:x", "nd:-2", "rcm:3", "nd,seed", "nd,bogus=1", "nd:99", "rcm,variant=4", NULL};
    for (int k = 0; bad[k]; k++) CU_ASSERT_EQUAL(bsr_order_parse(bad[k], &o), BSR_ERR_ARG);
}

/* Every dependency of a row (strict triangle) lies in an earlier level. */
static int levels_valid(const bsr_matrix *A, const bsr_levels *lv, int upper)
{
    const int *rp = bsr_matrix_rowptr(A), *ci = bsr_matrix_colind(A);
    int n = bsr_matrix_nbrows(A);
    if (lv->n != n || lv->level_ptr[0] != 0 || lv->level_ptr[lv->nlevels] != n) return 0;
    char *seen = calloc((size_t)n + 1, 1);
    int ok = 1, maxw = 0;
    for (int l = 0; l < lv->nlevels; l++) {
        int w = lv->level_ptr[l + 1] - lv->level_ptr[l];
        if (w <= 0) ok = 0;
        if (w > maxw) maxw = w;
        for (int k = lv->level_ptr[l]; k < lv->level_ptr[l + 1]; k++) {
            int i = lv->rows[k];
            if (seen[i] || lv->level_of[i] != l) ok = 0;
            seen[i] = 1;
            int need = 0;
            for (int p = rp[i]; p < rp[i + 1]; p++) {
                int j = ci[p];
                if (upper ? j > i : j < i) {
                    if (lv->level_of[j] >= l) ok = 0;
                    if (lv->level_of[j] == l - 1) need = 1;
                }
            }
            if (l > 0 && !need) ok = 0;   /* as early as possible */
        }
    }
    if (maxw != lv->max_width) ok = 0;
    free(seen);
    return ok;
}

/* Level schedules: a chain gives n levels of width 1, a diagonal one level; schedules respect
 * dependencies. */
static void test_levels(void)
{
    int n = 50, m = 0, pi[150], pj[150];
    for (int i = 0; i < n; i++) {
        pi[m] = i; pj[m++] = i;
        if (i + 1 < n) { pi[m] = i; pj[m++] = i + 1; pi[m] = i + 1; pj[m++] = i; }
    }
    int di[50];
    for (int i = 0; i < n; i++) di[i] = i;
    bsr_matrix *T = from_pairs(n, 2, m, pi, pj), *D = from_pairs(n, 2, n, di, di);
    bsr_levels *lv;
    for (int up = 0; up < 2; up++) {
        BSR_ASSERT_OK(bsr_levels_build(T, up, &lv));
        CU_ASSERT_EQUAL(lv->nlevels, n);
        CU_ASSERT_EQUAL(lv->max_width, 1);
        CU_ASSERT(levels_valid(T, lv, up));
        bsr_levels_free(lv);
        /* diagonal: one level of n rows */
        BSR_ASSERT_OK(bsr_levels_build(D, up, &lv));
        CU_ASSERT_EQUAL(lv->nlevels, 1);
        CU_ASSERT_EQUAL(lv->max_width, n);
        CU_ASSERT_DOUBLE_EQUAL(lv->mean_width, n, 0);
        bsr_levels_free(lv);
    }
    bsr_matrix_destroy(T);
    bsr_matrix_destroy(D);
    /* grids, random nonsymmetric, ND-permuted: validity; level-ordered renumbering */
    bsr_matrix *A[3] = {grid2d(17, 13, 1, 1), bsr_test_random_matrix(200, 200, 2, 1, 7, BSR_DOUBLE, 9),
                        stencil3d(8, 1)};
    for (int k = 0; k < 3; k++) {
        for (int up = 0; up < 2; up++) {
            bsr_ordering *o;
            BSR_ASSERT_OK(bsr_order_levels(A[k], up, &o, &lv));
            CU_ASSERT(levels_valid(A[k], lv, up));
            CU_ASSERT(is_bijection(o));
            CU_ASSERT_EQUAL(o->kind, BSR_ORDER_LEVELS);
            /* contiguous levels, dependencies renumbered earlier */
            const int *rp = bsr_matrix_rowptr(A[k]), *ci = bsr_matrix_colind(A[k]);
            int bad = 0;
            for (int i = 0; i < o->n; i++) {
                if (lv->level_of[o->perm[i]] != lv->level_of[lv->rows[i]]) bad++;
                for (int p = rp[i]; p < rp[i + 1]; p++)
                    if ((up ? ci[p] > i : ci[p] < i) && o->iperm[ci[p]] >= o->iperm[i]) bad++;
            }
            CU_ASSERT_EQUAL(bad, 0);
            bsr_ordering_free(o);
            bsr_levels_free(lv);
        }
        /* 2D grid lower triangle: levels = anti-diagonals gx + gy - 1 */
        if (k == 2) {
            BSR_ASSERT_OK(bsr_levels_build(A[k], 0, &lv));
            CU_ASSERT_EQUAL(lv->nlevels, 3 * 8 - 2);
            bsr_levels_free(lv);
        }
        bsr_matrix_destroy(A[k]);
    }
}

/* Per-leaf level schedules of an ND-permuted grid: dependencies inside the
 * leaf come from earlier levels, rows outside are ignored. */
static void test_levels_range(void)
{
    bsr_matrix *A = grid2d(40, 30, 1, 0), *B;
    bsr_ordering *o = roundtrip(A, "nd:3");
    BSR_ASSERT_OK(bsr_permute(A, o, &B));
    const int *rp = bsr_matrix_rowptr(B), *ci = bsr_matrix_colind(B);
    int leaves = 0, bad = 0;
    for (int k = 0; k < o->nnodes; k++) {
        const bsr_tree_node *t = &o->nodes[k];
        if (t->child[0] >= 0) continue;
        for (int up = 0; up < 2; up++) {
            bsr_levels *lv;
            BSR_ASSERT_OK(bsr_levels_build_range(B, up, t->first, t->last, &lv));
            CU_ASSERT_EQUAL(lv->n, t->last - t->first);
            CU_ASSERT_EQUAL(lv->level_ptr[lv->nlevels], lv->n);
            for (int q = 0; q < lv->n; q++) {
                int i = lv->rows[q], l = lv->level_of[i - t->first];
                if (i < t->first || i >= t->last) { bad++; continue; }
                for (int p = rp[i]; p < rp[i + 1]; p++) {
                    int j = ci[p];
                    if (j >= t->first && j < t->last && (up ? j > i : j < i) &&
                        lv->level_of[j - t->first] >= l) bad++;
                }
            }
            bsr_levels_free(lv);
        }
        leaves++;
    }
    CU_ASSERT_EQUAL(leaves, 8);
    CU_ASSERT_EQUAL(bad, 0);
    /* the whole range is bsr_levels_build */
    bsr_levels *a, *b;
    BSR_ASSERT_OK(bsr_levels_build(B, 0, &a));
    BSR_ASSERT_OK(bsr_levels_build_range(B, 0, 0, o->n, &b));
    CU_ASSERT(a->nlevels == b->nlevels && !memcmp(a->rows, b->rows, sizeof(int) * (size_t)o->n));
    bsr_levels_free(a);
    bsr_levels_free(b);
    CU_ASSERT_EQUAL(bsr_levels_build_range(B, 0, 5, 2, &a), BSR_ERR_ARG);
    CU_ASSERT_EQUAL(bsr_levels_build_range(B, 0, 0, o->n + 1, &a), BSR_ERR_ARG);
    bsr_matrix_destroy(A);
    bsr_matrix_destroy(B);
    bsr_ordering_free(o);
}

/* Largest |i - j| over A's stored blocks. */
static int bandwidth(const bsr_matrix *A)
{
    const int *rp = bsr_matrix_rowptr(A), *ci = bsr_matrix_colind(A);
    int bw = 0;
    for (int i = 0; i < bsr_matrix_nbrows(A); i++)
        for (int p = rp[i]; p < rp[i + 1]; p++) bw = abs(ci[p] - i) > bw ? abs(ci[p] - i) : bw;
    return bw;
}

/* RCM recovers a narrow band from a randomly shuffled grid (each component). */
static void test_rcm_band(void)
{
    int gx = 30, gy = 20, n = gx * gy;
    bsr_matrix *G = grid2d(gx, gy, 1, 0), *S, *R;
    bsr_ordering *sh = shuffled(n, 12345);
    BSR_ASSERT_OK(bsr_permute(G, sh, &S));
    CU_ASSERT(bandwidth(S) > 200);
    bsr_ordering *o = roundtrip(S, "rcm");
    BSR_ASSERT_OK(bsr_permute(S, o, &R));
    CU_ASSERT(bandwidth(R) <= 2 * gy + 2);
    bsr_matrix_destroy(R);
    bsr_ordering_free(o);
    /* the grid with holes has isolated rows: still a bijection, still banded */
    bsr_matrix *H = grid2d(gx, gy, 1, 1);
    o = roundtrip(H, "rcm");
    BSR_ASSERT_OK(bsr_permute(H, o, &R));
    CU_ASSERT(bandwidth(R) <= 2 * gy + 2);
    bsr_matrix_destroy(R);
    bsr_matrix_destroy(H);
    bsr_ordering_free(o);
    bsr_ordering_free(sh);
    bsr_matrix_destroy(S);
    bsr_matrix_destroy(G);
}

/* RCM's variants (variant=0..3): each a banded bijection, 1 and 2 not 0's
 * permutation; 2 and 3 are 0 and 1 of the graph numbered backwards (the
 * mirror), mapped back. */
static void test_rcm_variants(void)
{
    int gx = 30, gy = 20, n = gx * gy;
    bsr_matrix *G = grid2d(gx, gy, 1, 0), *M, *R;
    bsr_ordering *rev, *o[4], *m[2];
    BSR_ASSERT_OK(bsr_ordering_identity(n, &rev));
    for (int i = 0; i < n; i++) rev->perm[i] = rev->iperm[i] = n - 1 - i;
    BSR_ASSERT_OK(bsr_permute(G, rev, &M));
    char spec[32];
    for (int v = 0; v < 4; v++) {
        snprintf(spec, sizeof spec, "rcm,variant=%d", v);
        o[v] = roundtrip(G, spec);
        BSR_ASSERT_OK(bsr_permute(G, o[v], &R));
        CU_ASSERT(bandwidth(R) <= 2 * gy + 2);
        bsr_matrix_destroy(R);
        if (v < 2) m[v] = roundtrip(M, v ? "rcm,variant=1" : "rcm");
    }
    CU_ASSERT(memcmp(o[0]->perm, o[1]->perm, sizeof(int) * (size_t)n) != 0);
    CU_ASSERT(memcmp(o[0]->perm, o[2]->perm, sizeof(int) * (size_t)n) != 0);
    for (int v = 2; v < 4; v++) {
        int same = 1;
        for (int k = 0; k < n; k++) same &= o[v]->perm[k] == n - 1 - m[v - 2]->perm[k];
        CU_ASSERT(same);
    }
    for (int v = 0; v < 4; v++) bsr_ordering_free(o[v]);
    bsr_ordering_free(m[0]);
    bsr_ordering_free(m[1]);
    bsr_ordering_free(rev);
    bsr_matrix_destroy(M);
    bsr_matrix_destroy(G);
}

/* Lower-triangle levels of A permuted by spec. */
static int levels_after(const bsr_matrix *A, const char *spec)
{
    bsr_ordering *o = roundtrip(A, spec);
    bsr_matrix *B = NULL;
    bsr_levels *lv = NULL;
    int nl = -1;
    if (!bsr_permute(A, o, &B) && !bsr_levels_build(B, 0, &lv)) nl = lv->nlevels;
    bsr_levels_free(lv);
    bsr_matrix_destroy(B);
    bsr_ordering_free(o);
    return nl;
}

/* The centre ordering: a grid's triangles get about half the levels of the
 * natural order (its radius, not its diameter: every edge points towards
 * the centre), each distance in index order, the same permutation every
 * time; a path from its middle; isolated rows and a second component. */
static void test_center(void)
{
    /* g^3 grid: natural 3g - 2 levels; from the centre 3 ceil((g-1)/2) + 1 */
    const int gs[2] = {9, 10};
    for (int t = 0; t < 2; t++) {
        const int g = gs[t];
        bsr_matrix *A = stencil3d(g, 1);
        CU_ASSERT_PTR_NOT_NULL_FATAL(A);
        CU_ASSERT_EQUAL(levels_after(A, "natural"), 3 * g - 2);
        CU_ASSERT_EQUAL(levels_after(A, "center"), 3 * (g / 2) + 1);
        bsr_matrix_destroy(A);
    }
    bsr_matrix *G = grid2d(37, 23, 1, 0);
    CU_ASSERT_EQUAL(levels_after(G, "natural"), 37 + 23 - 1);
    CU_ASSERT_EQUAL(levels_after(G, "center"), 18 + 11 + 1);
    /* by decreasing distance from the last row (the centre), index order
     * within a distance; deterministic */
    bsr_order_options oo;
    bsr_ordering *o1, *o2;
    bsr_order_options_default(&oo, BSR_ORDER_CENTER);
    BSR_ASSERT_OK(bsr_order(G, &oo, &o1));
    BSR_ASSERT_OK(bsr_order(G, &oo, &o2));
    CU_ASSERT(!memcmp(o1->perm, o2->perm, sizeof(int) * 37 * 23));
    const int c = o1->perm[37 * 23 - 1], cx = c % 37, cy = c / 37;
    CU_ASSERT(cx == 18 && cy == 11);
    int bad = 0;
    for (int k = 1; k < 37 * 23; k++) {
        const int a = o1->perm[k - 1], b = o1->perm[k];
        const int da = abs(a % 37 - cx) + abs(a / 37 - cy), db = abs(b % 37 - cx) + abs(b / 37 - cy);
        if (da < db || (da == db && a > b)) bad++;
    }
    CU_ASSERT_EQUAL(bad, 0);
    bsr_ordering_free(o1);
    bsr_ordering_free(o2);
    bsr_matrix_destroy(G);
    /* a path of 41 rows and a separate path of 3, an isolated row: the long
     * path ends in its middle row, the components in order of their first row */
    int pi[200], pj[200], m = 0;
    for (int i = 0; i < 45; i++) {
        pi[m] = i; pj[m++] = i;
        if (i < 40 || (i >= 41 && i < 43)) { pi[m] = i; pj[m++] = i + 1; pi[m] = i + 1; pj[m++] = i; }
    }
    bsr_matrix *P = from_pairs(45, 2, m, pi, pj);
    BSR_ASSERT_OK(bsr_order(P, &oo, &o1));
    CU_ASSERT(is_bijection(o1));
    CU_ASSERT_EQUAL(o1->perm[0], 0);
    CU_ASSERT_EQUAL(o1->perm[1], 40);
    CU_ASSERT_EQUAL(o1->perm[40], 20);
    CU_ASSERT_EQUAL(o1->perm[43], 42);
    CU_ASSERT_EQUAL(o1->perm[44], 44);
    bsr_ordering_free(o1);
    bsr_matrix_destroy(P);
    /* a broom (a path of 100 rows, 12000 leaves on its last row): the level of
     * leaves is searched by all threads, the permutation is one thread's */
    const int nb = 12100;
    int *bi = malloc(sizeof(int) * 3 * (size_t)nb), *bj = malloc(sizeof(int) * 3 * (size_t)nb);
    m = 0;
    for (int i = 0; i < nb; i++) {
        bi[m] = i; bj[m++] = i;
        const int j = i < 99 ? i + 1 : i > 99 ? 99 : -1;
        if (j >= 0 && (i < 99 || i > 99)) { bi[m] = i; bj[m++] = j; bi[m] = j; bj[m++] = i; }
    }
    bsr_matrix *Br = from_pairs(nb, 1, m, bi, bj);
    const int nt = omp_get_max_threads();
    omp_set_num_threads(1);
    BSR_ASSERT_OK(bsr_order(Br, &oo, &o1));
    omp_set_num_threads(nt > 1 ? nt : 4);
    BSR_ASSERT_OK(bsr_order(Br, &oo, &o2));
    omp_set_num_threads(nt);
    CU_ASSERT(is_bijection(o2));
    CU_ASSERT(!memcmp(o1->perm, o2->perm, sizeof(int) * (size_t)nb));
    CU_ASSERT_EQUAL(o1->perm[0], 0);   /* the path's far end first, then the leaves */
    bsr_ordering_free(o1);
    bsr_ordering_free(o2);
    bsr_matrix_destroy(Br);
    free(bi);
    free(bj);
}

/* Every ordering and the p-bordered checker on the real matrices (skipped when absent). */
static void test_real_matrices(void)
{
    char **files;
    int nf = bsr_test_real_list(&files, 1 << 20), done = 0;
    for (int f = 0; f < nf && done < 8; f++) {
        const char *name = strrchr(files[f], '/') + 1;
        bsr_matrix *A;
        if (bsr_mm_read(files[f], 0, BSR_DOUBLE, &A, NULL)) {
            printf("\n  [skip] %s: %s\n", name, bsr_last_error());
            continue;
        }
        if (bsr_matrix_nbrows(A) > 2000000) { bsr_matrix_destroy(A); continue; }
        printf("\n  real %s: %d block rows", name, bsr_matrix_nbrows(A));
        bsr_ordering *o = roundtrip(A, "nd:auto");
        printf(", nd depth %d, %d leaves", o->depth, o->nleaves);
        bsr_ordering_free(o);
        bsr_ordering_free(roundtrip(A, "rcm"));
        bsr_ordering_free(roundtrip(A, "center"));
        bsr_matrix_destroy(A);
        done++;
    }
    bsr_test_free_list(files, nf);
}

/* The CLI summary runs every ordering and passes the p-bordered check. */
static void test_cli(void)
{
    const char *cli = getenv("BSR_CLI");
    if (!cli || !*cli) { printf("\n  [skip] BSR_CLI unset\n"); return; }
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "%s --gen stencil3d:10:2 --info --reorder all > /dev/null", cli);
    CU_ASSERT_EQUAL(system(cmd), 0);
    snprintf(cmd, sizeof cmd, "%s --gen stencil3d:10:2 --info --json --reorder nd:3+rcm | "
             "grep -q '\"pbordered\": true'", cli);
    CU_ASSERT_EQUAL(system(cmd), 0);
    snprintf(cmd, sizeof cmd, "%s --gen stencil3d:4:1 --info --reorder nd:zz > /dev/null 2>&1", cli);
    CU_ASSERT_NOT_EQUAL(system(cmd), 0);
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* Serial queue RCM of pattern(A + A^T) (the textbook algorithm, George-Liu
 * pseudo-peripheral start, children by (degree, index)): the reference the
 * level-parallel RCM must equal at any thread count. */
static void rcm_reference(const bsr_matrix *A, int *perm)
{
    const int n = bsr_matrix_nbrows(A), *rp = bsr_matrix_rowptr(A), *ci = bsr_matrix_colind(A);
    int *xadj = calloc((size_t)n + 1, sizeof(int)), *adj = malloc(sizeof(int) * (2 * (size_t)rp[n] + 1));
    for (int i = 0; i < n; i++)
        for (int p = rp[i]; p < rp[i + 1]; p++)
            if (ci[p] != i) { xadj[i + 1]++; xadj[ci[p] + 1]++; }
    for (int i = 0; i < n; i++) xadj[i + 1] += xadj[i];
    int *at = malloc(sizeof(int) * ((size_t)n + 1));
    memcpy(at, xadj, sizeof(int) * (size_t)n);
    for (int i = 0; i < n; i++)
        for (int p = rp[i]; p < rp[i + 1]; p++)
            if (ci[p] != i) { adj[at[i]++] = ci[p]; adj[at[ci[p]]++] = i; }
    int m = 0;   /* sort and deduplicate each list, compacting */
    for (int i = 0; i < n; i++) {
        int a = xadj[i], e = xadj[i + 1];
        qsort(adj + a, (size_t)(e - a), sizeof(int), cmp_int);
        xadj[i] = m;
        for (int p = a; p < e; p++) if (p == a || adj[p] != adj[p - 1]) adj[m++] = adj[p];
    }
    xadj[n] = m;
    free(at);
#define RDEG(v) (xadj[(v) + 1] - xadj[v])
    int *stamp = calloc((size_t)n + 1, sizeof(int)), *q = malloc(sizeof(int) * ((size_t)n + 1));
    int *done = calloc((size_t)n + 1, sizeof(int)), mark = 0, k = 0;
    for (int s = 0; s < n; s++) {
        if (done[s]) continue;
        int r = s, nlev = 0, last = 0, cnt = 0;
        for (int it = 0; it < 17; it++) {   /* BFS from the candidate; keep it while levels grow */
            int h = 0, t = 0, end = 1, nl = 1, la = 0;
            int c = it == 0 ? s : q[last];
            if (it > 0)
                for (int i = last + 1; i < cnt; i++) if (RDEG(q[i]) < RDEG(c)) c = q[i];
            q[t++] = c; stamp[c] = ++mark;
            while (h < t) {
                if (h == end) { nl++; la = h; end = t; }
                int v = q[h++];
                for (int p = xadj[v]; p < xadj[v + 1]; p++)
                    if (stamp[adj[p]] != mark) { stamp[adj[p]] = mark; q[t++] = adj[p]; }
            }
            if (it > 0 && nl <= nlev) break;
            r = c; nlev = nl; last = la; cnt = t;
        }
        int h = k;
        perm[k++] = r; done[r] = 1;
        while (h < k) {
            int v = perm[h++], b0 = k;
            for (int p = xadj[v]; p < xadj[v + 1]; p++) {
                int u = adj[p];
                if (done[u]) continue;
                done[u] = 1;
                int j = k++;
                while (j > b0 && (RDEG(perm[j - 1]) > RDEG(u) || (RDEG(perm[j - 1]) == RDEG(u) && perm[j - 1] > u))) {
                    perm[j] = perm[j - 1]; j--;
                }
                perm[j] = u;
            }
        }
    }
#undef RDEG
    for (int i = 0, j = n - 1; i < j; i++, j--) { int t = perm[i]; perm[i] = perm[j]; perm[j] = t; }
    free(xadj); free(adj); free(stamp); free(q); free(done);
}

/* The level-parallel RCM equals the serial queue RCM at 1, 2 and 4 threads:
 * a shuffled 3D grid whose middle levels are searched by the team, and a
 * random graph of several components with isolated vertices. */
static void test_rcm_serial(void)
{
    for (int c = 0; c < 2; c++) {
        bsr_matrix *A;
        if (c == 0) {
            bsr_matrix *G = stencil3d(40, 1);   /* middle levels over 1024 wide */
            int n = bsr_matrix_nbrows(G);
            bsr_ordering *sh = shuffled(n, 777);
            BSR_ASSERT_OK(bsr_permute(G, sh, &A));
            bsr_ordering_free(sh);
            bsr_matrix_destroy(G);
        } else {
            int n = 3000, m = 0;
            int *pi = malloc(sizeof(int) * 8 * n), *pj = malloc(sizeof(int) * 8 * n);
            uint64_t st = 99;
            for (int i = 0; i < n; i++) {
                pi[m] = pj[m] = i; m++;
                if (i % 11 == 5) continue;   /* isolated */
                for (int e = 0; e < 3; e++) {
                    int j = (int)((bsr_test_lcg(&st) >> 33) % 1000) + (i / 1000) * 1000;   /* three blocks of 1000 */
                    if (j % 11 == 5 || j == i) continue;
                    int dup = 0;
                    for (int q = 0; q < m; q++) dup |= pi[q] == i && pj[q] == j;
                    if (!dup) { pi[m] = i; pj[m] = j; m++; }
                }
            }
            A = from_pairs(n, 1, m, pi, pj);
            free(pi); free(pj);
        }
        int n = bsr_matrix_nbrows(A);
        int *ref = malloc(sizeof(int) * (size_t)n);
        rcm_reference(A, ref);
        int nt0 = omp_get_max_threads();
        for (int nt = 1; nt <= 4; nt *= 2) {
            omp_set_num_threads(nt);
            bsr_order_options o;
            bsr_ordering *ord = NULL;
            bsr_order_options_default(&o, BSR_ORDER_RCM);
            BSR_ASSERT_OK(bsr_order(A, &o, &ord));
            int diff = 0;
            for (int i = 0; i < n; i++) diff += ord->perm[i] != ref[i];
            if (diff) printf("rcm_serial: case %d, %d threads: %d positions differ\n", c, nt, diff);
            CU_ASSERT_EQUAL(diff, 0);
            bsr_ordering_free(ord);
        }
        omp_set_num_threads(nt0);
        free(ref);
        bsr_matrix_destroy(A);
    }
}

int main(int argc, char **argv)
{
    static const bsr_test tests[] = {
        {"roundtrip_all_orderings", test_roundtrip_all_orderings},
        {"permute_vec", test_permute_vec},
        {"nd_grids", test_nd_grids},
        {"nd_disconnected", test_nd_disconnected},
        {"nd_sepcolor", test_nd_sepcolor},
        {"nd_leafnd", test_nd_leafnd},
        {"metis_lift", test_metis_lift},
        {"ahead", test_ahead},
        {"sep_estimate", test_sep_estimate},
        {"checker_fails", test_checker_fails},
        {"depth_too_large", test_depth_too_large},
        {"tiny", test_tiny},
        {"metis_failure", test_metis_failure},
        {"parse", test_parse},
        {"levels", test_levels},
        {"levels_range", test_levels_range},
        {"rcm_band", test_rcm_band},
        {"rcm_serial", test_rcm_serial},
        {"rcm_variants", test_rcm_variants},
        {"center", test_center},
        {"real_matrices", test_real_matrices},
        {"cli", test_cli},
        {NULL, NULL}};
    return bsr_test_main("reorder", tests, argc, argv);
}
