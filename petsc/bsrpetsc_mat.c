/* SPDX-License-Identifier: BSD-3-Clause */
/* PETSc sequential matrices (MATSEQBAIJ with blocks of 1..BSR_MAX_BLOCK,
 * MATSEQAIJ as blocks of 1) as bsrsolve matrices.  PETSc's blocks are
 * column-major, stored block row by block row in the order of the column
 * indices: the library takes them so with BSR_COLMAJOR_BLOCKS.  A new
 * pattern makes a new bsr_matrix; new values on the same pattern replace
 * the values only, so the caller can refactor. */
#include "bsrpetsc.h"
#include <limits.h>
#include <string.h>

/* Nonzero when the pattern (n, ia, ja) is the one m's matrix was made from. */
static int same_pattern(const BsrPetscMat *m, PetscInt n, int b, const PetscInt *ia, const PetscInt *ja)
{
    if (!m->A || m->nbrows != n || m->b != b || m->nnzb != ia[n]) return 0;
    for (PetscInt i = 0; i <= n; i++)
        if (m->rowptr[i] != ia[i]) return 0;
    for (PetscInt q = 0; q < ia[n]; q++)
        if (m->colind[q] != ja[q]) return 0;
    return 1;
}

/* Copies the pattern (n, ia, ja) into m's int arrays. */
static PetscErrorCode keep_pattern(BsrPetscMat *m, PetscInt n, int b, const PetscInt *ia, const PetscInt *ja)
{
    PetscFunctionBegin;
    PetscCall(PetscFree(m->rowptr));
    PetscCall(PetscFree(m->colind));
    PetscCheck(n < INT_MAX && ia[n] < INT_MAX, PETSC_COMM_SELF, PETSC_ERR_SUP,
               "bsrsolve: %" PetscInt_FMT " block rows with %" PetscInt_FMT " blocks exceed its int indices", n, ia[n]);
    PetscCall(PetscMalloc1(n + 1, &m->rowptr));
    PetscCall(PetscMalloc1(ia[n] > 0 ? ia[n] : 1, &m->colind));
    for (PetscInt i = 0; i <= n; i++) m->rowptr[i] = (int)ia[i];
    for (PetscInt q = 0; q < ia[n]; q++) m->colind[q] = (int)ja[q];
    m->nbrows = (int)n;
    m->b = b;
    m->nnzb = (int)ia[n];
    PetscFunctionReturn(0);
}

/* Creates m->A anew from the kept pattern and values v, or replaces its
 * values (fresh = 0); v holds nnzb column-major b x b blocks. */
static PetscErrorCode load_values(PC pc, BsrPetscMat *m, const PetscScalar *v, PetscBool fresh)
{
    PetscFunctionBegin;
    if (fresh) {
        bsr_matrix_destroy(m->A);
        m->A = NULL;
        BsrPetscCall(pc, "bsrsolve: the preconditioner's matrix",
                     bsr_matrix_create(&m->A, m->nbrows, m->nbrows, m->b, m->rowptr, m->colind, v, BSRPETSC_PREC,
                                       BSR_COLMAJOR_BLOCKS));
    } else {
        BsrPetscCall(pc, "bsrsolve: the preconditioner's matrix", bsr_matrix_set_values(m->A, v, BSR_COLMAJOR_BLOCKS));
    }
    PetscFunctionReturn(0);
}

