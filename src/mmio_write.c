/* SPDX-License-Identifier: BSD-3-Clause */
/* Matrix Market writers: CSR and BSR as `coordinate real general` (or
 * pattern), dense column-major arrays as `array real general`.  Values are
 * printed with %.17g so that reading them back gives the same bits.
 * Non-finite values are refused: the reader rejects them. */
#include "internal.h"
#include <errno.h>
#include <math.h>
#include <string.h>

typedef struct { FILE *f; char *buf; const char *path; } mm_writer;

/* Open path for writing with a large buffer; BSR_ERR_IO naming it otherwise. */
static bsr_status wr_open(mm_writer *w, const char *path)
{
    w->path = path;
    w->f = fopen(path, "wb");
    if (!w->f) return bsr_error(BSR_ERR_IO, "%s: cannot open for writing: %s", path, strerror(errno));
    w->buf = malloc((size_t)1 << 20); /* a big buffer: fprintf per entry is the cost */
    if (w->buf) setvbuf(w->f, w->buf, _IOFBF, (size_t)1 << 20);
    return BSR_OK;
}

/* Close; st is the status so far.  A failed write (full disk) is reported
 * here since stdio only tells at flush time. */
static bsr_status wr_close(mm_writer *w, bsr_status st)
{
    int bad = ferror(w->f);
    int err = errno;
    if (fclose(w->f)) { bad = 1; err = errno; }
    free(w->buf);
    if (!st && bad) st = bsr_error(BSR_ERR_IO, "%s: write failed: %s", w->path, strerror(err));
    if (st) remove(w->path); /* no half-written file left behind */
    return st;
}

/* Write C as coordinate real general, values with %.17g (exact round trip). */
bsr_status bsr_mm_write_csr(const char *path, const bsr_csr *C)
{
    BSR_CHECK_ARG(path && C && C->rowptr && (C->colind || C->nnz == 0), "bsr_mm_write_csr: NULL argument");
    BSR_CHECK_ARG(C->nrows >= 0 && C->ncols >= 0 && C->rowptr[0] == 0 && C->rowptr[C->nrows] == C->nnz,
                  "bsr_mm_write_csr: %s: inconsistent CSR (rowptr[0] = %lld, rowptr[n] = %lld, nnz = %lld)", path,
                  (long long)C->rowptr[0], (long long)C->rowptr[C->nrows], (long long)C->nnz);
    for (int64_t q = 0; C->val && q < C->nnz; q++)
        if (!isfinite(C->val[q])) return bsr_error(BSR_ERR_VALUE, "bsr_mm_write_csr: %s: value %lld is not finite", path, (long long)q);
    mm_writer w;
    BSR_TRY(wr_open(&w, path));
    bsr_status st = BSR_OK;
    fprintf(w.f, "%%%%MatrixMarket matrix coordinate %s general\n%d %d %lld\n", C->val ? "real" : "pattern",
            C->nrows, C->ncols, (long long)C->nnz);
    for (int i = 0; i < C->nrows && !st; i++) {
        if (C->rowptr[i + 1] < C->rowptr[i]) {
            st = bsr_error(BSR_ERR_STRUCTURE, "bsr_mm_write_csr: %s: rowptr decreases at row %d", path, i);
            break;
        }
        for (int64_t q = C->rowptr[i]; q < C->rowptr[i + 1]; q++) {
            if (C->colind[q] < 0 || C->colind[q] >= C->ncols) {
                st = bsr_error(BSR_ERR_STRUCTURE, "bsr_mm_write_csr: %s: column %d of row %d out of range", path,
                               C->colind[q], i);
                break;
            }
            if (C->val) fprintf(w.f, "%d %d %.17g\n", i + 1, C->colind[q] + 1, C->val[q]);
            else fprintf(w.f, "%d %d\n", i + 1, C->colind[q] + 1);
        }
    }
    return wr_close(&w, st);
}

/* Write A (BSR) as a scalar coordinate real general file. */
bsr_status bsr_mm_write(const char *path, const bsr_matrix *A)
{
    BSR_CHECK_ARG(path && A, "bsr_mm_write: NULL argument");
    int b = A->b;
    size_t nv = (size_t)A->nnzb * b * b;
    for (size_t e = 0; e < nv; e++) {
        double v = A->prec == BSR_DOUBLE ? ((const double *)A->val)[e] : ((const float *)A->val)[e];
        if (!isfinite(v)) return bsr_error(BSR_ERR_VALUE, "bsr_mm_write: %s: value %zu is not finite", path, e);
    }
    mm_writer w;
    BSR_TRY(wr_open(&w, path));
    fprintf(w.f, "%%%%MatrixMarket matrix coordinate real general\n%% BSR matrix, block size %d\n%lld %lld %lld\n",
            b, (long long)A->nbrows * b, (long long)A->nbcols * b, (long long)nv);
    /* scalar rows in order; within a row, blocks in column order */
    for (int I = 0; I < A->nbrows; I++)
        for (int r = 0; r < b; r++)
            for (int p = A->rowptr[I]; p < A->rowptr[I + 1]; p++)
                for (int c = 0; c < b; c++) {
                    size_t e = ((size_t)p * b + r) * b + c;
                    double v = A->prec == BSR_DOUBLE ? ((const double *)A->val)[e] : ((const float *)A->val)[e];
                    fprintf(w.f, "%lld %lld %.17g\n", (long long)I * b + r + 1, (long long)A->colind[p] * b + c + 1, v);
                }
    return wr_close(&w, BSR_OK);
}

/* Write a column-major array as array real general. */
bsr_status bsr_mm_write_dense(const char *path, int nrows, int ncols, const double *val)
{
    BSR_CHECK_ARG(path && (val || (int64_t)nrows * ncols == 0), "bsr_mm_write_dense: NULL argument");
    BSR_CHECK_ARG(nrows >= 0 && ncols >= 0, "bsr_mm_write_dense: %s: negative size %d x %d", path, nrows, ncols);
    size_t mn = (size_t)nrows * (size_t)ncols;
    for (size_t q = 0; q < mn; q++)
        if (!isfinite(val[q]))
            return bsr_error(BSR_ERR_VALUE, "bsr_mm_write_dense: %s: value (%zu,%zu) is not finite", path,
                             q % (size_t)nrows + 1, q / (size_t)nrows + 1);
    mm_writer w;
    BSR_TRY(wr_open(&w, path));
    fprintf(w.f, "%%%%MatrixMarket matrix array real general\n%d %d\n", nrows, ncols);
    for (size_t q = 0; q < mn; q++) fprintf(w.f, "%.17g\n", val[q]);
    return wr_close(&w, BSR_OK);
}
