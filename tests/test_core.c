/* SPDX-License-Identifier: BSD-3-Clause */
/* Core: matrix validation, CSR <-> BSR, block-size detection, multivectors, CPU SpMM. */
#include "harness.h"
#include "internal.h"
#include <limits.h>
#include <omp.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Test: matrix create validates and sorts. */
static void test_create_validates(void)
{
    bsr_matrix *A = NULL;
    double v[4 * 4] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
    int rp[] = {0, 2, 3}, ci_unsorted[] = {1, 0, 1};
    /* unsorted input is sorted, blocks travel with their columns */
    BSR_ASSERT_OK(bsr_matrix_create(&A, 2, 2, 2, rp, ci_unsorted, v, BSR_DOUBLE, 0));
    CU_ASSERT_EQUAL(bsr_matrix_colind(A)[0], 0);
    CU_ASSERT_EQUAL(((const double *)bsr_matrix_values(A))[0], 5.0);
    bsr_matrix_destroy(A);
    /* column-major input blocks are transposed into row-major */
    BSR_ASSERT_OK(bsr_matrix_create(&A, 2, 2, 2, rp, ci_unsorted, v, BSR_DOUBLE, BSR_COLMAJOR_BLOCKS));
    CU_ASSERT_EQUAL(((const double *)bsr_matrix_values(A))[1], 7.0);
    /* sorted input (copied straight): A's own arrays give A again, and
     * read as column-major, A's blocks transposed */
    bsr_matrix *C = NULL;
    const double *av = bsr_matrix_values(A);
    BSR_ASSERT_OK(bsr_matrix_create(&C, 2, 2, 2, bsr_matrix_rowptr(A), bsr_matrix_colind(A), av, BSR_DOUBLE, 0));
    CU_ASSERT_PTR_NULL(C->given);
    CU_ASSERT(!memcmp(bsr_matrix_colind(C), bsr_matrix_colind(A), 3 * sizeof(int)) &&
              !memcmp(bsr_matrix_values(C), av, 12 * sizeof(double)));
    bsr_matrix_destroy(C);
    BSR_ASSERT_OK(bsr_matrix_create(&C, 2, 2, 2, bsr_matrix_rowptr(A), bsr_matrix_colind(A), av, BSR_DOUBLE,
                                    BSR_COLMAJOR_BLOCKS));
    const double *cv = bsr_matrix_values(C);
    int transposed = 1;
    for (int q = 0; q < 3; q++)
        for (int r = 0; r < 2; r++)
            for (int c = 0; c < 2; c++) transposed &= cv[q * 4 + r * 2 + c] == av[q * 4 + c * 2 + r];
    CU_ASSERT(transposed);
    bsr_matrix_destroy(C);
    bsr_matrix_destroy(A);
    /* duplicates: rejected, or summed on request */
    int ci_dup[] = {1, 1, 0};
    CU_ASSERT_EQUAL(bsr_matrix_create(&A, 2, 2, 2, rp, ci_dup, v, BSR_DOUBLE, 0), BSR_ERR_STRUCTURE);
    CU_ASSERT_PTR_NULL(A);
    CU_ASSERT_PTR_NOT_NULL(strstr(bsr_last_error(), "duplicate"));
    BSR_ASSERT_OK(bsr_matrix_create(&A, 2, 2, 2, rp, ci_dup, v, BSR_DOUBLE, BSR_SUM_DUPLICATES));
    CU_ASSERT_EQUAL(bsr_matrix_nnzb(A), 2);
    CU_ASSERT_EQUAL(((const double *)bsr_matrix_values(A))[0], 6.0);
    bsr_matrix_destroy(A);
    /* out-of-range column, non-monotone rowptr, NaN, bad block size */
    int ci_bad[] = {0, 2, 1}, rp_bad[] = {0, 3, 2};
    CU_ASSERT_EQUAL(bsr_matrix_create(&A, 2, 2, 2, rp, ci_bad, v, BSR_DOUBLE, 0), BSR_ERR_STRUCTURE);
    CU_ASSERT_PTR_NOT_NULL(strstr(bsr_last_error(), "out of range"));
    CU_ASSERT_EQUAL(bsr_matrix_create(&A, 2, 2, 2, rp_bad, ci_unsorted, v, BSR_DOUBLE, 0), BSR_ERR_STRUCTURE);
    v[5] = NAN;
    CU_ASSERT_EQUAL(bsr_matrix_create(&A, 2, 2, 2, rp, ci_unsorted, v, BSR_DOUBLE, 0), BSR_ERR_VALUE);
    CU_ASSERT_EQUAL(bsr_matrix_create(&A, 2, 2, 0, rp, ci_unsorted, v, BSR_DOUBLE, 0), BSR_ERR_ARG);
    CU_ASSERT_EQUAL(bsr_matrix_create(&A, 2, 2, 17, rp, ci_unsorted, v, BSR_DOUBLE, 0), BSR_ERR_ARG);
    CU_ASSERT_EQUAL(bsr_matrix_create(NULL, 2, 2, 2, rp, ci_unsorted, v, BSR_DOUBLE, 0), BSR_ERR_ARG);
}

