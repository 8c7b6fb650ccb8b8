/* SPDX-License-Identifier: BSD-3-Clause */
/* ROWJ SpMM kernels, block size 7 (see spmm_rowj.cuh). */
#include "spmm_rowj.cuh"
SPMM_ROWJ_DEFINE(7)
