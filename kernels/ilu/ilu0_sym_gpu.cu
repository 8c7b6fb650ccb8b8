/* SPDX-License-Identifier: BSD-3-Clause */
/* The symbolic phase of the device ILU(0) done on the device (natural order):
 * the L/U patterns and the level schedules of both triangles built from A's
 * device mirror, so that the setup of the CUDA backend touches no host
 * memory beyond A itself.  The host's symbolic phase (map of A, patterns,
 * sequential level walks; ~20 ints a row of fresh pages) cost 25 ms on a
 * quiet host for 1M block rows and up to 4x that on a busy one (bench/RESULTS.md).
 *
 *  1. split: with sorted columns and the diagonal present, row i of L is
 *     the prefix of A's row below i, row i of U the rest (pivot first): two
 *     kernels and a scan;
 *  2. levels: level(i) = 1 + max level of its dependencies, one thread per
 *     row, sync-free: rows handed out in dependency order by a block
 *     ticket, a row polls its dependencies' levels (-1 until stored; those
 *     of its own CUDA block in shared memory), so the walk costs the chain
 *     of levels, not n steps;
 *  3. schedule: rows sorted by level with a stable radix sort (rows ascending
 *     within a level: the host's order), level pointers from the sorted keys.
 * BSR_ILU0_SYM_CHECK=1 compares every array with the host's symbolic phase. */
#include "ilu0_sym_gpu.cuh"
#include "sync_mm.cuh"
#include <cub/cub.cuh>
#include <string.h>

#define SYM_T 256

/* Lengths of row i's L part and U part (pivot included); *bad = the smallest
 * row without its diagonal block. */
__global__ void sym_count(int n, const int *__restrict__ ap, const int *__restrict__ ac, int *lenL, int *lenU, int *bad)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const int a0 = ap[i], a1 = ap[i + 1];
    int p = a0;
    while (p < a1 && ac[p] < i) p++;
    lenL[i] = p - a0;
    lenU[i] = a1 - p;
    if (p == a1 || ac[p] != i) atomicMin(bad, i);
}

/* Columns of L and U: row i of A split at its diagonal. */
__global__ void sym_fill(int n, const int *__restrict__ ap, const int *__restrict__ ac, const int *__restrict__ Lp,
                         const int *__restrict__ Up, int *__restrict__ Lc, int *__restrict__ Uc)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const int a0 = ap[i], nl = Lp[i + 1] - Lp[i], nu = Up[i + 1] - Up[i];
    for (int q = 0; q < nl; q++) Lc[Lp[i] + q] = ac[a0 + q];
    for (int q = 0; q < nu; q++) Uc[Up[i] + q] = ac[a0 + nl + q];
}

/* lev[i] for the lower (upper = 0) or upper triangle of A's pattern (lev
 * preset to -1); *nlev = levels.  Position t of the walk is row t (lower) or
 * n-1-t (upper); a row depends only on earlier positions, which belong to
 * earlier tickets or its own CUDA block, so the polls cannot deadlock.  A
 * level is polled while its thread stores it (the level is the payload, see
 * sync_mm.cuh): in the block's shared copy by shared atomics, in lev by
 * relaxed device-scope loads and stores (a plain or volatile access there was
 * a data race; racecheck reported the shared one). */
