/* SPDX-License-Identifier: BSD-3-Clause */
/* The ILU preconditioner on the GPU: the CPU factors are uploaded
 * once (optionally as float: mixed precision), each triangle's block rows
 * stored in its level order, optionally with the unknowns renumbered in L's
 * level order too (full renumbering), schedules checked (src/trsv/trsv_plan.c);
 * refactor re-uploads values only; apply = gather+scale (ordering and
 * renumbering composed into one permutation), L solve, U solve,
 * scale+scatter, all on the device with no host round trip. */
#include "trsv_cuda.h"
#include "ilu0_sym_gpu.cuh"
#include <cub/cub.cuh>
#include <limits.h>
#include <string.h>
#include <time.h>

#define NGRAPH 8 /* cached CUDA graphs (one per triangle, buffers, k, precision) */

typedef struct {
    int tri;
    const void *in;
    void *out;
    int k;
    bsr_precision vp;
    cudaGraphExec_t exec;
} graph_entry;

struct bsr_gpu_ilu {
    bsr_context *ctx;             /* CUDA context: device and stream */
    int n, b;
    bsr_precision hprec, fprec;   /* factor precision on the host / on the device */
    bsr_gpu_ilu_options opt;
    bsr_trsv_tri tri[2];          /* 0 = L, 1 = U */
    int *map[2];                  /* device: source block of each stored block (renumbered) or NULL */
    int *perm;                    /* device: factor row of A's row perm[q] for device row q
                                     (ordering composed with the renumbering), NULL = identity */
    int *perm_out;                /* with a matching: the scatter's rows (the ordering's), perm the
                                     gather's (matched rows); NULL = identity */
    int matched;                  /* 1: scatter through perm_out, else through perm */
    int *qrow;                    /* device, full renumbering: factor row of device row q, else NULL */
    int *hqrow;                   /* host copy (the scaling uploads use it as block map) */
    void *sl, *sr;                /* device scalings (fprec, device numbering) or NULL */
    cudaStream_t stream;          /* the context's */
    void *t, *t2;                 /* work vectors (sync-free needs output != input) */
    void *cx, *cy;                /* k > TRSV_MAXK: one chunk of columns in and out */
    size_t c_bytes;
    size_t t_bytes;
    void *hx;                     /* staging for the host convenience calls */
    size_t hx_bytes;
    graph_entry graphs[NGRAPH];
    int ngraphs, next_graph;
    double upload_s, host_s, device_s, alloc_s, graph_s;
    double index_s;               /* host-to-device copies of structure (part of the analysis) */
    const bsr_ilu *hostF;         /* the host factors G was made from (NULL: symbolic phase on the
                                     device): the tree kernels' plan is built from them */
    int bound;                    /* the values are written in place by a device factorization
                                     (bsr_gpu_ilu_bind_values): no maps, no gathers */
    int composed;                 /* the maps read a device factorization's larger pattern
                                     (bsr_gpu_ilu_compose_maps), not the host factors' */
    int tree_planned;             /* tri[].ntl, tl_ptr, node_range, tree_ok are set (tree_setup) */
};

/* dst[q*bb + w] = src[map[q]*bb + w] (map NULL: identity), converting precision. */
template <typename TS, typename TD>
__global__ void gather_blocks(int64_t nblk, int bb, const int *__restrict__ map,
                              const TS *__restrict__ src, TD *__restrict__ dst)
{
    const int64_t e = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= nblk * bb) return;
    const int64_t q = e / bb, w = e - q * bb;
    const int64_t sq = map ? map[q] : q;
    dst[e] = (TD)src[sq * bb + w];
}

extern "C" bsr_status bsr_cuda_gather_blocks(cudaStream_t st, int64_t nblk, int bb, const int *map,
                                             const double *src, double *dst)
{
    if (nblk == 0) return BSR_OK;
    gather_blocks<double, double><<<(unsigned)((nblk * bb + 255) / 256), 256, 0, st>>>(nblk, bb, map, src, dst);
    CU_LAUNCHED("gather_blocks");
    return BSR_OK;
}

/* Upload nblk host blocks (hprec) into dev (fprec), reordered by dmap
 * (device) or hmap (host, used when there is no device map). */
static bsr_status upload_blocks(bsr_gpu_ilu *G, const void *host, int64_t nblk, const int *dmap,
                                void *dev)
{
    const int bb = G->b * G->b;
    const size_t hs = bsr_precision_size(G->hprec);
    if (nblk == 0) return BSR_OK;
    double t0 = bsr_now();
    if (!dmap && G->hprec == G->fprec) {
        CU_TRY(cudaMemcpyAsync(dev, host, (size_t)nblk * bb * hs, cudaMemcpyHostToDevice, G->stream));
        CU_TRY(cudaStreamSynchronize(G->stream));
        G->upload_s += bsr_now() - t0;
        return BSR_OK;
    }
    void *stage = NULL;
    CU_TRY(bsr_cu_malloc(&stage, (size_t)nblk * bb * hs));
    double t1 = bsr_now();
    G->alloc_s += t1 - t0;
    cudaError_t e = cudaMemcpyAsync(stage, host, (size_t)nblk * bb * hs, cudaMemcpyHostToDevice, G->stream);
    if (e == cudaSuccess) e = cudaStreamSynchronize(G->stream);
    double t2 = bsr_now();
    G->upload_s += t2 - t1;
    if (e == cudaSuccess) {
        unsigned nb = (unsigned)((nblk * bb + 255) / 256);
        if (G->hprec == BSR_DOUBLE && G->fprec == BSR_DOUBLE)
            gather_blocks<double, double><<<nb, 256, 0, G->stream>>>(nblk, bb, dmap, (const double *)stage, (double *)dev);
        else if (G->hprec == BSR_DOUBLE)
            gather_blocks<double, float><<<nb, 256, 0, G->stream>>>(nblk, bb, dmap, (const double *)stage, (float *)dev);
        else
            gather_blocks<float, float><<<nb, 256, 0, G->stream>>>(nblk, bb, dmap, (const float *)stage, (float *)dev);
        e = cudaGetLastError();
        if (e == cudaSuccess) e = cudaStreamSynchronize(G->stream);
    }
    double t3 = bsr_now();
    G->device_s += t3 - t2;
    bsr_cu_free(stage);
    G->alloc_s += bsr_now() - t3;
    if (e != cudaSuccess)
        return bsr_error(e == cudaErrorMemoryAllocation ? BSR_ERR_NOMEM : BSR_ERR_CUDA,
                         "bsr_gpu_ilu: uploading factor values: %s", cudaGetErrorString(e));
    return BSR_OK;
}

/* Host-to-device copy of n ints into a fresh allocation (staged through
 * pinned memory when large, synchronous); none is left when the copy fails. */
static bsr_status upload_ints(bsr_gpu_ilu *G, int **dev, const int *host, size_t n)
{
    double t0 = bsr_now();
    CU_TRY(bsr_cu_malloc((void **)dev, n ? n * sizeof(int) : sizeof(int)));
    double t1 = bsr_now();
    G->alloc_s += t1 - t0;
    bsr_status s = bsr_cuda_h2d(G->ctx, *dev, host, n * sizeof(int));
    G->index_s += bsr_now() - t1;
    if (s != BSR_OK) { bsr_cu_free(*dev); *dev = NULL; }   /* callers with a local would leak it */
    return s;
}

/* A fresh device copy of n ints from the host (on_dev = 0) or the device. */
static bsr_status copy_ints(bsr_gpu_ilu *G, int **dev, const int *src, size_t n, int on_dev)
{
    return on_dev ? bsr_cuda_dup_ints(dev, src, n, G->stream) : upload_ints(G, dev, src, n);
}

/* Block count of the row at each schedule position. */
__global__ void layout_len(int n, const int *__restrict__ rows, const int *__restrict__ rowptr, int *__restrict__ len)
{
    const int p = blockIdx.x * blockDim.x + threadIdx.x;
    if (p < n) len[p] = rowptr[rows[p] + 1] - rowptr[rows[p]];
}

