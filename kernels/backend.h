/* SPDX-License-Identifier: BSD-3-Clause */
/* The two tables between libbsrsolve.so and its CUDA backend library
 * libbsrsolve_cuda.so (loaded when a device is asked for, so that the host
 * library links against nothing from CUDA):
 *   - the device table: the backend's entry points (entry_points.def), which
 *     libbsrsolve.so's forwarders of the same names call
 *     (src/cudaload/cuda_load.c);
 *   - the host table: the library's functions the device code calls
 *     (host_imports.def, and bsr_error), which the backend's hidden
 *     forwarders of the same names call (kernels/backend_attach.c).
 * Both are written by the preprocessor from the lists, so a name added to a
 * list reaches both sides.  The backend exports one function,
 * bsr_cuda_backend_attach, which takes the host table and returns the device
 * table; it refuses a library built from other lists (BSR_CUDA_TABLES, a
 * hash of the lists and this header that CMake passes to both sides). */
#ifndef BSR_CUDA_BACKEND_H
#define BSR_CUDA_BACKEND_H
#include "internal.h"
#include "gpu_ilu.h"
#include "ilu_impl.h"
#include "ilu0_plan.h"
#include "pyramid_impl.h"
#include "stencil_impl.h"
#include "trsv/trsv.h"

/* The functions of libbsrsolve.so the backend calls. */
typedef struct bsr_cuda_host_table {
    size_t size;            /* sizeof(bsr_cuda_host_table) */
    size_t device_size;     /* sizeof(bsr_cuda_device_table) the library expects */
    const char *tables;     /* BSR_CUDA_TABLES: the lists' hash the library was built with */
    bsr_status (*bsr_error)(bsr_status s, const char *fmt, ...);
#define BSR_HOST_IMPORT(ret, name, params, args) ret (*name) params;
#define BSR_HOST_VOID(name, params, args) void (*name) params;
#include "host_imports.def"
#undef BSR_HOST_IMPORT
#undef BSR_HOST_VOID
} bsr_cuda_host_table;

/* The backend's entry points. */
typedef struct bsr_cuda_device_table {
    size_t size;            /* sizeof(bsr_cuda_device_table) */
#define BSR_DEVICE_ENTRY(ret, name, params, args, ...) ret (*name) params;
#define BSR_DEVICE_VOID(name, params, args, ...) void (*name) params;
#include "entry_points.def"
#undef BSR_DEVICE_ENTRY
#undef BSR_DEVICE_VOID
} bsr_cuda_device_table;

/* The backend's one exported function: H is kept for the backend's
 * lifetime; NULL and a reason in why[wlen] when H does not fit. */
#define BSR_CUDA_ATTACH_NAME "bsr_cuda_backend_attach"
typedef const bsr_cuda_device_table *bsr_cuda_attach_fn(const bsr_cuda_host_table *H, char *why, size_t wlen);
#endif
