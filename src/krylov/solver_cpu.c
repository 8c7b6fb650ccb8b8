/* SPDX-License-Identifier: BSD-3-Clause */
/* CPU backend of the Krylov vector operations: host multivectors, OpenMP,
 * masked per-column updates; reductions through bsr_multivec_dot (fixed
 * chunking, so results do not depend on the thread count). */
#include "solver_impl.h"
#include <string.h>

static bsr_status cpu_vnew(const bsr_kops *o, bsr_multivec **V)
{
    return bsr_multivec_create(V, o->n, o->k, o->prec);
}

static void cpu_vfree(const bsr_kops *o, bsr_multivec *V)
{
    (void)o;
    bsr_multivec_destroy(V);
}

/* Y(:,j) = a X + b Z + c Y on masked columns; NULL X/Z terms are absent; a zero
 * coefficient does not read its vector. */
#define DEFINE_LINCOMB(SUF, REAL)                                                               \
    static void lincomb_##SUF(int64_t n, int k, REAL *y, const double *a, const REAL *x,       \
                              const double *b, const REAL *z, const double *c,                  \
                              const unsigned char *mask)                                        \
    {                                                                                           \
        _Pragma("omp parallel for schedule(static) if (bsr_par_worth(n * k)) num_threads(bsr_team_size())") \
        for (int64_t i = 0; i < n; i++)                                                         \
            for (int j = 0; j < k; j++) {                                                       \
                if (mask && !mask[j]) continue;                                                 \
                int64_t e = i * k + j;                                                          \
                double v = 0;                                                                   \
                if (x && a[j] != 0) v += a[j] * x[e];                                           \
                if (z && b[j] != 0) v += b[j] * z[e];                                           \
                if (c[j] != 0) v += c[j] * y[e];                                                \
                y[e] = (REAL)v;                                                                 \
            }                                                                                   \
    }
DEFINE_LINCOMB(d, double)
DEFINE_LINCOMB(f, float)

static void lincomb(const bsr_kops *o, bsr_multivec *Y, const double *a, const bsr_multivec *X,
                    const double *b, const bsr_multivec *Z, const double *c, const unsigned char *mask)
{
    if (o->prec == BSR_DOUBLE)
        lincomb_d(o->n, o->k, Y->data, a, X ? X->data : NULL, b, Z ? Z->data : NULL, c, mask);
    else
        lincomb_f(o->n, o->k, Y->data, a, X ? X->data : NULL, b, Z ? Z->data : NULL, c, mask);
}

static bsr_status cpu_copy(const bsr_kops *o, bsr_multivec *Y, const bsr_multivec *X,
                           const unsigned char *mask)
{
    if (!mask) return bsr_multivec_copy(Y, X);
    double one[BSR_KMAX], zero[BSR_KMAX];
    for (int j = 0; j < o->k; j++) { one[j] = 1; zero[j] = 0; }
    lincomb(o, Y, one, X, zero, NULL, zero, mask);
    return BSR_OK;
}

static bsr_status cpu_axpby(const bsr_kops *o, bsr_multivec *Y, const double *a,
                            const bsr_multivec *X, const double *b, const unsigned char *mask)
{
    double zero[BSR_KMAX] = {0};
    lincomb(o, Y, a, X, zero, NULL, b, mask);
    return BSR_OK;
}

static bsr_status cpu_axpbypcz(const bsr_kops *o, bsr_multivec *Y, const double *a,
                               const bsr_multivec *X, const double *b, const bsr_multivec *Z,
                               const double *c, const unsigned char *mask)
{
    lincomb(o, Y, a, X, b, Z, c, mask);
    return BSR_OK;
}

/* Y = b Y + sum_l c[l k + j] V[l] on masked columns, one pass: each term
 * with the arithmetic of lincomb_SUF's axpby (the bits of those calls). */
#define DEFINE_COMBM(SUF, REAL)                                                                 \
    static void combm_##SUF(int64_t n, int k, REAL *y, const double *b, int m,                 \
                            bsr_multivec *const *V, const double *c, const unsigned char *mask) \
    {                                                                                           \
        _Pragma("omp parallel for schedule(static) if (bsr_par_worth(n * k * m)) num_threads(bsr_team_size())") \
        for (int64_t i = 0; i < n; i++)                                                         \
            for (int j = 0; j < k; j++) {                                                       \
                if (mask && !mask[j]) continue;                                                 \
                int64_t e = i * k + j;                                                          \
                REAL acc = y[e];                                                                \
                for (int l = 0; l < m; l++) {                                                   \
                    const double a = c[(size_t)l * k + j], d = l ? 1.0 : b[j];                  \
                    double v = 0;                                                               \
                    if (a != 0) v += a * ((const REAL *)V[l]->data)[e];                         \
                    if (d != 0) v += d * acc;                                                   \
                    acc = (REAL)v;                                                              \
                }                                                                               \
                y[e] = acc;                                                                     \
            }                                                                                   \
    }
DEFINE_COMBM(d, double)
DEFINE_COMBM(f, float)
static bsr_status cpu_lincomb(const bsr_kops *o, bsr_multivec *Y, const double *b, int m, bsr_multivec *const *V,
                              const double *c, const unsigned char *mask)
{
    if (o->prec == BSR_DOUBLE) combm_d(o->n, o->k, Y->data, b, m, V, c, mask);
    else combm_f(o->n, o->k, Y->data, b, m, V, c, mask);
    return BSR_OK;
}
static bsr_status cpu_zero(const bsr_kops *o, bsr_multivec *V)
{
    memset(V->data, 0, (size_t)o->n * o->k * bsr_precision_size(o->prec));
    V->where = BSR_ON_HOST;
    return BSR_OK;
}

static bsr_status cpu_dot(const bsr_kops *o, const bsr_multivec *X, const bsr_multivec *Y,
                          double *out)
{
    (void)o;
    return bsr_multivec_dot(X, Y, out);
}

static bsr_status cpu_matvec(const bsr_kops *o, const bsr_multivec *X, bsr_multivec *Y)
{
    return bsr_spmm_cpu(BSR_SPMM_OMP, 1.0, o->A, X, 0.0, Y);
}

static bsr_status cpu_absnorm(const bsr_kops *o, const bsr_multivec *B, const bsr_multivec *X, double *out)
{
    return bsr_absnorm_host(o->A, B->data, X->data, o->k, out);
}

void bsr_kops_cpu(bsr_kops *o, const bsr_matrix *A, bsr_pc *pc, int k)
{
    bsr_kops_base(o, A, pc, k);
    o->vnew = cpu_vnew;
    o->vfree = cpu_vfree;
    o->zero = cpu_zero;
    o->copy = cpu_copy;
    o->axpby = cpu_axpby;
    o->axpbypcz = cpu_axpbypcz;
    o->lincomb = cpu_lincomb;
    o->dot = cpu_dot;
    o->matvec = cpu_matvec;
    o->absnorm = cpu_absnorm;
}
