/* SPDX-License-Identifier: BSD-3-Clause */
/* CPU side of the pyramid solver: the reference step (OpenMP), box copies,
 * and a host executor of the same subdomain plans the GPU runs. */
#include "pyramid_impl.h"
#include <math.h>
#include <omp.h>
#include <string.h>

/* One step over region reg of a box with extents ext.  The expression and
 * its evaluation order are the contract shared with the CUDA kernels:
 *   s = (uW + uE) [+ (uS + uN)] [+ (uD + uU)]
 *   heat:   c + r * (s - (2 dim) * c)      Jacobi: (s + g) / (2 dim)
 * each operation rounded on its own (ISO C: no FMA contraction). */
#define PYR_STEP(T, SUF, FABS)                                                                     \
    static void step_##SUF(bsr_pyr_problem pb, int dim, const int64_t *ext, const pyr_box *reg,   \
                           T *dst, const T *src, const T *g, T r, double *diff)                    \
    {                                                                                              \
        const int64_t sy = ext[0], sz = ext[0] * ext[1];                                           \
        const T c2d = (T)(2 * dim);                                                                \
        double md = 0;                                                                             \
        _Pragma("omp parallel for collapse(2) reduction(max : md) schedule(static) if (bsr_par_worth(pyr_box_vol(reg))) num_threads(bsr_team_size())") \
        for (int64_t k = reg->lo[2]; k < reg->hi[2]; k++)                                          \
            for (int64_t j = reg->lo[1]; j < reg->hi[1]; j++) {                                    \
                const int64_t row = sy * j + sz * k;                                               \
                for (int64_t i = reg->lo[0]; i < reg->hi[0]; i++) {                                \
                    const int64_t p = row + i;                                                     \
                    const T c = src[p];                                                            \
                    T s = src[p - 1] + src[p + 1];                                                 \
                    if (dim > 1) s = s + (src[p - sy] + src[p + sy]);                              \
                    if (dim > 2) s = s + (src[p - sz] + src[p + sz]);                              \
                    T v = pb == BSR_PYR_HEAT ? c + r * (s - c2d * c) : (s + g[p]) / c2d;          \
                    dst[p] = v;                                                                    \
                    double d = (double)FABS(v - c);                                                \
                    if (!(d <= md)) md = d; /* NaN wins */                                         \
                }                                                                                  \
            }                                                                                      \
        if (diff) *diff = md;                                                                      \
    }
PYR_STEP(double, d, fabs)
PYR_STEP(float, f, fabsf)

void pyr_step_cpu(bsr_precision p, bsr_pyr_problem pb, int dim, const int64_t *ext,
                  const pyr_box *reg, void *dst, const void *src, const void *g, double r,
                  double *diff)
{
    if (p == BSR_DOUBLE) step_d(pb, dim, ext, reg, dst, src, g, r, diff);
    else step_f(pb, dim, ext, reg, dst, src, g, (float)r, diff);
}

void pyr_box_get(size_t vs, const int64_t *fext, const void *field, const pyr_box *b, void *buf)
{
    const int64_t bx = b->hi[0] - b->lo[0], by = b->hi[1] - b->lo[1];
    char *o = buf;
    for (int64_t k = b->lo[2]; k < b->hi[2]; k++)
        for (int64_t j = b->lo[1]; j < b->hi[1]; j++) {
            const char *src = (const char *)field + vs * (size_t)(b->lo[0] + fext[0] * (j + fext[1] * k));
            memcpy(o + vs * (size_t)(bx * ((j - b->lo[1]) + by * (k - b->lo[2]))), src, vs * (size_t)bx);
        }
}

void pyr_box_put(size_t vs, const int64_t *fext, void *field, const pyr_box *b,
                 const int64_t *bext, const int64_t *boff, const void *buf)
{
    const int64_t bx = b->hi[0] - b->lo[0];
    for (int64_t k = b->lo[2]; k < b->hi[2]; k++)
        for (int64_t j = b->lo[1]; j < b->hi[1]; j++) {
            char *dst = (char *)field + vs * (size_t)(b->lo[0] + fext[0] * (j + fext[1] * k));
            int64_t lj = j - b->lo[1] + boff[1], lk = k - b->lo[2] + boff[2];
            memcpy(dst, (const char *)buf + vs * (size_t)(boff[0] + bext[0] * (lj + bext[1] * lk)),
                   vs * (size_t)bx);
        }
}

/* Interior point count. */
static double interior(const bsr_grid *G)
{
    double v = 1;
    for (int a = 0; a < G->dim; a++) v *= (double)(G->n[a] - 2);
    return v;
}

