/* SPDX-License-Identifier: BSD-3-Clause */
/* PC type "bsrsolve": the library's whole solver (its Krylov method and
 * preconditioner) as PETSc's preconditioner: one PCApply solves A y = x from
 * y = 0 to the library's tolerance; with -ksp_type preonly that is the linear
 * solve (under a PETSc Krylov method it is a variable preconditioner: use
 * fgmres).  Options:
 *   -pc_bsrsolve_config key=value,...  the library's solver options string
 *                                      (an ordering or cap it leaves open is
 *                                      the plugin's: BsrPetscDefaults)
 *   -pc_bsrsolve_cuda                  the CUDA backend (a PETSc error when the
 *                                      library has no CUDA or finds no device)
 *   -pc_bsrsolve_cuda_device N         its device (default 0)
 * A solve that does not converge fails the preconditioner (the KSP reports
 * DIVERGED_PC_FAILED, the SNES a failed linear solve), or is a PETSc error
 * after PCSetErrorIfFailure().  The first PCSetUp, and any on a new pattern,
 * sets the solver up; a later one on the same pattern refactors. */
#include "bsrpetsc.h"
#include <string.h>

typedef struct {
    BsrPetscPCHead head;        /* the matrix, the operations */
    char config[1024];          /* -pc_bsrsolve_config */
    PetscBool cuda;             /* -pc_bsrsolve_cuda */
    PetscInt device;            /* -pc_bsrsolve_cuda_device */
    char built[1100];           /* config and backend of the solver held ("" none) */
    bsr_context *ctx;           /* the CUDA context, NULL on the CPU */
    int ctx_device;
    bsr_solver *s;
    bsr_multivec *B, *X;
    long applies, iterations;   /* solves and their iterations, in all */
    int last_its;
    double last_relres;
    bsr_reason last_reason;
} PC_BsrSolve;

/* The solver options that -pc_bsrsolve_config asks for (on the CPU, the
 * plugin's defaults where it leaves them open); a PETSc error naming the
 * option and the library's message when they are not valid. */
static PetscErrorCode solve_options(PC pc, const PC_BsrSolve *d, bsr_solver_options *o)
{
    MPI_Comm comm = PetscObjectComm((PetscObject)pc);
    char name[256];

    PetscFunctionBegin;
    BsrPetscOptionName(pc, "pc_bsrsolve_config", name, sizeof name);
    bsr_solver_options_default(o);
    if (bsr_solver_options_parse(o, d->config) || bsr_solver_options_check(o))
        SETERRQ(comm, PETSC_ERR_ARG_WRONG, "%s %s: %s", name, d->config, bsr_last_error());
    BsrPetscDefaults(o, d->cuda);
    PetscFunctionReturn(0);
}

/* Frees the CUDA context (at PCDestroy, after the solver). */
static void finalize(void *data) { bsr_context_destroy(((PC_BsrSolve *)data)->ctx); }

/* Frees the solver and its vectors (the context stays). */
static void free_solver(void *data)
{
    PC_BsrSolve *d = (PC_BsrSolve *)data;
    bsr_solver_destroy(d->s);
    bsr_multivec_destroy(d->B);
    bsr_multivec_destroy(d->X);
    d->s = NULL;
    d->B = d->X = NULL;
    d->built[0] = 0;
}

/* The CUDA context of the device asked for (none on the CPU). */
static PetscErrorCode use_backend(PC pc, PC_BsrSolve *d)
{
    char name[256];

    PetscFunctionBegin;
    if (d->ctx && (!d->cuda || d->ctx_device != d->device)) {
        bsr_context_destroy(d->ctx);
        d->ctx = NULL;
    }
    if (d->cuda && !d->ctx) {
        BsrPetscOptionName(pc, "pc_bsrsolve_cuda", name, sizeof name);
        bsr_status s = bsr_context_create(&d->ctx, BSR_BACKEND_CUDA, (int)d->device, NULL);
        if (s) {
            d->ctx = NULL;
            SETERRQ(PetscObjectComm((PetscObject)pc), BsrPetscErrorCode(s), "%s (device %" PetscInt_FMT "): %s: %s",
                    name, d->device, bsr_status_string(s), bsr_last_error());
        }
        d->ctx_device = (int)d->device;
    }
    PetscFunctionReturn(0);
}

