/* SPDX-License-Identifier: BSD-3-Clause */
/* libbsrsolve.so's side of the CUDA backend (kernels/backend.h): the device
 * entry points of kernels/entry_points.def as forwarders into
 * libbsrsolve_cuda.so, which is loaded (dlopen) the first time a device is
 * asked for, so that libbsrsolve.so itself links against nothing from CUDA
 * and a CPU-only user needs no CUDA runtime.
 *
 * Where the backend is looked for, first found wins: the file named by the
 * environment variable BSR_CUDA_LIBRARY (then nowhere else); the folder of
 * libbsrsolve.so itself; the dynamic linker's search (LD_LIBRARY_PATH, the
 * cache).  Only the entries that start device work load it (opens()): a
 * context, the device count, the stencil and pyramid device runs.  Every
 * other entry before that finds no backend and does what a CPU-only build
 * does (the stand-ins of entry_points.def): no device object can exist yet.
 * When the backend cannot be loaded, the stand-ins refuse with the reason
 * (dlerror's words).  Built into libbsrsolve.so only, in CUDA builds;
 * libbsrsolve.a links the device code directly. */
#define _GNU_SOURCE   /* dladdr */
#include "backend.h"
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static _Atomic(const bsr_cuda_device_table *) loaded;   /* the backend's entries once loaded */
static pthread_once_t once = PTHREAD_ONCE_INIT;
static pthread_mutex_t why_lock = PTHREAD_MUTEX_INITIALIZER;
static char load_why[768] = "the CUDA backend (" BSR_CUDA_BACKEND_FILE ") is not loaded: no device was asked for yet";

/* Why the backend is absent: set while loading, read by the refusals. */
static void set_why(const char *fmt, const char *a, const char *b)
{
    pthread_mutex_lock(&why_lock);
    snprintf(load_why, sizeof load_why, fmt, a, b);
    pthread_mutex_unlock(&why_lock);
}

static const bsr_cuda_host_table host_fns = {
    .size = sizeof(bsr_cuda_host_table),
    .device_size = sizeof(bsr_cuda_device_table),
    .tables = BSR_CUDA_TABLES,
    .bsr_error = bsr_error,
#define BSR_HOST_IMPORT(ret, name, params, args) .name = name,
#define BSR_HOST_VOID(name, params, args) .name = name,
#include "host_imports.def"
};

/* dlopen(path); on failure load_why = what and dlerror's reason.  1 when opened. */
static int try_open(const char *path, void **h)
{
    *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (*h) return 1;
    const char *e = dlerror();
    set_why("the CUDA backend could not be loaded: %s%s", e ? e : path, "");
    return 0;
}

/* Open the backend (see the file's comment for where) and attach to it. */
static void load(void)
{
    void *h = NULL;
    const char *env = getenv("BSR_CUDA_LIBRARY");
    if (env && *env) {
        if (!try_open(env, &h)) return;
    } else {
        /* beside libbsrsolve.so when it is there (then its own failure is the
         * reason, e.g. a CUDA runtime missing), else by the loader's search */
        Dl_info self;
        char path[4096] = "";
        if (dladdr((void *)load, &self) && self.dli_fname && strrchr(self.dli_fname, '/')) {
            const int len = (int)(strrchr(self.dli_fname, '/') - self.dli_fname);
            snprintf(path, sizeof path, "%.*s/" BSR_CUDA_BACKEND_FILE, len, self.dli_fname);
            if (access(path, F_OK) != 0) path[0] = 0;
        }
        if (!try_open(path[0] ? path : BSR_CUDA_BACKEND_FILE, &h)) return;
    }
    bsr_cuda_attach_fn *attach = (bsr_cuda_attach_fn *)dlsym(h, BSR_CUDA_ATTACH_NAME);
    if (!attach) {
        set_why("the CUDA backend could not be loaded: %s defines no %s", env && *env ? env : BSR_CUDA_BACKEND_FILE,
                BSR_CUDA_ATTACH_NAME);
        dlclose(h);
        return;
    }
    char reason[512] = "";
    const bsr_cuda_device_table *t = attach(&host_fns, reason, sizeof reason);
    if (!t || t->size != sizeof(bsr_cuda_device_table)) {
        set_why("the CUDA backend could not be loaded: %s%s", t ? "its entry table differs" : reason, "");
        dlclose(h);
        return;
    }
    atomic_store_explicit(&loaded, t, memory_order_release);   /* kept open for the process's life */
}

/* Whether entry `name` starts device work (and so loads the backend). */
static int opens(const char *name)
{
    static const char *const list[] = {
        "bsr_cuda_context_init", "bsr_cuda_device_count", "bsr_pyr_host_alloc", "bsr_pyr_run_gpu",
        "bsr_pyr_calibrate", "bsr_pyr_longvec_gpu", "bsr_lv_calibrate", "bsr_rbgs_gpu", "bsr_sor_gpu",
        "bsr_stencil_gpu_d2d_gbs", "bsr_trsv_set_tuning"};
    for (size_t i = 0; i < sizeof list / sizeof list[0]; i++)
        if (!strcmp(name, list[i])) return 1;
    return 0;
}

/* The backend's entries for a call of entry `name`: loaded here if the
 * entry opens it; NULL when it is not (to be) loaded. */
static const bsr_cuda_device_table *backend(const char *name)
{
    const bsr_cuda_device_table *t = atomic_load_explicit(&loaded, memory_order_acquire);
    if (t || !opens(name)) return t;
    pthread_once(&once, load);
    return atomic_load_explicit(&loaded, memory_order_acquire);
}

/* A stand-in's refusal: status s for `what` (device: the one asked for, or
 * -1), with the reason the backend is absent. */
static bsr_status refuse(bsr_status s, const char *what, int device, const char *tail)
{
    char r[sizeof load_why];
    pthread_mutex_lock(&why_lock);
    memcpy(r, load_why, sizeof r);
    pthread_mutex_unlock(&why_lock);
    if (device >= 0) return bsr_error(s, "%s: CUDA device %d requested but %s%s", what, device, r, tail);
    return bsr_error(s, "%s: %s%s", what, r, tail);
}
#define BSR_NODEV(what) refuse(BSR_ERR_NODEVICE, what, -1, "")
#define BSR_NOCUDA(what) BSR_NODEV(what)
#define BSR_NODEV_DEVICE(what, device) refuse(BSR_ERR_NODEVICE, what, device, "")
#define BSR_NOIPC(what) refuse(BSR_ERR_UNSUPPORTED, what, -1, " (no IPC halo)")
#define BSR_NONCCL(what) refuse(BSR_ERR_UNSUPPORTED, what, -1, " (no NCCL halo)")

/* A forwarder ignores none of its parameters, but a stand-in may. */
#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic error "-Wmissing-prototypes"

#define BSR_DEVICE_ENTRY(ret, name, params, args, ...)           \
    ret name params                                              \
    {                                                            \
        const bsr_cuda_device_table *t_ = backend(#name);        \
        if (t_) return (t_->name) args;                          \
        __VA_ARGS__                                              \
    }
#define BSR_DEVICE_VOID(name, params, args, ...)                 \
    void name params                                             \
    {                                                            \
        const bsr_cuda_device_table *t_ = backend(#name);        \
        if (t_) { (t_->name) args; return; }                     \
        __VA_ARGS__                                              \
    }
#include "entry_points.def"
