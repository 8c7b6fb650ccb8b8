/* SPDX-License-Identifier: BSD-3-Clause */
/* Launchers of the pyramid kernels (kernels/pyramid/pyramid_kernels.cu), used by
 * the host side of the GPU solver (kernels/pyramid/pyramid_gpu.cu). */
#ifndef BSR_PYRAMID_KERN_H
#define BSR_PYRAMID_KERN_H

#include <cuda_runtime.h>
#include <stdint.h>

/* Region lo + [0, e) of a box with strides 1, sy, sz (local coordinates). */
typedef struct { int64_t lo[3], e[3], sy, sz; } pyr_kregion;

/* One heat (jac = 0) or Jacobi (jac = 1) step; diff: see the kernel. */
cudaError_t pyr_launch_step(int dbl, int dim, int jac, void *dst, const void *src, const void *g,
                            const pyr_kregion *R, double r, unsigned long long *diff,
                            cudaStream_t st);
cudaError_t pyr_launch_lv_restore(double *v, const double *u, int64_t N, cudaStream_t st);

#endif
