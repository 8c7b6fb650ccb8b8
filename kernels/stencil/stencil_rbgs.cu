/* SPDX-License-Identifier: BSD-3-Clause */
/* Red-black Gauss-Seidel on the GPU: one kernel per colour.
 * A block updates the colour-c points of a (2*RB_TX) x RB_TY tile of one
 * z-plane, one point per thread, reading the other colour's values from a
 * shared-memory copy of the tile plus halo (each value feeds up to four
 * updates) and the B/T neighbours from global memory.  Coefficients and f are
 * stored per colour ("red-black storage", row stride hx = ceil(nx/2)) so that
 * a warp's coefficient loads are contiguous; u stays in natural order.
 * Relative-increment test: block max of |du| and |u_new| folded into two words
 * by integer atomicMax (deterministic), read back every `check` iterations.
 * Also: the D2D bandwidth anchor. */
#include "stencil_cuda.h"

#define RB_TX 32
#define RB_TY 8


struct rb_args {
    int nx, ny, nz, ncoef, hx;  /* hx: per-colour row stride */
    int64_t nh;                 /* per-colour array length hx*ny*nz */
    const double *coef[2];      /* [ncoef*nh] per colour */
    const double *f[2];         /* [nh] per colour */
    double *u;                  /* natural order */
    double omega;
    unsigned long long *red;    /* NULL: no increment this time */
};

__global__ void __launch_bounds__(RB_TX * RB_TY) rb_colour(rb_args a, int c)
{
    __shared__ double s[RB_TY + 2][2 * RB_TX + 2];
    const int nx = a.nx, ny = a.ny, k = blockIdx.z;
    const int x0 = blockIdx.x * 2 * RB_TX, y0 = blockIdx.y * RB_TY;
    const int64_t sy = nx, sz = (int64_t)nx * ny, plane = k * sz;
    for (int t = threadIdx.y * RB_TX + threadIdx.x; t < (RB_TY + 2) * (2 * RB_TX + 2); t += RB_TX * RB_TY) {
        int li = t % (2 * RB_TX + 2), lj = t / (2 * RB_TX + 2), i = x0 - 1 + li, j = y0 - 1 + lj;
        s[lj][li] = (i >= 0 && i < nx && j >= 0 && j < ny) ? a.u[plane + j * sy + i] : 0.0;
    }
    __syncthreads();
    const int j = y0 + threadIdx.y, i = x0 + 2 * threadIdx.x + ((j + k + c) & 1);
    double dm = 0, um = 0;
    if (i < nx && j < ny) {
        const int64_t p = plane + j * sy + i, q = ((int64_t)k * ny + j) * a.hx + (i >> 1), nh = a.nh;
        const double *cf = a.coef[c];
        const int li = i - x0 + 1, lj = threadIdx.y + 1;
        const double uc = s[lj][li];
        double acc = 0;
        /* same order and guards as stc_relax: W, E, S, N, B, T */
        if (i > 0) acc = stc_acc(acc, cf[1 * nh + q], s[lj][li - 1]);
        if (i < nx - 1) acc = stc_acc(acc, cf[2 * nh + q], s[lj][li + 1]);
        if (j > 0) acc = stc_acc(acc, cf[3 * nh + q], s[lj - 1][li]);
        if (j < ny - 1) acc = stc_acc(acc, cf[4 * nh + q], s[lj + 1][li]);
        if (a.ncoef == 7) {
            if (k > 0) acc = stc_acc(acc, cf[5 * nh + q], a.u[p - sz]);
            if (k < a.nz - 1) acc = stc_acc(acc, cf[6 * nh + q], a.u[p + sz]);
        }
        const double v = stc_relax_dev(acc, a.f[c][q], cf[q], uc, a.omega);
        a.u[p] = v;
        dm = fabs(v - uc);
        um = fabs(v);
    }
    if (a.red) stc_block_max2(dm, um, a.red);
}

