/* bsrsolve CUDA context, device-resident objects and GPU kernels (issue 3/6).
 * Included by bsrsolve.h. */
#ifndef BSRSOLVE_CONTEXT_H
#define BSRSOLVE_CONTEXT_H

#include "core.h"

#ifdef __cplusplus
extern "C" {
#endif

#ifdef __cplusplus
}
#endif
#endif
