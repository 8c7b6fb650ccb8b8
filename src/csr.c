/* SPDX-License-Identifier: BSD-3-Clause */
/* Scalar CSR <-> BSR conversion, and automatic block-size detection. */
#include "internal.h"
#include <string.h>

/* Free a CSR matrix's arrays and zero the struct (NULL-safe). */
void bsr_csr_free(bsr_csr *C)
{
    if (!C) return;
    free(C->rowptr); free(C->colind); free(C->val);
    memset(C, 0, sizeof *C);
}

/* qsort comparison of ints, ascending. */
int bsr_cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* Number of b x b blocks touched by C's pattern (C square, n % b == 0); with
 * nz_only, by its nonzero values only (explicitly stored zeros touch nothing).
 * mark[] has n/b entries, all -1 on entry and on exit. */
static int64_t count_blocks(const bsr_csr *C, int b, int nz_only, int *mark)
{
    int64_t nb = 0;
    int N = C->nrows / b;
    for (int I = 0; I < N; I++) {
        for (int r = I * b; r < (I + 1) * b; r++)
            for (int64_t p = C->rowptr[r]; p < C->rowptr[r + 1]; p++) {
                if (nz_only && C->val && C->val[p] == 0) continue;
                int J = C->colind[p] / b;
                if (mark[J] != I) { mark[J] = I; nb++; }
            }
    }
    for (int J = 0; J < N; J++) mark[J] = -1;
    return nb;
}

/* The block size of C.  Where the stored entries tile b x b blocks exactly
 * for some b in 2..BSR_MAX_BLOCK dividing n (the writer stored whole blocks,
 * their zeros included: reservoir Jacobians such as fasp_spe01_b3, 62% stored
 * zeros), the largest such b whose blocks hold at most max_fill times the
 * nonzeros, else the smallest such b.  Otherwise the largest b whose blocks
 * hold at most max_fill times the nonzeros, explicitly stored zeros left out
 * of both counts (a smaller b's whole blocks would look as dense as a larger,
 * wrong b: opm_matr33_b3 is b = 3, not 9); 1 if none does. */
static int detect_block(const bsr_csr *C, double max_fill, int *mark)
{
    int64_t nz = C->nnz;
    if (C->val) {
        nz = 0;
        for (int64_t p = 0; p < C->nnz; p++) nz += C->val[p] != 0;
    }
    int best = 1, exact = 0;
    if (nz == 0) return 1;
    for (int b = 2; b <= BSR_MAX_BLOCK; b++) {
        if (C->nrows % b || C->ncols % b || count_blocks(C, b, 0, mark) * b * b != C->nnz) continue;
        if (!exact) exact = b;
        if ((double)count_blocks(C, b, 1, mark) * b * b / (double)nz <= max_fill) best = b;
    }
    if (exact) return best > 1 ? best : exact;
    for (int b = 2; b <= BSR_MAX_BLOCK; b++) {
        if (C->nrows % b || C->ncols % b) continue;
        double fill = (double)count_blocks(C, b, 1, mark) * b * b / (double)nz;
        if (fill <= max_fill) best = b;
    }
    return best;
}

/* A = C as BSR with block size b (0: detected), partial blocks zero-filled; info gets b and
 * the fill ratio. */
