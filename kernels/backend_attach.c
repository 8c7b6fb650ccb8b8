/* SPDX-License-Identifier: BSD-3-Clause */
/* The CUDA backend library's side of kernels/backend.h: the host functions
 * the device code calls, each a forwarder through the table libbsrsolve.so
 * hands over, and the one exported function that takes that table and
 * returns the backend's entry points.  BSR_CUDA_TABLES (CMake) is a hash of
 * the lists and this header: a backend from another build is refused.  Compiled into libbsrsolve_cuda.so
 * only (libbsrsolve.a's device code calls the host functions directly); its
 * version script makes everything but bsr_cuda_backend_attach local. */
#include "backend.h"
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static bsr_cuda_host_table host_fns;   /* libbsrsolve.so's functions, set by attach */

#define BSR_HOST_IMPORT(ret, name, params, args) \
    ret name params { return (host_fns.name) args; }
#define BSR_HOST_VOID(name, params, args) \
    void name params { (host_fns.name) args; }
#include "host_imports.def"

/* printf-like: formatted here, recorded by the library's bsr_error (its
 * message buffer has the same size). */
bsr_status bsr_error(bsr_status s, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return (host_fns.bsr_error)(s, "%s", msg);
}

static const bsr_cuda_device_table dev_fns = {
    .size = sizeof(bsr_cuda_device_table),
#define BSR_DEVICE_ENTRY(ret, name, params, args, ...) .name = name,
#define BSR_DEVICE_VOID(name, params, args, ...) .name = name,
#include "entry_points.def"
};

bsr_cuda_attach_fn bsr_cuda_backend_attach;

/* The backend's entry points for the library whose functions are *h; NULL
 * and why when h comes from another version or table layout. */
const bsr_cuda_device_table *bsr_cuda_backend_attach(const bsr_cuda_host_table *h, char *why, size_t wlen)
{
    if (!h || h->size != sizeof host_fns || h->device_size != sizeof dev_fns || !h->tables
        || strcmp(h->tables, BSR_CUDA_TABLES) != 0) {
        snprintf(why, wlen, "the CUDA backend was built with tables %s, the library with %s: "
                 "the two come from different builds", BSR_CUDA_TABLES, h && h->tables ? h->tables : "none");
        return NULL;
    }
    host_fns = *h;
    return &dev_fns;
}
