/* SPDX-License-Identifier: BSD-3-Clause */
/* Multivectors: n x k, row-interleaved (x[i*k + j]); host BLAS-1 per column.
 * A multivector whose only current copy is on the device is handed to the
 * CUDA backend (kernels/blas_multivec.cu) on the context that owns it.
 * Reductions are deterministic: fixed chunking, partial sums combined in order. */
#include "internal.h"
#include <math.h>
#include <string.h>

#define CHUNK 4096 /* rows per partial sum: fixed so results do not depend on threads */

bsr_status bsr_multivec_create(bsr_multivec **X, int64_t n, int k, bsr_precision prec)
{
    BSR_CHECK_ARG(X, "bsr_multivec_create: X is NULL");
    *X = NULL;
    BSR_CHECK_ARG(n >= 0 && k >= 1, "bsr_multivec_create: bad shape %lld x %d", (long long)n, k);
    BSR_CHECK_ARG(prec == BSR_DOUBLE || prec == BSR_FLOAT, "bsr_multivec_create: bad precision");
    bsr_multivec *V = bsr_calloc(1, sizeof *V, "bsr_multivec");
    if (!V) return BSR_ERR_NOMEM;
    V->n = n; V->k = k; V->prec = prec; V->where = BSR_ON_HOST;
    V->data = bsr_calloc((size_t)n * k, bsr_precision_size(prec), "multivector data");
    if (!V->data) { free(V); return BSR_ERR_NOMEM; }
    *X = V;
    return BSR_OK;
}

/* Free X and its host/device storage (NULL-safe). */
void bsr_multivec_destroy(bsr_multivec *X)
{
    if (!X) return;
    if (X->dev) bsr_cuda_multivec_release(X);
    free(X->data);
    free(X);
}

/* Read-only accessors of a multivector (0/NULL for a NULL one). */
int64_t bsr_multivec_rows(const bsr_multivec *X) { return X ? X->n : 0; }
int bsr_multivec_cols(const bsr_multivec *X) { return X ? X->k : 0; }
bsr_precision bsr_multivec_precision(const bsr_multivec *X) { return X ? X->prec : BSR_DOUBLE; }
void *bsr_multivec_data(bsr_multivec *X) { return X ? X->data : NULL; }
const void *bsr_multivec_cdata(const bsr_multivec *X) { return X ? X->data : NULL; }

/* Element e of X's host data as double. */
static inline double get(const bsr_multivec *X, int64_t e)
{
    return X->prec == BSR_DOUBLE ? ((const double *)X->data)[e] : ((const float *)X->data)[e];
}

/* X element e (row-interleaved index) = v, in X's precision. */
static inline void set(bsr_multivec *X, int64_t e, double v)
{
    if (X->prec == BSR_DOUBLE) ((double *)X->data)[e] = v;
    else ((float *)X->data)[e] = (float)v;
}

/* Fails unless X has current host data (device-resident vectors go through the context API). */
static bsr_status need_host(const bsr_multivec *X, const char *fn)
{
    if (!X) return bsr_error(BSR_ERR_ARG, "%s: NULL multivector", fn);
    if (!X->data || !(X->where & BSR_ON_HOST))
        return bsr_error(BSR_ERR_ARG, "%s: multivector is device-resident; download it or use the context's call", fn);
    return BSR_OK;
}

/* BSR_ERR_SIZE unless X and Y have the same rows and columns (fn names the caller). */
static bsr_status same_shape(const bsr_multivec *X, const bsr_multivec *Y, const char *fn)
{
    if (X->n != Y->n || X->k != Y->k)
        return bsr_error(BSR_ERR_SIZE, "%s: shapes differ (%lld x %d vs %lld x %d)", fn,
                         (long long)X->n, X->k, (long long)Y->n, Y->k);
    return BSR_OK;
}

/* Nonzero when X's only current copy is on the device: the operation then
 * runs there, on the context that owns that copy (no hidden download). */
static int dev_only(const bsr_multivec *X)
{
    return X && X->dev && (X->where & BSR_ON_DEVICE) && !(X->where & BSR_ON_HOST);
}

/* The host copy of an output was just written: a device copy is now stale. */
static void host_written(bsr_multivec *X) { X->where = BSR_ON_HOST; }

