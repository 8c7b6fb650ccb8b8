/* SPDX-License-Identifier: BSD-3-Clause */
/* The pattern of a threshold factorization made where its rows were made:
 * from the columns the device threshold rows published (ilut_gpu.cu), the
 * first-order factors L and U, the frozen pattern the device factorization
 * fills (lower: L, R and capped-out blocks merged; upper: the pivot, then U
 * and W merged; classes; where L's and U's blocks sit in it) and the level
 * schedules of L, U and the pattern's lower part, all on the device, into
 * F->dsym (a frozen bsr_ilu0_dsym).  The host's way (columns back, rows,
 * ilu_pattern_build, L and U, three level walks, uploads: src/ilu/
 * ilu_dev_rows.c, ilu_pattern.c, ilu_factor.c) is the reference: the same
 * arrays, bit for bit (bsr_ilu_dsym_check).  At 1M block rows it cost about
 * 0.15 s of a 0.55 s first setup (bench/RESULTS.md). */
#include "ilu0_sym_gpu.cuh"
#include "ilu_pattern_row.h"
#include <cub/cub.cuh>
#include <limits.h>
#include <string.h>

#define DP_T 256

/* Row k's lengths: L and U (first order, U with its pivot), the pattern's
 * lower and upper parts; tot[0..4] += their sums and the second-order count. */
__global__ void dp_count(int n, const int2 *__restrict__ ucnt, const int *__restrict__ lcnt, int *lenL, int *lenU,
                         int *lenF, int *lenG, unsigned long long *tot)
{
    const int k = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned long long v[5] = {0, 0, 0, 0, 0};
    if (k < n) {
        const int nl = lcnt[3 * (size_t)k], nr = lcnt[3 * (size_t)k + 1], nx = lcnt[3 * (size_t)k + 2];
        const int2 u = ucnt[k];
        lenL[k] = nl;
        lenU[k] = u.x;
        lenF[k] = nl + nr + nx;
        lenG[k] = u.x + u.y;
        v[0] = nl; v[1] = u.x; v[2] = nl + nr + nx; v[3] = u.x + u.y; v[4] = nr + nx + u.y;
    }
    for (int i = 0; i < 5; i++) {
        unsigned long long x = v[i];
        for (int o = 16; o > 0; o /= 2) x += __shfl_down_sync(0xffffffffu, x, o);
        if ((threadIdx.x & 31) == 0 && x) atomicAdd(tot + i, x);
    }
}

/* Row k of L, U and of the pattern's two parts (one thread a row). */
__global__ void dp_fill(int n, const int2 *__restrict__ ucnt, const int *__restrict__ ucol,
                        const long long *__restrict__ uoff, const int *__restrict__ lcnt, const int *__restrict__ lpool,
                        const long long *__restrict__ loff, const int *__restrict__ Lp, const int *__restrict__ Up,
                        const int *__restrict__ Fp, const int *__restrict__ Gp, int *Lc, int *Uc, int *Fc,
                        unsigned char *fk, int *Gc, unsigned char *gk, int *lmap, int *umap)
{
    const int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= n) return;
    const int nl = lcnt[3 * (size_t)k], nr = lcnt[3 * (size_t)k + 1], nx = lcnt[3 * (size_t)k + 2];
    const int *l = lpool + loff[k];
    for (int q = 0; q < nl; q++) Lc[Lp[k] + q] = l[q];
    const int2 c = ucnt[k];
    const int *u = ucol + uoff[k];
    for (int q = 0; q < c.x; q++) Uc[Up[k] + q] = u[q];
    ilu_pattern_row_fill(k, l, nl, l + nl, nr, l + nl + nr, nx, u, c.x, u + c.x, c.y, Fp[k], Gp[k], Fc, fk, Gc, gk,
                         lmap ? lmap + Lp[k] : NULL, umap ? umap + Up[k] : NULL);
}

static cudaError_t dp_alloc(void **p, size_t bytes) { return bsr_cu_malloc(p, bytes ? bytes : 1); }

