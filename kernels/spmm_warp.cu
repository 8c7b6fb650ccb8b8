/* SPDX-License-Identifier: BSD-3-Clause */
/* WARP: our SpMM kernel for the H100, and the GPU SpMM dispatch (AUTO,
 * cuSPARSE wrapper).
 *
 * WARP gives each block row a group of W threads (a sub-warp, a warp or a
 * few warps).  Lane l of a group owns entry rc = l % b^2 of block slot
 * s = l / b^2 and walks blocks p = rowstart + s, + slots, ...: the group's
 * loads of A are one contiguous, fully coalesced stream (a row's blocks are
 * adjacent in memory), read once.  Each lane multiplies its A entry by the
 * k values X(col*b + c, 0..k-1) (contiguous, read through the read-only
 * path, reused from L1 by the lanes of the same c) and keeps k accumulators
 * in registers (k <= 16 per pass, a compile-time bound KC).  The partial sums
 * are combined in shared memory in a fixed order: deterministic bit for bit. */
#include "spmm_common.h"
#include <algorithm>

/* bsrmv/bsrmm are the anchors the issue names, deprecated in favour of the
 * generic SpMM API since CUDA 12. */
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

#define WARP_THREADS 256

template <typename T, int KC>
__global__ void __launch_bounds__(WARP_THREADS)
warp_kernel(int nbrows, int b, int k, int j0, int kk, int W, int slots, const int *__restrict__ rowptr,
            const int *__restrict__ colind, const T *__restrict__ val, double alpha,
            const T *__restrict__ x, double beta, T *__restrict__ y)
{
    extern __shared__ double red[]; /* [KC][blockDim] partial sums */
    int t = threadIdx.x, BD = blockDim.x, g = t / W, lane = t - g * W;
    int i = blockIdx.x * (BD / W) + g;
    int bb = b * b, s = lane / bb, rc = lane - s * bb, c = rc % b;
    double acc[KC];
#pragma unroll
    for (int j = 0; j < KC; j++) acc[j] = 0;
    if (i < nbrows && s < slots) {
        int p1 = __ldg(rowptr + i + 1);
#pragma unroll 2
        for (int p = __ldg(rowptr + i) + s; p < p1; p += slots) {
            double a = (double)__ldg(val + (size_t)p * bb + rc);
            const T *xp = x + ((size_t)__ldg(colind + p) * b + c) * k + j0;
#pragma unroll
            for (int j = 0; j < KC; j++)
                if (j < kk) acc[j] += a * (double)__ldg(xp + j);
        }
    }
#pragma unroll
    for (int j = 0; j < KC; j++) red[j * BD + t] = acc[j];
    __syncthreads();
    if (i >= nbrows) return;
    const double *gr = red + g * W;
    for (int o = lane; o < b * kk; o += W) {
        int r = o / kk, j = o - r * kk;
        const double *pr = gr + j * BD + r * b;
        double sum = 0;
        for (int s2 = 0; s2 < slots; s2++)
            for (int c2 = 0; c2 < b; c2++) sum += pr[s2 * bb + c2];
        spmm_put(y + ((size_t)i * b + r) * k + j0 + j, sum, alpha, beta);
    }
}

/* Group width W: the narrowest of 4, 8, 16, 32, 64, 96, ... that holds one
 * block (W >= b^2).  Measured on the H100 (stencil3d, b = 4, 5, 9): wider
 * groups with several block slots ran slower at every k (up to 2.7x for b = 5),
 * so slots > 1 only arise from rounding up to a warp multiple.  meanlen is
 * unused; BSR_WARP_W overrides the choice for sweeps. */
void bsr_spmm_warp_shape(int b, double meanlen, int *W, int *slots)
{
    int bb = b * b, w = 4;
    (void)meanlen;
    static int env_w = -1; /* sweep knob, read once (README, "Environment variables") */
    if (env_w < 0) env_w = getenv("BSR_WARP_W") ? atoi(getenv("BSR_WARP_W")) : 0;
    if (env_w >= bb && env_w <= WARP_THREADS) w = env_w;
    else
        while (w < bb) w = w < 32 ? 2 * w : w + 32;
    *W = w;
    *slots = w / bb;
}

