/* SPDX-License-Identifier: BSD-3-Clause */
/* CPU-only build: the GPU entry points of the stencil module (issue 8). */
#include "stencil_impl.h"

/* CPU-only build: BSR_ERR_NODEVICE. */
bsr_status bsr_rbgs_gpu(const bsr_stencil *S, double omega, double tol, int maxit, int check,
                        double *u, bsr_iter_info *info)
{
    (void)S; (void)omega; (void)tol; (void)maxit; (void)check; (void)u; (void)info;
    return bsr_error(BSR_ERR_NODEVICE, "bsr_rbgs: GPU backend requested but bsrsolve was built without CUDA");
}

/* CPU-only build: BSR_ERR_NODEVICE. */
bsr_status bsr_sor_gpu(bsr_sor_layout layout, const bsr_stencil *S, double omega, int symmetric,
                       double tol, int maxit, double *u, bsr_iter_info *info)
{
    (void)layout; (void)S; (void)omega; (void)symmetric; (void)tol; (void)maxit; (void)u; (void)info;
    return bsr_error(BSR_ERR_NODEVICE, "bsr_sor: GPU backend requested but bsrsolve was built without CUDA");
}

/* CPU-only build: BSR_ERR_NODEVICE. */
bsr_status bsr_stencil_gpu_d2d_gbs(size_t bytes, double *gbs)
{
    (void)bytes;
    if (gbs) *gbs = 0;
    return bsr_error(BSR_ERR_NODEVICE, "bsr_stencil_gpu_d2d_gbs: built without CUDA");
}
