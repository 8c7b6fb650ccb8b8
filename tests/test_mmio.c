/* SPDX-License-Identifier: BSD-3-Clause */
/* Matrix Market I/O: every valid variant, symmetric/skew expansion, pattern,
 * integer, dense arrays, bit-exact round trips (CSR, BSR b = 1..10), each
 * error path with its status and "file:line", and random byte mutations. */
#include "harness.h"
#include "internal.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static char dir[256]; /* temp folder made by main() */

/* Write text to dir/name; returns the path (static buffer per call slot). */
static const char *put(const char *name, const char *text)
{
    static char paths[4][512];
    static int slot;
    return bsr_test_put(dir, name, text, paths[slot++ & 3], sizeof paths[0]);
}

/* C equals the expected CSR (values compared bit for bit; vals NULL = pattern). */
static void expect_csr(const bsr_csr *C, int nrows, int ncols, int nnz, const int64_t *rp, const int *ci,
                       const double *vals)
{
    CU_ASSERT_EQUAL_FATAL(C->nrows, nrows);
    CU_ASSERT_EQUAL_FATAL(C->ncols, ncols);
    CU_ASSERT_EQUAL_FATAL(C->nnz, nnz);
    CU_ASSERT_EQUAL(memcmp(C->rowptr, rp, sizeof(int64_t) * (nrows + 1)), 0);
    CU_ASSERT_EQUAL(memcmp(C->colind, ci, sizeof(int) * nnz), 0);
    if (vals) {
        CU_ASSERT_PTR_NOT_NULL_FATAL(C->val);
        CU_ASSERT_EQUAL(memcmp(C->val, vals, sizeof(double) * nnz), 0);
    } else {
        CU_ASSERT_PTR_NULL(C->val);
    }
}

/* Test: general coordinate. */
static void test_general(void)
{
    /* unsorted, duplicates, comments anywhere, blank lines, CRLF, tabs, mixed-case
     * banner, last line without newline, an explicit zero kept */
    const char *p = put("gen.mtx",
        "%%matrixmarket Matrix COORDINATE Real GENERAL\r\n"
        "% a comment\r\n"
        "\r\n"
        "  3 4\t7 \r\n"
        "3 4 2.5\r\n"
        "1 2 -1e-3\n"
        "%% comment between entries\n"
        "\n"
        "\t1   1\t4\r\n"
        "3 1 0\n"
        "1 2 0.5\n"
        "2 3 +7\n"
        "3 4 0.25");
    bsr_csr C;
    BSR_ASSERT_OK(bsr_mm_read_csr(p, &C));
    int64_t rp[] = {0, 2, 3, 5};
    int ci[] = {0, 1, 2, 0, 3};
    double v[] = {4, -1e-3 + 0.5, 7, 0, 2.75};
    expect_csr(&C, 3, 4, 5, rp, ci, v);
    bsr_csr_free(&C);
    /* the `double` field word (written by some tools) is read as real */
    p = put("dbl.mtx", "%%MatrixMarket matrix coordinate double general\n2 2 1\n2 2 3\n");
    BSR_ASSERT_OK(bsr_mm_read_csr(p, &C));
    CU_ASSERT_EQUAL(C.nnz, 1);
    bsr_csr_free(&C);
    /* an empty matrix is valid */
    p = put("empty.mtx", "%%MatrixMarket matrix coordinate real general\n0 0 0\n");
    BSR_ASSERT_OK(bsr_mm_read_csr(p, &C));
    CU_ASSERT_EQUAL(C.nrows, 0);
    CU_ASSERT_EQUAL(C.nnz, 0);
    bsr_csr_free(&C);
}


/* Random order with many duplicates and long rows (the merge-sort path):
 * the CSR equals a dense accumulation in file order, bit for bit. */