/* New values of the PC's matrix into the factors held (BsrPetscSetUpBegin). */
static bsr_status refactor(void *data) { PC_BsrSolve *d = data; return bsr_solver_refactor(d->s, d->head.mat.A); }

/* Sets the solver up for pc's matrix, or refactors new values on the
 * pattern it was set up for. */
static PetscErrorCode PCSetUp_BsrSolve(PC pc)
{
    PC_BsrSolve *d = (PC_BsrSolve *)pc->data;
    bsr_solver_options o;
    PetscBool setup;
    char built[sizeof d->built];

    PetscFunctionBegin;
    PetscCall(solve_options(pc, d, &o));
    snprintf(built, sizeof built, "%s|%d:%d", d->config, (int)d->cuda, (int)d->device);
    PetscCall(BsrPetscSetUpBegin(pc, d->s && !strcmp(built, d->built) ? PETSC_TRUE : PETSC_FALSE, &setup));
    if (!setup) PetscFunctionReturn(0);
    PetscCall(use_backend(pc, d));
    BsrPetscCall(pc, "bsrsolve: setup", bsr_solver_create(&d->s, d->ctx, &o));
    BsrPetscTimedCall(pc, BSRPETSC_Setup, "bsrsolve: setup", bsr_solver_setup(d->s, d->head.mat.A));
    const int64_t n = (int64_t)bsr_matrix_nbrows(d->head.mat.A) * bsr_matrix_block(d->head.mat.A);
    BsrPetscCall(pc, "bsrsolve: setup", bsr_multivec_create(&d->B, n, 1, BSRPETSC_PREC));
    BsrPetscCall(pc, "bsrsolve: setup", bsr_multivec_create(&d->X, n, 1, BSRPETSC_PREC));
    memcpy(d->built, built, sizeof built);
    d->head.setups++;
    PetscFunctionReturn(0);
}

/* y = A^{-1} x to the library's tolerance, from y = 0. */
static PetscErrorCode PCApply_BsrSolve(PC pc, Vec x, Vec y)
{
    PC_BsrSolve *d = (PC_BsrSolve *)pc->data;
    bsr_solver_stats st;

    PetscFunctionBegin;
    if (d->head.mat.empty) {
        PetscCall(VecCopy(x, y));
        PetscFunctionReturn(0);
    }
    PetscCheck(d->s && d->B, PetscObjectComm((PetscObject)pc), PETSC_ERR_ORDER,
               "bsrsolve: not set up (the last PCSetUp failed)");
    PetscCall(BsrPetscVecToMultivec(x, d->B));
    BsrPetscCall(pc, "bsrsolve: solve", bsr_multivec_fill(d->X, 0.0));
    memset(&st, 0, sizeof st);
    PetscCall(PetscLogEventBegin(BSRPETSC_Apply, pc, 0, 0, 0));
    bsr_status s = bsr_solver_solve(d->s, d->B, d->X, &st);
    PetscCall(PetscLogEventEnd(BSRPETSC_Apply, pc, 0, 0, 0));
    if (st.k > 0 && st.col) {
        d->last_its = st.col[0].iterations;
        d->last_relres = st.col[0].relres;
        d->last_reason = st.col[0].reason;
        d->iterations += st.col[0].iterations;
    }
    bsr_solver_stats_free(&st);
    d->applies++;
    if (s == BSR_ERR_NOCONV || s == BSR_ERR_BREAKDOWN) {
        /* the last iterate is the result; the preconditioner has failed */
        PetscCall(BsrPetscMultivecToVec(d->X, y));
        PetscCheck(!pc->erroriffailure, PetscObjectComm((PetscObject)pc), PETSC_ERR_NOT_CONVERGED,
                   "bsrsolve: solve: %s after %d iterations, relres %g: %s", bsr_reason_string(d->last_reason),
                   d->last_its, d->last_relres, bsr_last_error());
        PetscCall(PetscInfo(pc, "bsrsolve: %s after %d iterations, relres %g\n", bsr_reason_string(d->last_reason),
                            d->last_its, d->last_relres));
        PetscCall(PCSetFailedReason(pc, PC_SUBPC_ERROR));
        PetscFunctionReturn(0);
    }
    BsrPetscCall(pc, "bsrsolve: solve", s);
    PetscCall(BsrPetscMultivecToVec(d->X, y));
    PetscFunctionReturn(0);
}