/* Value (r,c) of the block at column j of block row i of A (NAN when absent). */
static double block_entry(const bsr_matrix *A, int i, int j, int r, int c)
{
    int p = bsr_matrix_find(A, i, j), b = bsr_matrix_block(A);
    return p < 0 ? NAN : ((const double *)bsr_matrix_values(A))[((size_t)p * b + r) * b + c];
}

/* Test: set_values takes blocks in the order given at creation, where
 * creation sorted rows or summed duplicates; BSR_STORED_ORDER in A's order. */
static void test_set_values_order(void)
{
    int rp[] = {0, 3, 4}, ci[] = {2, 0, 1, 2}; /* row 0 unsorted */
    double v[4 * 4], w[4 * 4];
    for (int e = 0; e < 16; e++) v[e] = e + 1, w[e] = -(e + 1);
    bsr_matrix *A = NULL;
    BSR_ASSERT_OK(bsr_matrix_create(&A, 2, 3, 2, rp, ci, v, BSR_DOUBLE, 0));
    CU_ASSERT_EQUAL(block_entry(A, 0, 2, 0, 0), 1.0);
    BSR_ASSERT_OK(bsr_matrix_set_values(A, w, 0));
    CU_ASSERT_EQUAL(block_entry(A, 0, 2, 0, 0), -1.0); /* given first: column 2 */
    CU_ASSERT_EQUAL(block_entry(A, 0, 0, 0, 1), -6.0);
    CU_ASSERT_EQUAL(block_entry(A, 0, 1, 1, 1), -12.0);
    CU_ASSERT_EQUAL(block_entry(A, 1, 2, 1, 0), -15.0);
    BSR_ASSERT_OK(bsr_matrix_set_values(A, v, BSR_COLMAJOR_BLOCKS));
    CU_ASSERT_EQUAL(block_entry(A, 0, 2, 0, 1), 3.0);
    CU_ASSERT_EQUAL(block_entry(A, 0, 0, 1, 0), 6.0);
    /* stored order: the blocks as bsr_matrix_colind lists them (0, 1, 2 | 2) */
    BSR_ASSERT_OK(bsr_matrix_set_values(A, w, BSR_STORED_ORDER));
    CU_ASSERT_EQUAL(block_entry(A, 0, 0, 0, 0), -1.0);
    CU_ASSERT_EQUAL(block_entry(A, 0, 2, 0, 0), -9.0);
    /* a non-finite value is found among the given blocks */
    w[15] = NAN;
    CU_ASSERT_EQUAL(bsr_matrix_set_values(A, w, 0), BSR_ERR_VALUE);
    w[15] = -16;
    /* a copy is created from A's stored arrays: stored order */
    bsr_matrix *C = NULL;
    BSR_ASSERT_OK(bsr_matrix_copy(A, BSR_DOUBLE, &C));
    BSR_ASSERT_OK(bsr_matrix_set_values(C, v, 0));
    CU_ASSERT_EQUAL(block_entry(C, 0, 0, 0, 0), 1.0);
    bsr_matrix_destroy(C);
    bsr_matrix_destroy(A);
    /* duplicates summed at creation are summed again by set_values */
    int ci_dup[] = {1, 0, 1, 2};
    BSR_ASSERT_OK(bsr_matrix_create(&A, 2, 3, 2, rp, ci_dup, v, BSR_DOUBLE, BSR_SUM_DUPLICATES));
    CU_ASSERT_EQUAL(bsr_matrix_nnzb(A), 3);
    CU_ASSERT_EQUAL(block_entry(A, 0, 1, 0, 0), 1.0 + 9.0);
    BSR_ASSERT_OK(bsr_matrix_set_values(A, w, 0));
    CU_ASSERT_EQUAL(block_entry(A, 0, 1, 0, 0), -1.0 - 9.0);
    CU_ASSERT_EQUAL(block_entry(A, 0, 0, 1, 1), -8.0);
    CU_ASSERT_EQUAL(block_entry(A, 1, 2, 1, 1), -16.0);
    bsr_matrix_destroy(A);
    /* sorted input: the order is the same either way (no map kept) */
    int ci_sorted[] = {0, 1, 2, 2};
    BSR_ASSERT_OK(bsr_matrix_create(&A, 2, 3, 2, rp, ci_sorted, v, BSR_DOUBLE, 0));
    CU_ASSERT_PTR_NULL(A->given);
    BSR_ASSERT_OK(bsr_matrix_set_values(A, w, 0));
    CU_ASSERT_EQUAL(block_entry(A, 0, 0, 0, 0), -1.0);
    bsr_matrix_destroy(A);
    /* b = 1 (entries copied one by one through the map), double and float */
    const double s1[] = {10, 20, 30, 40};
    const float f1[] = {10, 20, 30, 40}, f2[] = {1, 2, 3, 4};
    BSR_ASSERT_OK(bsr_matrix_create(&A, 2, 3, 1, rp, ci, v, BSR_DOUBLE, 0));
    BSR_ASSERT_OK(bsr_matrix_set_values(A, s1, 0));
    CU_ASSERT_EQUAL(block_entry(A, 0, 2, 0, 0), 10.0);
    CU_ASSERT_EQUAL(block_entry(A, 0, 0, 0, 0), 20.0);
    CU_ASSERT_EQUAL(block_entry(A, 0, 1, 0, 0), 30.0);
    CU_ASSERT_EQUAL(block_entry(A, 1, 2, 0, 0), 40.0);
    bsr_matrix_destroy(A);
    BSR_ASSERT_OK(bsr_matrix_create(&A, 2, 3, 1, rp, ci, f1, BSR_FLOAT, 0));
    BSR_ASSERT_OK(bsr_matrix_set_values(A, f2, 0));
    const float *fa = bsr_matrix_values(A);   /* stored: columns 0, 1, 2 | 2 */
    CU_ASSERT(fa[0] == 2.0f && fa[1] == 3.0f && fa[2] == 1.0f && fa[3] == 4.0f);
    bsr_matrix_destroy(A);
}

