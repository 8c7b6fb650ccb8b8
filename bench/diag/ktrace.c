/* SPDX-License-Identifier: BSD-3-Clause */
/* Diagnostic (issue 22, not built by CMake): a kernel timeline without
 * Nsight Systems (the GPU machine has none).  A CUPTI activity tracer
 * injected with CUDA_INJECTION64_PATH writes one line per kernel, memset
 * and copy (K|S|C start_ns end_ns name) to $KTRACE_OUT at exit; the gaps
 * between a solve's kernels are where the device waited on the host.
 * Tracing adds host time to every launch (a traced iteration is ~15%
 * longer): read the kernels' durations and the order, not the total.
 * Build on the device (the CUPTI record structs' version differs between
 * toolkits: take the newest the headers define):
 *   I=/usr/local/cuda/extras/CUPTI/include; H=$I/cupti_activity.h
 *   v() { grep -o "} $1[0-9]*;" $H | tr -d '}; ' | sort -V | tail -1; }
 *   L=$(dirname $(find /usr/local/cuda/ -name "libcupti.so*" | head -1))
 *   gcc -shared -fPIC -O2 -DKT=$(v CUpti_ActivityKernel) -DMT=$(v CUpti_ActivityMemset) \
 *       -DCT=$(v CUpti_ActivityMemcpy) -I$I -I/usr/local/cuda/include bench/diag/ktrace.c \
 *       -o /tmp/kt.so -L$L -lcupti -Wl,-rpath,$L
 *   KTRACE_OUT=trace.txt CUDA_INJECTION64_PATH=/tmp/kt.so build/bsrsolve --gen ... --backend cuda */
#include <cupti_activity.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
static FILE *out;
/* A fresh 8 MiB activity buffer for CUPTI to fill. */
static void CUPTIAPI req(uint8_t **buf, size_t *size, size_t *maxrec)
{
    *size = 8 << 20; *buf = aligned_alloc(8, *size); *maxrec = 0;
}
/* A filled buffer: one line per kernel, memset or copy record. */
static void CUPTIAPI done(CUcontext c, uint32_t s, uint8_t *buf, size_t size, size_t valid)
{
    CUpti_Activity *r = NULL;
    while (cuptiActivityGetNextRecord(buf, valid, &r) == CUPTI_SUCCESS) {
        if (r->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL || r->kind == CUPTI_ACTIVITY_KIND_KERNEL) {
            KT *k = (KT *)r;
            fprintf(out, "K %llu %llu %s\n", (unsigned long long)k->start, (unsigned long long)k->end, k->name);
        } else if (r->kind == CUPTI_ACTIVITY_KIND_MEMSET) {
            MT *m = (MT *)r;
            fprintf(out, "S %llu %llu memset_%llu\n", (unsigned long long)m->start, (unsigned long long)m->end, (unsigned long long)m->bytes);
        } else if (r->kind == CUPTI_ACTIVITY_KIND_MEMCPY) {
            CT *m = (CT *)r;
            fprintf(out, "C %llu %llu memcpy%d_%llu\n", (unsigned long long)m->start, (unsigned long long)m->end, (int)m->copyKind, (unsigned long long)m->bytes);
        }
    }
    free(buf);
}
/* At exit: flush CUPTI's buffers into the file. */
static void fin(void) { cuptiActivityFlushAll(1); if (out) fclose(out); }
/* Called by the CUDA driver when it loads the library named by
 * CUDA_INJECTION64_PATH. */
int InitializeInjection(void)
{
    const char *p = getenv("KTRACE_OUT");
    out = fopen(p ? p : "/tmp/ktrace.txt", "w");
    cuptiActivityRegisterCallbacks(req, done);
    cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMSET);
    cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMCPY);
    atexit(fin);
    return 1;
}