/* Device layout of a triangle (bsr_trsv_plan_build without renumbered
 * unknowns, whose reference it is): stored blocks of the row at position p
 * are [pbeg[p], pend[p]); with level-ordered storage pbeg holds the
 * exclusive scan of the lengths on entry, and map/colout are filled. */
__global__ void layout_fill(int n, int reorder, const int *__restrict__ rows, const int *__restrict__ rowptr,
                            const int *__restrict__ colin, int *__restrict__ pbeg, int *__restrict__ pend,
                            int *__restrict__ rstart, int *__restrict__ rend, int *__restrict__ colout,
                            int *__restrict__ map)
{
    const int p = blockIdx.x * blockDim.x + threadIdx.x;
    if (p >= n) return;
    const int i = rows[p], a0 = rowptr[i], a1 = rowptr[i + 1];
    int b0 = a0;
    if (reorder) {
        b0 = pbeg[p];
        for (int a = a0; a < a1; a++) { map[b0 + a - a0] = a; colout[b0 + a - a0] = colin[a]; }
    } else {
        pbeg[p] = a0;
    }
    pend[p] = b0 + a1 - a0;
    rstart[i] = b0;
    rend[i] = b0 + a1 - a0;
}

/* Lay triangle T (structure of M, schedule lv) out on the device: upload the
 * row pointers, column indices and schedule (on_dev: they are device arrays
 * already, read in place), build the rest there (no host arrays: fresh host
 * pages fault in at ~2 GB/s, the plan's seven arrays cost more than the
 * copies).  reorder: block rows stored in schedule order. */
static bsr_status tri_layout_dev(bsr_gpu_ilu *G, bsr_trsv_tri *T, const bsr_matrix *M, const bsr_levels *lv,
                                 int reorder, int **map, int on_dev)
{
    const int n = T->n, nnzb = T->nnzb;
    const size_t n1 = (size_t)(n ? n : 1), z1 = (size_t)(nnzb ? nnzb : 1);
    int *rowptr = NULL, *colin = NULL;   /* uploaded inputs of the layout kernels, freed here */
    void *tmp = NULL;
    size_t tmp_bytes = 0;
    /* device inputs are read in place; T keeps copies of what it owns */
    bsr_status s = on_dev ? BSR_OK : upload_ints(G, &rowptr, M->rowptr, (size_t)n + 1);
    if (s == BSR_OK) s = copy_ints(G, &T->rows, lv->rows, n, on_dev);
    if (s == BSR_OK && !reorder) s = copy_ints(G, &T->colind, M->colind, nnzb, on_dev);
    else if (s == BSR_OK && !on_dev) s = upload_ints(G, &colin, M->colind, nnzb);
    const int *rp = on_dev ? M->rowptr : rowptr, *ci = on_dev ? M->colind : colin;
    double t0 = bsr_now();
    cudaError_t e = cudaSuccess;
    if (s == BSR_OK) {
        e = bsr_cu_malloc((void **)&T->rstart, n1 * sizeof(int));
        if (e == cudaSuccess) e = bsr_cu_malloc((void **)&T->rend, n1 * sizeof(int));
        if (e == cudaSuccess) e = bsr_cu_malloc((void **)&T->pbeg, n1 * sizeof(int));
        if (e == cudaSuccess) e = bsr_cu_malloc((void **)&T->pend, n1 * sizeof(int));
        if (e == cudaSuccess && reorder) e = bsr_cu_malloc((void **)&T->colind, z1 * sizeof(int));
        if (e == cudaSuccess && reorder) e = bsr_cu_malloc((void **)map, z1 * sizeof(int));
        if (e == cudaSuccess && reorder)
            e = cub::DeviceScan::ExclusiveSum(NULL, tmp_bytes, T->pend, T->pbeg, n, G->stream);
        if (e == cudaSuccess && reorder) e = bsr_cu_malloc(&tmp, tmp_bytes ? tmp_bytes : 1);
    }
    double t1 = bsr_now();
    G->alloc_s += t1 - t0;
    if (s == BSR_OK && e == cudaSuccess && n > 0) {
        const unsigned nb = (unsigned)((n + 255) / 256);
        if (reorder) {
            layout_len<<<nb, 256, 0, G->stream>>>(n, T->rows, rp, T->pend);
            e = cub::DeviceScan::ExclusiveSum(tmp, tmp_bytes, T->pend, T->pbeg, n, G->stream);
        }
        if (e == cudaSuccess) {
            layout_fill<<<nb, 256, 0, G->stream>>>(n, reorder, T->rows, rp, ci, T->pbeg, T->pend, T->rstart,
                                                  T->rend, T->colind, reorder ? *map : NULL);
            e = cudaGetLastError();
        }
        if (e == cudaSuccess) e = cudaStreamSynchronize(G->stream);
    }
    G->device_s += bsr_now() - t1;
    bsr_cu_free(rowptr); bsr_cu_free(colin); bsr_cu_free(tmp);
    if (s == BSR_OK && e != cudaSuccess)
        s = bsr_error(e == cudaErrorMemoryAllocation ? BSR_ERR_NOMEM : BSR_ERR_CUDA,
                      "bsr_gpu_ilu: device layout of %s (%d rows, %d blocks): %s", T->upper ? "U" : "L", n, nnzb,
                      cudaGetErrorString(e));
    return s;
}

/* Bit 31 of pendl at the first position of every level (pendl = pend). */
__global__ void level_starts(int nl, const int *__restrict__ lp, int n, int *pendl)
{
    const int l = blockIdx.x * blockDim.x + threadIdx.x;
    if (l < nl && lp[l] < n) atomicOr(pendl + lp[l], INT_MIN); /* an empty level shares its start */
}

/* T->pendl from T->pend and T->level_ptr (the pipelined kernel's
 * level-segment votes): the flag travels in the index the kernel loads two
 * rows ahead anyway, so it costs the kernel no load and no register of its
 * own. */
static bsr_status mark_level_starts(bsr_gpu_ilu *G, bsr_trsv_tri *T)
{
    const int n = T->n, nl = T->nlevels;
    int *dlp = NULL;
    CU_TRY(bsr_cu_malloc((void **)&T->pendl, (size_t)(n ? n : 1) * sizeof(int)));
    if (n) CU_TRY(cudaMemcpyAsync(T->pendl, T->pend, (size_t)n * sizeof(int), cudaMemcpyDeviceToDevice, G->stream));
    BSR_TRY(upload_ints(G, &dlp, T->level_ptr, (size_t)nl + 1));
    if (nl > 0) level_starts<<<(nl + 255) / 256, 256, 0, G->stream>>>(nl, dlp, n, T->pendl);
    cudaError_t e = cudaGetLastError();
    if (e == cudaSuccess) e = cudaStreamSynchronize(G->stream);
    bsr_cu_free(dlp);
    CU_TRY(e);
    return BSR_OK;
}

/* Set up triangle `which` from M with schedule lv: host plan (checks,
 * layout), uploads, device layout of the values (the tree kernels' plan:
 * tree_setup).  qpos: full renumbering.
 * on_dev: M's row pointers and columns and lv's rows are device arrays (the
 * symbolic phase done on the device: no ordering, no renumbering, its own
 * check). */
