/* On-device numeric block ILU(0): scaling and factorization of the ILU
 * module's ILU(0) (src/ilu_*.c) on the GPU, for CFD codes that refactor
 * every time step.
 *
 * Symbolic work is done once on the host (src/ilu0_plan.c, OpenMP) from a
 * bsr_ilu set up for ILU(0) (its ordering, map of A onto the permuted rows,
 * L/U patterns and L's level schedule): for every A block its destination in
 * the factors, and for every
 * L block (i,k) the list of updates (U_kj position, target position in row i)
 * for the columns j of row k's U that are in row i's pattern.  Numeric phase,
 * all on the device:
 *  1. scale (one thread per permuted row, all rows at once): W = Ds P A P^T
 *     laid out as the host factors (L blocks, then U blocks with the diagonal
 *     first), Ds = inverse diagonal blocks with the CPU's fallback rule,
 *     rowref = largest scaled block norm / sqrt(b);
 *  2. factor, one launch per level of L's schedule, one thread per row (rows
 *     of a level are independent; every row reads only rows of earlier
 *     levels): row i in IKJ form exactly as ilu_row.c with the fixed
 *     pattern: L_ik = W_ik * inv(U_kk) for ascending k, then W_ij -= L_ik U_kj;
 *     finally the pivot is LU-factored with the same regularization rule
 *     (|p| < pivot_rel * rowref_i -> sign(p) * pivot_rel * rowref_i, counted
 *     per block) and inverted in place.  The operation order per block equals
 *     the CPU's, so the factors agree to rounding (FMA contraction);
 *  3. the values are gathered into the device preconditioner's level-ordered
 *     storage (bsr_gpu_ilu_set_values_dev), which then applies unchanged.
 * Errors (non-finite values, zero rows, singular pivots with strict_pivots)
 * are recorded with one 64-bit atomicMin of (row, kind, position): the
 * smallest failing row wins, as on the CPU, and the message names it. */
#include "ilu0_gpu.cuh"
#include <time.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

/* ---- host side ------------------------------------------------------------- */

/* Threads per CUDA block of the factorization's launches: a level has at most
 * a few thousand rows, one thread each, so small blocks spread a level over
 * more SMs (H100, stencil3d:100:4: 14.8 ms at 32, 15.9 at 64, 18.6 at 128,
 * 25.6 at 256).  BSR_ILU0_T (32..256) overrides, to measure. */
static int level_threads(void)
{
    const char *e = getenv("BSR_ILU0_T");
    const int t = e ? atoi(e) : 0;
    return t >= 32 && t <= 256 && t % 32 == 0 ? t : 32;
}

/* A fresh device copy of n host ints (staged through pinned memory when large). */
static bsr_status up_ints(bsr_context *ctx, int **dev, const int *host, size_t n)
{
    CU_TRY(cudaMalloc((void **)dev, (n ? n : 1) * sizeof(int)));
    return bsr_cuda_h2d(ctx, *dev, host, n * sizeof(int));
}

extern "C" void bsr_gpu_ilu0_destroy(bsr_gpu_ilu0 *D)
{
    if (!D) return;
    if (D->ctx) bsr_cuda_enter(D->ctx);
    if (D->stream) cudaStreamSynchronize(D->stream);
    cudaFree(D->ap); cudaFree(D->asrc); cudaFree(D->adst); cudaFree(D->adiag); cudaFree(D->diagw);
    cudaFree(D->perm); cudaFree(D->Lp); cudaFree(D->Lc); cudaFree(D->Up); cudaFree(D->updp);
    cudaFree(D->upd); cudaFree(D->lvrows); cudaFree(D->W); cudaFree(D->dl); cudaFree(D->rowref);
    cudaFree(D->cnt); cudaFree(D->err);
    free(D->level_ptr);
    free(D);
}

