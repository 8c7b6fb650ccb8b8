/* SPDX-License-Identifier: BSD-3-Clause */
/* CUDA backend: contexts, device mirrors, transfers, error reporting and the
 * benchmark's timing helpers. */
#include "cuda_internal.h"
#include <string.h>
#include <algorithm>

extern "C" bsr_status bsr_cuda_fail(cudaError_t e, const char *call, const char *file, int line)
{
    const char *base = strrchr(file, '/');
    (void)cudaGetLastError(); /* clear a non-sticky error so the objects stay usable */
    return bsr_error(e == cudaErrorMemoryAllocation ? BSR_ERR_NOMEM : BSR_ERR_CUDA,
                     "%s:%d: %s: %s (%s)", base ? base + 1 : file, line, call,
                     cudaGetErrorString(e), cudaGetErrorName(e));
}

extern "C" bsr_status bsr_cusparse_fail(cusparseStatus_t e, const char *call, const char *file, int line)
{
    const char *base = strrchr(file, '/');
    return bsr_error(e == CUSPARSE_STATUS_ALLOC_FAILED ? BSR_ERR_NOMEM
                     : e == CUSPARSE_STATUS_NOT_SUPPORTED ? BSR_ERR_UNSUPPORTED : BSR_ERR_CUDA,
                     "%s:%d: %s: cuSPARSE %s", base ? base + 1 : file, line, call,
                     cusparseGetErrorString(e));
}

extern "C" int bsr_cuda_device_count(void)
{
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) { (void)cudaGetLastError(); return 0; }
    return n;
}

extern "C" bsr_status bsr_cuda_enter(bsr_context *ctx)
{
    if (!ctx || !ctx->cuda) return bsr_error(BSR_ERR_ARG, "not a CUDA context");
    int cur = -1;
    CU_TRY(cudaGetDevice(&cur));
    if (cur != ctx->cuda->device) CU_TRY(cudaSetDevice(ctx->cuda->device));
    return BSR_OK;
}

extern "C" bsr_status bsr_cuda_scratch(bsr_context *ctx, size_t bytes, void **p)
{
    bsr_cuda_ctx *c = ctx->cuda;
    if (bytes > c->scratch_cap) {
        if (c->scratch) { CU_TRY(cudaStreamSynchronize(c->stream)); CU_TRY(bsr_cu_free(c->scratch)); }
        c->scratch = NULL; c->scratch_cap = 0;
        CU_TRY(bsr_cu_malloc(&c->scratch, bytes));
        c->scratch_cap = bytes;
    }
    *p = c->scratch;
    return BSR_OK;
}

static void ctx_free(bsr_cuda_ctx *c)
{
    if (c->stream) cudaStreamSynchronize(c->stream);
    if (c->red) bsr_cu_free(c->red);
    if (c->red_host) bsr_cu_free_host(c->red_host);
    if (c->scratch) bsr_cu_free(c->scratch);
    bsr_cuda_xfer_free(c);
    if (c->descr) cusparseDestroyMatDescr(c->descr);
    if (c->sparse) cusparseDestroy(c->sparse);
    if (c->own_stream && c->stream) cudaStreamDestroy(c->stream);
    (void)cudaGetLastError();
    free(c);
}

/* Everything but the allocation of c, so that a failure can free what exists. */
static bsr_status ctx_setup(bsr_context *ctx, bsr_cuda_ctx *c, int device, void *stream)
{
    int n = bsr_cuda_device_count();
    if (n == 0) return bsr_error(BSR_ERR_NODEVICE, "bsr_context_create: no usable CUDA device");
    if (device < 0 || device >= n)
        return bsr_error(BSR_ERR_NODEVICE, "bsr_context_create: CUDA device %d requested, %d present", device, n);
    c->device = device;
    CU_TRY(cudaSetDevice(device));
    cudaDeviceProp p;
    CU_TRY(cudaGetDeviceProperties(&p, device));
    c->nsm = p.multiProcessorCount;
    c->smem_optin = (int)p.sharedMemPerBlockOptin;
    if (stream) c->stream = (cudaStream_t)stream;
    else { CU_TRY(cudaStreamCreateWithFlags(&c->stream, cudaStreamNonBlocking)); c->own_stream = 1; }
    CUSP_TRY(cusparseCreate(&c->sparse));
    CUSP_TRY(cusparseSetStream(c->sparse, c->stream));
    CUSP_TRY(cusparseCreateMatDescr(&c->descr));
    CUSP_TRY(cusparseSetMatType(c->descr, CUSPARSE_MATRIX_TYPE_GENERAL));
    CUSP_TRY(cusparseSetMatIndexBase(c->descr, CUSPARSE_INDEX_BASE_ZERO));
    bsr_cuda_xfer_init(c);
    snprintf(ctx->desc, sizeof ctx->desc, "cuda:%d %.96s (%d SMs, %.0f GiB, cc %d.%d)", device, p.name,
             p.multiProcessorCount, p.totalGlobalMem / 1073741824.0, p.major, p.minor);
    return BSR_OK;
}

