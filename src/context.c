/* SPDX-License-Identifier: BSD-3-Clause */
/* Execution contexts: backend selection, residency bookkeeping and the
 * bsr_ctx_* entry points.  The CUDA work itself is in kernels/ (or the
 * stand-ins of kernels/entry_points.def); this file decides where an
 * operation runs and checks that its operands are there. */
#include "internal.h"
#include <math.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

static const char *const kernel_names[BSR_KERNEL_COUNT] = {
    "auto", "s1", "omp", "p11", "p12", "p13", "p14", "warp", "rowj", "cusparse"};

const char *bsr_kernel_name(bsr_kernel k)
{
    return (unsigned)k < BSR_KERNEL_COUNT ? kernel_names[k] : "?";
}

bsr_status bsr_kernel_parse(const char *name, bsr_kernel *k)
{
    BSR_CHECK_ARG(name && k, "bsr_kernel_parse: NULL argument");
    for (int i = 0; i < BSR_KERNEL_COUNT; i++)
        if (!strcmp(name, kernel_names[i])) { *k = (bsr_kernel)i; return BSR_OK; }
    return bsr_error(BSR_ERR_ARG, "unknown SpMM kernel '%s' (auto, s1, omp, p11, p12, p13, p14, warp, rowj, cusparse)", name);
}

/* All our kernels are atomic-free with fixed summation orders; cuSPARSE makes no promise. */
int bsr_kernel_deterministic(bsr_kernel k) { return k != BSR_KERNEL_CUSPARSE; }

static int is_gpu_kernel(bsr_kernel k) { return k >= BSR_KERNEL_P11 && k <= BSR_KERNEL_CUSPARSE; }

int bsr_device_count(void) { return bsr_cuda_device_count(); }

bsr_status bsr_context_create(bsr_context **ctx, bsr_backend backend, int device, void *stream)
{
    BSR_CHECK_ARG(ctx, "bsr_context_create: ctx is NULL");
    *ctx = NULL;
    BSR_CHECK_ARG(backend == BSR_BACKEND_CPU || backend == BSR_BACKEND_CUDA,
                  "bsr_context_create: unknown backend %d", (int)backend);
    bsr_context *c = bsr_calloc(1, sizeof *c, "bsr_context");
    if (!c) return BSR_ERR_NOMEM;
    c->backend = backend;
    bsr_threads_default();
    if (backend == BSR_BACKEND_CPU) {
        int nt = 1;
#ifdef _OPENMP
        nt = omp_get_max_threads();
#endif
        snprintf(c->desc, sizeof c->desc, "cpu (%d OpenMP threads, teams of %d)", nt, bsr_team_size());
        *ctx = c;
        return BSR_OK;
    }
    c->device = device;
    bsr_status s = bsr_cuda_context_init(c, device, stream);
    if (s != BSR_OK) { free(c); return s; }
    *ctx = c;
    return BSR_OK;
}

void bsr_context_destroy(bsr_context *ctx)
{
    if (!ctx) return;
    if (ctx->cuda) bsr_cuda_context_fini(ctx);
    free(ctx);
}

bsr_backend bsr_context_backend(const bsr_context *ctx) { return ctx ? ctx->backend : BSR_BACKEND_CPU; }
const char *bsr_context_describe(const bsr_context *ctx) { return ctx ? ctx->desc : "(null)"; }

bsr_status bsr_context_sync(bsr_context *ctx)
{
    BSR_CHECK_ARG(ctx, "bsr_context_sync: ctx is NULL");
    return ctx->backend == BSR_BACKEND_CUDA ? bsr_cuda_sync(ctx) : BSR_OK;
}

/* ---- residency ------------------------------------------------------------- */

bsr_status bsr_matrix_upload(bsr_context *ctx, bsr_matrix *A)
{
    BSR_CHECK_ARG(ctx && A, "bsr_matrix_upload: NULL argument");
    if (ctx->backend != BSR_BACKEND_CUDA) return BSR_OK;
    return bsr_cuda_matrix_upload(ctx, A);
}

int bsr_matrix_on_device(const bsr_matrix *A) { return A && A->dev && !A->dev_stale; }
int bsr_multivec_on_device(const bsr_multivec *X) { return X && X->dev && (X->where & BSR_ON_DEVICE); }