static bsr_status tri_setup(bsr_gpu_ilu *G, int which, const bsr_matrix *M, const bsr_levels *lv,
                            const int *qpos, int on_dev)
{
    bsr_trsv_tri *T = &G->tri[which];
    const int n = M->nbrows, nnzb = M->nnzb, upper = which;
    T->n = n; T->b = M->b; T->nnzb = nnzb; T->upper = upper; T->fprec = G->fprec;
    int width = 0;
    double t0 = bsr_now();
    /* the ILU's own triangles and schedules: checked in debug builds only
     * (the checks cost more than the layout) */
#ifdef NDEBUG
    const int check = 0;
#else
    const int check = !on_dev;
#endif
    BSR_TRY(bsr_trsv_plan_check(M, lv, upper, check, &width));
    /* full renumbering: the host plan (renumbered columns); else laid out on the device */
    bsr_trsv_plan pl;
    memset(&pl, 0, sizeof pl);
    if (qpos) BSR_TRY(bsr_trsv_plan_build(M, lv, upper, 1, qpos, 0, &pl));
    bsr_prof_mark("gpu ilu:   plan (checks, layout)");
    bsr_status s = BSR_OK;
    T->nlevels = lv->nlevels;
    T->max_width = width;
    T->tail = on_dev ? 0 : bsr_trsv_tail(M, lv, upper);   /* device arrays: the device's patterns are capped */
    T->level_ptr = (int *)bsr_malloc(((size_t)lv->nlevels + 1) * sizeof(int), "level pointers");
    if (!T->level_ptr) s = BSR_ERR_NOMEM;
    else memcpy(T->level_ptr, lv->level_ptr, ((size_t)lv->nlevels + 1) * sizeof(int));
    G->host_s += bsr_now() - t0;
    if (qpos) {
        if (s == BSR_OK) s = upload_ints(G, &T->rows, pl.rows, n);
        if (s == BSR_OK) s = upload_ints(G, &T->rstart, pl.rstart, n);
        if (s == BSR_OK) s = upload_ints(G, &T->rend, pl.rend, n);
        if (s == BSR_OK) s = upload_ints(G, &T->pbeg, pl.pbeg, n);
        if (s == BSR_OK) s = upload_ints(G, &T->pend, pl.pend, n);
        if (s == BSR_OK) s = upload_ints(G, &T->colind, pl.colind, nnzb);
        if (s == BSR_OK) s = upload_ints(G, &G->map[which], pl.map, nnzb);
    } else if (s == BSR_OK) {
        s = tri_layout_dev(G, T, M, lv, G->opt.renumber > 0, &G->map[which], on_dev);
    }
    if (s == BSR_OK) s = mark_level_starts(G, T);
    bsr_prof_mark("gpu ilu:   index uploads");
    if (s == BSR_OK) {
        double t1 = bsr_now();
        cudaError_t e = bsr_cu_malloc(&T->val, (size_t)(nnzb ? nnzb : 1) * T->b * T->b * bsr_precision_size(G->fprec));
        if (e == cudaSuccess) e = bsr_cu_malloc((void **)&T->flags, (size_t)(n ? n : 1) * sizeof(int));
        if (e == cudaSuccess) e = bsr_cu_malloc((void **)&T->counter, sizeof(int));
        if (e != cudaSuccess) {
            cudaGetLastError();
            s = bsr_error(BSR_ERR_NOMEM, "bsr_gpu_ilu: device allocation for %s (%d blocks): %s", upper ? "U" : "L", nnzb, cudaGetErrorString(e));
        }
        G->alloc_s += bsr_now() - t1;
    }
    if (s == BSR_OK && !G->opt.values_later) s = upload_blocks(G, M->val, nnzb, G->map[which], T->val);
    bsr_trsv_plan_free(&pl);
    return s;
}

/* The separator-tree levels of both triangles, which only the tree kernels
 * P21-P24 read (bench trsv, tests): built when one is first selected, not in
 * every create.  From the host factors G was made from (they must still
 * exist then), or one root node [0,n) when the symbolic phase ran on the
 * device.  Full renumbering (qrow) never gets here: bsr_gpu_ilu_set_kernel
 * refuses the tree kernels first. */
static bsr_status tree_setup(bsr_gpu_ilu *G)
{
    if (G->tree_planned) return BSR_OK;
    bsr_ilu_factors f;
    memset(&f, 0, sizeof f);
    if (G->hostF) BSR_TRY(bsr_ilu_get_factors(G->hostF, &f));
    bsr_matrix root;   /* no tree: the plan reads the row count only */
    memset(&root, 0, sizeof root);
    root.nbrows = G->n;
    bsr_status s = BSR_OK;
    double t0 = bsr_now();
    for (int w = 0; w < 2 && s == BSR_OK; w++) {
        bsr_trsv_tri *T = &G->tri[w];
        int *rg = NULL, nrg = 0;
        free(T->tl_ptr);   /* what a failed earlier attempt left */
        T->tl_ptr = NULL;
        bsr_cu_free(T->node_range);
        T->node_range = NULL;
        const bsr_matrix *M = G->hostF ? (w ? f.U : f.L) : &root;
        s = bsr_trsv_tree_plan(M, w, G->hostF ? f.ord : NULL, &T->ntl, &T->tl_ptr, &rg, &nrg, &T->tree_ok);
        if (s == BSR_OK) s = upload_ints(G, &T->node_range, rg, 2 * (size_t)nrg);
        free(rg);
    }
    /* the solves run on a non-blocking stream: the copies land first */
    if (s == BSR_OK && cudaDeviceSynchronize() != cudaSuccess)
        s = bsr_error(BSR_ERR_CUDA, "bsr_gpu_ilu_set_kernel: %s", cudaGetErrorString(cudaGetLastError()));
    G->host_s += bsr_now() - t0;
    if (s == BSR_OK) G->tree_planned = 1;
    return s;
}

static void tri_free(bsr_trsv_tri *T)
{
    bsr_cu_free(T->rows); bsr_cu_free(T->rstart); bsr_cu_free(T->rend); bsr_cu_free(T->colind);
    bsr_cu_free(T->pbeg); bsr_cu_free(T->pend);
    bsr_cu_free(T->val); bsr_cu_free(T->node_range); bsr_cu_free(T->flags); bsr_cu_free(T->counter); bsr_cu_free(T->pendl);
    free(T->level_ptr); free(T->tl_ptr);
    memset(T, 0, sizeof *T);
}

static void graphs_clear(bsr_gpu_ilu *G)
{
    for (int g = 0; g < G->ngraphs; g++) cudaGraphExecDestroy(G->graphs[g].exec);
    G->ngraphs = G->next_graph = 0;
}

extern "C" void bsr_gpu_ilu_destroy(bsr_gpu_ilu *G)
{
    if (!G) return;
    if (G->ctx) bsr_cuda_enter(G->ctx);
    if (G->stream) cudaStreamSynchronize(G->stream);
    graphs_clear(G);
    tri_free(&G->tri[0]); tri_free(&G->tri[1]);
    bsr_cu_free(G->map[0]); bsr_cu_free(G->map[1]); bsr_cu_free(G->perm); bsr_cu_free(G->perm_out); bsr_cu_free(G->qrow); bsr_cu_free(G->sl); bsr_cu_free(G->sr);
    free(G->hqrow);
    bsr_cu_free(G->t); bsr_cu_free(G->t2); bsr_cu_free(G->hx);
    bsr_cu_free(G->cx); bsr_cu_free(G->cy);
    free(G);
}

/* Upload the block-diagonal scaling s (host, hprec) as fprec, in the device
 * numbering (block q = block qrow[q] with full renumbering); values_later:
 * only its storage, made when s is set or need (an ILU's left scaling,
 * which the device factorization fills whether or not the plan has host
 * values). */
static bsr_status scale_setup(bsr_gpu_ilu *G, const void *s, int need, void **dev)
{
    if (!s && !need) return BSR_OK;
    CU_TRY(bsr_cu_malloc(dev, (size_t)(G->n ? G->n : 1) * G->b * G->b * bsr_precision_size(G->fprec)));
    if (G->opt.values_later) return BSR_OK;
    return upload_blocks(G, s, G->n, G->qrow, *dev);
}