template <typename T, int KC>
static bsr_status warp_launch(bsr_context *ctx, const bsr_matrix *A, double alpha, const T *x, double beta,
                              T *y, int k, int j0, int kk)
{
    const bsr_dev_matrix *d = bsr_cuda_dmat(A);
    int W, slots;
    bsr_spmm_warp_shape(A->b, d->meanlen, &W, &slots);
    int per = WARP_THREADS / W, BD = per * W;
    int grid = (int)(((long long)A->nbrows + per - 1) / per);
    size_t smem = sizeof(double) * KC * BD;
    warp_kernel<T, KC><<<grid, BD, smem, ctx->cuda->stream>>>(A->nbrows, A->b, k, j0, kk, W, slots, d->rowptr,
                                                              d->colind, (const T *)d->val, alpha, x, beta, y);
    CU_LAUNCHED("warp_kernel");
    return BSR_OK;
}

template <typename T>
static bsr_status warp_typed(bsr_context *ctx, const bsr_matrix *A, double alpha, const T *x, double beta,
                             T *y, int k, int j0, int kk)
{
    if (kk == 1) return warp_launch<T, 1>(ctx, A, alpha, x, beta, y, k, j0, kk);
    if (kk == 2) return warp_launch<T, 2>(ctx, A, alpha, x, beta, y, k, j0, kk);
    if (kk <= 4) return warp_launch<T, 4>(ctx, A, alpha, x, beta, y, k, j0, kk);
    if (kk <= 8) return warp_launch<T, 8>(ctx, A, alpha, x, beta, y, k, j0, kk);
    return warp_launch<T, 16>(ctx, A, alpha, x, beta, y, k, j0, kk);
}

bsr_status bsr_spmm_warp(bsr_context *ctx, const bsr_matrix *A, double alpha, const void *x,
                         double beta, void *y, int k, int j0, int kk)
{
    if (A->nbrows == 0) return BSR_OK;
    if (A->prec == BSR_DOUBLE)
        return warp_typed<double>(ctx, A, alpha, (const double *)x, beta, (double *)y, k, j0, kk);
    return warp_typed<float>(ctx, A, (double)(float)alpha, (const float *)x, (double)(float)beta, (float *)y, k, j0, kk);
}

/* ---- cuSPARSE ------------------------------------------------------------------------- */

/* bsrmv (k = 1) or bsrmm on column-major X (ldb = rows of X) or, with
 * x_rowint, on our row-interleaved X read as op(B) = B^T of a k x n
 * column-major array; C = ycol is column-major (ldc = rows of Y). */
static bsr_status cusparse_mm(bsr_context *ctx, const bsr_matrix *A, double alpha, const void *x,
                              int x_rowint, double beta, void *ycol, int k)
{
    if (A->b == 1)   /* documented: blockDim > 1 only (it answers "invalid value") */
        return bsr_error(BSR_ERR_UNSUPPORTED, "cuSPARSE SpMM: bsrmv/bsrmm take blocks of 2 x 2 and larger, A has "
                         "1 x 1 blocks (the ROWJ and AUTO kernels take them)");
    const bsr_dev_matrix *d = bsr_cuda_dmat(A);
    cusparseHandle_t h = ctx->cuda->sparse;
    cusparseMatDescr_t ds = ctx->cuda->descr;
    int mb = A->nbrows, kb = A->nbcols, nnzb = A->nnzb, b = A->b;
    cusparseOperation_t tb = x_rowint ? CUSPARSE_OPERATION_TRANSPOSE : CUSPARSE_OPERATION_NON_TRANSPOSE;
    int ldb = x_rowint ? k : kb * b, ldc = mb * b;
    if (A->prec == BSR_DOUBLE) {
        const double al = alpha, be = beta;
        if (k == 1)
            CUSP_TRY(cusparseDbsrmv(h, CUSPARSE_DIRECTION_ROW, CUSPARSE_OPERATION_NON_TRANSPOSE, mb, kb, nnzb, &al, ds,
                                    (const double *)d->val, d->rowptr, d->colind, b, (const double *)x, &be, (double *)ycol));
        else
            CUSP_TRY(cusparseDbsrmm(h, CUSPARSE_DIRECTION_ROW, CUSPARSE_OPERATION_NON_TRANSPOSE, tb, mb, k, kb, nnzb, &al,
                                    ds, (const double *)d->val, d->rowptr, d->colind, b, (const double *)x, ldb, &be,
                                    (double *)ycol, ldc));
    } else {
        const float al = (float)alpha, be = (float)beta;
        if (k == 1)
            CUSP_TRY(cusparseSbsrmv(h, CUSPARSE_DIRECTION_ROW, CUSPARSE_OPERATION_NON_TRANSPOSE, mb, kb, nnzb, &al, ds,
                                    (const float *)d->val, d->rowptr, d->colind, b, (const float *)x, &be, (float *)ycol));
        else
            CUSP_TRY(cusparseSbsrmm(h, CUSPARSE_DIRECTION_ROW, CUSPARSE_OPERATION_NON_TRANSPOSE, tb, mb, k, kb, nnzb, &al,
                                    ds, (const float *)d->val, d->rowptr, d->colind, b, (const float *)x, ldb, &be,
                                    (float *)ycol, ldc));
    }
    return BSR_OK;
}

