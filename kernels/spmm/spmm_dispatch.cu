/* SPDX-License-Identifier: BSD-3-Clause */
/* The GPU SpMM dispatch of bsr_ctx_spmm: one table, one row per GPU kernel
 * (the seed's P11-P14, WARP, ROWJ and cuSPARSE's bsrmm), each row the
 * kernel's launcher; a kernel is chosen by its bsr_kernel value, whose name
 * (bsr_kernel_name / bsr_kernel_parse, src/context.c) the options and the
 * CLI use.  AUTO resolves to a row (bsr_cuda_kernel_auto).  Every row is
 * tested against the CPU reference (tests/test_gpu_spmm.c). */
#include "spmm_common.h"

/* One call of bsr_ctx_spmm as the rows see it. */
struct spmm_call {
    bsr_context *ctx;
    const bsr_matrix *A;
    const bsr_multivec *X;
    bsr_multivec *Y;
    double alpha, beta;
    const void *x;      /* X's and Y's device data */
    void *y;
    int k;
    int code, threads;  /* ROWJ: J code and threads (0: the static rule) */
    int autopick;       /* ROWJ: AUTO's timed choice instead */
};

/* Y's columns [j0, j0+kk) of Y = alpha*A*X + beta*Y (all of them, j0 = 0
 * and kk = k, for the rows that are not chunked). */
typedef bsr_status (*spmm_row_fn)(const spmm_call *c, int j0, int kk);

/* P11 (spmm_p1x.cu): one thread per block row, every vector in one launch. */
static bsr_status row_p11(const spmm_call *c, int, int)
{
    return bsr_spmm_p11(c->ctx, c->A, c->alpha, c->x, c->beta, c->y, c->k);
}
/* P12 (spmm_p1x.cu): one CUDA block per block row, a chunk's blocks at once. */
static bsr_status row_p12(const spmm_call *c, int j0, int kk)
{
    return bsr_spmm_p12(c->ctx, c->A, c->alpha, c->x, c->beta, c->y, c->k, j0, kk, 0);
}
/* P13: P12 walking its row's blocks in chunks. */
static bsr_status row_p13(const spmm_call *c, int j0, int kk)
{
    return bsr_spmm_p12(c->ctx, c->A, c->alpha, c->x, c->beta, c->y, c->k, j0, kk, 1);
}
/* P14 (spmm_p1x.cu). */
static bsr_status row_p14(const spmm_call *c, int j0, int kk)
{
    return bsr_spmm_p14(c->ctx, c->A, c->alpha, c->x, c->beta, c->y, c->k, j0, kk);
}
/* WARP (spmm_warp.cu). */
static bsr_status row_warp(const spmm_call *c, int j0, int kk)
{
    return bsr_spmm_warp(c->ctx, c->A, c->alpha, c->x, c->beta, c->y, c->k, j0, kk);
}
/* ROWJ (spmm_rowj.cu): the given J code and threads, or AUTO's pick. */
static bsr_status row_rowj(const spmm_call *c, int j0, int kk)
{
    if (c->autopick) return bsr_spmm_rowj_auto(c->ctx, c->A, c->alpha, c->x, c->beta, c->y, c->k, j0, kk);
    return bsr_spmm_rowj(c->ctx, c->A, c->alpha, c->x, c->beta, c->y, c->k, j0, kk, c->code, c->threads);
}
/* cuSPARSE bsrmv/bsrmm (spmm_cusparse.cu), on whole multivectors. */
static bsr_status row_cusparse(const spmm_call *c, int, int)
{
    return bsr_spmm_cusparse(c->ctx, c->A, c->alpha, c->X, c->beta, c->Y);
}

/* The GPU kernels.  chunked: run on column chunks of at most 16 vectors
 * (the first is the widest, so a kernel's refusal of a chunk width comes
 * before anything is written). */
static const struct {
    bsr_kernel kernel;
    int chunked;
    spmm_row_fn run;
} spmm_rows[] = {
    {BSR_KERNEL_P11, 0, row_p11},   {BSR_KERNEL_P12, 1, row_p12},   {BSR_KERNEL_P13, 1, row_p13},
    {BSR_KERNEL_P14, 1, row_p14},   {BSR_KERNEL_WARP, 1, row_warp}, {BSR_KERNEL_ROWJ, 1, row_rowj},
    {BSR_KERNEL_CUSPARSE, 0, row_cusparse},
};

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
    const int nrows = (int)(sizeof spmm_rows / sizeof spmm_rows[0]);
    int r = 0;
    while (r < nrows && spmm_rows[r].kernel != kernel) r++;
    if (r == nrows) return bsr_error(BSR_ERR_ARG, "bsr_ctx_spmm: %s is not a GPU kernel", bsr_kernel_name(kernel));
    const spmm_call c = {ctx, A, X, Y, alpha, beta, bsr_cuda_multivec_data(X), bsr_cuda_multivec_data(Y),
                         X->k, code, threads, autopick};
    const int rowj = kernel == BSR_KERNEL_ROWJ;
    if (!rowj) BSR_TRY(bsr_cuda_matrix_bsr(ctx, A));   /* these read A's BSR values (ROWJ: per code) */
    bsr_status s = BSR_OK;
    if (!spmm_rows[r].chunked) s = spmm_rows[r].run(&c, 0, c.k);
    else
        for (int j0 = 0; j0 < c.k && s == BSR_OK; j0 += 16) s = spmm_rows[r].run(&c, j0, c.k - j0 < 16 ? c.k - j0 : 16);
    if (s == BSR_OK) Y->where = BSR_ON_DEVICE;
    /* A held once (one_layout): where every chunk read the sliced copy, the
     * BSR values go (made again by the first reader that needs them) */
    if (s == BSR_OK && rowj) {
        int sliced = 1;
        for (int j0 = 0; j0 < c.k; j0 += 16)
            sliced &= bsr_spmm_rowj_reads_sliced(A, c.k - j0 < 16 ? c.k - j0 : 16, code, autopick);
        if (sliced) bsr_spmm_drop_bsr(ctx, A);
    }
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