/* Sizes and precisions of the factors must agree with each other. */
static bsr_status check_factors(const bsr_ilu_factors *f)
{
    if (!f->L || !f->U) return bsr_error(BSR_ERR_ARG, "bsr_gpu_ilu: factors without L or U");
    if (f->L->nbrows != f->U->nbrows || f->L->nbcols != f->L->nbrows || f->U->nbcols != f->U->nbrows ||
        f->L->b != f->U->b || f->L->prec != f->U->prec)
        return bsr_error(BSR_ERR_SIZE, "bsr_gpu_ilu: L (%d x %d, b %d) and U (%d x %d, b %d) do not match",
                         f->L->nbrows, f->L->nbcols, f->L->b, f->U->nbrows, f->U->nbcols, f->U->b);
    if (f->L->b < 1 || f->L->b > TRSV_MAXB)
        return bsr_error(BSR_ERR_UNSUPPORTED, "bsr_gpu_ilu: block size %d outside 1..%d", f->L->b, TRSV_MAXB);
    if (f->ord && f->ord->n != f->L->nbrows)
        return bsr_error(BSR_ERR_SIZE, "bsr_gpu_ilu: ordering of %d rows for factors of %d", f->ord->n, f->L->nbrows);
    return BSR_OK;
}

/* Both triangles from the host's factors f: schedules (built when absent),
 * full renumbering, layouts, the permutation. */
static bsr_status tris_host(bsr_gpu_ilu *G, const bsr_ilu_factors *fp)
{
    const bsr_ilu_factors f = *fp;
    bsr_status s = BSR_OK;
    bsr_levels *own[2] = {NULL, NULL};
    const bsr_levels *lv[2] = {f.lvL, f.lvU};
    for (int w = 0; w < 2 && s == BSR_OK; w++)
        if (!lv[w]) { s = bsr_levels_build(w ? f.U : f.L, w, &own[w]); lv[w] = own[w]; }
    int *qpos = NULL, *hperm = NULL, *hout = NULL;
    G->matched = f.gather != NULL;
    bsr_prof_mark_dev("gpu ilu: level schedules");
    if (s == BSR_OK && G->opt.renumber == 2) {
        /* full renumbering: device row q = factor row lvL->rows[q], so that a
         * level of L is a contiguous range of unknowns */
        double t0 = bsr_now();
        const int n = G->n;
        qpos = (int *)bsr_malloc((size_t)(n ? n : 1) * sizeof(int), "renumbering");
        hperm = (int *)bsr_malloc((size_t)(n ? n : 1) * sizeof(int), "renumbered permutation");
        G->hqrow = (int *)bsr_malloc((size_t)(n ? n : 1) * sizeof(int), "renumbering rows");
        if (G->matched) hout = (int *)bsr_malloc((size_t)(n ? n : 1) * sizeof(int), "renumbered scatter rows");
        if (!qpos || !hperm || !G->hqrow || (G->matched && !hout)) s = BSR_ERR_NOMEM;
        else if (lv[0]->n != n) s = bsr_error(BSR_ERR_SIZE, "bsr_gpu_ilu: level schedule of L has %d rows, L %d", lv[0]->n, n);
        else {
            for (int q = 0; q < n; q++) qpos[q] = -1;
            for (int q = 0; q < n && s == BSR_OK; q++) {
                int i = lv[0]->rows[q];
                if (i < 0 || i >= n || qpos[i] >= 0)
                    s = bsr_error(BSR_ERR_STRUCTURE, "bsr_gpu_ilu: level schedule of L: entry %d (row %d) invalid or repeated", q, i);
                else {
                    qpos[i] = q;
                    G->hqrow[q] = i;
                    hperm[q] = (f.ord && f.ord->perm) ? f.ord->perm[i] : i;
                    if (hout) { hout[q] = hperm[q]; hperm[q] = f.gather[i]; }
                }
            }
        }
        G->host_s += bsr_now() - t0;
        if (s == BSR_OK) s = upload_ints(G, &G->qrow, G->hqrow, n);
    }
    bsr_prof_mark_dev("gpu ilu: renumbering");
    if (s == BSR_OK) s = tri_setup(G, 0, f.L, lv[0], qpos, 0);
    bsr_prof_mark_dev("gpu ilu: L structure + upload");
    if (s == BSR_OK) s = tri_setup(G, 1, f.U, lv[1], qpos, 0);
    bsr_prof_mark_dev("gpu ilu: U structure + upload");
    if (s == BSR_OK && qpos) s = upload_ints(G, &G->perm, hperm, G->n);
    else if (s == BSR_OK && G->matched) s = upload_ints(G, &G->perm, f.gather, G->n);
    else if (s == BSR_OK && f.ord && f.ord->kind != BSR_ORDER_NATURAL) s = upload_ints(G, &G->perm, f.ord->perm, G->n);
    if (s == BSR_OK && hout) s = upload_ints(G, &G->perm_out, hout, G->n);
    else if (s == BSR_OK && G->matched && f.ord && f.ord->kind != BSR_ORDER_NATURAL)
        s = upload_ints(G, &G->perm_out, f.ord->perm, G->n);
    free(qpos);
    free(hperm);
    free(hout);
    bsr_levels_free(own[0]);
    bsr_levels_free(own[1]);
    return s;
}

/* Both triangles from patterns made on the device (ILU(0)'s symbolic phase
 * in natural order, or a threshold kind's L and U; values from the device
 * factorization). */
static bsr_status tris_dev(bsr_gpu_ilu *G, const bsr_ilu0_dsym *S)
{
    if (S->trimmed)
        return bsr_error(BSR_ERR_ARG, "bsr_gpu_ilu_create: the plan's device patterns were released once its "
                         "preconditioner was made (set up again)");
    if (G->opt.renumber == 2 || !G->opt.values_later)
        return bsr_error(BSR_ERR_UNSUPPORTED, "bsr_gpu_ilu_create: the symbolic phase was done on the device: no host "
                         "values to upload (values_later) and no full renumbering (renumber 2)");
    bsr_status s = BSR_OK;
    for (int w = 0; w < 2 && s == BSR_OK; w++) {
        bsr_matrix M;
        bsr_levels lv;
        memset(&M, 0, sizeof M);
        memset(&lv, 0, sizeof lv);
        M.nbrows = M.nbcols = G->n;
        M.b = G->b;
        M.prec = G->hprec;
        M.nnzb = w ? S->nU : S->nL;
        M.rowptr = w ? S->Up : S->Lp;   /* device arrays */
        M.colind = w ? S->Uc : S->Lc;
        lv.n = G->n;
        lv.nlevels = S->nlev[w];
        lv.level_ptr = S->level_ptr[w];
        lv.rows = S->rows[w];
        lv.max_width = S->width[w];
        s = tri_setup(G, w, &M, &lv, NULL, 1);
        bsr_prof_mark_dev(w ? "gpu ilu: U structure (device symbolic)" : "gpu ilu: L structure (device symbolic)");
    }
    return s;
}