/* Device memory in use on the current device (total less free), for the
 * profile marks; 0 when the runtime cannot say. */
static double device_used(void)
{
    size_t fr = 0, tot = 0;
    return cudaMemGetInfo(&fr, &tot) == cudaSuccess ? (double)(tot - fr) : 0.0;
}

extern "C" bsr_status bsr_cuda_context_init(bsr_context *ctx, int device, void *stream)
{
    bsr_cuda_ctx *c = (bsr_cuda_ctx *)bsr_calloc(1, sizeof *c, "CUDA context");
    if (!c) return BSR_ERR_NOMEM;
    bsr_status s = ctx_setup(ctx, c, device, stream);
    if (s != BSR_OK) { ctx_free(c); return s; }
    ctx->cuda = c;
    bsr_prof_set_memory(device_used);
    return BSR_OK;
}

extern "C" void bsr_cuda_mem_bytes(const bsr_context *ctx, size_t *live, size_t *peak, int reset_peak)
{
    if (live) *live = 0;
    if (peak) *peak = 0;
    if (ctx && ctx->cuda) bsr_cu_mem_bytes(ctx->cuda->device, live, peak, reset_peak);
}

extern "C" void bsr_cuda_context_fini(bsr_context *ctx)
{
    if (!ctx->cuda) return;
    cudaSetDevice(ctx->cuda->device);
    ctx_free(ctx->cuda);
    ctx->cuda = NULL;
}

extern "C" bsr_status bsr_cuda_sync(bsr_context *ctx)
{
    BSR_TRY(bsr_cuda_enter(ctx));
    CU_TRY(cudaStreamSynchronize(ctx->cuda->stream));
    return BSR_OK;
}

/* ---- matrices ------------------------------------------------------------------ */

/* free_fn(*slot) with `device` current, then the caller's device again,
 * its errors cleared (a release cannot fail); then *slot itself, emptied. */
static void release_on(void **slot, int device, void (*free_fn)(void *))
{
    int cur = -1;
    cudaGetDevice(&cur);
    cudaSetDevice(device);
    free_fn(*slot);
    if (cur >= 0) cudaSetDevice(cur);
    (void)cudaGetLastError();
    free(*slot);
    *slot = NULL;
}

/* A device matrix's arrays (cudaFree synchronises). */
static void dmat_free(void *p)
{
    bsr_dev_matrix *d = (bsr_dev_matrix *)p;
    bsr_cu_free(d->rowptr); bsr_cu_free(d->colind); bsr_cu_free(d->val);
    bsr_spmm_sell_release(d);
}

extern "C" void bsr_cuda_matrix_release(bsr_matrix *A)
{
    const bsr_dev_matrix *d = (const bsr_dev_matrix *)A->dev;
    if (d) release_on(&A->dev, d->device, dmat_free);
}

static bsr_status matrix_alloc(bsr_context *ctx, bsr_matrix *A, bsr_dev_matrix *d)
{
    size_t vb = (size_t)A->nnzb * A->b * A->b * bsr_precision_size(A->prec);
    CU_TRY(bsr_cu_malloc(&d->rowptr, sizeof(int) * ((size_t)A->nbrows + 1)));
    CU_TRY(bsr_cu_malloc(&d->colind, sizeof(int) * ((size_t)A->nnzb > 0 ? A->nnzb : 1)));
    CU_TRY(bsr_cu_malloc(&d->val, vb > 0 ? vb : 8));
    cudaStream_t st = ctx->cuda->stream;
    CU_TRY(cudaMemcpyAsync(d->rowptr, A->rowptr, sizeof(int) * ((size_t)A->nbrows + 1), cudaMemcpyHostToDevice, st));
    BSR_TRY(bsr_cuda_h2d(ctx, d->colind, A->colind, sizeof(int) * (size_t)A->nnzb));
    /* row statistics: P12's limit check and the kernels' shape choices */
    d->maxlen = 0; d->maxrow = 0; d->nempty = 0;
    for (int i = 0; i < A->nbrows; i++) {
        int len = A->rowptr[i + 1] - A->rowptr[i];
        if (len > d->maxlen) { d->maxlen = len; d->maxrow = i; }
        d->nempty += len == 0;
    }
    d->meanlen = A->nbrows ? (double)A->nnzb / A->nbrows : 0;
    return BSR_OK;
}

