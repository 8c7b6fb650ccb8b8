/* SPDX-License-Identifier: BSD-3-Clause */
/* bsrsolve execution context, device-resident objects and GPU SpMM.
 * Included by bsrsolve.h.
 *
 * A context selects the backend (CPU, or CUDA with a device id and a stream)
 * and owns the library handles (cuSPARSE).  On a CUDA context, matrices and
 * multivectors can live on the device:
 *   bsr_matrix_upload(ctx, A)            device mirror of A (values refreshed
 *                                        after bsr_matrix_set_values)
 *   bsr_multivec_create_device(...)      device-only multivector
 *   bsr_multivec_upload / _download      explicit transfers
 * The bsr_ctx_* calls run on the context's backend.  With device-resident
 * operands they do no hidden transfers and stay asynchronous on the context's
 * stream, except the reductions (dot, norm2), whose k results are copied to
 * the host (a stream synchronisation).  Host-resident operands given to
 * bsr_ctx_spmm on a CUDA context are a convenience path: they are uploaded
 * (mirrors kept), the product is computed on the device and Y is downloaded.
 *
 * A device-resident multivector remembers the context that created its device
 * copy; the plain bsr_multivec_* operations of core.h then run on the device
 * too.  Destroy contexts after the objects that live on them.
 *
 * Every CUDA error comes back as BSR_ERR_CUDA (BSR_ERR_NOMEM for device
 * out-of-memory) with the CUDA message and the call site in bsr_last_error();
 * the objects involved stay valid (they can be destroyed or reused). */
#ifndef BSRSOLVE_CONTEXT_H
#define BSRSOLVE_CONTEXT_H

#include "core.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { BSR_BACKEND_CPU = 0, BSR_BACKEND_CUDA = 1 } bsr_backend;
typedef struct bsr_context bsr_context;

/* Create a context.  CUDA: device is the CUDA device id, stream a
 * cudaStream_t passed as void* (NULL: the context creates and owns a
 * non-blocking stream).  Without CUDA or without a usable device a CUDA
 * context fails with BSR_ERR_NODEVICE.  device/stream are ignored for CPU. */
bsr_status bsr_context_create(bsr_context **ctx, bsr_backend backend, int device, void *stream);
/* Synchronise and free the context and its handles (NULL is fine). */
void bsr_context_destroy(bsr_context *ctx);
bsr_backend bsr_context_backend(const bsr_context *ctx);
/* Wait for all work queued on the context's stream (no-op on CPU). */
bsr_status bsr_context_sync(bsr_context *ctx);
/* One line describing the backend, e.g. "cuda:0 NVIDIA H100 80GB HBM3 (132 SMs)". */
const char *bsr_context_describe(const bsr_context *ctx);
/* Number of usable CUDA devices (0 in a CPU-only build). */
int bsr_device_count(void);

/* ---- device residency ---------------------------------------------------- */
/* Create (first call) or refresh (values only, after bsr_matrix_set_values;
 * the pattern of a matrix never changes) the device mirror of A.  No-op on
 * a CPU context or when the mirror is current.  The first GPU product with A
 * adds a second, sliced copy of its values (32 block rows side by side: the
 * layout the fastest SpMM kernels read), about A's size again; it follows
 * later refreshes and is left out (the BSR kernels then run, with the same
 * results) where a few very long rows would pad it past twice A's blocks or
 * where it would leave less device memory free than it takes. */
bsr_status bsr_matrix_upload(bsr_context *ctx, bsr_matrix *A);
/* Nonzero when A has a current device mirror. */
int bsr_matrix_on_device(const bsr_matrix *A);
/* Device-only n x k multivector (no host copy; contents undefined until
 * written).  On a CPU context it is an ordinary host multivector. */
bsr_status bsr_multivec_create_device(bsr_context *ctx, bsr_multivec **X, int64_t n, int k,
                                      bsr_precision prec);
/* Copy host -> device (creating the device copy if needed); afterwards the
 * device copy is current and operations run there. */
bsr_status bsr_multivec_upload(bsr_context *ctx, bsr_multivec *X);
/* Copy device -> host (allocating the host copy of a device-only vector);
 * afterwards both copies are current until one is written. */
bsr_status bsr_multivec_download(bsr_context *ctx, bsr_multivec *X);
/* Nonzero when X's device copy is current. */
int bsr_multivec_on_device(const bsr_multivec *X);

