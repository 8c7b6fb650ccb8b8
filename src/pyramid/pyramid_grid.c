/* SPDX-License-Identifier: BSD-3-Clause */
/* Host grids of the pyramid solver: allocation (pinned when possible), test
 * fields, copies and comparisons, option defaults and validation. */
#include "pyramid_impl.h"
#include <math.h>
#include <string.h>

/* memcpy / memset of large grids in parallel chunks (host bandwidth needs threads). */
static void par_copy(void *dst, const void *src, size_t bytes)
{
    const size_t chunk = (size_t)1 << 24;
    const int64_t nc = (int64_t)((bytes + chunk - 1) / chunk);
#pragma omp parallel for schedule(static) if (nc > 1) num_threads(bsr_team_size())
    for (int64_t c = 0; c < nc; c++) {
        size_t off = (size_t)c * chunk, len = bytes - off < chunk ? bytes - off : chunk;
        if (src) memcpy((char *)dst + off, (const char *)src + off, len);
        else memset((char *)dst + off, 0, len);
    }
}

/* Allocate a zero grid of n[0..dim-1] points. */
bsr_status bsr_grid_create(bsr_grid **G, int dim, const int64_t *n, bsr_precision prec,
                           int pinned)
{
    BSR_CHECK_ARG(G && n, "bsr_grid_create: NULL argument");
    *G = NULL;
    BSR_CHECK_ARG(dim >= 1 && dim <= 3, "bsr_grid_create: dim %d not in 1..3", dim);
    BSR_CHECK_ARG(prec == BSR_DOUBLE || prec == BSR_FLOAT, "bsr_grid_create: bad precision");
    int64_t pts = 1;
    for (int a = 0; a < dim; a++) {
        BSR_CHECK_ARG(n[a] >= 3 && n[a] <= ((int64_t)1 << 40),
                      "bsr_grid_create: n[%d] = %lld must be >= 3 (boundary + interior)", a,
                      (long long)n[a]);
        pts *= n[a];
        BSR_CHECK_ARG(pts <= ((int64_t)1 << 40), "bsr_grid_create: %lld+ points is too many",
                      (long long)pts);
    }
    bsr_grid *g = bsr_calloc(1, sizeof *g, "bsr_grid");
    if (!g) return BSR_ERR_NOMEM;
    g->dim = dim;
    g->prec = prec;
    for (int a = 0; a < 3; a++) g->n[a] = a < dim ? n[a] : 1;
    g->pinned = pinned != 0;
    size_t bytes = (size_t)pts * bsr_precision_size(prec);
    g->pin[0] = g->pinned;
    g->data[0] = bsr_pyr_host_alloc(bytes, &g->pin[0]);
    if (!g->data[0]) {
        free(g);
        return bsr_error(BSR_ERR_NOMEM, "bsr_grid_create: cannot allocate %zu bytes of %s host memory",
                         bytes, pinned ? "pinned" : "");
    }
    par_copy(g->data[0], NULL, bytes);
    *G = g;
    return BSR_OK;
}

void bsr_grid_destroy(bsr_grid *G)
{
    if (!G) return;
    bsr_pyr_host_free(G->data[0], G->pin[0]);
    bsr_pyr_host_free(G->data[1], G->pin[1]);
    bsr_pyr_host_free(G->rhs, G->pin[2]);
    free(G);
}

int bsr_grid_dim(const bsr_grid *G) { return G ? G->dim : 0; }
int64_t bsr_grid_size(const bsr_grid *G, int a) { return G && a >= 0 && a < 3 ? G->n[a] : 0; }
int64_t bsr_grid_points(const bsr_grid *G) { return G ? G->n[0] * G->n[1] * G->n[2] : 0; }
bsr_precision bsr_grid_precision(const bsr_grid *G) { return G ? G->prec : BSR_DOUBLE; }
void *bsr_grid_data(bsr_grid *G) { return G ? G->data[G->cur] : NULL; }

static size_t grid_bytes(const bsr_grid *G)
{
    return (size_t)bsr_grid_points(G) * bsr_precision_size(G->prec);
}