/* CSR with known 3x3 block structure and some zeros inside blocks. */
static bsr_csr block_csr(int N, int b, uint64_t seed)
{
    bsr_problem P;
    char spec[64];
    (void)seed;
    snprintf(spec, sizeof spec, "stencil3d:%d:%d", N, b);
    bsr_generate(spec, BSR_DOUBLE, &P);
    bsr_csr C;
    bsr_to_csr(P.A, 0, &C);
    bsr_problem_free(&P);
    return C;
}

/* Test: CSR <-> BSR round trip, block-size detection. */
static void test_csr_roundtrip_and_detect(void)
{
    for (int b = 1; b <= 6; b++) {
        bsr_csr C = block_csr(4, b, 1), C2;
        bsr_matrix *A;
        bsr_convert_info info;
        BSR_ASSERT_OK(bsr_from_csr(&C, 0, 0, BSR_DOUBLE, &A, &info));
        /* detected b is a multiple of the true b: the stencil blocks are dense, so
         * the largest b with no fill is b itself or a multiple it divides into */
        CU_ASSERT_EQUAL(info.b % b, 0);
        bsr_matrix_destroy(A);
        BSR_ASSERT_OK(bsr_from_csr(&C, b, 0, BSR_DOUBLE, &A, &info));
        CU_ASSERT_EQUAL(info.b, b);
        CU_ASSERT_DOUBLE_EQUAL(info.fill_ratio, 1.0, 1e-12);
        BSR_ASSERT_OK(bsr_to_csr(A, 0, &C2));
        CU_ASSERT_EQUAL(C2.nnz, C.nnz);
        CU_ASSERT_EQUAL(memcmp(C2.rowptr, C.rowptr, sizeof(int64_t) * (C.nrows + 1)), 0);
        CU_ASSERT_EQUAL(memcmp(C2.colind, C.colind, sizeof(int) * C.nnz), 0);
        CU_ASSERT_EQUAL(memcmp(C2.val, C.val, sizeof(double) * C.nnz), 0);
        bsr_csr_free(&C2);
        bsr_matrix_destroy(A);
        /* b not dividing n is an error */
        if (b > 1) CU_ASSERT_EQUAL(bsr_from_csr(&C, b + 1 == 7 ? 5 : 7, 0, BSR_DOUBLE, &A, NULL),
                                    (C.nrows % (b + 1 == 7 ? 5 : 7)) ? BSR_ERR_SIZE : BSR_OK);
        if (A && (C.nrows % 7) == 0) bsr_matrix_destroy(A);
        bsr_csr_free(&C);
    }
    /* scalar tridiagonal matrix: no block structure, auto picks b = 1 */
    int n = 12;
    bsr_csr T = {n, n, 0, calloc(n + 1, sizeof(int64_t)), calloc(3 * n, sizeof(int)), calloc(3 * n, sizeof(double))};
    for (int i = 0; i < n; i++) {
        for (int j = i - 1; j <= i + 1; j++)
            if (j >= 0 && j < n) { T.colind[T.nnz] = j; T.val[T.nnz++] = j == i ? 2 : -1; }
        T.rowptr[i + 1] = T.nnz;
    }
    bsr_matrix *A;
    bsr_convert_info info;
    BSR_ASSERT_OK(bsr_from_csr(&T, 0, 1.2, BSR_DOUBLE, &A, &info));
    CU_ASSERT_EQUAL(info.b, 1);
    bsr_matrix_destroy(A);
    BSR_ASSERT_OK(bsr_from_csr(&T, 3, 0, BSR_DOUBLE, &A, &info));
    CU_ASSERT(info.fill_ratio > 1.5); /* zeros fill partial blocks and the ratio says so */
    bsr_matrix_destroy(A);
    bsr_csr_free(&T);
}