bsr_status bsr_from_csr(const bsr_csr *C, int b, double max_fill, bsr_precision prec,
                        bsr_matrix **A, bsr_convert_info *info)
{
    BSR_CHECK_ARG(C && A, "bsr_from_csr: NULL argument");
    *A = NULL;
    BSR_CHECK_ARG(b >= 0 && b <= BSR_MAX_BLOCK, "bsr_from_csr: block size %d out of range 0..%d", b, BSR_MAX_BLOCK);
    if (max_fill <= 0) max_fill = 1.5;
    int maxdim = C->nrows > C->ncols ? C->nrows : C->ncols;
    int *mark = bsr_malloc(sizeof(int) * ((size_t)maxdim + 1), "block marks");
    if (!mark) return BSR_ERR_NOMEM;
    for (int i = 0; i <= maxdim; i++) mark[i] = -1;
    if (b == 0) b = detect_block(C, max_fill, mark);
    if (C->nrows % b || C->ncols % b) {
        free(mark);
        return bsr_error(BSR_ERR_SIZE, "bsr_from_csr: %d x %d matrix is not divisible into %d x %d blocks",
                         C->nrows, C->ncols, b, b);
    }
    int N = C->nrows / b, M = C->ncols / b;
    int64_t nnzb = count_blocks(C, b, 0, mark);
    if (nnzb > INT32_MAX) { free(mark); return bsr_error(BSR_ERR_UNSUPPORTED, "bsr_from_csr: %lld blocks exceed the 32-bit index range", (long long)nnzb); }
    bsr_matrix *B;
    bsr_status s = bsr_matrix_alloc(&B, N, M, b, (int)nnzb, prec);
    if (s) { free(mark); return s; }
    memset(B->val, 0, bsr_precision_size(prec) * (size_t)nnzb * b * b);
    /* per block row: collect unique block columns (stamp[] marks them), sort,
     * then scatter the scalars; mark[J] = position of block J in row I */
    int *stamp = bsr_malloc(sizeof(int) * ((size_t)M + 1), "block stamps");
    if (!stamp) { free(mark); bsr_matrix_destroy(B); return BSR_ERR_NOMEM; }
    for (int J = 0; J < M; J++) stamp[J] = -1;
    int pos = 0;
    B->rowptr[0] = 0;
    for (int I = 0; I < N; I++) {
        int start = pos;
        for (int r = I * b; r < (I + 1) * b; r++)
            for (int64_t p = C->rowptr[r]; p < C->rowptr[r + 1]; p++) {
                int J = C->colind[p] / b;
                if (stamp[J] != I) { stamp[J] = I; B->colind[pos++] = J; }
            }
        qsort(B->colind + start, (size_t)(pos - start), sizeof(int), bsr_cmp_int);
        B->rowptr[I + 1] = pos;
        for (int q = start; q < pos; q++) mark[B->colind[q]] = q;
        for (int r = I * b; r < (I + 1) * b; r++)
            for (int64_t p = C->rowptr[r]; p < C->rowptr[r + 1]; p++) {
                int J = C->colind[p] / b;
                size_t e = ((size_t)mark[J] * b + (r - I * b)) * b + (C->colind[p] - J * b);
                double v = C->val ? C->val[p] : 1.0;
                if (prec == BSR_DOUBLE) ((double *)B->val)[e] += v;
                else ((float *)B->val)[e] += (float)v;
            }
    }
    free(stamp);
    free(mark);
    if (info) { info->b = b; info->fill_ratio = C->nnz ? (double)nnzb * b * b / (double)C->nnz : 1.0; }
    *A = B;
    return BSR_OK;
}

/* C = A as scalar CSR, rows sorted; zeros inside blocks dropped unless keep_zeros. */
bsr_status bsr_to_csr(const bsr_matrix *A, int keep_zeros, bsr_csr *C)
{
    BSR_CHECK_ARG(A && C, "bsr_to_csr: NULL argument");
    memset(C, 0, sizeof *C);
    int b = A->b;
    C->nrows = A->nbrows * b; C->ncols = A->nbcols * b;
    C->rowptr = bsr_malloc(sizeof(int64_t) * ((size_t)C->nrows + 1), "CSR rowptr");
    size_t cap = (size_t)A->nnzb * b * b;
    C->colind = bsr_malloc(sizeof(int) * cap, "CSR colind");
    C->val = bsr_malloc(sizeof(double) * cap, "CSR values");
    if (!C->rowptr || !C->colind || !C->val) { bsr_csr_free(C); return BSR_ERR_NOMEM; }
    int64_t nz = 0;
    C->rowptr[0] = 0;
    for (int I = 0; I < A->nbrows; I++)
        for (int r = 0; r < b; r++) {
            for (int p = A->rowptr[I]; p < A->rowptr[I + 1]; p++)
                for (int c = 0; c < b; c++) {
                    size_t e = ((size_t)p * b + r) * b + c;
                    double v = A->prec == BSR_DOUBLE ? ((const double *)A->val)[e] : ((const float *)A->val)[e];
                    if (v == 0 && !keep_zeros) continue;
                    C->colind[nz] = A->colind[p] * b + c;
                    C->val[nz++] = v;
                }
            C->rowptr[I * b + r + 1] = nz;
        }
    C->nnz = nz;
    return BSR_OK;
}
