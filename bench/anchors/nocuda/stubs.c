/* SPDX-License-Identifier: BSD-3-Clause */
/* CPU-only build: the benchmark anchors' stand-ins, written by the
 * preprocessor from bench/anchors/entry_points.def (see src/nocuda/stubs.h). */
#include "stubs.h"
#include "cusparse_ref.h"
#include "anchors.h"

#include "../entry_points.def"
