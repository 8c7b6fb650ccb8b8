/* SPDX-License-Identifier: BSD-3-Clause */
/* CPU-only build: the CUDA backend's entry points refuse with BSR_ERR_NODEVICE.
 * Host code only reaches them for CUDA contexts or device-resident objects,
 * which cannot exist here, so these mostly guard against misuse. */
#include "internal.h"

#define NODEV(fn) bsr_error(BSR_ERR_NODEVICE, "%s: bsrsolve was built without CUDA", fn)

bsr_status bsr_cuda_context_init(bsr_context *ctx, int device, void *stream)
{
    (void)ctx; (void)stream;
    return bsr_error(BSR_ERR_NODEVICE, "bsr_context_create: CUDA device %d requested but bsrsolve was built without CUDA", device);
}
void bsr_cuda_context_fini(bsr_context *ctx) { (void)ctx; }
bsr_status bsr_cuda_sync(bsr_context *ctx) { (void)ctx; return NODEV("bsr_context_sync"); }
bsr_status bsr_cuda_matrix_upload(bsr_context *ctx, bsr_matrix *A) { (void)ctx; (void)A; return NODEV("bsr_matrix_upload"); }
bsr_status bsr_cuda_multivec_alloc(bsr_context *ctx, bsr_multivec *X) { (void)ctx; (void)X; return NODEV("bsr_multivec_create_device"); }
bsr_status bsr_cuda_multivec_upload(bsr_context *ctx, bsr_multivec *X) { (void)ctx; (void)X; return NODEV("bsr_multivec_upload"); }
bsr_status bsr_cuda_multivec_download(bsr_context *ctx, bsr_multivec *X) { (void)ctx; (void)X; return NODEV("bsr_multivec_download"); }
bsr_status bsr_cuda_mv_dotp(bsr_context *ctx, int np, const bsr_multivec *const *X, const bsr_multivec *const *Y,
                            double *const *out)
{ (void)ctx; (void)np; (void)X; (void)Y; (void)out; return NODEV("multivector dotp"); }
bsr_status bsr_cuda_multivec_xfer(bsr_context *ctx, bsr_multivec *X, void *h, int to_dev) { (void)ctx; (void)X; (void)h; (void)to_dev; return NODEV("multivector transfer"); }
bsr_context *bsr_cuda_multivec_context(const bsr_multivec *X) { (void)X; return NULL; }
bsr_status bsr_cuda_spmm(bsr_context *ctx, bsr_kernel kernel, double alpha, const bsr_matrix *A,
                         const bsr_multivec *X, double beta, bsr_multivec *Y)
{
    (void)ctx; (void)kernel; (void)alpha; (void)A; (void)X; (void)beta; (void)Y;
    return NODEV("bsr_ctx_spmm");
}
bsr_status bsr_cuda_spmm_rowj(bsr_context *ctx, int code, int threads, double alpha, const bsr_matrix *A,
                              const bsr_multivec *X, double beta, bsr_multivec *Y)
{
    (void)ctx; (void)code; (void)threads; (void)alpha; (void)A; (void)X; (void)beta; (void)Y;
    return NODEV("ROWJ SpMM");
}
bsr_kernel bsr_cuda_kernel_auto(const bsr_matrix *A, int k) { (void)A; (void)k; return BSR_KERNEL_OMP; }
int bsr_cuda_matrix_sliced(const bsr_matrix *A) { (void)A; return 0; }
void bsr_cuda_spmm_auto_pick(const bsr_matrix *A, int kk, int *code, int *threads) { (void)A; (void)kk; *code = *threads = 0; }
bsr_status bsr_cuda_mv_fill(bsr_context *ctx, bsr_multivec *X, double value) { (void)ctx; (void)X; (void)value; return NODEV("multivector fill"); }
bsr_status bsr_cuda_mv_copy(bsr_context *ctx, bsr_multivec *Y, const bsr_multivec *X) { (void)ctx; (void)Y; (void)X; return NODEV("multivector copy"); }
bsr_status bsr_cuda_mv_scale(bsr_context *ctx, bsr_multivec *X, const double *a) { (void)ctx; (void)X; (void)a; return NODEV("multivector scale"); }
bsr_status bsr_cuda_mv_axpbypcz(bsr_context *ctx, const double *a, const bsr_multivec *X,
                                const double *b, const bsr_multivec *Y, const double *c,
                                bsr_multivec *Z, const int *done)
{
    (void)ctx; (void)a; (void)X; (void)b; (void)Y; (void)c; (void)Z; (void)done;
    return NODEV("multivector update");
}
bsr_status bsr_cuda_mv_dot(bsr_context *ctx, const bsr_multivec *X, const bsr_multivec *Y, double *out)
{
    (void)ctx; (void)X; (void)Y; (void)out;
    return NODEV("multivector dot");
}
bsr_status bsr_cuda_time(bsr_context *ctx, bsr_status (*fn)(void *), void *arg, int warm, int reps, double *ms)
{
    (void)ctx; (void)fn; (void)arg; (void)warm; (void)reps; (void)ms;
    return NODEV("bsr_cuda_time");
}
bsr_status bsr_cuda_copy_gbs(bsr_context *ctx, size_t bytes, int reps, double *gbs)
{
    (void)ctx; (void)bytes; (void)reps; (void)gbs;
    return NODEV("bsr_cuda_copy_gbs");
}