extern "C" bsr_status bsr_gpu_ilu0_create(bsr_context *ctx, const bsr_ilu *F, bsr_gpu_ilu0 **out)
{
    BSR_CHECK_ARG(ctx && F && out, "bsr_gpu_ilu0_create: NULL argument");
    *out = NULL;
    if (bsr_context_backend(ctx) != BSR_BACKEND_CUDA || !ctx->cuda)
        return bsr_error(BSR_ERR_ARG, "bsr_gpu_ilu0_create: the context is not a CUDA context (%s)", bsr_context_describe(ctx));
    if (F->mode != 0 || !F->L || !F->U || !F->lvL || !F->ap)
        return bsr_error(BSR_ERR_ARG, "bsr_gpu_ilu0_create: F is not an ILU(0) factorization with its symbolic phase done");
    if (F->b < 1 || F->b > BSR_MAX_BLOCK)
        return bsr_error(BSR_ERR_UNSUPPORTED, "bsr_gpu_ilu0_create: block size %d outside 1..%d", F->b, BSR_MAX_BLOCK);
    BSR_TRY(bsr_cuda_enter(ctx));
    bsr_gpu_ilu0 *D = (bsr_gpu_ilu0 *)bsr_calloc(1, sizeof *D, "bsr_gpu_ilu0");
    if (!D) return BSR_ERR_NOMEM;
    D->ctx = ctx;
    D->stream = bsr_cuda_stream(ctx);
    D->F = F;
    D->n = F->n; D->b = F->b; D->nnzA = F->nnzbA; D->nL = F->L->nnzb; D->nU = F->U->nnzb;
    const int n = D->n, bb = D->b * D->b;
    const bsr_levels *lv = F->lvL;
    int *adst = (int *)bsr_malloc(((size_t)D->nnzA + 1) * sizeof(int), "ILU(0) map");
    int *adiag = (int *)bsr_malloc(((size_t)n + 1) * sizeof(int), "ILU(0) map");
    int *diagw = (int *)bsr_malloc(((size_t)n + 1) * sizeof(int), "ILU(0) map");
    int *updp = NULL, *upd = NULL;   /* upd: pairs, uploaded as int2 */
    int64_t nupd = 0;
    bsr_status s = adst && adiag && diagw ? BSR_OK : BSR_ERR_NOMEM;
    D->nlevels = lv->nlevels;
    D->level_ptr = (int *)bsr_malloc(((size_t)lv->nlevels + 1) * sizeof(int), "ILU(0) levels");
    if (!D->level_ptr) s = BSR_ERR_NOMEM;
    else memcpy(D->level_ptr, lv->level_ptr, ((size_t)lv->nlevels + 1) * sizeof(int));
    if (s == BSR_OK && lv->n != n) s = bsr_error(BSR_ERR_SIZE, "bsr_gpu_ilu0_create: L's schedule has %d rows, L %d", lv->n, n);
    if (s == BSR_OK) s = bsr_ilu0_plan_map(F, adst, adiag, diagw);
    bsr_prof_mark_dev("ilu0 gpu: host map");
    if (s == BSR_OK) s = bsr_ilu0_plan_updates(F, &updp, &upd, &nupd);
    bsr_prof_mark_dev("ilu0 gpu: host update lists");
    if (s == BSR_OK) s = up_ints(ctx, &D->ap, F->ap, (size_t)n + 1);
    if (s == BSR_OK) s = up_ints(ctx, &D->asrc, F->asrc, (size_t)D->nnzA);
    if (s == BSR_OK) s = up_ints(ctx, &D->adst, adst, (size_t)D->nnzA);
    if (s == BSR_OK) s = up_ints(ctx, &D->adiag, adiag, (size_t)n);
    if (s == BSR_OK) s = up_ints(ctx, &D->diagw, diagw, (size_t)n);
    if (s == BSR_OK && F->ord) s = up_ints(ctx, &D->perm, F->ord->perm, (size_t)n);
    if (s == BSR_OK) s = up_ints(ctx, &D->Lp, F->L->rowptr, (size_t)n + 1);
    if (s == BSR_OK) s = up_ints(ctx, &D->Up, F->U->rowptr, (size_t)n + 1);
    if (s == BSR_OK) s = up_ints(ctx, &D->updp, updp, (size_t)D->nL + 1);
    if (s == BSR_OK) s = up_ints(ctx, &D->lvrows, lv->rows, (size_t)n);
    if (s == BSR_OK) {
        cudaError_t e = cudaMalloc((void **)&D->upd, (size_t)(nupd ? nupd : 1) * sizeof(int2));
        if (e == cudaSuccess) e = cudaMalloc((void **)&D->W, ((size_t)D->nL + D->nU + 1) * bb * sizeof(double));
        if (e == cudaSuccess) e = cudaMalloc((void **)&D->dl, ((size_t)n + 1) * bb * sizeof(double));
        if (e == cudaSuccess) e = cudaMalloc((void **)&D->rowref, ((size_t)n + 1) * sizeof(double));
        if (e == cudaSuccess) e = cudaMalloc((void **)&D->cnt, 2 * sizeof(int));
        if (e == cudaSuccess) e = cudaMalloc((void **)&D->err, sizeof(unsigned long long));
        if (e != cudaSuccess) {
            cudaGetLastError();
            s = bsr_error(e == cudaErrorMemoryAllocation ? BSR_ERR_NOMEM : BSR_ERR_CUDA,
                          "bsr_gpu_ilu0_create: device arrays (%d + %d factor blocks of %d x %d): %s",
                          D->nL, D->nU, D->b, D->b, cudaGetErrorString(e));
        }
    }
    if (s == BSR_OK) s = bsr_cuda_h2d(ctx, D->upd, upd, (size_t)nupd * sizeof(int2));
    free(adst); free(adiag); free(diagw); free(updp); free(upd);
    bsr_prof_mark_dev("ilu0 gpu: uploads + allocations");
    if (s != BSR_OK) { bsr_gpu_ilu0_destroy(D); return s; }
    *out = D;
    return BSR_OK;
}