/* Row pointers p (n + 1) of the lengths len (len[n] = 0). */
static cudaError_t dp_scan(int *len, int *p, int n, void **tmp, size_t *tb, cudaStream_t st)
{
    size_t need = 0;
    cudaError_t e = cudaMemsetAsync(len + n, 0, sizeof(int), st);
    if (e == cudaSuccess) e = cub::DeviceScan::ExclusiveSum(NULL, need, len, p, n + 1, st);
    if (e == cudaSuccess && need > *tb) {
        bsr_cu_free(*tmp);
        *tmp = NULL;
        *tb = 0;
        e = dp_alloc(tmp, need);
        if (e == cudaSuccess) *tb = need;
    }
    if (e == cudaSuccess) e = cub::DeviceScan::ExclusiveSum(*tmp, need, len, p, n + 1, st);
    return e;
}

/* S's arrays from the rows r (S->n set; S's arrays NULL). */
static bsr_status dp_build(bsr_ilu0_dsym *S, const ilu_dev_rows_d *r, cudaStream_t st)
{
    const int n = S->n;
    const size_t n1 = (size_t)n + 1;
    const unsigned nb = (unsigned)((n + DP_T - 1) / DP_T);
    int *len[4] = {NULL, NULL, NULL, NULL};
    unsigned long long *tot = NULL, h[5] = {0, 0, 0, 0, 0};
    void *tmp = NULL;
    size_t tb = 0;
    bsr_dsym_ws w;
    memset(&w, 0, sizeof w);
    BSR_TRY(bsr_cuda_dup_ints(&S->ap, r->ap, n1, st));
    BSR_TRY(bsr_cuda_dup_ints(&S->ac, r->ac, (size_t)S->nnzA, st));
    cudaError_t e = cudaSuccess;
    for (int i = 0; i < 4 && e == cudaSuccess; i++) e = dp_alloc((void **)&len[i], n1 * sizeof(int));
    if (e == cudaSuccess) e = dp_alloc((void **)&tot, sizeof h);
    if (e == cudaSuccess) e = dp_alloc((void **)&S->Lp, n1 * sizeof(int));
    if (e == cudaSuccess) e = dp_alloc((void **)&S->Up, n1 * sizeof(int));
    if (e == cudaSuccess) e = dp_alloc((void **)&S->Fp, n1 * sizeof(int));
    if (e == cudaSuccess) e = dp_alloc((void **)&S->Gp, n1 * sizeof(int));
    if (e == cudaSuccess) e = cudaMemsetAsync(tot, 0, sizeof h, st);
    if (e == cudaSuccess && n) {
        dp_count<<<nb, DP_T, 0, st>>>(n, r->ucnt, r->lcnt, len[0], len[1], len[2], len[3], tot);
        e = cudaGetLastError();
    }
    if (e == cudaSuccess) e = cudaMemcpyAsync(h, tot, sizeof h, cudaMemcpyDeviceToHost, st);
    if (e == cudaSuccess) e = cudaStreamSynchronize(st);
    bsr_status s = BSR_OK;
    if (e == cudaSuccess && (h[2] > INT_MAX || h[3] > INT_MAX))
        s = bsr_error(BSR_ERR_UNSUPPORTED, "ILU pattern: %llu + %llu blocks (> INT_MAX)", h[2], h[3]);
    if (s == BSR_OK && e == cudaSuccess) {
        S->nL = (int)h[0]; S->nU = (int)h[1]; S->nlo = (int)h[2]; S->nup = (int)h[3]; S->nsec = (long long)h[4];
        int *ptr[4] = {S->Lp, S->Up, S->Fp, S->Gp};
        for (int i = 0; i < 4 && e == cudaSuccess; i++) e = dp_scan(len[i], ptr[i], n, &tmp, &tb, st);
        if (e == cudaSuccess) e = dp_alloc((void **)&S->Lc, (size_t)S->nL * sizeof(int));
        if (e == cudaSuccess) e = dp_alloc((void **)&S->Uc, (size_t)S->nU * sizeof(int));
        if (e == cudaSuccess) e = dp_alloc((void **)&S->Fc, (size_t)S->nlo * sizeof(int));
        if (e == cudaSuccess) e = dp_alloc((void **)&S->Gc, (size_t)S->nup * sizeof(int));
        if (e == cudaSuccess) e = dp_alloc((void **)&S->fk, (size_t)S->nlo);
        if (e == cudaSuccess) e = dp_alloc((void **)&S->gk, (size_t)S->nup);
        /* without second-order or capped-out blocks the pattern is L, U: no maps */
        if (e == cudaSuccess && S->nsec) e = dp_alloc((void **)&S->lmap, (size_t)S->nL * sizeof(int));
        if (e == cudaSuccess && S->nsec) e = dp_alloc((void **)&S->umap, (size_t)S->nU * sizeof(int));
        if (e == cudaSuccess && n) {
            dp_fill<<<nb, DP_T, 0, st>>>(n, r->ucnt, r->ucol, r->uoff, r->lcnt, r->lpool, r->loff, S->Lp, S->Up, S->Fp,
                                        S->Gp, S->Lc, S->Uc, S->Fc, S->fk, S->Gc, S->gk, S->lmap, S->umap);
            e = cudaGetLastError();
        }
        for (int i = 0; i < 2 && e == cudaSuccess; i++) e = dp_alloc((void **)&S->rows[i], n1 * sizeof(int));
        if (e == cudaSuccess) e = dp_alloc((void **)&S->frows, n1 * sizeof(int));
        if (e == cudaSuccess) e = bsr_dsym_ws_init(&w, n, st);
        if (e == cudaSuccess)
            e = bsr_dsym_schedule(&w, S->Lp, S->Lc, 0, S->rows[0], &S->nlev[0], &S->level_ptr[0], &S->width[0], st);
        if (e == cudaSuccess)
            e = bsr_dsym_schedule(&w, S->Up, S->Uc, 1, S->rows[1], &S->nlev[1], &S->level_ptr[1], &S->width[1], st);
        if (e == cudaSuccess)
            e = bsr_dsym_schedule(&w, S->Fp, S->Fc, 0, S->frows, &S->fnlev, &S->flevel_ptr, &S->fwidth, st);
        if (e == cudaSuccess) e = cudaStreamSynchronize(st);
    }
    for (int i = 0; i < 4; i++) bsr_cu_free(len[i]);
    bsr_cu_free(tot); bsr_cu_free(tmp);
    bsr_dsym_ws_free(&w);
    if (s == BSR_OK && e != cudaSuccess) {
        cudaGetLastError();
        s = bsr_error(e == cudaErrorMemoryAllocation ? BSR_ERR_NOMEM : BSR_ERR_CUDA,
                      "ILU pattern on the device (%d block rows, %d + %d blocks): %s", n, S->nlo, S->nup,
                      cudaGetErrorString(e));
    }
    return s;
}

