/* SPDX-License-Identifier: BSD-3-Clause */
/* Per-thread workspace of the ILU row kernel: a sparse accumulator of b x b
 * blocks (pos[] maps a column to its slot) that grows on demand, and the
 * per-factorization set of workspaces kept in F for refactor. */
#define _DEFAULT_SOURCE   /* posix_memalign */
#include "ilu_impl.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Create a row workspace for n block columns of b x b blocks. */
bsr_status ilu_work_init(ilu_work *w, int n, int b)
{
    memset(w, 0, sizeof *w);
    int bb = b * b;
    w->cap = 64;
    w->pos = bsr_malloc(sizeof(int) * (size_t)(n > 0 ? n : 1), "ILU workspace");
    w->scol = bsr_malloc(sizeof(int) * w->cap, "ILU workspace");
    w->heap = bsr_malloc(sizeof(int) * w->cap, "ILU workspace");
    w->lsel = bsr_malloc(sizeof(int) * w->cap, "ILU workspace");
    w->usel = bsr_malloc(sizeof(int) * w->cap, "ILU workspace");
    w->wsel = bsr_malloc(sizeof(int) * w->cap, "ILU workspace");
    w->rsel = bsr_malloc(sizeof(int) * w->cap, "ILU workspace");
    w->tslot = bsr_malloc(sizeof(int) * w->cap, "ILU workspace");
    w->tq = bsr_malloc(sizeof(int) * w->cap, "ILU workspace");
    w->xsel = bsr_malloc(sizeof(int) * w->cap, "ILU workspace");
    w->key = bsr_malloc(sizeof(double) * w->cap, "ILU workspace");
    w->sval = bsr_malloc(sizeof(double) * (size_t)w->cap * bb, "ILU workspace");
    w->lbuf = bsr_malloc(sizeof(double) * (size_t)w->cap * bb, "ILU workspace");
    w->tmp = bsr_malloc(sizeof(double) * 3 * bb, "ILU workspace");
    if (!w->pos || !w->scol || !w->heap || !w->lsel || !w->usel || !w->wsel || !w->rsel || !w->tslot || !w->tq || !w->xsel || !w->key || !w->sval || !w->lbuf ||
        !w->tmp) {
        ilu_work_free(w);
        return BSR_ERR_NOMEM;
    }
    w->lblk = w->tmp + bb;
    for (int i = 0; i < n; i++) w->pos[i] = -1;
    return BSR_OK;
}

/* Chunks of 8 MiB (or one row's size), aligned to 2 MiB: huge pages where
 * the kernel grants them, over the whole chunk (a chunk malloc places is
 * only page aligned, which left a quarter of it to 4 KiB pages), so that
 * first touches fault once per 2 MiB. */
#define CHUNK_BYTES ((size_t)8 << 20)
#define CHUNK_ALIGN ((size_t)2 << 20)

/* A chunk of bytes (a multiple of 16) at a 2 MiB boundary, advised to huge
 * pages; NULL with the allocator's message when memory runs out. */
static ilu_chunk *chunk_alloc(size_t bytes)
{
    void *p = NULL;
    if (bsr_fault_hit(BSR_FAULT_HOST_ALLOC) || posix_memalign(&p, CHUNK_ALIGN, bytes)) {
        bsr_error(BSR_ERR_NOMEM, "out of memory allocating %zu bytes for %s", bytes, "ILU row arena");
        return NULL;
    }
    bsr_mem_advise(p, bytes);
    return p;
}

void *ilu_arena_alloc(ilu_work *w, size_t bytes)
{
    const size_t hdr = (sizeof(ilu_chunk) + 15) & ~(size_t)15;
    bytes = (bytes + 15) & ~(size_t)15;
    ilu_chunk *c = w->arena;
    if (!c || c->used + bytes > c->cap) {
        size_t cap = bytes > CHUNK_BYTES - hdr ? bytes : CHUNK_BYTES - hdr;
        c = chunk_alloc(hdr + cap);
        if (!c) return NULL;
        c->next = w->arena;
        c->used = 0;
        c->cap = cap;
        w->arena = c;
    }
    void *p = (char *)c + hdr + c->used;
    c->used += bytes;
    return p;
}

void ilu_arena_free(ilu_work *w)
{
    for (ilu_chunk *c = w->arena, *nx; c; c = nx) { nx = c->next; free(c); }
    w->arena = NULL;
}