typedef void (*ilu0_scale_fn)(const bsr_gpu_ilu0 *, unsigned, int, const void *, bsr_precision);
typedef void (*ilu0_level_fn)(const bsr_gpu_ilu0 *, unsigned, int, int, int, double, int);
#define SCALE_FN(B) ilu0_scale_b##B,
#define LEVEL_FN(B) ilu0_level_b##B,
static const ilu0_scale_fn scale_fn[10] = {BSR_FOR_EACH_B(SCALE_FN)};
static const ilu0_level_fn level_fn[10] = {BSR_FOR_EACH_B(LEVEL_FN)};
#undef SCALE_FN
#undef LEVEL_FN

/* Message for an error key, in the CPU code's words. */
static bsr_status report(const bsr_gpu_ilu0 *D, unsigned long long key, const bsr_matrix *A)
{
    const bsr_ilu *F = D->F;
    const int row = (int)(key >> 36), kind = (int)((key >> 32) & 15);
    const unsigned aux = (unsigned)(key & 0xffffffffu);
    const int orig = F->ord ? F->ord->perm[row] : row;
    switch (kind) {
    case E_AVAL:
        return bsr_error(BSR_ERR_VALUE, "ILU: A has a non-finite value in block (%d,%d)", row, A->colind[F->asrc[aux]]);
    case E_ZROW:
        return bsr_error(BSR_ERR_SINGULAR, "ILU: block row %d of A is zero: A is singular", row);
    case E_OVFL:
        return bsr_error(BSR_ERR_SINGULAR, "ILU: scaling block row %d by its inverse diagonal block "
                         "overflows (diagonal block nearly singular)", row);
    case E_LBLK:
        return bsr_error(BSR_ERR_SINGULAR, "ILU: non-finite block L(%d,%d) in block row %d (row %d of A)",
                         row, F->L->colind[aux], row, orig);
    case E_PIV:
        return bsr_error(BSR_ERR_SINGULAR, "ILU: non-finite pivot block in block row %d (row %d of A)", row, orig);
    case E_STRICT: {
        double rr = 0;
        if (cudaMemcpy(&rr, D->rowref + row, sizeof rr, cudaMemcpyDeviceToHost) != cudaSuccess) cudaGetLastError();
        return bsr_error(BSR_ERR_SINGULAR, "ILU: singular pivot block in block row %d (row %d of A):"
                         " %d pivot(s) below %.3g", row, orig, (int)aux, F->pivot_rel * rr);
    }
    case E_INV:
        return bsr_error(BSR_ERR_SINGULAR, "ILU: non-finite inverse pivot in block row %d (row %d of A)", row, orig);
    default:
        return bsr_error(BSR_ERR_SINGULAR, "ILU: non-finite block U(%d,%d) in block row %d (row %d of A)",
                         row, F->U->colind[aux], row, orig);
    }
}

