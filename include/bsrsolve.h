/* SPDX-License-Identifier: BSD-3-Clause */
/* bsrsolve: block-CSR incomplete-LU Krylov solvers on CPU and GPU.
 * The one public header; the module headers it includes are not meant to be
 * included on their own. */
#ifndef BSRSOLVE_H
#define BSRSOLVE_H

/* Library version; CMake's project(VERSION) reads these lines.  While the
 * major version is 0 the shared library's soname is 0.MINOR, so MINOR goes up
 * whenever a public struct's layout changes: a program built against older
 * headers then fails to load instead of reading a struct of another size
 * (0.2: bsr_solver_stats gained the fallback's fields; 0.4: the work bound,
 * bsr_ilu_options.max_work, bsr_ilu_stats.work, bsr_solver_options.work;
 * 0.5: bsr_order_options.variant). */
#define BSR_VERSION_MAJOR 0
#define BSR_VERSION_MINOR 5
#define BSR_VERSION_PATCH 0
#define BSR_VERSION "0.5.0"

#include "bsrsolve/core.h"     /* status, matrices, multivectors, I/O, CPU SpMM */
#include "bsrsolve/context.h"  /* backends: CPU / CUDA, device-resident objects */
#include "bsrsolve/reorder.h"  /* orderings, separator tree, level schedules */
#include "bsrsolve/ilu.h"      /* ILU(0), ILUT, ILU2, triangular solves */
#include "bsrsolve/solver.h"   /* Krylov solvers and the solver object */
#include "bsrsolve/stencil.h"  /* generators with exact solutions, RB-GS, SOR */
#include "bsrsolve/pyramid.h"  /* out-of-core explicit schemes */

#endif