/* Auto block size on random block matrices with N = 60 block rows (n = 60 b
 * has many divisors in 1..10): the true b is found exactly, also with 10% of
 * the entries inside blocks zeroed (dropped by the CSR), and the reported
 * fill ratio is the exact stored/nonzero ratio. */
static void test_detect_random(void)
{
    for (int b = 1; b <= 10; b++) {
        bsr_matrix *R = bsr_test_random_matrix(60, 60, b, 1, 4, BSR_DOUBLE, 500 + b);
        CU_ASSERT_PTR_NOT_NULL_FATAL(R);
        int64_t nv = (int64_t)bsr_matrix_nnzb(R) * b * b;
        double *v = malloc(sizeof(double) * (size_t)nv);
        memcpy(v, bsr_matrix_values(R), sizeof(double) * (size_t)nv);
        for (int64_t e = 0; e < nv; e += 10) if (b > 1) v[e] = 0; /* zeros inside blocks */
        BSR_ASSERT_OK(bsr_matrix_set_values(R, v, BSR_STORED_ORDER)); /* R's rows were given unsorted */
        free(v);
        bsr_csr C;
        BSR_ASSERT_OK(bsr_to_csr(R, 0, &C));
        bsr_matrix *A = NULL;
        bsr_convert_info info;
        BSR_ASSERT_OK(bsr_from_csr(&C, 0, 0, BSR_DOUBLE, &A, &info));
        CU_ASSERT_EQUAL(info.b, b);
        if (info.b != b) printf("\n  true b=%d detected %d (fill %.3f)", b, info.b, info.fill_ratio);
        CU_ASSERT_EQUAL(bsr_matrix_nnzb(A), bsr_matrix_nnzb(R));
        CU_ASSERT_DOUBLE_EQUAL(info.fill_ratio, (double)nv / (double)C.nnz, 1e-12);
        bsr_csr_free(&C);
        bsr_matrix_destroy(A);
        bsr_matrix_destroy(R);
    }
}

