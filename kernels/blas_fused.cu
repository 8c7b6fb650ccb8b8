/* Fused vector updates and inner products of the Krylov iterations (issue 22):
 * up to two updates Z = a X + b Y + c Z and then (D, W1) and (D, W2) of the
 * last updated vector D, in one pass over the vectors instead of an update
 * kernel and a dot kernel that reads D again (BiCGStab: s = r - alpha v with
 * ||s||^2; x += alpha phat + omega shat with r = s - omega t, (r, r) and
 * (rhat, r)).  The elements and the reduction tree are those of
 * kernels/blas_multivec.cu (same grid, same thread per element, same block
 * tree, same second pass), and each update is written as its update kernel
 * writes it, so the fused call gives the bits of the separate calls. */
#include "cuda_internal.h"
#include <string.h>

#define FU_MAXK 64
#define FU_THREADS 256
#define FU_BLOCKS 1024

struct fscal {
    double a[2][FU_MAXK], b[2][FU_MAXK], c[2][FU_MAXK];
    unsigned long long done; /* bit j: column j frozen (both updates) */
};

/* Fixed-shape tree of blas_multivec.cu: column j's block sum into s[j]. */
__device__ static void fu_tree(double *s, int t, int k, int rp)
{
    for (int h = rp / 2; h > 0; h >>= 1) {
        for (int i = t; i < h * k; i += blockDim.x) s[i] += s[i + h * k];
        __syncthreads();
    }
}

/* One update of element e, as update_kernel computes it (x, y NULL: term absent;
 * c == 0: Z write-only). */
template <typename T>
__device__ __forceinline__ void fu_update(int64_t e, int j, const T *x, const T *y, T *z, double a, double b,
                                          double c)
{
    double v = 0;
    if (x) v = a * (double)x[e];
    if (y) v += b * (double)y[e];
    if (c != 0) v += c * (double)z[e];
    z[e] = (T)v;
}

/* Pass 1: the updates of this thread's elements, then its partial sums of
 * d*w1 (w1 NULL: d*d) and d*w2, reduced per block into part (np = 1 or 2
 * pairs), as dot_kernel does. */
template <typename T>
__global__ void fused_kernel(int64_t m, int k, int nu, const T *x0, const T *y0, T *z0, const T *x1, const T *y1,
                             T *z1, fscal s, const T *w1, const T *w2, double *part)
{
    __shared__ double sh[2 * FU_THREADS];
    int t = threadIdx.x, L = (FU_THREADS / k) * k, rows = L / k, rp = 1, np = w2 ? 2 : 1;
    while (rp < rows) rp <<= 1;
    T *d = nu == 2 ? z1 : z0;
    double acc = 0, acc2 = 0;
    if (t < L)
        for (int64_t e = (int64_t)blockIdx.x * L + t; e < m; e += (int64_t)gridDim.x * L) {
            int j = m <= 0xffffffffll ? (int)((unsigned)e % (unsigned)k) : (int)(e % k);
            if (!((s.done >> j) & 1ull)) {
                fu_update(e, j, x0, y0, z0, s.a[0][j], s.b[0][j], s.c[0][j]);
                if (nu == 2) fu_update(e, j, x1, y1, z1, s.a[1][j], s.b[1][j], s.c[1][j]);
            }
            const double dv = (double)d[e];
            acc += w1 ? dv * (double)w1[e] : dv * dv;
            if (w2) acc2 += dv * (double)w2[e];
        }
    for (int p = 0; p < np; p++) {
        for (int i = t; i < rp * k; i += blockDim.x) sh[i] = 0;
        __syncthreads();
        if (t < L) sh[t] = p ? acc2 : acc;
        __syncthreads();
        fu_tree(sh, t, k, rp);
        if (t < k) part[((int64_t)blockIdx.x * np + p) * k + t] = sh[t];
        __syncthreads();
    }
}

/* Pass 2 (dot_kernel with y NULL): column sums of the G x (np*k) partials. */
__global__ void fused_pass2(int64_t m, int k, const double *x, double *out)
{
    __shared__ double sh[2 * FU_THREADS];
    int t = threadIdx.x, L = (FU_THREADS / k) * k, rows = L / k, rp = 1;
    while (rp < rows) rp <<= 1;
    double acc = 0;
    if (t < L)
        for (int64_t e = (int64_t)blockIdx.x * L + t; e < m; e += (int64_t)gridDim.x * L) acc += x[e];
    for (int i = t; i < rp * k; i += blockDim.x) sh[i] = 0;
    __syncthreads();
    if (t < L) sh[t] = acc;
    __syncthreads();
    fu_tree(sh, t, k, rp);
    if (t < k) out[(int64_t)blockIdx.x * k + t] = sh[t];
}

