/* CUDA backend of the solver: device-resident operator, preconditioner and
 * Krylov vectors through the context API (bsr_ctx_*).  Everything stays on the
 * device; only the k-vectors of coefficients go down and the k-vectors of
 * inner products come back per operation.  (Filled in on top of the context
 * backend; until then the device path reports BSR_ERR_NODEVICE.) */
#include "solver_impl.h"

int bsr_solver_ctx_is_device(bsr_context *ctx)
{
    (void)ctx;
    return 0;
}

bsr_status bsr_kops_cuda(bsr_kops *o, bsr_context *ctx, const bsr_matrix *A, bsr_pc *pc, int k)
{
    (void)o; (void)ctx; (void)A; (void)pc; (void)k;
    return bsr_error(BSR_ERR_NODEVICE, "solver: CUDA backend not available");
}

bsr_status bsr_solver_device_setup(bsr_solver *s)
{
    (void)s;
    return bsr_error(BSR_ERR_NODEVICE, "solver: CUDA backend not available");
}

bsr_status bsr_solver_device_refactor(bsr_solver *s)
{
    (void)s;
    return bsr_error(BSR_ERR_NODEVICE, "solver: CUDA backend not available");
}

bsr_status bsr_solver_cuda_work_vec(bsr_solver *s, const bsr_kops *o, const bsr_multivec *V,
                                    bsr_multivec **W, int *own)
{
    (void)s; (void)o; (void)V; (void)W; (void)own;
    return bsr_error(BSR_ERR_NODEVICE, "solver: CUDA backend not available");
}

bsr_status bsr_solver_cuda_work_back(bsr_solver *s, const bsr_kops *o, const bsr_multivec *W,
                                     bsr_multivec *V)
{
    (void)s; (void)o; (void)W; (void)V;
    return bsr_error(BSR_ERR_NODEVICE, "solver: CUDA backend not available");
}
