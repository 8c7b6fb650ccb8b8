/* SPDX-License-Identifier: BSD-3-Clause */
/* One version everywhere: bsr_version(), the BSR_VERSION macros, CMake's
 * project version ($BSR_PROJECT_VERSION, set by CMake), `bsrsolve --version`
 * and the "version" of every JSON report of the CLI ($BSR_CLI; those tests
 * skip without it). */
#include "harness.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

BSR_TEST_CLI_SUITE

/* Test: the library, the headers and CMake say the same version. */
static void test_library(void)
{
    char v[64];
    snprintf(v, sizeof v, "%d.%d.%d", BSR_VERSION_MAJOR, BSR_VERSION_MINOR, BSR_VERSION_PATCH);
    CU_ASSERT_STRING_EQUAL(BSR_VERSION, v);
    CU_ASSERT_PTR_NOT_NULL_FATAL(bsr_version());
    CU_ASSERT_STRING_EQUAL(bsr_version(), BSR_VERSION);
    const char *cmake = getenv("BSR_PROJECT_VERSION");
    if (!cmake) { BSR_TEST_SKIP("BSR_PROJECT_VERSION unset (run through ctest)"); return; }
    CU_ASSERT_STRING_EQUAL(bsr_version(), cmake);
    if (strcmp(bsr_version(), cmake)) printf("\n  bsr_version() %s, CMake's project version %s", bsr_version(), cmake);
}

/* Test: `bsrsolve --version` prints "bsrsolve VERSION" and exits 0, also
 * among other options; --help names it. */
static void test_cli_version(void)
{
    if (!cli) { BSR_TEST_SKIP("BSR_CLI unset (run through ctest)"); return; }
    char want[128];
    snprintf(want, sizeof want, "bsrsolve %s\n", bsr_version());
    CU_ASSERT_EQUAL(run("--version"), 0);
    CU_ASSERT_STRING_EQUAL(out, want);
    CU_ASSERT_STRING_EQUAL(err, "");
    CU_ASSERT_EQUAL(run("--gen stencil3d:4:2 --version"), 0); /* no solve */
    CU_ASSERT_STRING_EQUAL(out, want);
    CU_ASSERT_EQUAL(run("--help"), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "--version"));
}

/* Test: every JSON report has "version": the library's. */
static void test_json_version(void)
{
    if (!cli) { BSR_TEST_SKIP("BSR_CLI unset (run through ctest)"); return; }
    static const char *const cmds[] = {
        "--gen stencil3d:4:2 --info --json",
        "--gen stencil3d:4:2 --info --json --reorder rcm",
        "--gen stencil3d:4:2 --backend cpu --json",
        "--gen stencil3d:4:2 --backend cpu --json --config precond=ilu2 --rhs random:3",
    };
    char want[128];
    snprintf(want, sizeof want, "\"version\": \"%s\"", bsr_version());
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
        CU_ASSERT_EQUAL(run(cmds[i]), 0);
        CU_ASSERT_PTR_NOT_NULL(strstr(out, want));
        if (!strstr(out, want)) printf("\n  bsrsolve %s: no %s in\n%s", cmds[i], want, out);
        const char *end = strrchr(out, '}');
        CU_ASSERT(end && strstr(out, want) < end);
    }
}

int main(int argc, char **argv)
{
    static const bsr_test tests[] = {
        {"bsr_version() = BSR_VERSION = CMake's project version", test_library},
        {"bsrsolve --version", test_cli_version},
        {"the CLI's JSON reports name the version", test_json_version},
        {NULL, NULL},
    };
    return bsr_test_cli_main("version", tests, argc, argv, &cli, dir, sizeof dir, 0);
}
