/* SPDX-License-Identifier: BSD-3-Clause */
/* The plugin's small helpers: its -log_view events, library statuses as
 * PETSc error codes, vector copies between PETSc and the library, option
 * names with the PC's prefix. */
#include "bsrpetsc.h"
#include <omp.h>
#include <string.h>

PetscLogEvent BSRPETSC_MatUpdate, BSRPETSC_Setup, BSRPETSC_Refactor, BSRPETSC_Apply;

PetscErrorCode BsrPetscLogRegister(void)
{
    static PetscBool done = PETSC_FALSE;
    PetscClassId cls;

    PetscFunctionBegin;
    if (done) PetscFunctionReturn(0);
    done = PETSC_TRUE;
    PetscCall(PetscClassIdRegister("bsrsolve", &cls));
    PetscCall(PetscLogEventRegister("BsrMatUpdate", cls, &BSRPETSC_MatUpdate));
    PetscCall(PetscLogEventRegister("BsrSetUp", cls, &BSRPETSC_Setup));
    PetscCall(PetscLogEventRegister("BsrRefactor", cls, &BSRPETSC_Refactor));
    PetscCall(PetscLogEventRegister("BsrApply", cls, &BSRPETSC_Apply));
    PetscFunctionReturn(0);
}

PetscErrorCode BsrPetscErrorCode(bsr_status s)
{
    switch (s) {
    case BSR_OK: return 0;
    case BSR_ERR_ARG: return PETSC_ERR_ARG_WRONG;
    case BSR_ERR_SIZE: return PETSC_ERR_ARG_SIZ;
    case BSR_ERR_NOMEM: return PETSC_ERR_MEM;
    case BSR_ERR_IO: return PETSC_ERR_FILE_READ;
    case BSR_ERR_VALUE: return PETSC_ERR_FP;
    case BSR_ERR_STRUCTURE: return PETSC_ERR_ARG_WRONG;
    case BSR_ERR_SINGULAR: return PETSC_ERR_MAT_LU_ZRPVT;
    case BSR_ERR_UNSUPPORTED: return PETSC_ERR_SUP;
    case BSR_ERR_CUDA: return PETSC_ERR_GPU;
    case BSR_ERR_NODEVICE: return PETSC_ERR_SUP_SYS;
    case BSR_ERR_NOCONV:
    case BSR_ERR_BREAKDOWN: return PETSC_ERR_NOT_CONVERGED;
    default: return PETSC_ERR_LIB;
    }
}

PetscErrorCode BsrPetscSetUpBegin(PC pc, PetscBool same, PetscBool *setup)
{
    BsrPetscPCHead *h = (BsrPetscPCHead *)pc->data;
    PetscBool fresh = PETSC_TRUE;

    PetscFunctionBegin;
    *setup = PETSC_FALSE;
    PetscCall(PetscLogEventBegin(BSRPETSC_MatUpdate, pc, 0, 0, 0));
    PetscErrorCode ierr = BsrPetscMatUpdate(pc, &h->mat, &fresh);
    PetscCall(PetscLogEventEnd(BSRPETSC_MatUpdate, pc, 0, 0, 0));
    const PetscBool refactor = !ierr && !h->mat.empty && !fresh && same;
    if (!refactor) h->ops->release(h);   /* factors are kept for a refactor only */
    PetscCall(ierr);
    if (h->mat.empty) PetscFunctionReturn(0);
    if (!refactor) {
        *setup = PETSC_TRUE;
        PetscFunctionReturn(0);
    }
    char what[64];
    snprintf(what, sizeof what, "%s: refactor", h->ops->name);
    BsrPetscTimedCall(pc, BSRPETSC_Refactor, what, h->ops->refactor(h));
    h->refactors++;
    PetscFunctionReturn(0);
}

PetscErrorCode BsrPetscViewCounts(PetscViewer viewer, const BsrPetscPCHead *h)
{
    PetscFunctionBegin;
    PetscCall(PetscViewerASCIIPrintf(viewer, "  full setups %d, refactors %d; %d OpenMP thread(s)\n", h->setups,
                                     h->refactors, omp_get_max_threads()));
    PetscFunctionReturn(0);
}

