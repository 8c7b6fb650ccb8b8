/* SPDX-License-Identifier: BSD-3-Clause */
/* Duration model of the pyramid solver: the original closed formulas, a
 * pipelined prediction from exact per-subdomain volumes, and the search for
 * the decomposition and height that minimise it. */
#include "pyramid_impl.h"
#include <math.h>
#include <string.h>

double bsr_pyr_model_strips(double K, double Ni, double Nj, double R, double n, double tau_c,
                            double tau_a)
{
    if (R <= 2 * n || n <= 0) return INFINITY;
    return K * (Ni - 1) * Nj * (R - n) / (R - 2 * n) * (2 * tau_c / n + tau_a);
}

double bsr_pyr_model_tiles(double K, double Ni, double Nj, double R, double Q, double n,
                           double tau_c, double tau_a)
{
    if (R <= 2 * n || Q <= 2 * n || n <= 0) return INFINITY;
    return K * (Ni - 1) * (Nj - 1) * (R - n) * (Q - n) / ((R - 2 * n) * (Q - 2 * n)) *
           (2 * tau_c / n + tau_a);
}

/* Volumes of one subdomain in a pass of height h. */
static void sub_volume(const pyr_plan *P, int j, int h, double *in, double *out, double *comp)
{
    pyr_box ib, ob, reg;
    pyr_in_box(P, j, h, &ib);
    pyr_out_box(P, j, &ob);
    *in = (double)pyr_box_vol(&ib);
    *out = (double)pyr_box_vol(&ob);
    *comp = 0;
    for (int t = 1; t <= h; t++)
        if (pyr_step_region(P, &ib, t, &reg)) *comp += (double)pyr_box_vol(&reg);
}

void pyr_plan_volume(const pyr_plan *P, pyr_volume *v)
{
    memset(v, 0, sizeof *v);
    for (int p = 0; p < P->npass; p++) {
        /* passes of equal height have equal volumes: count each height once */
        if (p > 0 && P->pass_h[p] == P->pass_h[p - 1]) {
            v->in += v->in / p; v->out += v->out / p; v->comp += v->comp / p;
            v->launches += v->launches / p; v->copies += v->copies / p;
            continue;
        }
        for (int j = 0; j < P->nsub; j++) {
            double in, out, comp;
            sub_volume(P, j, P->pass_h[p], &in, &out, &comp);
            v->in += in; v->out += out; v->comp += comp;
            v->launches += P->pass_h[p];
            v->copies += 1;
        }
    }
}

/* Stage times of subdomain j in a pass of height h. */
static void stage_times(const pyr_plan *P, const bsr_pyr_model *M, int host_resident, int j,
                        int h, double *tin, double *tc, double *tout)
{
    double in, out, comp;
    sub_volume(P, j, h, &in, &out, &comp);
    pyr_box ob;
    pyr_out_box(P, j, &ob);
    /* rows narrower than the grid travel as strided 2D copies */
    int strided = P->dim > 1 && ob.hi[0] - ob.lo[0] < P->n[0];
    double th = strided && M->tau_h2d_2d > 0 ? M->tau_h2d_2d : M->tau_h2d;
    double td = strided && M->tau_d2h_2d > 0 ? M->tau_d2h_2d : M->tau_d2h;
    /* with several slots the two directions overlap and share the link */
    double dup = P->nslots > 1 && M->duplex > 1 ? M->duplex : 1;
    double vs = (double)P->vsize;
    double d2d = M->d2d_bw > 0 ? vs / M->d2d_bw : 0;
    double rin = P->problem == BSR_PYR_JACOBI ? 2 : 1; /* rhs box travels too */
    *tin = rin * in * (host_resident ? th * dup : d2d);
    *tout = out * (host_resident ? td * dup : d2d);
    *tc = comp * M->tau_a + h * M->t_launch + in * d2d;
}

/* Simulate the stream pipeline: item q (pass p, subdomain j) runs on slot
 * q % nslots; its copy-in waits for its slot's previous copy-out and for the
 * previous pass's copy-out of every neighbour; each engine (h2d, compute,
 * d2h) serves items in issue order.  Jacobi passes end with a barrier (the
 * convergence test). */
