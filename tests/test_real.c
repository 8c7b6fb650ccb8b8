/* SPDX-License-Identifier: BSD-3-Clause */
/* Real matrices: read every *.mtx in $BSR_REAL_DIR, convert to BSR with the
 * automatic block size, check the conversion against the scalar CSR, and
 * run SpMM S1 vs OpenMP (bit for bit).  Skips (77) when the folder is absent. */
#include "harness.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

static char **paths;
static int npaths;

/* Dense array files (right-hand sides) are read as such; matrices as CSR. */
static void test_read_all(void)
{
    for (int f = 0; f < npaths; f++) {
        const char *p = paths[f];
        bsr_csr C;
        bsr_status s = bsr_mm_read_csr(p, &C);
        if (s != BSR_OK) printf("\n  %s: %s: %s", p, bsr_status_string(s), bsr_last_error());
        CU_ASSERT_EQUAL(s, BSR_OK);
        if (s) continue;
        if (C.nrows != C.ncols) {
            printf("\n  %s: %d x %d, not square: BSR checks skipped", p, C.nrows, C.ncols);
            bsr_csr_free(&C);
            continue;
        }
        bsr_matrix *A;
        bsr_convert_info info;
        BSR_ASSERT_OK(bsr_from_csr(&C, 0, 0, BSR_DOUBLE, &A, &info));
        CU_ASSERT(info.fill_ratio <= 1.5);
        printf("\n  %s: n %d, b %d, nnz %lld, nnzb %d, fill %.3f", strrchr(p, '/') + 1, C.nrows, info.b,
               (long long)C.nnz, bsr_matrix_nnzb(A), info.fill_ratio);
        /* BSR holds exactly the scalar entries (zeros inside blocks aside) */
        bsr_csr D;
        BSR_ASSERT_OK(bsr_to_csr(A, 0, &D));
        int64_t nz = 0;
        for (int64_t q = 0; q < C.nnz; q++) nz += !C.val || C.val[q] != 0;
        CU_ASSERT_EQUAL(D.nnz, nz);
        bsr_csr_free(&D);
        /* bsr_mm_read gives the same matrix */
        bsr_matrix *B;
        BSR_ASSERT_OK(bsr_mm_read(p, 0, BSR_DOUBLE, &B, NULL));
        CU_ASSERT_EQUAL(bsr_matrix_nnzb(B), bsr_matrix_nnzb(A));
        CU_ASSERT_EQUAL(memcmp(bsr_matrix_values(A), bsr_matrix_values(B),
                               sizeof(double) * bsr_matrix_nnzb(A) * info.b * info.b), 0);
        bsr_matrix_destroy(B);
        /* SpMM: S1 and OpenMP agree bit for bit, k = 1 and 4 */
        for (int k = 1; k <= 4; k += 3) {
            bsr_multivec *X, *Y1, *Y2;
            BSR_ASSERT_OK(bsr_multivec_create(&X, C.ncols, k, BSR_DOUBLE));
            BSR_ASSERT_OK(bsr_multivec_create(&Y1, C.nrows, k, BSR_DOUBLE));
            BSR_ASSERT_OK(bsr_multivec_create(&Y2, C.nrows, k, BSR_DOUBLE));
            BSR_ASSERT_OK(bsr_multivec_random(X, 42 + k));
            BSR_ASSERT_OK(bsr_multivec_fill(Y1, NAN)); /* poisoned: beta = 0 must overwrite */
            BSR_ASSERT_OK(bsr_multivec_fill(Y2, NAN));
            BSR_ASSERT_OK(bsr_spmm_cpu(BSR_SPMM_S1, 1.0, A, X, 0.0, Y1));
            BSR_ASSERT_OK(bsr_spmm_cpu(BSR_SPMM_OMP, 1.0, A, X, 0.0, Y2));
            CU_ASSERT_EQUAL(memcmp(bsr_multivec_cdata(Y1), bsr_multivec_cdata(Y2), sizeof(double) * C.nrows * k), 0);
            double err = bsr_test_spmm_error(1.0, A, X, 0.0, NULL, Y1);
            CU_ASSERT(err <= 1e-14);
            bsr_multivec_destroy(X); bsr_multivec_destroy(Y1); bsr_multivec_destroy(Y2);
        }
        bsr_matrix_destroy(A);
        bsr_csr_free(&C);
    }
    printf("\n");
}

int main(int argc, char **argv)
{
    const char *dir = bsr_test_real_dir();
    if (!dir[0]) return 77;
    npaths = bsr_test_real_list(&paths, 256);
    if (npaths == 0) { printf("  [skip] no *.mtx in %s\n", dir); return 77; }
    static const bsr_test tests[] = {{"read, convert, SpMM every real matrix", test_read_all}, {NULL, NULL}};
    int rc = bsr_test_main("real", tests, argc, argv);
    bsr_test_free_list(paths, npaths);
    return rc;
}
