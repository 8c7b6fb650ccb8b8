/* SPDX-License-Identifier: BSD-3-Clause */
/* Level-scheduled triangular solves, block size 7 (see trsv_level.cu). */
#include "trsv_level.cuh"
TRSV_LEVEL_DEFINE(7)
