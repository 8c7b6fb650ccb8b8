/* SPDX-License-Identifier: BSD-3-Clause */
/* IC(0) on the CUDA backend (precond=ic0): the device ILU(0) of a symmetric
 * A.  On a symmetric matrix the block ILU(0) on A's pattern is its
 * incomplete L D L^T (U = D L^T; the ILU's left scaling by block diagonals
 * leaves M unchanged), so the ILU(0) factored and applied on the device is
 * the host IC(0)'s M up to rounding and CG takes its iterations, with the
 * device refactor at every new set of values (factor=auto is gpu for it,
 * bsr_pc_options_resolve; natural order, as IC(0)'s, unless reorder says
 * otherwise; no matching).  Setup and refactor check A's
 * symmetry as the host IC(0) does; a pivot block that is not positive
 * definite shows as CG's indefinite stop (r'M^{-1}r <= 0) rather than as the
 * host's named row.  In a CPU-only build its row is not registered. */
#include "precond_impl.h"
#include <stdio.h>
#include <string.h>

typedef struct {
    bsr_pc *ilu;  /* the device ILU(0), made by the table's factory */
    int valid;    /* the last setup or refactor passed the symmetry check and factored */
} ic0_dev;

/* What the solver reads of pc: the ILU's figures, and the info line naming IC(0). */
static void ic0_dev_describe(bsr_pc *pc, const ic0_dev *D)
{
    pc->nnzb = D->ilu->nnzb;
    pc->pivots_regularized = D->ilu->pivots_regularized;
    pc->bytes_fixed = D->ilu->bytes_fixed;
    pc->bytes_passes = D->ilu->bytes_passes;
    pc->dev_s = D->ilu->dev_s;
    snprintf(pc->info, sizeof pc->info, "block IC(0) as the device ILU(0) of symmetric A, %.400s", D->ilu->info);
}

static bsr_status ic0_dev_apply(bsr_pc *pc, const bsr_multivec *X, bsr_multivec *Y)
{
    ic0_dev *D = pc->data;
    if (!D->valid)
        return bsr_error(BSR_ERR_ARG, "precond=ic0 (cuda): the last refactor failed; refactor (or set up) again before solving");
    return D->ilu->apply(D->ilu, X, Y);
}

static bsr_status ic0_dev_refactor(bsr_pc *pc, const bsr_matrix *A)
{
    ic0_dev *D = pc->data;
    D->valid = 0;
    BSR_TRY(bsr_pc_check_symmetric(A, "ic0"));
    BSR_TRY(D->ilu->refactor(D->ilu, A));
    D->valid = 1;
    ic0_dev_describe(pc, D);
    return BSR_OK;
}

static void ic0_dev_destroy(bsr_pc *pc)
{
    ic0_dev *D = pc->data;
    if (!D) return;
    bsr_pc_destroy(D->ilu);
    free(D);
}

static bsr_status ic0_dev_setup(bsr_pc *pc, const bsr_matrix *A, const bsr_solver_options *o, bsr_context *ctx)
{
    BSR_TRY(bsr_pc_check_symmetric(A, "ic0"));
    ic0_dev *D = bsr_calloc(1, sizeof *D, "IC(0) on the device");
    if (!D) return BSR_ERR_NOMEM;
    pc->data = D;
    bsr_solver_options io = *o;
    io.precond = BSR_PC_ILU0;
    io.match = BSR_MATCH_NONE;   /* a row permutation would break the symmetry of M */
    if (!io.reorder[0]) snprintf(io.reorder, sizeof io.reorder, "natural");   /* IC(0)'s order */
    BSR_TRY(bsr_pc_create(A, &io, ctx, NULL, NULL, &D->ilu));
    D->valid = 1;
    ic0_dev_describe(pc, D);
    return BSR_OK;
}

const bsr_pc_ops bsr_pc_ic0_cuda_ops = {ic0_dev_setup, ic0_dev_refactor, ic0_dev_apply, ic0_dev_destroy};