void *bsr_grid_rhs(bsr_grid *G)
{
    if (!G) return NULL;
    if (!G->rhs) {
        G->pin[2] = G->pinned;
        G->rhs = bsr_pyr_host_alloc(grid_bytes(G), &G->pin[2]);
        if (!G->rhs) {
            bsr_error(BSR_ERR_NOMEM, "bsr_grid_rhs: cannot allocate %zu bytes", grid_bytes(G));
            return NULL;
        }
        par_copy(G->rhs, NULL, grid_bytes(G));
    }
    return G->rhs;
}

void *pyr_grid_alt(bsr_grid *G)
{
    int o = 1 - G->cur;
    if (!G->data[o]) {
        G->pin[o] = G->pinned;
        G->data[o] = bsr_pyr_host_alloc(grid_bytes(G), &G->pin[o]);
        if (!G->data[o])
            bsr_error(BSR_ERR_NOMEM, "pyramid: cannot allocate the %zu-byte ping-pong host grid",
                      grid_bytes(G));
    }
    return G->data[o];
}

static uint64_t mix(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* A smooth bump plus 10% noise, so every point differs and errors show; the
 * rhs is a random source.  Values depend only on (seed, point index). */
bsr_status bsr_grid_fill_test(bsr_grid *G, uint64_t seed, int with_rhs)
{
    BSR_CHECK_ARG(G, "bsr_grid_fill_test: NULL grid");
    void *u = G->data[G->cur];
    void *g = NULL;
    if (with_rhs && !(g = bsr_grid_rhs(G))) return BSR_ERR_NOMEM;
    const int64_t nx = G->n[0], ny = G->n[1], nz = G->n[2];
    const int dbl = G->prec == BSR_DOUBLE;
#pragma omp parallel for schedule(static) if (bsr_par_worth(nx * ny * nz)) num_threads(bsr_team_size())
    for (int64_t k = 0; k < nz; k++)
        for (int64_t j = 0; j < ny; j++)
            for (int64_t i = 0; i < nx; i++) {
                int64_t p = i + nx * (j + ny * k);
                uint64_t h = mix(seed * 0x9e3779b97f4a7c15ull + (uint64_t)p);
                double noise = (double)(h >> 11) * (1.0 / 9007199254740992.0) - 0.5;
                double v = sin(3.0 * i / nx) * cos(2.0 * j / ny) * (1.0 + (double)k / nz) + 0.1 * noise;
                double f = (double)(mix(h) >> 11) * (1.0 / 9007199254740992.0) - 0.5;
                if (dbl) {
                    ((double *)u)[p] = v;
                    if (g) ((double *)g)[p] = 1e-3 * f;
                } else {
                    ((float *)u)[p] = (float)v;
                    if (g) ((float *)g)[p] = (float)(1e-3 * f);
                }
            }
    return BSR_OK;
}

bsr_status bsr_grid_copy(bsr_grid *A, const bsr_grid *B)
{
    BSR_CHECK_ARG(A && B, "bsr_grid_copy: NULL grid");
    if (A->prec != B->prec || memcmp(A->n, B->n, sizeof A->n))
        return bsr_error(BSR_ERR_SIZE, "bsr_grid_copy: grids differ in shape or precision");
    par_copy(A->data[A->cur], B->data[B->cur], grid_bytes(A));
    if (B->rhs) {
        void *g = bsr_grid_rhs(A);
        if (!g) return BSR_ERR_NOMEM;
        par_copy(g, B->rhs, grid_bytes(A));
    }
    return BSR_OK;
}

bsr_status bsr_grid_compare(const bsr_grid *A, const bsr_grid *B, double *maxdiff, int64_t *ndiff)
{
    BSR_CHECK_ARG(A && B && maxdiff && ndiff, "bsr_grid_compare: NULL argument");
    if (A->prec != B->prec || memcmp(A->n, B->n, sizeof A->n))
        return bsr_error(BSR_ERR_SIZE, "bsr_grid_compare: grids differ in shape or precision");
    const int64_t np = bsr_grid_points(A);
    const void *a = A->data[A->cur], *b = B->data[B->cur];
    double md = 0;
    int64_t nd = 0;
    const int dbl = A->prec == BSR_DOUBLE;
#pragma omp parallel for reduction(max : md) reduction(+ : nd) schedule(static) if (bsr_par_worth(np)) num_threads(bsr_team_size())
    for (int64_t p = 0; p < np; p++) {
        double x = dbl ? ((const double *)a)[p] : ((const float *)a)[p];
        double y = dbl ? ((const double *)b)[p] : ((const float *)b)[p];
        int same = dbl ? !memcmp((const double *)a + p, (const double *)b + p, 8)
                       : !memcmp((const float *)a + p, (const float *)b + p, 4);
        if (!same) nd++;
        double d = fabs(x - y);
        if (d != d) d = INFINITY; /* NaN counts as the worst difference */
        if (d > md) md = d;
    }
    *maxdiff = md;
    *ndiff = nd;
    return BSR_OK;
}

void bsr_pyr_opts_default(bsr_pyr_opts *o)
{
    memset(o, 0, sizeof *o);
    o->problem = BSR_PYR_HEAT;
    o->r = 0.2;
    o->steps = 16;
    o->check = 1;
    o->eps = 1e-8;
    o->algo = BSR_PYR_PYRAMID;
    o->decomp = BSR_PYR_STRIPS;
    o->height = 0;
    o->nslots = 3;
}

/* Checks common to every run: shapes, coefficients, steps, decomposition. */
bsr_status pyr_check(const char *fn, const bsr_grid *G, const bsr_pyr_opts *o)
{
    BSR_CHECK_ARG(G && o, "%s: NULL argument", fn);
    BSR_CHECK_ARG(o->problem == BSR_PYR_HEAT || o->problem == BSR_PYR_JACOBI, "%s: bad problem %d",
                  fn, (int)o->problem);
    BSR_CHECK_ARG(o->algo >= BSR_PYR_INCORE && o->algo <= BSR_PYR_PYRAMID, "%s: bad algorithm %d", fn,
                  (int)o->algo);
    BSR_CHECK_ARG(o->decomp == BSR_PYR_STRIPS || o->decomp == BSR_PYR_TILES,
                  "%s: bad decomposition %d", fn, (int)o->decomp);
    if (o->decomp == BSR_PYR_TILES && G->dim < 2)
        return bsr_error(BSR_ERR_UNSUPPORTED, "%s: tiles need a 2D or 3D grid (grid is 1D)", fn);
    BSR_CHECK_ARG(o->steps >= 0, "%s: steps %d < 0", fn, o->steps);
    BSR_CHECK_ARG(o->height >= 0, "%s: height %d < 0", fn, o->height);
    BSR_CHECK_ARG(o->nslots >= 0 && o->nslots <= 16, "%s: nslots %d not in 0..16", fn, o->nslots);
    for (int a = 0; a < 3; a++)
        BSR_CHECK_ARG(o->split[a] >= 0 && o->split[a] <= G->n[a], "%s: split[%d] = %d not in 0..%lld",
                      fn, a, o->split[a], (long long)G->n[a]);
    if (o->problem == BSR_PYR_HEAT) {
        if (!isfinite(o->r) || o->r <= 0)
            return bsr_error(BSR_ERR_VALUE, "%s: heat coefficient r = %g must be finite and > 0", fn, o->r);
    } else {
        BSR_CHECK_ARG(o->check >= 1, "%s: Jacobi check interval %d < 1", fn, o->check);
        if (!(o->eps >= 0) || !isfinite(o->eps))
            return bsr_error(BSR_ERR_VALUE, "%s: Jacobi eps = %g must be finite and >= 0", fn, o->eps);
        if (!G->rhs) return bsr_error(BSR_ERR_ARG, "%s: Jacobi needs a right-hand side (bsr_grid_rhs)", fn);
    }
    return BSR_OK;
}