bsr_status bsr_multivec_create_device(bsr_context *ctx, bsr_multivec **X, int64_t n, int k,
                                      bsr_precision prec)
{
    BSR_CHECK_ARG(ctx && X, "bsr_multivec_create_device: NULL argument");
    if (ctx->backend != BSR_BACKEND_CUDA) return bsr_multivec_create(X, n, k, prec);
    *X = NULL;
    BSR_CHECK_ARG(n >= 0 && k >= 1, "bsr_multivec_create_device: bad shape %lld x %d", (long long)n, k);
    BSR_CHECK_ARG(prec == BSR_DOUBLE || prec == BSR_FLOAT, "bsr_multivec_create_device: bad precision");
    bsr_multivec *V = bsr_calloc(1, sizeof *V, "bsr_multivec");
    if (!V) return BSR_ERR_NOMEM;
    V->n = n; V->k = k; V->prec = prec; V->where = 0;
    bsr_status s = bsr_cuda_multivec_alloc(ctx, V);
    if (s != BSR_OK) { bsr_multivec_destroy(V); return s; }
    V->where = BSR_ON_DEVICE;
    *X = V;
    return BSR_OK;
}

bsr_status bsr_multivec_upload(bsr_context *ctx, bsr_multivec *X)
{
    BSR_CHECK_ARG(ctx && X, "bsr_multivec_upload: NULL argument");
    if (ctx->backend != BSR_BACKEND_CUDA) return BSR_OK;
    if (!X->data || !(X->where & BSR_ON_HOST))
        return bsr_error(BSR_ERR_ARG, "bsr_multivec_upload: X has no current host data");
    BSR_TRY(bsr_cuda_multivec_upload(ctx, X));
    X->where = BSR_ON_HOST | BSR_ON_DEVICE;
    return BSR_OK;
}

bsr_status bsr_multivec_download(bsr_context *ctx, bsr_multivec *X)
{
    BSR_CHECK_ARG(ctx && X, "bsr_multivec_download: NULL argument");
    if (ctx->backend != BSR_BACKEND_CUDA || !bsr_multivec_on_device(X)) {
        if (X->data && (X->where & BSR_ON_HOST)) return BSR_OK;
        return bsr_error(BSR_ERR_ARG, "bsr_multivec_download: X has no current copy anywhere");
    }
    if (!X->data) {
        X->data = bsr_calloc((size_t)X->n * X->k, bsr_precision_size(X->prec), "multivector host data");
        if (!X->data) return BSR_ERR_NOMEM;
    }
    BSR_TRY(bsr_cuda_multivec_download(ctx, X));
    X->where = BSR_ON_HOST | BSR_ON_DEVICE;
    return BSR_OK;
}

/* ---- SpMM ---------------------------------------------------------------------- */

bsr_kernel bsr_kernel_auto(const bsr_context *ctx, const bsr_matrix *A, int k)
{
    if (!ctx || ctx->backend == BSR_BACKEND_CPU) return BSR_KERNEL_OMP;
    return bsr_cuda_kernel_auto(A, k);
}

/* Convenience path of bsr_ctx_spmm on CUDA: operands not on the device are
 * brought there (mirrors kept), Y comes back to the host if it started there. */
static bsr_status spmm_cuda(bsr_context *ctx, bsr_kernel kernel, double alpha, const bsr_matrix *A,
                            const bsr_multivec *X, double beta, bsr_multivec *Y)
{
    if (A->b > BSR_MAX_BLOCK)
        return bsr_error(BSR_ERR_UNSUPPORTED, "bsr_ctx_spmm: GPU kernels support blocks 1..%d, A has %d", BSR_MAX_BLOCK, A->b);
    if (!bsr_matrix_on_device(A)) BSR_TRY(bsr_cuda_matrix_upload(ctx, (bsr_matrix *)A));
    if (!bsr_multivec_on_device(X)) BSR_TRY(bsr_multivec_upload(ctx, (bsr_multivec *)X));
    int y_host = !bsr_multivec_on_device(Y);
    if (y_host) {
        if (beta != 0) BSR_TRY(bsr_multivec_upload(ctx, Y));
        else BSR_TRY(bsr_cuda_multivec_alloc(ctx, Y));
    }
    BSR_TRY(bsr_cuda_spmm(ctx, kernel, alpha, A, X, beta, Y));
    Y->where = BSR_ON_DEVICE;
    if (y_host) BSR_TRY(bsr_multivec_download(ctx, Y));
    return BSR_OK;
}

