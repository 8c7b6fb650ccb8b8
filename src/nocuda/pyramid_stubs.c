/* SPDX-License-Identifier: BSD-3-Clause */
/* CPU-only build: the pyramid solver's GPU entry points answer
 * BSR_ERR_NODEVICE; host grids fall back to ordinary (pageable) memory. */
#include "pyramid_impl.h"

void *bsr_pyr_host_alloc(size_t bytes, int *pinned)
{
    *pinned = 0;
    return malloc(bytes ? bytes : 1);
}

void bsr_pyr_host_free(void *p, int pinned)
{
    (void)pinned;
    free(p);
}

bsr_status bsr_pyr_run_gpu(bsr_grid *G, const bsr_pyr_opts *o, const bsr_pyr_model *M,
                           bsr_pyr_info *info)
{
    (void)G; (void)o; (void)M; (void)info;
    return bsr_error(BSR_ERR_NODEVICE, "bsr_pyr_run_gpu: built without CUDA");
}

bsr_status bsr_pyr_calibrate(int dim, bsr_precision prec, size_t budget, bsr_pyr_model *M)
{
    (void)dim; (void)prec; (void)budget; (void)M;
    return bsr_error(BSR_ERR_NODEVICE, "bsr_pyr_calibrate: built without CUDA");
}

bsr_status bsr_pyr_longvec_gpu(double *u, int64_t N, double r, int steps, double *seconds)
{
    (void)u; (void)N; (void)r; (void)steps; (void)seconds;
    return bsr_error(BSR_ERR_NODEVICE, "bsr_pyr_longvec_gpu: built without CUDA");
}

bsr_status bsr_lv_calibrate(bsr_lv_model *M)
{
    (void)M;
    return bsr_error(BSR_ERR_NODEVICE, "bsr_lv_calibrate: built without CUDA");
}