__global__ void __launch_bounds__(SYM_T) sym_levels(int n, int upper, const int *__restrict__ ap,
                                                    const int *__restrict__ ac, int *lev, int *ticket, int *nlev)
{
    __shared__ int vb;
    __shared__ int own[SYM_T];   /* levels of this block's positions */
    if (threadIdx.x == 0) vb = atomicAdd(ticket, 1);
    own[threadIdx.x] = -1;
    __syncthreads();
    const int t0 = vb * SYM_T, t = t0 + threadIdx.x;
    int l = -1;
    if (t < n) {
        const int i = upper ? n - 1 - t : t;
        const int a0 = ap[i], a1 = ap[i + 1];
        l = 0;
        for (int p = a0; p < a1; p++) {
            const int j = ac[p];
            if (upper ? j <= i : j >= i) continue;
            const int tj = upper ? n - 1 - j : j;
            int v;
            if (tj >= t0) while ((v = sh_poll(&own[tj - t0])) < 0) __nanosleep(16);
            else while ((v = ld_relaxed(lev + j)) < 0) __nanosleep(32);
            l = max(l, v + 1);
        }
        sh_publish(&own[threadIdx.x], l);
        st_relaxed(lev + i, l);
    }
    l = __reduce_max_sync(0xffffffffu, l);
    if ((threadIdx.x & 31) == 0 && l >= 0) atomicMax(nlev, l + 1);
}

__global__ void sym_iota(int n, int *v)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) v[i] = i;
}

/* lp[l] = first position of level l in the sorted keys, lp[nlev] = n. */
__global__ void sym_level_ptr(int n, const unsigned *__restrict__ key, int *lp)
{
    const int p = blockIdx.x * blockDim.x + threadIdx.x;
    if (p >= n) return;
    if (p == 0 || key[p - 1] != key[p]) lp[key[p]] = p;
    if (p == n - 1) lp[key[p] + 1] = n;
}

extern "C" void bsr_dsym_free(void *v)
{
    bsr_ilu0_dsym *S = (bsr_ilu0_dsym *)v;
    if (!S) return;
    if (bsr_cuda_enter(S->ctx) != BSR_OK) bsr_clear_error();
    bsr_cu_free(S->ap); bsr_cu_free(S->ac); bsr_cu_free(S->Lp); bsr_cu_free(S->Lc); bsr_cu_free(S->Up); bsr_cu_free(S->Uc);
    for (int w = 0; w < 2; w++) { bsr_cu_free(S->rows[w]); free(S->level_ptr[w]); }
    bsr_cu_free(S->Fp); bsr_cu_free(S->Fc); bsr_cu_free(S->Gp); bsr_cu_free(S->Gc); bsr_cu_free(S->fk); bsr_cu_free(S->gk);
    bsr_cu_free(S->lmap); bsr_cu_free(S->umap); bsr_cu_free(S->frows);
    free(S->flevel_ptr);
    free(S);
}

cudaError_t bsr_dsym_ws_init(bsr_dsym_ws *w, int n, cudaStream_t st)
{
    memset(w, 0, sizeof *w);
    w->n = n;
    const size_t n1 = (size_t)n + 1;
    cudaError_t e = bsr_cu_malloc((void **)&w->lev, n1 * sizeof(int));
    if (e == cudaSuccess) e = bsr_cu_malloc((void **)&w->iota, n1 * sizeof(int));
    if (e == cudaSuccess) e = bsr_cu_malloc((void **)&w->key, n1 * sizeof(unsigned));
    if (e == cudaSuccess) e = bsr_cu_malloc((void **)&w->cnt, 2 * sizeof(int));
    if (e == cudaSuccess && n) {
        sym_iota<<<(unsigned)((n + SYM_T - 1) / SYM_T), SYM_T, 0, st>>>(n, w->iota);
        e = cudaGetLastError();
    }
    return e;
}

void bsr_dsym_ws_free(bsr_dsym_ws *w)
{
    bsr_cu_free(w->lev); bsr_cu_free(w->iota); bsr_cu_free(w->key); bsr_cu_free(w->cnt); bsr_cu_free(w->tmp);
    memset(w, 0, sizeof *w);
}