/* x's local length checked against X's one column. */
static PetscErrorCode check_sizes(Vec x, const bsr_multivec *X, PetscInt *n)
{
    PetscFunctionBegin;
    PetscCall(VecGetLocalSize(x, n));
    PetscCheck(*n == bsr_multivec_rows(X) && bsr_multivec_cols(X) == 1, PETSC_COMM_SELF, PETSC_ERR_ARG_SIZ,
               "bsrsolve: vector of %" PetscInt_FMT " entries for a matrix of %lld rows", *n,
               (long long)bsr_multivec_rows(X));
    PetscFunctionReturn(0);
}

PetscErrorCode BsrPetscVecToMultivec(Vec x, bsr_multivec *X)
{
    const PetscScalar *xa;
    PetscInt n;

    PetscFunctionBegin;
    PetscCall(check_sizes(x, X, &n));
    PetscCall(VecGetArrayRead(x, &xa));
    PetscCall(PetscArraycpy((PetscScalar *)bsr_multivec_data(X), xa, n));
    PetscCall(VecRestoreArrayRead(x, &xa));
    PetscFunctionReturn(0);
}

PetscErrorCode BsrPetscMultivecToVec(const bsr_multivec *X, Vec y)
{
    PetscScalar *ya;
    PetscInt n;

    PetscFunctionBegin;
    PetscCall(check_sizes(y, X, &n));
    PetscCall(VecGetArrayWrite(y, &ya));
    PetscCall(PetscArraycpy(ya, (const PetscScalar *)bsr_multivec_cdata(X), n));
    PetscCall(VecRestoreArrayWrite(y, &ya));
    PetscFunctionReturn(0);
}

/* PCReset of every type: what depends on the matrix, then the matrix. */
static PetscErrorCode pc_reset(PC pc)
{
    BsrPetscPCHead *h = (BsrPetscPCHead *)pc->data;

    PetscFunctionBegin;
    h->ops->release(h);
    PetscCall(BsrPetscMatReset(&h->mat));
    PetscFunctionReturn(0);
}

/* PCDestroy of every type: reset, what the type holds for its life, the data. */
static PetscErrorCode pc_destroy(PC pc)
{
    BsrPetscPCHead *h = (BsrPetscPCHead *)pc->data;

    PetscFunctionBegin;
    PetscCall(pc_reset(pc));
    if (h->ops->finalize) h->ops->finalize(h);
    PetscCall(PetscFree(pc->data));
    PetscFunctionReturn(0);
}

PetscErrorCode BsrPetscPCInit(PC pc, size_t size, const BsrPetscPCOps *ops, void **data)
{
    void *d;

    PetscFunctionBegin;
    PetscCall(PetscCalloc(size, &d));
    ((BsrPetscPCHead *)d)->ops = ops;
    pc->data = d;
    if (data) *data = d;
    pc->ops->setup = ops->setup;
    pc->ops->apply = ops->apply;
    pc->ops->setfromoptions = ops->setfromoptions;
    pc->ops->view = ops->view;
    pc->ops->reset = pc_reset;
    pc->ops->destroy = pc_destroy;
    PetscFunctionReturn(0);
}

void BsrPetscDefaults(bsr_solver_options *o, int cuda)
{
    const int threshold = o->precond == BSR_PC_ILUT || o->precond == BSR_PC_ILU2;
    if (cuda) {
        if (threshold && !o->reorder[0] && o->cap == BSR_CAP_DEFAULT) {
            o->cap = BSR_ILU_CAP_NONE;
            snprintf(o->reorder, sizeof o->reorder, "%s", BSR_PETSC_THRESHOLD_ORDER);
        }
        return;
    }
    if (o->reorder[0]) return;
    if (threshold) snprintf(o->reorder, sizeof o->reorder, "%s", BSR_PETSC_THRESHOLD_ORDER);
    else if (o->precond == BSR_PC_ILU0) snprintf(o->reorder, sizeof o->reorder, "rcm");
}

void BsrPetscOptionName(PC pc, const char *name, char *buf, size_t len)
{
    const char *prefix = ((PetscObject)pc)->prefix;
    snprintf(buf, len, "-%s%s", prefix ? prefix : "", name);
}