/* Free a row workspace. */
void ilu_work_free(ilu_work *w)
{
    ilu_arena_free(w);
    free(w->pos); free(w->scol); free(w->heap); free(w->lsel); free(w->usel); free(w->wsel); free(w->rsel); free(w->tslot); free(w->tq); free(w->xsel); free(w->key);
    free(w->sval); free(w->lbuf); free(w->tmp);
    memset(w, 0, sizeof *w);
}

/* Double the slot capacity (all per-slot arrays together). */
static int work_grow(ilu_work *w, int b)
{
    int cap = 2 * w->cap;
    int **a[9] = {&w->scol, &w->heap, &w->lsel, &w->usel, &w->wsel, &w->rsel, &w->tslot, &w->tq, &w->xsel};
    for (int t = 0; t < 9; t++) {
        int *p = bsr_realloc(*a[t], sizeof(int) * cap, "ILU workspace");
        if (!p) return 0;
        *a[t] = p;   /* stored back at once so that a later failure leaks nothing */
    }
    double *v = bsr_realloc(w->key, sizeof(double) * cap, "ILU workspace");
    if (!v) return 0;
    w->key = v;
    v = bsr_realloc(w->sval, sizeof(double) * (size_t)cap * b * b, "ILU workspace");
    if (!v) return 0;
    w->sval = v;
    v = bsr_realloc(w->lbuf, sizeof(double) * (size_t)cap * b * b, "ILU workspace");
    if (!v) return 0;
    w->lbuf = v;
    w->cap = cap;
    return 1;
}

int ilu_work_reserve(ilu_work *w, int b, int ns)
{
    while (w->cap < ns)
        if (!work_grow(w, b)) return 0;
    return 1;
}

/* A new slot for column j, absent from the row, its block left unset (the
 * caller writes it whole); -1 when memory runs out. */
int ilu_slot_new(ilu_work *w, int b, int j)
{
    if (w->ns == w->cap && !work_grow(w, b)) return -1;
    int s = w->ns++;
    w->pos[j] = s;
    w->scol[s] = j;
    return s;
}

/* Slot of block column j in the row workspace; a new zero block when absent and create is set,
 * else -1 (*nomem set when memory runs out). */
int ilu_slot(ilu_work *w, int b, int j, int create, int *nomem)
{
    int s = w->pos[j];
    if (s >= 0 || !create) return s;
    if ((s = ilu_slot_new(w, b, j)) < 0) { *nomem = 1; return -1; }
    memset(w->sval + (size_t)s * b * b, 0, sizeof(double) * b * b);
    return s;
}

/* Per-thread workspaces: kept in F between factorizations (refactor
 * allocates nothing here unless more threads are asked for).  Each holds an
 * n-entry column map: made by the thread of the factorization's team that
 * will use it (schedule(static, 1): thread t, workspace t), in parallel and
 * in its memory, not nt x n entries written by one thread. */
bsr_status ilu_get_work(bsr_ilu *F, int nt)
{
    if (F->nwork < nt) {
        ilu_work_release(F);
        F->work = bsr_calloc((size_t)nt, sizeof(ilu_work), "ILU workspaces");
        if (!F->work) return BSR_ERR_NOMEM;
        F->nwork = nt;   /* zeroed workspaces free as empty ones */
        int fail = 0;
        #pragma omp parallel for schedule(static, 1) num_threads(nt) reduction(| : fail)
        for (int t = 0; t < nt; t++) fail |= ilu_work_init(&F->work[t], F->n, F->b) != BSR_OK;
        if (fail) {   /* the threads' messages are theirs (thread-local): say it here */
            ilu_work_release(F);
            return bsr_error(BSR_ERR_NOMEM, "ILU: out of memory for %d thread workspaces of %d block columns", nt, F->n);
        }
    }
    for (int t = 0; t < F->nwork; t++) {
        ilu_work *w = &F->work[t];
        w->dropped = w->sec_used = w->wkept = 0;
        w->rmax = w->nreg = w->progress_rows = 0;
        w->msg[0] = 0;
    }
    return BSR_OK;
}

/* Free the per-thread workspaces kept in F. */
void ilu_work_release(bsr_ilu *F)
{
    for (int t = 0; t < F->nwork; t++) ilu_work_free(&F->work[t]);
    free(F->work);
    F->work = NULL;
    F->nwork = 0;
}
