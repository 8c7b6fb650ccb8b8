/* SPDX-License-Identifier: BSD-3-Clause */
/* Host side of the GPU pyramid solver: pinned grids, the stream/event
 * pipeline that runs a subdomain plan (trivial, pyramid, in-core blocked),
 * the plain in-core run, calibration of the duration model, and the cuBLAS
 * long-vector variant.  Every CUDA call is checked: allocation failures give
 * BSR_ERR_NOMEM, anything else BSR_ERR_CUDA, naming the call and the place. */
extern "C" {
#include "pyramid_impl.h"
}
#include "pyramid_kern.h"
#include "cuda_alloc.h"
#include <cublas_v2.h>
#include <math.h>
#include <string.h>
#include <time.h>
#include <vector>

#define CK(call)                                                                                 \
    do {                                                                                         \
        cudaError_t e_ = (call);                                                                 \
        if (e_ != cudaSuccess) {                                                                 \
            st = bsr_error(e_ == cudaErrorMemoryAllocation ? BSR_ERR_NOMEM : BSR_ERR_CUDA,       \
                           "%s:%d: %s: %s", __func__, __LINE__, #call, cudaGetErrorString(e_)); \
            goto done;                                                                           \
        }                                                                                        \
    } while (0)

extern "C" void *bsr_pyr_host_alloc(size_t bytes, int *pinned)
{
    void *p = NULL;
    if (*pinned && bsr_cu_host_alloc(&p, bytes ? bytes : 1, cudaHostAllocPortable) == cudaSuccess) return p;
    cudaGetLastError();
    *pinned = 0; /* no device, or no page-locked memory left: pageable works, slower */
    return malloc(bytes ? bytes : 1);
}

extern "C" void bsr_pyr_host_free(void *p, int pinned)
{
    if (!p) return;
    if (pinned) bsr_cu_free_host(p);
    else free(p);
}

/* Device budget: the given bytes, or the free memory less a 256 MiB margin. */
static bsr_status budget_of(size_t want, size_t *out)
{
    size_t fr = 0, tot = 0;
    cudaError_t e = cudaMemGetInfo(&fr, &tot);
    if (e != cudaSuccess)
        return bsr_error(e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver ? BSR_ERR_NODEVICE : BSR_ERR_CUDA,
                         "pyramid: cudaMemGetInfo: %s", cudaGetErrorString(e));
    size_t avail = fr > ((size_t)256 << 20) ? fr - ((size_t)256 << 20) : 0;
    *out = want ? (want < avail ? want : avail) : avail;
    return BSR_OK;
}

/* Copy a box of extents be from src (extents se, at so) to dst (extents de,
 * at dof): one copy when whole planes are contiguous in both, else a 2D copy
 * per plane. */
static cudaError_t copy_box(void *dst, const int64_t *de, const int64_t *dof, const void *src,
                            const int64_t *se, const int64_t *so, const int64_t *be, size_t vs,
                            cudaStream_t s)
{
    char *d = (char *)dst;
    const char *c = (const char *)src;
    if (be[0] == de[0] && be[0] == se[0] && be[1] == de[1] && be[1] == se[1])
        return cudaMemcpyAsync(d + vs * (size_t)(de[0] * de[1] * dof[2]), c + vs * (size_t)(se[0] * se[1] * so[2]),
                               vs * (size_t)(be[0] * be[1] * be[2]), cudaMemcpyDefault, s);
    for (int64_t z = 0; z < be[2]; z++) {
        cudaError_t e = cudaMemcpy2DAsync(
            d + vs * (size_t)(dof[0] + de[0] * (dof[1] + de[1] * (dof[2] + z))), vs * (size_t)de[0],
            c + vs * (size_t)(so[0] + se[0] * (so[1] + se[1] * (so[2] + z))), vs * (size_t)se[0],
            vs * (size_t)be[0], (size_t)be[1], cudaMemcpyDefault, s);
        if (e != cudaSuccess) return e;
    }
    return cudaSuccess;
}

static double interior(const bsr_grid *G)
{
    double v = 1;
    for (int a = 0; a < G->dim; a++) v *= (double)(G->n[a] - 2);
    return v;
}

static void region_of(const pyr_box *reg, const pyr_box *box, const int64_t *ext, pyr_kregion *R)
{
    for (int a = 0; a < 3; a++) {
        R->lo[a] = reg->lo[a] - box->lo[a];
        R->e[a] = reg->hi[a] - reg->lo[a];
    }
    R->sy = ext[0];
    R->sz = ext[0] * ext[1];
}

static double ull_to_diff(unsigned long long b)
{
    double d;
    memcpy(&d, &b, sizeof d);
    return d;
}

/* Plain in-core run: the grid (and rhs) on the device, one launch per step. */
static bsr_status run_incore(bsr_grid *G, const bsr_pyr_opts *o, size_t budget, bsr_pyr_info *info)
{
    bsr_status st = BSR_OK;
    const size_t vs = bsr_precision_size(G->prec), bytes = vs * (size_t)bsr_grid_points(G);
    const int jac = o->problem == BSR_PYR_JACOBI;
    char *d[2] = {NULL, NULL}, *g = NULL;
    unsigned long long *dd = NULL, hd = 0;
    cudaEvent_t e0 = NULL, e1 = NULL;
    pyr_kregion R;
    int it = 0;
    double diff = 0;
    float ms = 0;
    if ((size_t)(2 + jac) * bytes > budget)
        return bsr_error(BSR_ERR_NOMEM, "pyramid in-core: the grid needs %zu device bytes, budget is %zu",
                         (size_t)(2 + jac) * bytes, budget);
    CK(bsr_cu_malloc(&d[0], bytes));
    CK(bsr_cu_malloc(&d[1], bytes));
    if (jac) CK(bsr_cu_malloc(&g, bytes));
    CK(bsr_cu_malloc(&dd, sizeof *dd));
    CK(cudaMemcpy(d[0], G->data[G->cur], bytes, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(d[1], d[0], bytes, cudaMemcpyDeviceToDevice));
    if (jac) CK(cudaMemcpy(g, G->rhs, bytes, cudaMemcpyHostToDevice));
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    for (int a = 0; a < 3; a++) {
        R.lo[a] = a < G->dim ? 1 : 0;
        R.e[a] = a < G->dim ? G->n[a] - 2 : 1;
    }
    R.sy = G->n[0];
    R.sz = G->n[0] * G->n[1];
    CK(cudaDeviceSynchronize());
    CK(cudaEventRecord(e0, 0));
    while (it < o->steps) {
        it++;
        int chk = jac && (it % o->check == 0 || it == o->steps);
        if (chk) CK(cudaMemsetAsync(dd, 0, sizeof *dd, 0));
        CK(pyr_launch_step(G->prec == BSR_DOUBLE, G->dim, jac, d[it & 1], d[(it - 1) & 1], g, &R, o->r,
                           chk ? dd : NULL, 0));
        if (chk) {
            CK(cudaMemcpy(&hd, dd, sizeof hd, cudaMemcpyDeviceToHost));
            diff = ull_to_diff(hd);
            if (diff != diff) { st = bsr_error(BSR_ERR_VALUE, "pyramid GPU Jacobi: NaN at sweep %d", it); goto done; }
            if (diff < o->eps) break;
        }
    }
    CK(cudaEventRecord(e1, 0));
    CK(cudaEventSynchronize(e1));
    CK(cudaEventElapsedTime(&ms, e0, e1));
    CK(cudaMemcpy(G->data[G->cur], d[it & 1], bytes, cudaMemcpyDeviceToHost));
    info->seconds = 1e-3 * ms;
    bsr_pyr_info_incore(info, it, diff);
    info->computed = interior(G) * it;
    info->device_bytes = (size_t)(2 + jac) * bytes;
done:
    bsr_cu_free(d[0]); bsr_cu_free(d[1]); bsr_cu_free(g); bsr_cu_free(dd);
    if (e0) cudaEventDestroy(e0);
    if (e1) cudaEventDestroy(e1);
    return st;
}

/* Run a plan through nslots streams.  host_resident: the two field buffers
 * are the pinned host grids (out-of-core); otherwise device copies of them
 * (in-core with the same temporal blocking). */
static bsr_status run_plan(bsr_grid *G, const bsr_pyr_opts *o, const pyr_plan *P, int host_resident,
                           bsr_pyr_info *info)
{
    bsr_status st = BSR_OK;
    const size_t vs = P->vsize, bytes = vs * (size_t)bsr_grid_points(G);
    const int jac = P->problem == BSR_PYR_JACOBI, ns = P->nslots, S = P->nsub;
    const int dbl = G->prec == BSR_DOUBLE;
    std::vector<cudaStream_t> sm(ns, (cudaStream_t)0);
    std::vector<char *> slot(ns, (char *)0);
    std::vector<cudaEvent_t> ev(2 * (size_t)S, (cudaEvent_t)0);
    std::vector<unsigned long long> hd(S);
    unsigned long long *dd = NULL;
    char *f[2] = {NULL, NULL}, *rhs = NULL, *dgrid[3] = {NULL, NULL, NULL};
    double t0 = 0, diff = 0;
    int it = 0, cur = 0;
    if (host_resident) {
        f[0] = (char *)G->data[G->cur];
        f[1] = (char *)pyr_grid_alt(G);
        if (!f[1]) return BSR_ERR_NOMEM;
        rhs = (char *)G->rhs;
    } else {
        for (int k = 0; k < 2 + jac; k++) CK(bsr_cu_malloc(&dgrid[k], bytes));
        CK(cudaMemcpy(dgrid[0], G->data[G->cur], bytes, cudaMemcpyHostToDevice));
        if (jac) CK(cudaMemcpy(dgrid[2], G->rhs, bytes, cudaMemcpyHostToDevice));
        f[0] = dgrid[0];
        f[1] = dgrid[1];
        rhs = dgrid[2];
    }
    for (int s = 0; s < ns; s++) {
        CK(cudaStreamCreateWithFlags(&sm[s], cudaStreamNonBlocking));
        CK(bsr_cu_malloc(&slot[s], P->slot_bytes));
    }
    for (size_t k = 0; k < ev.size(); k++) CK(cudaEventCreateWithFlags(&ev[k], cudaEventDisableTiming));
    if (jac) CK(bsr_cu_malloc(&dd, sizeof *dd * (size_t)S));
    CK(cudaDeviceSynchronize());
    t0 = bsr_now();
    {
        long q = 0;
        for (int p = 0; p < P->npass; p++) {
            const int h = P->pass_h[p];
            const char *src = f[cur];
            char *dst = f[1 - cur];
            for (int j = 0; j < S; j++, q++) {
                const int s = (int)(q % ns);
                cudaStream_t sq = sm[s];
                char *A = slot[s], *B = A + vs * (size_t)P->max_in_vol, *Gb = B + vs * (size_t)P->max_in_vol;
                pyr_box in, out, reg;
                int64_t ext[3], off[3], oe[3], zero[3] = {0, 0, 0};
                pyr_in_box(P, j, h, &in);
                pyr_out_box(P, j, &out);
                for (int a = 0; a < 3; a++) {
                    ext[a] = in.hi[a] - in.lo[a];
                    off[a] = out.lo[a] - in.lo[a];
                    oe[a] = out.hi[a] - out.lo[a];
                }
                if (p > 0)
                    for (int k = P->nbr_ptr[j]; k < P->nbr_ptr[j + 1]; k++)
                        CK(cudaStreamWaitEvent(sq, ev[(size_t)((p - 1) & 1) * S + P->nbr[k]], 0));
                CK(copy_box(A, ext, zero, src, G->n, in.lo, ext, vs, sq));
                if (jac) CK(copy_box(Gb, ext, zero, rhs, G->n, in.lo, ext, vs, sq));
                CK(cudaMemcpyAsync(B, A, vs * (size_t)pyr_box_vol(&in), cudaMemcpyDeviceToDevice, sq));
                if (jac) CK(cudaMemsetAsync(dd + j, 0, sizeof *dd, sq));
                char *a = A, *b = B;
                for (int t = 1; t <= h; t++) {
                    if (pyr_step_region(P, &in, t, &reg)) {
                        pyr_kregion R;
                        region_of(&reg, &in, ext, &R);
                        CK(pyr_launch_step(dbl, G->dim, jac, b, a, Gb, &R, o->r, jac && t == h ? dd + j : NULL, sq));
                        info->computed += (double)pyr_box_vol(&reg);
                    }
                    char *x = a; a = b; b = x;
                }
                CK(copy_box(dst, G->n, out.lo, a, ext, off, oe, vs, sq));
                CK(cudaEventRecord(ev[(size_t)(p & 1) * S + j], sq));
                info->h2d_bytes += (double)(vs * (size_t)pyr_box_vol(&in)) * (1 + jac);
                info->d2h_bytes += (double)(vs * (size_t)pyr_box_vol(&out));
            }
            cur = 1 - cur;
            it += h;
            info->passes = p + 1;
            if (jac) {
                CK(cudaDeviceSynchronize());
                CK(cudaMemcpy(hd.data(), dd, sizeof *dd * (size_t)S, cudaMemcpyDeviceToHost));
                diff = 0;
                for (int j = 0; j < S; j++) {
                    double x = ull_to_diff(hd[j]);
                    if (!(x <= diff)) diff = x;
                }
                if (diff != diff) { st = bsr_error(BSR_ERR_VALUE, "pyramid GPU Jacobi: NaN at sweep %d", it); goto done; }
                if (diff < o->eps) break;
            }
        }
    }
    CK(cudaDeviceSynchronize());
    info->seconds = bsr_now() - t0;
    if (host_resident) {
        if (cur) G->cur = 1 - G->cur;
    } else {
        CK(cudaMemcpy(G->data[G->cur], f[cur], bytes, cudaMemcpyDeviceToHost));
        info->device_bytes = (size_t)(2 + jac) * bytes;
    }
    info->iters = it;
    info->diff = diff;
    info->device_bytes += (size_t)ns * P->slot_bytes;
done:
    if (st != BSR_OK) cudaDeviceSynchronize();
    for (size_t k = 0; k < ev.size(); k++)
        if (ev[k]) cudaEventDestroy(ev[k]);
    for (int s = 0; s < ns; s++) {
        if (sm[s]) cudaStreamDestroy(sm[s]);
        bsr_cu_free(slot[s]);
    }
    for (int k = 0; k < 3; k++) bsr_cu_free(dgrid[k]);
    bsr_cu_free(dd);
    return st;
}

extern "C" bsr_status bsr_pyr_run_gpu(bsr_grid *G, const bsr_pyr_opts *o, const bsr_pyr_model *M,
                                      bsr_pyr_info *info)
{
    bsr_pyr_info tmp;
    if (!info) info = &tmp;
    memset(info, 0, sizeof *info);
    BSR_TRY(pyr_check("bsr_pyr_run_gpu", G, o));
    size_t budget;
    BSR_TRY(budget_of(o->device_mem, &budget));
    bsr_pyr_opts w = *o;
    bsr_pyr_model cal;
    const size_t gbytes = bsr_precision_size(G->prec) * (size_t)bsr_grid_points(G);
    const int jac = o->problem == BSR_PYR_JACOBI;
    size_t plan_budget = budget;
    if (o->algo == BSR_PYR_INCORE_BLOCKED) {
        size_t need = (size_t)(2 + jac) * gbytes;
        if (need >= budget)
            return bsr_error(BSR_ERR_NOMEM, "pyramid in-core blocked: the grid needs %zu device bytes, budget is %zu",
                             need, budget);
        plan_budget = budget - need;
    }
    if (o->algo == BSR_PYR_INCORE) {
        if (M) bsr_pyr_predict(G, &w, M, &info->predicted);
        bsr_status s = run_incore(G, o, budget, info);
        info->updates = interior(G) * info->iters;
        return s;
    }
    if (w.height == 0 && w.algo != BSR_PYR_TRIVIAL && !jac) {
        /* auto height: the model decides, calibrated now if not given */
        if (!M) {
            BSR_TRY(bsr_pyr_calibrate(G->dim, G->prec, budget, &cal));
            M = &cal;
        }
        w.device_mem = plan_budget;
        BSR_TRY(bsr_pyr_choose(G, &w, M, 256, 0, NULL));
    }
    pyr_plan P;
    BSR_TRY(pyr_plan_build(&P, G->dim, G->n, G->prec, &w, w.height, plan_budget));
    if (M) info->predicted = pyr_plan_predict(&P, M, o->algo != BSR_PYR_INCORE_BLOCKED);
    info->decomp = w.decomp;
    info->height = P.height;
    info->nsub = P.nsub;
    for (int a = 0; a < 3; a++) info->split[a] = P.split[a];
    bsr_status s = run_plan(G, &w, &P, o->algo != BSR_PYR_INCORE_BLOCKED, info);
    info->updates = interior(G) * info->iters;
    pyr_plan_free(&P);
    return s;
}

/* Median of three event-timed repetitions of a copy. */
static bsr_status time_copy(void *dst, const void *src, size_t bytes, cudaMemcpyKind kind, double *sec)
{
    bsr_status st = BSR_OK;
    cudaEvent_t a = NULL, b = NULL;
    float ms[3] = {0, 0, 0};
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    CK(cudaMemcpy(dst, src, bytes, kind)); /* warm-up */
    for (int r = 0; r < 3; r++) {
        CK(cudaEventRecord(a, 0));
        CK(cudaMemcpyAsync(dst, src, bytes, kind, 0));
        CK(cudaEventRecord(b, 0));
        CK(cudaEventSynchronize(b));
        CK(cudaEventElapsedTime(&ms[r], a, b));
    }
    {
        float x = ms[0] < ms[1] ? ms[0] : ms[1], y = ms[0] < ms[1] ? ms[1] : ms[0];
        *sec = 1e-3 * (ms[2] < x ? x : ms[2] > y ? y : ms[2]);
    }
done:
    if (a) cudaEventDestroy(a);
    if (b) cudaEventDestroy(b);
    return st;
}

/* Median of three timed strided copies (rows of w bytes). */
static bsr_status time_copy2d(void *dst, size_t dp, const void *src, size_t sp, size_t w, size_t rows,
                              cudaMemcpyKind kind, double *sec)
{
    bsr_status st = BSR_OK;
    double t[3];
    for (int r = 0; r < 3; r++) {
        CK(cudaDeviceSynchronize());
        double t0 = bsr_now();
        CK(cudaMemcpy2D(dst, dp, src, sp, w, rows, kind));
        t[r] = bsr_now() - t0;
    }
    {
        double x = t[0] < t[1] ? t[0] : t[1], y = t[0] < t[1] ? t[1] : t[0];
        *sec = t[2] < x ? x : t[2] > y ? y : t[2];
    }
done:
    return st;
}

/* Time an h2d and a d2h copy of `bytes` each, run at once on two streams
 * (d holds 2*bytes; the h2d lands in the second half): median of five after
 * a warm-up, since single shots of concurrent copies vary run to run. */
static bsr_status time_duplex(char *d, void *h, size_t bytes, double *sec)
{
    bsr_status st = BSR_OK;
    cudaStream_t a = NULL, b = NULL;
    char *h2 = NULL;
    double t[6];
    CK(cudaStreamCreateWithFlags(&a, cudaStreamNonBlocking));
    CK(cudaStreamCreateWithFlags(&b, cudaStreamNonBlocking));
    CK(bsr_cu_host_alloc(&h2, bytes, cudaHostAllocPortable));
    memset(h2, 0, bytes);
    for (int r = 0; r < 6; r++) {
        CK(cudaDeviceSynchronize());
        double t0 = bsr_now();
        CK(cudaMemcpyAsync(d + bytes, h, bytes, cudaMemcpyHostToDevice, a));
        CK(cudaMemcpyAsync(h2, d, bytes, cudaMemcpyDeviceToHost, b));
        CK(cudaStreamSynchronize(a));
        CK(cudaStreamSynchronize(b));
        t[r] = bsr_now() - t0;
    }
    for (int i = 2; i < 6; i++) /* insertion sort of t[1..5] (t[0] is the warm-up) */
        for (int k = i; k > 1 && t[k] < t[k - 1]; k--) { double x = t[k]; t[k] = t[k - 1]; t[k - 1] = x; }
    *sec = t[3];
done:
    if (a) cudaStreamDestroy(a);
    if (b) cudaStreamDestroy(b);
    bsr_cu_free_host(h2);
    return st;
}

/* Time `reps` steps of region R (event-timed, after one warm-up step). */
static bsr_status time_steps(int dbl, int dim, void *x, void *y, const pyr_kregion *R, int reps, double *sec)
{
    bsr_status st = BSR_OK;
    cudaEvent_t a = NULL, b = NULL;
    float ms = 0;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    CK(pyr_launch_step(dbl, dim, 0, y, x, NULL, R, 0.1, NULL, 0));
    CK(cudaEventRecord(a, 0));
    for (int r = 0; r < reps; r++)
        CK(pyr_launch_step(dbl, dim, 0, r & 1 ? x : y, r & 1 ? y : x, NULL, R, 0.1, NULL, 0));
    CK(cudaEventRecord(b, 0));
    CK(cudaEventSynchronize(b));
    CK(cudaEventElapsedTime(&ms, a, b));
    *sec = 1e-3 * ms / reps;
done:
    if (a) cudaEventDestroy(a);
    if (b) cudaEventDestroy(b);
    return st;
}

extern "C" bsr_status bsr_pyr_calibrate(int dim, bsr_precision prec, size_t budget, bsr_pyr_model *M)
{
    BSR_CHECK_ARG(M && dim >= 1 && dim <= 3, "bsr_pyr_calibrate: bad argument");
    memset(M, 0, sizeof *M);
    M->dim = dim;
    M->prec = prec;
    bsr_status st = budget_of(budget, &budget);
    if (st != BSR_OK) return st;
    const size_t vs = bsr_precision_size(prec);
    size_t bytes = budget / 4 < ((size_t)256 << 20) ? budget / 4 : ((size_t)256 << 20);
    bytes -= bytes % (vs * 64);
    void *h = NULL;
    char *d = NULL;
    double t = 0, tl = 0;
    int64_t side, ext[3] = {1, 1, 1};
    pyr_kregion R;
    if (bytes < ((size_t)1 << 20)) return bsr_error(BSR_ERR_NOMEM, "bsr_pyr_calibrate: budget %zu bytes too small", budget);
    CK(bsr_cu_host_alloc(&h, bytes, cudaHostAllocPortable));
    memset(h, 0, bytes);
    CK(bsr_cu_malloc(&d, 2 * bytes));
    CK(cudaMemset(d, 0, 2 * bytes));
    if ((st = time_copy(d, h, bytes, cudaMemcpyHostToDevice, &t)) != BSR_OK) goto done;
    M->tau_h2d = t / (bytes / vs);
    if ((st = time_copy(h, d, bytes, cudaMemcpyDeviceToHost, &t)) != BSR_OK) goto done;
    M->tau_d2h = t / (bytes / vs);
    if ((st = time_copy(d + bytes, d, bytes, cudaMemcpyDeviceToDevice, &t)) != BSR_OK) goto done;
    M->d2d_bw = bytes / t;
    if ((st = time_duplex(d, h, bytes, &t)) != BSR_OK) goto done;
    M->duplex = t / (bytes / vs) / (M->tau_h2d > M->tau_d2h ? M->tau_h2d : M->tau_d2h);
    if (M->duplex < 1) M->duplex = 1;
    {
        /* strided: rows of 4096 values every 8 rows' worth of bytes (tile rows) */
        size_t w = 4096 * vs, rows = bytes / (8 * w);
        if ((st = time_copy2d(d, w, h, 8 * w, w, rows, cudaMemcpyHostToDevice, &t)) != BSR_OK) goto done;
        M->tau_h2d_2d = t / (double)(rows * 4096);
        if ((st = time_copy2d(h, 8 * w, d, w, w, rows, cudaMemcpyDeviceToHost, &t)) != BSR_OK) goto done;
        M->tau_d2h_2d = t / (double)(rows * 4096);
    }
    /* compute: a cube/square/line of bytes/vs points per buffer */
    side = (int64_t)floor(pow((double)(bytes / vs), 1.0 / dim));
    for (int a = 0; a < dim; a++) ext[a] = side;
    for (int a = 0; a < 3; a++) {
        R.lo[a] = a < dim ? 1 : 0;
        R.e[a] = a < dim ? side - 2 : 1;
    }
    R.sy = ext[0];
    R.sz = ext[0] * ext[1];
    if ((st = time_steps(prec == BSR_DOUBLE, dim, d, d + bytes, &R, 10, &t)) != BSR_OK) goto done;
    {
        pyr_kregion one = R;
        one.e[0] = one.e[1] = one.e[2] = 1;
        if ((st = time_steps(prec == BSR_DOUBLE, dim, d, d + bytes, &one, 50, &tl)) != BSR_OK) goto done;
    }
    M->t_launch = tl;
    M->tau_a = (t - tl) / ((double)R.e[0] * R.e[1] * R.e[2]);
    if (M->tau_a <= 0) M->tau_a = t / ((double)R.e[0] * R.e[1] * R.e[2]);
done:
    bsr_cu_free_host(h);
    bsr_cu_free(d);
    return st;
}

/* ---- long-vector variant ------------------------------------------------- */
#define CB(call)                                                                                 \
    do {                                                                                         \
        cublasStatus_t b_ = (call);                                                              \
        if (b_ != CUBLAS_STATUS_SUCCESS) {                                                       \
            st = bsr_error(b_ == CUBLAS_STATUS_ALLOC_FAILED ? BSR_ERR_NOMEM : BSR_ERR_CUDA,      \
                           "%s:%d: %s: cuBLAS status %d", __func__, __LINE__, #call, (int)b_);  \
            goto done;                                                                           \
        }                                                                                        \
    } while (0)

/* steps of the long-vector scheme on device vectors u (in/out) and v (work):
 * 7 vector operations per step (copy, scal, 4 axpy, restore). */
static bsr_status lv_steps(cublasHandle_t hb, double *u, double *v, int64_t N, double r, int steps)
{
    bsr_status st = BSR_OK;
    const int64_t m = N * N;
    const double a = 1 - 4 * r;
    for (int s = 0; s < steps; s++) {
        CB(cublasDcopy_64(hb, m, u, 1, v, 1));
        CB(cublasDscal_64(hb, m, &a, v, 1));
        CB(cublasDaxpy_64(hb, m - 1, &r, u, 1, v + 1, 1));
        CB(cublasDaxpy_64(hb, m - 1, &r, u + 1, 1, v, 1));
        CB(cublasDaxpy_64(hb, m - N, &r, u, 1, v + N, 1));
        CB(cublasDaxpy_64(hb, m - N, &r, u + N, 1, v, 1));
        CK(pyr_launch_lv_restore(v, u, N, 0));
        double *x = u; u = v; v = x;
    }
    if (steps & 1) CK(cudaMemcpyAsync(v, u, sizeof(double) * (size_t)m, cudaMemcpyDeviceToDevice, 0));
done:
    return st;
}

extern "C" bsr_status bsr_pyr_longvec_gpu(double *u, int64_t N, double r, int steps, double *seconds)
{
    BSR_CHECK_ARG(u && N >= 3 && steps >= 0, "bsr_pyr_longvec_gpu: bad argument");
    bsr_status st = BSR_OK;
    const size_t bytes = sizeof(double) * (size_t)(N * N);
    double *d = NULL;
    cublasHandle_t hb = NULL;
    cudaEvent_t a = NULL, b = NULL;
    float ms = 0;
    CB(cublasCreate(&hb));
    CB(cublasSetPointerMode(hb, CUBLAS_POINTER_MODE_HOST));
    CK(bsr_cu_malloc(&d, 2 * bytes));
    CK(cudaMemcpy(d, u, bytes, cudaMemcpyHostToDevice));
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    CK(cudaEventRecord(a, 0));
    if ((st = lv_steps(hb, d, d + N * N, N, r, steps)) != BSR_OK) goto done;
    CK(cudaEventRecord(b, 0));
    CK(cudaEventSynchronize(b));
    CK(cudaEventElapsedTime(&ms, a, b));
    CK(cudaMemcpy(u, d, bytes, cudaMemcpyDeviceToHost));
    if (seconds) *seconds = 1e-3 * ms;
done:
    if (hb) cublasDestroy(hb);
    bsr_cu_free(d);
    if (a) cudaEventDestroy(a);
    if (b) cudaEventDestroy(b);
    return st;
}

/* Time one step of the long-vector scheme on an N x N grid (zeros). */
static bsr_status lv_time(int64_t N, int steps, double *sec)
{
    bsr_status st = BSR_OK;
    double *h = (double *)calloc((size_t)(N * N), sizeof(double));
    if (!h) return bsr_error(BSR_ERR_NOMEM, "bsr_lv_calibrate: host vector");
    bsr_pyr_longvec_gpu(h, N, 0.1, 1, sec); /* warm-up */
    st = bsr_pyr_longvec_gpu(h, N, 0.1, steps, sec);
    free(h);
    if (st == BSR_OK) *sec /= steps;
    return st;
}

extern "C" bsr_status bsr_lv_calibrate(bsr_lv_model *M)
{
    BSR_CHECK_ARG(M, "bsr_lv_calibrate: NULL model");
    bsr_status st = BSR_OK;
    int dev = 0, sms = 0, thr = 0;
    double t1, t2;
    int64_t N2;
    CK(cudaGetDevice(&dev));
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    CK(cudaDeviceGetAttribute(&thr, cudaDevAttrMaxThreadsPerMultiProcessor, dev));
    M->resident = (int64_t)sms * thr;
    M->ops = 7;
    /* one wave (16 x 16) and 32 waves: solve launch + wave cost */
    if ((st = lv_time(16, 50, &t1)) != BSR_OK) goto done;
    N2 = (int64_t)ceil(sqrt(32.0 * M->resident));
    if ((st = lv_time(N2, 20, &t2)) != BSR_OK) goto done;
    {
        double w2 = (double)((N2 * N2 + M->resident - 1) / M->resident);
        M->t_wave = (t2 - t1) / M->ops / (w2 - 1);
        M->t_launch = t1 / M->ops - M->t_wave;
        if (M->t_launch < 0) M->t_launch = 0;
    }
done:
    return st;
}
