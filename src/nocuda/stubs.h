/* SPDX-License-Identifier: BSD-3-Clause */
/* CPU-only build: what turns a list of device entry points (lines
 * BSR_DEVICE_ENTRY(return type, name, (parameters), (arguments), body) and
 * BSR_DEVICE_VOID(name, (parameters), (arguments), body)) into their
 * stand-ins: include this, the headers declaring the entry points, then the
 * list.  Used for the library's list (kernels/entry_points.def, by
 * src/nocuda/stubs.c) and the benchmark anchors' (bench/anchors/entry_points.def). */
#ifndef BSR_NOCUDA_STUBS_H
#define BSR_NOCUDA_STUBS_H
#include "internal.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The refusals of the stand-ins (the messages callers and tests see). */
#define BSR_NODEV(what) bsr_error(BSR_ERR_NODEVICE, "%s: bsrsolve was built without CUDA", what)
#define BSR_NOCUDA(what) bsr_error(BSR_ERR_NODEVICE, "%s: built without CUDA", what)
#define BSR_NODEV_DEVICE(what, device) \
    bsr_error(BSR_ERR_NODEVICE, "%s: CUDA device %d requested but bsrsolve was built without CUDA", what, device)
#define BSR_NOIPC(what) bsr_error(BSR_ERR_UNSUPPORTED, "%s: bsrsolve was built without CUDA (no IPC halo)", what)
#define BSR_NONCCL(what) bsr_error(BSR_ERR_UNSUPPORTED, "%s: bsrsolve was built without CUDA (no NCCL halo)", what)

/* A stand-in ignores most of its parameters; every one must match a
 * declaration (else the list and the headers disagree). */
#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic error "-Wmissing-prototypes"

#define BSR_DEVICE_ENTRY(ret, name, params, args, ...) \
    ret name params { __VA_ARGS__ }
#define BSR_DEVICE_VOID(name, params, args, ...) \
    void name params { __VA_ARGS__ }
#endif