extern "C" bsr_status bsr_cuda_matrix_upload(bsr_context *ctx, bsr_matrix *A)
{
    BSR_TRY(bsr_cuda_enter(ctx));
    bsr_dev_matrix *d = (bsr_dev_matrix *)A->dev;
    if (d && d->device != ctx->cuda->device) { bsr_cuda_matrix_release(A); d = NULL; BSR_TRY(bsr_cuda_enter(ctx)); }
    if (d && !A->dev_stale) { d->ctx = ctx; return BSR_OK; }
    if (!d) {
        d = (bsr_dev_matrix *)bsr_calloc(1, sizeof *d, "device matrix");
        if (!d) return BSR_ERR_NOMEM;
        d->ctx = ctx; d->device = ctx->cuda->device;
        A->dev = d;
        bsr_status s = matrix_alloc(ctx, A, d);
        if (s != BSR_OK) { bsr_cuda_matrix_release(A); return s; }
    }
    d->ctx = ctx;
    /* the pattern never changes after creation: only values travel on a refresh */
    size_t vb = (size_t)A->nnzb * A->b * A->b * bsr_precision_size(A->prec);
    /* stale until the values arrived: after a failed copy the next upload
     * retries instead of taking the mirror for current */
    A->dev_stale = 1;
    /* synchronous: the caller may change A's host values afterwards */
    if (d->bsr_gone) {
        BSR_TRY(bsr_spmm_sell_upload(ctx, A));   /* the sliced copy is the only one: straight into it */
    } else {
        if (d->sell > 1) d->sell = 1; /* the sliced copy's values follow at its next use */
        BSR_TRY(bsr_cuda_h2d(ctx, d->val, A->val, vb));
    }
    A->dev_stale = 0;
    return BSR_OK;
}

extern "C" int bsr_cuda_matrix_layouts(const bsr_matrix *A)
{
    const bsr_dev_matrix *d = (const bsr_dev_matrix *)A->dev;
    return !d ? 0 : (d->val && !d->bsr_gone ? 1 : 0) | (d->sell == 2 ? 2 : 0);
}

extern "C" void bsr_cuda_matrix_one_layout(bsr_matrix *A, int on)
{
    bsr_dev_matrix *d = (bsr_dev_matrix *)A->dev;
    if (d) d->one_layout = on != 0;
}

/* ---- multivectors ---------------------------------------------------------------- */

/* A device multivector's values. */
static void dmv_free(void *p) { bsr_cu_free(((bsr_dev_multivec *)p)->data); }

extern "C" void bsr_cuda_multivec_release(bsr_multivec *X)
{
    const bsr_dev_multivec *d = (const bsr_dev_multivec *)X->dev;
    if (!d) return;
    release_on(&X->dev, d->device, dmv_free);
    X->where &= ~BSR_ON_DEVICE;
}

extern "C" bsr_context *bsr_cuda_multivec_context(const bsr_multivec *X)
{
    return X && X->dev ? ((bsr_dev_multivec *)X->dev)->ctx : NULL;
}

extern "C" bsr_status bsr_cuda_multivec_alloc(bsr_context *ctx, bsr_multivec *X)
{
    BSR_TRY(bsr_cuda_enter(ctx));
    bsr_dev_multivec *d = (bsr_dev_multivec *)X->dev;
    if (d && d->device == ctx->cuda->device) { d->ctx = ctx; return BSR_OK; }
    if (d) { bsr_cuda_multivec_release(X); BSR_TRY(bsr_cuda_enter(ctx)); }
    d = (bsr_dev_multivec *)bsr_calloc(1, sizeof *d, "device multivector");
    if (!d) return BSR_ERR_NOMEM;
    d->ctx = ctx; d->device = ctx->cuda->device;
    size_t bytes = (size_t)X->n * X->k * bsr_precision_size(X->prec);
    cudaError_t e = bsr_cu_malloc(&d->data, bytes > 0 ? bytes : 8);
    if (e != cudaSuccess) {
        free(d);
        return bsr_cuda_fail(e, "cudaMalloc(multivector)", __FILE__, __LINE__);
    }
    X->dev = d;
    return BSR_OK;
}

extern "C" bsr_status bsr_cuda_multivec_upload(bsr_context *ctx, bsr_multivec *X)
{
    BSR_TRY(bsr_cuda_multivec_alloc(ctx, X));
    size_t bytes = (size_t)X->n * X->k * bsr_precision_size(X->prec);
    return bsr_cuda_h2d(ctx, bsr_cuda_multivec_data(X), X->data, bytes);
}

