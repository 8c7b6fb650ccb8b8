/* SPDX-License-Identifier: BSD-3-Clause */
/* BSR matrix: creation with validation, copy, value replacement, accessors. */
#include "internal.h"
#include <math.h>
#include <string.h>

/* Copy one b x b block from src (row- or column-major) to dst (row-major), converting. */
void bsr_block_copy(void *dst, bsr_precision pd, const void *src, bsr_precision ps, int b,
                    int colmajor)
{
    for (int r = 0; r < b; r++)
        for (int c = 0; c < b; c++) {
            size_t si = colmajor ? (size_t)c * b + r : (size_t)r * b + c, di = (size_t)r * b + c;
            double v = ps == BSR_DOUBLE ? ((const double *)src)[si] : ((const float *)src)[si];
            if (pd == BSR_DOUBLE) ((double *)dst)[di] = v;
            else ((float *)dst)[di] = (float)v;
        }
}

/* Add block src (row-major, precision p) into dst. */
void bsr_block_add(void *dst, const void *src, bsr_precision p, int b)
{
    for (int i = 0; i < b * b; i++) {
        if (p == BSR_DOUBLE) ((double *)dst)[i] += ((const double *)src)[i];
        else ((float *)dst)[i] += ((const float *)src)[i];
    }
}

/* Index of the first non-finite value in val[0..count), or -1. */
int64_t bsr_first_nonfinite(const void *val, bsr_precision p, int64_t count)
{
    for (int64_t i = 0; i < count; i++) {
        double v = p == BSR_DOUBLE ? ((const double *)val)[i] : ((const float *)val)[i];
        if (!isfinite(v)) return i;
    }
    return -1;
}

/* Allocate an empty matrix shell with arrays of the given sizes. */
static bsr_status matrix_alloc(bsr_matrix **A, int nbrows, int nbcols, int b, int nnzb,
                               bsr_precision prec)
{
    bsr_matrix *M = bsr_calloc(1, sizeof *M, "bsr_matrix");
    if (!M) return BSR_ERR_NOMEM;
    M->nbrows = nbrows; M->nbcols = nbcols; M->b = b; M->nnzb = nnzb; M->prec = prec;
    M->rowptr = bsr_malloc(sizeof(int) * ((size_t)nbrows + 1), "BSR rowptr");
    M->colind = bsr_malloc(sizeof(int) * (size_t)nnzb, "BSR colind");
    M->val = bsr_malloc(bsr_precision_size(prec) * (size_t)nnzb * b * b, "BSR values");
    if (!M->rowptr || !M->colind || !M->val) { bsr_matrix_destroy(M); return BSR_ERR_NOMEM; }
    *A = M;
    return BSR_OK;
}

/* Internal: allocate an uninitialised matrix (for modules that build patterns). */
bsr_status bsr_matrix_alloc(bsr_matrix **A, int nbrows, int nbcols, int b, int nnzb,
                            bsr_precision prec)
{
    return matrix_alloc(A, nbrows, nbcols, b, nnzb, prec);
}

/* Stable insertion-sort key order for one row: order[] gets positions sorted by column. */
static void sort_row(const int *col, int *order, int len)
{
    for (int i = 0; i < len; i++) order[i] = i;
    for (int i = 1; i < len; i++) {
        int o = order[i], j = i - 1;
        while (j >= 0 && col[order[j]] > col[o]) { order[j + 1] = order[j]; j--; }
        order[j + 1] = o;
    }
}

/* A = a validated copy of the caller's BSR arrays (rows sorted, duplicates summed or rejected,
 * values finite). */