/* Levels, then rows sorted by level (stable). */
cudaError_t bsr_dsym_schedule(bsr_dsym_ws *w, const int *p, const int *c, int upper, int *rows, int *nlev,
                              int **level_ptr, int *width, cudaStream_t st)
{
    const int n = w->n;
    *nlev = 0;
    *width = 0;
    *level_ptr = NULL;
    if (n == 0) {
        *level_ptr = (int *)bsr_calloc(1, sizeof(int), "device level pointers");
        return *level_ptr ? cudaSuccess : cudaErrorMemoryAllocation;
    }
    const unsigned nb = (unsigned)((n + SYM_T - 1) / SYM_T);
    int h[2] = {0, 0};
    cudaError_t e = cudaMemsetAsync(w->lev, 0xff, (size_t)n * sizeof(int), st);
    if (e == cudaSuccess) e = cudaMemsetAsync(w->cnt, 0, 2 * sizeof(int), st);
    if (e == cudaSuccess) {
        sym_levels<<<nb, SYM_T, 0, st>>>(n, upper, p, c, w->lev, w->cnt, w->cnt + 1);
        e = cudaGetLastError();
    }
    if (e == cudaSuccess) e = cudaMemcpyAsync(h, w->cnt, sizeof h, cudaMemcpyDeviceToHost, st);
    if (e == cudaSuccess) e = cudaStreamSynchronize(st);
    if (e != cudaSuccess) return e;
    const int nl = h[1];
    *level_ptr = (int *)bsr_calloc((size_t)nl + 1, sizeof(int), "device level pointers");
    if (!*level_ptr) return cudaErrorMemoryAllocation;
    int bits = 1;
    while (bits < 31 && (1u << bits) < (unsigned)nl) bits++;
    size_t need = 0;
    e = cub::DeviceRadixSort::SortPairs(NULL, need, (const unsigned *)w->lev, w->key, w->iota, rows, n, 0, bits, st);
    if (e == cudaSuccess && need > w->tmp_bytes) {
        bsr_cu_free(w->tmp);
        w->tmp = NULL;
        w->tmp_bytes = 0;
        e = bsr_cu_malloc(&w->tmp, need);
        if (e == cudaSuccess) w->tmp_bytes = need;
    }
    if (e == cudaSuccess)
        e = cub::DeviceRadixSort::SortPairs(w->tmp, need, (const unsigned *)w->lev, w->key, w->iota, rows, n, 0, bits, st);
    *nlev = nl;
    if (e == cudaSuccess) {
        sym_level_ptr<<<nb, SYM_T, 0, st>>>(n, w->key, w->lev);   /* lev is free again: level pointers */
        e = cudaGetLastError();
    }
    if (e == cudaSuccess) e = cudaMemcpyAsync(*level_ptr, w->lev, ((size_t)nl + 1) * sizeof(int), cudaMemcpyDeviceToHost, st);
    if (e == cudaSuccess) e = cudaStreamSynchronize(st);
    for (int l = 0; l < nl && e == cudaSuccess; l++) *width = max(*width, (*level_ptr)[l + 1] - (*level_ptr)[l]);
    return e;
}

bsr_status bsr_dsym_same(const void *dev, const void *host, size_t bytes, const char *what)
{
    if (!bytes) return BSR_OK;
    void *v = malloc(bytes);
    if (!v) return bsr_error(BSR_ERR_NOMEM, "device pattern check");
    bsr_status s = BSR_OK;
    if (cudaMemcpy(v, dev, bytes, cudaMemcpyDeviceToHost) != cudaSuccess)
        s = bsr_error(BSR_ERR_CUDA, "device pattern check: %s", cudaGetErrorString(cudaGetLastError()));
    else if (memcmp(v, host, bytes))
        s = bsr_error(BSR_ERR_INTERNAL, "ILU pattern made on the device: %s differs from the host's", what);
    free(v);
    return s;
}

/* Device array of cnt ints equal to the host array h (the check). */
static bsr_status same_ints(const int *dev, const int *h, size_t cnt, const char *what)
{
    return bsr_dsym_same(dev, h, cnt * sizeof(int), what);
}

