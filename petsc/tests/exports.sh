#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# ctest petsc_plugin_exports: the plugin's dynamic symbols (nm -D
# --defined-only) are its registration function and nothing else, so that its
# internal functions never clash with a PETSc program's.  Arguments: NM PLUGIN.
set -eu
nm=$1
lib=$2
syms=$("$nm" -D --defined-only "$lib" | awk '$2 != "A" { sub(/@.*/, "", $3); print $3 }' |
       grep -v -x -e _init -e _fini -e _edata -e _end -e __bss_start || true)
echo "exported by $lib:"
echo "$syms"
[ "$syms" = "PetscDLLibraryRegister_bsrsolve_petsc" ] || {
  echo "FAIL: the plugin must export PetscDLLibraryRegister_bsrsolve_petsc alone" >&2
  exit 1
}
