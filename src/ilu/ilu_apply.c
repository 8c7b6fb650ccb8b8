/* SPDX-License-Identifier: BSD-3-Clause */
/* Applying the block ILU: Y = M^{-1} X = P^T U^{-1} L^{-1} Ds P X (with a
 * matching Dc Q^T U^{-1} L^{-1} Ds Dr Q P X: Dr is folded into the left
 * scaling, the row permutation into the gather, Dc into the scatter), and the
 * factorization error ||Ds P A P^T - L U||_F / ||Ds P A P^T||_F. */
#include "ilu_impl.h"
#include "blockops.h"
#include <math.h>
#include <string.h>

/* One vector (k = 1) with b = B fixed, inside gather_SUF: the loops below
 * with B known, so that the block product unrolls (same sums, same order). */
#define GATHER1_CASE(B)                                                                     \
    case B:                                                                                 \
        _Pragma("omp parallel for schedule(static) if (par) num_threads(bsr_team_size())")   \
        for (int i = 0; i < F->n; i++) {                                                    \
            const xreal_t *xr = x + (size_t)ilu_src_row(F, i) * B;                          \
            real_t *ti = t + (size_t)i * B;                                                 \
            BSR_BLK_MATVEC(B, ds + (size_t)i * (B * B), xr, ti);                            \
        }                                                                                   \
        return;

/* t_k = Ds_k x_{perm[k]} (gather + scaling fused; perm[k] the source row,
 * ilu_src_row), in the factors' precision; scatter y_{perm[i]} = Dc t_i. */
#define DEFINE_GATHER(SUF, REAL, XREAL)                                                     \
    static void gather_##SUF(const bsr_ilu *F, const XREAL *x, REAL *t, int k)              \
    {                                                                                       \
        typedef REAL real_t;                                                                \
        typedef XREAL xreal_t;                                                              \
        const int b = F->b, bb = b * b;                                                     \
        const REAL *ds = (const REAL *)F->scale_left;                                       \
        const int par = bsr_par_worth((int64_t)F->n * bb * k);                              \
        if (k == 1) switch (b) { BSR_FOR_EACH_B(GATHER1_CASE) }                             \
        _Pragma("omp parallel for schedule(static) if (par) num_threads(bsr_team_size())")   \
        for (int i = 0; i < F->n; i++) {                                                    \
            int r = ilu_src_row(F, i);                                                      \
            const XREAL *xr = x + (size_t)r * b * k;                                        \
            REAL *ti = t + (size_t)i * b * k;                                               \
            BSR_BLK_MATCOLS(b, ds + (size_t)i * bb, xr, k, ti, k, k, );                     \
        }                                                                                   \
    }                                                                                       \
    static void scatter_##SUF(const bsr_ilu *F, const REAL *t, XREAL *y, int k)             \
    {                                                                                       \
        const int b = F->b;                                                                 \
        _Pragma("omp parallel for schedule(static) if (bsr_par_worth((int64_t)F->n * b * k)) num_threads(bsr_team_size())") \
        for (int i = 0; i < F->n; i++) {                                                    \
            int r = F->ord ? F->ord->perm[i] : i;                                           \
            double c = F->dc ? F->dc[r] : 1.0;                                              \
            for (int e = 0; e < b * k; e++)                                                 \
                y[(size_t)r * b * k + e] = (XREAL)(c * t[(size_t)i * b * k + e]);          \
        }                                                                                   \
    }

DEFINE_GATHER(dd, double, double)
DEFINE_GATHER(df, double, float)
DEFINE_GATHER(fd, float, double)
DEFINE_GATHER(ff, float, float)

/* The work vector of one apply: F's kept one when no other apply holds it
 * and it is large enough, else a new one (a concurrent apply on the same
 * factors takes its own).  A malloc of n entries at every apply paid its page
 * faults every time (32 MB at 1M block rows, b = 4). */
#define WS_HEAD 64   /* the capacity's header, keeping the data aligned */
static void *ws_take(bsr_ilu *F, size_t bytes)
{
    char *w = __atomic_exchange_n(&F->apply_ws, NULL, __ATOMIC_ACQ_REL);
    if (w && *(size_t *)w >= bytes) return w + WS_HEAD;
    free(w);
    w = bsr_malloc(WS_HEAD + bytes, "ILU apply work vector");
    if (!w) return NULL;
    *(size_t *)w = bytes;
    return w + WS_HEAD;
}

