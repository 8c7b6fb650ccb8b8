/* SPDX-License-Identifier: BSD-3-Clause */
/* Device multivector operations (row-interleaved n x k, per-column scalars):
 * fill, copy with precision conversion, fused a*X + b*Y + c*Z updates with a
 * per-column freeze mask, and dot products with a fixed-shape reduction
 * tree in one launch (the block counter only picks which block sums the
 * partials, not their order: bit-identical run to run). */
#include "cuda_internal.h"
#include <math.h>
#include <string.h>

#define MV_MAXK 64   /* per-column scalars travel as kernel parameters */
#define MV_THREADS 256
#define DOT_BLOCKS 1024
#define DOT_MAXP 3   /* inner products of one sweep */

struct colscal {
    double a[MV_MAXK], b[MV_MAXK], c[MV_MAXK];
    unsigned long long done; /* bit j: column j frozen */
};

static int grid_for(int64_t m)
{
    int64_t g = (m + MV_THREADS - 1) / MV_THREADS;
    return (int)(g < 1 ? 1 : g > 65535 * 8 ? 65535 * 8 : g);
}

template <typename T> __global__ void fill_kernel(int64_t m, T v, T *x)
{
    for (int64_t e = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; e < m; e += (int64_t)gridDim.x * blockDim.x)
        x[e] = v;
}

template <typename TO, typename TI> __global__ void copy_kernel(int64_t m, const TI *x, TO *y)
{
    for (int64_t e = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; e < m; e += (int64_t)gridDim.x * blockDim.x)
        y[e] = (TO)x[e];
}

/* z[e] = a x[e] + b y[e] + c z[e] with column j's scalars, in double (x, y
 * may be NULL: term absent; keepz: c z[e] is computed even when c == 0, as
 * scaling does; otherwise c == 0 makes z write-only); returns the value
 * stored.  The one arithmetic of update_kernel and upd_dot_kernel, so that
 * the fused kernel has the bits of the separate update. */
template <typename T>
__device__ __forceinline__ T upd_elem(int64_t e, int j, const T *x, const T *y, T *z, const colscal &s, int keepz)
{
    /* the roundings spelled out (a product, then fused multiply-adds), so
     * that lincomb_kernel's terms repeat them whatever the compiler would
     * contract */
    double v = 0;
    if (x) v = __dmul_rn(s.a[j], (double)x[e]);
    if (y) v = __fma_rn(s.b[j], (double)y[e], v);
    if (keepz || s.c[j] != 0) v = __fma_rn(s.c[j], (double)z[e], v);
    return z[e] = (T)v;
}

/* Z = a*X + b*Y + c*Z per column (upd_elem), frozen columns skipped. */
template <typename T>
__global__ void update_kernel(int64_t m, int k, const T *x, const T *y, T *z, colscal s, int keepz)
{
    for (int64_t e = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; e < m; e += (int64_t)gridDim.x * blockDim.x) {
        /* 32-bit remainder when it fits (a 64-bit one costs ~as much as the memory traffic) */
        int j = m <= 0xffffffffll ? (int)((unsigned)e % (unsigned)k) : (int)(e % k);
        if ((s.done >> j) & 1ull) continue;
        upd_elem(e, j, x, y, z, s, keepz);
    }
}

/* Fixed-shape tree over the block's L = rows*k partials in s[0..L) (column
 * t % k), leaving column j's block sum in s[j]; rp = rows rounded up to a
 * power of two, s zero-padded up to rp*k. */
__device__ static void block_tree(double *s, int t, int k, int rp)
{
    for (int h = rp / 2; h > 0; h >>= 1) {
        for (int i = t; i < h * k; i += blockDim.x) s[i] += s[i + h * k];
        __syncthreads();
    }
}

/* The block's per-column sums of its threads' partials acc[p], p < np, each
 * in the fixed tree, written to out[p*k + j].  Thread t < L = (256/k)*k
 * holds column t % k. */
__device__ static void block_sums(const double (&acc)[DOT_MAXP], int np, int k, double *s, double *out)
{
    int t = threadIdx.x, L = (MV_THREADS / k) * k, rows = L / k, rp = 1;
    while (rp < rows) rp <<= 1;
#pragma unroll
    for (int p = 0; p < DOT_MAXP; p++) {
        if (p >= np) break;
        for (int i = t; i < rp * k; i += blockDim.x) s[i] = 0;
        __syncthreads();
        if (t < L) s[t] = acc[p];
        __syncthreads();
        block_tree(s, t, k, rp);
        if (t < k) out[p * k + t] = s[t];
        __syncthreads();
    }
}