extern "C" bsr_status bsr_cuda_multivec_download(bsr_context *ctx, bsr_multivec *X)
{
    BSR_TRY(bsr_cuda_enter(ctx));
    size_t bytes = (size_t)X->n * X->k * bsr_precision_size(X->prec);
    return bsr_cuda_d2h(ctx, X->data, bsr_cuda_multivec_data(X), bytes);
}

/* Copy between host memory h (X's shape and precision) and X's device
 * buffer: to_dev 1 uploads h, 0 downloads into h; synchronous.  The solver
 * moves a user's host vectors straight into / out of its pooled device work
 * vectors this way, with no converted host copy in between. */
extern "C" bsr_status bsr_cuda_multivec_xfer(bsr_context *ctx, bsr_multivec *X, void *h, int to_dev)
{
    BSR_TRY(bsr_cuda_enter(ctx));
    if (!X->dev) return bsr_error(BSR_ERR_ARG, "multivector transfer: X has no device buffer");
    size_t bytes = (size_t)X->n * X->k * bsr_precision_size(X->prec);
    if (to_dev) BSR_TRY(bsr_cuda_h2d(ctx, bsr_cuda_multivec_data(X), h, bytes));
    else BSR_TRY(bsr_cuda_d2h(ctx, h, bsr_cuda_multivec_data(X), bytes));
    if (to_dev) X->where = BSR_ON_DEVICE;
    return BSR_OK;
}

/* ---- benchmark support --------------------------------------------------------------- */

extern "C" bsr_status bsr_cuda_time(bsr_context *ctx, bsr_status (*fn)(void *), void *arg, int warm,
                                    int reps, double *ms)
{
    BSR_TRY(bsr_cuda_enter(ctx));
    cudaStream_t st = ctx->cuda->stream;
    for (int i = 0; i < warm; i++) BSR_TRY(fn(arg));
    cudaEvent_t e0, e1;
    CU_TRY(cudaEventCreate(&e0));
    cudaError_t e = cudaEventCreate(&e1);
    if (e != cudaSuccess) { cudaEventDestroy(e0); return bsr_cuda_fail(e, "cudaEventCreate", __FILE__, __LINE__); }
    bsr_status s = BSR_OK;
    for (int i = 0; i < reps && s == BSR_OK; i++) {
        float t = 0;
        if ((e = cudaEventRecord(e0, st)) != cudaSuccess) { s = bsr_cuda_fail(e, "cudaEventRecord", __FILE__, __LINE__); break; }
        if ((s = fn(arg)) != BSR_OK) break;
        if ((e = cudaEventRecord(e1, st)) != cudaSuccess || (e = cudaEventSynchronize(e1)) != cudaSuccess ||
            (e = cudaEventElapsedTime(&t, e0, e1)) != cudaSuccess) {
            s = bsr_cuda_fail(e, "timing events", __FILE__, __LINE__);
            break;
        }
        ms[i] = t;
    }
    cudaEventDestroy(e0); cudaEventDestroy(e1);
    return s;
}

struct copy_arg { void *dst; const void *src; size_t bytes; cudaStream_t st; };

static bsr_status copy_once(void *p)
{
    copy_arg *a = (copy_arg *)p;
    CU_TRY(cudaMemcpyAsync(a->dst, a->src, a->bytes, cudaMemcpyDeviceToDevice, a->st));
    return BSR_OK;
}

extern "C" bsr_status bsr_cuda_copy_gbs(bsr_context *ctx, size_t bytes, int reps, double *gbs)
{
    BSR_TRY(bsr_cuda_enter(ctx));
    void *a = NULL, *b = NULL;
    CU_TRY(bsr_cu_malloc(&a, bytes));
    cudaError_t e = bsr_cu_malloc(&b, bytes);
    if (e != cudaSuccess) { bsr_cu_free(a); return bsr_cuda_fail(e, "cudaMalloc(copy buffer)", __FILE__, __LINE__); }
    double *ms = (double *)malloc(sizeof(double) * (size_t)reps);
    bsr_status s = ms ? BSR_OK : bsr_error(BSR_ERR_NOMEM, "bsr_cuda_copy_gbs: %d timings", reps);
    if (s == BSR_OK && (e = cudaMemsetAsync(a, 1, bytes, ctx->cuda->stream)) != cudaSuccess)
        s = bsr_cuda_fail(e, "cudaMemsetAsync", __FILE__, __LINE__);
    copy_arg arg = {b, a, bytes, ctx->cuda->stream};
    if (s == BSR_OK) s = bsr_cuda_time(ctx, copy_once, &arg, 3, reps, ms);
    if (s == BSR_OK) {
        std::sort(ms, ms + reps);
        *gbs = 2.0 * (double)bytes / (ms[reps / 2] * 1e-3) / 1e9;
    }
    free(ms); bsr_cu_free(a); bsr_cu_free(b);
    return s;
}
