/* SPDX-License-Identifier: BSD-3-Clause */
/* The library's version (bsrsolve.h's BSR_VERSION, which CMake's project()
 * reads through cmake/version.cmake). */
#include "bsrsolve.h"

/* CMake passes its project version: the build stops if the two ever part. */
#if defined(BSR_PROJECT_VERSION_MAJOR) &&                                                   \
    (BSR_PROJECT_VERSION_MAJOR != BSR_VERSION_MAJOR || BSR_PROJECT_VERSION_MINOR != BSR_VERSION_MINOR || \
     BSR_PROJECT_VERSION_PATCH != BSR_VERSION_PATCH)
#error "CMake's project version is not bsrsolve.h's BSR_VERSION_MAJOR.MINOR.PATCH"
#endif

const char *bsr_version(void) { return BSR_VERSION; }