bsr_status bsr_ctx_spmm(bsr_context *ctx, bsr_kernel kernel, double alpha, const bsr_matrix *A,
                        const bsr_multivec *X, double beta, bsr_multivec *Y)
{
    BSR_CHECK_ARG(ctx, "bsr_ctx_spmm: ctx is NULL");
    BSR_CHECK_ARG((unsigned)kernel < BSR_KERNEL_COUNT, "bsr_ctx_spmm: unknown kernel %d", (int)kernel);
    BSR_TRY(bsr_spmm_check("bsr_ctx_spmm", A, X, Y));
    if (ctx->backend == BSR_BACKEND_CPU) {
        if (is_gpu_kernel(kernel))
            return bsr_error(BSR_ERR_ARG, "bsr_ctx_spmm: kernel %s needs a CUDA context", bsr_kernel_name(kernel));
        return bsr_spmm_cpu(kernel == BSR_KERNEL_S1 ? BSR_SPMM_S1 : BSR_SPMM_OMP, alpha, A, X, beta, Y);
    }
    if (kernel == BSR_KERNEL_S1 || kernel == BSR_KERNEL_OMP)
        return bsr_error(BSR_ERR_ARG, "bsr_ctx_spmm: CPU kernel %s on a CUDA context", bsr_kernel_name(kernel));
    return spmm_cuda(ctx, kernel, alpha, A, X, beta, Y);
}

/* ---- multivector operations ------------------------------------------------------ */

/* Checks that every non-NULL operand is current where ctx computes, and that
 * shapes agree with the first. */
static bsr_status where_ok(const bsr_context *ctx, const char *fn, const bsr_multivec *V0,
                           const bsr_multivec *V1, const bsr_multivec *V2)
{
    const bsr_multivec *v[3] = {V0, V1, V2};
    BSR_CHECK_ARG(ctx && V0, "%s: NULL argument", fn);
    for (int i = 1; i < 3; i++)
        if (v[i] && (v[i]->n != V0->n || v[i]->k != V0->k))
            return bsr_error(BSR_ERR_SIZE, "%s: shapes differ (%lld x %d vs %lld x %d)", fn,
                             (long long)V0->n, V0->k, (long long)v[i]->n, v[i]->k);
    for (int i = 0; i < 3; i++) {
        if (!v[i]) continue;
        if (ctx->backend == BSR_BACKEND_CUDA && !bsr_multivec_on_device(v[i]))
            return bsr_error(BSR_ERR_ARG, "%s: operand %d is not current on the device (bsr_multivec_upload it)", fn, i + 1);
        if (ctx->backend == BSR_BACKEND_CPU && (!v[i]->data || !(v[i]->where & BSR_ON_HOST)))
            return bsr_error(BSR_ERR_ARG, "%s: operand %d is not current on the host (bsr_multivec_download it)", fn, i + 1);
    }
    return BSR_OK;
}

/* Host element access in double, for the CPU versions of the fused updates. */
static inline double hget(const bsr_multivec *X, int64_t e)
{
    return X->prec == BSR_DOUBLE ? ((const double *)X->data)[e] : ((const float *)X->data)[e];
}

static inline void hset(bsr_multivec *X, int64_t e, double v)
{
    if (X->prec == BSR_DOUBLE) ((double *)X->data)[e] = v;
    else ((float *)X->data)[e] = (float)v;
}

bsr_status bsr_ctx_fill(bsr_context *ctx, bsr_multivec *X, double value)
{
    BSR_TRY(where_ok(ctx, "bsr_ctx_fill", X, NULL, NULL));
    return ctx->backend == BSR_BACKEND_CUDA ? bsr_cuda_mv_fill(ctx, X, value) : bsr_multivec_fill(X, value);
}

bsr_status bsr_ctx_copy(bsr_context *ctx, bsr_multivec *Y, const bsr_multivec *X)
{
    BSR_TRY(where_ok(ctx, "bsr_ctx_copy", Y, X, NULL));
    return ctx->backend == BSR_BACKEND_CUDA ? bsr_cuda_mv_copy(ctx, Y, X) : bsr_multivec_copy(Y, X);
}

bsr_status bsr_ctx_axpy(bsr_context *ctx, bsr_multivec *Y, const double *a, const bsr_multivec *X)
{
    BSR_TRY(where_ok(ctx, "bsr_ctx_axpy", Y, X, NULL));
    BSR_CHECK_ARG(a, "bsr_ctx_axpy: a is NULL");
    return ctx->backend == BSR_BACKEND_CUDA ? bsr_cuda_mv_axpbypcz(ctx, a, X, NULL, NULL, NULL, Y, NULL)
                                            : bsr_multivec_axpy(Y, a, X);
}

