/* SPDX-License-Identifier: BSD-3-Clause */
/* Long-vector 2D heat variant on the CPU (reference for the cuBLAS version)
 * and its launch + per-wave duration model. */
#include "pyramid_impl.h"
#include <string.h>

/* The grid as one vector of m = N*N values: v = (1-4r) u, then
 * v[i] += r u[i-1], v[i] += r u[i+1], v[i] += r u[i-N], v[i] += r u[i+N]
 * wherever the shifted index exists, then the boundary restored from u. */
bsr_status bsr_pyr_longvec_cpu(double *u, int64_t N, double r, int steps)
{
    BSR_CHECK_ARG(u && N >= 3 && steps >= 0, "bsr_pyr_longvec_cpu: bad argument");
    const int64_t m = N * N;
    double *v = bsr_malloc(sizeof(double) * (size_t)m, "long-vector work");
    if (!v) return BSR_ERR_NOMEM;
    const double a = 1 - 4 * r;
    for (int s = 0; s < steps; s++) {
        for (int64_t i = 0; i < m; i++) v[i] = a * u[i];
        for (int64_t i = 1; i < m; i++) v[i] = v[i] + r * u[i - 1];
        for (int64_t i = 0; i < m - 1; i++) v[i] = v[i] + r * u[i + 1];
        for (int64_t i = N; i < m; i++) v[i] = v[i] + r * u[i - N];
        for (int64_t i = 0; i < m - N; i++) v[i] = v[i] + r * u[i + N];
        for (int64_t k = 0; k < N; k++) {
            v[k] = u[k];
            v[m - N + k] = u[m - N + k];
            v[k * N] = u[k * N];
            v[k * N + N - 1] = u[k * N + N - 1];
        }
        memcpy(u, v, sizeof(double) * (size_t)m);
    }
    free(v);
    return BSR_OK;
}

double bsr_lv_predict(const bsr_lv_model *M, int64_t N, int steps)
{
    int64_t m = N * N;
    int64_t waves = M->resident > 0 ? (m + M->resident - 1) / M->resident : 1;
    return (double)steps * M->ops * (M->t_launch + M->t_wave * (double)waves);
}