extern "C" bsr_status bsr_gpu_ilu_create(bsr_context *ctx, const bsr_ilu *F, const bsr_gpu_ilu_options *o,
                                         bsr_gpu_ilu **out)
{
    BSR_CHECK_ARG(ctx && F && out, "bsr_gpu_ilu_create: NULL argument");
    *out = NULL;
    if (bsr_context_backend(ctx) != BSR_BACKEND_CUDA || !ctx->cuda)
        return bsr_error(BSR_ERR_ARG, "bsr_gpu_ilu_create: the context is not a CUDA context (%s)", bsr_context_describe(ctx));
    BSR_TRY(bsr_cuda_enter(ctx));
    const bsr_ilu0_dsym *S = bsr_ilu_dsym(F);
    const int later = o && o->values_later;
    if (!later && (F->pattern_only || S))
        return bsr_error(BSR_ERR_ARG, "bsr_gpu_ilu_create: F holds patterns only: its values are computed on the "
                         "device, so the factors must be created with values_later");
    /* values_later: the plan's patterns, ordering and scalings whatever its
     * host values (a plan for the device has none) */
    bsr_ilu_factors f;
    if (later) ilu_plan_factors(F, &f);
    else BSR_TRY(bsr_ilu_get_factors(F, &f));
    if (!S) BSR_TRY(check_factors(&f));
    else if (F->b < 1 || F->b > TRSV_MAXB)
        return bsr_error(BSR_ERR_UNSUPPORTED, "bsr_gpu_ilu: block size %d outside 1..%d", F->b, TRSV_MAXB);
    bsr_gpu_ilu *G = (bsr_gpu_ilu *)bsr_calloc(1, sizeof *G, "bsr_gpu_ilu");
    if (!G) return BSR_ERR_NOMEM;
    if (o) G->opt = *o;
    else bsr_gpu_ilu_options_default(&G->opt);
    G->n = S ? F->n : f.L->nbrows;
    G->b = S ? F->b : f.L->b;
    G->hprec = S ? F->prec : f.L->prec;
    G->fprec = G->opt.factor_float ? BSR_FLOAT : G->hprec;
    G->ctx = ctx;
    G->hostF = S ? NULL : F;
    G->stream = bsr_cuda_stream(ctx);
    if (G->opt.renumber < 0 || G->opt.renumber > 2) {
        free(G);
        return bsr_error(BSR_ERR_ARG, "bsr_gpu_ilu_create: renumber = %d (0 none, 1 storage, 2 full)", G->opt.renumber);
    }
    bsr_status s = S ? tris_dev(G, S) : tris_host(G, &f);
    /* patterns made on the device are in the plan's order (a threshold kind's): its permutation */
    if (s == BSR_OK && S && f.ord && f.ord->kind != BSR_ORDER_NATURAL) s = upload_ints(G, &G->perm, f.ord->perm, G->n);
    if (s == BSR_OK) s = scale_setup(G, f.scale_left, G->opt.values_later, &G->sl);
    if (s == BSR_OK) s = scale_setup(G, f.scale_right, 0, &G->sr);
    bsr_prof_mark_dev("gpu ilu: permutation + scaling");
    if (s == BSR_OK) s = bsr_gpu_ilu_set_kernel(G, G->opt.kernel, G->opt.sched);
    bsr_prof_mark_dev("gpu ilu: kernel choice / graphs");
    /* plain cudaMemcpy from pageable memory may return before the data lands;
     * the solves run on a non-blocking stream: wait once here */
    if (s == BSR_OK && cudaDeviceSynchronize() != cudaSuccess)
        s = bsr_error(BSR_ERR_CUDA, "bsr_gpu_ilu_create: %s", cudaGetErrorString(cudaGetLastError()));
    if (s != BSR_OK) { bsr_gpu_ilu_destroy(G); return s; }
    *out = G;
    return BSR_OK;
}

extern "C" bsr_status bsr_gpu_ilu_refactor(bsr_gpu_ilu *G, const bsr_ilu *F)
{
    BSR_CHECK_ARG(G && F, "bsr_gpu_ilu_refactor: NULL argument");
    BSR_CHECK_ARG(!F->pattern_only, "bsr_gpu_ilu_refactor: F holds patterns only: its values are computed "
                  "on the device (bsr_gpu_ilu0_factor), there are none on the host to upload");
    BSR_CHECK_ARG(!G->bound && !G->composed, "bsr_gpu_ilu_refactor: G's values come from a factorization on the device");
    BSR_TRY(bsr_cuda_enter(G->ctx));
    bsr_ilu_factors f;
    BSR_TRY(bsr_ilu_get_factors(F, &f));
    BSR_TRY(check_factors(&f));
    if (f.L->nbrows != G->n || f.L->b != G->b || f.L->nnzb != G->tri[0].nnzb || f.U->nnzb != G->tri[1].nnzb ||
        f.L->prec != G->hprec)
        return bsr_error(BSR_ERR_SIZE, "bsr_gpu_ilu_refactor: factors changed shape (%d rows, %d+%d blocks; had %d, %d+%d)",
                         f.L->nbrows, f.L->nnzb, f.U->nnzb, G->n, G->tri[0].nnzb, G->tri[1].nnzb);
    if ((f.scale_left != NULL) != (G->sl != NULL) || (f.scale_right != NULL) != (G->sr != NULL))
        return bsr_error(BSR_ERR_ARG, "bsr_gpu_ilu_refactor: scalings appeared or disappeared");
    G->hostF = F;   /* same pattern: a tree plan made from it stays valid */
    BSR_TRY(upload_blocks(G, f.L->val, f.L->nnzb, G->map[0], G->tri[0].val));
    BSR_TRY(upload_blocks(G, f.U->val, f.U->nnzb, G->map[1], G->tri[1].val));
    if (G->sl) BSR_TRY(upload_blocks(G, f.scale_left, G->n, G->qrow, G->sl));
    if (G->sr) BSR_TRY(upload_blocks(G, f.scale_right, G->n, G->qrow, G->sr));
    return BSR_OK;
}

/* dev (fprec, G's storage order through map) = src (double, host order). */
static bsr_status gather_dev(bsr_gpu_ilu *G, const double *src, int64_t nblk, const int *map, void *dev)
{
    const int bb = G->b * G->b;
    if (nblk == 0) return BSR_OK;
    unsigned nb = (unsigned)((nblk * bb + 255) / 256);
    if (G->fprec == BSR_DOUBLE) gather_blocks<double, double><<<nb, 256, 0, G->stream>>>(nblk, bb, map, src, (double *)dev);
    else gather_blocks<double, float><<<nb, 256, 0, G->stream>>>(nblk, bb, map, src, (float *)dev);
    CU_LAUNCHED("gather_blocks");
    return BSR_OK;
}

extern "C" bsr_status bsr_gpu_ilu_set_values_dev(bsr_gpu_ilu *G, const double *L, const double *U, const double *sl)
{
    BSR_CHECK_ARG(G && L && U, "bsr_gpu_ilu_set_values_dev: NULL argument");
    BSR_CHECK_ARG(!G->bound, "bsr_gpu_ilu_set_values_dev: G's values are factored in place on the device");
    BSR_TRY(bsr_cuda_enter(G->ctx));
    BSR_TRY(gather_dev(G, L, G->tri[0].nnzb, G->map[0], G->tri[0].val));
    BSR_TRY(gather_dev(G, U, G->tri[1].nnzb, G->map[1], G->tri[1].val));
    if (sl && G->sl) BSR_TRY(gather_dev(G, sl, G->n, G->qrow, G->sl));
    return BSR_OK;
}

extern "C" bsr_status bsr_gpu_ilu_dest_get(bsr_gpu_ilu *G, bsr_gpu_ilu_dest *d)
{
    BSR_CHECK_ARG(G && d, "bsr_gpu_ilu_dest_get: NULL argument");
    memset(d, 0, sizeof *d);
    if (G->fprec != BSR_DOUBLE || G->qrow || G->bound) return BSR_ERR_UNSUPPORTED;   /* no message: the caller falls back */
    d->L = (double *)G->tri[0].val;
    d->U = (double *)G->tri[1].val;
    d->Lst = G->tri[0].rstart;
    d->Ust = G->tri[1].rstart;
    d->Lmap = G->map[0];
    d->Umap = G->map[1];
    d->sl = (double *)G->sl;
    d->Lc = G->tri[0].colind;
    d->Uc = G->tri[1].colind;
    d->nL = G->tri[0].nnzb;
    d->nU = G->tri[1].nnzb;
    return BSR_OK;
}

/* map[q] = outer[map[q]] for q < nb. */
__global__ void compose_kernel(int nb, const int *__restrict__ outer, int *__restrict__ map)
{
    const int q = blockIdx.x * blockDim.x + threadIdx.x;
    if (q < nb) map[q] = outer[map[q]];
}

extern "C" bsr_status bsr_gpu_ilu_compose_maps(bsr_gpu_ilu *G, const int *lmap, const int *umap, int nL, int nU)
{
    BSR_CHECK_ARG(G, "bsr_gpu_ilu_compose_maps: G is NULL");
    BSR_CHECK_ARG(!G->bound && !G->composed, "bsr_gpu_ilu_compose_maps: G's values come from a factorization on "
                  "the device already");
    if (nL != G->tri[0].nnzb || nU != G->tri[1].nnzb)
        return bsr_error(BSR_ERR_SIZE, "bsr_gpu_ilu_compose_maps: %d + %d blocks for a preconditioner of %d + %d",
                         nL, nU, G->tri[0].nnzb, G->tri[1].nnzb);
    BSR_TRY(bsr_cuda_enter(G->ctx));
    for (int w = 0; w < 2; w++) {
        const int *outer = w ? umap : lmap;
        const int nb = G->tri[w].nnzb;
        if (!outer) continue;
        if (!G->map[w]) BSR_TRY(bsr_cuda_dup_ints(&G->map[w], outer, (size_t)nb, G->stream));   /* identity composed */
        else if (nb > 0) {
            compose_kernel<<<(nb + 255) / 256, 256, 0, G->stream>>>(nb, outer, G->map[w]);
            CU_LAUNCHED("compose_kernel");
        }
    }
    CU_TRY(cudaStreamSynchronize(G->stream));
    G->composed = 1;
    return BSR_OK;
}