bsr_status bsr_matrix_create(bsr_matrix **A, int nbrows, int nbcols, int b, const int *rowptr,
                             const int *colind, const void *val, bsr_precision prec,
                             unsigned flags)
{
    BSR_CHECK_ARG(A, "bsr_matrix_create: A is NULL");
    *A = NULL;
    BSR_CHECK_ARG(nbrows >= 0 && nbcols >= 0, "bsr_matrix_create: negative dimensions %d x %d", nbrows, nbcols);
    BSR_CHECK_ARG(b >= 1 && b <= BSR_MAX_BLOCK, "bsr_matrix_create: block size %d out of range 1..%d", b, BSR_MAX_BLOCK);
    BSR_CHECK_ARG(prec == BSR_DOUBLE || prec == BSR_FLOAT, "bsr_matrix_create: bad precision %d", (int)prec);
    BSR_CHECK_ARG(rowptr, "bsr_matrix_create: rowptr is NULL");
    if (rowptr[0] != 0)
        return bsr_error(BSR_ERR_STRUCTURE, "bsr_matrix_create: rowptr[0] = %d, expected 0", rowptr[0]);
    for (int i = 0; i < nbrows; i++)
        if (rowptr[i + 1] < rowptr[i])
            return bsr_error(BSR_ERR_STRUCTURE, "bsr_matrix_create: rowptr not monotone at block row %d (%d > %d)",
                             i, rowptr[i], rowptr[i + 1]);
    int nnzb = rowptr[nbrows];
    BSR_CHECK_ARG(nnzb == 0 || (colind && val), "bsr_matrix_create: colind or val is NULL");
    for (int i = 0; i < nbrows; i++)
        for (int p = rowptr[i]; p < rowptr[i + 1]; p++)
            if (colind[p] < 0 || colind[p] >= nbcols)
                return bsr_error(BSR_ERR_STRUCTURE, "bsr_matrix_create: block (%d,%d) column out of range 0..%d",
                                 i, colind[p], nbcols - 1);
    size_t bb = (size_t)b * b, es = bsr_precision_size(prec);
    if (!(flags & BSR_ALLOW_NONFINITE)) {
        int64_t bad = bsr_first_nonfinite(val, prec, (int64_t)nnzb * (int64_t)bb);
        if (bad >= 0)
            return bsr_error(BSR_ERR_VALUE, "bsr_matrix_create: non-finite value in block %lld (entry %lld)",
                             (long long)(bad / (int64_t)bb), (long long)(bad % (int64_t)bb));
    }
    /* rows sorted already, without duplicates (most callers): a straight copy */
    int sorted = 1;
    for (int i = 0; i < nbrows && sorted; i++)
        for (int p = rowptr[i] + 1; p < rowptr[i + 1]; p++)
            if (colind[p] <= colind[p - 1]) { sorted = 0; break; }
    if (sorted) {
        bsr_matrix *M;
        BSR_TRY(matrix_alloc(&M, nbrows, nbcols, b, nnzb, prec));
        memcpy(M->rowptr, rowptr, sizeof(int) * ((size_t)nbrows + 1));
        if (nnzb) memcpy(M->colind, colind, sizeof(int) * (size_t)nnzb);
        /* the values in stored order (checked finite above) */
        bsr_status st = bsr_matrix_set_values(M, val, (flags & BSR_COLMAJOR_BLOCKS) | BSR_STORED_ORDER |
                                                       BSR_ALLOW_NONFINITE);
        if (st) { bsr_matrix_destroy(M); return st; }
        *A = M;
        return BSR_OK;
    }
    /* first pass: count unique columns per row */
    int maxlen = 0;
    for (int i = 0; i < nbrows; i++)
        if (rowptr[i + 1] - rowptr[i] > maxlen) maxlen = rowptr[i + 1] - rowptr[i];
    int *order = bsr_malloc(sizeof(int) * (size_t)maxlen, "row sort buffer");
    int *newptr = bsr_malloc(sizeof(int) * ((size_t)nbrows + 1), "row pointer");
    if (!order || !newptr) { free(order); free(newptr); return BSR_ERR_NOMEM; }
    newptr[0] = 0;
    int moved = 0; /* a row was sorted or had duplicates summed */
    for (int i = 0; i < nbrows; i++) {
        const int *c = colind + rowptr[i];
        int len = rowptr[i + 1] - rowptr[i], uniq = 0;
        sort_row(c, order, len);
        for (int q = 0; q < len; q++) {
            moved |= order[q] != q;
            if (q > 0 && c[order[q]] == c[order[q - 1]]) {
                if (!(flags & BSR_SUM_DUPLICATES)) {
                    int j = c[order[q]];
                    free(order); free(newptr);
                    return bsr_error(BSR_ERR_STRUCTURE, "bsr_matrix_create: duplicate block (%d,%d)", i, j);
                }
                moved = 1;
                continue;
            }
            uniq++;
        }
        newptr[i + 1] = newptr[i] + uniq;
    }
    bsr_matrix *M;
    bsr_status s = matrix_alloc(&M, nbrows, nbcols, b, newptr[nbrows], prec);
    if (!s && moved) {
        /* set_values takes values in the caller's order: remember where each went */
        M->ngiven = nnzb;
        if (!(M->given = bsr_malloc(sizeof(int) * (size_t)nnzb, "BSR given-order map"))) {
            bsr_matrix_destroy(M);
            s = BSR_ERR_NOMEM;
        }
    }
    if (s) { free(order); free(newptr); return s; }
    memcpy(M->rowptr, newptr, sizeof(int) * ((size_t)nbrows + 1));
    for (int i = 0; i < nbrows; i++) {
        const int *c = colind + rowptr[i];
        int len = rowptr[i + 1] - rowptr[i], out = M->rowptr[i] - 1;
        sort_row(c, order, len);
        for (int q = 0; q < len; q++) {
            const void *src = (const char *)val + ((size_t)rowptr[i] + order[q]) * bb * es;
            if (q > 0 && c[order[q]] == c[order[q - 1]]) {
                char tmp[BSR_MAX_BLOCK * BSR_MAX_BLOCK * sizeof(double)];
                bsr_block_copy(tmp, prec, src, prec, b, flags & BSR_COLMAJOR_BLOCKS);
                bsr_block_add((char *)M->val + (size_t)out * bb * es, tmp, prec, b);
            } else {
                out++;
                M->colind[out] = c[order[q]];
                bsr_block_copy((char *)M->val + (size_t)out * bb * es, prec, src, prec, b,
                           flags & BSR_COLMAJOR_BLOCKS);
            }
            if (M->given) M->given[rowptr[i] + order[q]] = out;
        }
    }
    free(order); free(newptr);
    *A = M;
    return BSR_OK;
}

