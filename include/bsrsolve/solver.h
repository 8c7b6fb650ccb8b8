/* bsrsolve Krylov solvers and the solver object (issue 7).
 * Included by bsrsolve.h. */
#ifndef BSRSOLVE_SOLVER_H
#define BSRSOLVE_SOLVER_H

#include "core.h"

#ifdef __cplusplus
extern "C" {
#endif

#ifdef __cplusplus
}
#endif
#endif