extern "C" void bsr_gpu_ilu_bind_values(bsr_gpu_ilu *G)
{
    if (!G || G->bound) return;
    if (bsr_cuda_enter(G->ctx) != BSR_OK) bsr_clear_error();
    cudaStreamSynchronize(G->stream);   /* the maps may still be read by queued kernels */
    bsr_cu_free(G->map[0]); bsr_cu_free(G->map[1]);
    G->map[0] = G->map[1] = NULL;
    G->bound = 1;
}

extern "C" bsr_status bsr_gpu_ilu_set_kernel(bsr_gpu_ilu *G, bsr_trsv_kernel kernel, bsr_trsv_sched sched)
{
    BSR_CHECK_ARG(G, "bsr_gpu_ilu_set_kernel: G is NULL");
    BSR_CHECK_ARG(kernel >= BSR_TRSV_LEVEL && kernel <= BSR_TRSV_P24, "bsr_gpu_ilu_set_kernel: unknown kernel %d", (int)kernel);
    BSR_CHECK_ARG(sched >= BSR_TRSV_SYNCFREE && sched <= BSR_TRSV_SYNCFLAGS, "bsr_gpu_ilu_set_kernel: unknown schedule %d", (int)sched);
    if (kernel != BSR_TRSV_LEVEL && G->qrow)
        return bsr_error(BSR_ERR_UNSUPPORTED, "bsr_gpu_ilu_set_kernel: P2%d needs the separator tree's row ranges; "
                         "create with renumber <= 1 (full renumbering scatters them)", (int)kernel);
    if (kernel != BSR_TRSV_LEVEL) BSR_TRY(tree_setup(G));
    if (kernel != BSR_TRSV_LEVEL)
        for (int w = 0; w < 2; w++)
            if (!G->tri[w].tree_ok)
                return bsr_error(BSR_ERR_UNSUPPORTED, "bsr_gpu_ilu_set_kernel: P2%d needs independent separator-tree nodes; the %s factor couples them",
                                 (int)kernel, w ? "upper" : "lower");
    if (G->opt.kernel != kernel || G->opt.sched != sched) graphs_clear(G);
    G->opt.kernel = kernel;
    G->opt.sched = sched;
    return BSR_OK;
}

extern "C" bsr_status bsr_gpu_ilu_set_jacobi(bsr_gpu_ilu *G, int sweeps)
{
    BSR_CHECK_ARG(G && sweeps >= 0, "bsr_gpu_ilu_set_jacobi: bad argument");
    G->opt.jacobi = sweeps;
    return BSR_OK;
}

extern "C" void bsr_gpu_ilu_apply_bytes(const bsr_gpu_ilu *G, double *fixed, double *passes)
{
    const double fs = (double)bsr_precision_size(G->fprec), bb = (double)G->b * G->b, n = G->n;
    /* a triangle read once: its blocks and column indices, and per row its
     * block range (the sweeps read rstart/rend, the level solves pbeg/pend,
     * rows and the level flags: counted as two ints either way) */
    double tri[2];
    for (int w = 0; w < 2; w++) tri[w] = (double)G->tri[w].nnzb * (bb * fs + 4) + 8.0 * n;
    const double scal = (G->sl ? n * bb * fs : 0) + (G->sr ? n * bb * fs : 0);
    const int N = G->opt.jacobi;
    if (N <= 0) {
        /* exact: L and U read once; x in, the intermediate out and in, y out */
        *fixed = tri[0] + tri[1] + scal;
        *passes = 4;
    } else {
        /* L: N sweeps, each reading L, x and the previous iterate (x itself
         * for the first) and writing one; U: D^-1 x first (pivot blocks and
         * row starts only), then N sweeps reading U, x and the iterate */
        const double piv = n * (bb * fs + 8);
        *fixed = N * tri[0] + piv + N * tri[1] + scal;
        *passes = (2.0 + 3.0 * (N - 1)) + 2.0 + 3.0 * N;
    }
}

/* out = T^{-1} in for triangle `which` with the current kernel; with the graph
 * schedule through a cached CUDA graph of the per-level launches. */
static bsr_status tri_solve(bsr_gpu_ilu *G, int which, const void *in, void *out, int k, bsr_precision vp)
{
    const bsr_trsv_tri *T = &G->tri[which];
    if (G->opt.kernel != BSR_TRSV_LEVEL || G->opt.sched != BSR_TRSV_GRAPH)
        return bsr_trsv_dev_solve(T, G->opt.kernel, G->opt.sched, in, out, k, vp, G->stream);
    for (int g = 0; g < G->ngraphs; g++) {
        graph_entry *e = &G->graphs[g];
        if (e->tri == which && e->in == in && e->out == out && e->k == k && e->vp == vp) {
            CU_TRY(cudaGraphLaunch(e->exec, G->stream));
            return BSR_OK;
        }
    }
    /* capture once: one kernel node per level */
    double t0 = bsr_now();
    cudaGraph_t graph;
    CU_TRY(cudaStreamBeginCapture(G->stream, cudaStreamCaptureModeThreadLocal));
    bsr_status s = bsr_trsv_dev_solve(T, BSR_TRSV_LEVEL, TRSV_S_LAUNCH, in, out, k, vp, G->stream);
    cudaError_t e = cudaStreamEndCapture(G->stream, &graph);
    if (s != BSR_OK) { if (e == cudaSuccess) cudaGraphDestroy(graph); return s; }
    if (e != cudaSuccess) { cudaGetLastError(); return bsr_error(BSR_ERR_CUDA, "bsr_gpu_ilu: graph capture: %s", cudaGetErrorString(e)); }
    cudaGraphExec_t exec;
    e = cudaGraphInstantiate(&exec, graph, 0);
    cudaGraphDestroy(graph);
    if (e != cudaSuccess) { cudaGetLastError(); return bsr_error(BSR_ERR_CUDA, "bsr_gpu_ilu: graph instantiation: %s", cudaGetErrorString(e)); }
    int slot;
    if (G->ngraphs < NGRAPH) slot = G->ngraphs++;
    else {
        slot = G->next_graph++ % NGRAPH; /* evict the oldest */
        cudaGraphExecDestroy(G->graphs[slot].exec);
    }
    graph_entry en = {which, in, out, k, vp, exec};
    G->graphs[slot] = en;
    G->graph_s += bsr_now() - t0;
    CU_TRY(cudaGraphLaunch(exec, G->stream));
    return BSR_OK;
}

/* out = T^{-1} in for triangle `which`: the exact solve, or its Jacobi
 * approximation with opt.jacobi sweeps (w: a work vector distinct from in
 * and out, used by the sweeps only). */
static bsr_status tri_apply(bsr_gpu_ilu *G, int which, const void *in, void *out, void *w, int k, bsr_precision vp)
{
    if (G->opt.jacobi > 0)
        return bsr_trsv_dev_jacobi(&G->tri[which], G->opt.jacobi, in, out, w, k, vp, G->stream);
    return tri_solve(G, which, in, out, k, vp);
}