/* Library path: Y goes through a column-major scratch copy (bsrmm has no
 * row-major C); X is read in place as a transposed operand. */
static bsr_status cusparse_spmm(bsr_context *ctx, const bsr_matrix *A, double alpha, const bsr_multivec *X,
                                double beta, bsr_multivec *Y)
{
    int k = X->k;
    void *y = bsr_cuda_multivec_data(Y);
    const void *x = bsr_cuda_multivec_data(X);
    if (A->nbrows == 0) return BSR_OK;
    if (k == 1) return cusparse_mm(ctx, A, alpha, x, 1, beta, y, 1);
    void *ycol;
    BSR_TRY(bsr_cuda_scratch(ctx, (size_t)Y->n * k * bsr_precision_size(Y->prec), &ycol));
    if (beta != 0) BSR_TRY(bsr_cuda_to_colmajor(ctx, Y->prec, Y->n, k, y, ycol));
    BSR_TRY(cusparse_mm(ctx, A, alpha, x, 1, beta, ycol, k));
    return bsr_cuda_from_colmajor(ctx, Y->prec, Y->n, k, ycol, y);
}

struct cusp_arg { bsr_context *ctx; const bsr_matrix *A; double alpha, beta; const void *x; void *y; int k; };

static bsr_status cusp_once(void *p)
{
    cusp_arg *a = (cusp_arg *)p;
    return cusparse_mm(a->ctx, a->A, a->alpha, a->x, 0, a->beta, a->y, a->k);
}

extern "C" bsr_status bsr_cuda_cusparse_bench(bsr_context *ctx, double alpha, const bsr_matrix *A,
                                              const bsr_multivec *X, double beta, bsr_multivec *Y, int warm,
                                              int reps, double *ms)
{
    BSR_TRY(bsr_cuda_enter(ctx));
    if (!bsr_matrix_on_device(A) || !bsr_multivec_on_device(X) || !bsr_multivec_on_device(Y))
        return bsr_error(BSR_ERR_ARG, "bsr_cuda_cusparse_bench: A, X and Y must be on the device");
    int k = X->k;
    size_t es = bsr_precision_size(X->prec);
    void *buf = NULL;
    cusp_arg arg = {ctx, A, alpha, beta, bsr_cuda_multivec_data(X), bsr_cuda_multivec_data(Y), k};
    if (k > 1) {
        BSR_TRY(bsr_cuda_scratch(ctx, ((size_t)X->n + (size_t)Y->n) * k * es, &buf));
        arg.x = buf;
        arg.y = (char *)buf + (size_t)X->n * k * es;
        BSR_TRY(bsr_cuda_to_colmajor(ctx, X->prec, X->n, k, bsr_cuda_multivec_data(X), (void *)arg.x));
        if (beta != 0) BSR_TRY(bsr_cuda_to_colmajor(ctx, Y->prec, Y->n, k, bsr_cuda_multivec_data(Y), arg.y));
    }
    double *t = (double *)malloc(sizeof(double) * (size_t)reps);
    if (!t) return bsr_error(BSR_ERR_NOMEM, "bsr_cuda_cusparse_bench: %d timings", reps);
    bsr_status s = bsr_cuda_time(ctx, cusp_once, &arg, warm, reps, t);
    if (s == BSR_OK) {
        std::sort(t, t + reps);
        *ms = t[reps / 2];
        if (k > 1) s = bsr_cuda_from_colmajor(ctx, Y->prec, Y->n, k, arg.y, bsr_cuda_multivec_data(Y));
        Y->where = BSR_ON_DEVICE;
    }
    free(t);
    return s;
}

/* ---- dispatch ------------------------------------------------------------------------- */

