/* bsrsolve stencil generators, red-black Gauss-Seidel, wavefront SOR (issue 8).
 * Included by bsrsolve.h. */
#ifndef BSRSOLVE_STENCIL_H
#define BSRSOLVE_STENCIL_H

#include "core.h"

#ifdef __cplusplus
extern "C" {
#endif

#ifdef __cplusplus
}
#endif
#endif