bsr_status bsr_ctx_scale(bsr_context *ctx, bsr_multivec *X, const double *a)
{
    BSR_TRY(where_ok(ctx, "bsr_ctx_scale", X, NULL, NULL));
    BSR_CHECK_ARG(a, "bsr_ctx_scale: a is NULL");
    return ctx->backend == BSR_BACKEND_CUDA ? bsr_cuda_mv_scale(ctx, X, a) : bsr_multivec_scale(X, a);
}

/* Z = a X + b Y + c Z on the host, column by column (Y NULL: Z = a X + c Z;
 * c[j] = 0: Z's old values unread), columns with done[j] set untouched. */
static void host_axpbypcz(const double *a, const bsr_multivec *X, const double *b, const bsr_multivec *Y,
                          const double *c, bsr_multivec *Z, const int *done)
{
    const int k = Z->k;
#pragma omp parallel for schedule(static) if (bsr_par_worth(Z->n * k)) num_threads(bsr_team_size())
    for (int64_t i = 0; i < Z->n; i++)
        for (int j = 0; j < k; j++) {
            if (done && done[j]) continue;
            int64_t e = i * k + j;
            double v = Y ? a[j] * hget(X, e) + b[j] * hget(Y, e) : a[j] * hget(X, e);
            hset(Z, e, c[j] == 0 ? v : v + c[j] * hget(Z, e));
        }
}

bsr_status bsr_ctx_axpbypcz(bsr_context *ctx, const double *a, const bsr_multivec *X,
                            const double *b, const bsr_multivec *Y, const double *c,
                            bsr_multivec *Z, const int *done)
{
    BSR_TRY(where_ok(ctx, "bsr_ctx_axpbypcz", Z, X, Y));
    BSR_CHECK_ARG(a && b && c && X && Y, "bsr_ctx_axpbypcz: NULL argument");
    if (X->prec != Z->prec || Y->prec != Z->prec)
        return bsr_error(BSR_ERR_ARG, "bsr_ctx_axpbypcz: X, Y and Z must have the same precision");
    if (ctx->backend == BSR_BACKEND_CUDA) return bsr_cuda_mv_axpbypcz(ctx, a, X, b, Y, c, Z, done);
    host_axpbypcz(a, X, b, Y, c, Z, done);
    return BSR_OK;
}

bsr_status bsr_ctx_axpby(bsr_context *ctx, const double *a, const bsr_multivec *X, const double *b,
                         bsr_multivec *Y, const int *done)
{
    BSR_TRY(where_ok(ctx, "bsr_ctx_axpby", Y, X, NULL));
    BSR_CHECK_ARG(a && b && X, "bsr_ctx_axpby: NULL argument");
    if (X->prec != Y->prec)
        return bsr_error(BSR_ERR_ARG, "bsr_ctx_axpby: X and Y must have the same precision");
    if (ctx->backend == BSR_BACKEND_CUDA) return bsr_cuda_mv_axpbypcz(ctx, a, X, NULL, NULL, b, Y, done);
    host_axpbypcz(a, X, NULL, NULL, b, Y, done);
    return BSR_OK;
}

/* bsr_ctx_gram on the host: a team over the chunks, each chunk's sums in a
 * slice of its own, the slices added in chunk order. */
static bsr_status host_gram(const bsr_multivec *X, double *G)
{
    const int64_t N = X->n, nch = (N + BSR_GRAM_CHUNK - 1) / BSR_GRAM_CHUNK;
    const int K = X->k;
    const double *xv = X->data;
    double *part = bsr_calloc((size_t)(nch ? nch : 1) * K * K, sizeof(double), "Gram matrix's partial sums");
    if (!part) return BSR_ERR_NOMEM;
    #pragma omp parallel for schedule(static) if (bsr_par_worth(N * K * K)) num_threads(bsr_team_size())
    for (int64_t c = 0; c < nch; c++) {
        double *g = part + (size_t)c * K * K;
        const int64_t r1 = (c + 1) * BSR_GRAM_CHUNK < N ? (c + 1) * BSR_GRAM_CHUNK : N;
        for (int64_t r = c * BSR_GRAM_CHUNK; r < r1; r++) {
            const double *x = xv + r * K;
            for (int p = 0; p < K; p++)
                for (int q = p; q < K; q++) g[p * K + q] += x[p] * x[q];
        }
    }
    for (int e = 0; e < K * K; e++) G[e] = 0;
    for (int64_t c = 0; c < nch; c++)
        for (int e = 0; e < K * K; e++) G[e] += part[(size_t)c * K * K + e];
    free(part);
    return BSR_OK;
}

