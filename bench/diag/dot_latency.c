/* SPDX-License-Identifier: BSD-3-Clause */
/* Diagnostic (issue 22, not built by CMake): wall time of one device dot
 * product bsr_ctx_dot, result on the host, for a few vector lengths, k = 1
 * and 4, as a Krylov iteration's reductions see it (launch, reduction,
 * transfer, synchronization).  A diagnostic of latency, not a claim of speed:
 * the solver's profile=1 phase times are.  Build against a tree's shared
 * library:
 *   cc -O2 -Iinclude bench/diag/dot_latency.c -LBUILD -lbsrsolve -Wl,-rpath,BUILD -o dotlat */
#include "bsrsolve.h"
#include <stdio.h>
#include <time.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

int main(void)
{
    bsr_context *ctx = NULL;
    if (bsr_context_create(&ctx, BSR_BACKEND_CUDA, 0, NULL)) { fprintf(stderr, "no CUDA context\n"); return 1; }
    static const long ns[] = {1000, 30000, 1000000, 4000000};
    static const int ks[] = {1, 4};
    for (int ik = 0; ik < 2; ik++)
        for (int in = 0; in < 4; in++) {
            bsr_multivec *X = NULL;
            double d[4];
            if (bsr_multivec_create_device(ctx, &X, ns[in], ks[ik], BSR_DOUBLE) || bsr_ctx_fill(ctx, X, 1.0)) return 1;
            const int reps = ns[in] * ks[ik] >= 4000000 ? 300 : 2000;
            for (int r = 0; r < 20; r++) bsr_ctx_dot(ctx, X, X, d);
            double t0 = now();
            for (int r = 0; r < reps; r++) bsr_ctx_dot(ctx, X, X, d);
            double us = (now() - t0) / reps * 1e6;
            printf("dot n=%-8ld k=%d  %8.2f us a call  (%.0f)\n", ns[in], ks[ik], us, d[0]);
            bsr_multivec_destroy(X);
        }
    bsr_context_destroy(ctx);
    return 0;
}