/* BSR_ILU0_SYM_CHECK=1: S equals the host's symbolic phase of A, array for array. */
static bsr_status sym_check(const bsr_ilu0_dsym *S, const bsr_ilu *F, const bsr_matrix *A)
{
    static int on = -1;   /* read once: tests set it before the first call */
    if (on < 0) { const char *env = getenv("BSR_ILU0_SYM_CHECK"); on = env && atoi(env) == 1; }
    if (!on) return BSR_OK;
    bsr_ilu_options o = F->opt;
    o.order.kind = BSR_ORDER_NATURAL;
    o.match = BSR_MATCH_NONE;
    bsr_ilu *H = NULL;
    BSR_TRY(ilu_sym_build(A, &o, NULL, NULL, &H));   /* the host's symbolic value */
    const size_t n = (size_t)S->n;
    bsr_status s = BSR_OK;
    for (size_t p = 0; p < (size_t)S->nnzA && s == BSR_OK; p++)
        if (H->asrc[p] != (int)p) s = bsr_error(BSR_ERR_INTERNAL, "ILU(0) device symbolic phase: the host's map of A is not the identity");
    if (s == BSR_OK && (H->L->nnzb != S->nL || H->U->nnzb != S->nU || H->lvL->nlevels != S->nlev[0] ||
                        H->lvU->nlevels != S->nlev[1] || H->lvL->max_width != S->width[0] || H->lvU->max_width != S->width[1]))
        s = bsr_error(BSR_ERR_INTERNAL, "ILU(0) device symbolic phase: sizes (%d + %d blocks, %d / %d levels) differ from "
                      "the host's (%d + %d, %d / %d)", S->nL, S->nU, S->nlev[0], S->nlev[1], H->L->nnzb, H->U->nnzb,
                      H->lvL->nlevels, H->lvU->nlevels);
    if (s == BSR_OK) s = same_ints(S->ap, H->ap, n + 1, "the row pointers of A");
    if (s == BSR_OK) s = same_ints(S->ac, H->ac, (size_t)S->nnzA, "the columns of A");
    if (s == BSR_OK) s = same_ints(S->Lp, H->L->rowptr, n + 1, "L's row pointers");
    if (s == BSR_OK) s = same_ints(S->Lc, H->L->colind, (size_t)S->nL, "L's columns");
    if (s == BSR_OK) s = same_ints(S->Up, H->U->rowptr, n + 1, "U's row pointers");
    if (s == BSR_OK) s = same_ints(S->Uc, H->U->colind, (size_t)S->nU, "U's columns");
    if (s == BSR_OK) s = same_ints(S->rows[0], H->lvL->rows, n, "L's schedule");
    if (s == BSR_OK) s = same_ints(S->rows[1], H->lvU->rows, n, "U's schedule");
    if (s == BSR_OK && memcmp(S->level_ptr[0], H->lvL->level_ptr, ((size_t)S->nlev[0] + 1) * sizeof(int)))
        s = bsr_error(BSR_ERR_INTERNAL, "ILU(0) device symbolic phase: L's level pointers differ from the host's");
    if (s == BSR_OK && memcmp(S->level_ptr[1], H->lvU->level_ptr, ((size_t)S->nlev[1] + 1) * sizeof(int)))
        s = bsr_error(BSR_ERR_INTERNAL, "ILU(0) device symbolic phase: U's level pointers differ from the host's");
    bsr_ilu_destroy(H);
    return s;
}

