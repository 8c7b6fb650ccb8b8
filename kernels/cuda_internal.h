/* SPDX-License-Identifier: BSD-3-Clause */
/* CUDA backend internals shared by the CUDA sources of kernels/: the CUDA
 * half of a context, the device mirrors behind bsr_matrix.dev and
 * bsr_multivec.dev, error checking, and raw accessors for other CUDA modules
 * (triangular solves, Krylov).  Not installed; C++ (nvcc) only. */
#ifndef BSR_CUDA_INTERNAL_H
#define BSR_CUDA_INTERNAL_H

#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <cuda_runtime.h>
#include <cusparse.h>
#include "cuda_alloc.h" /* bsr_cu_malloc & co.: every device allocation */

extern "C" {
#include "internal.h"
}
#include <type_traits>

/* Call f(std::integral_constant<int, B>()) for the block size b, one
 * instantiation per B of BSR_FOR_EACH_B (internal.h); returns 1, or 0 when b
 * is not one of them (f not called). */
template <typename Fn> static inline int bsr_with_b(int b, Fn f)
{
#define BSR_WITH_B_CASE(B) case B: f(std::integral_constant<int, B>()); return 1;
    switch (b) { BSR_FOR_EACH_B(BSR_WITH_B_CASE) }
#undef BSR_WITH_B_CASE
    return 0;
}

/* CUDA half of a bsr_context. */
struct bsr_cuda_ctx {
    int device;
    cudaStream_t stream;
    int own_stream;         /* created by us, destroyed with the context */
    cusparseHandle_t sparse;
    cusparseMatDescr_t descr; /* general, zero-based: for bsrmv/bsrmm */
    int nsm;                /* multiprocessors */
    int smem_optin;         /* max dynamic shared memory per block after opt-in */
    double *red;            /* reductions: block counter, partials [red_cap doubles] */
    size_t red_cap;
    double *red_host;       /* mapped pinned host memory: a reduction's results (256 doubles) */
    double *red_mapped;     /* its device address */
    void *scratch;          /* cuSPARSE column-major copies etc. */
    size_t scratch_cap;
    void *pin[2];           /* pinned staging buffers of the large transfers (cuda_xfer.cu) */
    cudaEvent_t pin_ev[2];  /* last transfer through pin[i] */
};

/* Device mirror of a bsr_matrix (A->dev).  Row-length statistics are taken on
 * the host at the first upload: P12's refusal, P14's and AUTO's choices. */
struct bsr_dev_matrix {
    bsr_context *ctx;
    int device;
    int *rowptr, *colind;
    void *val;
    int maxlen, maxrow;     /* longest block row and its index */
    double meanlen;
    int nempty;
    /* AUTO's choice for ROWJ per chunk width kk = 1..16, found by a short
     * on-device trial at first use: vectors per thread and threads per block
     * (0: not tried yet) */
    unsigned char auto_j[17];
    short auto_t[17];
    /* the sliced copy the fastest SpMM kernels read (kernels/spmm/spmm_sell.cuh),
     * built at the first SpMM that wants it; sell: 0 not built, 1 pattern
     * built and values stale, 2 current, -1 not kept (padding or memory) */
    int sell;
    int *sptr, *scol;
    void *sval;
    /* A's values held once (the solver's operator, bsr_cuda_matrix_one_layout):
     * once its products read the sliced copy, val is released; bsr_gone: the
     * sliced copy (sell == 2) holds the values alone (uploads go into it, the
     * ILU factorization reads it, a kernel reading val makes val again first:
     * bsr_cuda_matrix_bsr; the next product on the sliced copy releases it) */
    int one_layout;
    int bsr_gone;
};

/* ---- errors ------------------------------------------------------------------ */
extern "C" bsr_status bsr_cuda_fail(cudaError_t e, const char *call, const char *file, int line);
extern "C" bsr_status bsr_cusparse_fail(cusparseStatus_t e, const char *call, const char *file, int line);
/* Check a CUDA runtime call: on failure return BSR_ERR_CUDA / BSR_ERR_NOMEM
 * naming the call, the site and CUDA's message.  Each check is a CUDA-call
 * event of the fault hook (src/internal.h): an armed one fails before the
 * call is made (cudaErrorUnknown), as a call that did nothing. */
