/* SPDX-License-Identifier: BSD-3-Clause */
/* ctest petsc_pattern (run with -dll_append libbsrsolve_petsc.so): one KSP
 * per preconditioner (bsrilu ilu0/ilut/ilu2 under GMRES, bsrsolve with
 * preonly) solves A x = b while A gets new values on its pattern (a
 * refactor), a new block on the same matrix (a new pattern: a full setup),
 * another matrix with a wider pattern, new sizes with blocks of 2 and 10, and
 * the same as MATSEQAIJ.  Every solve must reach the exact solution, and the
 * PC's view must count the full setups and refactors that each change asks
 * for.  Then a NaN in the matrix must be a PETSc error with the library's
 * message, after which the PC recovers, and blocks of 11 an error naming
 * the block size.  Exit 0 when all do. */
#include <petscksp.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#define BSR_TEST_BMAX 10   /* the library's largest block (BSR_MAX_BLOCK) */

/* Sets the blocks (i, j), |i - j| <= width, of A (nb block rows of b x b
 * blocks): nonsymmetric, diagonally dominant; scale varies the off-diagonal
 * blocks against the diagonal ones. */
static PetscErrorCode set_values(Mat A, PetscInt nb, PetscInt b, PetscInt width, PetscReal scale)
{
    PetscScalar v[(BSR_TEST_BMAX + 1) * (BSR_TEST_BMAX + 1)];

    PetscFunctionBeginUser;
    for (PetscInt i = 0; i < nb; i++)
        for (PetscInt j = PetscMax(0, i - width); j <= PetscMin(nb - 1, i + width); j++) {
            for (PetscInt r = 0; r < b; r++)
                for (PetscInt c = 0; c < b; c++)
                    v[r * b + c] = i == j ? (r == c ? 4.0 * (2 * width + 1) * b : 0.3 * (r - c) + 0.1)
                                          : -scale * (1.0 + 0.2 * r - 0.1 * c + 0.05 * (j - i)) / (1 + PetscAbsInt(i - j));
            PetscCall(MatSetValuesBlocked(A, 1, &i, 1, &j, v, INSERT_VALUES));
        }
    PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
    PetscFunctionReturn(0);
}

/* A new SEQBAIJ matrix with set_values' pattern and values. */
static PetscErrorCode make_matrix(PetscInt nb, PetscInt b, PetscInt width, PetscReal scale, Mat *A)
{
    PetscFunctionBeginUser;
    PetscCall(MatCreateSeqBAIJ(PETSC_COMM_SELF, b, nb * b, nb * b, 2 * width + 2, NULL, A));
    PetscCall(set_values(*A, nb, b, width, scale));
    PetscFunctionReturn(0);
}

/* *pc = a new PC of type type on the operators (A, A). */
static PetscErrorCode new_pc(PCType type, Mat A, PC *pc)
{
    PetscFunctionBeginUser;
    PetscCall(PCCreate(PETSC_COMM_SELF, pc));
    PetscCall(PCSetType(*pc, type));
    PetscCall(PCSetOperators(*pc, A, A));
    PetscFunctionReturn(0);
}

/* *ierr = the error code of PCSetUp(pc), PETSc's error handler silenced for
 * it (the failure is the caller's to check). */
static PetscErrorCode quiet_setup(PC pc, PetscErrorCode *ierr)
{
    PetscFunctionBeginUser;
    PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
    *ierr = PCSetUp(pc);
    PetscCall(PetscPopErrorHandler());
    PetscFunctionReturn(0);
}

/* Fails unless ksp's PC, as it stands after solving with A, applies as a PC
 * of the same options set up from scratch for A does, to tol: a PC that kept
 * the factors of older values fails it (the changes below move M^{-1} b by
 * 1e-2 and more).  tol is 1e-10 where a refactor gives a fresh setup's
 * factors; ILUT and ILU2 refactor into the pattern their setup chose, where
 * a fresh setup drops by the new values: close, not equal (tol 1e-5). */