double pyr_plan_predict(const pyr_plan *P, const bsr_pyr_model *M, int host_resident)
{
    const int ns = P->nslots, S = P->nsub;
    double *done = calloc((size_t)2 * S + ns, sizeof(double));
    if (!done) return NAN;
    double *slot = done + 2 * S;
    double e_in = 0, e_c = 0, e_out = 0;
    double *ts = malloc(sizeof(double) * 3 * (size_t)S);
    if (!ts) { free(done); return NAN; }
    long q = 0;
    int h_prev = -1;
    for (int p = 0; p < P->npass; p++) {
        int h = P->pass_h[p];
        if (h != h_prev)
            for (int j = 0; j < S; j++) stage_times(P, M, host_resident, j, h, ts + 3 * j, ts + 3 * j + 1, ts + 3 * j + 2);
        h_prev = h;
        double *prev = done + (size_t)((p + 1) & 1) * S, *cur = done + (size_t)(p & 1) * S;
        for (int j = 0; j < S; j++, q++) {
            double start = e_in > slot[q % ns] ? e_in : slot[q % ns];
            if (p > 0)
                for (int k = P->nbr_ptr[j]; k < P->nbr_ptr[j + 1]; k++)
                    if (prev[P->nbr[k]] > start) start = prev[P->nbr[k]];
            e_in = start + ts[3 * j];
            e_c = (e_c > e_in ? e_c : e_in) + ts[3 * j + 1];
            e_out = (e_out > e_c ? e_out : e_c) + ts[3 * j + 2];
            cur[j] = slot[q % ns] = e_out;
        }
        if (P->problem == BSR_PYR_JACOBI) e_in = e_c = e_out;
    }
    free(ts);
    free(done);
    return e_out;
}

/* Model time of an in-core run: one launch per step over the interior. */
static double incore_time(const bsr_grid *G, const bsr_pyr_opts *o, const bsr_pyr_model *M)
{
    double interior = 1;
    for (int a = 0; a < G->dim; a++) interior *= (double)(G->n[a] - 2);
    return o->steps * (interior * M->tau_a + M->t_launch);
}

bsr_status bsr_pyr_predict(const bsr_grid *G, const bsr_pyr_opts *o, const bsr_pyr_model *M,
                           double *seconds)
{
    BSR_CHECK_ARG(G && o && M && seconds, "bsr_pyr_predict: NULL argument");
    *seconds = 0;
    if (o->algo == BSR_PYR_INCORE) { *seconds = incore_time(G, o, M); return BSR_OK; }
    if (o->height < 1 && o->algo != BSR_PYR_TRIVIAL && o->problem != BSR_PYR_JACOBI)
        return bsr_error(BSR_ERR_ARG, "bsr_pyr_predict: height must be >= 1 (choose it first)");
    pyr_plan P;
    size_t budget = o->device_mem ? o->device_mem : (size_t)1 << 62;
    BSR_TRY(pyr_plan_build(&P, G->dim, G->n, G->prec, o, o->height, budget));
    *seconds = pyr_plan_predict(&P, M, o->algo != BSR_PYR_INCORE_BLOCKED);
    pyr_plan_free(&P);
    return BSR_OK;
}

bsr_status bsr_pyr_choose(const bsr_grid *G, bsr_pyr_opts *o, const bsr_pyr_model *M,
                          int max_height, int any_decomp, double *seconds)
{
    BSR_CHECK_ARG(G && o && M, "bsr_pyr_choose: NULL argument");
    BSR_CHECK_ARG(o->device_mem > 0, "bsr_pyr_choose: needs a device budget");
    BSR_CHECK_ARG(max_height >= 1, "bsr_pyr_choose: max_height %d < 1", max_height);
    double best = -1;
    bsr_pyr_opts b = *o, t = *o;
    int ndec = G->dim >= 2 ? 2 : 1;
    int explicit_split = o->split[0] || o->split[1] || o->split[2];
    for (int d = 0; d < ndec; d++) {
        if ((explicit_split || !any_decomp) && d != (int)o->decomp) continue;
        t.decomp = (bsr_pyr_decomp)d;
        int h0 = 1, h1 = max_height;
        if (o->problem == BSR_PYR_JACOBI) h0 = h1 = o->check;
        if (o->algo == BSR_PYR_TRIVIAL) h0 = h1 = 1;
        for (int h = h0; h <= h1; h++) {
            if (o->steps > 0 && h > o->steps) break;
            t.height = h;
            pyr_plan P;
            size_t budget = o->device_mem;
            if (pyr_plan_build(&P, G->dim, G->n, G->prec, &t, h, budget) != BSR_OK) continue;
            double s = pyr_plan_predict(&P, M, o->algo != BSR_PYR_INCORE_BLOCKED);
            if (s == s && (best < 0 || s < best)) {
                best = s;
                b = t;
                for (int a = 0; a < 3; a++) b.split[a] = explicit_split ? o->split[a] : P.split[a];
            }
            pyr_plan_free(&P);
        }
    }
    bsr_clear_error();
    if (best < 0)
        return bsr_error(BSR_ERR_NOMEM,
                         "bsr_pyr_choose: device budget of %zu bytes is too small for one subdomain "
                         "with its halo at any height 1..%d",
                         o->device_mem, max_height);
    *o = b;
    if (seconds) *seconds = best;
    return BSR_OK;
}