/* After every block of the launch wrote its np*k partials to part (row g:
 * part[g*np*k + p*k + j]): the block that finishes last (count, reset by it
 * for the next call) sums the G rows of each pair's partials per column with
 * the same tree, in a fixed order whichever block that is, into res[p*k + j]
 * (mapped host memory: no transfer to wait for).  Each pair is summed as a
 * lone pair would be, so an inner product has the same bits whatever else
 * its sweep computes. */
__device__ static void last_block_sums(int np, int k, double *part, unsigned *count, double *res, double *s)
{
    __shared__ bool last;
    __threadfence();   /* the partials before the count that publishes them */
    if (threadIdx.x == 0) last = atomicAdd(count, 1u) == gridDim.x - 1;
    __syncthreads();
    if (!last) return;
    __threadfence();
    /* the partials were written by other blocks: read from L2 */
    const int t = threadIdx.x, L = (MV_THREADS / k) * k;
    const int64_t m = (int64_t)gridDim.x * k;
    for (int p = 0; p < np; p++) {
        double acc[DOT_MAXP] = {0, 0, 0};
        if (t < L)
            for (int64_t e = t; e < m; e += L) acc[0] += __ldcg(part + (e / k * np + p) * k + e % k);
        block_sums(acc, 1, k, s, res + p * k);
    }
    if (threadIdx.x == 0) *count = 0;
}

/* Operands of up to DOT_MAXP inner products. */
template <typename T> struct dot_pairs {
    const T *x[DOT_MAXP], *y[DOT_MAXP];
};

/* The np inner products (x[p], y[p]) per column in one launch: block g of G
 * visits e = g*L + t, stepping by G*L (thread t < L = (256/k)*k owns column
 * t % k: consecutive threads, consecutive addresses, one coalesced pass over
 * all k columns), sums its L partials per column in a fixed binary tree,
 * then last_block_sums.  Nothing depends on timing. */
template <typename T>
__global__ void dot_kernel(int64_t m, int k, int np, dot_pairs<T> v, double *part, unsigned *count, double *res)
{
    __shared__ double s[2 * MV_THREADS];
    const int t = threadIdx.x, L = (MV_THREADS / k) * k;
    double acc[DOT_MAXP] = {0, 0, 0};
    if (t < L)
        for (int64_t e = (int64_t)blockIdx.x * L + t; e < m; e += (int64_t)gridDim.x * L) {
#pragma unroll
            for (int p = 0; p < DOT_MAXP; p++)
                if (p < np) acc[p] = fma((double)v.x[p][e], (double)v.y[p][e], acc[p]);
        }
    block_sums(acc, np, k, s, part + (int64_t)blockIdx.x * np * k);
    last_block_sums(np, k, part, count, res, s);
}

/* Up to two updates z_u = a_u x_u + b_u y_u + c_u z_u (update_kernel's
 * arithmetic, s[0].done their mask), then the sums of d*w1 (w1 NULL: d*d)
 * and d*w2 of the last updated vector d, in dot_kernel's grid, element order
 * and trees: the bits of the separate update and dot calls in one pass over
 * the vectors and one launch (BiCGStab: s = r - alpha v with ||s||^2; x and r
 * with (r, r) and (rhat, r)). */
template <typename T>
__global__ void upd_dot_kernel(int64_t m, int k, int nu, const T *x0, const T *y0, T *z0, const T *x1, const T *y1,
                               T *z1, colscal s0, colscal s1, const T *w1, const T *w2, double *part, unsigned *count,
                               double *res)
{
    __shared__ double s[2 * MV_THREADS];
    const int t = threadIdx.x, L = (MV_THREADS / k) * k, np = w2 ? 2 : 1;
    const T *d = nu == 2 ? z1 : z0;
    double acc = 0, acc2 = 0;
    if (t < L)
        for (int64_t e = (int64_t)blockIdx.x * L + t; e < m; e += (int64_t)gridDim.x * L) {
            const int j = m <= 0xffffffffll ? (int)((unsigned)e % (unsigned)k) : (int)(e % k);
            T dv;
            if ((s0.done >> j) & 1ull) dv = d[e];
            else {
                dv = upd_elem(e, j, x0, y0, z0, s0, 0);
                if (nu == 2) dv = upd_elem(e, j, x1, y1, z1, s1, 0);
            }
            const double de = (double)dv;
            acc = fma(de, w1 ? (double)w1[e] : de, acc);
            if (w2) acc2 = fma(de, (double)w2[e], acc2);
        }
    const double a3[DOT_MAXP] = {acc, acc2, 0};
    block_sums(a3, np, k, s, part + (int64_t)blockIdx.x * np * k);
    last_block_sums(np, k, part, count, res, s);
}

