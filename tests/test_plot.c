/* The benchmarks' PNG plotter writes a valid PNG and rejects unwritable paths. */
#include "harness.h"
#include "plot.h"
#include <math.h>
#include <stdio.h>
#include <string.h>

/* Test: PNG plot written. */
static void test_png_written(void)
{
    double x[] = {1e3, 1e4, 1e5}, y[] = {1, NAN, 4}, y2[] = {-1, 2, 3};
    plot_series s[2] = {{"a", 3, x, y}, {"b", 3, x, y2}};
    char path[] = "/tmp/bsr_plot_test.png";
    CU_ASSERT_EQUAL(plot_png(path, "t", "x", "y", s, 2, 1, 1), 0);
    FILE *f = fopen(path, "rb");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    unsigned char sig[16];
    CU_ASSERT_EQUAL(fread(sig, 1, 16, f), 16);
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fclose(f);
    remove(path);
    CU_ASSERT_EQUAL(memcmp(sig, "\x89PNG\r\n\x1a\n", 8), 0);
    CU_ASSERT_EQUAL(memcmp(sig + 12, "IHDR", 4), 0);
    CU_ASSERT(size > 800 * 520 * 3); /* stored blocks: at least the raw pixels */
    CU_ASSERT_EQUAL(plot_png("/nonexistent/dir/p.png", "t", "x", "y", s, 2, 0, 0), -1);
}

int main(int argc, char **argv)
{
    static const bsr_test tests[] = {{"PNG plot written", test_png_written}, {NULL, NULL}};
    return bsr_test_main("plot", tests, argc, argv);
}