#define CU_TRY(call)                                                               \
    do {                                                                           \
        cudaError_t _e = bsr_fault_hit(BSR_FAULT_CUDA_CALL) ? cudaErrorUnknown : (call); \
        if (_e != cudaSuccess) return bsr_cuda_fail(_e, #call, __FILE__, __LINE__); \
    } while (0)
/* After every kernel launch (a fault-hook event: an armed one reports the
 * launch as failed for lack of resources, a non-sticky error). */
#define CU_LAUNCHED(what)                                                                  \
    do {                                                                                   \
        cudaError_t _e = cudaGetLastError();                                               \
        if (bsr_fault_hit(BSR_FAULT_CUDA_CALL)) _e = cudaErrorLaunchOutOfResources;        \
        if (_e != cudaSuccess) return bsr_cuda_fail(_e, "launch of " what, __FILE__, __LINE__); \
    } while (0)
/* A cuSPARSE call (a CUDA-call event too, failing before the call). */
#define CUSP_TRY(call)                                                                    \
    do {                                                                                  \
        cusparseStatus_t _e = bsr_fault_hit(BSR_FAULT_CUDA_CALL) ? CUSPARSE_STATUS_EXECUTION_FAILED : (call); \
        if (_e != CUSPARSE_STATUS_SUCCESS) return bsr_cusparse_fail(_e, #call, __FILE__, __LINE__); \
    } while (0)

/* Phase mark for setup profiling (src/core/prof.c) after the device has finished
 * the work queued so far: only when profiling is on, so it adds no syncs. */
static inline void bsr_prof_mark_dev(const char *what)
{
    if (!bsr_prof_on()) return;
    cudaDeviceSynchronize();
    bsr_prof_mark(what);
}

/* Synchronous host <-> device copies on ctx's stream; large ones go through
 * two pinned staging buffers filled/emptied by all host threads while the
 * other buffer is in flight (cuda_xfer.cu). */
extern "C" bsr_status bsr_cuda_h2d(bsr_context *ctx, void *dst, const void *src, size_t bytes);
extern "C" bsr_status bsr_cuda_d2h(bsr_context *ctx, void *dst, const void *src, size_t bytes);
/* Allocate the staging buffers (context creation; failure leaves plain
 * copies) and free them (teardown). */
void bsr_cuda_xfer_init(bsr_cuda_ctx *c);
void bsr_cuda_xfer_free(bsr_cuda_ctx *c);

/* Make ctx's device current (cheap when it already is). */
extern "C" bsr_status bsr_cuda_enter(bsr_context *ctx);
/* Context scratch of at least `bytes` (grown on demand, kept). */
extern "C" bsr_status bsr_cuda_scratch(bsr_context *ctx, size_t bytes, void **p);

/* ---- accessors for other CUDA modules ---------------------------------------- */
static inline cudaStream_t bsr_cuda_stream(const bsr_context *ctx) { return ctx->cuda->stream; }
static inline cusparseHandle_t bsr_cuda_cusparse(const bsr_context *ctx) { return ctx->cuda->sparse; }
static inline const bsr_dev_matrix *bsr_cuda_dmat(const bsr_matrix *A) { return (const bsr_dev_matrix *)A->dev; }
static inline const int *bsr_cuda_matrix_rowptr(const bsr_matrix *A) { return bsr_cuda_dmat(A)->rowptr; }
static inline const int *bsr_cuda_matrix_colind(const bsr_matrix *A) { return bsr_cuda_dmat(A)->colind; }
/* A's BSR values on the device: NULL where only the sliced copy holds them
 * (bsr_gone): readers call bsr_cuda_matrix_bsr first, or read the sliced copy. */
static inline const void *bsr_cuda_matrix_val(const bsr_matrix *A) { return bsr_cuda_dmat(A)->val; }
/* dst = n device ints of src, ordered on stream st (a plain cudaMemcpy
 * between device arrays may return before it is done, and the library's
 * non-blocking streams do not wait for the legacy stream). */
static inline bsr_status bsr_cuda_copy_ints(int *dst, const int *src, size_t n, cudaStream_t st)
{
    if (n) CU_TRY(cudaMemcpyAsync(dst, src, n * sizeof(int), cudaMemcpyDeviceToDevice, st));
    return BSR_OK;
}
/* A fresh device copy of n device ints on stream st; none is left when the
 * copy fails (callers keeping it in a local would leak it). */
static inline bsr_status bsr_cuda_dup_ints(int **dev, const int *src, size_t n, cudaStream_t st)
{
    CU_TRY(bsr_cu_malloc((void **)dev, (n ? n : 1) * sizeof(int)));
    bsr_status s = bsr_cuda_copy_ints(*dev, src, n, st);
    if (s != BSR_OK) { bsr_cu_free(*dev); *dev = NULL; }
    return s;
}
/* dst[q] = src[map[q]] for nblk blocks of bb doubles, on stream st (kernels/trsv/trsv_ilu.cu). */
extern "C" bsr_status bsr_cuda_gather_blocks(cudaStream_t st, int64_t nblk, int bb, const int *map,
                                             const double *src, double *dst);
/* Device data of X (row-interleaved n*k values); NULL when X has no device copy. */
static inline void *bsr_cuda_multivec_data(const bsr_multivec *X)
{
    return X->dev ? ((bsr_dev_multivec *)X->dev)->data : NULL;
}

/* ---- SpMM kernel families (spmm_p1x.cu, spmm_warp.cu, ...; the table: spmm_dispatch.cu)
 * Column chunk [j0, j0+kk) of Y = alpha*A*X + beta*Y; kk <= 16; operands on
 * the device.  Launch errors are checked inside. */
bsr_status bsr_spmm_p11(bsr_context *ctx, const bsr_matrix *A, double alpha, const void *x,
                        double beta, void *y, int k);
bsr_status bsr_spmm_p12(bsr_context *ctx, const bsr_matrix *A, double alpha, const void *x,
                        double beta, void *y, int k, int j0, int kk, int chunked);
bsr_status bsr_spmm_p14(bsr_context *ctx, const bsr_matrix *A, double alpha, const void *x,
                        double beta, void *y, int k, int j0, int kk);
bsr_status bsr_spmm_warp(bsr_context *ctx, const bsr_matrix *A, double alpha, const void *x,
                         double beta, void *y, int k, int j0, int kk);
/* ROWJ with J vectors per thread and about T threads per CUDA block
 * (0: the static rule); auto_pick: J and T from AUTO's cached trial. */
bsr_status bsr_spmm_rowj(bsr_context *ctx, const bsr_matrix *A, double alpha, const void *x,
                         double beta, void *y, int k, int j0, int kk, int J, int T);
bsr_status bsr_spmm_rowj_auto(bsr_context *ctx, const bsr_matrix *A, double alpha, const void *x,
                              double beta, void *y, int k, int j0, int kk);
/* cuSPARSE (spmm_cusparse.cu): bsrmv (k = 1) or bsrmm on column-major X
 * (ldb = rows of X) or, with x_rowint, our row-interleaved X; C = ycol is
 * column-major.  bsr_spmm_cusparse: whole multivectors, Y through a
 * column-major scratch copy.  Blocks of 2 x 2 and larger. */
bsr_status bsr_spmm_cusparse_mm(bsr_context *ctx, const bsr_matrix *A, double alpha, const void *x,
                                int x_rowint, double beta, void *ycol, int k);
bsr_status bsr_spmm_cusparse(bsr_context *ctx, const bsr_matrix *A, double alpha, const bsr_multivec *X,
                             double beta, bsr_multivec *Y);
/* Makes A's sliced copy current on the device (kernels/spmm/spmm_sell.cu); sets
 * *avail to 0 where it is not kept (too much padding, or no device memory
 * for it: the BSR kernels then do the work, with the same results). */
bsr_status bsr_spmm_sell_prepare(bsr_context *ctx, const bsr_matrix *A, int *avail);
void bsr_spmm_sell_release(bsr_dev_matrix *d);
/* A's BSR values present on the device (made again from the sliced copy where
 * they were released): every kernel that reads val calls it first. */
bsr_status bsr_cuda_matrix_bsr(bsr_context *ctx, const bsr_matrix *A);
/* A one-layout matrix (one_layout) whose products read its current sliced
 * copy: its BSR values released (bsr_gone). */
void bsr_spmm_drop_bsr(bsr_context *ctx, const bsr_matrix *A);
/* Upload A's host values straight into its sliced copy (bsr_gone), through
 * a bounded staging buffer, block rows at a time. */
bsr_status bsr_spmm_sell_upload(bsr_context *ctx, const bsr_matrix *A);
/* Vectors per thread ROWJ uses for a chunk of kk vectors. */
int bsr_spmm_rowj_cols(int b, int kk);
/* 1 when ROWJ with J code `code` (autopick: AUTO's cached pick for kk)
 * reads A's current sliced copy for a chunk of kk vectors, else 0. */
int bsr_spmm_rowj_reads_sliced(const bsr_matrix *A, int kk, int code, int autopick);
/* Threads per row group and blocks handled at once by the warp kernel for A. */
void bsr_spmm_warp_shape(int b, double meanlen, int *W, int *slots);
/* Row-interleaved <-> column-major (ld = n) transposes of an n x k multivector. */
bsr_status bsr_cuda_to_colmajor(bsr_context *ctx, bsr_precision prec, int64_t n, int k,
                                const void *rowint, void *col);
bsr_status bsr_cuda_from_colmajor(bsr_context *ctx, bsr_precision prec, int64_t n, int k,
                                  const void *col, void *rowint);

#endif