/* Test: multivector ops. */
static void test_multivec_ops(void)
{
    bsr_multivec *X, *Y;
    int64_t n = 10007;
    int k = 3;
    BSR_ASSERT_OK(bsr_multivec_create(&X, n, k, BSR_DOUBLE));
    BSR_ASSERT_OK(bsr_multivec_create(&Y, n, k, BSR_DOUBLE));
    double *cm = malloc(sizeof(double) * n * k), *back = malloc(sizeof(double) * n * k);
    for (int64_t e = 0; e < n * k; e++) cm[e] = (double)(e % 97) - 40.0;
    BSR_ASSERT_OK(bsr_multivec_from_colmajor(X, cm, n));
    BSR_ASSERT_OK(bsr_multivec_to_colmajor(X, back, n));
    CU_ASSERT_EQUAL(memcmp(cm, back, sizeof(double) * n * k), 0);
    CU_ASSERT_EQUAL(((double *)bsr_multivec_data(X))[1], cm[n]); /* row-interleaved */
    double dot[3], nrm[3], ref[3] = {0, 0, 0}, alpha[3] = {2, -1, 0.5};
    for (int j = 0; j < k; j++)
        for (int64_t i = 0; i < n; i++) ref[j] += cm[j * n + i] * cm[j * n + i];
    BSR_ASSERT_OK(bsr_multivec_dot(X, X, dot));
    BSR_ASSERT_OK(bsr_multivec_norm2(X, nrm));
    for (int j = 0; j < k; j++) {
        CU_ASSERT_DOUBLE_EQUAL(dot[j], ref[j], 1e-9 * ref[j]);
        CU_ASSERT_DOUBLE_EQUAL(nrm[j], sqrt(ref[j]), 1e-9 * sqrt(ref[j]));
    }
    BSR_ASSERT_OK(bsr_multivec_copy(Y, X));
    BSR_ASSERT_OK(bsr_multivec_axpy(Y, alpha, X)); /* Y = (1+alpha) X */
    BSR_ASSERT_OK(bsr_multivec_scale(X, (const double[3]){3, 0, 1.5}));
    BSR_ASSERT_OK(bsr_multivec_to_colmajor(Y, back, n));
    for (int j = 0; j < k; j++) CU_ASSERT_EQUAL(back[j * n + 5], (1 + alpha[j]) * cm[j * n + 5]);
    BSR_ASSERT_OK(bsr_multivec_to_colmajor(X, back, n));
    const double sc[3] = {3, 0, 1.5};
    for (int j = 0; j < k; j++) CU_ASSERT_EQUAL(back[j * n + 5], sc[j] * cm[j * n + 5]);
    BSR_ASSERT_OK(bsr_multivec_fill(X, 0.25));
    CU_ASSERT_EQUAL(((double *)bsr_multivec_data(X))[n * k - 1], 0.25);
    /* deterministic dot: same answer every call */
    BSR_ASSERT_OK(bsr_multivec_random(X, 7));
    double d1[3], d2[3];
    bsr_multivec_dot(X, Y, d1);
    bsr_multivec_dot(X, Y, d2);
    CU_ASSERT_EQUAL(memcmp(d1, d2, sizeof d1), 0);
    /* shape mismatch */
    bsr_multivec *Z;
    BSR_ASSERT_OK(bsr_multivec_create(&Z, n, 2, BSR_DOUBLE));
    CU_ASSERT_EQUAL(bsr_multivec_axpy(Z, alpha, X), BSR_ERR_SIZE);
    bsr_multivec_destroy(Z);
    CU_ASSERT_EQUAL(bsr_multivec_create(&Z, -1, 2, BSR_DOUBLE), BSR_ERR_ARG);
    CU_ASSERT_PTR_NULL(Z);
    bsr_multivec_destroy(X); bsr_multivec_destroy(Y);
    free(cm); free(back);
}

/* axpy and scale on double multivectors (k = 1 and k = 3, with Y = X
 * aliased): every entry is y + a x (a x) computed in double, bit for bit,
 * whatever loop the library runs. */
