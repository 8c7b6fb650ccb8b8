/* SPDX-License-Identifier: BSD-3-Clause */
/* Inputs as users have them: gzip-compressed Matrix Market files (good,
 * truncated, corrupt; a clear refusal in a build without zlib), and the
 * automatic block size of files that store zeros inside their blocks. */
#include "harness.h"
#include "internal.h"
#include <stdlib.h>
#include <string.h>
#ifdef BSR_HAVE_ZLIB
#include <zlib.h>
#endif

static char dir[256]; /* temp folder made by main() */

/* dir/name into out (size 512). */
static const char *tmp_path(const char *name, char *out)
{
    snprintf(out, 512, "%s/%s", dir, name);
    return out;
}

/* The bytes of a file (NULL on error); *len gets its size. */
static unsigned char *slurp(const char *path, long *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    *len = ftell(f);
    rewind(f);
    unsigned char *b = malloc((size_t)*len + 1);
    if (b && fread(b, 1, (size_t)*len, f) != (size_t)*len) { free(b); b = NULL; }
    fclose(f);
    return b;
}

/* Write n bytes to path. */
static void spit(const char *path, const void *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    CU_ASSERT_EQUAL(fwrite(p, 1, n, f), n);
    fclose(f);
}

static const char mat_text[] =
    "%%MatrixMarket matrix coordinate real general\n"
    "% a 4 x 4 matrix\n"
    "4 4 6\n"
    "1 1 4\n2 2 5\n3 3 6\n4 4 7\n1 4 -1.5\n4 1 0.25\n";
static const char rhs_text[] = "%%MatrixMarket matrix array real general\n4 1\n1\n2\n3\n4.5\n";

#ifdef BSR_HAVE_ZLIB
/* Write text gzip-compressed to path. */
static void put_gz(const char *path, const char *text)
{
    gzFile g = gzopen(path, "wb");
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    CU_ASSERT_EQUAL(gzwrite(g, text, (unsigned)strlen(text)), (int)strlen(text));
    CU_ASSERT_EQUAL(gzclose(g), Z_OK);
}

/* A .mtx.gz matrix and right-hand side read back equal to the plain files;
 * a compressed file with a plain name is recognized by its first bytes. */
static void test_gz_read(void)
{
    char pg[512], pp[512], vg[512], wg[512];
    put_gz(tmp_path("m.mtx.gz", pg), mat_text);
    spit(tmp_path("m.mtx", pp), mat_text, strlen(mat_text));
    put_gz(tmp_path("b.mtx.gz", vg), rhs_text);
    put_gz(tmp_path("gz_named_plain.mtx", wg), mat_text);
    bsr_csr C, D, E;
    BSR_ASSERT_OK(bsr_mm_read_csr(pg, &C));
    BSR_ASSERT_OK(bsr_mm_read_csr(pp, &D));
    BSR_ASSERT_OK(bsr_mm_read_csr(wg, &E));
    CU_ASSERT_EQUAL_FATAL(C.nnz, 6);
    CU_ASSERT_EQUAL_FATAL(D.nnz, 6);
    CU_ASSERT_EQUAL(E.nnz, 6);
    CU_ASSERT_EQUAL(memcmp(C.rowptr, D.rowptr, sizeof(int64_t) * 5), 0);
    CU_ASSERT_EQUAL(memcmp(C.colind, D.colind, sizeof(int) * 6), 0);
    CU_ASSERT_EQUAL(memcmp(C.val, D.val, sizeof(double) * 6), 0);
    bsr_csr_free(&C); bsr_csr_free(&D); bsr_csr_free(&E);
    bsr_matrix *A;
    BSR_ASSERT_OK(bsr_mm_read(pg, 0, BSR_DOUBLE, &A, NULL));
    CU_ASSERT_EQUAL(bsr_matrix_nbrows(A) * bsr_matrix_block(A), 4);
    bsr_matrix_destroy(A);
    int m, n;
    double *v;
    BSR_ASSERT_OK(bsr_mm_read_dense(vg, &m, &n, &v));
    CU_ASSERT(m == 4 && n == 1 && v[0] == 1 && v[3] == 4.5);
    free(v);
}

/* A large compressed file crosses many read chunks: every entry arrives. */
static void test_gz_large(void)
{
    enum { N = 200000 };
    char p[512];
    gzFile g = gzopen(tmp_path("big.mtx.gz", p), "wb");
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    gzprintf(g, "%%%%MatrixMarket matrix coordinate real general\n%d %d %d\n", N, N, N);
    for (int i = 1; i <= N; i++) gzprintf(g, "%d %d %d.5\n", i, i, i);
    CU_ASSERT_EQUAL(gzclose(g), Z_OK);
    bsr_csr C;
    BSR_ASSERT_OK(bsr_mm_read_csr(p, &C));
    CU_ASSERT_EQUAL(C.nnz, N);
    CU_ASSERT_EQUAL(C.val[N - 1], N + 0.5);
    bsr_csr_free(&C);
}