/* Free A and its host/device arrays (NULL-safe). */
void bsr_matrix_destroy(bsr_matrix *A)
{
    if (!A) return;
    if (A->dev) bsr_cuda_matrix_release(A);
    free(A->rowptr); free(A->colind); free(A->val); free(A->given); free(A);
}

/* B = A converted to precision prec. */
bsr_status bsr_matrix_copy(const bsr_matrix *A, bsr_precision prec, bsr_matrix **B)
{
    BSR_CHECK_ARG(A && B, "bsr_matrix_copy: NULL argument");
    bsr_matrix *M;
    BSR_TRY(matrix_alloc(&M, A->nbrows, A->nbcols, A->b, A->nnzb, prec));
    memcpy(M->rowptr, A->rowptr, sizeof(int) * ((size_t)A->nbrows + 1));
    memcpy(M->colind, A->colind, sizeof(int) * (size_t)A->nnzb);
    size_t cnt = (size_t)A->nnzb * A->b * A->b;
    if (prec == A->prec) memcpy(M->val, A->val, cnt * bsr_precision_size(prec));
    else if (prec == BSR_FLOAT)
        for (size_t i = 0; i < cnt; i++) ((float *)M->val)[i] = (float)((const double *)A->val)[i];
    else
        for (size_t i = 0; i < cnt; i++) ((double *)M->val)[i] = ((const float *)A->val)[i];
    *B = M;
    return BSR_OK;
}