/* Every element of X = value. */
bsr_status bsr_multivec_fill(bsr_multivec *X, double value)
{
    if (dev_only(X)) return bsr_cuda_mv_fill(NULL, X, value);
    BSR_TRY(need_host(X, "bsr_multivec_fill"));
    int64_t m = X->n * X->k;
#pragma omp parallel for schedule(static) if (bsr_par_worth(m)) num_threads(bsr_team_size())
    for (int64_t e = 0; e < m; e++) set(X, e, value);
    host_written(X);
    return BSR_OK;
}

/* X = deterministic values in [-1,1) from seed (splitmix64). */
bsr_status bsr_multivec_random(bsr_multivec *X, uint64_t seed)
{
    BSR_TRY(need_host(X, "bsr_multivec_random"));
    uint64_t s = seed;
    for (int64_t e = 0; e < X->n * X->k; e++)
        set(X, e, (double)(bsr_splitmix64(&s) >> 11) * (2.0 / 9007199254740992.0) - 1.0);
    host_written(X);
    return BSR_OK;
}

/* Y = X (same shape and precision). */
bsr_status bsr_multivec_copy(bsr_multivec *Y, const bsr_multivec *X)
{
    if (dev_only(Y)) return bsr_cuda_mv_copy(NULL, Y, X);
    BSR_TRY(need_host(X, "bsr_multivec_copy"));
    BSR_TRY(need_host(Y, "bsr_multivec_copy"));
    BSR_TRY(same_shape(X, Y, "bsr_multivec_copy"));
    int64_t m = X->n * X->k;
    host_written(Y);
    if (X->prec == Y->prec) { memcpy(Y->data, X->data, (size_t)m * bsr_precision_size(X->prec)); return BSR_OK; }
#pragma omp parallel for schedule(static) if (bsr_par_worth(m)) num_threads(bsr_team_size())
    for (int64_t e = 0; e < m; e++) set(Y, e, get(X, e));
    return BSR_OK;
}

/* Y(:,j) += alpha[j] X(:,j) for every column j. */
bsr_status bsr_multivec_axpy(bsr_multivec *Y, const double *alpha, const bsr_multivec *X)
{
    if (dev_only(Y) && alpha) return bsr_cuda_mv_axpbypcz(NULL, alpha, X, NULL, NULL, NULL, Y, NULL);
    BSR_TRY(need_host(X, "bsr_multivec_axpy"));
    BSR_TRY(need_host(Y, "bsr_multivec_axpy"));
    BSR_TRY(same_shape(X, Y, "bsr_multivec_axpy"));
    BSR_CHECK_ARG(alpha, "bsr_multivec_axpy: alpha is NULL");
    int k = X->k;
    if (X->prec == BSR_DOUBLE && Y->prec == BSR_DOUBLE) {
        /* both double: typed loops the compiler vectorizes (the same y + a x
         * per entry as the generic loop, so the same bits) */
        const double *x = X->data;   /* X may be Y */
        double *y = Y->data;
        if (k == 1) {
            const double a = alpha[0];
#pragma omp parallel for schedule(static) if (bsr_par_worth(X->n)) num_threads(bsr_team_size())
            for (int64_t i = 0; i < X->n; i++) y[i] += a * x[i];
        } else {
#pragma omp parallel for schedule(static) if (bsr_par_worth(X->n * k)) num_threads(bsr_team_size())
            for (int64_t i = 0; i < X->n; i++)
                for (int j = 0; j < k; j++) y[i * k + j] += alpha[j] * x[i * k + j];
        }
        host_written(Y);
        return BSR_OK;
    }
#pragma omp parallel for schedule(static) if (bsr_par_worth(X->n * k)) num_threads(bsr_team_size())
    for (int64_t i = 0; i < X->n; i++)
        for (int j = 0; j < k; j++) set(Y, i * k + j, get(Y, i * k + j) + alpha[j] * get(X, i * k + j));
    host_written(Y);
    return BSR_OK;
}

