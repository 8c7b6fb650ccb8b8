/* SPDX-License-Identifier: BSD-3-Clause */
/* Shared pieces of the libFuzzer harnesses (tests/fuzz/fuzz_*.c): the fuzz
 * input as a file the library's path-taking readers can open, and a size cap
 * read from a Matrix Market size line before the library sees it. */
#ifndef BSR_FUZZ_UTIL_H
#define BSR_FUZZ_UTIL_H

#include <stddef.h>
#include <stdint.h>

/* libFuzzer's entry point, declared for -Wmissing-prototypes. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Path of an in-memory file holding exactly data[0..size) (the same file,
 * rewritten, on every call); aborts when the file cannot be made. */
const char *fuzz_file(const uint8_t *data, size_t size);

/* The integers of a Matrix Market size line (the first line after the banner
 * that is neither blank nor a '%' comment), as the reader finds it; gzip
 * input is decompressed first (when built with zlib).  Returns how many
 * leading tokens are integers (0..3, each saturated at INT64_MAX in absolute
 * value; 0 when there is no size line), or -1 when the text is longer than a
 * megabyte once decompressed (the harness skips such inputs). */
int fuzz_mm_size_line(const uint8_t *data, size_t size, int64_t dims[3]);

/* A NUL-terminated malloc'ed copy of data[0..size) (for string parsers). */
char *fuzz_cstr(const uint8_t *data, size_t size);

#endif