/* bsr_ctx_rsolve on the host. */
static void host_rsolve(bsr_multivec *X, const double *R)
{
    const int K = X->k;
    double *xv = X->data;
    #pragma omp parallel for schedule(static) if (bsr_par_worth(X->n * K * K)) num_threads(bsr_team_size())
    for (int64_t r = 0; r < X->n; r++) {
        double *x = xv + r * K;
        for (int q = 0; q < K; q++) {
            double v = x[q];
            for (int p = 0; p < q; p++) v -= x[p] * R[p * K + q];
            x[q] = v / R[q * K + q];
        }
    }
    X->where = BSR_ON_HOST;
}

bsr_status bsr_ctx_gram(bsr_context *ctx, const bsr_multivec *X, double *G)
{
    BSR_TRY(where_ok(ctx, "bsr_ctx_gram", X, NULL, NULL));
    BSR_CHECK_ARG(G, "bsr_ctx_gram: G is NULL");
    BSR_CHECK_ARG(X->prec == BSR_DOUBLE && X->k >= 1 && X->k <= 2 * BSR_COARSE_MAX,
                  "bsr_ctx_gram: X must be double with 1..%d columns", 2 * BSR_COARSE_MAX);
    return ctx->backend == BSR_BACKEND_CUDA ? bsr_cuda_mv_gram(ctx, X, G) : host_gram(X, G);
}

bsr_status bsr_ctx_rsolve(bsr_context *ctx, bsr_multivec *X, const double *R)
{
    BSR_TRY(where_ok(ctx, "bsr_ctx_rsolve", X, NULL, NULL));
    BSR_CHECK_ARG(R, "bsr_ctx_rsolve: R is NULL");
    BSR_CHECK_ARG(X->prec == BSR_DOUBLE && X->k >= 1 && X->k <= 2 * BSR_COARSE_MAX,
                  "bsr_ctx_rsolve: X must be double with 1..%d columns", 2 * BSR_COARSE_MAX);
    if (ctx->backend == BSR_BACKEND_CUDA) return bsr_cuda_mv_rsolve(ctx, X, R);
    host_rsolve(X, R);
    return BSR_OK;
}

bsr_status bsr_ctx_dot(bsr_context *ctx, const bsr_multivec *X, const bsr_multivec *Y, double *out)
{
    BSR_TRY(where_ok(ctx, "bsr_ctx_dot", X, Y, NULL));
    BSR_CHECK_ARG(out, "bsr_ctx_dot: out is NULL");
    return ctx->backend == BSR_BACKEND_CUDA ? bsr_cuda_mv_dot(ctx, X, Y, out) : bsr_multivec_dot(X, Y, out);
}

bsr_status bsr_ctx_norm2(bsr_context *ctx, const bsr_multivec *X, double *out)
{
    BSR_TRY(where_ok(ctx, "bsr_ctx_norm2", X, NULL, NULL));
    BSR_CHECK_ARG(out, "bsr_ctx_norm2: out is NULL");
    if (ctx->backend != BSR_BACKEND_CUDA) return bsr_multivec_norm2(X, out);
    return bsr_cuda_norm2(ctx, X, out);
}

bsr_status bsr_cuda_norm2(bsr_context *ctx, const bsr_multivec *X, double *out)
{
    if (!ctx) ctx = bsr_cuda_multivec_context(X);
    BSR_TRY(bsr_cuda_mv_dot(ctx, X, X, out));
    const int k = X->k;
    double *sc = bsr_malloc(sizeof(double) * 2 * (size_t)k, "norm scales");
    if (!sc) return BSR_ERR_NOMEM;
    double *d = sc + k;
    bsr_status st = BSR_OK;
    const int redo = bsr_norm_scales(out, k, sc);
    if (X->prec != BSR_DOUBLE) { /* float columns summed in double never leave the range */
        for (int j = 0; j < k; j++) sc[j] = 1;
    } else if (redo) {
        /* the plain device ops on a scaled scratch copy: no kernel of its own */
        bsr_multivec *T = NULL;
        st = bsr_multivec_create_device(ctx, &T, X->n, k, X->prec);
        if (!st) st = bsr_cuda_mv_copy(ctx, T, X);
        if (!st) st = bsr_cuda_mv_scale(ctx, T, sc);
        if (!st) st = bsr_cuda_mv_dot(ctx, T, T, d);
        bsr_multivec_destroy(T);
        for (int j = 0; !st && j < k; j++)
            if (sc[j] != 1) out[j] = d[j];
    }
    for (int j = 0; !st && j < k; j++) out[j] = sqrt(out[j]) / sc[j];
    free(sc);
    return st;
}
