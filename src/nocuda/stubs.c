/* SPDX-License-Identifier: BSD-3-Clause */
/* CPU-only build: the stand-ins of the library's device entry points,
 * written by the preprocessor from their one list, kernels/entry_points.def
 * (what each does is said there).  Every header declaring them is included,
 * so an entry that disagrees with its declaration, or has none, does not
 * compile. */
#include "stubs.h"
#include "gpu_ilu.h"
#include "ilu_impl.h"
#include "pyramid_impl.h"
#include "stencil_impl.h"
#include "../../kernels/trsv/trsv.h"

#include "../../kernels/entry_points.def"
