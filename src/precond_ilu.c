/* Block ILU(0) / ILUT / ILU2 preconditioners through bsr_ilu (scaling,
 * ordering and factors live there); factors are stored in precond_precision,
 * vectors converted around the apply when the working precision differs. */
#include "precond_impl.h"

bsr_status bsr_pc_ilu(const bsr_matrix *A, const bsr_solver_options *o, bsr_pc **pc)
{
    (void)A; (void)o; (void)pc;
    return bsr_error(BSR_ERR_UNSUPPORTED, "precond=%s: ILU preconditioners arrive with the ilu module", bsr_pc_name(o->precond));
}

bsr_status bsr_pc_ilu_device(bsr_context *ctx, const bsr_matrix *A, const bsr_solver_options *o,
                             bsr_pc *cpu, bsr_pc *pc)
{
    (void)ctx; (void)A; (void)cpu; (void)pc;
    return bsr_error(BSR_ERR_UNSUPPORTED, "precond=%s: no device version yet", bsr_pc_name(o->precond));
}