/* Split and schedules into S (allocated by the caller, arrays zeroed). */
static bsr_status build(bsr_ilu0_dsym *S, const bsr_matrix *A, cudaStream_t st)
{
    const int n = S->n, z = S->nnzA;
    const size_t n1 = (size_t)n + 1;
    const unsigned nb = (unsigned)((n + SYM_T - 1) / SYM_T);
    int *lenL = NULL, *lenU = NULL, *cnt = NULL;
    void *tmp = NULL;
    size_t tb = 0;
    int h[2] = {n, 0};
    bsr_dsym_ws w;
    memset(&w, 0, sizeof w);
    /* A's structure copied: its device mirror may be dropped while F lives */
    BSR_TRY(bsr_cuda_dup_ints(&S->ap, bsr_cuda_matrix_rowptr(A), n1, st));
    BSR_TRY(bsr_cuda_dup_ints(&S->ac, bsr_cuda_matrix_colind(A), (size_t)z, st));
    cudaError_t e = bsr_cu_malloc((void **)&S->Lp, n1 * sizeof(int));
    if (e == cudaSuccess) e = bsr_cu_malloc((void **)&S->Up, n1 * sizeof(int));
    if (e == cudaSuccess) e = bsr_cu_malloc((void **)&S->rows[0], n1 * sizeof(int));
    if (e == cudaSuccess) e = bsr_cu_malloc((void **)&S->rows[1], n1 * sizeof(int));
    if (e == cudaSuccess) e = bsr_cu_malloc((void **)&lenL, n1 * sizeof(int));
    if (e == cudaSuccess) e = bsr_cu_malloc((void **)&lenU, n1 * sizeof(int));
    if (e == cudaSuccess) e = bsr_cu_malloc((void **)&cnt, sizeof(int));
    if (e == cudaSuccess) e = cub::DeviceScan::ExclusiveSum(NULL, tb, lenL, S->Lp, n + 1, st);
    if (e == cudaSuccess) e = bsr_cu_malloc(&tmp, tb ? tb : 1);
    if (e == cudaSuccess) e = cudaMemcpyAsync(cnt, h, sizeof(int), cudaMemcpyHostToDevice, st);
    if (e == cudaSuccess) e = cudaMemsetAsync(lenL + n, 0, sizeof(int), st);
    if (e == cudaSuccess) e = cudaMemsetAsync(lenU + n, 0, sizeof(int), st);
    if (e == cudaSuccess && n) {
        sym_count<<<nb, SYM_T, 0, st>>>(n, S->ap, S->ac, lenL, lenU, cnt);
        e = cudaGetLastError();
    }
    if (e == cudaSuccess) e = cub::DeviceScan::ExclusiveSum(tmp, tb, lenL, S->Lp, n + 1, st);
    if (e == cudaSuccess) e = cub::DeviceScan::ExclusiveSum(tmp, tb, lenU, S->Up, n + 1, st);
    if (e == cudaSuccess) e = cudaMemcpyAsync(h, cnt, sizeof(int), cudaMemcpyDeviceToHost, st);
    if (e == cudaSuccess) e = cudaMemcpyAsync(h + 1, S->Lp + n, sizeof(int), cudaMemcpyDeviceToHost, st);
    if (e == cudaSuccess) e = cudaStreamSynchronize(st);
    bsr_status s = BSR_OK;
    if (e == cudaSuccess && h[0] < n) {
        s = BSR_ERR_UNSUPPORTED;   /* not ILU(0)'s pattern as it stands: the host adds the pivot */
    } else if (e == cudaSuccess) {
        S->nL = h[1];
        S->nU = z - h[1];
        e = bsr_cu_malloc((void **)&S->Lc, (size_t)(S->nL ? S->nL : 1) * sizeof(int));
        if (e == cudaSuccess) e = bsr_cu_malloc((void **)&S->Uc, (size_t)(S->nU ? S->nU : 1) * sizeof(int));
        if (e == cudaSuccess && n) {
            sym_fill<<<nb, SYM_T, 0, st>>>(n, S->ap, S->ac, S->Lp, S->Up, S->Lc, S->Uc);
            e = cudaGetLastError();
        }
        if (e == cudaSuccess) e = bsr_dsym_ws_init(&w, n, st);
        for (int u = 0; u < 2 && e == cudaSuccess; u++)
            e = bsr_dsym_schedule(&w, S->ap, S->ac, u, S->rows[u], &S->nlev[u], &S->level_ptr[u], &S->width[u], st);
        if (e == cudaSuccess) e = cudaStreamSynchronize(st);
    }
    bsr_cu_free(lenL); bsr_cu_free(lenU); bsr_cu_free(cnt); bsr_cu_free(tmp);
    bsr_dsym_ws_free(&w);
    if (e != cudaSuccess) {
        cudaGetLastError();
        s = bsr_error(e == cudaErrorMemoryAllocation ? BSR_ERR_NOMEM : BSR_ERR_CUDA,
                      "ILU(0) symbolic phase on the device (%d block rows, %d blocks): %s", n, z, cudaGetErrorString(e));
    }
    return s;
}

