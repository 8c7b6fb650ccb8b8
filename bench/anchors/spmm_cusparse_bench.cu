/* SPDX-License-Identifier: BSD-3-Clause */
/* The bsrmv/bsrmm anchor of `bsrsolve bench spmm`: the library's kernel
 * "cusparse" (kernels/spmm/spmm_cusparse.cu) timed on column-major copies of X
 * and Y made outside the timed region. */
#include "spmm_common.h"
#include "anchors.h"
#include <algorithm>

/* The arguments of one timed multiply. */
struct cusp_arg { bsr_context *ctx; const bsr_matrix *A; double alpha, beta; const void *x; void *y; int k; };

/* One multiply on the column-major copies. */
static bsr_status cusp_once(void *p)
{
    cusp_arg *a = (cusp_arg *)p;
    return bsr_spmm_cusparse_mm(a->ctx, a->A, a->alpha, a->x, 0, a->beta, a->y, a->k);
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