static void test_multivec_axpy_bits(void)
{
    const int64_t n = 4099;
    for (int k = 1; k <= 3; k += 2) {
        bsr_multivec *X, *Y;
        BSR_ASSERT_OK(bsr_multivec_create(&X, n, k, BSR_DOUBLE));
        BSR_ASSERT_OK(bsr_multivec_create(&Y, n, k, BSR_DOUBLE));
        BSR_ASSERT_OK(bsr_multivec_random(X, 3));
        BSR_ASSERT_OK(bsr_multivec_random(Y, 4));
        const double alpha[3] = {-0.3, 1.7, 1e-3};
        const double *x = bsr_multivec_cdata(X), *y = bsr_multivec_cdata(Y);
        double *y0 = malloc(sizeof(double) * n * k), *x0 = malloc(sizeof(double) * n * k);
        memcpy(y0, y, sizeof(double) * n * k);
        memcpy(x0, x, sizeof(double) * n * k);
        BSR_ASSERT_OK(bsr_multivec_axpy(Y, alpha, X));
        int bad = 0;
        for (int64_t e = 0; e < n * k; e++) {
            volatile double want = y0[e] + alpha[e % k] * x0[e];
            bad += y[e] != want;
        }
        CU_ASSERT_EQUAL(bad, 0);
        BSR_ASSERT_OK(bsr_multivec_axpy(X, alpha, X));   /* X += alpha X */
        bad = 0;
        for (int64_t e = 0; e < n * k; e++) {
            volatile double want = x0[e] + alpha[e % k] * x0[e];
            bad += x[e] != want;
        }
        CU_ASSERT_EQUAL(bad, 0);
        memcpy(x0, x, sizeof(double) * n * k);
        BSR_ASSERT_OK(bsr_multivec_scale(X, alpha));
        bad = 0;
        for (int64_t e = 0; e < n * k; e++) {
            volatile double want = alpha[e % k] * x0[e];
            bad += x[e] != want;
        }
        CU_ASSERT_EQUAL(bad, 0);
        free(y0);
        free(x0);
        bsr_multivec_destroy(X);
        bsr_multivec_destroy(Y);
    }
}

/* SpMM S1 and OpenMP against the dense reference, b = 1..10, k = 1..16. */
static void spmm_case(bsr_precision prec, int b, int k, double alpha, double beta, uint64_t seed)
{
    int N = 37;
    bsr_matrix *A = bsr_test_random_matrix(N, N + 3, b, 0, 9, prec, seed); /* rows of 0..9 blocks */
    CU_ASSERT_PTR_NOT_NULL_FATAL(A);
    bsr_multivec *X, *Y0, *Y1, *Y2;
    bsr_multivec_create(&X, (int64_t)(N + 3) * b, k, prec);
    bsr_multivec_create(&Y0, (int64_t)N * b, k, prec);
    bsr_multivec_create(&Y1, (int64_t)N * b, k, prec);
    bsr_multivec_create(&Y2, (int64_t)N * b, k, prec);
    bsr_multivec_random(X, seed + 1);
    bsr_multivec_random(Y0, seed + 2);
    if (beta == 0) bsr_multivec_fill(Y1, NAN), bsr_multivec_fill(Y2, NAN); /* must not leak */
    else bsr_multivec_copy(Y1, Y0), bsr_multivec_copy(Y2, Y0);
    BSR_ASSERT_OK(bsr_spmm_cpu(BSR_SPMM_S1, alpha, A, X, beta, Y1));
    BSR_ASSERT_OK(bsr_spmm_cpu(BSR_SPMM_OMP, alpha, A, X, beta, Y2));
    double err = bsr_test_spmm_error(alpha, A, X, beta, Y0, Y1);
    double tol = prec == BSR_DOUBLE ? 1e-14 : 1e-5;
    if (!(err <= tol)) printf("\n  b=%d k=%d err=%g\n", b, k, err);
    CU_ASSERT(err <= tol);
    CU_ASSERT_EQUAL(memcmp(bsr_multivec_data(Y1), bsr_multivec_data(Y2),
                           bsr_precision_size(prec) * (size_t)N * b * k), 0);
    bsr_multivec_destroy(X); bsr_multivec_destroy(Y0); bsr_multivec_destroy(Y1); bsr_multivec_destroy(Y2);
    bsr_matrix_destroy(A);
}