/* Make the work vector hold n*b*k values of vp. */
static bsr_status ensure_work(bsr_gpu_ilu *G, int k, bsr_precision vp)
{
    size_t need = (size_t)(G->n ? G->n : 1) * G->b * k * bsr_precision_size(vp);
    if (need <= G->t_bytes) return BSR_OK;
    graphs_clear(G); /* graphs hold the old pointer */
    bsr_cu_free(G->t);
    bsr_cu_free(G->t2);
    G->t = G->t2 = NULL;
    G->t_bytes = 0;
    CU_TRY(bsr_cu_malloc(&G->t, need));
    CU_TRY(bsr_cu_malloc(&G->t2, need));
    G->t_bytes = need;
    return BSR_OK;
}

static bsr_status check_vectors(const bsr_gpu_ilu *G, int k, bsr_precision vp, const char *fn)
{
    BSR_CHECK_ARG(k >= 1 && k <= TRSV_MAXK_APPLY, "%s: k = %d outside 1..%d", fn, k, TRSV_MAXK_APPLY);
    if (vp == BSR_FLOAT && G->fprec == BSR_DOUBLE)
        return bsr_error(BSR_ERR_UNSUPPORTED, "%s: float vectors with double factors (use factor_float)", fn);
    return BSR_OK;
}

/* Columns [j0, j0+kk) of the n*b x k row-interleaved x into the n*b x kk
 * chunk c (to_chunk), or back from it into y. */
template <typename TV> __global__ void chunk_kernel(int64_t rows, int k, int j0, int kk, const TV *in, TV *out, int to_chunk)
{
    const int64_t e = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= rows * kk) return;
    const int64_t r = e / kk;
    const int j = (int)(e - r * kk);
    if (to_chunk) out[e] = in[r * k + j0 + j];
    else out[r * k + j0 + j] = in[e];
}

static bsr_status chunk_copy(bsr_gpu_ilu *G, int k, int j0, int kk, const void *in, void *out, int to_chunk,
                             bsr_precision vp)
{
    const int64_t rows = (int64_t)G->n * G->b, tot = rows * kk;
    if (tot == 0) return BSR_OK;
    const unsigned nb = (unsigned)((tot + 255) / 256);
    if (vp == BSR_DOUBLE) chunk_kernel<double><<<nb, 256, 0, G->stream>>>(rows, k, j0, kk, (const double *)in, (double *)out, to_chunk);
    else chunk_kernel<float><<<nb, 256, 0, G->stream>>>(rows, k, j0, kk, (const float *)in, (float *)out, to_chunk);
    CU_LAUNCHED("chunk_kernel");
    return BSR_OK;
}

/* More vectors than the solves take at once (TRSV_MAXK): the apply on
 * chunks of TRSV_MAXK columns, each copied out of x and back into y (the
 * columns of one chunk never overlap another's, so x == y is fine). */
static bsr_status apply_chunked(bsr_gpu_ilu *G, const void *x, void *y, int k, bsr_precision vp)
{
    const size_t need = (size_t)(G->n ? G->n : 1) * G->b * TRSV_MAXK * bsr_precision_size(vp);
    if (need > G->c_bytes) {
        bsr_cu_free(G->cx); bsr_cu_free(G->cy);
        G->cx = G->cy = NULL;
        G->c_bytes = 0;
        CU_TRY(bsr_cu_malloc(&G->cx, need));
        CU_TRY(bsr_cu_malloc(&G->cy, need));
        G->c_bytes = need;
    }
    for (int j0 = 0; j0 < k; j0 += TRSV_MAXK) {
        const int kk = k - j0 < TRSV_MAXK ? k - j0 : TRSV_MAXK;
        BSR_TRY(chunk_copy(G, k, j0, kk, x, G->cx, 1, vp));
        BSR_TRY(bsr_gpu_ilu_apply_dev(G, G->cx, G->cy, kk, vp));
        BSR_TRY(chunk_copy(G, k, j0, kk, G->cy, y, 0, vp));
    }
    return BSR_OK;
}

extern "C" bsr_status bsr_gpu_ilu_apply_dev(bsr_gpu_ilu *G, const void *x, void *y, int k, bsr_precision vp)
{
    BSR_CHECK_ARG(G && x && y, "bsr_gpu_ilu_apply_dev: NULL argument");
    BSR_TRY(bsr_cuda_enter(G->ctx));
    BSR_TRY(check_vectors(G, k, vp, "bsr_gpu_ilu_apply_dev"));
    if (k > TRSV_MAXK) return apply_chunked(G, x, y, k, vp);
    BSR_TRY(ensure_work(G, k, vp));
    /* the gather (ordering, left scaling) and the scatter (ordering, right
     * scaling) are plain copies when there is nothing to do: the solves then
     * read x or write y themselves (two vector passes less each).
     * The gather goes into the exact L solve, which applies it row by row
     * where its kernel can (H100, 100^3, b = 4, natural: the gather kernel
     * took 0.06 ms, the apply went 0.999 -> 0.961 ms) */
    const int *pout = G->matched ? G->perm_out : G->perm;
    const int gather_l = (G->perm || G->sl) && G->opt.jacobi <= 0 &&
                         !(G->opt.kernel == BSR_TRSV_LEVEL && G->opt.sched == BSR_TRSV_GRAPH);
    const int gather = (G->perm || G->sl) && !gather_l, scatter = pout || G->sr;
    if (gather) BSR_TRY(bsr_trsv_dev_permscale(G->n, G->b, k, G->perm, G->sl, G->fprec, x, G->t, vp, 0, G->stream));
    /* the sweeps' work vectors, distinct from each solve's input and output:
     * y is free until the scatter (or the U solve) writes it, x was consumed
     * by the gather (or by the L solve) */
    if (gather_l)
        BSR_TRY(bsr_trsv_dev_solve_gather(&G->tri[0], G->opt.kernel, G->opt.sched, G->perm, G->sl, G->t, x, G->t2,
                                          k, vp, G->stream));
    else BSR_TRY(tri_apply(G, 0, gather ? G->t : x, G->t2, gather ? y : G->t, k, vp));
    BSR_TRY(tri_apply(G, 1, G->t2, scatter ? G->t : y, scatter ? y : G->t, k, vp));
    if (scatter) BSR_TRY(bsr_trsv_dev_permscale(G->n, G->b, k, pout, G->sr, G->fprec, G->t, y, vp, 1, G->stream));
    return BSR_OK;
}

/* Host staging buffer of the convenience calls. */
static bsr_status ensure_hx(bsr_gpu_ilu *G, size_t need)
{
    if (need <= G->hx_bytes) return BSR_OK;
    bsr_cu_free(G->hx);
    G->hx = NULL; G->hx_bytes = 0;
    CU_TRY(bsr_cu_malloc(&G->hx, need));
    G->hx_bytes = need;
    return BSR_OK;
}

/* y = T^{-1} x for one triangle in the factors' numbering (x == y allowed):
 * through the work vectors, permuted with full renumbering. */
static bsr_status one_triangle(bsr_gpu_ilu *G, int which, const void *x, void *y, int k, bsr_precision vp,
                               size_t bytes)
{
    if (G->qrow) {
        BSR_TRY(bsr_trsv_dev_permscale(G->n, G->b, k, G->qrow, NULL, G->fprec, x, G->t2, vp, 0, G->stream));
        BSR_TRY(tri_apply(G, which, G->t2, G->t, y, k, vp));   /* y: free until the scatter */
        return bsr_trsv_dev_permscale(G->n, G->b, k, G->qrow, NULL, G->fprec, G->t, y, vp, 1, G->stream);
    }
    BSR_TRY(tri_apply(G, which, x, G->t, G->t2, k, vp));
    if (bytes) CU_TRY(cudaMemcpyAsync(y, G->t, bytes, cudaMemcpyDeviceToDevice, G->stream));
    return BSR_OK;
}

/* Shared body of bsr_gpu_ilu_apply / _trsv: which = -1 full apply, else one
 * triangle.  Device-current X: device path; host-only X: upload, solve, download. */
