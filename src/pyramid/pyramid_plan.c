/* SPDX-License-Identifier: BSD-3-Clause */
/* Subdomain plans of the pyramid solver: regular splits that fit a device
 * budget, input boxes with halos, shrinking step regions, neighbour lists. */
#include "pyramid_impl.h"
#include <string.h>

int64_t pyr_box_vol(const pyr_box *b)
{
    int64_t v = 1;
    for (int a = 0; a < 3; a++) {
        if (b->hi[a] <= b->lo[a]) return 0;
        v *= b->hi[a] - b->lo[a];
    }
    return v;
}

/* Subdomain j's split coordinates (axis 0 fastest). */
static void sub_coords(const pyr_plan *P, int j, int *c)
{
    c[0] = j % P->split[0];
    c[1] = (j / P->split[0]) % P->split[1];
    c[2] = j / (P->split[0] * P->split[1]);
}

void pyr_out_box(const pyr_plan *P, int j, pyr_box *b)
{
    int c[3];
    sub_coords(P, j, c);
    for (int a = 0; a < 3; a++) {
        b->lo[a] = P->cut[a][c[a]];
        b->hi[a] = P->cut[a][c[a] + 1];
    }
}

void pyr_in_box(const pyr_plan *P, int j, int h, pyr_box *b)
{
    pyr_out_box(P, j, b);
    for (int a = 0; a < P->dim; a++) {
        b->lo[a] = b->lo[a] - h < 0 ? 0 : b->lo[a] - h;
        b->hi[a] = b->hi[a] + h > P->n[a] ? P->n[a] : b->hi[a] + h;
    }
}

/* At step t the values within t of a cut edge are stale (their neighbours
 * were not in the box), so the region retreats by t there; at a grid edge the
 * Dirichlet layer stays fixed and is always valid. */
int pyr_step_region(const pyr_plan *P, const pyr_box *in, int t, pyr_box *reg)
{
    for (int a = 0; a < 3; a++) {
        if (a >= P->dim) { reg->lo[a] = 0; reg->hi[a] = 1; continue; }
        int64_t lo = in->lo[a] + (in->lo[a] > 0 ? t : 0);
        int64_t hi = in->hi[a] - (in->hi[a] < P->n[a] ? t : 0);
        if (lo < 1) lo = 1;
        if (hi > P->n[a] - 1) hi = P->n[a] - 1;
        reg->lo[a] = lo;
        reg->hi[a] = hi;
        if (hi <= lo) return 0;
    }
    return 1;
}

int pyr_pass_count(int K, int h) { return h <= 0 ? 0 : (K + h - 1) / h; }

/* Largest input extent along an axis of n points split in p, halo h. */
static int64_t in_extent(int64_t n, int64_t p, int64_t h)
{
    int64_t e = (n + p - 1) / p + (p > 1 ? 2 * h : 0);
    return e > n ? n : e;
}

/* Fewest pieces p of axis length n whose input extent (halo h) is <= cap; 0 if none. */
static int64_t fewest(int64_t n, int64_t h, int64_t cap)
{
    if (n <= cap) return 1;
    int64_t c = cap - 2 * h; /* output points a middle piece may have */
    if (c < 1) return 0;
    return (n + c - 1) / c;
}

/* Pick the split: the fewest strips, or the tiles with the least transferred
 * volume, such that nslots slots of bufs buffers fit `values` values. */
static bsr_status choose_split(pyr_plan *P, bsr_pyr_decomp d, int64_t values, int h)
{
    const int a1 = P->dim - 1;
    int64_t rest = 1;
    for (int a = 0; a < P->dim - (d == BSR_PYR_TILES ? 2 : 1); a++) rest *= P->n[a];
    if (values / rest < 1) return BSR_ERR_NOMEM;
    if (d == BSR_PYR_STRIPS) {
        int64_t p = fewest(P->n[a1], h, values / rest);
        if (!p) return BSR_ERR_NOMEM;
        P->split[a1] = (int)p;
        return BSR_OK;
    }
    const int a0 = P->dim - 2;
    rest = 1;
    for (int a = 0; a < a0; a++) rest *= P->n[a];
    double best = -1;
    for (int64_t p1 = 1; p1 <= P->n[a1]; p1++) {
        int64_t e1 = in_extent(P->n[a1], p1, h);
        if (p1 > 1 && in_extent(P->n[a1], p1 - 1, h) == e1) continue; /* same shape, more pieces */
        int64_t cap0 = values / (rest * e1);
        int64_t p0 = fewest(P->n[a0], h, cap0);
        if (!p0) continue;
        double vol = (double)p0 * p1 * in_extent(P->n[a0], p0, h) * e1;
        if (best < 0 || vol < best) {
            best = vol;
            P->split[a0] = (int)p0;
            P->split[a1] = (int)p1;
        }
    }
    return best < 0 ? BSR_ERR_NOMEM : BSR_OK;
}