/* Truncated and corrupt gzip streams: an error status naming the file, no crash. */
static void test_gz_bad(void)
{
    char pg[512], pb[512];
    put_gz(tmp_path("t.mtx.gz", pg), mat_text);
    long len = 0;
    unsigned char *z = slurp(pg, &len);
    CU_ASSERT_PTR_NOT_NULL_FATAL(z);
    CU_ASSERT_FATAL(len > 30);
    bsr_csr C;
    /* cut at every length: never OK (the CRC trailer is part of the stream) */
    for (long cut = 2; cut < len; cut++) {
        spit(tmp_path("cut.mtx.gz", pb), z, (size_t)cut);
        bsr_clear_error();
        bsr_status s = bsr_mm_read_csr(pb, &C);
        CU_ASSERT(s != BSR_OK);
        CU_ASSERT_PTR_NOT_NULL(strstr(bsr_last_error(), pb));
        if (s == BSR_OK) { printf("\n  cut at %ld of %ld read as valid", cut, len); bsr_csr_free(&C); }
    }
    /* a flipped byte in the deflate data or the CRC: corrupt, not a matrix */
    for (long at = 12; at < len; at += 3) {
        z[at] ^= 0x5a;
        spit(tmp_path("flip.mtx.gz", pb), z, (size_t)len);
        z[at] ^= 0x5a;
        bsr_status s = bsr_mm_read_csr(pb, &C);
        if (s == BSR_OK) bsr_csr_free(&C);
        else CU_ASSERT_PTR_NOT_NULL(strstr(bsr_last_error(), pb));
    }
    z[len - 6] ^= 0x01; /* CRC-32 of the data */
    spit(tmp_path("crc.mtx.gz", pb), z, (size_t)len);
    CU_ASSERT_EQUAL(bsr_mm_read_csr(pb, &C), BSR_ERR_IO);
    CU_ASSERT_PTR_NOT_NULL(strstr(bsr_last_error(), "corrupt or truncated"));
    free(z);
}
#else
/* Without zlib a gzip file is refused with a message that says so. */
static void test_gz_read(void)
{
    /* gzip of "x\n" */
    static const unsigned char gz[] = {0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0xff, 0xab,
                                       0xe0, 0x02, 0x00, 0x1f, 0x08, 0xea, 0x46, 0x02, 0x00, 0x00, 0x00};
    char p[512];
    spit(tmp_path("m.mtx.gz", p), gz, sizeof gz);
    bsr_csr C;
    CU_ASSERT_EQUAL(bsr_mm_read_csr(p, &C), BSR_ERR_UNSUPPORTED);
    CU_ASSERT_PTR_NOT_NULL(strstr(bsr_last_error(), "no zlib"));
    CU_ASSERT_PTR_NOT_NULL(strstr(bsr_last_error(), p));
}
static void test_gz_large(void) { printf("\n  [skip] built without zlib"); CU_PASS("no zlib"); }
static void test_gz_bad(void) { printf("\n  [skip] built without zlib"); CU_PASS("no zlib"); }
#endif

/* 3 x 3 blocks stored whole, their zeros written explicitly, on a 9 x 9
 * matrix: detected as b = 3 (counting the stored zeros, one 9 x 9 block
 * looks dense enough); the file's stored zeros stay in the blocks. */
static void test_detect_zeros(void)
{
    /* block pattern of a 3 x 3 block matrix: diagonal, (0,1), (1,2), (2,0)
     * and (1,0); each block has 7 nonzeros and 2 stored zeros */
    static const int bi[] = {0, 1, 2, 0, 1, 2, 1}, bj[] = {0, 1, 2, 1, 2, 0, 0};
    char text[8192], p[512];
    int o = snprintf(text, sizeof text, "%%%%MatrixMarket matrix coordinate real general\n9 9 63\n");
    for (int q = 0; q < 7; q++)
        for (int r = 0; r < 3; r++)
            for (int c = 0; c < 3; c++) {
                double v = r + c == 2 && r != c ? 0 : 1 + r + 3 * c + q;
                o += snprintf(text + o, sizeof text - o, "%d %d %g\n", 3 * bi[q] + r + 1, 3 * bj[q] + c + 1, v);
            }
    spit(tmp_path("zeros.mtx", p), text, (size_t)o);
    bsr_matrix *A;
    bsr_convert_info info;
    BSR_ASSERT_OK(bsr_mm_read(p, 0, BSR_DOUBLE, &A, &info));
    CU_ASSERT_EQUAL(info.b, 3);
    CU_ASSERT_EQUAL(bsr_matrix_block(A), 3);
    CU_ASSERT_EQUAL(bsr_matrix_nnzb(A), 7);
    bsr_matrix_destroy(A);
    /* the same through bsr_from_csr with the zeros in the CSR */
    bsr_csr C;
    BSR_ASSERT_OK(bsr_mm_read_csr(p, &C));
    CU_ASSERT_EQUAL(C.nnz, 63);
    BSR_ASSERT_OK(bsr_from_csr(&C, 0, 0, BSR_DOUBLE, &A, &info));
    CU_ASSERT_EQUAL(info.b, 3);
    bsr_matrix_destroy(A);
    /* all stored values zero: b = 1, no division by zero */
    for (int64_t q = 0; q < C.nnz; q++) C.val[q] = 0;
    BSR_ASSERT_OK(bsr_from_csr(&C, 0, 0, BSR_DOUBLE, &A, &info));
    CU_ASSERT_EQUAL(info.b, 1);
    bsr_matrix_destroy(A);
    bsr_csr_free(&C);
}

