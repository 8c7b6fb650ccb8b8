/* SPDX-License-Identifier: BSD-3-Clause */
/* libFuzzer harness of the Matrix Market matrix reader: bsr_mm_read_csr and
 * bsr_mm_read (to BSR, block size and precision picked from the input's
 * length).  Besides the sanitizers' findings (crash, leak, UB), a matrix
 * that reads must be a well-formed CSR and convert to the same BSR entries:
 * either failing aborts, which libFuzzer reports. */
#include "fuzz_util.h"
#include <bsrsolve.h>
#include <stdio.h>
#include <stdlib.h>

/* Rows and columns accepted from a size line: larger ones are valid input,
 * but their row pointers alone would make every run slow (the reader's own
 * limit is half of physical memory); the cap is the harness's, not the
 * library's. */
#define MAX_DIM 65536

/* Report a broken invariant as a crash. */
static void fail(const char *what)
{
    fprintf(stderr, "fuzz_mmio: %s\n", what);
    abort();
}

/* C's structure is what bsr_csr promises: row pointers ascending from 0 to
 * nnz, columns in range, strictly ascending within each row. */
static void check_csr(const bsr_csr *C)
{
    if (C->nrows < 0 || C->ncols < 0 || C->rowptr[0] != 0 || C->rowptr[C->nrows] != C->nnz) fail("CSR bounds");
    for (int i = 0; i < C->nrows; i++) {
        if (C->rowptr[i + 1] < C->rowptr[i]) fail("CSR row pointers decrease");
        for (int64_t q = C->rowptr[i]; q < C->rowptr[i + 1]; q++)
            if (C->colind[q] < 0 || C->colind[q] >= C->ncols || (q > C->rowptr[i] && C->colind[q] <= C->colind[q - 1]))
                fail("CSR column indices out of range or not ascending");
    }
}

/* The nonzeros of C (explicit zeros dropped) equal D's, entry for entry:
 * D is A's scalar CSR, A read from the same file in double precision. */
static void check_same(const bsr_csr *C, const bsr_csr *D)
{
    if (C->nrows != D->nrows || C->ncols != D->ncols) fail("BSR read: other dimensions than the CSR read");
    for (int i = 0; i < C->nrows; i++) {
        int64_t q = D->rowptr[i];
        for (int64_t p = C->rowptr[i]; p < C->rowptr[i + 1]; p++) {
            double v = C->val ? C->val[p] : 1.0;
            if (v == 0) continue;
            if (q == D->rowptr[i + 1] || D->colind[q] != C->colind[p] || D->val[q] != v)
                fail("BSR read: entries differ from the CSR read");
            q++;
        }
        if (q != D->rowptr[i + 1]) fail("BSR read: more entries than the CSR read");
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int64_t dims[3];
    int nd = fuzz_mm_size_line(data, size, dims);
    if (nd < 0) return 0;
    for (int k = 0; k < nd && k < 2; k++)
        if (dims[k] > MAX_DIM) return 0;
    const char *path = fuzz_file(data, size);

    bsr_csr C;
    int have_csr = bsr_mm_read_csr(path, &C) == BSR_OK;
    if (have_csr) check_csr(&C);

    /* b = 0..10 (0: detected) and the precision from the length: every run
     * of the same input takes the same path */
    int b = (int)(size % 11);
    bsr_precision prec = (size / 11) % 2 ? BSR_FLOAT : BSR_DOUBLE;
    bsr_matrix *A = NULL;
    bsr_convert_info info;
    bsr_status st = bsr_mm_read(path, b, prec, &A, &info);
    if (st == BSR_OK) {
        if (!have_csr) fail("bsr_mm_read accepted what bsr_mm_read_csr refused");
        if (bsr_matrix_nbrows(A) * bsr_matrix_block(A) != C.nrows) fail("BSR read: wrong row count");
        if (prec == BSR_DOUBLE) {
            bsr_csr D;
            if (bsr_to_csr(A, 0, &D) == BSR_OK) {
                check_csr(&D);
                check_same(&C, &D);
                bsr_csr_free(&D);
            }
        }
        bsr_matrix_destroy(A);
    } else if (A) {
        fail("bsr_mm_read failed but left a matrix");
    }
    if (have_csr) bsr_csr_free(&C);
    return 0;
}
