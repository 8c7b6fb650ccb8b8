/* SPDX-License-Identifier: BSD-3-Clause */
/* Error exits of the cuSPARSE anchors of `bsrsolve bench trsv`
 * (trsv_cusparse.cu, trsv_spsv.cu): a failed call writes what failed into
 * r->why (the report says why the anchor is missing instead of stopping the
 * benchmark) and jumps to the function's cleanup label `done`. */
#ifndef BSR_BENCH_FAIL_H
#define BSR_BENCH_FAIL_H
#include <cuda_runtime.h>
#include <cusparse.h>
#include <stdio.h>

#define CS_FAIL(...) do { snprintf(r->why, sizeof r->why, __VA_ARGS__); goto done; } while (0)
#define CS_CU(call) do { cudaError_t _e = (call); if (_e != cudaSuccess) { cudaGetLastError(); CS_FAIL("%s: %s", #call, cudaGetErrorString(_e)); } } while (0)
#define CS_SP(call) do { cusparseStatus_t _s = (call); if (_s != CUSPARSE_STATUS_SUCCESS) CS_FAIL("%s: %s", #call, cusparseGetErrorString(_s)); } while (0)

/* Milliseconds from e0 (recorded before the timed calls) to now: e1 recorded
 * on the default stream and waited for. */
static inline cudaError_t bench_elapsed(cudaEvent_t e0, cudaEvent_t e1, float *ms)
{
    cudaError_t e = cudaEventRecord(e1, 0);
    if (e == cudaSuccess) e = cudaEventSynchronize(e1);
    *ms = 0;
    if (e == cudaSuccess) e = cudaEventElapsedTime(ms, e0, e1);
    return e;
}

#endif
