/* SSOR(omega) on A's own triangles (filled in with the ilu module's triangular solves). */
#include "precond_impl.h"

bsr_status bsr_pc_ssor(const bsr_matrix *A, double omega, bsr_precision prec, bsr_pc **pc)
{
    (void)A; (void)omega; (void)prec; (void)pc;
    return bsr_error(BSR_ERR_UNSUPPORTED, "precond=ssor: arrives with the ilu module's triangular solves");
}
