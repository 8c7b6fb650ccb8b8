/* SPDX-License-Identifier: BSD-3-Clause */
/* Block Jacobi on the device: the block-diagonal inverse is computed on the
 * host in the preconditioner's precision (as the host Jacobi does), stored in
 * the vectors' precision and uploaded; applying it is an SpMM on the device.
 * In a CPU-only build the context calls report BSR_ERR_NODEVICE, so this file
 * compiles everywhere (its row is registered only with CUDA). */
#include "precond_impl.h"
#include <omp.h>

typedef struct {
    bsr_context *ctx;
    bsr_matrix *H;      /* the inverse in the preconditioner's precision (host) */
    bsr_matrix *Dinv;   /* H in the vectors' precision, with its device mirror */
} dev_jacobi;

/* Y = Dinv X on the device. */
static bsr_status dev_jacobi_apply(bsr_pc *pc, const bsr_multivec *X, bsr_multivec *Y)
{
    dev_jacobi *J = pc->data;
    return bsr_ctx_spmm(J->ctx, BSR_KERNEL_AUTO, 1.0, J->Dinv, X, 0.0, Y);
}

/* H = inverse of A's diagonal blocks, copied (converted) into Dinv of
 * precision prec (allocated the first time) and uploaded; the upload's
 * seconds into pc->dev_s. */
static bsr_status dev_jacobi_load(bsr_pc *pc, dev_jacobi *J, const bsr_matrix *A, bsr_precision hprec,
                                  bsr_precision prec)
{
    BSR_TRY(bsr_diag_inverse(A, 1.0, hprec, &J->H));
    const bsr_matrix *D = J->H;
    if (!J->Dinv) {
        BSR_TRY(bsr_matrix_copy(D, prec, &J->Dinv));
    } else {
        size_t nv = (size_t)D->nnzb * D->b * D->b;
        for (size_t e = 0; e < nv; e++) bsr_val_set(J->Dinv->val, prec, e, bsr_val_get(D->val, D->prec, e));
        J->Dinv->dev_stale = 1;
    }
    double t = bsr_now();
    bsr_status s = bsr_matrix_upload(J->ctx, J->Dinv);
    pc->dev_s = bsr_now() - t;
    return s;
}

static bsr_status dev_jacobi_refactor(bsr_pc *pc, const bsr_matrix *A)
{
    dev_jacobi *J = pc->data;
    return dev_jacobi_load(pc, J, A, J->H->prec, J->Dinv->prec);
}

static void dev_jacobi_destroy(bsr_pc *pc)
{
    dev_jacobi *J = pc->data;
    if (!J) return;
    bsr_matrix_destroy(J->H);
    bsr_matrix_destroy(J->Dinv);
    free(J);
}

/* Setup on ctx: the inverse in o->precond_precision, stored on the device in
 * A's precision (the SpMM takes the vectors' precision). */
static bsr_status dev_jacobi_setup(bsr_pc *pc, const bsr_matrix *A, const bsr_solver_options *o, bsr_context *ctx)
{
    dev_jacobi *J = bsr_calloc(1, sizeof *J, "device Jacobi");
    if (!J) return BSR_ERR_NOMEM;
    J->ctx = ctx;
    pc->data = J;
    BSR_TRY(dev_jacobi_load(pc, J, A, o->precond_precision, A->prec));
    pc->nnzb = A->nbrows;
    /* an SpMM with the block diagonal (profile's bandwidth model) */
    const bsr_matrix *D = J->Dinv;
    pc->bytes_fixed = (double)D->nnzb * ((double)D->b * D->b * bsr_precision_size(D->prec) + 4) + 4.0 * (D->nbrows + 1);
    pc->bytes_passes = 2;
    return BSR_OK;
}

const bsr_pc_ops bsr_pc_jacobi_cuda_ops = {dev_jacobi_setup, dev_jacobi_refactor, dev_jacobi_apply, dev_jacobi_destroy};