/* Test: SpMM S1/OpenMP vs dense reference, b=1..10, k=1..16. */
static void test_spmm_cpu(void)
{
    uint64_t seed = 100;
    for (int p = 0; p < 2; p++)
        for (int b = 1; b <= 10; b++)
            for (int k = 1; k <= 16; k++)
                spmm_case(p ? BSR_FLOAT : BSR_DOUBLE, b, k, k % 3 ? 1.0 : -0.5, (k % 2) ? 0.0 : 0.75, seed++);
}

/* Test: SpMM argument errors. */
static void test_spmm_errors(void)
{
    bsr_matrix *A = bsr_test_random_matrix(5, 5, 2, 1, 3, BSR_DOUBLE, 9);
    bsr_multivec *X, *Y, *Yf;
    bsr_multivec_create(&X, 10, 2, BSR_DOUBLE);
    bsr_multivec_create(&Y, 8, 2, BSR_DOUBLE);
    bsr_multivec_create(&Yf, 10, 2, BSR_FLOAT);
    CU_ASSERT_EQUAL(bsr_spmm(1, A, X, 0, Y), BSR_ERR_SIZE);
    CU_ASSERT_EQUAL(bsr_spmm(1, A, X, 0, Yf), BSR_ERR_ARG);
    CU_ASSERT_EQUAL(bsr_spmm(1, A, X, 0, X), BSR_ERR_ARG);
    CU_ASSERT_EQUAL(bsr_spmm(1, NULL, X, 0, Y), BSR_ERR_ARG);
    bsr_multivec_destroy(X); bsr_multivec_destroy(Y); bsr_multivec_destroy(Yf);
    bsr_matrix_destroy(A);
}

/* Test: stencil3d generator and matrix info. */
static void test_generator_and_info(void)
{
    bsr_problem P;
    BSR_ASSERT_OK(bsr_generate("stencil3d:5:3", BSR_DOUBLE, &P));
    bsr_matrix_info f;
    BSR_ASSERT_OK(bsr_matrix_get_info(P.A, &f));
    CU_ASSERT_EQUAL(f.nbrows, 125);
    CU_ASSERT_EQUAL(f.nnzb, 125 + 6 * 100);
    CU_ASSERT_EQUAL(f.structurally_symmetric, 1);
    CU_ASSERT_EQUAL(f.numerically_symmetric, 0);
    CU_ASSERT_EQUAL(f.empty_rows, 0);
    CU_ASSERT_EQUAL(f.max_row_len, 7);
    /* rhs = A * xexact exactly as SpMM computes it */
    bsr_multivec *r;
    bsr_multivec_create(&r, 375, 1, BSR_DOUBLE);
    bsr_spmm(1, P.A, P.xexact, 0, r);
    double m1 = -1;
    bsr_multivec_axpy(r, &m1, P.rhs);
    double nr;
    bsr_multivec_norm2(r, &nr);
    CU_ASSERT_EQUAL(nr, 0.0);
    bsr_multivec_destroy(r);
    bsr_problem_free(&P);
    CU_ASSERT_EQUAL(bsr_generate("stencil3d:5:11", BSR_DOUBLE, &P), BSR_ERR_ARG);
    CU_ASSERT_EQUAL(bsr_generate("stencil3d:x", BSR_DOUBLE, &P), BSR_ERR_ARG);
    CU_ASSERT_EQUAL(bsr_generate("nosuch:5", BSR_DOUBLE, &P), BSR_ERR_ARG);
    CU_ASSERT_STRING_EQUAL(bsr_status_string(BSR_ERR_PARSE), "parse error");
}

/* bsr_scan_par (setup2): inclusive prefix sums equal the serial ones below,
 * at and above the parallel threshold, with 1 and 4 threads; the total is
 * exact in 64 bits even past INT_MAX (callers refuse such sizes). */
