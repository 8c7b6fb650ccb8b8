/* SPDX-License-Identifier: BSD-3-Clause */
/* CPU-only build: the device parts of issue 22 (Jacobi triangular sweeps,
 * event timing of the profile) report
 * BSR_ERR_NODEVICE; the profile then times on the host clock. */
#include "internal.h"
#include "gpu_ilu.h"
#include "../../kernels/trsv.h"
#include <string.h>

#define NODEV(fn) bsr_error(BSR_ERR_NODEVICE, "%s: bsrsolve was built without CUDA", fn)

bsr_status bsr_gpu_ilu_set_jacobi(bsr_gpu_ilu *G, int sweeps)
{
    (void)G; (void)sweeps;
    return NODEV("bsr_gpu_ilu_set_jacobi");
}
void bsr_gpu_ilu_apply_bytes(const bsr_gpu_ilu *G, double *fixed, double *passes)
{
    (void)G;
    *fixed = *passes = 0;
}
bsr_status bsr_cuda_evlog_create(bsr_context *ctx, bsr_cuda_evlog **L)
{
    (void)ctx;
    *L = NULL;
    return NODEV("bsr_cuda_evlog_create");
}
int bsr_cuda_evlog_begin(bsr_cuda_evlog *L) { (void)L; return -1; }
void bsr_cuda_evlog_end(bsr_cuda_evlog *L, int pair, int cls) { (void)L; (void)pair; (void)cls; }
bsr_status bsr_cuda_evlog_finish(bsr_cuda_evlog *L, double *s)
{
    (void)L; (void)s;
    return NODEV("bsr_cuda_evlog_finish");
}
bsr_status bsr_cuda_mv_upd_dot(bsr_context *ctx, int nu, bsr_multivec *const *Z, const double *const *a,
                               const bsr_multivec *const *X, const double *const *b, const bsr_multivec *const *Y,
                               const double *const *c, const int *done, const bsr_multivec *W1, double *out1,
                               const bsr_multivec *W2, double *out2)
{
    (void)ctx; (void)nu; (void)Z; (void)a; (void)X; (void)b; (void)Y; (void)c; (void)done; (void)W1; (void)out1;
    (void)W2; (void)out2;
    return NODEV("multivector update + dot");
}