/* Reads the -pc_bsrsolve_* options, and refuses a bad config now. */
static PetscErrorCode PCSetFromOptions_BsrSolve(PC pc, PetscOptionItems *PetscOptionsObject)
{
    PC_BsrSolve *d = (PC_BsrSolve *)pc->data;
    bsr_solver_options o;

    PetscFunctionBegin;
    PetscOptionsHeadBegin(PetscOptionsObject, "bsrsolve solver (bsrsolve) options");
    PetscCall(PetscOptionsString("-pc_bsrsolve_config", "bsrsolve options string (key=value,...)", "PCBSRSOLVE",
                                 d->config, d->config, sizeof d->config, NULL));
    PetscCall(PetscOptionsBool("-pc_bsrsolve_cuda", "Solve on the CUDA backend", "PCBSRSOLVE", d->cuda, &d->cuda, NULL));
    PetscCall(PetscOptionsInt("-pc_bsrsolve_cuda_device", "CUDA device", "PCBSRSOLVE", d->device, &d->device, NULL));
    PetscOptionsHeadEnd();
    PetscCall(solve_options(pc, d, &o));
    PetscFunctionReturn(0);
}

/* The solver in words: options, backend, setups, refactors, iterations. */
static PetscErrorCode PCView_BsrSolve(PC pc, PetscViewer viewer)
{
    PC_BsrSolve *d = (PC_BsrSolve *)pc->data;
    PetscBool ascii;
    bsr_solver_options o;
    char buf[1100];

    PetscFunctionBegin;
    PetscCall(PetscObjectTypeCompare((PetscObject)viewer, PETSCVIEWERASCII, &ascii));
    if (!ascii) PetscFunctionReturn(0);
    bsr_solver_options_default(&o);
    if (!bsr_solver_options_parse(&o, d->config)) {
        BsrPetscDefaults(&o, d->cuda);
        bsr_solver_options_string(&o, buf, sizeof buf);
    } else snprintf(buf, sizeof buf, "(invalid) %s", d->config);
    PetscCall(PetscViewerASCIIPrintf(viewer, "  bsrsolve %s on %s\n", buf,
                                     d->ctx ? bsr_context_describe(d->ctx) : "the CPU"));
    PetscCall(BsrPetscViewCounts(viewer, &d->head));
    if (d->applies)
        PetscCall(PetscViewerASCIIPrintf(viewer, "  %ld solves, %ld iterations in all; last: %s, %d iterations, relres %g\n",
                                         d->applies, d->iterations, bsr_reason_string(d->last_reason), d->last_its,
                                         d->last_relres));
    PetscFunctionReturn(0);
}

PetscErrorCode PCCreate_BsrSolve(PC pc)
{
    static const BsrPetscPCOps ops = {PCSetUp_BsrSolve, PCApply_BsrSolve, PCSetFromOptions_BsrSolve, PCView_BsrSolve,
                                      "bsrsolve", refactor, free_solver, finalize};
    return BsrPetscPCInit(pc, sizeof(PC_BsrSolve), &ops, NULL);
}