/* ---- SpMM kernels ---------------------------------------------------------- */
typedef enum {
    BSR_KERNEL_AUTO = 0,     /* the backend's best: CPU OpenMP; CUDA see bsr_kernel_auto */
    BSR_KERNEL_S1 = 1,       /* CPU sequential reference */
    BSR_KERNEL_OMP = 2,      /* CPU OpenMP, row-parallel */
    /* 3..8: the GPU kernel variants that `bsrsolve bench spmm` compares
     * (named "p11", "p12", "p13", "p14", "warp", "rowj" by bsr_kernel_name) */
    BSR_KERNEL_CUSPARSE = 9, /* CUDA: cuSPARSE bsrmv (k = 1) / bsrmm (through a
                                column-major scratch copy of Y; not deterministic
                                by contract; blocks of 2 x 2 and larger: b = 1 is
                                BSR_ERR_UNSUPPORTED) */
    BSR_KERNEL_COUNT = 10
} bsr_kernel;
/* Short name ("auto", "s1", "omp", "p11", ..., "warp", "rowj", "cusparse"). */
const char *bsr_kernel_name(bsr_kernel k);
/* Parse a name as printed by bsr_kernel_name. */
bsr_status bsr_kernel_parse(const char *name, bsr_kernel *k);
/* Nonzero when the kernel gives bit-identical results run to run. */
int bsr_kernel_deterministic(bsr_kernel k);
/* The kernel AUTO runs for A with k vectors on ctx's backend.  On CUDA it is
 * "rowj" (one thread per scalar row and group of vectors), whose vectors per
 * thread, layout (BSR or the sliced copy, bsr_matrix_upload) and threads per
 * block AUTO picks by a short on-device trial at the first product with A for
 * each k (cached in A's device mirror; uses a Y-sized scratch).  All
 * candidates sum in the same order, so AUTO is deterministic bit for bit
 * whatever it picks. */
bsr_kernel bsr_kernel_auto(const bsr_context *ctx, const bsr_matrix *A, int k);

/* Y = alpha*A*X + beta*Y on ctx's backend with the given kernel (beta == 0:
 * Y is write-only).  GPU kernels support b = 1..10 and any k (the variants
 * run k > 16 in chunks of 16 columns).  CPU kernels on a CUDA
 * context and GPU kernels on a CPU context are refused (BSR_ERR_ARG).  On the
 * H100, AUTO (ROWJ) reaches 95% of the device-to-device copy bandwidth at
 * k = 1 and 2-6x cuSPARSE bsrmm at k > 1 on block stencils (bench/RESULTS.md). */
bsr_status bsr_ctx_spmm(bsr_context *ctx, bsr_kernel kernel, double alpha, const bsr_matrix *A,
                        const bsr_multivec *X, double beta, bsr_multivec *Y);

/* ---- multivector operations on ctx's backend --------------------------------
 * All operands current on the device (CUDA context) or on the host (CPU).
 * Same shape required; same precision except for bsr_ctx_copy.  Per-column
 * scalars are host arrays of k doubles.  done (may be NULL): done[j] != 0
 * freezes column j of the output (masked update for converged columns). */
bsr_status bsr_ctx_fill(bsr_context *ctx, bsr_multivec *X, double value);
bsr_status bsr_ctx_copy(bsr_context *ctx, bsr_multivec *Y, const bsr_multivec *X);
/* Y(:,j) += a[j] * X(:,j). */
bsr_status bsr_ctx_axpy(bsr_context *ctx, bsr_multivec *Y, const double *a, const bsr_multivec *X);
/* X(:,j) *= a[j]. */
bsr_status bsr_ctx_scale(bsr_context *ctx, bsr_multivec *X, const double *a);
/* Y(:,j) = a[j]*X(:,j) + b[j]*Y(:,j) (b[j] == 0: Y write-only), unless done[j]. */
bsr_status bsr_ctx_axpby(bsr_context *ctx, const double *a, const bsr_multivec *X, const double *b,
                         bsr_multivec *Y, const int *done);
/* Z(:,j) = a[j]*X(:,j) + b[j]*Y(:,j) + c[j]*Z(:,j) (c[j] == 0: Z write-only),
 * unless done[j].  BiCGStab's p = r + beta*(p - omega*v) and x += alpha*p + omega*s. */
bsr_status bsr_ctx_axpbypcz(bsr_context *ctx, const double *a, const bsr_multivec *X,
                            const double *b, const bsr_multivec *Y, const double *c,
                            bsr_multivec *Z, const int *done);
/* out[j] = X(:,j) . Y(:,j), accumulated in double with a fixed reduction
 * tree (bit-identical run to run); out is a host array of k doubles. */
bsr_status bsr_ctx_dot(bsr_context *ctx, const bsr_multivec *X, const bsr_multivec *Y, double *out);
/* out[j] = ||X(:,j)||_2 (same reduction as bsr_ctx_dot). */
bsr_status bsr_ctx_norm2(bsr_context *ctx, const bsr_multivec *X, double *out);


#ifdef __cplusplus
}
#endif
#endif
