/* SPDX-License-Identifier: BSD-3-Clause */
/* Wavefront SOR / SSOR on the GPU: one kernel per hyperplane
 * i+j+k = d, launched in sequence (forward: d ascending, backward:
 * descending), so each point sees W, S, B already updated and E, N, T not
 * yet: the lexicographic update order, bit for bit (no FMA contraction).
 * Thread (x, y) of the launch handles j = jlo(d,k) + x, k = klo(d) + y.
 * Natural storage: consecutive threads touch u, f, coefficients nx-1 apart
 * (one sector each).  Hyperplane storage ("diagonal transformation"): the
 * plane is contiguous, row k of it too, so a warp's loads coalesce.  One
 * sweep's launches are captured once into a CUDA graph and replayed, which
 * cuts the launch overhead of the ~3n tiny kernels. */
#include "stencil_cuda.h"

#define SOR_TB 128

struct sor_args {
    int nx, ny, nz, ncoef, hyper;
    int64_t n;
    const double *coef, *f;
    double *u;
    const int64_t *pstart;  /* hyperplane storage: plane starts */
    const int *rstart;      /* and row starts inside planes */
    double omega;
    unsigned long long *red; /* NULL: no increment */
};

__device__ __forceinline__ void jrange(int nx, int ny, int d, int k, int *jlo, int *jhi)
{
    int lo = d - k - (nx - 1), hi = d - k;
    *jlo = lo > 0 ? lo : 0;
    *jhi = hi < ny - 1 ? hi : ny - 1;
}

/* Position of (d-j-k, j, k) in hyperplane storage. */
__device__ __forceinline__ int64_t hpos(const sor_args &a, int d, int j, int k)
{
    int jlo, jhi;
    jrange(a.nx, a.ny, d, k, &jlo, &jhi);
    return a.pstart[d] + a.rstart[(int64_t)d * a.nz + k] + (j - jlo);
}

__global__ void __launch_bounds__(SOR_TB) sor_plane(sor_args a, int d, int klo)
{
    const int k = klo + blockIdx.y;
    int jlo, jhi;
    jrange(a.nx, a.ny, d, k, &jlo, &jhi);
    const int j = jlo + blockIdx.x * SOR_TB + threadIdx.x;
    double dm = 0, um = 0;
    if (j <= jhi) {
        const int i = d - j - k, nx = a.nx, ny = a.ny, nz = a.nz;
        int64_t p, nb[7];
        if (!a.hyper) {
            const int64_t sy = nx, sz = (int64_t)nx * ny;
            p = (int64_t)k * sz + (int64_t)j * sy + i;
            nb[1] = p - 1; nb[2] = p + 1; nb[3] = p - sy; nb[4] = p + sy; nb[5] = p - sz; nb[6] = p + sz;
        } else {
            p = hpos(a, d, j, k);
            nb[1] = i > 0 ? hpos(a, d - 1, j, k) : 0;
            nb[2] = i < nx - 1 ? hpos(a, d + 1, j, k) : 0;
            nb[3] = j > 0 ? hpos(a, d - 1, j - 1, k) : 0;
            nb[4] = j < ny - 1 ? hpos(a, d + 1, j + 1, k) : 0;
            nb[5] = k > 0 && a.ncoef == 7 ? hpos(a, d - 1, j, k - 1) : 0;
            nb[6] = k < nz - 1 && a.ncoef == 7 ? hpos(a, d + 1, j, k + 1) : 0;
        }
        const int64_t n = a.n;
        const double uc = a.u[p];
        double acc = 0;
        /* same order and guards as stc_relax: W, E, S, N, B, T */
        if (i > 0) acc = stc_acc(acc, a.coef[1 * n + p], a.u[nb[1]]);
        if (i < nx - 1) acc = stc_acc(acc, a.coef[2 * n + p], a.u[nb[2]]);
        if (j > 0) acc = stc_acc(acc, a.coef[3 * n + p], a.u[nb[3]]);
        if (j < ny - 1) acc = stc_acc(acc, a.coef[4 * n + p], a.u[nb[4]]);
        if (a.ncoef == 7) {
            if (k > 0) acc = stc_acc(acc, a.coef[5 * n + p], a.u[nb[5]]);
            if (k < nz - 1) acc = stc_acc(acc, a.coef[6 * n + p], a.u[nb[6]]);
        }
        const double v = stc_relax_dev(acc, a.f[p], a.coef[p], uc, a.omega);
        a.u[p] = v;
        dm = fabs(v - uc);
        um = fabs(v);
    }
    if (a.red) stc_block_max2(dm, um, a.red);
}