/* Row-interleaved x (n rows of k) to column-major c (TOCOL), or back. */
template <typename T, bool TOCOL> __global__ void relayout_kernel(int64_t n, int k, const T *src, T *dst)
{
    for (int64_t e = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; e < n * k; e += (int64_t)gridDim.x * blockDim.x) {
        const int64_t c = (e % k) * n + e / k;
        dst[TOCOL ? c : e] = src[TOCOL ? e : c];
    }
}

/* The context to run on: ctx, or the owner of the output's device copy. */
static bsr_status pick(bsr_context **ctx, const bsr_multivec *out, const char *fn)
{
    if (!out) return bsr_error(BSR_ERR_ARG, "%s: NULL multivector", fn);
    if (!*ctx) *ctx = bsr_cuda_multivec_context(out);
    if (!*ctx || !(*ctx)->cuda) return bsr_error(BSR_ERR_ARG, "%s: no CUDA context", fn);
    return bsr_cuda_enter(*ctx);
}

/* Operand is current on the device, and shaped as ref. */
static bsr_status on_dev(const bsr_multivec *V, const bsr_multivec *ref, const char *fn, const char *name)
{
    if (!V) return bsr_error(BSR_ERR_ARG, "%s: %s is NULL", fn, name);
    if (!V->dev || !(V->where & BSR_ON_DEVICE))
        return bsr_error(BSR_ERR_ARG, "%s: %s is not current on the device (bsr_multivec_upload it)", fn, name);
    if (V->n != ref->n || V->k != ref->k)
        return bsr_error(BSR_ERR_SIZE, "%s: %s is %lld x %d, expected %lld x %d", fn, name, (long long)V->n,
                         V->k, (long long)ref->n, ref->k);
    return BSR_OK;
}

extern "C" bsr_status bsr_cuda_mv_fill(bsr_context *ctx, bsr_multivec *X, double value)
{
    BSR_TRY(pick(&ctx, X, "multivector fill"));
    BSR_TRY(on_dev(X, X, "multivector fill", "X"));
    int64_t m = X->n * X->k;
    if (m == 0) return BSR_OK;
    cudaStream_t st = ctx->cuda->stream;
    if (X->prec == BSR_DOUBLE) fill_kernel<double><<<grid_for(m), MV_THREADS, 0, st>>>(m, value, (double *)bsr_cuda_multivec_data(X));
    else fill_kernel<float><<<grid_for(m), MV_THREADS, 0, st>>>(m, (float)value, (float *)bsr_cuda_multivec_data(X));
    CU_LAUNCHED("fill_kernel");
    X->where = BSR_ON_DEVICE;
    return BSR_OK;
}

extern "C" bsr_status bsr_cuda_mv_copy(bsr_context *ctx, bsr_multivec *Y, const bsr_multivec *X)
{
    BSR_TRY(pick(&ctx, Y, "multivector copy"));
    BSR_TRY(on_dev(X, Y, "multivector copy", "X"));
    if (!Y->dev) return bsr_error(BSR_ERR_ARG, "multivector copy: Y has no device copy");
    int64_t m = X->n * X->k;
    cudaStream_t st = ctx->cuda->stream;
    void *y = bsr_cuda_multivec_data(Y);
    const void *x = bsr_cuda_multivec_data(X);
    if (m == 0 || x == y) { Y->where = BSR_ON_DEVICE; return BSR_OK; }
    if (X->prec == Y->prec) {
        CU_TRY(cudaMemcpyAsync(y, x, (size_t)m * bsr_precision_size(X->prec), cudaMemcpyDeviceToDevice, st));
    } else {
        if (X->prec == BSR_DOUBLE) copy_kernel<float, double><<<grid_for(m), MV_THREADS, 0, st>>>(m, (const double *)x, (float *)y);
        else copy_kernel<double, float><<<grid_for(m), MV_THREADS, 0, st>>>(m, (const float *)x, (double *)y);
        CU_LAUNCHED("copy_kernel");
    }
    Y->where = BSR_ON_DEVICE;
    return BSR_OK;
}

