/* SPDX-License-Identifier: BSD-3-Clause */
/* Backend plumbing of the solver object: which backend a context selects, and
 * working copies of the caller's B and X (precision or residency differing
 * from the iteration's). */
#include "solver_impl.h"

bsr_status bsr_solver_work_vec(bsr_solver *s, const bsr_kops *o, const bsr_multivec *V,
                               bsr_multivec **W, int *own)
{
    *W = NULL;
    *own = 0;
    if (s->device) return bsr_solver_cuda_work_vec(s, o, V, W, own);
    if (V->prec == o->prec && V->data && (V->where & BSR_ON_HOST)) {
        *W = (bsr_multivec *)V; /* used in place: the iteration writes X directly */
        return BSR_OK;
    }
    if (!V->data || !(V->where & BSR_ON_HOST))
        return bsr_error(BSR_ERR_ARG, "bsr_solver_solve: a device-resident multivector was passed to a CPU solver; "
                         "download it or create the solver on a CUDA context");
    BSR_TRY(o->vnew(o, W));
    *own = 1;
    return bsr_multivec_copy(*W, V);
}

bsr_status bsr_solver_work_back(bsr_solver *s, const bsr_kops *o, const bsr_multivec *W,
                                bsr_multivec *V)
{
    (void)o;
    if (s->device) return bsr_solver_cuda_work_back(s, o, W, V);
    return bsr_multivec_copy(V, W);
}