/* The real 3 x 3-block reservoir Jacobians are b = 3: opm_matr33_b3.mtx
 * (stored zeros make one 9 x 9 block look dense) and fasp_spe01_b3.mtx (whole
 * 3 x 3 blocks stored, 62% of the entries zeros). */
static void test_detect_opm(void)
{
    const char *d = bsr_test_real_dir();
    const char *files[] = {"opm_matr33_b3.mtx", "fasp_spe01_b3.mtx"};
    for (int i = 0; i < 2; i++) {
        char p[4200];
        snprintf(p, sizeof p, "%s/%s", d, files[i]);
        FILE *f = d[0] ? fopen(p, "rb") : NULL;
        if (!f) {
            printf("\n  [skip] %s absent: real-file block detection not checked", p);
            CU_PASS("real matrix absent");
            continue;
        }
        fclose(f);
        bsr_matrix *A;
        bsr_convert_info info;
        BSR_ASSERT_OK(bsr_mm_read(p, 0, BSR_DOUBLE, &A, &info));
        CU_ASSERT_EQUAL(info.b, 3);
        bsr_matrix_destroy(A);
    }
}

/* Whole 3 x 3 blocks stored with their zeros (4 of 9 entries zero, so the
 * nonzeros alone fill 3 x 3 blocks 1.8 times over, past the 1.5 limit): the
 * exact tiling of the stored entries says b = 3. */
static void test_detect_whole_blocks(void)
{
    char text[16384], p[512];
    const int nb = 6;   /* block rows: tridiagonal block pattern */
    int cnt = 0;
    for (int I = 0; I < nb; I++) cnt += 9 * ((I > 0) + 1 + (I < nb - 1));
    int o = snprintf(text, sizeof text, "%%%%MatrixMarket matrix coordinate real general\n%d %d %d\n", 3 * nb, 3 * nb, cnt);
    for (int I = 0; I < nb; I++)
        for (int J = I - 1; J <= I + 1; J++) {
            if (J < 0 || J >= nb) continue;
            for (int r = 0; r < 3; r++)
                for (int c = 0; c < 3; c++) {
                    double v = (r * 3 + c) % 2 ? 0 : (I == J ? 10.0 : -1.0) + r;
                    o += snprintf(text + o, sizeof text - o, "%d %d %g\n", 3 * I + r + 1, 3 * J + c + 1, v);
                }
        }
    spit(tmp_path("whole.mtx", p), text, (size_t)o);
    bsr_matrix *A;
    bsr_convert_info info;
    BSR_ASSERT_OK(bsr_mm_read(p, 0, BSR_DOUBLE, &A, &info));
    CU_ASSERT_EQUAL(info.b, 3);
    CU_ASSERT_EQUAL(bsr_matrix_nnzb(A), 3 * nb - 2);
    bsr_matrix_destroy(A);
    /* all 81 entries of a 9 x 9 stored: 3 and 9 both tile exactly, but only
     * four 3 x 3 blocks hold nonzeros (9 x 9 would be 2.25x their count): 3 */
    o = snprintf(text, sizeof text, "%%%%MatrixMarket matrix coordinate real general\n9 9 81\n");
    for (int r = 0; r < 9; r++)
        for (int c = 0; c < 9; c++) {
            const int blk = r / 3 == c / 3 || (r / 3 == 2 && c / 3 == 0);
            o += snprintf(text + o, sizeof text - o, "%d %d %g\n", r + 1, c + 1, blk ? (r == c ? 9.0 : 0.5) : 0.0);
        }
    spit(tmp_path("dense9.mtx", p), text, (size_t)o);
    BSR_ASSERT_OK(bsr_mm_read(p, 0, BSR_DOUBLE, &A, &info));
    CU_ASSERT_EQUAL(info.b, 3);
    bsr_matrix_destroy(A);
}

int main(int argc, char **argv)
{
    static const bsr_test tests[] = {
        {"gzip matrix and right-hand side", test_gz_read},
        {"gzip across read chunks", test_gz_large},
        {"truncated and corrupt gzip", test_gz_bad},
        {"block size with stored zeros", test_detect_zeros},
        {"real 3 x 3-block Jacobians are b = 3", test_detect_opm},
        {"whole blocks stored with their zeros", test_detect_whole_blocks},
        {NULL, NULL},
    };
    return bsr_test_main_tmpdir("inputs", tests, argc, argv, dir, sizeof dir);
}