/* Give the work vector back to F (freed when F keeps another one already). */
static void ws_give(bsr_ilu *F, void *data)
{
    void *w = (char *)data - WS_HEAD, *none = NULL;
    if (!__atomic_compare_exchange_n(&F->apply_ws, &none, w, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) free(w);
}

/* Y = M^{-1} X = (LU)^{-1} X with scaling and ordering undone (k columns, CPU). */
bsr_status bsr_ilu_apply(const bsr_ilu *F, const bsr_multivec *X, bsr_multivec *Y)
{
    BSR_CHECK_ARG(F && X && Y, "bsr_ilu_apply: NULL argument");
    BSR_CHECK_ARG(!F->pattern_only, "bsr_ilu_apply: F holds patterns only (factors live on the device)");
    BSR_CHECK_ARG(F->valid, "bsr_ilu_apply: the last factorization failed; refactor first");
    int64_t n = (int64_t)F->n * F->b;
    if (X->n != n || Y->n != n || X->k != Y->k)
        return bsr_error(BSR_ERR_SIZE, "bsr_ilu_apply: M is %lld x %lld, X is %lld x %d, Y %lld x %d",
                         (long long)n, (long long)n, (long long)X->n, X->k, (long long)Y->n, Y->k);
    if (!X->data || !Y->data || !(X->where & BSR_ON_HOST))
        return bsr_error(BSR_ERR_ARG, "bsr_ilu_apply: X and Y must be on the host");
    /* work vector in the factors' precision: a host-only shell over F's
     * kept buffer (nothing to zero: gather writes every entry) */
    struct bsr_multivec Tw = {n, X->k, F->prec, NULL, NULL, BSR_ON_HOST}, *T = &Tw;
    Tw.data = ws_take((bsr_ilu *)F, bsr_precision_size(F->prec) * (size_t)(n > 0 ? n : 1) * X->k);
    if (!Tw.data) return BSR_ERR_NOMEM;
    int k = X->k, xd = X->prec == BSR_DOUBLE;
    /* one double vector on the natural path: gather and scatter fused into
     * the solves (same bits, two fewer passes over the work vector) */
    if (k == 1 && xd && Y->prec == BSR_DOUBLE && F->prec == BSR_DOUBLE &&
        bsr_trsv_ilu_fused(F->L, F->lvL, F->U, F->lvU, &F->tlv, (const double *)F->scale_left,
                           F->rsrc ? F->rsrc : F->ord ? F->ord->perm : NULL, F->ord ? F->ord->perm : NULL, F->dc,
                           (const double *)X->data, (double *)T->data, (double *)Y->data)) {
        Y->where = BSR_ON_HOST;
        ws_give((bsr_ilu *)F, Tw.data);
        return BSR_OK;
    }
    if (F->prec == BSR_DOUBLE) {
        if (xd) gather_dd(F, X->data, T->data, k); else gather_df(F, X->data, T->data, k);
    } else {
        if (xd) gather_fd(F, X->data, T->data, k); else gather_ff(F, X->data, T->data, k);
    }
    bsr_status s = BSR_OK;
    if (!bsr_trsv_ilu_tree(F->L, F->lvL, F->U, F->lvU, &F->tlv, T->data, k)) {
        s = bsr_trsv_lower(F->L, F->lvL, T, T);
        if (!s) s = bsr_trsv_upper(F->U, F->lvU, T, T);
    }
    if (!s) {
        int yd = Y->prec == BSR_DOUBLE;
        if (F->prec == BSR_DOUBLE) {
            if (yd) scatter_dd(F, T->data, Y->data, k); else scatter_df(F, T->data, Y->data, k);
        } else {
            if (yd) scatter_fd(F, T->data, Y->data, k); else scatter_ff(F, T->data, Y->data, k);
        }
        Y->where = BSR_ON_HOST;
    }
    ws_give((bsr_ilu *)F, Tw.data);
    return s;
}

/* Block p of a factor as double. */
static void get_block(const bsr_matrix *M, int p, double *out)
{
    int bb = M->b * M->b;
    if (M->prec == BSR_DOUBLE) memcpy(out, (const double *)M->val + (size_t)p * bb, sizeof(double) * bb);
    else for (int e = 0; e < bb; e++) out[e] = ((const float *)M->val)[(size_t)p * bb + e];
}

/* *rel = ||Ds P A P^T - L U||_F / ||Ds P A P^T||_F of the stored factors. */
bsr_status bsr_ilu_error_norm(const bsr_ilu *F, double *rel)
{
    BSR_CHECK_ARG(F && rel, "bsr_ilu_error_norm: NULL argument");
    BSR_CHECK_ARG(!F->pattern_only, "bsr_ilu_error_norm: F holds patterns only (factors live on the device)");
    BSR_CHECK_ARG(F->valid, "bsr_ilu_error_norm: the last factorization failed");
    const int n = F->n, b = F->b, bb = b * b;
    double *rowerr = bsr_calloc((size_t)n + 1, 2 * sizeof(double), "ILU error norm");
    if (!rowerr) return BSR_ERR_NOMEM;
    int fail = 0;
    #pragma omp parallel reduction(| : fail) num_threads(bsr_team((int64_t)F->nnzbA * bb, ILU_TEAM_GRAIN))
    {
        ilu_work w;
        double *lk = bsr_malloc(sizeof(double) * 2 * bb, "ILU error norm");
        if (ilu_work_init(&w, n, b) || !lk) fail = 1;
        else {
            double *uij = lk + bb;
            #pragma omp for schedule(dynamic, 64)
            for (int k = 0; k < n; k++) {
                int nomem = 0;
                /* acc = Ahat row k - U row k (true pivot on the diagonal) */
                for (int p = F->ap[k]; p < F->ap[k + 1]; p++) {
                    int s = ilu_slot(&w, b, F->ac[p], 1, &nomem);
                    if (nomem) break;
                    memcpy(w.sval + (size_t)s * bb, F->aval + (size_t)p * bb, sizeof(double) * bb);
                }
                for (int p = F->U->rowptr[k]; p < F->U->rowptr[k + 1] && !nomem; p++) {
                    int s = ilu_slot(&w, b, F->U->colind[p], 1, &nomem);
                    if (nomem) break;
                    if (p == F->U->rowptr[k]) memcpy(uij, F->piv + (size_t)k * bb, sizeof(double) * bb);
                    else get_block(F->U, p, uij);
                    for (int e = 0; e < bb; e++) w.sval[(size_t)s * bb + e] -= uij[e];
                }
                /* - sum_i L_ki U_i */
                for (int p = F->L->rowptr[k]; p < F->L->rowptr[k + 1] && !nomem; p++) {
                    int i = F->L->colind[p];
                    get_block(F->L, p, lk);
                    for (int q = F->U->rowptr[i]; q < F->U->rowptr[i + 1]; q++) {
                        int s = ilu_slot(&w, b, F->U->colind[q], 1, &nomem);
                        if (nomem) break;
                        if (q == F->U->rowptr[i]) memcpy(uij, F->piv + (size_t)i * bb, sizeof(double) * bb);
                        else get_block(F->U, q, uij);
                        bsr_blk_mulsub(b, w.sval + (size_t)s * bb, lk, uij);
                    }
                }
                if (nomem) { fail = 1; ilu_work_clear(&w); continue; }
                double e2 = 0.0, a2 = 0.0;
                for (int s = 0; s < w.ns; s++)
                    for (int e = 0; e < bb; e++) e2 += w.sval[(size_t)s * bb + e] * w.sval[(size_t)s * bb + e];
                for (size_t e = (size_t)F->ap[k] * bb; e < (size_t)F->ap[k + 1] * bb; e++)
                    a2 += F->aval[e] * F->aval[e];
                rowerr[2 * k] = e2;
                rowerr[2 * k + 1] = a2;
                ilu_work_clear(&w);
            }
        }
        ilu_work_free(&w);
        free(lk);
    }
    double e2 = 0.0, a2 = 0.0;
    for (int k = 0; k < n; k++) { e2 += rowerr[2 * k]; a2 += rowerr[2 * k + 1]; }
    free(rowerr);
    if (fail) return bsr_error(BSR_ERR_NOMEM, "bsr_ilu_error_norm: out of memory");
    *rel = a2 > 0 ? sqrt(e2 / a2) : 0.0;
    return BSR_OK;
}
