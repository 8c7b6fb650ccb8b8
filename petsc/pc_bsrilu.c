/* SPDX-License-Identifier: BSD-3-Clause */
/* PC type "bsrilu": the library's block ILU(0), ILUT or ILU2 as PETSc's
 * preconditioner (one PCApply = one application of M^{-1} = (LU)^{-1}, on
 * the CPU) under PETSc's own Krylov methods.  Options:
 *   -pc_bsrilu_type ilu0|ilut|ilu2   the factorization (default: the config's
 *                                    precond, else ilu0)
 *   -pc_bsrilu_config key=value,...  the library's solver options string; its
 *                                    preconditioner keys (tau1, tau2, fill, cap,
 *                                    keep_pattern, reorder, match, pivot,
 *                                    pattern, precond_precision) apply; an
 *                                    ordering left open is the plugin's CPU
 *                                    default (BsrPetscDefaults: metis for
 *                                    ILUT/ILU2, rcm for ILU(0))
 * The first PCSetUp, and any on a new pattern, sets the factorization up;
 * a later one on the same pattern refactors the new values into it. */
#include "bsrpetsc.h"
#include <string.h>

static const char *const kind_names[] = {"ilu0", "ilut", "ilu2"};

typedef struct {
    BsrPetscPCHead head;        /* the matrix, the operations */
    bsr_pc_kind kind;           /* -pc_bsrilu_type */
    PetscBool kind_set;
    char config[1024];          /* -pc_bsrilu_config */
    char built[1100];           /* kind and config of the factorization held ("" none) */
    bsr_pc_kind kind_used;
    char reorder_used[64];      /* the ordering spec of the factorization held */
    bsr_ilu *F;
    bsr_multivec *X;            /* apply's work vector (in place) */
} PC_BsrIlu;

/* The ILU options that pc's options ask for (the plugin's CPU defaults where
 * they leave them open), the kind and the ordering spec (reorder: 64 chars,
 * may be NULL); a PETSc error naming the option and the library's message
 * when they are not valid. */
static PetscErrorCode ilu_options(PC pc, const PC_BsrIlu *d, bsr_ilu_options *io, bsr_pc_kind *kind, char *reorder)
{
    MPI_Comm comm = PetscObjectComm((PetscObject)pc);
    bsr_solver_options o;
    char name[256];

    PetscFunctionBegin;
    BsrPetscOptionName(pc, "pc_bsrilu_config", name, sizeof name);
    bsr_solver_options_default(&o);
    if (bsr_solver_options_parse(&o, d->config))
        SETERRQ(comm, PETSC_ERR_ARG_WRONG, "%s %s: %s", name, d->config, bsr_last_error());
    if (d->kind_set) o.precond = d->kind;
    BsrPetscDefaults(&o, 0);
    PetscCheck(o.precond == BSR_PC_ILU0 || o.precond == BSR_PC_ILUT || o.precond == BSR_PC_ILU2, comm,
               PETSC_ERR_ARG_WRONG, "%s %s: precond=%s is not an ILU (ilu0|ilut|ilu2); -pc_type bsrsolve runs the "
               "library's other preconditioners", name, d->config, bsr_pc_name(o.precond));
    if (bsr_solver_options_check(&o))
        SETERRQ(comm, PETSC_ERR_ARG_WRONG, "%s %s: %s", name, d->config, bsr_last_error());
    PetscCheck(o.factor != BSR_FACTOR_GPU, comm, PETSC_ERR_SUP,
               "%s %s: factor=gpu: bsrilu factors on the CPU (-pc_type bsrsolve -pc_bsrsolve_cuda runs on the device)",
               name, d->config);
    PetscCheck(o.trisolve == 0, comm, PETSC_ERR_SUP,
               "%s %s: trisolve=jacobi is a device apply; bsrilu solves the triangles exactly on the CPU", name, d->config);
    PetscCheck(o.pattern != BSR_SOLVER_PATTERN_AUTO, comm, PETSC_ERR_SUP,
               "%s %s: pattern=auto follows the solver's iteration counts, which a preconditioner does not see: "
               "pattern=frozen or pattern=refresh", name, d->config);
    /* as the library's solver makes its CPU ILU from the same options */
    if (bsr_ilu_options_from_solver(&o, io))
        SETERRQ(comm, PETSC_ERR_ARG_WRONG, "%s %s: %s", name, d->config, bsr_last_error());
    *kind = o.precond;
    if (reorder) snprintf(reorder, 64, "%s", o.reorder);
    PetscFunctionReturn(0);
}

/* Frees the factorization and the work vector. */
static void free_factors(void *data)
{
    PC_BsrIlu *d = (PC_BsrIlu *)data;
    bsr_ilu_destroy(d->F);
    bsr_multivec_destroy(d->X);
    d->F = NULL;
    d->X = NULL;
    d->built[0] = 0;
}

/* New values of the PC's matrix into the factors held (BsrPetscSetUpBegin). */
static bsr_status refactor(void *data) { PC_BsrIlu *d = data; return bsr_ilu_refactor(d->F, d->head.mat.A); }

/* Sets up the factorization of pc's matrix, or refactors new values on the
 * pattern it was set up for. */