/* Per-column scalars and mask of an update (c NULL: c = 1). */
static bsr_status col_scalars(const double *a, const double *b, const double *c, const int *done, int k, colscal *s,
                              const char *fn)
{
    if (k > MV_MAXK)
        return bsr_error(BSR_ERR_UNSUPPORTED, "%s: %d columns, device updates support up to %d", fn, k, MV_MAXK);
    memset(s, 0, sizeof *s);
    for (int j = 0; j < k; j++) {
        s->a[j] = a ? a[j] : 0; s->b[j] = b ? b[j] : 0; s->c[j] = c ? c[j] : 1;
        if (done && done[j]) s->done |= 1ull << j;
    }
    return BSR_OK;
}

static bsr_status update(bsr_context *ctx, const double *a, const bsr_multivec *X, const double *b,
                         const bsr_multivec *Y, const double *c, bsr_multivec *Z, const int *done,
                         int keepz, const char *fn)
{
    BSR_TRY(pick(&ctx, Z, fn));
    BSR_TRY(on_dev(Z, Z, fn, "output"));
    if (X) BSR_TRY(on_dev(X, Z, fn, "X"));
    if (Y) BSR_TRY(on_dev(Y, Z, fn, "Y"));
    if ((X && X->prec != Z->prec) || (Y && Y->prec != Z->prec))
        return bsr_error(BSR_ERR_ARG, "%s: operands must have the same precision", fn);
    colscal s;
    BSR_TRY(col_scalars(a, b, c, done, Z->k, &s, fn));
    int64_t m = Z->n * Z->k;
    /* every column frozen (BiCGStab's half-step update of x, most steps): Z
     * stays as it is without a sweep over it */
    const unsigned long long all = Z->k == 64 ? ~0ull : (1ull << Z->k) - 1;
    if (m == 0 || s.done == all) return BSR_OK;
    cudaStream_t st = ctx->cuda->stream;
    if (Z->prec == BSR_DOUBLE)
        update_kernel<double><<<grid_for(m), MV_THREADS, 0, st>>>(
            m, Z->k, X ? (const double *)bsr_cuda_multivec_data(X) : NULL,
            Y ? (const double *)bsr_cuda_multivec_data(Y) : NULL, (double *)bsr_cuda_multivec_data(Z), s, keepz);
    else
        update_kernel<float><<<grid_for(m), MV_THREADS, 0, st>>>(
            m, Z->k, X ? (const float *)bsr_cuda_multivec_data(X) : NULL,
            Y ? (const float *)bsr_cuda_multivec_data(Y) : NULL, (float *)bsr_cuda_multivec_data(Z), s, keepz);
    CU_LAUNCHED("update_kernel");
    Z->where = BSR_ON_DEVICE;
    return BSR_OK;
}

/* Vectors of one lincomb launch: LC_MAX pointers and their per-column
 * coefficients travel as kernel parameters (under the 4 KB that every
 * architecture takes). */
#define LC_MAX 6
struct lcscal {
    double c[LC_MAX][MV_MAXK], b[MV_MAXK];
    unsigned long long done;
};
template <typename T> struct lcvecs {
    const T *v[LC_MAX];
};

/* z = b z + sum_{l < nv} c_l v_l per column (b: 1 unless first), each term
 * with upd_elem's roundings for z = c_l v_l + (b or 1) z: the bits of the
 * separate updates, with z read and written once. */
template <typename T>
__global__ void lincomb_kernel(int64_t m, int k, int nv, lcvecs<T> V, T *z, lcscal s, int first)
{
    for (int64_t e = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; e < m; e += (int64_t)gridDim.x * blockDim.x) {
        int j = m <= 0xffffffffll ? (int)((unsigned)e % (unsigned)k) : (int)(e % k);
        if ((s.done >> j) & 1ull) continue;
        T acc = z[e];
        for (int l = 0; l < nv; l++) {
            const double d = first && l == 0 ? s.b[j] : 1.0;
            double v = __dmul_rn(s.c[l][j], (double)V.v[l][e]);
            if (d != 0) v = __fma_rn(d, (double)acc, v);
            acc = (T)v;
        }
        z[e] = acc;
    }
}