extern "C" bsr_status bsr_rbgs_gpu(const bsr_stencil *S, double omega, double tol, int maxit, int check,
                                   double *u, bsr_iter_info *info)
{
    bsr_status st = BSR_OK;
    if (bsr_cuda_device_count() <= 0) return bsr_error(BSR_ERR_NODEVICE, "bsr_rbgs: no CUDA device");
    const int nx = S->nx, ny = S->ny, nz = S->nz, nc = S->ncoef, hx = (nx + 1) / 2;
    const int64_t n = S->n, nh = (int64_t)hx * ny * nz;
    const size_t per = (size_t)(nc + 1) * nh; /* doubles per colour: coefficients then f */
    double *hbuf = NULL, *dbuf = NULL, *du = NULL;
    unsigned long long *dred = NULL, hred[2];
    rb_args a;
    const dim3 block(RB_TX, RB_TY), grid((nx + 2 * RB_TX - 1) / (2 * RB_TX), (ny + RB_TY - 1) / RB_TY, nz);
    double t0 = bsr_now(), t1 = t0, t2 = t0;
    hbuf = (double *)bsr_calloc(2 * per, sizeof(double), "RB-GS red-black coefficient staging");
    if (!hbuf) return BSR_ERR_NOMEM;
    for (int k = 0; k < nz; k++) /* natural -> red-black storage */
        for (int j = 0; j < ny; j++)
            for (int i = 0; i < nx; i++) {
                int64_t p = ((int64_t)k * ny + j) * nx + i, q = ((int64_t)k * ny + j) * hx + (i >> 1);
                double *h = hbuf + ((i + j + k) & 1) * per;
                for (int d = 0; d < nc; d++) h[d * nh + q] = S->coef[d * n + p];
                h[nc * nh + q] = S->f[p];
            }
    STC_CU(bsr_cu_malloc((void **)&dbuf, 2 * per * sizeof(double)));
    STC_CU(bsr_cu_malloc((void **)&du, (size_t)n * sizeof(double)));
    STC_CU(bsr_cu_malloc((void **)&dred, 2 * sizeof(unsigned long long)));
    STC_CU(cudaMemcpy(dbuf, hbuf, 2 * per * sizeof(double), cudaMemcpyHostToDevice));
    STC_CU(cudaMemcpy(du, u, (size_t)n * sizeof(double), cudaMemcpyHostToDevice));
    a.nx = nx; a.ny = ny; a.nz = nz; a.ncoef = nc; a.hx = hx; a.nh = nh;
    for (int c = 0; c < 2; c++) { a.coef[c] = dbuf + c * per; a.f[c] = dbuf + c * per + (size_t)nc * nh; }
    a.u = du; a.omega = omega;
    STC_CU(cudaDeviceSynchronize());
    t1 = bsr_now();
    for (int it = 1; it <= maxit; it++) {
        int track = it % check == 0 || it == maxit;
        if (track) STC_CU(cudaMemsetAsync(dred, 0, 2 * sizeof(unsigned long long)));
        a.red = track ? dred : NULL;
        rb_colour<<<grid, block>>>(a, 0);
        STC_LAUNCHED("rb_colour(red)");
        rb_colour<<<grid, block>>>(a, 1);
        STC_LAUNCHED("rb_colour(black)");
        info->iters = it;
        if (track) {
            STC_CU(cudaMemcpy(hred, dred, sizeof hred, cudaMemcpyDeviceToHost));
            info->incr = stc_red_incr(hred);
            if (info->incr < tol) { info->converged = 1; break; }
        }
    }
    STC_CU(cudaDeviceSynchronize());
    t2 = bsr_now();
    STC_CU(cudaMemcpy(u, du, (size_t)n * sizeof(double), cudaMemcpyDeviceToHost));
    info->seconds = t2 - t1;
    info->xfer_seconds = (t1 - t0) + (bsr_now() - t2);
    if (!info->converged)
        st = bsr_error(BSR_ERR_NOCONV, "bsr_rbgs(GPU): relative increment %.3e > tol %.3e after %d iterations",
                       info->incr, tol, info->iters);
done:
    free(hbuf);
    bsr_cu_free(dbuf); bsr_cu_free(du); bsr_cu_free(dred);
    return st;
}

extern "C" bsr_status bsr_stencil_gpu_d2d_gbs(size_t bytes, double *gbs)
{
    bsr_status st = BSR_OK;
    BSR_CHECK_ARG(gbs && bytes > 0, "bsr_stencil_gpu_d2d_gbs: bad argument");
    *gbs = 0;
    if (bsr_cuda_device_count() <= 0) return bsr_error(BSR_ERR_NODEVICE, "bsr_stencil_gpu_d2d_gbs: no CUDA device");
    void *x = NULL, *y = NULL;
    cudaEvent_t e0 = NULL, e1 = NULL;
    float ms = 0;
    const int reps = 10;
    STC_CU(bsr_cu_malloc(&x, bytes));
    STC_CU(bsr_cu_malloc(&y, bytes));
    STC_CU(cudaMemset(x, 0, bytes));
    STC_CU(cudaEventCreate(&e0));
    STC_CU(cudaEventCreate(&e1));
    STC_CU(cudaMemcpy(y, x, bytes, cudaMemcpyDeviceToDevice)); /* warm-up */
    STC_CU(cudaEventRecord(e0));
    for (int r = 0; r < reps; r++) STC_CU(cudaMemcpyAsync(y, x, bytes, cudaMemcpyDeviceToDevice));
    STC_CU(cudaEventRecord(e1));
    STC_CU(cudaEventSynchronize(e1));
    STC_CU(cudaEventElapsedTime(&ms, e0, e1));
    *gbs = 2.0 * (double)bytes * reps / (ms * 1e-3) * 1e-9;
done:
    if (e0) cudaEventDestroy(e0);
    if (e1) cudaEventDestroy(e1);
    bsr_cu_free(x); bsr_cu_free(y);
    return st;
}