static PetscErrorCode same_as_fresh(KSP ksp, Mat A, const char *what, PetscReal tol)
{
    PC pc, fresh;
    Vec b, y1, y2;
    PetscReal diff, nrm;
    PCType type;

    PetscFunctionBeginUser;
    PetscCall(KSPGetPC(ksp, &pc));
    PetscCall(PCGetType(pc, &type));
    PetscCall(new_pc(type, A, &fresh));
    PetscCall(PCSetFromOptions(fresh));
    PetscCall(PCSetUp(fresh));
    PetscCall(MatCreateVecs(A, &b, &y1));
    PetscCall(VecDuplicate(y1, &y2));
    PetscCall(VecSetRandom(b, NULL));
    PetscCall(PCApply(pc, b, y1));
    PetscCall(PCApply(fresh, b, y2));
    PetscCall(VecNorm(y2, NORM_2, &nrm));
    PetscCall(VecAXPY(y1, -1.0, y2));
    PetscCall(VecNorm(y1, NORM_2, &diff));
    PetscCall(PetscPrintf(PETSC_COMM_SELF, "%-40s M^{-1} b against a fresh setup's: %.2e\n", "", (double)(diff / nrm)));
    PetscCheck(diff <= tol * nrm, PETSC_COMM_SELF, PETSC_ERR_PLIB,
               "%s: the PC applies differently from a fresh setup on the same matrix (%g > %g)", what,
               (double)(diff / nrm), (double)tol);
    PetscCall(VecDestroy(&b));
    PetscCall(VecDestroy(&y1));
    PetscCall(VecDestroy(&y2));
    PetscCall(PCDestroy(&fresh));
    PetscFunctionReturn(0);
}

/* Solves A x = A xe with ksp and fails unless x is xe to 1e-6 and the PC's
 * view says "full setups S, refactors R". */
static PetscErrorCode solve_check(KSP ksp, Mat A, int setups, int refactors, const char *what)
{
    Vec xe, x, b;
    PetscInt n, lo;
    PetscReal err, nrm;
    KSPConvergedReason reason;
    PetscViewer v;
    PC pc;
    char want[64], text[8192] = "";
    const char *path = "petsc_pattern.view";

    PetscFunctionBeginUser;
    PetscCall(MatCreateVecs(A, &xe, &b));
    PetscCall(VecDuplicate(xe, &x));
    PetscCall(VecGetSize(xe, &n));
    PetscCall(VecGetOwnershipRange(xe, &lo, NULL));
    for (PetscInt i = 0; i < n; i++) PetscCall(VecSetValue(xe, i, 2.0 + PetscSinReal((PetscReal)i), INSERT_VALUES));
    PetscCall(VecAssemblyBegin(xe));
    PetscCall(VecAssemblyEnd(xe));
    PetscCall(MatMult(A, xe, b));
    PetscCall(KSPSetOperators(ksp, A, A));
    PetscCall(KSPSolve(ksp, b, x));
    PetscCall(KSPGetConvergedReason(ksp, &reason));
    PetscCall(VecAXPY(x, -1.0, xe));
    PetscCall(VecNorm(x, NORM_2, &err));
    PetscCall(VecNorm(xe, NORM_2, &nrm));
    PetscCall(KSPGetPC(ksp, &pc));
    PetscCall(PetscViewerASCIIOpen(PETSC_COMM_SELF, path, &v));
    PetscCall(PCView(pc, v));
    PetscCall(PetscViewerDestroy(&v));
    FILE *f = fopen(path, "r");
    PetscCheck(f, PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "cannot read back %s", path);
    size_t len = fread(text, 1, sizeof text - 1, f);
    text[len] = 0;
    fclose(f);
    remove(path);
    snprintf(want, sizeof want, "full setups %d, refactors %d", setups, refactors);
    PetscCall(PetscPrintf(PETSC_COMM_SELF, "%-40s n %4" PetscInt_FMT ", %s, error %.2e, %s\n", what, n,
                          KSPConvergedReasons[reason], (double)(err / nrm), strstr(text, want) ? want : "?"));
    PetscCheck(reason > 0 && err <= 1e-6 * nrm, PETSC_COMM_SELF, PETSC_ERR_NOT_CONVERGED,
               "%s: %s, relative error %g", what, KSPConvergedReasons[reason], (double)(err / nrm));
    PetscCheck(strstr(text, want), PETSC_COMM_SELF, PETSC_ERR_PLIB, "%s: the PC's view lacks \"%s\":\n%s", what, want, text);
    PetscCall(VecDestroy(&xe));
    PetscCall(VecDestroy(&x));
    PetscCall(VecDestroy(&b));
    PetscFunctionReturn(0);
}