extern "C" bsr_status bsr_ilut_dsym_build(bsr_context *ctx, bsr_ilu *F, const ilu_dev_rows_d *r)
{
    BSR_CHECK_ARG(ctx && F && r, "bsr_ilut_dsym_build: NULL argument");
    BSR_CHECK_ARG(F->mode == 1, "bsr_ilut_dsym_build: ILU(0)'s pattern is its symbolic phase's");
    bsr_ilu0_dsym *S = (bsr_ilu0_dsym *)bsr_calloc(1, sizeof *S, "ILU pattern on the device");
    if (!S) return BSR_ERR_NOMEM;
    S->ctx = ctx;
    S->n = F->n;
    S->nnzA = F->nnzbA;
    S->frozen = 1;
    bsr_status s = dp_build(S, r, bsr_cuda_stream(ctx));
    if (s != BSR_OK) { bsr_dsym_free(S); return s; }
    if (F->dsym && F->dsym_free) F->dsym_free(F->dsym);
    F->dsym = S;
    F->dsym_free = bsr_dsym_free;
    bsr_ilu_symbolic_stats(F, S->nL, S->nU, S->nlev[0], S->nlev[1]);
    F->st.pattern_id++;
    bsr_prof_mark("ilu factor: device pattern, L, U and their schedules");
    return BSR_OK;
}

/* The device's arrays against the host's: S against F->fz, F->L, F->U and
 * the three schedules. */