/* Replace A's values on the same pattern (flags: column-major input blocks, non-finite
 * allowed, stored order).  Values come in the order of the arrays given at
 * creation, mapped to where creation put them (sorted rows; duplicates
 * summed into one block again). */
bsr_status bsr_matrix_set_values(bsr_matrix *A, const void *val, unsigned flags)
{
    BSR_CHECK_ARG(A && (val || A->nnzb == 0), "bsr_matrix_set_values: NULL argument");
    size_t bb = (size_t)A->b * A->b, es = bsr_precision_size(A->prec);
    const int *map = flags & BSR_STORED_ORDER ? NULL : A->given;
    int64_t nin = map ? A->ngiven : A->nnzb;
    if (!(flags & BSR_ALLOW_NONFINITE)) {
        int64_t bad = bsr_first_nonfinite(val, A->prec, nin * (int64_t)bb);
        if (bad >= 0)
            return bsr_error(BSR_ERR_VALUE, "bsr_matrix_set_values: non-finite value in block %lld",
                             (long long)(bad / (int64_t)bb));
    }
    if (map) {
        const int sum = nin > A->nnzb, cm = flags & BSR_COLMAJOR_BLOCKS; /* duplicates were summed */
        if (sum) memset(A->val, 0, (size_t)A->nnzb * bb * es);
        const size_t bs = bb * es;
        if (!sum && (A->b == 1 || !cm)) {   /* each block a plain copy (b = 1: one entry) */
            char *dv = A->val;
            const char *sv = val;
            if (bs == sizeof(double))
                for (int64_t q = 0; q < nin; q++) memcpy(dv + (size_t)map[q] * 8, sv + (size_t)q * 8, 8);
            else
                for (int64_t q = 0; q < nin; q++) memcpy(dv + (size_t)map[q] * bs, sv + (size_t)q * bs, bs);
            A->dev_stale = 1;
            return BSR_OK;
        }
        double tmp[BSR_MAX_BLOCK * BSR_MAX_BLOCK]; /* room for a block of either precision */
        for (int64_t q = 0; q < nin; q++) {
            const char *src = (const char *)val + (size_t)q * bb * es;
            char *dst = (char *)A->val + (size_t)map[q] * bb * es;
            if (sum) {
                bsr_block_copy(tmp, A->prec, src, A->prec, A->b, cm);
                bsr_block_add(dst, tmp, A->prec, A->b);
            } else {
                bsr_block_copy(dst, A->prec, src, A->prec, A->b, cm);
            }
        }
    } else if ((flags & BSR_COLMAJOR_BLOCKS) && A->b > 1)   /* (b = 1: the same either way) */
        for (int p = 0; p < A->nnzb; p++)
            bsr_block_copy((char *)A->val + p * bb * es, A->prec, (const char *)val + p * bb * es, A->prec, A->b, 1);
    else if (A->nnzb)
        memcpy(A->val, val, (size_t)A->nnzb * bb * es);
    A->dev_stale = 1;
    return BSR_OK;
}

/* Read-only accessors of a matrix (0/NULL for a NULL matrix). */
int bsr_matrix_nbrows(const bsr_matrix *A) { return A ? A->nbrows : 0; }
int bsr_matrix_nbcols(const bsr_matrix *A) { return A ? A->nbcols : 0; }
int bsr_matrix_block(const bsr_matrix *A) { return A ? A->b : 0; }
int bsr_matrix_nnzb(const bsr_matrix *A) { return A ? A->nnzb : 0; }
bsr_precision bsr_matrix_precision(const bsr_matrix *A) { return A ? A->prec : BSR_DOUBLE; }
const int *bsr_matrix_rowptr(const bsr_matrix *A) { return A ? A->rowptr : NULL; }
const int *bsr_matrix_colind(const bsr_matrix *A) { return A ? A->colind : NULL; }
const void *bsr_matrix_values(const bsr_matrix *A) { return A ? A->val : NULL; }