PetscErrorCode BsrPetscMatUpdate(PC pc, BsrPetscMat *m, PetscBool *fresh)
{
    Mat P = pc->pmat;
    PetscBool baij, aij, done;
    PetscInt rows, cols, bs = 1, n;
    const PetscInt *ia, *ja;
    PetscObjectState nz;
    PetscInt64 id;
    MatType type;

    PetscFunctionBegin;
    PetscCheck(P, PetscObjectComm((PetscObject)pc), PETSC_ERR_ORDER, "bsrsolve: no matrix: call KSPSetOperators() first");
    PetscCall(PetscObjectTypeCompare((PetscObject)P, MATSEQBAIJ, &baij));
    PetscCall(PetscObjectTypeCompare((PetscObject)P, MATSEQAIJ, &aij));
    PetscCall(MatGetType(P, &type));
    PetscCheck(baij || aij, PetscObjectComm((PetscObject)pc), PETSC_ERR_SUP,
               "bsrsolve: matrix type %s is not supported: MATSEQBAIJ or MATSEQAIJ (in parallel, use it as the "
               "sub-preconditioner of bjacobi or asm: -sub_pc_type %s)", type, ((PetscObject)pc)->type_name);
    PetscCall(MatGetSize(P, &rows, &cols));
    PetscCheck(rows == cols, PetscObjectComm((PetscObject)pc), PETSC_ERR_ARG_SIZ,
               "bsrsolve: the matrix is %" PetscInt_FMT " x %" PetscInt_FMT ", not square", rows, cols);
    if (baij) PetscCall(MatGetBlockSize(P, &bs));
    PetscCheck(bs >= 1 && bs <= BSR_MAX_BLOCK, PetscObjectComm((PetscObject)pc), PETSC_ERR_SUP,
               "bsrsolve: block size %" PetscInt_FMT " is not supported (1..%d)", bs, BSR_MAX_BLOCK);
    PetscCall(MatGetNonzeroState(P, &nz));
    PetscCall(PetscObjectGetId((PetscObject)P, &id));
    if (rows == 0) {   /* an empty subdomain: nothing to factor */
        PetscCall(BsrPetscMatReset(m));
        m->empty = PETSC_TRUE;
        *fresh = PETSC_TRUE;
        PetscFunctionReturn(0);
    }
    /* the same pattern when PETSc says so, the matrix is the same object with
     * the same nonzero state, and the indices themselves agree */
    PetscBool reuse = m->A && pc->flag == SAME_NONZERO_PATTERN && id == m->id && nz == m->nzstate;
    PetscCall(MatGetRowIJ(P, 0, PETSC_FALSE, baij, &n, &ia, &ja, &done));
    PetscCheck(done, PetscObjectComm((PetscObject)pc), PETSC_ERR_SUP, "bsrsolve: MatGetRowIJ() gave no pattern");
    PetscErrorCode ierr = 0;
    if (reuse && !same_pattern(m, n, (int)bs, ia, ja)) reuse = PETSC_FALSE;
    if (!reuse) ierr = keep_pattern(m, n, (int)bs, ia, ja);
    PetscCall(MatRestoreRowIJ(P, 0, PETSC_FALSE, baij, &n, &ia, &ja, &done));
    PetscCall(ierr);
    if (baij) {
        PetscScalar *v;
        PetscCall(MatSeqBAIJGetArray(P, &v));
        ierr = load_values(pc, m, v, !reuse);
        PetscCall(MatSeqBAIJRestoreArray(P, &v));
    } else {
        const PetscScalar *v;
        PetscCall(MatSeqAIJGetArrayRead(P, &v));
        ierr = load_values(pc, m, v, !reuse);
        PetscCall(MatSeqAIJRestoreArrayRead(P, &v));
    }
    if (ierr) {   /* a failed load leaves no matrix: the next update starts over */
        bsr_matrix_destroy(m->A);
        m->A = NULL;
    }
    PetscCall(ierr);
    m->id = id;
    m->nzstate = nz;
    m->empty = PETSC_FALSE;
    *fresh = reuse ? PETSC_FALSE : PETSC_TRUE;
    PetscFunctionReturn(0);
}

PetscErrorCode BsrPetscMatReset(BsrPetscMat *m)
{
    PetscFunctionBegin;
    bsr_matrix_destroy(m->A);
    PetscCall(PetscFree(m->rowptr));
    PetscCall(PetscFree(m->colind));
    PetscCall(PetscMemzero(m, sizeof *m));
    PetscFunctionReturn(0);
}
