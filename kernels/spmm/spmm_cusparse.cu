/* SPDX-License-Identifier: BSD-3-Clause */
/* The SpMM kernel "cusparse" (BSR_KERNEL_CUSPARSE): cuSPARSE's bsrmv
 * (k = 1) / bsrmm on the device matrix, a row of the kernel table
 * (spmm_dispatch.cu).  Not deterministic by contract (bsr_kernel_deterministic). */
#include "spmm_common.h"

/* bsrmv/bsrmm are deprecated in favour of the generic SpMM API since CUDA 12
 * (whose anchors are benchmark code: bench/anchors/spmm_cusparse_generic.cu). */
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

/* cuSPARSE's bsrmv / bsrmm of precision T (CUSP_TRY: a failure names the
 * call); k = 1 takes bsrmv, whose x is a vector either way. */
template <typename T> struct cusp;
#define SPMM_CUSP(T, MV, MM)                                                                          \
    template <> struct cusp<T> {                                                                  \
        static bsr_status mm(cusparseHandle_t h, cusparseMatDescr_t ds, cusparseOperation_t tb, int mb, int kb, \
                             int k, int nnzb, int b, double alpha, const bsr_dev_matrix *d, const void *x, int ldb, \
                             double beta, void *ycol, int ldc)                                        \
        {                                                                                         \
            const T al = (T)alpha, be = (T)beta;                                                  \
            const T *v = (const T *)d->val;                                                       \
            if (k == 1)                                                                           \
                CUSP_TRY(MV(h, CUSPARSE_DIRECTION_ROW, CUSPARSE_OPERATION_NON_TRANSPOSE, mb, kb, nnzb, &al, ds, v, \
                            d->rowptr, d->colind, b, (const T *)x, &be, (T *)ycol));                \
            else                                                                                  \
                CUSP_TRY(MM(h, CUSPARSE_DIRECTION_ROW, CUSPARSE_OPERATION_NON_TRANSPOSE, tb, mb, k, kb, nnzb, &al, ds, \
                            v, d->rowptr, d->colind, b, (const T *)x, ldb, &be, (T *)ycol, ldc));   \
            return BSR_OK;                                                                        \
        }                                                                                         \
    };
SPMM_CUSP(double, cusparseDbsrmv, cusparseDbsrmm)
SPMM_CUSP(float, cusparseSbsrmv, cusparseSbsrmm)
#undef SPMM_CUSP

/* bsrmv (k = 1) or bsrmm on column-major X (ldb = rows of X) or, with
 * x_rowint, on our row-interleaved X read as op(B) = B^T of a k x n
 * column-major array; C = ycol is column-major (ldc = rows of Y). */
bsr_status bsr_spmm_cusparse_mm(bsr_context *ctx, const bsr_matrix *A, double alpha, const void *x,
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
    if (A->prec == BSR_DOUBLE) return cusp<double>::mm(h, ds, tb, mb, kb, k, nnzb, b, alpha, d, x, ldb, beta, ycol, ldc);
    return cusp<float>::mm(h, ds, tb, mb, kb, k, nnzb, b, alpha, d, x, ldb, beta, ycol, ldc);
}

/* Library path: Y goes through a column-major scratch copy (bsrmm has no
 * row-major C); X is read in place as a transposed operand. */
bsr_status bsr_spmm_cusparse(bsr_context *ctx, const bsr_matrix *A, double alpha, const bsr_multivec *X,
                             double beta, bsr_multivec *Y)
{
    int k = X->k;
    void *y = bsr_cuda_multivec_data(Y);
    const void *x = bsr_cuda_multivec_data(X);
    if (A->nbrows == 0) return BSR_OK;
    if (k == 1) return bsr_spmm_cusparse_mm(ctx, A, alpha, x, 1, beta, y, 1);
    void *ycol;
    BSR_TRY(bsr_cuda_scratch(ctx, (size_t)Y->n * k * bsr_precision_size(Y->prec), &ycol));
    if (beta != 0) BSR_TRY(bsr_cuda_to_colmajor(ctx, Y->prec, Y->n, k, y, ycol));
    BSR_TRY(bsr_spmm_cusparse_mm(ctx, A, alpha, x, 1, beta, ycol, k));
    return bsr_cuda_from_colmajor(ctx, Y->prec, Y->n, k, ycol, y);
}
