/* SPDX-License-Identifier: BSD-3-Clause */
/* Status strings, the thread-local last-error message, checked allocation. */
#include "internal.h"
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static _Thread_local char last_error[2048];

/* Fixed text for each status code. */
const char *bsr_status_string(bsr_status s)
{
    switch (s) {
    case BSR_OK: return "ok";
    case BSR_ERR_ARG: return "invalid argument";
    case BSR_ERR_SIZE: return "size mismatch";
    case BSR_ERR_PARSE: return "parse error";
    case BSR_ERR_IO: return "I/O error";
    case BSR_ERR_NOMEM: return "out of memory";
    case BSR_ERR_VALUE: return "invalid value";
    case BSR_ERR_STRUCTURE: return "invalid structure";
    case BSR_ERR_SINGULAR: return "singular pivot";
    case BSR_ERR_UNSUPPORTED: return "unsupported";
    case BSR_ERR_CUDA: return "CUDA error";
    case BSR_ERR_NODEVICE: return "no CUDA device";
    case BSR_ERR_METIS: return "METIS error";
    case BSR_ERR_NOCONV: return "not converged";
    case BSR_ERR_BREAKDOWN: return "breakdown";
    case BSR_ERR_INTERNAL: return "internal error";
    }
    return "unknown status";
}

/* Detail of the last error in this thread. */
const char *bsr_last_error(void) { return last_error; }

/* Empty this thread's last-error message. */
void bsr_clear_error(void) { last_error[0] = 0; }

/* Record "message" for status s in this thread; returns s for `return bsr_error(...)`.
 * The message is formatted into a local buffer first: an argument may be
 * bsr_last_error() itself (a caller adding context to an inner error). */
bsr_status bsr_error(bsr_status s, const char *fmt, ...)
{
    char msg[sizeof last_error];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    memcpy(last_error, msg, sizeof msg);
    return s;
}

/* size in bytes of one value */
size_t bsr_precision_size(bsr_precision p) { return p == BSR_FLOAT ? sizeof(float) : sizeof(double); }

/* malloc that records what failed; zero-byte requests return a valid pointer.
 * A host-allocation event of the fault hook (an armed one fails as malloc would). */
void *bsr_malloc(size_t bytes, const char *what)
{
    void *p = bsr_fault_hit(BSR_FAULT_HOST_ALLOC) ? NULL : malloc(bytes ? bytes : 1);
    if (!p) bsr_error(BSR_ERR_NOMEM, "out of memory allocating %zu bytes for %s", bytes, what);
    else bsr_mem_advise(p, bytes);
    return p;
}

/* calloc that records BSR_ERR_NOMEM naming what was asked for (a fault-hook event). */
void *bsr_calloc(size_t count, size_t size, const char *what)
{
    void *p = bsr_fault_hit(BSR_FAULT_HOST_ALLOC) ? NULL : calloc(count ? count : 1, size ? size : 1);
    if (!p) bsr_error(BSR_ERR_NOMEM, "out of memory allocating %zu x %zu bytes for %s", count, size, what);
    else if (size && count <= SIZE_MAX / size) bsr_mem_advise(p, count * size);
    return p;
}

/* realloc that records BSR_ERR_NOMEM naming what was asked for (a fault-hook
 * event); on failure p stays allocated and unchanged, as with realloc. */
void *bsr_realloc(void *p, size_t bytes, const char *what)
{
    void *q = bsr_fault_hit(BSR_FAULT_HOST_ALLOC) ? NULL : realloc(p, bytes ? bytes : 1);
    if (!q) bsr_error(BSR_ERR_NOMEM, "out of memory growing %s to %zu bytes", what, bytes);
    else bsr_mem_advise(q, bytes);
    return q;
}