/* Value (r,c) of block p as double. */
static double entry(const bsr_matrix *A, int p, int r, int c)
{
    size_t i = ((size_t)p * A->b + r) * A->b + c;
    return A->prec == BSR_DOUBLE ? ((const double *)A->val)[i] : ((const float *)A->val)[i];
}

/* Position of block (i,j) in A, or -1 (binary search: rows are sorted). */
int bsr_matrix_find(const bsr_matrix *A, int i, int j)
{
    int lo = A->rowptr[i], hi = A->rowptr[i + 1] - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        if (A->colind[mid] == j) return mid;
        if (A->colind[mid] < j) lo = mid + 1; else hi = mid - 1;
    }
    return -1;
}

/* Nonzero when the pattern (ap, ac), rows sorted, is structurally symmetric. */
int bsr_pattern_symmetric(int n, const int *ap, const int *ac)
{
    int sym = 1;
    #pragma omp parallel for schedule(static) reduction(&& : sym) num_threads(bsr_team(n, BSR_ROW_GRAIN))
    for (int i = 0; i < n; i++) {
        for (int p = ap[i]; p < ap[i + 1] && sym; p++) {
            const int j = ac[p];
            int lo = ap[j], hi = ap[j + 1] - 1, found = 0;
            while (lo <= hi && !found) {   /* (j, i) in row j */
                const int m = lo + (hi - lo) / 2;
                if (ac[m] == i) found = 1;
                else if (ac[m] < i) lo = m + 1;
                else hi = m - 1;
            }
            sym = found;
        }
    }
    return sym;
}

/* Statistics of A: sizes, fill ratio, symmetry, diagonal dominance, empty rows, row lengths. */
bsr_status bsr_matrix_get_info(const bsr_matrix *A, bsr_matrix_info *f)
{
    BSR_CHECK_ARG(A && f, "bsr_matrix_get_info: NULL argument");
    memset(f, 0, sizeof *f);
    int b = A->b;
    f->b = b; f->nbrows = A->nbrows; f->nnzb = A->nnzb;
    f->n = (int64_t)A->nbrows * b;
    f->nnz_stored = (int64_t)A->nnzb * b * b;
    f->structurally_symmetric = f->numerically_symmetric = A->nbrows == A->nbcols;
    f->min_row_len = A->nbrows ? 1e300 : 0;
    for (int i = 0; i < A->nbrows; i++) {
        int len = A->rowptr[i + 1] - A->rowptr[i], hasdiag = 0;
        if (len == 0) f->empty_rows++;
        if (len < f->min_row_len) f->min_row_len = len;
        if (len > f->max_row_len) f->max_row_len = len;
        double offs[BSR_MAX_BLOCK] = {0}, diag[BSR_MAX_BLOCK] = {0};
        for (int p = A->rowptr[i]; p < A->rowptr[i + 1]; p++) {
            int j = A->colind[p];
            if (j == i) hasdiag = 1;
            int q = A->nbrows == A->nbcols ? bsr_matrix_find(A, j, i) : -1;
            if (q < 0) f->structurally_symmetric = f->numerically_symmetric = 0;
            for (int r = 0; r < b; r++)
                for (int c = 0; c < b; c++) {
                    double v = entry(A, p, r, c);
                    if (v != 0) f->nnz_nonzero++;
                    if (q >= 0 && v != entry(A, q, c, r)) f->numerically_symmetric = 0;
                    if (j == i && r == c) diag[r] = fabs(v); else offs[r] += fabs(v);
                }
        }
        if (!hasdiag) f->missing_diag++;
        for (int r = 0; r < b; r++)
            if (diag[r] >= offs[r] && diag[r] > 0) f->diag_dominant_rows++;
    }
    f->mean_row_len = A->nbrows ? (double)A->nnzb / A->nbrows : 0;
    f->fill_ratio = f->nnz_nonzero ? (double)f->nnz_stored / f->nnz_nonzero : 1.0;
    return BSR_OK;
}
