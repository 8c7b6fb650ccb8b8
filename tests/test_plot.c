/* SPDX-License-Identifier: BSD-3-Clause */
/* The benchmarks' PNG plotter writes a valid PNG (deflated when built with
 * zlib) and rejects unwritable paths. */
#include "harness.h"
#include "plot.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef BSR_HAVE_ZLIB
#include <zlib.h>
#endif

/* Test: PNG plot written. */
static void test_png_written(void)
{
    double x[] = {1e3, 1e4, 1e5}, y[] = {1, NAN, 4}, y2[] = {-1, 2, 3};
    plot_series s[2] = {{"a", 3, x, y}, {"b", 3, x, y2}};
    char path[64]; /* per process: suites of several builds may run at once */
    snprintf(path, sizeof path, "/tmp/bsr_plot_test_%ld.png", (long)getpid());
    CU_ASSERT_EQUAL(plot_png(path, "t", "x", "y", s, 2, 1, 1), 0);
    FILE *f = fopen(path, "rb");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    unsigned char sig[16];
    CU_ASSERT_EQUAL(fread(sig, 1, 16, f), 16);
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fclose(f);
    CU_ASSERT_EQUAL(memcmp(sig, "\x89PNG\r\n\x1a\n", 8), 0);
    CU_ASSERT_EQUAL(memcmp(sig + 12, "IHDR", 4), 0);
#ifdef BSR_HAVE_ZLIB
    CU_ASSERT(size < 100000); /* deflated: a mostly white canvas shrinks ~50x */
    if (!(size < 100000)) printf("\n  PNG of %ld bytes: not deflated", size);
    /* the IDAT stream inflates to the rows: a filter byte 0 and 800 RGB pixels each */
    unsigned char *png = malloc((size_t)size), *rows = malloc(520 * 2401 + 1);
    f = fopen(path, "rb");
    CU_ASSERT_FATAL(png && rows && f && fread(png, 1, (size_t)size, f) == (size_t)size);
    fclose(f);
    long at = 8 + 25; /* signature, IHDR */
    CU_ASSERT_EQUAL_FATAL(memcmp(png + at + 4, "IDAT", 4), 0);
    uLong zlen = (uLong)png[at] << 24 | (uLong)png[at + 1] << 16 | (uLong)png[at + 2] << 8 | png[at + 3];
    uLongf rlen = 520 * 2401 + 1;
    CU_ASSERT_EQUAL(uncompress(rows, &rlen, png + at + 8, zlen), Z_OK);
    CU_ASSERT_EQUAL(rlen, 520 * 2401);
    for (int y = 0; y < 520 && rlen == 520 * 2401; y++) CU_ASSERT_EQUAL(rows[(size_t)y * 2401], 0);
    free(png); free(rows);
#else
    CU_ASSERT(size > 800 * 520 * 3); /* stored blocks: at least the raw pixels */
#endif
    remove(path);
    CU_ASSERT_EQUAL(plot_png("/nonexistent/dir/p.png", "t", "x", "y", s, 2, 0, 0), -1);
}

int main(int argc, char **argv)
{
    static const bsr_test tests[] = {{"PNG plot written", test_png_written}, {NULL, NULL}};
    return bsr_test_main("plot", tests, argc, argv);
}