extern "C" bsr_kernel bsr_cuda_kernel_auto(const bsr_matrix *A, int k)
{
    (void)A; (void)k;
    return BSR_KERNEL_ROWJ;
}

/* Y = alpha*A*X + beta*Y with `kernel` (ROWJ: J code and threads, 0 for
 * the static rule; autopick: AUTO's timed choice). */
static bsr_status spmm_run(bsr_context *ctx, bsr_kernel kernel, int autopick, int code, int threads, double alpha,
                           const bsr_matrix *A, const bsr_multivec *X, double beta, bsr_multivec *Y)
{
    BSR_TRY(bsr_cuda_enter(ctx));
    BSR_TRY(bsr_spmm_check("bsr_ctx_spmm", A, X, Y));
    if (!bsr_matrix_on_device(A)) return bsr_error(BSR_ERR_ARG, "bsr_ctx_spmm: A is not on the device");
    if (!bsr_multivec_on_device(X) || !Y->dev)
        return bsr_error(BSR_ERR_ARG, "bsr_ctx_spmm: X and Y must be on the device");
    if (beta != 0 && !(Y->where & BSR_ON_DEVICE))
        return bsr_error(BSR_ERR_ARG, "bsr_ctx_spmm: beta != 0 but Y's device copy is not current");
    if (A->b > 10) return bsr_error(BSR_ERR_UNSUPPORTED, "bsr_ctx_spmm: GPU kernels support blocks 1..10, A has %d", A->b);
    int k = X->k;
    const void *x = bsr_cuda_multivec_data(X);
    void *y = bsr_cuda_multivec_data(Y);
    bsr_status s = BSR_OK;
    if (kernel == BSR_KERNEL_P11) s = bsr_spmm_p11(ctx, A, alpha, x, beta, y, k);
    else if (kernel == BSR_KERNEL_CUSPARSE) s = cusparse_spmm(ctx, A, alpha, X, beta, Y);
    else if (kernel >= BSR_KERNEL_P12 && kernel <= BSR_KERNEL_ROWJ) {
        /* column chunks of at most 16 vectors (the first is the widest, so
         * P12's refusal happens before anything is written) */
        for (int j0 = 0; j0 < k && s == BSR_OK; j0 += 16) {
            int kk = k - j0 < 16 ? k - j0 : 16;
            if (kernel == BSR_KERNEL_P12 || kernel == BSR_KERNEL_P13)
                s = bsr_spmm_p12(ctx, A, alpha, x, beta, y, k, j0, kk, kernel == BSR_KERNEL_P13);
            else if (kernel == BSR_KERNEL_P14) s = bsr_spmm_p14(ctx, A, alpha, x, beta, y, k, j0, kk);
            else if (kernel == BSR_KERNEL_WARP) s = bsr_spmm_warp(ctx, A, alpha, x, beta, y, k, j0, kk);
            else if (autopick) s = bsr_spmm_rowj_auto(ctx, A, alpha, x, beta, y, k, j0, kk);
            else s = bsr_spmm_rowj(ctx, A, alpha, x, beta, y, k, j0, kk, code, threads);
        }
    } else
        return bsr_error(BSR_ERR_ARG, "bsr_ctx_spmm: %s is not a GPU kernel", bsr_kernel_name(kernel));
    if (s == BSR_OK) Y->where = BSR_ON_DEVICE;
    return s;
}

extern "C" bsr_status bsr_cuda_spmm(bsr_context *ctx, bsr_kernel kernel, double alpha, const bsr_matrix *A,
                                    const bsr_multivec *X, double beta, bsr_multivec *Y)
{
    const int autopick = kernel == BSR_KERNEL_AUTO;
    if (autopick) kernel = bsr_cuda_kernel_auto(A, X ? X->k : 1);
    return spmm_run(ctx, kernel, autopick, 0, 0, alpha, A, X, beta, Y);
}

extern "C" bsr_status bsr_cuda_spmm_rowj(bsr_context *ctx, int code, int threads, double alpha, const bsr_matrix *A,
                                         const bsr_multivec *X, double beta, bsr_multivec *Y)
{
    if (!rowj_valid(code)) return bsr_error(BSR_ERR_ARG, "ROWJ SpMM: J code %d not in 1..5, 11..15, 21..25, 31..35", code);
    return spmm_run(ctx, BSR_KERNEL_ROWJ, 0, code, threads, alpha, A, X, beta, Y);
}
