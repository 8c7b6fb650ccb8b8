/* bsrsolve out-of-core pyramid solver for explicit schemes (issue 9).
 * Included by bsrsolve.h. */
#ifndef BSRSOLVE_PYRAMID_H
#define BSRSOLVE_PYRAMID_H

#include "core.h"

#ifdef __cplusplus
extern "C" {
#endif

#ifdef __cplusplus
}
#endif
#endif