bsr_status pyr_plan_build(pyr_plan *P, int dim, const int64_t *n, bsr_precision prec,
                          const bsr_pyr_opts *o, int height, size_t budget)
{
    memset(P, 0, sizeof *P);
    P->dim = dim;
    for (int a = 0; a < 3; a++) P->n[a] = a < dim ? n[a] : 1;
    P->problem = o->problem;
    P->vsize = bsr_precision_size(prec);
    P->bufs = o->problem == BSR_PYR_JACOBI ? 3 : 2;
    P->nslots = o->nslots > 0 ? o->nslots : 3;
    int K = o->steps;
    if (o->problem == BSR_PYR_JACOBI) height = o->check;
    else if (o->algo == BSR_PYR_TRIVIAL) height = 1;
    else if (o->algo == BSR_PYR_INCORE) height = K > 0 ? K : 1;
    if (height < 1) return bsr_error(BSR_ERR_ARG, "pyramid plan: height %d < 1", height);
    P->height = height;
    for (int a = 0; a < 3; a++) P->split[a] = 1;
    int explicit_split = o->split[0] || o->split[1] || o->split[2];
    if (o->algo == BSR_PYR_INCORE) {
        P->nslots = 1;
    } else if (explicit_split) {
        for (int a = 0; a < dim; a++) P->split[a] = o->split[a] ? o->split[a] : 1;
    } else {
        int64_t values = (int64_t)(budget / ((size_t)P->nslots * P->bufs * P->vsize));
        if (choose_split(P, o->decomp, values, height) != BSR_OK)
            return bsr_error(BSR_ERR_NOMEM,
                             "pyramid: device budget of %zu bytes is too small for one subdomain "
                             "with its halo of %d points per side (%d slots x %d buffers, %s, %zu-byte values)",
                             budget, height, P->nslots, P->bufs,
                             o->decomp == BSR_PYR_TILES ? "tiles" : "strips", P->vsize);
    }
    P->nsub = P->split[0] * P->split[1] * P->split[2];
    P->npass = pyr_pass_count(K, height);
    P->pass_h = bsr_malloc(sizeof(int) * (P->npass + 1), "pyramid pass heights");
    if (!P->pass_h) return BSR_ERR_NOMEM;
    for (int p = 0; p < P->npass; p++) P->pass_h[p] = p < P->npass - 1 ? height : K - height * (P->npass - 1);
    for (int a = 0; a < 3; a++) {
        P->cut[a] = bsr_malloc(sizeof(int64_t) * (P->split[a] + 1), "pyramid cuts");
        if (!P->cut[a]) { pyr_plan_free(P); return BSR_ERR_NOMEM; }
        for (int i = 0; i <= P->split[a]; i++) P->cut[a][i] = P->n[a] * i / P->split[a];
    }
    /* Footprint and neighbours (full-height halo covers the shorter last pass). */
    P->nbr_ptr = bsr_malloc(sizeof(int) * (P->nsub + 1), "pyramid neighbours");
    if (!P->nbr_ptr) { pyr_plan_free(P); return BSR_ERR_NOMEM; }
    size_t cap = 16, nn = 0;
    P->nbr = bsr_malloc(sizeof(int) * cap, "pyramid neighbours");
    if (!P->nbr) { pyr_plan_free(P); return BSR_ERR_NOMEM; }
    P->nbr_ptr[0] = 0;
    for (int j = 0; j < P->nsub; j++) {
        pyr_box in;
        int c[3], lo[3], hi[3];
        pyr_in_box(P, j, height, &in);
        if (pyr_box_vol(&in) > P->max_in_vol) P->max_in_vol = pyr_box_vol(&in);
        sub_coords(P, j, c);
        for (int a = 0; a < 3; a++) {
            lo[a] = hi[a] = c[a];
            while (lo[a] > 0 && P->cut[a][lo[a]] > in.lo[a]) lo[a]--;
            while (hi[a] < P->split[a] - 1 && P->cut[a][hi[a] + 1] < in.hi[a]) hi[a]++;
        }
        for (int z = lo[2]; z <= hi[2]; z++)
            for (int y = lo[1]; y <= hi[1]; y++)
                for (int x = lo[0]; x <= hi[0]; x++) {
                    if (nn == cap) {
                        int *t = realloc(P->nbr, sizeof(int) * (cap *= 2));
                        if (!t) { pyr_plan_free(P); return bsr_error(BSR_ERR_NOMEM, "pyramid neighbours"); }
                        P->nbr = t;
                    }
                    P->nbr[nn++] = x + P->split[0] * (y + P->split[1] * z);
                }
        P->nbr_ptr[j + 1] = (int)nn;
    }
    P->slot_bytes = (size_t)P->bufs * (size_t)P->max_in_vol * P->vsize;
    if (o->algo != BSR_PYR_INCORE && (size_t)P->nslots * P->slot_bytes > budget) {
        size_t need = (size_t)P->nslots * P->slot_bytes;
        int sp[3] = {P->split[0], P->split[1], P->split[2]}, ns = P->nslots;
        pyr_plan_free(P);
        return bsr_error(BSR_ERR_NOMEM,
                         "pyramid: split %dx%dx%d with halo %d needs %zu device bytes (%d slots), "
                         "budget is %zu: too small for one subdomain with its halo",
                         sp[0], sp[1], sp[2], height, need, ns, budget);
    }
    return BSR_OK;
}

void pyr_plan_free(pyr_plan *P)
{
    free(P->pass_h);
    for (int a = 0; a < 3; a++) free(P->cut[a]);
    free(P->nbr_ptr);
    free(P->nbr);
    memset(P, 0, sizeof *P);
}