extern "C" bsr_status bsr_gpu_ilu0_factor(bsr_gpu_ilu0 *D, const bsr_matrix *A, bsr_gpu_ilu *G)
{
    BSR_CHECK_ARG(D && A, "bsr_gpu_ilu0_factor: NULL argument");
    const bsr_ilu *F = D->F;
    if (A->nbrows != D->n || A->nbcols != D->n || A->b != D->b || A->nnzb != D->nnzA)
        return bsr_error(BSR_ERR_SIZE, "bsr_gpu_ilu0_factor: A (%d x %d blocks of %d, %d blocks) is not the pattern "
                         "of the setup (%d blocks of %d, %d blocks)", A->nbrows, A->nbcols, A->b, A->nnzb, D->n, D->b, D->nnzA);
    if (!bsr_matrix_on_device(A) || bsr_cuda_dmat(A)->ctx != D->ctx)
        return bsr_error(BSR_ERR_ARG, "bsr_gpu_ilu0_factor: A has no current device mirror in this context (bsr_matrix_upload first)");
    BSR_TRY(bsr_cuda_enter(D->ctx));
    double t0 = now_s();
    D->valid = 0;
    cudaStream_t st = D->stream;
    CU_TRY(cudaMemsetAsync(D->cnt, 0, 2 * sizeof(int), st));
    CU_TRY(cudaMemsetAsync(D->err, 0xff, sizeof(unsigned long long), st));
    const int n = D->n, T = level_threads();
    const void *av = bsr_cuda_matrix_val(A);
    if (n > 0) {
        unsigned nb = (unsigned)((n + T - 1) / T);
        scale_fn[D->b - 1](D, nb, T, av, A->prec);
        CU_LAUNCHED("ilu0_scale");
    }
    unsigned long long key = ~0ull;
    CU_TRY(cudaMemcpyAsync(&key, D->err, sizeof key, cudaMemcpyDeviceToHost, st));
    CU_TRY(cudaStreamSynchronize(st));
    if (key != ~0ull) return report(D, key, A);
    for (int v = 0; v < D->nlevels; v++) {
        const int r0 = D->level_ptr[v], nr = D->level_ptr[v + 1] - r0;
        if (nr <= 0) continue;
        unsigned nb = (unsigned)((nr + T - 1) / T);
        level_fn[D->b - 1](D, nb, T, r0, nr, F->pivot_rel, F->opt.strict_pivots);
        CU_LAUNCHED("ilu0_level");
    }
    int cnt[2] = {0, 0};
    CU_TRY(cudaMemcpyAsync(&key, D->err, sizeof key, cudaMemcpyDeviceToHost, st));
    CU_TRY(cudaMemcpyAsync(cnt, D->cnt, sizeof cnt, cudaMemcpyDeviceToHost, st));
    CU_TRY(cudaStreamSynchronize(st));
    D->nreg = cnt[0];
    D->nfb = cnt[1];
    if (key != ~0ull) return report(D, key, A);
    D->factor_s = now_s() - t0;
    D->valid = 1;
    if (G) {
        const int bb = D->b * D->b;
        BSR_TRY(bsr_gpu_ilu_set_values_dev(G, D->W, D->W + (size_t)D->nL * bb, D->dl));
    }
    return BSR_OK;
}

extern "C" bsr_status bsr_gpu_ilu0_download(const bsr_gpu_ilu0 *D, double *Lval, double *Uval, double *scale)
{
    BSR_CHECK_ARG(D, "bsr_gpu_ilu0_download: NULL argument");
    BSR_CHECK_ARG(D->valid, "bsr_gpu_ilu0_download: the last factorization failed or none was done");
    BSR_TRY(bsr_cuda_enter(D->ctx));
    const size_t bb = (size_t)D->b * D->b;
    if (Lval && D->nL) CU_TRY(cudaMemcpy(Lval, D->W, (size_t)D->nL * bb * sizeof(double), cudaMemcpyDeviceToHost));
    if (Uval && D->nU) CU_TRY(cudaMemcpy(Uval, D->W + (size_t)D->nL * bb, (size_t)D->nU * bb * sizeof(double), cudaMemcpyDeviceToHost));
    if (scale && D->n) CU_TRY(cudaMemcpy(scale, D->dl, (size_t)D->n * bb * sizeof(double), cudaMemcpyDeviceToHost));
    return BSR_OK;
}

extern "C" bsr_status bsr_gpu_ilu0_stats(const bsr_gpu_ilu0 *D, int *pivots_regularized, int *scaling_fallbacks,
                                         double *factor_s)
{
    BSR_CHECK_ARG(D, "bsr_gpu_ilu0_stats: NULL argument");
    if (pivots_regularized) *pivots_regularized = D->nreg;
    if (scaling_fallbacks) *scaling_fallbacks = D->nfb;
    if (factor_s) *factor_s = D->factor_s;
    return BSR_OK;
}
