/* SPDX-License-Identifier: BSD-3-Clause */
/* The cuSPARSE comparison pipeline (cusparse_pipeline.cu, library bsrbench): bsrilu02
 * ILU(0) + bsrsv2 triangular solves (b = 1: csrilu02 + SpSV, SpMV for A) +
 * right-preconditioned BiCGStab with cuBLAS vector operations, on the device,
 * one right-hand side at a time. */
#ifndef BSR_CUSPARSE_REF_H
#define BSR_CUSPARSE_REF_H

#include "bsrsolve.h"

typedef struct {
    bsr_status status;  /* BSR_OK converged, BSR_ERR_NOCONV, BSR_ERR_NODEVICE not run,
                         * any other: it ran and failed (message says where) */
    char message[256];
    int iterations;     /* summed over the right-hand sides */
    double relres;      /* worst true ||b - A x|| / ||b|| (recomputed on the device) */
    double setup_s;     /* upload + ilu02 analysis + factor + triangular-solve analyses */
    double factor_s;    /* the ilu02 numeric factorization alone (a time step's refactor) */
    double solve_s;     /* all right-hand sides */
} bsr_cusparse_result;

/* Solve A X = B (X0 = 0) with the cuSPARSE pipeline in double; fills res
 * (res->status BSR_ERR_NODEVICE with a message without CUDA or a device). */
bsr_status bsr_cusparse_run(const bsr_matrix *A, const bsr_multivec *B, double rtol, int maxit,
                            bsr_cusparse_result *res);

/* What a run came to, as the reports name it: "converged", "not converged",
 * "not run" (no device, or built without CUDA) or "failed" (cuSPARSE ran and
 * reported an error, such as a zero pivot; res->message says which). */
const char *bsr_cusparse_outcome(const bsr_cusparse_result *res);

#endif
