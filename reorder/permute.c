/* SPDX-License-Identifier: BSD-3-Clause */
/* Symmetric permutation B = P A P^T of a BSR matrix and of multivectors. */
#include "reorder_impl.h"
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

/* (new column, source block) pair for sorting one row. */
typedef struct { int col, src; } colsrc;

/* qsort comparison of (column, source block) pairs by column. */
static int cmp_colsrc(const void *a, const void *b)
{
    const colsrc *x = a, *y = b;
    return (x->col > y->col) - (x->col < y->col);
}

/* Sort a row's pairs: insertion sort for the short rows of FV matrices,
 * qsort for long ones (columns are unique, so the order is total). */
static void sort_row(colsrc *r, int len)
{
    if (len > 32) { qsort(r, (size_t)len, sizeof *r, cmp_colsrc); return; }
    for (int i = 1; i < len; i++) {
        colsrc t = r[i];
        int j = i - 1;
        while (j >= 0 && r[j].col > t.col) { r[j + 1] = r[j]; j--; }
        r[j + 1] = t;
    }
}

/* Check that ord fits n rows; names fn in the message. */
static bsr_status check_ord(const char *fn, const bsr_ordering *ord, int n)
{
    BSR_CHECK_ARG(ord && ord->perm && ord->iperm, "%s: NULL ordering", fn);
    if (ord->n != n)
        return bsr_error(BSR_ERR_SIZE, "%s: ordering of %d rows applied to %d block rows", fn,
                         ord->n, n);
    return BSR_OK;
}

/* B = P A P^T (blocks intact, columns sorted again), linear in nnzb, OpenMP. */
bsr_status bsr_permute(const bsr_matrix *A, const bsr_ordering *ord, bsr_matrix **B)
{
    BSR_CHECK_ARG(A && B, "bsr_permute: NULL argument");
    *B = NULL;
    if (A->nbrows != A->nbcols)
        return bsr_error(BSR_ERR_SIZE, "bsr_permute: matrix is %d x %d block rows, not square",
                         A->nbrows, A->nbcols);
    BSR_TRY(check_ord("bsr_permute", ord, A->nbrows));
    int n = A->nbrows, maxlen = 0;
    bsr_matrix *C;
    BSR_TRY(bsr_matrix_alloc(&C, n, n, A->b, A->nnzb, A->prec));
    C->rowptr[0] = 0;
    for (int i = 0; i < n; i++) {
        int len = A->rowptr[ord->perm[i] + 1] - A->rowptr[ord->perm[i]];
        C->rowptr[i + 1] = C->rowptr[i] + len;
        if (len > maxlen) maxlen = len;
    }
    size_t bs = (size_t)A->b * A->b * bsr_precision_size(A->prec);
    const int nth = bsr_team(n, BSR_ROW_GRAIN);   /* a buffer a thread of the team */
    colsrc *buf = bsr_malloc(sizeof(colsrc) * ((size_t)maxlen + 1) * (size_t)nth, "permute row buffers");
    if (!buf) { bsr_matrix_destroy(C); return BSR_ERR_NOMEM; }
    const char *av = A->val;
    char *cv = C->val;
#pragma omp parallel num_threads(nth)
    {
        int t = 0;
#ifdef _OPENMP
        t = omp_get_thread_num();
#endif
        colsrc *r = buf + (size_t)t * ((size_t)maxlen + 1);
#pragma omp for schedule(static)
        for (int i = 0; i < n; i++) {
            int o = ord->perm[i], a0 = A->rowptr[o], len = A->rowptr[o + 1] - a0, c0 = C->rowptr[i];
            for (int k = 0; k < len; k++) { r[k].col = ord->iperm[A->colind[a0 + k]]; r[k].src = a0 + k; }
            sort_row(r, len);
            for (int k = 0; k < len; k++) {
                C->colind[c0 + k] = r[k].col;
                memcpy(cv + (size_t)(c0 + k) * bs, av + (size_t)r[k].src * bs, bs);
            }
        }
    }
    free(buf);
    *B = C;
    return BSR_OK;
}

/* Y row block i = X row block from[i] (inverse: Y row block from[i] = X row block i). */
static bsr_status permute_vec(const char *fn, const bsr_ordering *ord, int b,
                              const bsr_multivec *X, bsr_multivec *Y, int inverse)
{
    BSR_CHECK_ARG(X && Y && X != Y, "%s: NULL or aliased multivectors", fn);
    BSR_CHECK_ARG(b >= 1 && b <= BSR_MAX_BLOCK, "%s: block size %d out of range 1..%d", fn, b,
                  BSR_MAX_BLOCK);
    BSR_CHECK_ARG(ord, "%s: NULL ordering", fn);
    if (X->n != (int64_t)ord->n * b || Y->n != X->n || Y->k != X->k || Y->prec != X->prec)
        return bsr_error(BSR_ERR_SIZE, "%s: X %lld x %d, Y %lld x %d (precisions %d, %d) for an "
                         "ordering of %d block rows of %d", fn, (long long)X->n, X->k,
                         (long long)Y->n, Y->k, (int)X->prec, (int)Y->prec, ord->n, b);
    BSR_TRY(check_ord(fn, ord, ord->n));
    if (!X->data || !Y->data || !(X->where & BSR_ON_HOST))
        return bsr_error(BSR_ERR_ARG, "%s: multivector is device-resident; download it first", fn);
    size_t rs = (size_t)b * X->k * bsr_precision_size(X->prec);
    const char *x = X->data;
    char *y = Y->data;
    const int *p = ord->perm;
#pragma omp parallel for schedule(static) if (bsr_par_worth((int64_t)ord->n * b * X->k)) num_threads(bsr_team_size())
    for (int i = 0; i < ord->n; i++) {
        if (inverse) memcpy(y + (size_t)p[i] * rs, x + (size_t)i * rs, rs);
        else memcpy(y + (size_t)i * rs, x + (size_t)p[i] * rs, rs);
    }
    Y->where = BSR_ON_HOST;
    return BSR_OK;
}

/* Y = P X: Y row block i = X row block perm[i]. */
bsr_status bsr_permute_vec(const bsr_ordering *ord, int b, const bsr_multivec *X, bsr_multivec *Y)
{
    return permute_vec("bsr_permute_vec", ord, b, X, Y, 0);
}

/* Y = P^T X: Y row block perm[i] = X row block i. */
bsr_status bsr_permute_vec_inv(const bsr_ordering *ord, int b, const bsr_multivec *X,
                               bsr_multivec *Y)
{
    return permute_vec("bsr_permute_vec_inv", ord, b, X, Y, 1);
}
