/* SPDX-License-Identifier: BSD-3-Clause */
/* Naming the outcome of the cuSPARSE comparison for the CLI's reports (built
 * with and without CUDA, so that it can be tested on any machine). */
#include "cusparse_ref.h"

/* "converged", "not converged", "not run" or "failed", from res->status: only
 * a missing device means cuSPARSE never ran; every other error came from a
 * run (a zero pivot, a failed call) and is cuSPARSE's result. */
const char *bsr_cusparse_outcome(const bsr_cusparse_result *res)
{
    switch (res->status) {
    case BSR_OK: return "converged";
    case BSR_ERR_NOCONV: return "not converged";
    case BSR_ERR_NODEVICE: return "not run";
    default: return "failed";
    }
}