extern "C" bsr_status bsr_ilu_dsym_check(const bsr_ilu *F)
{
    const bsr_ilu0_dsym *S = bsr_ilu_dsym(F);
    BSR_CHECK_ARG(S && S->frozen && F->fz && F->L && F->U && F->lvL && F->lvU && F->fz->lv,
                  "bsr_ilu_dsym_check: F holds no threshold pattern made both on the device and on the host");
    BSR_TRY(bsr_cuda_enter(S->ctx));
    const ilu_pattern *z = F->fz;
    const size_t n1 = (size_t)S->n + 1, I = sizeof(int);
    if (S->nL != F->L->nnzb || S->nU != F->U->nnzb || S->nlo != z->nlo || S->nup != z->nup || S->nsec != z->nsec ||
        S->nlev[0] != F->lvL->nlevels || S->nlev[1] != F->lvU->nlevels || S->fnlev != z->lv->nlevels ||
        S->width[0] != F->lvL->max_width || S->width[1] != F->lvU->max_width || S->fwidth != z->lv->max_width)
        return bsr_error(BSR_ERR_INTERNAL, "ILU pattern on the device: sizes (L+U %d+%d, pattern %d+%d, %lld second "
                         "order, levels %d/%d/%d) differ from the host's (%d+%d, %lld+%lld, %lld, %d/%d/%d)",
                         S->nL, S->nU, S->nlo, S->nup, S->nsec, S->nlev[0], S->nlev[1], S->fnlev, F->L->nnzb,
                         F->U->nnzb, (long long)z->nlo, (long long)z->nup, (long long)z->nsec, F->lvL->nlevels,
                         F->lvU->nlevels, z->lv->nlevels);
    const struct { const void *dev, *host; size_t bytes; const char *what; } a[] = {
        {S->Lp, F->L->rowptr, n1 * I, "L's row pointers"}, {S->Lc, F->L->colind, (size_t)S->nL * I, "L's columns"},
        {S->Up, F->U->rowptr, n1 * I, "U's row pointers"}, {S->Uc, F->U->colind, (size_t)S->nU * I, "U's columns"},
        {S->Fp, z->lp, n1 * I, "the lower pattern's row pointers"}, {S->Fc, z->lc, (size_t)S->nlo * I, "the lower pattern's columns"},
        {S->fk, z->lk, (size_t)S->nlo, "the lower pattern's classes"},
        {S->Gp, z->up, n1 * I, "the upper pattern's row pointers"}, {S->Gc, z->uc, (size_t)S->nup * I, "the upper pattern's columns"},
        {S->gk, z->uk, (size_t)S->nup, "the upper pattern's classes"},
        {S->lmap, z->lmap, S->lmap ? (size_t)S->nL * I : 0, "L's places in the pattern"},
        {S->umap, z->umap, S->umap ? (size_t)S->nU * I : 0, "U's places in the pattern"},
        {S->rows[0], F->lvL->rows, (size_t)S->n * I, "L's schedule"}, {S->rows[1], F->lvU->rows, (size_t)S->n * I, "U's schedule"},
        {S->frows, z->lv->rows, (size_t)S->n * I, "the lower pattern's schedule"}};
    if ((S->lmap != NULL) != (z->lmap != NULL) || (S->umap != NULL) != (z->umap != NULL))
        return bsr_error(BSR_ERR_INTERNAL, "ILU pattern on the device: maps of L and U %s, on the host %s",
                         S->lmap ? "made" : "absent", z->lmap ? "made" : "absent");
    for (size_t i = 0; i < sizeof a / sizeof a[0]; i++)
        BSR_TRY(bsr_dsym_same(a[i].dev, a[i].host, a[i].bytes, a[i].what));
    const struct { const int *d, *h; int nlev; const char *what; } lp[] = {
        {S->level_ptr[0], F->lvL->level_ptr, S->nlev[0], "L's level pointers"},
        {S->level_ptr[1], F->lvU->level_ptr, S->nlev[1], "U's level pointers"},
        {S->flevel_ptr, z->lv->level_ptr, S->fnlev, "the lower pattern's level pointers"}};
    for (int i = 0; i < 3; i++)
        if (memcmp(lp[i].d, lp[i].h, ((size_t)lp[i].nlev + 1) * I))
            return bsr_error(BSR_ERR_INTERNAL, "ILU pattern on the device: %s differ from the host's", lp[i].what);
    return BSR_OK;
}
