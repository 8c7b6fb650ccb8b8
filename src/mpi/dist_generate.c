/* SPDX-License-Identifier: BSD-3-Clause */
/* Generated problems on ranks: the rows [row0, row0 + nrows) of a generator's
 * problem (in place for a row generator, sliced from the whole problem for
 * the others), and a distributed matrix made of equal consecutive ranges. */
#include "dist_impl.h"
#include "gen_rows.h"
#include <limits.h>
#include <string.h>

/* Rows [row0, row0 + nrows) of a multivector of block size b, as one of their own. */
static bsr_status slice_rows(const bsr_multivec *X, int b, int64_t row0, int nrows, bsr_multivec **Y)
{
    *Y = NULL;
    if (!X) return BSR_OK;
    BSR_TRY(bsr_multivec_create(Y, (int64_t)nrows * b, X->k, X->prec));
    size_t row = (size_t)b * X->k * bsr_precision_size(X->prec);
    memcpy((*Y)->data, (const char *)X->data + (size_t)row0 * row, (size_t)nrows * row);
    return BSR_OK;
}

/* The rows of a row generator, in place: the matrix over the window of
 * columns [row0 - reach, row0 + nrows + reach) (clipped), x* on that
 * window, rhs = W x* by the serial product's kernel (the one
 * bsr_problem_make_rhs runs), so that every value is the serial one. */
static bsr_status rows_in_place(const bsr_rowgen *g, const char *spec, bsr_precision prec, bsr_problem_rows *R)
{
    int64_t row0 = R->row0;
    int nrows = R->nrows;
    R->nglobal = g->n;
    R->b = g->b;
    if (row0 + nrows > g->n)
        return bsr_error(BSR_ERR_ARG, "bsr_generate_rows: %s: block rows %lld..%lld outside its %lld", spec,
                         (long long)row0, (long long)(row0 + nrows - 1), (long long)g->n);
    int64_t c0 = row0 - g->reach < 0 ? 0 : row0 - g->reach;
    int64_t c1 = row0 + nrows + g->reach > g->n ? g->n : row0 + nrows + g->reach;
    if (nrows == 0) c0 = c1 = row0;
    if (c1 - c0 > INT_MAX)
        return bsr_error(BSR_ERR_UNSUPPORTED, "bsr_generate_rows: %s: %d block rows read %lld columns, more than "
                         "32-bit indices hold", spec, nrows, (long long)(c1 - c0));
    R->col0 = c0;
    snprintf(R->name, sizeof R->name, "%s", g->name[0] ? g->name : spec);
    bsr_multivec *Xw = NULL;
    bsr_status st = bsr_rowgen_matrix(g, prec, row0, nrows, c0, (int)(c1 - c0), &R->local);
    if (!st) st = bsr_rowgen_exact(g, prec, c0, (int)(c1 - c0), &Xw);
    if (!st) st = bsr_multivec_create(&R->rhs, (int64_t)nrows * g->b, 1, prec);
    if (!st) st = bsr_spmm_cpu(BSR_SPMM_OMP, 1.0, R->local, Xw, 0.0, R->rhs);
    if (!st) st = slice_rows(Xw, g->b, row0 - c0, nrows, &R->xexact);
    bsr_multivec_destroy(Xw);
    return st;
}

/* The rows of a generator without row code of its own: its whole problem
 * built here and the rows copied out (over all its columns: col0 = 0). */
static bsr_status rows_from_whole(const char *spec, bsr_precision prec, bsr_problem_rows *R)
{
    bsr_problem P;
    BSR_TRY(bsr_generate(spec, prec, &P));
    const bsr_matrix *A = P.A;
    int64_t row0 = R->row0;
    int nrows = R->nrows;
    R->nglobal = A->nbrows;
    R->b = A->b;
    snprintf(R->name, sizeof R->name, "%s", P.name);
    bsr_status st = BSR_OK;
    if (row0 + nrows > A->nbrows)
        st = bsr_error(BSR_ERR_ARG, "bsr_generate_rows: %s: block rows %lld..%lld outside its %d", spec,
                       (long long)row0, (long long)(row0 + nrows - 1), A->nbrows);
    int p0 = st ? 0 : A->rowptr[row0], nnz = st ? 0 : A->rowptr[row0 + nrows] - p0;
    size_t bb = (size_t)A->b * A->b * bsr_precision_size(prec);
    if (!st) st = bsr_matrix_alloc(&R->local, nrows, A->nbcols, A->b, nnz, prec);
    if (!st) {
        for (int i = 0; i <= nrows; i++) R->local->rowptr[i] = A->rowptr[row0 + i] - p0;
        memcpy(R->local->colind, A->colind + p0, sizeof(int) * (size_t)nnz);
        memcpy(R->local->val, (const char *)A->val + (size_t)p0 * bb, (size_t)nnz * bb);
        st = slice_rows(P.rhs, A->b, row0, nrows, &R->rhs);
    }
    if (!st) st = slice_rows(P.xexact, A->b, row0, nrows, &R->xexact);
    bsr_problem_free(&P);
    return st;
}