extern "C" bsr_status bsr_cuda_mv_lincomb(bsr_context *ctx, bsr_multivec *Y, const double *b, int m,
                                          bsr_multivec *const *V, const double *c, const int *done)
{
    const char *fn = "multivector combination";
    BSR_CHECK_ARG(Y && b && m >= 1 && V && c, "%s: bad arguments", fn);
    BSR_TRY(pick(&ctx, Y, fn));
    BSR_TRY(on_dev(Y, Y, fn, "output"));
    const int k = Y->k;
    if (k > MV_MAXK) return bsr_error(BSR_ERR_UNSUPPORTED, "%s: %d columns, device updates support up to %d", fn, k, MV_MAXK);
    for (int l = 0; l < m; l++) {
        BSR_TRY(on_dev(V[l], Y, fn, "V"));
        if (V[l]->prec != Y->prec) return bsr_error(BSR_ERR_ARG, "%s: operands must have the same precision", fn);
    }
    lcscal s;
    memset(&s, 0, sizeof s);
    for (int j = 0; j < k; j++) {
        s.b[j] = b[j];
        if (done && done[j]) s.done |= 1ull << j;
    }
    const unsigned long long all = k == 64 ? ~0ull : (1ull << k) - 1;
    const int64_t mm = Y->n * k;
    if (mm == 0 || s.done == all) return BSR_OK;
    cudaStream_t st = ctx->cuda->stream;
    for (int l0 = 0; l0 < m; l0 += LC_MAX) {
        const int nv = m - l0 < LC_MAX ? m - l0 : LC_MAX, first = l0 == 0;
        for (int l = 0; l < nv; l++)
            for (int j = 0; j < k; j++) s.c[l][j] = c[(size_t)(l0 + l) * k + j];
        if (Y->prec == BSR_DOUBLE) {
            lcvecs<double> vs;
            for (int l = 0; l < nv; l++) vs.v[l] = (const double *)bsr_cuda_multivec_data(V[l0 + l]);
            lincomb_kernel<double><<<grid_for(mm), MV_THREADS, 0, st>>>(mm, k, nv, vs,
                                                                       (double *)bsr_cuda_multivec_data(Y), s, first);
        } else {
            lcvecs<float> vs;
            for (int l = 0; l < nv; l++) vs.v[l] = (const float *)bsr_cuda_multivec_data(V[l0 + l]);
            lincomb_kernel<float><<<grid_for(mm), MV_THREADS, 0, st>>>(mm, k, nv, vs,
                                                                      (float *)bsr_cuda_multivec_data(Y), s, first);
        }
        CU_LAUNCHED("lincomb_kernel");
    }
    Y->where = BSR_ON_DEVICE;
    return BSR_OK;
}

extern "C" bsr_status bsr_cuda_mv_scale(bsr_context *ctx, bsr_multivec *X, const double *a)
{
    return update(ctx, NULL, NULL, NULL, NULL, a, X, NULL, 1, "multivector scale");
}

/* c == NULL means c = 1 (Z += ...), as axpy needs. */
extern "C" bsr_status bsr_cuda_mv_axpbypcz(bsr_context *ctx, const double *a, const bsr_multivec *X,
                                           const double *b, const bsr_multivec *Y, const double *c,
                                           bsr_multivec *Z, const int *done)
{
    return update(ctx, a, X, b, Y, c, Z, done, 0, "multivector update");
}

/* The context's mapped host buffer of reduction results (MV_THREADS
 * doubles) and its device address; none is kept when either step fails. */
static bsr_status map_results(bsr_cuda_ctx *c)
{
    double *h = NULL, *d = NULL;
    CU_TRY(bsr_cu_host_alloc(&h, MV_THREADS * sizeof(double), cudaHostAllocMapped));
    cudaError_t e = bsr_fault_hit(BSR_FAULT_CUDA_CALL) ? cudaErrorUnknown : cudaHostGetDevicePointer((void **)&d, h, 0);
    if (e != cudaSuccess) {
        bsr_cu_free_host(h);
        return bsr_cuda_fail(e, "cudaHostGetDevicePointer", __FILE__, __LINE__);
    }
    c->red_host = h;
    c->red_mapped = d;
    return BSR_OK;
}

/* Grid of the reductions over m = n*k values: fixed by the shape alone, so
 * the summation order is too. */
static int red_grid(int64_t m, int k)
{
    const int L = (MV_THREADS / k) * k;
    const int64_t g64 = (m + L - 1) / L;
    return (int)(g64 < 1 ? 1 : g64 > DOT_BLOCKS ? DOT_BLOCKS : g64);
}

/* The context's reduction buffer for G blocks of np*k partials (its first
 * slot the launch's block counter, zeroed when allocated) and the mapped
 * result buffer. */
static bsr_status red_buffers(bsr_cuda_ctx *c, int G, int np, int k)
{
    size_t need = 1 + (size_t)G * np * k;
    if (need > c->red_cap) {
        if (c->red) { CU_TRY(cudaStreamSynchronize(c->stream)); CU_TRY(bsr_cu_free(c->red)); }
        c->red = NULL; c->red_cap = 0;
        CU_TRY(bsr_cu_malloc(&c->red, need * sizeof(double)));
        CU_TRY(cudaMemsetAsync(c->red, 0, sizeof(double), c->stream));   /* the block counter */
        c->red_cap = need;
    }
    if (!c->red_host) BSR_TRY(map_results(c));
    return BSR_OK;
}