static void test_scan_par(void)
{
    int nt = omp_get_max_threads();
    const int sizes[] = {0, 1, 7, 2 * BSR_ROW_GRAIN - 1, 2 * BSR_ROW_GRAIN, 3 * BSR_ROW_GRAIN + 5, 100003};
    uint64_t seed = 3;
    for (int s = 0; s < 7; s++) {
        const int n = sizes[s];
        int *in = malloc(sizeof(int) * (n + 1)), *a = malloc(sizeof(int) * (n + 1)), *ref = malloc(sizeof(int) * (n + 1));
        int64_t sum = 0;
        for (int i = 0; i < n; i++) {
            in[i] = (int)(bsr_splitmix64(&seed) % 9);   /* empty rows included */
            ref[i] = (int)(sum += in[i]);
        }
        for (int t = 1; t <= 4; t += 3) {
            omp_set_num_threads(t);
            memcpy(a, in, sizeof(int) * n);
            CU_ASSERT_EQUAL(bsr_scan_par(a, n), sum);
            CU_ASSERT(n == 0 || memcmp(a, ref, sizeof(int) * n) == 0);
        }
        free(in); free(a); free(ref);
    }
    const int n = 2 * BSR_ROW_GRAIN;
    int *big = malloc(sizeof(int) * n);
    for (int i = 0; i < n; i++) big[i] = INT_MAX / 1000;
    CU_ASSERT_EQUAL(bsr_scan_par(big, n), (int64_t)n * (INT_MAX / 1000));
    free(big);
    omp_set_num_threads(nt);
}

/* The VmFlags of the mapping of /proc/self/smaps that holds address a, in
 * flags (empty when not found); 0 when smaps cannot be read. */
static int smaps_flags(uintptr_t a, char *flags, size_t len)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    if (!f) return 0;
    char line[512];
    int in = 0;
    flags[0] = 0;
    while (fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' ')) in = a >= lo && a < hi;
        else if (in && !strncmp(line, "VmFlags:", 8)) {
            snprintf(flags, len, "%s", line + 8);
            break;
        }
    }
    fclose(f);
    return 1;
}

/* Every allocation of BSR_HUGE_MIN bytes or more asks for transparent huge
 * pages on its 2 MB-aligned inside (VmFlags "hg"), through each allocator;
 * skipped where the kernel has no THP or BSR_HUGEPAGES=0 turned it off. */
static void test_huge_pages(void)
{
    const char *e = getenv("BSR_HUGEPAGES");
    FILE *thp = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
    if (!thp || (e && e[0] == '0')) {
        printf("\n  skipped: %s\n", thp ? "BSR_HUGEPAGES=0" : "no transparent huge pages in this kernel");
        if (thp) fclose(thp);
        return;
    }
    fclose(thp);
    const size_t big = BSR_HUGE_MIN + ((size_t)3 << 20) + 123;
    void *p[3] = {bsr_malloc(big, "test"), bsr_calloc(big / 8, 8, "test"), bsr_realloc(NULL, big, "test")};
    for (int i = 0; i < 3; i++) {
        CU_ASSERT_PTR_NOT_NULL_FATAL(p[i]);
        uintptr_t in = ((uintptr_t)p[i] + ((uintptr_t)2 << 20) - 1) & ~(((uintptr_t)2 << 20) - 1);
        char flags[512];
        CU_ASSERT_FATAL(smaps_flags(in, flags, sizeof flags));
        if (!strstr(flags, " hg")) printf("\n  allocator %d: VmFlags:%s", i, flags);
        CU_ASSERT(strstr(flags, " hg") != NULL);
        free(p[i]);
    }
    bsr_mem_advise(NULL, big);   /* nothing to advise: no effect */
    char small[64];
    bsr_mem_advise(small, sizeof small);
}

int main(int argc, char **argv)
{
    static const bsr_test tests[] = {
        {"matrix create validates and sorts", test_create_validates},
        {"set_values in the order given at creation", test_set_values_order},
        {"CSR <-> BSR round trip, block-size detection", test_csr_roundtrip_and_detect},
        {"auto block size on random block matrices", test_detect_random},
        {"multivector ops", test_multivec_ops},
        {"axpy and scale: y + a x per entry, k = 1 and 3, aliased", test_multivec_axpy_bits},
        {"SpMM S1/OpenMP vs dense reference, b=1..10, k=1..16", test_spmm_cpu},
        {"SpMM argument errors", test_spmm_errors},
        {"stencil3d generator and matrix info", test_generator_and_info},
        {"parallel prefix sum (bsr_scan_par)", test_scan_par},
        {"large allocations ask for transparent huge pages", test_huge_pages},
        {NULL, NULL}};
    return bsr_test_main("core", tests, argc, argv);
}