/* Device data of V when it is current on the device and shaped as Z (else NULL, *bad set). */
static const void *dev_of(const bsr_multivec *V, const bsr_multivec *Z, int *bad)
{
    if (!V) return NULL;
    if (!V->dev || !(V->where & BSR_ON_DEVICE) || V->n != Z->n || V->k != Z->k || V->prec != Z->prec) { *bad = 1; return NULL; }
    return bsr_cuda_multivec_data(V);
}

extern "C" bsr_status bsr_cuda_mv_upd_dot(bsr_context *ctx, int nu, bsr_multivec *const *Z, const double *const *a,
                                          const bsr_multivec *const *X, const double *const *b,
                                          const bsr_multivec *const *Y, const double *const *c, const int *done,
                                          const bsr_multivec *W1, double *out1, const bsr_multivec *W2, double *out2)
{
    BSR_CHECK_ARG(ctx && ctx->cuda && (nu == 1 || nu == 2) && Z[0] && (nu == 1 || Z[1]) && out1 && (!W2 || out2),
                  "multivector update + dot: bad arguments");
    BSR_TRY(bsr_cuda_enter(ctx));
    bsr_multivec *D = Z[nu - 1];
    const int k = D->k, np = W2 ? 2 : 1;
    if (k > FU_MAXK || np * k > FU_THREADS)
        return bsr_error(BSR_ERR_UNSUPPORTED, "multivector update + dot: %d columns, at most %d", k, FU_MAXK);
    int bad = 0;
    const void *xs[2] = {NULL, NULL}, *ys[2] = {NULL, NULL}, *zs[2] = {NULL, NULL};
    fscal s;
    memset(&s, 0, sizeof s);
    for (int u = 0; u < nu; u++) {
        if (!Z[u]->dev || Z[u]->n != D->n || Z[u]->k != k || Z[u]->prec != D->prec) bad = 1;
        zs[u] = Z[u]->dev ? bsr_cuda_multivec_data(Z[u]) : NULL;
        xs[u] = dev_of(X[u], D, &bad);
        ys[u] = dev_of(Y[u], D, &bad);
        for (int j = 0; j < k; j++) {
            s.a[u][j] = a[u] ? a[u][j] : 0; s.b[u][j] = b[u] ? b[u][j] : 0; s.c[u][j] = c[u] ? c[u][j] : 1;
            /* a term of coefficient c != 0 reads Z: it must be current */
            if (s.c[u][j] != 0 && !(Z[u]->where & BSR_ON_DEVICE)) bad = 1;
        }
    }
    for (int j = 0; j < k; j++) if (done && done[j]) s.done |= 1ull << j;
    const void *w1 = dev_of(W1, D, &bad), *w2 = dev_of(W2, D, &bad);
    if (bad) return bsr_error(BSR_ERR_ARG, "multivector update + dot: operands not current on the device or shaped differently");
    const int64_t m = D->n * k;
    const int L = (FU_THREADS / k) * k;
    const int64_t g64 = (m + L - 1) / L;
    const int G = (int)(g64 < 1 ? 1 : g64 > FU_BLOCKS ? FU_BLOCKS : g64);
    bsr_cuda_ctx *cc = ctx->cuda;
    const size_t need = (size_t)(G + 1) * np * k;
    if (need > cc->red_cap) {   /* the reduction buffer the dot products share */
        if (cc->red) { CU_TRY(cudaStreamSynchronize(cc->stream)); CU_TRY(bsr_cu_free(cc->red)); }
        cc->red = NULL; cc->red_cap = 0;
        CU_TRY(bsr_cu_malloc(&cc->red, need * sizeof(double)));
        cc->red_cap = need;
    }
    double *part = cc->red, *res = cc->red + (size_t)G * np * k;
    double hres[2 * FU_MAXK];
    if (D->prec == BSR_DOUBLE)
        fused_kernel<double><<<G, FU_THREADS, 0, cc->stream>>>(
            m, k, nu, (const double *)xs[0], (const double *)ys[0], (double *)zs[0], (const double *)xs[1],
            (const double *)ys[1], (double *)zs[1], s, (const double *)w1, (const double *)w2, part);
    else
        fused_kernel<float><<<G, FU_THREADS, 0, cc->stream>>>(
            m, k, nu, (const float *)xs[0], (const float *)ys[0], (float *)zs[0], (const float *)xs[1],
            (const float *)ys[1], (float *)zs[1], s, (const float *)w1, (const float *)w2, part);
    CU_LAUNCHED("fused_kernel");
    fused_pass2<<<1, FU_THREADS, 0, cc->stream>>>((int64_t)G * np * k, np * k, part, res);
    CU_LAUNCHED("fused_pass2");
    CU_TRY(cudaMemcpyAsync(hres, res, sizeof(double) * np * k, cudaMemcpyDeviceToHost, cc->stream));
    CU_TRY(cudaStreamSynchronize(cc->stream));
    memcpy(out1, hres, sizeof(double) * k);
    if (W2) memcpy(out2, hres + k, sizeof(double) * k);
    for (int u = 0; u < nu; u++) Z[u]->where = BSR_ON_DEVICE;
    return BSR_OK;
}