/* Wait for the launch and copy its np*k results out (pair p into out[p]). */
static bsr_status red_results(bsr_cuda_ctx *c, int np, int k, double *const *out)
{
    CU_TRY(cudaStreamSynchronize(c->stream));
    for (int p = 0; p < np; p++) memcpy(out[p], c->red_host + (size_t)p * k, sizeof(double) * k);
    return BSR_OK;
}

/* dot_kernel for element type T. */
template <typename T>
static void dot_launch(bsr_cuda_ctx *c, int G, int64_t m, int k, int np, const bsr_multivec *const *X,
                       const bsr_multivec *const *Y)
{
    dot_pairs<T> v = {};
    for (int p = 0; p < np; p++) {
        v.x[p] = (const T *)bsr_cuda_multivec_data(X[p]);
        v.y[p] = (const T *)bsr_cuda_multivec_data(Y[p]);
    }
    dot_kernel<T><<<G, MV_THREADS, 0, c->stream>>>(m, k, np, v, c->red + 1, (unsigned *)c->red, c->red_mapped);
}

/* out[p][j] = (X[p]_j, Y[p]_j), p < np, from one sweep: one launch (the last
 * block sums the partials and writes the np*k results into mapped host
 * memory) and one synchronization. */
static bsr_status dots(bsr_context *ctx, int np, const bsr_multivec *const *X, const bsr_multivec *const *Y,
                       double *const *out, const char *fn)
{
    BSR_CHECK_ARG(np >= 1 && np <= DOT_MAXP && X && Y && out, "%s: bad arguments", fn);
    BSR_TRY(pick(&ctx, X[0], fn));
    for (int p = 0; p < np; p++) {
        BSR_CHECK_ARG(out[p], "%s: NULL output %d", fn, p);
        BSR_TRY(on_dev(X[p], X[0], fn, "X"));
        BSR_TRY(on_dev(Y[p], X[0], fn, "Y"));
        if (X[p]->prec != X[0]->prec || Y[p]->prec != X[0]->prec)
            return bsr_error(BSR_ERR_ARG, "%s: operands must have the same precision", fn);
    }
    const int k = X[0]->k;
    if (np * k > MV_THREADS) return bsr_error(BSR_ERR_UNSUPPORTED, "%s: %d columns, at most %d", fn, k, MV_THREADS / np);
    const int64_t m = X[0]->n * k;
    const int G = red_grid(m, k);
    bsr_cuda_ctx *c = ctx->cuda;
    BSR_TRY(red_buffers(c, G, np, k));
    if (X[0]->prec == BSR_DOUBLE) dot_launch<double>(c, G, m, k, np, X, Y);
    else dot_launch<float>(c, G, m, k, np, X, Y);
    CU_LAUNCHED("dot_kernel");
    return red_results(c, np, k, out);
}

