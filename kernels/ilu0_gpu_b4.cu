/* SPDX-License-Identifier: BSD-3-Clause */
/* On-device block ILU(0) kernels, block size 4 (see ilu0_gpu.cu). */
#include "ilu0_gpu.cuh"
ILU0_GPU_DEFINE(4)