static PetscErrorCode PCSetUp_BsrIlu(PC pc)
{
    PC_BsrIlu *d = (PC_BsrIlu *)pc->data;
    bsr_ilu_options io;
    bsr_pc_kind kind;
    PetscBool setup;
    char built[sizeof d->built], reorder[64];

    PetscFunctionBegin;
    PetscCall(ilu_options(pc, d, &io, &kind, reorder));
    snprintf(built, sizeof built, "%s|%s", bsr_pc_name(kind), d->config);
    PetscCall(BsrPetscSetUpBegin(pc, d->F && !strcmp(built, d->built) ? PETSC_TRUE : PETSC_FALSE, &setup));
    if (!setup) PetscFunctionReturn(0);
    BsrPetscTimedCall(pc, BSRPETSC_Setup, "bsrilu: setup", bsr_ilu_setup(d->head.mat.A, &io, &d->F));
    const int64_t n = (int64_t)bsr_matrix_nbrows(d->head.mat.A) * bsr_matrix_block(d->head.mat.A);
    BsrPetscCall(pc, "bsrilu: setup", bsr_multivec_create(&d->X, n, 1, BSRPETSC_PREC));
    memcpy(d->built, built, sizeof built);
    d->kind_used = kind;
    memcpy(d->reorder_used, reorder, sizeof reorder);
    d->head.setups++;
    PetscFunctionReturn(0);
}

/* y = M^{-1} x. */
static PetscErrorCode PCApply_BsrIlu(PC pc, Vec x, Vec y)
{
    PC_BsrIlu *d = (PC_BsrIlu *)pc->data;

    PetscFunctionBegin;
    if (d->head.mat.empty) {
        PetscCall(VecCopy(x, y));
        PetscFunctionReturn(0);
    }
    PetscCheck(d->F, PetscObjectComm((PetscObject)pc), PETSC_ERR_ORDER, "bsrilu: not set up (the last PCSetUp failed)");
    PetscCall(BsrPetscVecToMultivec(x, d->X));
    PetscCall(PetscLogEventBegin(BSRPETSC_Apply, pc, 0, 0, 0));
    bsr_status s = bsr_ilu_apply(d->F, d->X, d->X);
    PetscCall(PetscLogEventEnd(BSRPETSC_Apply, pc, 0, 0, 0));
    BsrPetscCall(pc, "bsrilu: apply", s);
    PetscCall(BsrPetscMultivecToVec(d->X, y));
    PetscFunctionReturn(0);
}

/* Reads -pc_bsrilu_type and -pc_bsrilu_config, and refuses bad ones now. */
static PetscErrorCode PCSetFromOptions_BsrIlu(PC pc, PetscOptionItems *PetscOptionsObject)
{
    PC_BsrIlu *d = (PC_BsrIlu *)pc->data;
    PetscInt idx = d->kind - BSR_PC_ILU0;
    PetscBool set;
    bsr_ilu_options io;
    bsr_pc_kind kind;

    PetscFunctionBegin;
    PetscOptionsHeadBegin(PetscOptionsObject, "bsrsolve block ILU (bsrilu) options");
    PetscCall(PetscOptionsEList("-pc_bsrilu_type", "Factorization", "PCBSRILU", kind_names, 3, kind_names[idx], &idx, &set));
    if (set) {
        d->kind = (bsr_pc_kind)(BSR_PC_ILU0 + idx);
        d->kind_set = PETSC_TRUE;
    }
    PetscCall(PetscOptionsString("-pc_bsrilu_config", "bsrsolve options string (key=value,...)", "PCBSRILU",
                                 d->config, d->config, sizeof d->config, NULL));
    PetscOptionsHeadEnd();
    PetscCall(ilu_options(pc, d, &io, &kind, NULL));
    PetscFunctionReturn(0);
}

/* The factorization in words: kind, options, fill, setups and refactors. */
static PetscErrorCode PCView_BsrIlu(PC pc, PetscViewer viewer)
{
    PC_BsrIlu *d = (PC_BsrIlu *)pc->data;
    PetscBool ascii;
    bsr_ilu_stats st;

    PetscFunctionBegin;
    PetscCall(PetscObjectTypeCompare((PetscObject)viewer, PETSCVIEWERASCII, &ascii));
    if (!ascii) PetscFunctionReturn(0);
    PetscCall(PetscViewerASCIIPrintf(viewer, "  bsrsolve %s, config \"%s\"%s%s\n",
                                     bsr_pc_name(d->F ? d->kind_used : d->kind), d->config,
                                     d->F ? ", ordering " : "", d->F ? d->reorder_used : ""));
    if (d->F && !bsr_ilu_get_stats(d->F, &st))
        PetscCall(PetscViewerASCIIPrintf(viewer, "  fill %.3g (L+U %lld blocks of %d x %d, A %lld; second order R+W %lld), "
                                         "%d pivots regularized; ordering %.3g s, last factorization %.3g s\n",
                                         st.fill, (long long)(st.nnzb_L + st.nnzb_U), d->head.mat.b, d->head.mat.b,
                                         (long long)st.nnzb_A, (long long)st.second_order_total, st.pivots_regularized,
                                         st.order_s, st.factor_s));
    PetscCall(BsrPetscViewCounts(viewer, &d->head));
    PetscFunctionReturn(0);
}

PetscErrorCode PCCreate_BsrIlu(PC pc)
{
    static const BsrPetscPCOps ops = {PCSetUp_BsrIlu, PCApply_BsrIlu, PCSetFromOptions_BsrIlu, PCView_BsrIlu,
                                      "bsrilu", refactor, free_factors, NULL};
    PC_BsrIlu *d;

    PetscFunctionBegin;
    PetscCall(BsrPetscPCInit(pc, sizeof *d, &ops, (void **)&d));
    d->kind = BSR_PC_ILU0;
    PetscFunctionReturn(0);
}
