/* SPDX-License-Identifier: BSD-3-Clause */
/* Stand-ins for the CUDA backend's hooks in a CPU-only build. */
#include "internal.h"

/* Nothing lives on a device without CUDA. */
void bsr_cuda_matrix_release(bsr_matrix *A) { (void)A; }
/* CPU-only build: no device copy to free. */
void bsr_cuda_multivec_release(bsr_multivec *X) { (void)X; }

/* No devices in a CPU-only build. */
int bsr_cuda_device_count(void) { return 0; }