/* X(:,j) *= alpha[j] for every column j. */
bsr_status bsr_multivec_scale(bsr_multivec *X, const double *alpha)
{
    if (dev_only(X) && alpha) return bsr_cuda_mv_scale(NULL, X, alpha);
    BSR_TRY(need_host(X, "bsr_multivec_scale"));
    BSR_CHECK_ARG(alpha, "bsr_multivec_scale: alpha is NULL");
    int k = X->k;
    if (X->prec == BSR_DOUBLE && k == 1) {   /* typed: vectorized, the same products */
        double *restrict x = X->data;
        const double a = alpha[0];
#pragma omp parallel for schedule(static) if (bsr_par_worth(X->n)) num_threads(bsr_team_size())
        for (int64_t i = 0; i < X->n; i++) x[i] *= a;
        host_written(X);
        return BSR_OK;
    }
#pragma omp parallel for schedule(static) if (bsr_par_worth(X->n * k)) num_threads(bsr_team_size())
    for (int64_t i = 0; i < X->n; i++)
        for (int j = 0; j < k; j++) set(X, i * k + j, alpha[j] * get(X, i * k + j));
    host_written(X);
    return BSR_OK;
}

/* part[j] = sum over rows lo..hi-1 of x(i,j) y(i,j), in row order (one
 * accumulator a column in registers: the same sums as a plain loop). */
#define DOT_CHUNK(SUF, RX, RY)                                                                      \
    static void dot_chunk_##SUF(const RX *x, const RY *y, int64_t lo, int64_t hi, int k, double *part) \
    {                                                                                                \
        if (k == 1) {                                                                                \
            double s = 0;                                                                            \
            for (int64_t i = lo; i < hi; i++) s += (double)x[i] * (double)y[i];                      \
            part[0] = s;                                                                             \
            return;                                                                                  \
        }                                                                                            \
        for (int j = 0; j < k; j++) {                                                                \
            double s = 0;                                                                            \
            for (int64_t i = lo; i < hi; i++) s += (double)x[i * k + j] * (double)y[i * k + j];      \
            part[j] = s;                                                                             \
        }                                                                                            \
    }
DOT_CHUNK(dd, double, double)
DOT_CHUNK(ff, float, float)
DOT_CHUNK(df, double, float)
DOT_CHUNK(fd, float, double)

/* The partial sums of rows lo..hi-1 for X, Y of any precisions. */
static void dot_chunk(const bsr_multivec *X, const bsr_multivec *Y, int64_t lo, int64_t hi, double *part)
{
    const int k = X->k, xd = X->prec == BSR_DOUBLE, yd = Y->prec == BSR_DOUBLE;
    if (xd && yd) dot_chunk_dd(X->data, Y->data, lo, hi, k, part);
    else if (!xd && !yd) dot_chunk_ff(X->data, Y->data, lo, hi, k, part);
    else if (xd) dot_chunk_df(X->data, Y->data, lo, hi, k, part);
    else dot_chunk_fd(X->data, Y->data, lo, hi, k, part);
}

/* out[j] = sum_i X(i,j)*Y(i,j): per-chunk partial sums, then summed in chunk order. */
static bsr_status dot_impl(const bsr_multivec *X, const bsr_multivec *Y, double *out)
{
    int k = X->k;
    int64_t nchunks = (X->n + CHUNK - 1) / CHUNK;
    double *part = bsr_calloc((size_t)(nchunks ? nchunks : 1) * k, sizeof(double), "dot partial sums");
    if (!part) return BSR_ERR_NOMEM;
#pragma omp parallel for schedule(static) if (bsr_par_worth(X->n * k)) num_threads(bsr_team_size())
    for (int64_t c = 0; c < nchunks; c++) {
        int64_t lo = c * CHUNK, hi = lo + CHUNK < X->n ? lo + CHUNK : X->n;
        dot_chunk(X, Y, lo, hi, part + c * k);
    }
    for (int j = 0; j < k; j++) {
        double s = 0;
        for (int64_t c = 0; c < nchunks; c++) s += part[c * k + j];
        out[j] = s;
    }
    free(part);
    return BSR_OK;
}

/* out[j] = X(:,j) . Y(:,j), summed in fixed chunks (same result for any thread count). */
bsr_status bsr_multivec_dot(const bsr_multivec *X, const bsr_multivec *Y, double *out)
{
    if ((dev_only(X) || dev_only(Y)) && out) return bsr_cuda_mv_dot(NULL, X, Y, out);
    BSR_TRY(need_host(X, "bsr_multivec_dot"));
    BSR_TRY(need_host(Y, "bsr_multivec_dot"));
    BSR_TRY(same_shape(X, Y, "bsr_multivec_dot"));
    BSR_CHECK_ARG(out, "bsr_multivec_dot: out is NULL");
    return dot_impl(X, Y, out);
}

