/* SPDX-License-Identifier: BSD-3-Clause */
/* libFuzzer harness of the solver options parser (bsrsolve --config,
 * bsr_solver_options_parse), with the calls that follow it in the CLI: the
 * whole-options check, a CPU solver created and destroyed, and the canonical
 * string of the report.  That string must parse again to itself (the
 * round trip tests/test_options.c checks for one string): a failure aborts,
 * which libFuzzer reports. */
#include "fuzz_util.h"
#include <bsrsolve.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Report a broken invariant as a crash, with the strings involved. */
static void fail(const char *what, const char *a, const char *b)
{
    fprintf(stderr, "fuzz_options: %s\n  input: '%s'\n  canonical: '%s'\n", what, a, b);
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *str = fuzz_cstr(data, size);
    bsr_solver_options o, before;
    bsr_solver_options_default(&o);
    before = o;
    if (bsr_solver_options_parse(&o, str) != BSR_OK) {
        /* documented: o is unchanged after an error */
        if (memcmp(&o, &before, sizeof o)) fail("options changed by a failed parse", str, "");
        free(str);
        return 0;
    }
    bsr_status chk = bsr_solver_options_check(&o);
    bsr_solver *s = NULL;
    bsr_status cr = bsr_solver_create(&s, NULL, &o);
    if ((cr == BSR_OK) != (chk == BSR_OK)) fail("bsr_solver_create and bsr_solver_options_check disagree", str, "");
    bsr_solver_destroy(s);

    char canon[1024], again[1024];
    bsr_solver_options_string(&o, canon, sizeof canon);
    bsr_solver_options p;
    bsr_solver_options_default(&p);
    if (bsr_solver_options_parse(&p, canon) != BSR_OK) fail("canonical string does not parse", str, canon);
    bsr_solver_options_string(&p, again, sizeof again);
    if (strcmp(canon, again)) fail("canonical string changes when parsed again", str, again);
    free(str);
    return 0;
}
