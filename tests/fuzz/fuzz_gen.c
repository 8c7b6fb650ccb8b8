/* SPDX-License-Identifier: BSD-3-Clause */
/* libFuzzer harness of the problem generators' specs (bsrsolve --gen,
 * bsr_generate "NAME:PARAMS"): every spec either fails cleanly or builds a
 * problem, which is checked for shape and freed.  Sizes are capped through
 * the library's internal bsr_generate_limit_rows, checked while the spec is
 * parsed, before anything is allocated: a valid spec may ask for 2000^3
 * block rows. */
#include "fuzz_util.h"
#include "gen_limit.h"
#include <bsrsolve.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Block rows a fuzzed spec may build: small enough that a run takes
 * milliseconds, large enough for every generator's boundary and hole cases. */
#define MAX_ROWS 512

/* Report a broken invariant as a crash. */
static void fail(const char *what, const char *spec)
{
    fprintf(stderr, "fuzz_gen: %s\n  spec: '%s'\n", what, spec);
    abort();
}

/* Set the cap once, before the first input. */
int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc; (void)argv;
    bsr_generate_limit_rows(MAX_ROWS);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *spec = fuzz_cstr(data, size);
    bsr_problem P;
    bsr_precision prec = size % 2 ? BSR_FLOAT : BSR_DOUBLE;
    bsr_status st = bsr_generate(spec, prec, &P);
    if (st != BSR_OK) {
        if (P.A || P.rhs || P.xexact) fail("failed generation left objects behind", spec);
        free(spec);
        return 0;
    }
    if (!P.A || !P.rhs) fail("no matrix or right-hand side", spec);
    /* nb = 0 is valid: holes may switch off every cell (an empty system,
     * which the solvers take as converged, as an empty Matrix Market file) */
    int nb = bsr_matrix_nbrows(P.A), b = bsr_matrix_block(P.A);
    if (nb < 0 || nb > MAX_ROWS || b < 1 || b > 10 || bsr_matrix_nbcols(P.A) != nb) fail("bad matrix shape", spec);
    int64_t n = (int64_t)nb * b;
    if (bsr_multivec_rows(P.rhs) != n || (P.xexact && bsr_multivec_rows(P.xexact) != n))
        fail("vectors do not match the matrix", spec);
    if (memchr(P.name, 0, sizeof P.name) == NULL) fail("name not terminated", spec);
    bsr_problem_free(&P);
    free(spec);
    return 0;
}