extern "C" void bsr_ilu0_dsym_trim(bsr_ilu *F)
{
    bsr_ilu0_dsym *S = F ? (bsr_ilu0_dsym *)F->dsym : NULL;
    if (!S || S->trimmed) return;
    if (bsr_cuda_enter(S->ctx) != BSR_OK) bsr_clear_error();
    bsr_cu_free(S->ac); bsr_cu_free(S->Lc); bsr_cu_free(S->Uc); bsr_cu_free(S->rows[1]);   /* cudaFree waits */
    S->ac = S->Lc = S->Uc = S->rows[1] = NULL;
    if (S->frozen) {   /* the factorization borrows ap, Fp, Gp and frows; the preconditioner copied L's and U's */
        bsr_cu_free(S->Lp); bsr_cu_free(S->Up); bsr_cu_free(S->rows[0]);
        bsr_cu_free(S->Fc); bsr_cu_free(S->Gc); bsr_cu_free(S->fk); bsr_cu_free(S->gk);
        bsr_cu_free(S->lmap); bsr_cu_free(S->umap);
        S->Lp = S->Up = S->rows[0] = S->Fc = S->Gc = S->lmap = S->umap = NULL;
        S->fk = S->gk = NULL;
    }
    S->trimmed = 1;
}

extern "C" bsr_status bsr_ilu0_symbolic_dev(bsr_context *ctx, bsr_ilu *F, const bsr_matrix *A)
{
    BSR_CHECK_ARG(ctx && F && A, "bsr_ilu0_symbolic_dev: NULL argument");
    BSR_CHECK_ARG(F->mode == 0 && !F->ord && !F->rsrc && !F->dsym && !F->L,
                  "bsr_ilu0_symbolic_dev: F is no ILU(0) in natural order awaiting its symbolic phase");
    BSR_CHECK_ARG(A->nbrows == F->n && A->nbcols == F->n && A->b == F->b && A->nnzb == F->nnzbA,
                  "bsr_ilu0_symbolic_dev: A (%d x %d blocks of %d, %d blocks) is not the matrix of the setup",
                  A->nbrows, A->nbcols, A->b, A->nnzb);
    if (!bsr_matrix_on_device(A) || bsr_cuda_dmat(A)->ctx != ctx)
        return bsr_error(BSR_ERR_ARG, "bsr_ilu0_symbolic_dev: A has no current device mirror in this context");
    BSR_TRY(bsr_cuda_enter(ctx));
    bsr_ilu0_dsym *S = (bsr_ilu0_dsym *)bsr_calloc(1, sizeof *S, "ILU(0) device symbolic phase");
    if (!S) return BSR_ERR_NOMEM;
    S->ctx = ctx;
    S->n = F->n;
    S->nnzA = F->nnzbA;
    bsr_status s = build(S, A, bsr_cuda_stream(ctx));
    if (s == BSR_OK) s = sym_check(S, F, A);
    if (s != BSR_OK) { bsr_dsym_free(S); return s; }
    F->dsym = S;
    F->dsym_free = bsr_dsym_free;
    bsr_ilu_symbolic_stats(F, S->nL, S->nU, S->nlev[0], S->nlev[1]);
    bsr_prof_mark_dev("ilu0 gpu: symbolic phase");
    return BSR_OK;
}
