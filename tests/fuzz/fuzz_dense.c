/* SPDX-License-Identifier: BSD-3-Clause */
/* libFuzzer harness of the dense (right-hand side) reader: bsr_mm_read_dense
 * on Matrix Market array (or coordinate) input, then what bsrsolve's --rhs /
 * --x0 do with the result (bench/cli.c, cli_read_dense): a row-interleaved
 * multivector of its columns.  Sanitizer findings and a broken invariant
 * (abort) are reported by libFuzzer. */
#include "fuzz_util.h"
#include <bsrsolve.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* Values (rows x columns) accepted from a size line: the reader allocates
 * the whole dense array, so a short input may announce gigabytes; the
 * library's own limit (2^37 values) is far beyond a fuzzing run's memory. */
#define MAX_VALUES ((int64_t)1 << 16)

/* Report a broken invariant as a crash. */
static void fail(const char *what)
{
    fprintf(stderr, "fuzz_dense: %s\n", what);
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int64_t dims[3];
    int nd = fuzz_mm_size_line(data, size, dims);
    if (nd < 0) return 0;
    if ((nd >= 1 && dims[0] > MAX_VALUES) || (nd >= 2 && dims[1] > MAX_VALUES)) return 0;
    if (nd >= 2 && dims[0] > 0 && dims[1] > MAX_VALUES / dims[0]) return 0;
    const char *path = fuzz_file(data, size);

    int nr = -1, nc = -1;
    double *v = NULL;
    bsr_status st = bsr_mm_read_dense(path, &nr, &nc, &v);
    if (st != BSR_OK) {
        if (v || nr || nc) fail("failed read left values or sizes");
        return 0;
    }
    if (nr < 0 || nc < 0 || (!v && (int64_t)nr * nc > 0)) fail("bad dimensions or no values");
    for (int64_t q = 0; q < (int64_t)nr * nc; q++)
        if (!isfinite(v[q])) fail("a value read is not finite");
    /* as cli_read_dense: 1..64 columns become a multivector of nr rows */
    if (nr > 0 && nc >= 1 && nc <= 64) {
        bsr_multivec *X;
        bsr_precision prec = size % 2 ? BSR_FLOAT : BSR_DOUBLE;
        if (bsr_multivec_create(&X, nr, nc, prec) == BSR_OK) {
            if (bsr_multivec_from_colmajor(X, v, nr) != BSR_OK) fail("from_colmajor refused its own shape");
            bsr_multivec_destroy(X);
        }
    }
    free(v);
    return 0;
}