extern "C" bsr_status bsr_cuda_mv_upd_dot(bsr_context *ctx, int nu, bsr_multivec *const *Z, const double *const *a,
                                          const bsr_multivec *const *X, const double *const *b,
                                          const bsr_multivec *const *Y, const double *const *c, const int *done,
                                          const bsr_multivec *W1, double *out1, const bsr_multivec *W2, double *out2)
{
    const char *fn = "multivector update + dot";
    BSR_CHECK_ARG(Z && (nu == 1 || nu == 2) && Z[0] && (nu == 1 || Z[1]) && a && b && c && X && Y && out1 &&
                      (!W2 || out2), "%s: bad arguments", fn);
    bsr_multivec *D = Z[nu - 1];
    BSR_TRY(pick(&ctx, D, fn));
    const int k = D->k, np = W2 ? 2 : 1;
    colscal s[2];
    memset(s, 0, sizeof s);
    const void *xs[2] = {NULL, NULL}, *ys[2] = {NULL, NULL};
    void *zs[2] = {NULL, NULL};
    for (int u = 0; u < nu; u++) {
        /* a term of coefficient c != 0 reads Z: it must be current (a
         * write-only Z needs only its device copy) */
        BSR_TRY(col_scalars(a[u], b[u], c[u], done, k, &s[u], fn));
        int reads = 0;
        for (int j = 0; j < k; j++) reads |= s[u].c[j] != 0;
        if (reads) BSR_TRY(on_dev(Z[u], D, fn, "Z"));
        else if (!Z[u]->dev || Z[u]->n != D->n || Z[u]->k != k)
            return bsr_error(BSR_ERR_ARG, "%s: Z has no device copy of D's shape", fn);
        if (X[u]) BSR_TRY(on_dev(X[u], D, fn, "X"));
        if (Y[u]) BSR_TRY(on_dev(Y[u], D, fn, "Y"));
        if (Z[u]->prec != D->prec || (X[u] && X[u]->prec != D->prec) || (Y[u] && Y[u]->prec != D->prec))
            return bsr_error(BSR_ERR_ARG, "%s: operands must have the same precision", fn);
        zs[u] = bsr_cuda_multivec_data(Z[u]);
        xs[u] = X[u] ? bsr_cuda_multivec_data(X[u]) : NULL;
        ys[u] = Y[u] ? bsr_cuda_multivec_data(Y[u]) : NULL;
    }
    if (W1) BSR_TRY(on_dev(W1, D, fn, "W1"));
    if (W2) BSR_TRY(on_dev(W2, D, fn, "W2"));
    if ((W1 && W1->prec != D->prec) || (W2 && W2->prec != D->prec))
        return bsr_error(BSR_ERR_ARG, "%s: operands must have the same precision", fn);
    if (np * k > MV_THREADS) return bsr_error(BSR_ERR_UNSUPPORTED, "%s: %d columns, at most %d", fn, k, MV_THREADS / np);
    const int64_t m = D->n * k;
    const int G = red_grid(m, k);
    bsr_cuda_ctx *cc = ctx->cuda;
    BSR_TRY(red_buffers(cc, G, np, k));
    unsigned *count = (unsigned *)cc->red;
    double *part = cc->red + 1, *res = cc->red_mapped;
    const void *w1 = W1 ? bsr_cuda_multivec_data(W1) : NULL, *w2 = W2 ? bsr_cuda_multivec_data(W2) : NULL;
    if (D->prec == BSR_DOUBLE)
        upd_dot_kernel<double><<<G, MV_THREADS, 0, cc->stream>>>(
            m, k, nu, (const double *)xs[0], (const double *)ys[0], (double *)zs[0], (const double *)xs[1],
            (const double *)ys[1], (double *)zs[1], s[0], s[1], (const double *)w1, (const double *)w2, part, count,
            res);
    else
        upd_dot_kernel<float><<<G, MV_THREADS, 0, cc->stream>>>(
            m, k, nu, (const float *)xs[0], (const float *)ys[0], (float *)zs[0], (const float *)xs[1],
            (const float *)ys[1], (float *)zs[1], s[0], s[1], (const float *)w1, (const float *)w2, part, count, res);
    CU_LAUNCHED("upd_dot_kernel");
    for (int u = 0; u < nu; u++) Z[u]->where = BSR_ON_DEVICE;
    double *const outs[2] = {out1, out2};
    return red_results(cc, np, k, outs);
}

extern "C" bsr_status bsr_cuda_mv_dot(bsr_context *ctx, const bsr_multivec *X, const bsr_multivec *Y,
                                      double *out)
{
    return dots(ctx, 1, &X, &Y, &out, "multivector dot");
}

extern "C" bsr_status bsr_cuda_mv_dotp(bsr_context *ctx, int np, const bsr_multivec *const *X,
                                       const bsr_multivec *const *Y, double *const *out)
{
    return dots(ctx, np, X, Y, out, "multivector dotp");
}

/* relayout_kernel<T, TOCOL> of n x k values of precision prec on ctx's stream. */
template <bool TOCOL>
static bsr_status relayout(bsr_context *ctx, bsr_precision prec, int64_t n, int k, const void *src, void *dst)
{
    if (n * k == 0) return BSR_OK;
    cudaStream_t st = ctx->cuda->stream;
    if (prec == BSR_DOUBLE) relayout_kernel<double, TOCOL><<<grid_for(n * k), MV_THREADS, 0, st>>>(n, k, (const double *)src, (double *)dst);
    else relayout_kernel<float, TOCOL><<<grid_for(n * k), MV_THREADS, 0, st>>>(n, k, (const float *)src, (float *)dst);
    CU_LAUNCHED("relayout_kernel");
    return BSR_OK;
}

bsr_status bsr_cuda_to_colmajor(bsr_context *ctx, bsr_precision prec, int64_t n, int k,
                                           const void *rowint, void *col)
{
    return relayout<true>(ctx, prec, n, k, rowint, col);
}