bsr_status bsr_generate_rows(const char *spec, bsr_precision prec, int64_t row0, int nrows, bsr_problem_rows *R)
{
    BSR_CHECK_ARG(spec && R, "bsr_generate_rows: NULL argument");
    memset(R, 0, sizeof *R);
    BSR_CHECK_ARG(prec == BSR_DOUBLE || prec == BSR_FLOAT, "bsr_generate_rows: %s: precision %d is neither "
                  "BSR_DOUBLE nor BSR_FLOAT", spec, (int)prec);
    BSR_CHECK_ARG(row0 >= 0 && nrows >= 0, "bsr_generate_rows: %s: negative row range (%lld, %d rows)", spec,
                  (long long)row0, nrows);
    R->row0 = row0;
    R->nrows = nrows;
    R->prec = prec;
    bsr_rowgen g;
    int found;
    bsr_status st = bsr_rowgen_parse(spec, &g, &found);
    if (!st) st = found ? rows_in_place(&g, spec, prec, R) : rows_from_whole(spec, prec, R);
    bsr_rowgen_free(&g);
    /* the caller's view: global columns, the rows' arrays */
    int64_t nnz = !st ? R->local->rowptr[nrows] : 0;
    if (!st && !(R->colind = bsr_malloc(sizeof(int64_t) * (size_t)(nnz + 1), "generated global columns")))
        st = BSR_ERR_NOMEM;
    if (!st) {
        for (int64_t q = 0; q < nnz; q++) R->colind[q] = R->col0 + R->local->colind[q];
        R->rowptr = R->local->rowptr;
        R->val = R->local->val;
    }
    if (st) bsr_problem_rows_free(R);
    return st;
}

bsr_status bsr_generate_dims(const char *spec, int64_t *nglobal, int *b)
{
    BSR_CHECK_ARG(spec && nglobal && b, "bsr_generate_dims: NULL argument");
    bsr_rowgen g;
    int found;
    BSR_TRY(bsr_rowgen_parse(spec, &g, &found));
    if (found) {
        *nglobal = g.n;
        *b = g.b;
        bsr_rowgen_free(&g);
        return BSR_OK;
    }
    bsr_problem P;
    BSR_TRY(bsr_generate(spec, BSR_DOUBLE, &P));
    *nglobal = P.A->nbrows;
    *b = P.A->b;
    bsr_problem_free(&P);
    return BSR_OK;
}

/* Free what R holds and zero it (NULL-safe). */
void bsr_problem_rows_free(bsr_problem_rows *R)
{
    if (!R) return;
    bsr_matrix_destroy(R->local);
    bsr_multivec_destroy(R->rhs);
    bsr_multivec_destroy(R->xexact);
    free(R->colind);
    memset(R, 0, sizeof *R);
}

bsr_status bsr_dmatrix_generate(bsr_dmatrix **A, bsr_dist *d, const char *spec, bsr_precision prec,
                                bsr_problem_rows *R)
{
    BSR_CHECK_ARG(A && d && R, "bsr_dmatrix_generate: NULL argument");
    *A = NULL;
    memset(R, 0, sizeof *R);
    int64_t n = 0;
    int b = 0;
    /* every rank parses the same spec: a bad one fails everywhere alike */
    bsr_status st = spec ? bsr_generate_dims(spec, &n, &b) : bsr_error(BSR_ERR_ARG, "bsr_dmatrix_generate: NULL spec");
    /* rank r: rows [r n / p, (r + 1) n / p), in 64 bits without overflow */
    int64_t q = n / d->size, rem = n % d->size;
    int64_t row0 = q * d->rank + (d->rank < rem ? d->rank : rem), nrows = q + (d->rank < rem);
    if (!st && nrows > INT_MAX)
        st = bsr_error(BSR_ERR_UNSUPPORTED, "bsr_dmatrix_generate: %s: %lld block rows per rank, more than 32-bit "
                       "indices hold (use more ranks)", spec, (long long)nrows);
    if (!st) st = bsr_generate_rows(spec, prec, row0, (int)nrows, R);
    if ((st = bsr_dist_agree(d, st))) {
        bsr_problem_rows_free(R);
        return st;
    }
    st = bsr_dmatrix_create(A, d, n, R->nrows, R->b, R->rowptr, R->colind, R->val, prec, 0);
    if (st) bsr_problem_rows_free(R);
    return st;
}
