/* SPDX-License-Identifier: BSD-3-Clause */
/* BSR_HD marks a function that the host (C) and the device (CUDA) both
 * compile: the shared per-row and per-block code whose host loops are the
 * reference of the device's. */
#ifndef BSR_HD_H
#define BSR_HD_H
#ifdef __CUDACC__
#define BSR_HD __host__ __device__
#else
#define BSR_HD
#endif
#endif