/* Whole-grid sweeps on the host, ping-ponging data[cur] and its partner. */
static bsr_status run_incore(bsr_grid *G, const bsr_pyr_opts *o, bsr_pyr_info *info)
{
    void *alt = pyr_grid_alt(G);
    if (!alt) return BSR_ERR_NOMEM;
    memcpy(alt, G->data[G->cur], (size_t)bsr_grid_points(G) * bsr_precision_size(G->prec));
    pyr_box reg;
    for (int a = 0; a < 3; a++) {
        reg.lo[a] = a < G->dim ? 1 : 0;
        reg.hi[a] = a < G->dim ? G->n[a] - 1 : 1;
    }
    double diff = 0;
    int it = 0;
    while (it < o->steps) {
        it++;
        int chk = o->problem == BSR_PYR_JACOBI && (it % o->check == 0 || it == o->steps);
        pyr_step_cpu(G->prec, o->problem, G->dim, G->n, &reg, G->data[1 - G->cur], G->data[G->cur],
                     G->rhs, o->r, chk ? &diff : NULL);
        G->cur = 1 - G->cur;
        info->computed += interior(G);
        if (chk && (diff != diff)) return bsr_error(BSR_ERR_VALUE, "pyramid CPU Jacobi: NaN at sweep %d", it);
        if (chk && diff < o->eps) break;
    }
    bsr_pyr_info_incore(info, it, diff);
    return BSR_OK;
}

/* The GPU's plan executed with host buffers, one subdomain at a time. */
static bsr_status run_plan(bsr_grid *G, const bsr_pyr_opts *o, bsr_pyr_info *info)
{
    pyr_plan P;
    size_t budget = o->device_mem ? o->device_mem : (size_t)1 << 62;
    int h = o->height;
    if (h < 1 && o->algo == BSR_PYR_PYRAMID && o->problem == BSR_PYR_HEAT)
        return bsr_error(BSR_ERR_ARG, "bsr_pyr_run_cpu: height 0 (auto) needs the GPU model; give a height");
    BSR_TRY(pyr_plan_build(&P, G->dim, G->n, G->prec, o, h, budget));
    if (!pyr_grid_alt(G)) { pyr_plan_free(&P); return BSR_ERR_NOMEM; }
    size_t vs = P.vsize;
    char *buf = bsr_malloc(P.slot_bytes, "pyramid CPU slot");
    if (!buf) { pyr_plan_free(&P); return BSR_ERR_NOMEM; }
    char *A = buf, *B = buf + vs * (size_t)P.max_in_vol, *Gb = B + vs * (size_t)P.max_in_vol;
    double diff = 0;
    int it = 0;
    for (int p = 0; p < P.npass; p++) {
        int hp = P.pass_h[p];
        const void *src = G->data[G->cur];
        void *dst = G->data[1 - G->cur];
        double pdiff = 0;
        for (int j = 0; j < P.nsub; j++) {
            pyr_box in, out, reg;
            pyr_in_box(&P, j, hp, &in);
            pyr_out_box(&P, j, &out);
            int64_t ext[3], off[3];
            for (int a = 0; a < 3; a++) { ext[a] = in.hi[a] - in.lo[a]; off[a] = out.lo[a] - in.lo[a]; }
            int64_t vol = pyr_box_vol(&in);
            pyr_box_get(vs, G->n, src, &in, A);
            if (P.problem == BSR_PYR_JACOBI) pyr_box_get(vs, G->n, G->rhs, &in, Gb);
            memcpy(B, A, vs * (size_t)vol);
            info->h2d_bytes += (double)(vs * (size_t)vol) * (P.problem == BSR_PYR_JACOBI ? 2 : 1);
            char *s = A, *d = B;
            for (int t = 1; t <= hp; t++) {
                if (pyr_step_region(&P, &in, t, &reg)) {
                    for (int a = 0; a < 3; a++) { reg.lo[a] -= in.lo[a]; reg.hi[a] -= in.lo[a]; }
                    double sd = 0;
                    pyr_step_cpu(G->prec, P.problem, G->dim, ext, &reg, d, s, Gb, o->r, t == hp ? &sd : NULL);
                    info->computed += (double)pyr_box_vol(&reg);
                    if (!(sd <= pdiff)) pdiff = sd;
                }
                char *x = s; s = d; d = x;
            }
            pyr_box_put(vs, G->n, dst, &out, ext, off, s);
            info->d2h_bytes += (double)(vs * (size_t)pyr_box_vol(&out));
        }
        G->cur = 1 - G->cur;
        it += hp;
        diff = pdiff;
        if (P.problem == BSR_PYR_JACOBI) {
            if (diff != diff) { free(buf); pyr_plan_free(&P); return bsr_error(BSR_ERR_VALUE, "pyramid CPU Jacobi: NaN at sweep %d", it); }
            if (diff < o->eps) { info->passes = p + 1; break; }
        }
        info->passes = p + 1;
    }
    info->iters = it;
    info->diff = diff;
    info->height = P.height;
    info->nsub = P.nsub;
    info->decomp = o->decomp;
    for (int a = 0; a < 3; a++) info->split[a] = P.split[a];
    info->device_bytes = (size_t)P.nslots * P.slot_bytes;
    free(buf);
    pyr_plan_free(&P);
    return BSR_OK;
}

bsr_status bsr_pyr_run_cpu(bsr_grid *G, const bsr_pyr_opts *o, bsr_pyr_info *info)
{
    bsr_pyr_info tmp;
    if (!info) info = &tmp;
    memset(info, 0, sizeof *info);
    BSR_TRY(pyr_check("bsr_pyr_run_cpu", G, o));
    double t0 = bsr_now();
    bsr_status s = o->algo == BSR_PYR_INCORE ? run_incore(G, o, info) : run_plan(G, o, info);
    info->seconds = bsr_now() - t0;
    info->updates = interior(G) * info->iters;
    return s;
}