/* Enqueue one (symmetric) sweep on stream s. */
static cudaError_t enqueue_sweep(const sor_args &a, int symmetric, cudaStream_t s)
{
    const int nd = a.nx + a.ny + a.nz - 2;
    for (int half = 0; half <= (symmetric != 0); half++)
        for (int dd = 0; dd < nd; dd++) {
            int d = half ? nd - 1 - dd : dd, klo, khi;
            stc_hyper_krange(a.nx, a.ny, a.nz, d, &klo, &khi);
            int len = d + 1 < a.ny ? d + 1 : a.ny; /* longest row of the plane */
            dim3 grid((len + SOR_TB - 1) / SOR_TB, khi - klo + 1);
            sor_plane<<<grid, SOR_TB, 0, s>>>(a, d, klo);
            cudaError_t e = cudaGetLastError();
            if (e != cudaSuccess) return e;
        }
    return cudaSuccess;
}

extern "C" bsr_status bsr_sor_gpu(bsr_sor_layout layout, const bsr_stencil *S, double omega, int symmetric,
                                  double tol, int maxit, double *u, bsr_iter_info *info)
{
    bsr_status st = BSR_OK;
    if (bsr_cuda_device_count() <= 0) return bsr_error(BSR_ERR_NODEVICE, "bsr_sor: no CUDA device");
    if (S->nz > 65535) return bsr_error(BSR_ERR_UNSUPPORTED, "bsr_sor(GPU): nz = %d > 65535", S->nz);
    const int64_t n = S->n;
    const int nc = S->ncoef, hyper = layout == BSR_SOR_HYPERPLANE;
    stc_hyper H;
    memset(&H, 0, sizeof H);
    double *hc = NULL, *hf = NULL, *hu = NULL, *dbuf = NULL;
    int64_t *dpstart = NULL;
    int *drstart = NULL;
    unsigned long long *dred = NULL, hred[2];
    cudaStream_t s = NULL;
    cudaGraph_t graph[2] = {NULL, NULL};
    cudaGraphExec_t exec[2] = {NULL, NULL}; /* [0]: sweep without, [1]: with the increment */
    sor_args a;
    const double *coef = S->coef, *f = S->f, *u0 = u;
    double t0 = bsr_now(), t1 = t0, t2 = t0;
    memset(&a, 0, sizeof a);
    if (hyper) { /* permute into hyperplane storage on the host (setup) */
        if ((st = stc_hyper_build(S, &H))) return st;
        hc = (double *)bsr_malloc((size_t)n * nc * sizeof(double), "hyperplane coefficients");
        hf = (double *)bsr_malloc((size_t)n * sizeof(double), "hyperplane rhs");
        hu = (double *)bsr_malloc((size_t)n * sizeof(double), "hyperplane solution");
        if (!hc || !hf || !hu) { st = BSR_ERR_NOMEM; goto done; }
        for (int64_t q = 0; q < n; q++) {
            int64_t p = H.perm[q];
            for (int d = 0; d < nc; d++) hc[d * n + q] = S->coef[d * n + p];
            hf[q] = S->f[p];
            hu[q] = u[p];
        }
        coef = hc; f = hf; u0 = hu;
    }
    STC_CU(bsr_cu_malloc((void **)&dbuf, (size_t)n * (nc + 2) * sizeof(double)));
    STC_CU(bsr_cu_malloc((void **)&dred, 2 * sizeof(unsigned long long)));
    STC_CU(cudaMemcpy(dbuf, coef, (size_t)n * nc * sizeof(double), cudaMemcpyHostToDevice));
    STC_CU(cudaMemcpy(dbuf + (size_t)n * nc, f, (size_t)n * sizeof(double), cudaMemcpyHostToDevice));
    STC_CU(cudaMemcpy(dbuf + (size_t)n * (nc + 1), u0, (size_t)n * sizeof(double), cudaMemcpyHostToDevice));
    if (hyper) {
        STC_CU(bsr_cu_malloc((void **)&dpstart, (size_t)(H.nd + 1) * sizeof(int64_t)));
        STC_CU(bsr_cu_malloc((void **)&drstart, (size_t)H.nd * H.nz * sizeof(int)));
        STC_CU(cudaMemcpy(dpstart, H.pstart, (size_t)(H.nd + 1) * sizeof(int64_t), cudaMemcpyHostToDevice));
        STC_CU(cudaMemcpy(drstart, H.rstart, (size_t)H.nd * H.nz * sizeof(int), cudaMemcpyHostToDevice));
    }
    /* the copies above ran on the legacy stream, and a copy from pageable
     * memory may return before its DMA ends; s (non-blocking) does not wait
     * for that stream: without this the sweeps could read the buffers before
     * they arrive (test_stencil failed now and then with other processes on
     * the device) */
    STC_CU(cudaDeviceSynchronize());
    a.nx = S->nx; a.ny = S->ny; a.nz = S->nz; a.ncoef = nc; a.hyper = hyper; a.n = n;
    a.coef = dbuf; a.f = dbuf + (size_t)n * nc; a.u = dbuf + (size_t)n * (nc + 1);
    a.pstart = dpstart; a.rstart = drstart; a.omega = omega;
    STC_CU(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    for (int g = 0; g < 2; g++) { /* capture one sweep, with and without the increment */
        a.red = g ? dred : NULL;
        STC_CU(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
        if (g) {
            cudaError_t e = cudaMemsetAsync(dred, 0, 2 * sizeof(unsigned long long), s);
            if (e == cudaSuccess) e = enqueue_sweep(a, symmetric, s);
            if (e != cudaSuccess) { cudaStreamEndCapture(s, &graph[g]); STC_CU(e); }
        } else {
            cudaError_t e = enqueue_sweep(a, symmetric, s);
            if (e != cudaSuccess) { cudaStreamEndCapture(s, &graph[g]); STC_CU(e); }
        }
        STC_CU(cudaStreamEndCapture(s, &graph[g]));
        STC_CU(cudaGraphInstantiate(&exec[g], graph[g], 0));
    }
    STC_CU(cudaStreamSynchronize(s));
    t1 = bsr_now();
    for (int it = 1; it <= maxit; it++) {
        int track = tol > 0;
        STC_CU(cudaGraphLaunch(exec[track], s));
        info->iters = it;
        if (track) {
            STC_CU(cudaMemcpyAsync(hred, dred, sizeof hred, cudaMemcpyDeviceToHost, s));
            STC_CU(cudaStreamSynchronize(s));
            info->incr = stc_red_incr(hred);
            if (info->incr < tol) { info->converged = 1; break; }
        }
    }
    STC_CU(cudaStreamSynchronize(s));
    t2 = bsr_now();
    STC_CU(cudaMemcpy(hyper ? hu : u, a.u, (size_t)n * sizeof(double), cudaMemcpyDeviceToHost));
    if (hyper)
        for (int64_t q = 0; q < n; q++) u[H.perm[q]] = hu[q];
    info->seconds = t2 - t1;
    info->xfer_seconds = (t1 - t0) + (bsr_now() - t2);
    if (tol > 0 && !info->converged)
        st = bsr_error(BSR_ERR_NOCONV, "bsr_sor(GPU): relative increment %.3e > tol %.3e after %d sweeps", info->incr,
                       tol, info->iters);
done:
    for (int g = 0; g < 2; g++) {
        if (exec[g]) cudaGraphExecDestroy(exec[g]);
        if (graph[g]) cudaGraphDestroy(graph[g]);
    }
    if (s) cudaStreamDestroy(s);
    bsr_cu_free(dbuf); bsr_cu_free(dred); bsr_cu_free(dpstart); bsr_cu_free(drstart);
    free(hc); free(hf); free(hu);
    stc_hyper_free(&H);
    return st;
}