static void test_shuffled(void)
{
    enum { M = 20, N = 300, NZ = 6000 };
    static double ref[M][N];
    static char hit[M][N];
    memset(ref, 0, sizeof ref);
    memset(hit, 0, sizeof hit);
    char path[512];
    snprintf(path, sizeof path, "%s/shuffled.mtx", dir);
    FILE *f = fopen(path, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fprintf(f, "%%%%MatrixMarket matrix coordinate real general\n%d %d %d\n", M, N, NZ);
    uint64_t s = 99;
    for (int k = 0; k < NZ; k++) {
        int i = (int)(bsr_splitmix64(&s) % M), j = (int)(bsr_splitmix64(&s) % N);
        double v = (double)(bsr_splitmix64(&s) >> 11) / 9007199254740992.0 - 0.5;
        fprintf(f, "%d %d %.17g\n", i + 1, j + 1, v);
        ref[i][j] += v;
        hit[i][j] = 1;
    }
    fclose(f);
    bsr_csr C;
    BSR_ASSERT_OK(bsr_mm_read_csr(path, &C));
    int64_t q = 0, bad = 0;
    for (int i = 0; i < M; i++) {
        CU_ASSERT_EQUAL(C.rowptr[i], q);
        for (int j = 0; j < N; j++)
            if (hit[i][j]) {
                bad += q >= C.nnz || C.colind[q] != j || memcmp(&C.val[q], &ref[i][j], sizeof(double));
                q++;
            }
    }
    CU_ASSERT_EQUAL(C.nnz, q);
    CU_ASSERT_EQUAL(bad, 0);
    bsr_csr_free(&C);
}

/* Test: symmetric expansion. */
static void test_symmetric(void)
{
    /* lower triangle given; diagonal not duplicated; duplicate summed before mirroring */
    const char *p = put("sym.mtx",
        "%%MatrixMarket matrix coordinate real symmetric\n"
        "4 4 6\n1 1 4\n2 1 -1\n3 2 -2\n4 4 5\n4 1 3\n3 2 -0.5\n");
    bsr_csr C;
    BSR_ASSERT_OK(bsr_mm_read_csr(p, &C));
    int64_t rp[] = {0, 3, 5, 6, 8};
    int ci[] = {0, 1, 3, 0, 2, 1, 0, 3};
    double v[] = {4, -1, 3, -1, -2.5, -2.5, 3, 5};
    expect_csr(&C, 4, 4, 8, rp, ci, v);
    bsr_csr_free(&C);
    /* integer symmetric */
    p = put("isym.mtx", "%%MatrixMarket matrix coordinate integer symmetric\n2 2 2\n1 1 -3\n2 1 9007199254740993\n");
    BSR_ASSERT_OK(bsr_mm_read_csr(p, &C));
    int64_t rp2[] = {0, 2, 3};
    int ci2[] = {0, 1, 0};
    double v2[] = {-3, 9007199254740992.0, 9007199254740992.0};
    expect_csr(&C, 2, 2, 3, rp2, ci2, v2);
    bsr_csr_free(&C);
}

/* Test: skew-symmetric. */
static void test_skew(void)
{
    const char *p = put("skew.mtx",
        "%%MatrixMarket matrix coordinate real skew-symmetric\n"
        "3 3 3\n2 1 1.5\n3 1 -2\n2 2 0\n");
    bsr_csr C;
    BSR_ASSERT_OK(bsr_mm_read_csr(p, &C));
    int64_t rp[] = {0, 2, 3, 4};
    int ci[] = {1, 2, 0, 0};
    double v[] = {-1.5, 2, 1.5, -2};
    expect_csr(&C, 3, 3, 4, rp, ci, v);
    bsr_csr_free(&C);
}

/* Test: pattern and integer. */
static void test_pattern_integer(void)
{
    const char *p = put("pat.mtx",
        "%%MatrixMarket matrix coordinate pattern general\n3 3 4\n3 1\n1 3\n3 1\n2 2\n");
    bsr_csr C;
    BSR_ASSERT_OK(bsr_mm_read_csr(p, &C));
    int64_t rp[] = {0, 1, 2, 3};
    int ci[] = {2, 1, 0};
    expect_csr(&C, 3, 3, 3, rp, ci, NULL);
    bsr_csr_free(&C);
    p = put("psym.mtx", "%%MatrixMarket matrix coordinate pattern symmetric\n3 3 3\n1 1\n3 1\n3 2\n");
    BSR_ASSERT_OK(bsr_mm_read_csr(p, &C));
    int64_t rp2[] = {0, 2, 3, 5};
    int ci2[] = {0, 2, 2, 0, 1};
    expect_csr(&C, 3, 3, 5, rp2, ci2, NULL);
    bsr_csr_free(&C);
    /* pattern into BSR: ones */
    bsr_matrix *A;
    BSR_ASSERT_OK(bsr_mm_read(p, 1, BSR_DOUBLE, &A, NULL));
    CU_ASSERT_EQUAL(bsr_matrix_nnzb(A), 5);
    CU_ASSERT_EQUAL(((const double *)bsr_matrix_values(A))[4], 1.0);
    bsr_matrix_destroy(A);
    /* pattern written back as pattern */
    BSR_ASSERT_OK(bsr_mm_read_csr(p, &C));
    const char *q = put("psym_out.mtx", "");
    BSR_ASSERT_OK(bsr_mm_write_csr(q, &C));
    bsr_csr D;
    BSR_ASSERT_OK(bsr_mm_read_csr(q, &D));
    expect_csr(&D, 3, 3, 5, rp2, ci2, NULL);
    bsr_csr_free(&C); bsr_csr_free(&D);
    p = put("int.mtx", "%%MatrixMarket matrix coordinate integer general\n2 3 3\n1 3 -12\n2 1 +4\n1 3 2\n");
    BSR_ASSERT_OK(bsr_mm_read_csr(p, &C));
    int64_t rp3[] = {0, 1, 2};
    int ci3[] = {2, 0};
    double v3[] = {-10, 4};
    expect_csr(&C, 2, 3, 2, rp3, ci3, v3);
    bsr_csr_free(&C);
}

/* Test: dense arrays. */
static void test_dense(void)
{
    /* multi-column round trip with awkward values */
    int m = 7, n = 3;
    double a[21];
    for (int q = 0; q < m * n; q++) a[q] = (q % 3 ? 1.0 : -1.0) / (q + 3.0) * pow(10.0, q % 11 - 5);
    a[4] = 0.0; a[5] = -0.0; a[6] = 4.9406564584124654e-324; a[7] = 1.7976931348623157e308;
    const char *p = put("dense.mtx", "");
    BSR_ASSERT_OK(bsr_mm_write_dense(p, m, n, a));
    int mm, nn;
    double *b;
    BSR_ASSERT_OK(bsr_mm_read_dense(p, &mm, &nn, &b));
    CU_ASSERT_EQUAL(mm, m);
    CU_ASSERT_EQUAL(nn, n);
    CU_ASSERT_EQUAL(memcmp(a, b, sizeof a), 0);
    free(b);
    /* array symmetric and skew-symmetric (lower triangle by columns), integer */
    p = put("dsym.mtx", "%%MatrixMarket matrix array real symmetric\n3 3\n1\n2\n3\n4\n5\n6\n");
    BSR_ASSERT_OK(bsr_mm_read_dense(p, &mm, &nn, &b));
    double s[] = {1, 2, 3, 2, 4, 5, 3, 5, 6};
    CU_ASSERT_EQUAL(memcmp(b, s, sizeof s), 0);
    free(b);
    p = put("dskew.mtx", "%%MatrixMarket matrix array integer skew-symmetric\n3 3\n1\n2\n3\n");
    BSR_ASSERT_OK(bsr_mm_read_dense(p, &mm, &nn, &b));
    double k[] = {0, 1, 2, -1, 0, 3, -2, -3, 0};
    CU_ASSERT_EQUAL(memcmp(b, k, sizeof k), 0);
    free(b);
    /* an array file read as CSR keeps its nonzeros */
    bsr_csr C;
    BSR_ASSERT_OK(bsr_mm_read_csr(p, &C));
    int64_t rp[] = {0, 2, 4, 6};
    int ci[] = {1, 2, 0, 2, 0, 1};
    double v[] = {-1, -2, 1, -3, 2, 3};
    expect_csr(&C, 3, 3, 6, rp, ci, v);
    bsr_csr_free(&C);
    /* a coordinate file read as dense (duplicates summed, symmetric expanded) */
    p = put("cdense.mtx", "%%MatrixMarket matrix coordinate real symmetric\n2 2 3\n2 1 1\n2 2 2\n2 1 1\n");
    BSR_ASSERT_OK(bsr_mm_read_dense(p, &mm, &nn, &b));
    double c[] = {0, 2, 2, 2};
    CU_ASSERT_EQUAL(memcmp(b, c, sizeof c), 0);
    free(b);
    /* writers refuse what the reader would refuse */
    a[2] = NAN;
    CU_ASSERT_EQUAL(bsr_mm_write_dense(p, m, n, a), BSR_ERR_VALUE);
}

/* Bit patterns that %.17g must carry through a file. */
static const double awkward[] = {1.0 / 3, -2.0 / 3, 0.1, -0.0, 4.9406564584124654e-324, 2.2250738585072014e-308,
                                 1.7976931348623157e308, -123456789.123456789, 1e-300, 6.02214076e23};

/* Test: CSR round trip bit-exact. */
static void test_roundtrip_csr(void)
{
    bsr_matrix *A = bsr_test_random_matrix(40, 33, 1, 0, 9, BSR_DOUBLE, 7);
    bsr_csr C, D;
    BSR_ASSERT_OK(bsr_to_csr(A, 1, &C));
    for (int64_t q = 0; q < C.nnz && q < 10; q++) C.val[q * 3 % C.nnz] = awkward[q];
    const char *p = put("rt.mtx", "");
    BSR_ASSERT_OK(bsr_mm_write_csr(p, &C));
    BSR_ASSERT_OK(bsr_mm_read_csr(p, &D));
    expect_csr(&D, C.nrows, C.ncols, (int)C.nnz, C.rowptr, C.colind, C.val);
    bsr_csr_free(&C); bsr_csr_free(&D);
    bsr_matrix_destroy(A);
}

/* Same pattern and same bits. */
static void expect_same_bsr(const bsr_matrix *A, const bsr_matrix *B)
{
    int N = bsr_matrix_nbrows(A), b = bsr_matrix_block(A), nnzb = bsr_matrix_nnzb(A);
    CU_ASSERT_EQUAL_FATAL(bsr_matrix_nbrows(B), N);
    CU_ASSERT_EQUAL_FATAL(bsr_matrix_block(B), b);
    CU_ASSERT_EQUAL_FATAL(bsr_matrix_nnzb(B), nnzb);
    CU_ASSERT_EQUAL_FATAL(bsr_matrix_precision(B), bsr_matrix_precision(A));
    CU_ASSERT_EQUAL(memcmp(bsr_matrix_rowptr(A), bsr_matrix_rowptr(B), sizeof(int) * (N + 1)), 0);
    CU_ASSERT_EQUAL(memcmp(bsr_matrix_colind(A), bsr_matrix_colind(B), sizeof(int) * nnzb), 0);
    CU_ASSERT_EQUAL(memcmp(bsr_matrix_values(A), bsr_matrix_values(B),
                           bsr_precision_size(bsr_matrix_precision(A)) * nnzb * b * b), 0);
}

/* Test: BSR round trip b=1..10, auto b. */
static void test_roundtrip_bsr(void)
{
    const char *p = put("rtb.mtx", "");
    for (int b = 1; b <= 10; b++)
        for (int fp = 0; fp < 2; fp++) {
            bsr_precision prec = fp ? BSR_FLOAT : BSR_DOUBLE;
            bsr_matrix *A = bsr_test_random_matrix(13, 13, b, 1, 5, prec, 100 + b), *B;
            BSR_ASSERT_OK(bsr_mm_write(p, A));
            bsr_convert_info info;
            BSR_ASSERT_OK(bsr_mm_read(p, b, prec, &B, &info));
            CU_ASSERT_EQUAL(info.b, b);
            CU_ASSERT_DOUBLE_EQUAL(info.fill_ratio, 1.0, 0);
            expect_same_bsr(A, B);
            bsr_matrix_destroy(B);
            /* auto block size: same scalar entries, fill within the default bound */
            BSR_ASSERT_OK(bsr_mm_read(p, 0, prec, &B, &info));
            CU_ASSERT(info.fill_ratio <= 1.5);
            bsr_csr CA, CB;
            BSR_ASSERT_OK(bsr_to_csr(A, 0, &CA));
            BSR_ASSERT_OK(bsr_to_csr(B, 0, &CB));
            expect_csr(&CB, CA.nrows, CA.ncols, (int)CA.nnz, CA.rowptr, CA.colind, CA.val);
            bsr_csr_free(&CA); bsr_csr_free(&CB);
            bsr_matrix_destroy(A); bsr_matrix_destroy(B);
        }
    /* a known block structure is found again by auto detection; the file spans
     * several 4 MiB read chunks, so lines cut by chunk borders are covered */
    bsr_problem P;
    BSR_ASSERT_OK(bsr_generate("stencil3d:12:4", BSR_DOUBLE, &P));
    BSR_ASSERT_OK(bsr_mm_write(p, P.A));
    bsr_matrix *B;
    bsr_convert_info info;
    BSR_ASSERT_OK(bsr_mm_read(p, 0, BSR_DOUBLE, &B, &info));
    CU_ASSERT_EQUAL(info.b, 4);
    expect_same_bsr(P.A, B);
    bsr_matrix_destroy(B);
    /* n % b != 0 names the file */
    CU_ASSERT_EQUAL(bsr_mm_read(p, 7, BSR_DOUBLE, &B, NULL), BSR_ERR_SIZE);
    CU_ASSERT_PTR_NOT_NULL(strstr(bsr_last_error(), p));
    CU_ASSERT_PTR_NULL(B);
    bsr_problem_free(&P);
}

/* Example matrices shipped in matrices/ stay readable and what they claim. */
static void test_examples(void)
{
    const char *src = getenv("BSR_SOURCE_DIR");
    if (!src) { printf("\n  [skip] BSR_SOURCE_DIR unset\n"); return; }
    char path[1024];
    snprintf(path, sizeof path, "%s/matrices/stencil3d_4_4.mtx", src);
    bsr_matrix *A;
    bsr_convert_info info;
    BSR_ASSERT_OK(bsr_mm_read(path, 0, BSR_DOUBLE, &A, &info));
    CU_ASSERT_EQUAL(info.b, 4);
    bsr_problem P;
    BSR_ASSERT_OK(bsr_generate("stencil3d:4:4", BSR_DOUBLE, &P));
    expect_same_bsr(P.A, A);
    bsr_problem_free(&P);
    bsr_matrix_destroy(A);
    snprintf(path, sizeof path, "%s/matrices/laplace2d_8_pattern.mtx", src);
    bsr_csr C;
    BSR_ASSERT_OK(bsr_mm_read_csr(path, &C));
    CU_ASSERT_EQUAL(C.nrows, 64);
    CU_ASSERT_EQUAL(C.nnz, 64 + 4 * 7 * 8);
    bsr_csr_free(&C);
    snprintf(path, sizeof path, "%s/matrices/stencil3d_4_4_rhs.mtx", src);
    int m, n;
    double *x;
    BSR_ASSERT_OK(bsr_mm_read_dense(path, &m, &n, &x));
    CU_ASSERT_EQUAL(m, 256);
    CU_ASSERT_EQUAL(n, 2);
    free(x);
}

/* Malformed files: status, and a message starting with "path:line:". */
typedef struct {
    const char *name, *text;
    int how; /* 0 bsr_mm_read_csr, 1 bsr_mm_read_dense, 2 bsr_mm_read */
    bsr_status status;
    int line;
    const char *what; /* substring of the message */
} bad_case;

static const bad_case bad[] = {
    {"empty.mtx", "", 0, BSR_ERR_PARSE, 1, "banner"},
    {"banner.mtx", "%%MatrixMarkt matrix coordinate real general\n1 1 1\n1 1 1\n", 0, BSR_ERR_PARSE, 1, "banner"},
    {"nobanner.mtx", "1 1 1\n1 1 1\n", 0, BSR_ERR_PARSE, 1, "banner"},
    {"short_banner.mtx", "%%MatrixMarket matrix coordinate real\n1 1 1\n1 1 1\n", 0, BSR_ERR_PARSE, 1, "banner"},
    {"complex.mtx", "%%MatrixMarket matrix coordinate complex general\n1 1 1\n1 1 1 0\n", 0, BSR_ERR_UNSUPPORTED, 1, "complex"},
    {"herm.mtx", "%%MatrixMarket matrix coordinate real hermitian\n1 1 1\n1 1 1\n", 0, BSR_ERR_UNSUPPORTED, 1, "hermitian"},
    {"field.mtx", "%%MatrixMarket matrix coordinate reel general\n1 1 1\n1 1 1\n", 0, BSR_ERR_PARSE, 1, "field 'reel'"},
    {"format.mtx", "%%MatrixMarket matrix sparse real general\n1 1 1\n1 1 1\n", 0, BSR_ERR_PARSE, 1, "format"},
    {"symm.mtx", "%%MatrixMarket matrix coordinate real lower\n1 1 1\n1 1 1\n", 0, BSR_ERR_PARSE, 1, "symmetry"},
    {"nosize.mtx", "%%MatrixMarket matrix coordinate real general\n% only a comment\n", 0, BSR_ERR_PARSE, 3, "size line"},
    {"shortsize.mtx", "%%MatrixMarket matrix coordinate real general\n3 3\n1 1 1\n", 0, BSR_ERR_PARSE, 2, "missing number of entries"},
    {"negsize.mtx", "%%MatrixMarket matrix coordinate real general\n-3 3 1\n1 1 1\n", 0, BSR_ERR_PARSE, 2, "negative"},
    {"bigsize.mtx", "%%MatrixMarket matrix coordinate real general\n3 99999999999999999999 1\n1 1 1\n", 0, BSR_ERR_PARSE, 2, "exceeds"},
    {"bigsize2.mtx", "%%MatrixMarket matrix coordinate real general\n2147483648 3 1\n1 1 1\n", 0, BSR_ERR_PARSE, 2, "exceeds"},
    {"alphasize.mtx", "%%MatrixMarket matrix coordinate real general\n3 three 1\n1 1 1\n", 0, BSR_ERR_PARSE, 2, "not an integer"},
    {"sizeextra.mtx", "%%MatrixMarket matrix coordinate real general\n3 3 1 1\n1 1 1\n", 0, BSR_ERR_PARSE, 2, "extra token"},
    {"trunc.mtx", "%%MatrixMarket matrix coordinate real general\n3 3 3\n1 1 1\n2 2 1\n", 0, BSR_ERR_PARSE, 5, "2 of the 3"},
    {"extra.mtx", "%%MatrixMarket matrix coordinate real general\n3 3 1\n1 1 1\n\n2 2 2\n", 0, BSR_ERR_PARSE, 5, "more entries"},
    {"tokens.mtx", "%%MatrixMarket matrix coordinate real general\n3 3 1\n1 1 1 7\n", 0, BSR_ERR_PARSE, 3, "extra token '7'"},
    {"row0.mtx", "%%MatrixMarket matrix coordinate real general\n3 3 1\n0 1 1\n", 0, BSR_ERR_PARSE, 3, "row index 0 out of range 1..3"},
    {"col.mtx", "%%MatrixMarket matrix coordinate real general\n3 300 2\n1 1 1\n2 301 1\n", 0, BSR_ERR_PARSE, 4, "column index 301 out of range 1..300"},
    {"hugeidx.mtx", "%%MatrixMarket matrix coordinate real general\n3 3 1\n99999999999999999999999 1 1\n", 0, BSR_ERR_PARSE, 3, "out of range"},
    {"alpha.mtx", "%%MatrixMarket matrix coordinate real general\n3 3 1\n1 1 abc\n", 0, BSR_ERR_PARSE, 3, "'abc' is not a number"},
    {"alpha2.mtx", "%%MatrixMarket matrix coordinate real general\n3 3 1\n1 1 1.5x\n", 0, BSR_ERR_PARSE, 3, "not a number"},
    {"alphaidx.mtx", "%%MatrixMarket matrix coordinate real general\n3 3 1\n1 1.0 1\n", 0, BSR_ERR_PARSE, 3, "column index '1.0'"},
    {"novalue.mtx", "%%MatrixMarket matrix coordinate real general\n3 3 1\n1 1\n", 0, BSR_ERR_PARSE, 3, "missing value"},
    {"nocol.mtx", "%%MatrixMarket matrix coordinate pattern general\n3 3 1\n1\n", 0, BSR_ERR_PARSE, 3, "missing column"},
    {"nan.mtx", "%%MatrixMarket matrix coordinate real general\n3 3 2\n1 1 1\n2 2 NaN\n", 0, BSR_ERR_VALUE, 4, "not finite"},
    {"inf.mtx", "%%MatrixMarket matrix coordinate real general\n3 3 1\n1 1 -inf\n", 0, BSR_ERR_VALUE, 3, "not finite"},
    {"ovf.mtx", "%%MatrixMarket matrix coordinate real general\n3 3 1\n1 1 1e999\n", 0, BSR_ERR_VALUE, 3, "not finite"},
    {"intfrac.mtx", "%%MatrixMarket matrix coordinate integer general\n3 3 1\n1 1 1.5\n", 0, BSR_ERR_PARSE, 3, "not an integer"},
    {"symrect.mtx", "%%MatrixMarket matrix coordinate real symmetric\n3 4 1\n1 1 1\n", 0, BSR_ERR_SIZE, 2, "not square"},
    {"upper.mtx", "%%MatrixMarket matrix coordinate real symmetric\n3 3 2\n1 1 1\n1 3 1\n", 0, BSR_ERR_PARSE, 4, "above the diagonal"},
    {"skewdiag.mtx", "%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 1\n2 2 1\n", 0, BSR_ERR_PARSE, 3, "diagonal"},
    {"patskew.mtx", "%%MatrixMarket matrix coordinate pattern skew-symmetric\n3 3 1\n2 1\n", 0, BSR_ERR_PARSE, 1, "not a valid"},
    {"rect.mtx", "%%MatrixMarket matrix coordinate real general\n3 4 1\n1 1 1\n", 2, BSR_ERR_SIZE, 2, "square"},
    {"arrtrunc.mtx", "%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n", 1, BSR_ERR_PARSE, 6, "3 of 4"},
    {"arrextra.mtx", "%%MatrixMarket matrix array real general\n2 1\n1\n2\n3\n", 1, BSR_ERR_PARSE, 5, "more values"},
    {"arrrow.mtx", "%%MatrixMarket matrix array real general\n2 2\n1 2\n3 4\n", 1, BSR_ERR_PARSE, 3, "one value per line"},
    {"arrpat.mtx", "%%MatrixMarket matrix array pattern general\n2 2\n", 1, BSR_ERR_PARSE, 1, "not a valid"},
    {"arrnan.mtx", "%%MatrixMarket matrix array real general\n2 1\n1\nnan\n", 1, BSR_ERR_VALUE, 4, "not finite"},
    {"arrsize.mtx", "%%MatrixMarket matrix array real general\n2\n1\n2\n", 1, BSR_ERR_PARSE, 2, "missing number of columns"},
    {"object.mtx", "%%MatrixMarket vector coordinate real general\n3 1\n1 1\n", 0, BSR_ERR_PARSE, 1, "object 'vector'"},
    {"nul.mtx", "%%MatrixMarket matrix coordinate real general\n3 3 1\n1 1 1\0\n", 0, BSR_ERR_PARSE, 3, "not a number"},
    {"cat.mtx", "%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 1\n%%MatrixMarket matrix coordinate real general\n2 2 1\n2 2 1\n", 0, BSR_ERR_PARSE, 4, "second %%MatrixMarket banner"},
    {"cat2.mtx", "%%MatrixMarket matrix coordinate real general\n% c\n  %%matrixmarket matrix coordinate real general\n2 2 1\n2 2 1\n", 2, BSR_ERR_PARSE, 3, "second"},
    {"catarr.mtx", "%%MatrixMarket matrix array real general\n2 1\n1\n%%MatrixMarket matrix array real general\n2\n", 1, BSR_ERR_PARSE, 4, "banner"},
};

/* Test: malformed files. */
static void test_malformed(void)
{
    int n = (int)(sizeof bad / sizeof bad[0]);
    CU_ASSERT(n >= 15);
    for (int c = 0; c < n; c++) {
        const bad_case *t = &bad[c];
        /* the NUL case needs its length given explicitly */
        size_t len = strlen(t->text);
        if (!strcmp(t->name, "nul.mtx")) len += 2;
        char path[512];
        snprintf(path, sizeof path, "%s/%s", dir, t->name);
        FILE *f = fopen(path, "wb");
        CU_ASSERT_PTR_NOT_NULL_FATAL(f);
        fwrite(t->text, 1, len, f);
        fclose(f);
        bsr_status s;
        bsr_csr C;
        double *val = (double *)&s;
        bsr_matrix *A = (bsr_matrix *)&s;
        int m = -1, nn = -1;
        bsr_clear_error();
        if (t->how == 0) s = bsr_mm_read_csr(path, &C);
        else if (t->how == 1) s = bsr_mm_read_dense(path, &m, &nn, &val);
        else s = bsr_mm_read(path, 0, BSR_DOUBLE, &A, NULL);
        char prefix[600];
        snprintf(prefix, sizeof prefix, "%s:%d: ", path, t->line);
        const char *msg = bsr_last_error();
        int ok = s == t->status && !strncmp(msg, prefix, strlen(prefix)) && strstr(msg, t->what);
        if (!ok)
            printf("\n  %s: got %s \"%s\", want %s \"%s...%s\"", t->name, bsr_status_string(s), msg,
                   bsr_status_string(t->status), prefix, t->what);
        CU_ASSERT(ok);
        /* outputs are cleared on failure */
        if (t->how == 0) { CU_ASSERT_PTR_NULL(C.rowptr); if (s == BSR_OK) bsr_csr_free(&C); }
        if (t->how == 1) { CU_ASSERT_PTR_NULL(val); if (s == BSR_OK) free(val); }
        if (t->how == 2) { CU_ASSERT_PTR_NULL(A); if (s == BSR_OK) bsr_matrix_destroy(A); }
    }
    /* unreadable: missing file, a directory; status I/O, message names the path */
    bsr_csr C;
    char path[512];
    snprintf(path, sizeof path, "%s/does_not_exist.mtx", dir);
    CU_ASSERT_EQUAL(bsr_mm_read_csr(path, &C), BSR_ERR_IO);
    CU_ASSERT_PTR_NOT_NULL(strstr(bsr_last_error(), path));
    CU_ASSERT_EQUAL(bsr_mm_read_csr(dir, &C), BSR_ERR_IO);
    CU_ASSERT_PTR_NOT_NULL(strstr(bsr_last_error(), dir));
    CU_ASSERT_EQUAL(bsr_mm_read_csr(NULL, &C), BSR_ERR_ARG);
    /* writers: unwritable path */
    CU_ASSERT_EQUAL(bsr_mm_write_dense(dir, 1, 1, (double[]){1}), BSR_ERR_IO);
}

/* A comment longer than the read buffer, and no final newline. */
static void test_long_line(void)
{
    size_t L = (5u << 20) + 17;
    char *text = malloc(L + 200);
    strcpy(text, "%%MatrixMarket matrix coordinate real general\n%");
    size_t o = strlen(text);
    memset(text + o, 'x', L);
    strcpy(text + o + L, "\n2 2 1\n2 1 3.5");
    const char *p = put("long.mtx", text);
    free(text);
    bsr_csr C;
    BSR_ASSERT_OK(bsr_mm_read_csr(p, &C));
    CU_ASSERT_EQUAL(C.nnz, 1);
    CU_ASSERT_EQUAL(C.val[0], 3.5);
    bsr_csr_free(&C);
}

/* A valid file announcing 2^31 - 2 rows with one entry: its row pointers
 * (17 GB) exceed half the memory of a normal machine, so the read stops with
 * BSR_ERR_NOMEM naming the size line instead of being OOM-killed.  Wide and
 * moderately tall files still read. */
static void test_huge_rows(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
    double mem = (double)pages * (double)psize;
    const char *p = put("huge.mtx", "%%MatrixMarket matrix coordinate real general\n% c\n2147483646 3 1\n1 1 2\n");
    if (pages > 0 && psize > 0 && mem < 2 * 8.0 * 2147483647.0) {
        bsr_csr C;
        bsr_clear_error();
        CU_ASSERT_EQUAL(bsr_mm_read_csr(p, &C), BSR_ERR_NOMEM);
        CU_ASSERT_PTR_NULL(C.rowptr);
        char want[600];
        snprintf(want, sizeof want, "%s:3: 2147483646 rows need", p);
        CU_ASSERT_PTR_NOT_NULL(strstr(bsr_last_error(), want));
        if (!strstr(bsr_last_error(), want)) printf("\n  message: %s", bsr_last_error());
    } else {
        printf("\n  [skip] this machine has %.0f GB: the 2^31-row file would be read", mem / 1e9);
    }
    /* 1e7 rows x 2e9 columns, one entry: 80 MB of row pointers, reads */
    p = put("tall.mtx", "%%MatrixMarket matrix coordinate real general\n10000000 2000000000 1\n10000000 2000000000 -1\n");
    bsr_csr C;
    BSR_ASSERT_OK(bsr_mm_read_csr(p, &C));
    CU_ASSERT_EQUAL(C.nrows, 10000000);
    CU_ASSERT_EQUAL(C.nnz, 1);
    CU_ASSERT_EQUAL(C.colind[0], 1999999999);
    CU_ASSERT_EQUAL(C.rowptr[10000000], 1);
    bsr_csr_free(&C);
}

/* CSR invariants: what a successful read must always deliver. */
static int csr_valid(const bsr_csr *C)
{
    if (C->nrows < 0 || C->ncols < 0 || C->rowptr[0] != 0 || C->rowptr[C->nrows] != C->nnz) return 0;
    for (int i = 0; i < C->nrows; i++) {
        if (C->rowptr[i + 1] < C->rowptr[i]) return 0;
        for (int64_t q = C->rowptr[i]; q < C->rowptr[i + 1]; q++) {
            if (C->colind[q] < 0 || C->colind[q] >= C->ncols) return 0;
            if (q > C->rowptr[i] && C->colind[q] <= C->colind[q - 1]) return 0;
            if (C->val && !isfinite(C->val[q])) return 0;
        }
    }
    return 1;
}

/* 3000 random byte mutations of valid files (a fixed sequence, so every run
 * and machine tries the same files): never a crash (ASan build), a valid CSR
 * on success, "path:" in every error message. */
static void test_mutations(void)
{
    static const char *seeds[] = {
        ("%%MatrixMarket matrix coordinate real symmetric\n% comment\n6 6 8\n1 1 4.5\n2 1 -1\n3 2 -1e-3\n"
         "4 4 2\n5 3 1\n6 6 7\n6 1 0.25\n5 5 3\n"),
        "%%MatrixMarket matrix coordinate integer skew-symmetric\n4 4 3\n2 1 3\n4 1 -7\n3 2 1\n",
        "%%MatrixMarket matrix coordinate pattern general\n3 5 4\n1 5\n3 1\n2 2\n1 5\n",
        "%%MatrixMarket matrix array real general\n3 2\n1\n-2.5\n3e2\n4\n5\n6\n",
        "%%MatrixMarket matrix array real symmetric\n3 3\n1\n2\n3\n4\n5\n6\n",
    };
    const int nseeds = (int)(sizeof seeds / sizeof seeds[0]);
    char path[512], buf[512];
    snprintf(path, sizeof path, "%s/mut.mtx", dir);
    uint64_t s = 12345;
    long runs = 0, ok = 0;
    double t0 = bsr_now();
    static const char alphabet[] = "0123456789 \t\n\r%-+.eE";
    while (runs < 3000) {
        const char *src = seeds[runs % nseeds];
        size_t len = strlen(src);
        memcpy(buf, src, len);
        int nm = 1 + (int)(bsr_splitmix64(&s) % 4);
        for (int k = 0; k < nm; k++) {
            uint64_t r = bsr_splitmix64(&s);
            size_t at = (size_t)(r >> 8) % len;
            switch (r % 4) {
            case 0: buf[at] = (char)(r >> 40); break; /* any byte */
            case 1: buf[at] = alphabet[(r >> 40) % (sizeof alphabet - 1)]; break; /* plausible byte */
            case 2: memmove(buf + at, buf + at + 1, len - at - 1); len--; break; /* delete */
            case 3: if (len < sizeof buf - 1) { memmove(buf + at + 1, buf + at, len - at); len++;
                        buf[at] = alphabet[(r >> 40) % (sizeof alphabet - 1)]; } break; /* insert */
            }
            if (len < 2) break;
        }
        if (bsr_splitmix64(&s) % 8 == 0) len = (size_t)(bsr_splitmix64(&s) % (len + 1)); /* truncate */
        FILE *f = fopen(path, "wb");
        CU_ASSERT_PTR_NOT_NULL_FATAL(f);
        fwrite(buf, 1, len, f);
        fclose(f);
        bsr_csr C;
        bsr_status st = bsr_mm_read_csr(path, &C);
        if (st == BSR_OK) {
            ok++;
            int valid = csr_valid(&C);
            CU_ASSERT(valid);
            bsr_csr_free(&C);
        } else {
            int named = !strncmp(bsr_last_error(), path, strlen(path));
            if (!named || st == BSR_ERR_INTERNAL) printf("\n  mutation: %s: %s", bsr_status_string(st), bsr_last_error());
            CU_ASSERT(named && st != BSR_ERR_INTERNAL);
        }
        double *val;
        int m, n;
        if (bsr_mm_read_dense(path, &m, &n, &val) == BSR_OK) {
            for (int64_t q = 0; q < (int64_t)m * n; q++) CU_ASSERT(isfinite(val[q]));
            free(val);
        }
        bsr_matrix *A;
        if (bsr_mm_read(path, 0, BSR_DOUBLE, &A, NULL) == BSR_OK) bsr_matrix_destroy(A);
        runs++;
    }
    printf("\n  %ld mutated files in %.2f s, %ld still valid\n", runs, bsr_now() - t0, ok);
    CU_ASSERT(ok > 0 && ok < runs); /* both outcomes were exercised */
}

int main(int argc, char **argv)
{
    static const bsr_test tests[] = {
        {"general coordinate", test_general},
        {"shuffled entries, duplicates, long rows", test_shuffled},
        {"symmetric expansion", test_symmetric},
        {"skew-symmetric", test_skew},
        {"pattern and integer", test_pattern_integer},
        {"dense arrays", test_dense},
        {"CSR round trip bit-exact", test_roundtrip_csr},
        {"BSR round trip b=1..10, auto b", test_roundtrip_bsr},
        {"example matrices", test_examples},
        {"malformed files", test_malformed},
        {"line longer than the buffer", test_long_line},
        {"2^31 announced rows: NOMEM, no crash", test_huge_rows},
        {"random mutations", test_mutations},
        {NULL, NULL},
    };
    return bsr_test_main_tmpdir("mmio", tests, argc, argv, dir, sizeof dir);
}
