/* SPDX-License-Identifier: BSD-3-Clause */
/* The PETSc plugin's shared parts: a PETSc sequential matrix held as a
 * bsrsolve matrix (new values or a new pattern told apart), PETSc vectors
 * through host multivectors, and library errors raised as PETSc errors. */
#ifndef BSRPETSC_H
#define BSRPETSC_H

#include <petsc/private/pcimpl.h>
#include <bsrsolve.h>

#if defined(PETSC_USE_COMPLEX)
#error "the bsrsolve PETSc plugin needs a PETSc with real scalars"
#endif
#if defined(PETSC_USE_REAL_DOUBLE)
#define BSRPETSC_PREC BSR_DOUBLE
#elif defined(PETSC_USE_REAL_SINGLE)
#define BSRPETSC_PREC BSR_FLOAT
#else
#error "the bsrsolve PETSc plugin needs PetscScalar double or float"
#endif

/* A MATSEQBAIJ / MATSEQAIJ matrix as a bsrsolve matrix, with what tells a
 * later call whether the pattern is the one A was made from. */
typedef struct {
    bsr_matrix *A;             /* NULL before the first update, or for 0 rows */
    PetscInt64 id;             /* the PETSc matrix A was last updated from */
    PetscObjectState nzstate;  /* its nonzero state then */
    int nbrows, b, nnzb;
    int *rowptr, *colind;      /* A's pattern as given to bsr_matrix_create */
    PetscBool empty;           /* 0 rows: nothing for the library to do */
} BsrPetscMat;

/* Brings the values of pc's pmat into m.  *fresh = PETSC_TRUE when m->A was
 * created anew (first call or a new pattern: the caller then sets up from
 * scratch), PETSC_FALSE when only its values were replaced (refactor). */
PetscErrorCode BsrPetscMatUpdate(PC pc, BsrPetscMat *m, PetscBool *fresh);
/* The first part of every PCSetUp: brings pc's pmat into the PC's matrix
 * (BsrPetscMatUpdate, timed as BSRPETSC_MatUpdate); on the same pattern, when
 * `same` says the PC's factors exist and were built with the configuration
 * asked now, refactors them (ops->refactor, timed as BSRPETSC_Refactor and
 * counted).  Otherwise, and on any error, releases them (ops->release).
 * *setup: whether the caller is to set up anew (PETSC_FALSE after a
 * refactor, or when the matrix has no rows). */
PetscErrorCode BsrPetscSetUpBegin(PC pc, PetscBool same, PetscBool *setup);
/* Frees what m holds and zeroes it. */
PetscErrorCode BsrPetscMatReset(BsrPetscMat *m);

/* The PETSc error code for a library status. */
PetscErrorCode BsrPetscErrorCode(bsr_status s);

/* X(:,0) = x (X a host multivector of x's local length). */
PetscErrorCode BsrPetscVecToMultivec(Vec x, bsr_multivec *X);
/* y = X(:,0). */
PetscErrorCode BsrPetscMultivecToVec(const bsr_multivec *X, Vec y);

/* The ordering of the plugin's ILUT and ILU2: the library's nested
 * dissection (its separator tree: the rows of the leaves factored in
 * parallel) with METIS's fill-reducing order inside each leaf.  In ex19
 * the library's own default (the leaves' rows as the dissection leaves
 * them) gave 1.7x the fill of METIS's order; METIS's order alone has no
 * tree, and its rows wait on each other (bench/RESULTS.md). */
#define BSR_PETSC_THRESHOLD_ORDER "nd:auto,leafnd=1"

