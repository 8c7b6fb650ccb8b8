/* SPDX-License-Identifier: BSD-3-Clause */
/* Block Jacobi: M = blockdiag(A); its inverse is stored as a block-diagonal
 * BSR matrix, so applying it is an SpMM (the same kernel on every backend). */
#include "precond_impl.h"

typedef struct {
    bsr_matrix *Dinv;
    bsr_pc_mixed mix;
} jacobi;

static bsr_status spmm_fn(void *data, const bsr_multivec *X, bsr_multivec *Y)
{
    return bsr_spmm_cpu(BSR_SPMM_OMP, 1.0, ((jacobi *)data)->Dinv, X, 0.0, Y);
}

static bsr_status jacobi_apply(bsr_pc *pc, const bsr_multivec *X, bsr_multivec *Y)
{
    jacobi *J = pc->data;
    return bsr_pc_mixed_apply(&J->mix, J->Dinv->prec, X, Y, spmm_fn, J);
}

static bsr_status jacobi_refactor(bsr_pc *pc, const bsr_matrix *A)
{
    jacobi *J = pc->data;
    return bsr_diag_inverse(A, 1.0, J->Dinv->prec, &J->Dinv);
}

static void jacobi_destroy(bsr_pc *pc)
{
    jacobi *J = pc->data;
    if (!J) return;
    bsr_matrix_destroy(J->Dinv);
    bsr_pc_mixed_free(&J->mix);
    free(J);
}

/* The block-diagonal inverse of a Jacobi preconditioner (for device wrappers). */
const bsr_matrix *bsr_pc_jacobi_matrix(const bsr_pc *pc)
{
    return pc && pc->apply == jacobi_apply ? ((const jacobi *)pc->data)->Dinv : NULL;
}

bsr_status bsr_pc_jacobi(const bsr_matrix *A, bsr_precision prec, bsr_pc **out)
{
    bsr_pc *pc = bsr_calloc(1, sizeof *pc, "preconditioner");
    jacobi *J = bsr_calloc(1, sizeof *J, "Jacobi preconditioner");
    if (!pc || !J) { free(pc); free(J); return BSR_ERR_NOMEM; }
    pc->name = "jacobi";
    pc->data = J;
    pc->apply = jacobi_apply;
    pc->refactor = jacobi_refactor;
    pc->destroy = jacobi_destroy;
    bsr_status s = bsr_diag_inverse(A, 1.0, prec, &J->Dinv);
    if (s) { bsr_pc_destroy(pc); return s; }
    pc->nnzb = A->nbrows;
    *out = pc;
    return BSR_OK;
}