static bsr_status mv_call(bsr_gpu_ilu *G, int which, const bsr_multivec *X, bsr_multivec *Y, const char *fn)
{
    BSR_CHECK_ARG(G && X && Y, "%s: NULL argument", fn);
    if (X->n != (int64_t)G->n * G->b || Y->n != X->n || Y->k != X->k || Y->prec != X->prec)
        return bsr_error(BSR_ERR_SIZE, "%s: X (%lld x %d) and Y (%lld x %d) must both be %lld x k, same precision",
                         fn, (long long)X->n, X->k, (long long)Y->n, Y->k, (long long)G->n * G->b);
    BSR_TRY(check_vectors(G, X->k, X->prec, fn));
    BSR_TRY(bsr_cuda_enter(G->ctx));
    BSR_TRY(ensure_work(G, X->k, X->prec));
    const size_t bytes = (size_t)X->n * X->k * bsr_precision_size(X->prec);
    if (bsr_multivec_on_device(X)) {
        if (!Y->dev) BSR_TRY(bsr_cuda_multivec_alloc(G->ctx, Y));
        const void *x = bsr_cuda_multivec_data(X);
        void *y = bsr_cuda_multivec_data(Y);
        if (which < 0) BSR_TRY(bsr_gpu_ilu_apply_dev(G, x, y, X->k, X->prec));
        else BSR_TRY(one_triangle(G, which, x, y, X->k, X->prec, bytes));
        Y->where = BSR_ON_DEVICE;
        return BSR_OK;
    }
    BSR_CHECK_ARG(X->data && (X->where & BSR_ON_HOST) && Y->data, "%s: X has no current copy, or Y no host copy", fn);
    BSR_TRY(ensure_hx(G, bytes ? bytes : 1));
    if (bytes) CU_TRY(cudaMemcpyAsync(G->hx, X->data, bytes, cudaMemcpyHostToDevice, G->stream));
    if (which < 0) BSR_TRY(bsr_gpu_ilu_apply_dev(G, G->hx, G->hx, X->k, X->prec));
    else BSR_TRY(one_triangle(G, which, G->hx, G->hx, X->k, X->prec, bytes));
    if (bytes) CU_TRY(cudaMemcpyAsync(Y->data, G->hx, bytes, cudaMemcpyDeviceToHost, G->stream));
    CU_TRY(cudaStreamSynchronize(G->stream));
    Y->where = BSR_ON_HOST;
    return BSR_OK;
}

extern "C" bsr_status bsr_gpu_ilu_apply(bsr_gpu_ilu *G, const bsr_multivec *X, bsr_multivec *Y)
{
    return mv_call(G, -1, X, Y, "bsr_gpu_ilu_apply");
}

extern "C" bsr_status bsr_gpu_ilu_trsv(bsr_gpu_ilu *G, int upper, const bsr_multivec *X, bsr_multivec *Y)
{
    return mv_call(G, upper ? 1 : 0, X, Y, "bsr_gpu_ilu_trsv");
}

extern "C" bsr_status bsr_gpu_ilu_setup_times(const bsr_gpu_ilu *G, double *upload_s, double *analysis_s)
{
    BSR_CHECK_ARG(G, "bsr_gpu_ilu_setup_times: G is NULL");
    if (upload_s) *upload_s = G->upload_s;
    if (analysis_s) *analysis_s = G->host_s + G->index_s + G->device_s + G->graph_s;
    return BSR_OK;
}

extern "C" bsr_status bsr_gpu_ilu_breakdown(const bsr_gpu_ilu *G, bsr_gpu_ilu_setup_breakdown *b)
{
    BSR_CHECK_ARG(G && b, "bsr_gpu_ilu_breakdown: NULL argument");
    b->host_s = G->host_s;
    b->device_s = G->device_s;
    b->alloc_s = G->alloc_s;
    b->upload_s = G->upload_s;
    b->index_s = G->index_s;
    return BSR_OK;
}

extern "C" const bsr_trsv_tri *bsr_gpu_ilu_tri(const bsr_gpu_ilu *G, int upper)
{
    return G ? &G->tri[upper ? 1 : 0] : NULL;
}

/* Deterministic values in [-1,1) for timing inputs. */
template <typename TV> __global__ void fill_hash(int64_t n, TV *x)
{
    int64_t e = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= n) return;
    uint64_t h = (uint64_t)e * 0x9E3779B97F4A7C15ull + 12345u;
    h ^= h >> 31; h *= 0xBF58476D1CE4E5B9ull; h ^= h >> 27;
    x[e] = (TV)((double)(h >> 11) * (2.0 / 9007199254740992.0) - 1.0);
}

/* Median over reps of the event-timed region `which` (0 = L, 1 = U, 2 = apply). */
static bsr_status time_region(bsr_gpu_ilu *G, int which, void *x, void *y, int k, bsr_precision vp,
                              int reps, double max_s, double *ms)
{
    cudaEvent_t e0, e1;
    CU_TRY(cudaEventCreate(&e0));
    CU_TRY(cudaEventCreate(&e1));
    double *v = (double *)bsr_malloc(sizeof(double) * (reps > 0 ? reps : 1), "timings");
    bsr_status s = v ? BSR_OK : BSR_ERR_NOMEM;
    double spent = 0;
    int r = 0;
    for (int w = -1; s == BSR_OK && r < reps; w++) {
        cudaEventRecord(e0, G->stream);
        s = which == 2 ? bsr_gpu_ilu_apply_dev(G, x, y, k, vp) : tri_apply(G, which, x, y, G->t, k, vp);
        cudaEventRecord(e1, G->stream);
        if (s != BSR_OK) break;
        cudaError_t e = cudaEventSynchronize(e1);
        if (e != cudaSuccess) { cudaGetLastError(); s = bsr_error(BSR_ERR_CUDA, "bsr_gpu_ilu_time: %s", cudaGetErrorString(e)); break; }
        float f = 0;
        cudaEventElapsedTime(&f, e0, e1);
        spent += f * 1e-3;
        if (w >= 0) v[r++] = f; /* first run (w = -1) is the warm-up */
        if (spent > max_s && r >= 1) break;
    }
    if (s == BSR_OK) *ms = bsr_median(v, r);
    free(v);
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    return s;
}

extern "C" bsr_status bsr_gpu_ilu_time(bsr_gpu_ilu *G, int k, bsr_precision vp, int reps, double max_s,
                                       int with_apply, bsr_trsv_timing *t)
{
    BSR_CHECK_ARG(G && t && reps >= 1, "bsr_gpu_ilu_time: bad argument");
    BSR_TRY(check_vectors(G, k, vp, "bsr_gpu_ilu_time"));
    BSR_TRY(bsr_cuda_enter(G->ctx));
    memset(t, 0, sizeof *t);
    int64_t len = (int64_t)G->n * G->b * k;
    size_t bytes = (size_t)(len ? len : 1) * bsr_precision_size(vp);
    void *x = NULL, *y = NULL;
    CU_TRY(bsr_cu_malloc(&x, bytes));
    cudaError_t e = bsr_cu_malloc(&y, bytes);
    if (e != cudaSuccess) { bsr_cu_free(x); cudaGetLastError(); return bsr_error(BSR_ERR_NOMEM, "bsr_gpu_ilu_time: %s", cudaGetErrorString(e)); }
    unsigned nb = (unsigned)((len + 255) / 256);
    if (len) {
        if (vp == BSR_DOUBLE) fill_hash<double><<<nb, 256, 0, G->stream>>>(len, (double *)x);
        else fill_hash<float><<<nb, 256, 0, G->stream>>>(len, (float *)x);
    }
    double g0 = G->graph_s;
    bsr_status s = ensure_work(G, k, vp);
    if (s == BSR_OK) s = time_region(G, 0, x, y, k, vp, reps, max_s, &t->ms_L);
    if (s == BSR_OK) s = time_region(G, 1, x, y, k, vp, reps, max_s, &t->ms_U);
    if (s == BSR_OK && with_apply) s = time_region(G, 2, x, y, k, vp, reps, max_s, &t->ms_apply);
    t->ms_graph_build = (G->graph_s - g0) * 1e3;
    cudaStreamSynchronize(G->stream);
    bsr_cu_free(x);
    bsr_cu_free(y);
    return s;
}
