/* SPDX-License-Identifier: BSD-3-Clause */
/* CPU-only build: the cuSPARSE comparison pipeline is not available. */
#include "internal.h"
#include "cusparse_ref.h"
#include <string.h>

bsr_status bsr_cusparse_run(const bsr_matrix *A, const bsr_multivec *B, double rtol, int maxit,
                            bsr_cusparse_result *res)
{
    (void)A; (void)B; (void)rtol; (void)maxit;
    memset(res, 0, sizeof *res);
    res->status = bsr_error(BSR_ERR_NODEVICE, "cuSPARSE pipeline: built without CUDA");
    snprintf(res->message, sizeof res->message, "built without CUDA");
    return res->status;
}