/* The whole sequence of changes with one preconditioner: pc_type with the
 * option name=value, under ksp_type. */
static PetscErrorCode sequence(const char *pc_type, const char *name, const char *value, const char *ksp_type)
{
    KSP ksp;
    PC pc;
    Mat A1, A2, A3, A4, A5;
    PetscInt i = 0, j, nb = 60;
    PetscScalar blk[9];
    char what[96];
    const PetscReal tol = !strcmp(value, "ilut") || !strcmp(value, "ilu2") ? 1e-5 : 1e-10;

    PetscFunctionBeginUser;
    PetscCall(PetscPrintf(PETSC_COMM_SELF, "-pc_type %s %s %s, -ksp_type %s\n", pc_type, name, value, ksp_type));
    PetscCall(PetscOptionsSetValue(NULL, name, value));
    PetscCall(KSPCreate(PETSC_COMM_SELF, &ksp));
    PetscCall(KSPSetType(ksp, ksp_type));
    PetscCall(KSPSetTolerances(ksp, 1e-10, PETSC_DEFAULT, PETSC_DEFAULT, 500));
    PetscCall(KSPGetPC(ksp, &pc));
    PetscCall(PCSetType(pc, pc_type));
    PetscCall(KSPSetFromOptions(ksp));

    PetscCall(make_matrix(nb, 3, 1, 1.0, &A1));
    PetscCall(solve_check(ksp, A1, 1, 0, "first setup (b = 3)"));
    PetscCall(set_values(A1, nb, 3, 1, 2.0));   /* new values, same pattern */
    PetscCall(solve_check(ksp, A1, 1, 1, "new values: refactor"));
    PetscCall(same_as_fresh(ksp, A1, "new values: refactor", tol));
    PetscCall(MatSetOption(A1, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
    j = nb - 1;   /* a new block (0, nb-1): the same matrix, a new pattern */
    for (int q = 0; q < 9; q++) blk[q] = 0.01 * (q + 1);
    PetscCall(MatSetValuesBlocked(A1, 1, &i, 1, &j, blk, INSERT_VALUES));
    PetscCall(MatAssemblyBegin(A1, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(A1, MAT_FINAL_ASSEMBLY));
    PetscCall(solve_check(ksp, A1, 2, 1, "a new block: full setup"));
    PetscCall(set_values(A1, nb, 3, 1, 0.5));
    PetscCall(solve_check(ksp, A1, 2, 2, "new values again: refactor"));
    PetscCall(same_as_fresh(ksp, A1, "new values again: refactor", tol));
    PetscCall(make_matrix(nb, 3, 2, 0.7, &A2));   /* another matrix, a wider pattern */
    PetscCall(solve_check(ksp, A2, 3, 2, "another matrix: full setup"));
    PetscCall(KSPReset(ksp));   /* PETSc needs it for a new size */
    PetscCall(KSPSetType(ksp, ksp_type));
    PetscCall(make_matrix(45, 2, 1, 1.3, &A3));
    PetscCall(solve_check(ksp, A3, 4, 2, "a new size, b = 2: full setup"));
    PetscCall(KSPReset(ksp));
    PetscCall(make_matrix(12, BSR_TEST_BMAX, 1, 0.9, &A5));
    PetscCall(solve_check(ksp, A5, 5, 2, "b = 10 (the largest): full setup"));
    PetscCall(KSPReset(ksp));
    PetscCall(MatConvert(A2, MATSEQAIJ, MAT_INITIAL_MATRIX, &A4));
    snprintf(what, sizeof what, "MATSEQAIJ (b = 1): full setup");
    PetscCall(solve_check(ksp, A4, 6, 2, what));
    PetscCall(MatShift(A4, 5.0));
    PetscCall(solve_check(ksp, A4, 6, 3, "MATSEQAIJ new values: refactor"));
    PetscCall(same_as_fresh(ksp, A4, "MATSEQAIJ new values: refactor", tol));

    PetscCall(MatDestroy(&A1));
    PetscCall(MatDestroy(&A2));
    PetscCall(MatDestroy(&A3));
    PetscCall(MatDestroy(&A4));
    PetscCall(MatDestroy(&A5));
    PetscCall(KSPDestroy(&ksp));
    PetscCall(PetscOptionsClearValue(NULL, name));
    PetscFunctionReturn(0);
}

/* Sets A's diagonal entry (row, row) to v. */
static PetscErrorCode set_diagonal(Mat A, PetscInt row, PetscScalar v)
{
    PetscFunctionBeginUser;
    PetscCall(MatSetValue(A, row, row, v, INSERT_VALUES));
    PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
    PetscFunctionReturn(0);
}

/* Fails unless ierr is PETSc's floating-point error and PETSc's last error
 * message holds the library's words for a NaN. */
static PetscErrorCode expect_nan_error(PetscErrorCode ierr, const char *what)
{
    const char *text;
    char *specific = NULL;

    PetscFunctionBeginUser;
    PetscCall(PetscErrorMessage(ierr, &text, &specific));
    PetscCall(PetscPrintf(PETSC_COMM_SELF, "%-40s error %d: %s\n", what, (int)ierr, specific ? specific : "(none)"));
    PetscCheck(ierr == PETSC_ERR_FP, PETSC_COMM_SELF, PETSC_ERR_PLIB, "%s: error %d, not %d", what, (int)ierr, PETSC_ERR_FP);
    PetscCheck(specific && strstr(specific, "non-finite value"), PETSC_COMM_SELF, PETSC_ERR_PLIB,
               "%s: the error lacks the library's message: %s", what, specific ? specific : "(none)");
    PetscFunctionReturn(0);
}

/* A NaN in the matrix is a PETSc error carrying the library's message, no
 * crash, and the PC recovers: new values with a NaN (the refactor path)
 * fail, the next finite ones solve (a full setup); a first setup with a NaN
 * (a PC of its own: PETSc's KSP keeps no state worth testing after an error
 * in its own setup) fails, the next succeeds. */
static PetscErrorCode nan_then_recover(const char *pc_type, const char *ksp_type)
{
    KSP ksp;
    PC pc, pc2;
    Mat A;
    Vec b, x;
    PetscInt row = 7;
    PetscErrorCode ierr;

    PetscFunctionBeginUser;
    PetscCall(PetscPrintf(PETSC_COMM_SELF, "-pc_type %s with a NaN in the matrix\n", pc_type));
    PetscCall(make_matrix(20, 2, 1, 1.0, &A));
    PetscCall(MatCreateVecs(A, &x, &b));
    PetscCall(VecSet(b, 1.0));
    PetscCall(KSPCreate(PETSC_COMM_SELF, &ksp));
    PetscCall(KSPSetType(ksp, ksp_type));
    PetscCall(KSPSetTolerances(ksp, 1e-10, PETSC_DEFAULT, PETSC_DEFAULT, 500));
    PetscCall(KSPGetPC(ksp, &pc));
    PetscCall(PCSetType(pc, pc_type));
    PetscCall(solve_check(ksp, A, 1, 0, "finite: setup"));
    PetscCall(set_diagonal(A, row, (PetscScalar)NAN));
    PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
    ierr = KSPSolve(ksp, b, x);
    PetscCall(PetscPopErrorHandler());
    PetscCall(expect_nan_error(ierr, "new values with a NaN"));
    PetscCall(set_diagonal(A, row, 13.0));
    PetscCall(solve_check(ksp, A, 2, 0, "finite again: full setup"));

    PetscCall(set_diagonal(A, row, (PetscScalar)NAN));
    PetscCall(new_pc(pc_type, A, &pc2));
    PetscCall(quiet_setup(pc2, &ierr));
    PetscCall(expect_nan_error(ierr, "a first setup with a NaN"));
    PetscCall(set_diagonal(A, row, 14.0));
    PetscCall(PCSetUp(pc2));
    PetscCall(PCApply(pc2, b, x));
    PetscCall(PetscPrintf(PETSC_COMM_SELF, "%-40s set up and applied\n", "finite again: setup"));

    PetscCall(PCDestroy(&pc2));
    PetscCall(VecDestroy(&b));
    PetscCall(VecDestroy(&x));
    PetscCall(MatDestroy(&A));
    PetscCall(KSPDestroy(&ksp));
    PetscFunctionReturn(0);
}

/* Blocks of BSR_TEST_BMAX + 1: PCSetUp fails with PETSc's "not supported"
 * error naming the block size, no crash. */
static PetscErrorCode block_too_large(const char *pc_type)
{
    PC pc;
    Mat A;
    PetscErrorCode ierr;
    const char *text;
    char *specific = NULL, want[64];

    PetscFunctionBeginUser;
    PetscCall(make_matrix(4, BSR_TEST_BMAX + 1, 1, 1.0, &A));
    PetscCall(new_pc(pc_type, A, &pc));
    PetscCall(quiet_setup(pc, &ierr));
    PetscCall(PetscErrorMessage(ierr, &text, &specific));
    PetscCall(PetscPrintf(PETSC_COMM_SELF, "-pc_type %s, blocks of %d: error %d: %s\n", pc_type, BSR_TEST_BMAX + 1,
                          (int)ierr, specific ? specific : "(none)"));
    snprintf(want, sizeof want, "block size %d is not supported", BSR_TEST_BMAX + 1);
    PetscCheck(ierr == PETSC_ERR_SUP && specific && strstr(specific, want), PETSC_COMM_SELF, PETSC_ERR_PLIB,
               "blocks of %d: error %d: %s", BSR_TEST_BMAX + 1, (int)ierr, specific ? specific : "(none)");
    PetscCall(PCDestroy(&pc));
    PetscCall(MatDestroy(&A));
    PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
    PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
    PetscCall(sequence("bsrilu", "-pc_bsrilu_type", "ilu0", KSPGMRES));
    PetscCall(sequence("bsrilu", "-pc_bsrilu_type", "ilut", KSPGMRES));
    PetscCall(sequence("bsrilu", "-pc_bsrilu_type", "ilu2", KSPGMRES));
    PetscCall(sequence("bsrsolve", "-pc_bsrsolve_config", "method=gmres,precond=ilu2,rtol=1e-12", KSPPREONLY));
    PetscCall(nan_then_recover("bsrilu", KSPGMRES));
    PetscCall(nan_then_recover("bsrsolve", KSPPREONLY));
    PetscCall(block_too_large("bsrilu"));
    PetscCall(block_too_large("bsrsolve"));
    PetscCall(PetscPrintf(PETSC_COMM_SELF, "PASS\n"));
    PetscCall(PetscFinalize());
    return 0;
}