/* ||X(:,j)||_2 as m * sqrt(sum (x/m)^2) with m = max |x|: no overflow or
 * underflow of the squares (the slow path, for columns the plain sum of
 * squares cannot represent). */
static double norm_scaled(const bsr_multivec *X, int j)
{
    double m = 0, s = 0;
    for (int64_t i = 0; i < X->n; i++) {
        double a = fabs(get(X, i * X->k + j));
        if (a > m || a != a) m = a;
        if (m != m) return m;
    }
    if (m == 0 || m == INFINITY) return m;
    for (int64_t i = 0; i < X->n; i++) {
        double t = get(X, i * X->k + j) / m;
        s += t * t;
    }
    return m * sqrt(s);
}

int bsr_norm_scales(const double *ss, int k, double *sc)
{
    int n = 0;
    for (int j = 0; j < k; j++) {
        /* overflow: elements <= 2^1024 become <= 2^424, squares summed stay finite;
         * underflow: elements < 2^-400 become < 2^200, squares normal */
        sc[j] = ss[j] == INFINITY ? 0x1p-600 : ss[j] >= 0 && ss[j] < BSR_NORM_LO ? 0x1p600 : 1;
        n += sc[j] != 1;
    }
    return n;
}

/* out[j] = ||X(:,j)||_2: the dot of each column with itself, then sqrt;
 * columns whose sum of squares overflowed or is near underflow are summed
 * again scaled by their largest entry. */
bsr_status bsr_multivec_norm2(const bsr_multivec *X, double *out)
{
    if (dev_only(X) && out) return bsr_cuda_norm2(NULL, X, out);
    BSR_TRY(need_host(X, "bsr_multivec_norm2"));
    BSR_CHECK_ARG(out, "bsr_multivec_norm2: out is NULL");
    BSR_TRY(dot_impl(X, X, out));
    for (int j = 0; j < X->k; j++)
        out[j] = out[j] == INFINITY || out[j] < BSR_NORM_LO ? norm_scaled(X, j) : sqrt(out[j]);
    return BSR_OK;
}

/* X = the column-major array src with leading dimension ld. */
bsr_status bsr_multivec_from_colmajor(bsr_multivec *X, const double *src, int64_t ld)
{
    BSR_TRY(need_host(X, "bsr_multivec_from_colmajor"));
    BSR_CHECK_ARG(src && ld >= X->n, "bsr_multivec_from_colmajor: src NULL or ld %lld < n %lld",
                  (long long)ld, (long long)X->n);
    for (int64_t i = 0; i < X->n; i++)
        for (int j = 0; j < X->k; j++) set(X, i * X->k + j, src[j * ld + i]);
    host_written(X);
    return BSR_OK;
}

/* dst (column-major, leading dimension ld) = X. */
bsr_status bsr_multivec_to_colmajor(const bsr_multivec *X, double *dst, int64_t ld)
{
    BSR_TRY(need_host(X, "bsr_multivec_to_colmajor"));
    BSR_CHECK_ARG(dst && ld >= X->n, "bsr_multivec_to_colmajor: dst NULL or ld %lld < n %lld",
                  (long long)ld, (long long)X->n);
    for (int64_t i = 0; i < X->n; i++)
        for (int j = 0; j < X->k; j++) dst[j * ld + i] = get(X, i * X->k + j);
    return BSR_OK;
}

bsr_multivec *bsr_multivec_view(const bsr_multivec *X, int64_t row0, int64_t nrows, bsr_mv_view *V)
{
    size_t off = (size_t)row0 * X->k * bsr_precision_size(X->prec);
    V->mv = *X;
    V->mv.n = nrows;
    V->mv.data = X->data ? (char *)X->data + off : NULL;
    V->mv.dev = NULL;
    if (X->dev) {
        V->dm = *(const bsr_dev_multivec *)X->dev;
        V->dm.data = (char *)V->dm.data + off;
        V->mv.dev = &V->dm;
    }
    return &V->mv;
}