bsr_status bsr_cuda_from_colmajor(bsr_context *ctx, bsr_precision prec, int64_t n, int k,
                                             const void *col, void *rowint)
{
    return relayout<false>(ctx, prec, n, k, col, rowint);
}

/* bsr_ctx_gram's partial sums: block c sums the rows of chunk c, one thread
 * an entry (p <= q; the others 0), rows in order from +0, each product and
 * sum rounded apart: the host's bits (src/context.c, host_gram). */
__global__ void gram_part_kernel(int64_t n, int K, const double *x, double *part)
{
    const int64_t c = blockIdx.x, r0 = c * BSR_GRAM_CHUNK;
    const int64_t r1 = r0 + BSR_GRAM_CHUNK < n ? r0 + BSR_GRAM_CHUNK : n;
    for (int e = threadIdx.x; e < K * K; e += blockDim.x) {
        const int p = e / K, q = e % K;
        double s = 0.0;
        if (q >= p)
            for (int64_t r = r0; r < r1; r++) s = __dadd_rn(s, __dmul_rn(x[r * K + p], x[r * K + q]));
        part[c * K * K + e] = s;
    }
}

/* G = the chunks' sums added in chunk order from +0. */
__global__ void gram_sum_kernel(int64_t nch, int K, const double *part, double *G)
{
    for (int e = threadIdx.x; e < K * K; e += blockDim.x) {
        double s = 0.0;
        for (int64_t c = 0; c < nch; c++) s = __dadd_rn(s, part[c * K * K + e]);
        G[e] = s;
    }
}

extern "C" bsr_status bsr_cuda_mv_gram(bsr_context *ctx, const bsr_multivec *X, double *G)
{
    const char *fn = "multivector Gram matrix";
    BSR_TRY(pick(&ctx, X, fn));
    BSR_TRY(on_dev(X, X, fn, "X"));
    const int K = X->k;
    const int64_t nch = (X->n + BSR_GRAM_CHUNK - 1) / BSR_GRAM_CHUNK;
    void *scr = NULL;   /* the chunks' sums, then G */
    BSR_TRY(bsr_cuda_scratch(ctx, sizeof(double) * (size_t)(nch + 1) * K * K, &scr));
    double *buf = (double *)scr;
    cudaStream_t st = ctx->cuda->stream;
    if (nch > 0) {
        gram_part_kernel<<<(unsigned)nch, MV_THREADS, 0, st>>>(X->n, K, (const double *)bsr_cuda_multivec_data(X), buf);
        CU_LAUNCHED("gram_part_kernel");
    }
    gram_sum_kernel<<<1, MV_THREADS, 0, st>>>(nch, K, buf, buf + nch * K * K);
    CU_LAUNCHED("gram_sum_kernel");
    CU_TRY(cudaMemcpyAsync(G, buf + nch * K * K, sizeof(double) * K * K, cudaMemcpyDeviceToHost, st));
    CU_TRY(cudaStreamSynchronize(st));
    return BSR_OK;
}

/* bsr_ctx_rsolve: one thread a row, with host_rsolve's roundings. */
__global__ void rsolve_kernel(int64_t n, int K, const double *R, double *x)
{
    for (int64_t r = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; r < n; r += (int64_t)gridDim.x * blockDim.x) {
        double *xr = x + r * K;
        for (int q = 0; q < K; q++) {
            double v = xr[q];
            for (int p = 0; p < q; p++) v = __dsub_rn(v, __dmul_rn(xr[p], R[p * K + q]));
            xr[q] = __ddiv_rn(v, R[q * K + q]);
        }
    }
}

extern "C" bsr_status bsr_cuda_mv_rsolve(bsr_context *ctx, bsr_multivec *X, const double *R)
{
    const char *fn = "multivector triangular solve";
    BSR_TRY(pick(&ctx, X, fn));
    BSR_TRY(on_dev(X, X, fn, "X"));
    const int K = X->k;
    void *dR = NULL;
    BSR_TRY(bsr_cuda_scratch(ctx, sizeof(double) * K * K, &dR));
    cudaStream_t st = ctx->cuda->stream;
    /* from pageable memory: R is staged before the call returns */
    CU_TRY(cudaMemcpyAsync(dR, R, sizeof(double) * K * K, cudaMemcpyHostToDevice, st));
    if (X->n > 0) {
        rsolve_kernel<<<grid_for(X->n), MV_THREADS, 0, st>>>(X->n, K, (const double *)dR, (double *)bsr_cuda_multivec_data(X));
        CU_LAUNCHED("rsolve_kernel");
    }
    X->where = BSR_ON_DEVICE;
    return BSR_OK;
}
