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

/* Setup: the block-diagonal inverse of A in o->precond_precision. */
static bsr_status jacobi_setup(bsr_pc *pc, const bsr_matrix *A, const bsr_solver_options *o, bsr_context *ctx)
{
    (void)ctx;
    jacobi *J = bsr_calloc(1, sizeof *J, "Jacobi preconditioner");
    if (!J) return BSR_ERR_NOMEM;
    pc->data = J;
    BSR_TRY(bsr_diag_inverse(A, 1.0, o->precond_precision, &J->Dinv));
    pc->nnzb = A->nbrows;
    return BSR_OK;
}

const bsr_pc_ops bsr_pc_jacobi_cpu_ops = {jacobi_setup, jacobi_refactor, jacobi_apply, jacobi_destroy};