/* The plugin's defaults where the options string leaves them open.  On the
 * CPU of one process (cuda 0; o->reorder ""): ILUT and ILU2 in
 * BSR_PETSC_THRESHOLD_ORDER, ILU(0) in reverse Cuthill-McKee
 * (reorder=rcm).  On the CUDA backend (cuda 1; neither cap nor reorder
 * given): ILUT and ILU2 with the CPU's pattern, uncapped in the same order
 * (cap=none: the thresholds' rows once on the host, every refactor and
 * solve on the device), not the library's device default (cap=auto, RCM),
 * whose capped factor needed 8-20x the iterations in ex19 and diverged at
 * 256^2 (bench/RESULTS.md); ILU(0) keeps the library's. */
void BsrPetscDefaults(bsr_solver_options *o, int cuda);

/* "-<prefix>name": the option as the user types it for pc. */
void BsrPetscOptionName(PC pc, const char *name, char *buf, size_t len);

/* Runs a library call; on failure raises a PETSc error on pc's communicator
 * that names `what` and carries the library's message. */
#define BsrPetscCall(pc, what, call)                                                               \
    do {                                                                                           \
        bsr_status bsr_s_ = (call);                                                                \
        if (bsr_s_)                                                                                \
            SETERRQ(PetscObjectComm((PetscObject)(pc)), BsrPetscErrorCode(bsr_s_), "%s: %s: %s", \
                    (what), bsr_status_string(bsr_s_), bsr_last_error());                          \
    } while (0)

/* BsrPetscCall of a library call timed as the -log_view event `event`. */
#define BsrPetscTimedCall(pc, event, what, call)                                                   \
    do {                                                                                           \
        PetscCall(PetscLogEventBegin((event), (pc), 0, 0, 0));                                     \
        bsr_status bsr_t_ = (call);                                                                \
        PetscCall(PetscLogEventEnd((event), (pc), 0, 0, 0));                                       \
        BsrPetscCall((pc), (what), bsr_t_);                                                        \
    } while (0)

/* -log_view events of the plugin's stages (registered with the PC types):
 * the matrix brought in from PETSc (pattern check and values), a full setup,
 * a refactor on the kept pattern, and the library's part of an apply (the
 * vector copies around it excluded). */
extern PetscLogEvent BSRPETSC_MatUpdate, BSRPETSC_Setup, BSRPETSC_Refactor, BSRPETSC_Apply;
/* Registers the events above once. */
PetscErrorCode BsrPetscLogRegister(void);

/* A PC type's operations: one table per type.  Reset and destroy are the
 * plugin's own (BsrPetscPCInit installs them): release frees what the type
 * holds for its matrix (factors, solver), finalize (may be NULL) what it
 * holds for its life (a CUDA context). */
typedef struct {
    PetscErrorCode (*setup)(PC);
    PetscErrorCode (*apply)(PC, Vec, Vec);
    PetscErrorCode (*setfromoptions)(PC, PetscOptionItems *);
    PetscErrorCode (*view)(PC, PetscViewer);
    const char *name;                      /* in messages ("bsrilu") */
    bsr_status (*refactor)(void *data);    /* new values into the factors held */
    void (*release)(void *data);
    void (*finalize)(void *data);
} BsrPetscPCOps;
/* The first member of a PC type's data: the matrix brought in from PETSc and
 * the type's operations. */
typedef struct {
    BsrPetscMat mat;
    const BsrPetscPCOps *ops;
    int setups, refactors;      /* full setups (counted by the type) and refactors */
} BsrPetscPCHead;
/* A PC type's constructor: pc->data (and *data unless NULL) = size zeroed bytes (the type's
 * data, starting with a BsrPetscPCHead), and pc's operations from ops. */
PetscErrorCode BsrPetscPCInit(PC pc, size_t size, const BsrPetscPCOps *ops, void **data);

/* PCView's common line: full setups, refactors, OpenMP threads. */
PetscErrorCode BsrPetscViewCounts(PetscViewer viewer, const BsrPetscPCHead *h);

/* The two preconditioners' constructors, registered by name. */
PetscErrorCode PCCreate_BsrIlu(PC pc);
PetscErrorCode PCCreate_BsrSolve(PC pc);

#endif
