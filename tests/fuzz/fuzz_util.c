/* SPDX-License-Identifier: BSD-3-Clause */
/* Shared pieces of the libFuzzer harnesses; see fuzz_util.h. */
#define _GNU_SOURCE /* memfd_create */
#include "fuzz_util.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#ifdef BSR_HAVE_ZLIB
#include <zlib.h>
#endif

/* The readers take a path and open it themselves (fstat for the buffer
 * size, gzip detection, dup for zlib), so fmemopen's FILE* cannot reach
 * them: the input goes into a memfd instead, opened by the library through
 * /proc/self/fd: a regular file that never touches the disk. */
const char *fuzz_file(const uint8_t *data, size_t size)
{
    static int fd = -1;
    static char path[64];
    if (fd < 0) {
        fd = memfd_create("bsr_fuzz_input", 0);
        if (fd < 0) { perror("fuzz_file: memfd_create"); abort(); }
        snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    }
    if (ftruncate(fd, 0)) { perror("fuzz_file: ftruncate"); abort(); }
    for (size_t off = 0; off < size;) {
        ssize_t w = pwrite(fd, data + off, size - off, (off_t)off);
        if (w <= 0) { perror("fuzz_file: pwrite"); abort(); }
        off += (size_t)w;
    }
    return path;
}

char *fuzz_cstr(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (!s) abort();
    memcpy(s, data, size);
    s[size] = 0;
    return s;
}

/* The text the reader parses: data itself, or its gzip decompression into
 * *out (concatenated members included, as gzread reads them; a corrupt or
 * truncated stream gives what decodes before the damage, as gzread does).
 * Returns the text's length, or -1 when it would exceed cap bytes (the
 * harness then skips the input rather than guess its size line). */
static int64_t mm_text(const uint8_t *data, size_t size, size_t cap, uint8_t **out)
{
    *out = NULL;
    if (size < 2 || data[0] != 0x1f || data[1] != 0x8b) return (int64_t)size;
#ifdef BSR_HAVE_ZLIB
    uint8_t *buf = malloc(cap);
    if (!buf) abort();
    z_stream z;
    memset(&z, 0, sizeof z);
    if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK) abort();
    z.next_in = (Bytef *)data;
    z.avail_in = (uInt)size;
    z.next_out = buf;
    z.avail_out = (uInt)cap;
    while (inflate(&z, Z_NO_FLUSH) == Z_STREAM_END && z.avail_in >= 2 && z.next_in[0] == 0x1f &&
           z.next_in[1] == 0x8b && z.avail_out)
        inflateReset(&z); /* another gzip member follows */
    int64_t len = (int64_t)(cap - z.avail_out);
    inflateEnd(&z);
    if (!z.avail_out) { free(buf); return -1; }
    *out = buf;
    return len;
#else
    (void)cap;
    return (int64_t)size; /* the library refuses gzip input without zlib */
#endif
}

/* The reader's whitespace (mmio.c's is_ws): lines end at '\n' only. */
static int ws(uint8_t c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

int fuzz_mm_size_line(const uint8_t *data, size_t size, int64_t dims[3])
{
    uint8_t *dec;
    int64_t len = mm_text(data, size, (size_t)1 << 20, &dec);
    if (len < 0) return -1;
    const uint8_t *t = dec ? dec : data, *end = t + len;
    int found = 0, first = 1, n = 0;
    for (const uint8_t *s = t; s < end && !found;) {
        const uint8_t *nl = memchr(s, '\n', (size_t)(end - s));
        const uint8_t *e = nl ? nl : end;
        const uint8_t *p = s;
        while (p < e && ws(*p)) p++;
        if (!first && p < e && *p != '%') {
            found = 1;
            while (n < 3) {
                while (p < e && ws(*p)) p++;
                if (p == e) break;
                int neg = 0;
                if (*p == '+' || *p == '-') neg = *p++ == '-';
                const uint8_t *d0 = p;
                uint64_t v = 0;
                for (; p < e && *p >= '0' && *p <= '9'; p++) v = v > (uint64_t)INT64_MAX / 10 ? (uint64_t)INT64_MAX : v * 10 + (*p - '0');
                if (p == d0 || (p < e && !ws(*p))) break; /* not an integer: the reader refuses it */
                if (v > (uint64_t)INT64_MAX) v = (uint64_t)INT64_MAX;
                dims[n++] = neg ? -(int64_t)v : (int64_t)v;
            }
        }
        first = 0;
        s = e + 1;
    }
    free(dec);
    return n; /* no size line: 0, and the reader says so */
}
