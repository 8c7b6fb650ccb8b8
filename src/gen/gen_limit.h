/* SPDX-License-Identifier: BSD-3-Clause */
/* A cap on the size of generated problems, for callers that take generator
 * specs from untrusted input (the fuzzing harness tests/fuzz/fuzz_gen.c):
 * every generator checks its parsed size against it before allocating, so a
 * spec such as "stencil3d:2000" is refused instead of built.  Internal: not
 * part of the public header. */
#ifndef BSR_GEN_LIMIT_H
#define BSR_GEN_LIMIT_H

#include "internal.h"

/* Refuse (BSR_ERR_UNSUPPORTED) generated problems of more than max_rows block
 * rows from now on; 0 removes the cap (the default).  Set it before
 * generating: it is a plain process-wide value, not synchronized. */
void bsr_generate_limit_rows(int64_t max_rows);
/* BSR_OK when a problem of `rows` block rows is within the cap, else
 * BSR_ERR_UNSUPPORTED naming the generator `gen`. */
bsr_status bsr_generate_check_rows(const char *gen, int64_t rows);

#endif
