/* SPDX-License-Identifier: BSD-3-Clause */
/* The plugin's one exported symbol: PETSc's dynamic loader (-dll_append
 * path/libbsrsolve_petsc.so) calls PetscDLLibraryRegister_<name>, <name> the
 * file's name without "lib" and ".so", which registers the PC types. */
#include "bsrpetsc.h"

/* Registers the PC types "bsrilu" and "bsrsolve" and the plugin's events. */
PETSC_EXTERN PetscErrorCode PetscDLLibraryRegister_bsrsolve_petsc(void)
{
    PetscFunctionBegin;
    PetscCall(BsrPetscLogRegister());
    PetscCall(PCRegister("bsrilu", PCCreate_BsrIlu));
    PetscCall(PCRegister("bsrsolve", PCCreate_BsrSolve));
    PetscFunctionReturn(0);
}
