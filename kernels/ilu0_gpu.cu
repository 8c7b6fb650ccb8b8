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
#include "cuda_internal.h"
#include "trsv.h"
#include "ilu_impl.h"
#include "ilu0_plan.h"
#include <limits.h>
#include <math.h>
#include <string.h>
#include <time.h>

struct bsr_gpu_ilu0 {
    bsr_context *ctx;
    cudaStream_t stream;
    const bsr_ilu *F;           /* symbolic source (borrowed; must outlive D) */
    int n, b, nnzA, nL, nU;
    int nlevels;
    int *level_ptr;             /* host [nlevels+1] */
    /* device arrays */
    int *ap, *asrc, *adst, *adiag, *diagw, *perm;
    int *Lp, *Lc, *Up, *updp;
    int2 *upd;
    int *lvrows;
    double *W;                  /* [(nL+nU)*b*b]: L then U, host layout */
    double *dl, *rowref;        /* [n*b*b], [n] */
    int *cnt;                   /* [2]: regularized pivots, scaling fallbacks */
    unsigned long long *err;
    int nreg, nfb;
    double factor_s;
    int valid;
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

/* ---- block kernels (ports of src/blockops.c, same operation order) ---- */

/* LU with partial pivoting; pivots below tiny pushed to +-tiny; returns the count. */
template <int B> __device__ int blk_lu(double *a, int *piv, double tiny)
{
    int nreg = 0;
    for (int r = 0; r < B; r++) piv[r] = r;
    for (int c = 0; c < B; c++) {
        int p = c;
        double big = fabs(a[c * B + c]);
        for (int r = c + 1; r < B; r++)
            if (fabs(a[r * B + c]) > big) { big = fabs(a[r * B + c]); p = r; }
        if (p != c) {
            for (int j = 0; j < B; j++) { double t = a[c * B + j]; a[c * B + j] = a[p * B + j]; a[p * B + j] = t; }
            int t = piv[c]; piv[c] = piv[p]; piv[p] = t;
        }
        double d = a[c * B + c];
        if (tiny > 0 && !(fabs(d) >= tiny) && !isnan(d)) {
            d = copysign(tiny, d);
            a[c * B + c] = d;
            nreg++;
        }
        double inv = 1.0 / d;
        for (int r = c + 1; r < B; r++) {
            double l = a[r * B + c] * inv;
            a[r * B + c] = l;
            for (int j = c + 1; j < B; j++) a[r * B + j] -= l * a[c * B + j];
        }
    }
    return nreg;
}

/* inv = (P^T L U)^{-1} column by column (forward, backward substitution). */
template <int B> __device__ void blk_lu_inv(const double *lu, const int *piv, double *inv)
{
    double x[B];
    for (int j = 0; j < B; j++) {
        for (int r = 0; r < B; r++) x[r] = piv[r] == j ? 1.0 : 0.0;
        for (int r = 1; r < B; r++)
            for (int c = 0; c < r; c++) x[r] -= lu[r * B + c] * x[c];
        for (int r = B - 1; r >= 0; r--) {
            for (int c = r + 1; c < B; c++) x[r] -= lu[r * B + c] * x[c];
            x[r] /= lu[r * B + r];
        }
        for (int r = 0; r < B; r++) inv[r * B + j] = x[r];
    }
}

/* c = a * m (c distinct from a and m). */
template <int B> __device__ void blk_mul(double *c, const double *a, const double *m)
{
    for (int i = 0; i < B; i++) {
        double r[B];
        for (int j = 0; j < B; j++) r[j] = 0.0;
        for (int k = 0; k < B; k++)
            for (int j = 0; j < B; j++) r[j] += a[i * B + k] * m[k * B + j];
        for (int j = 0; j < B; j++) c[i * B + j] = r[j];
    }
}

/* c -= a * m. */
template <int B> __device__ void blk_mulsub(double *c, const double *a, const double *m)
{
    for (int i = 0; i < B; i++) {
        double r[B];
        for (int j = 0; j < B; j++) r[j] = c[i * B + j];
        for (int k = 0; k < B; k++)
            for (int j = 0; j < B; j++) r[j] -= a[i * B + k] * m[k * B + j];
        for (int j = 0; j < B; j++) c[i * B + j] = r[j];
    }
}

template <int B> __device__ double blk_maxabs(const double *a)
{
    double m = 0.0;
    for (int i = 0; i < B * B; i++) if (fabs(a[i]) > m) m = fabs(a[i]);
    return m;
}

/* Frobenius norm, rescaled when the plain sum over- or underflows. */
template <int B> __device__ double blk_fnorm(const double *a)
{
    double s = 0.0;
    for (int i = 0; i < B * B; i++) s += a[i] * a[i];
    if (s <= 1e300 && (s >= 1e-290 || s == 0.0)) return sqrt(s);
    if (isnan(s)) return s;
    double m = blk_maxabs<B>(a);
    if (m == 0.0 || !isfinite(m)) return m;
    s = 0.0;
    for (int i = 0; i < B * B; i++) s += (a[i] / m) * (a[i] / m);
    return m * sqrt(s);
}

template <int B> __device__ int blk_finite(const double *a)
{
    for (int i = 0; i < B * B; i++) if (!isfinite(a[i])) return 0;
    return 1;
}

/* Error key: smallest row first, then kind, then the position. */
__device__ __forceinline__ void fail(unsigned long long *err, int row, int kind, unsigned aux)
{
    unsigned long long key = ((unsigned long long)row << 36) | ((unsigned long long)kind << 32) | aux;
    atomicMin(err, key);
}

enum { E_AVAL = 1, E_ZROW, E_OVFL, E_LBLK, E_PIV, E_STRICT, E_INV, E_UBLK };

/* Step 1: W = Ds P A P^T in the factors' layout, dl = Ds, rowref (see the
 * file comment and src/ilu_setup.c scale()). */
template <int B, typename TA>
__global__ void ilu0_scale(int n, const int *__restrict__ ap, const int *__restrict__ asrc,
                           const int *__restrict__ adst, const int *__restrict__ adiag,
                           const int *__restrict__ diagw, const int *__restrict__ perm,
                           const TA *__restrict__ A, double *__restrict__ W, double *__restrict__ dl,
                           double *__restrict__ rowref, int *cnt, unsigned long long *err)
{
    const int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= n) return;
    const int BB = B * B, r = perm ? perm[k] : k;
    double blk[BB], ds[BB], lu[BB];
    int piv[B];
    double smax = 0.0;
    for (int p = ap[k]; p < ap[k + 1]; p++) {
        const TA *a = A + (size_t)asrc[p] * BB;
        for (int e = 0; e < BB; e++) {
            blk[e] = (double)a[e];
            if (!isfinite(blk[e])) { fail(err, r, E_AVAL, (unsigned)p); return; }
        }
        double nr = blk_fnorm<B>(blk);
        if (nr > smax) smax = nr;
    }
    if (smax == 0.0) { fail(err, r, E_ZROW, 0); return; }
    const int dp = adiag[k];
    int singular = 1;
    if (dp >= 0) {
        const TA *a = A + (size_t)asrc[dp] * BB;
        for (int e = 0; e < BB; e++) lu[e] = blk[e] = (double)a[e];
        double amax = blk_maxabs<B>(blk);
        blk_lu<B>(lu, piv, 0.0);
        singular = amax == 0.0;
        for (int i = 0; i < B; i++) if (fabs(lu[i * B + i]) <= 1e-14 * amax) singular = 1;
        if (!singular) blk_lu_inv<B>(lu, piv, ds);
        if (!singular && !blk_finite<B>(ds)) singular = 1;
    }
    if (singular) {
        for (int e = 0; e < BB; e++) ds[e] = 0.0;
        for (int i = 0; i < B; i++) ds[i * B + i] = 1.0 * (sqrt((double)B) / smax);
        atomicAdd(&cnt[1], 1);
    }
    double rmax = 0.0;
    for (int p = ap[k]; p < ap[k + 1]; p++) {
        const TA *a = A + (size_t)asrc[p] * BB;
        double *out = W + (size_t)adst[p] * BB;
        for (int e = 0; e < BB; e++) blk[e] = (double)a[e];
        if (p == dp && !singular) {
            for (int e = 0; e < BB; e++) lu[e] = 0.0;
            for (int i = 0; i < B; i++) lu[i * B + i] = 1.0;
        } else {
            blk_mul<B>(lu, ds, blk);
        }
        for (int e = 0; e < BB; e++) out[e] = lu[e];
        double nr = blk_fnorm<B>(lu);
        if (nr > rmax) rmax = nr;
    }
    if (dp < 0) { /* the diagonal of the pattern is there even when A lacks it */
        double *out = W + (size_t)diagw[k] * BB;
        for (int e = 0; e < BB; e++) out[e] = 0.0;
    }
    if (!isfinite(rmax)) { fail(err, r, E_OVFL, 0); return; }
    rowref[k] = rmax / sqrt((double)B);
    for (int e = 0; e < BB; e++) dl[(size_t)k * BB + e] = ds[e];
}

/* Step 2: the rows rows[0..nr) of one level (see the file comment and
 * src/ilu_row.c with the pattern fixed). */
template <int B>
__global__ void ilu0_level(int nr, const int *__restrict__ rows, const int *__restrict__ Lp,
                           const int *__restrict__ Up, const int *__restrict__ updp,
                           const int2 *__restrict__ upd, int nL, double *W,
                           const double *__restrict__ rowref, double pivot_rel, int strict,
                           int *cnt, unsigned long long *err)
{
    const int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= nr) return;
    const int BB = B * B, i = rows[t];
    double *Uv = W + (size_t)nL * BB;
    double m[BB], lu[BB], inv[BB];
    int piv[B];
    for (int l = Lp[i]; l < Lp[i + 1]; l++) {
        double *x = W + (size_t)l * BB;
        /* column k's inverted pivot is U's first block of row k: updp holds
         * it as the first entry of the list of L block l */
        const int u0 = updp[l], u1 = updp[l + 1];
        const double *uinv = W + (size_t)upd[u0].x * BB;
        blk_mul<B>(m, x, uinv);
        for (int e = 0; e < BB; e++) x[e] = m[e];
        if (!blk_finite<B>(m)) { fail(err, i, E_LBLK, (unsigned)l); return; }
        for (int u = u0 + 1; u < u1; u++) {
            const int2 q = upd[u];
            blk_mulsub<B>(W + (size_t)q.y * BB, m, W + (size_t)q.x * BB);
        }
    }
    double *d = Uv + (size_t)Up[i] * BB;
    if (!blk_finite<B>(d)) { fail(err, i, E_PIV, 0); return; }
    const double tiny = pivot_rel * rowref[i];
    for (int e = 0; e < BB; e++) lu[e] = d[e];
    const int nreg = blk_lu<B>(lu, piv, tiny);
    if (nreg) {
        if (strict) { fail(err, i, E_STRICT, (unsigned)nreg); return; }
        atomicAdd(&cnt[0], 1);
    }
    blk_lu_inv<B>(lu, piv, inv);
    if (!blk_finite<B>(inv)) { fail(err, i, E_INV, 0); return; }
    for (int q = Up[i] + 1; q < Up[i + 1]; q++)
        if (!blk_finite<B>(Uv + (size_t)q * BB)) { fail(err, i, E_UBLK, (unsigned)q); return; }
    for (int e = 0; e < BB; e++) d[e] = inv[e];
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

#define DISPATCH_B(b, CALL) \
    switch (b) { \
    case 1: { const int BV = 1; CALL; } break; case 2: { const int BV = 2; CALL; } break; \
    case 3: { const int BV = 3; CALL; } break; case 4: { const int BV = 4; CALL; } break; \
    case 5: { const int BV = 5; CALL; } break; case 6: { const int BV = 6; CALL; } break; \
    case 7: { const int BV = 7; CALL; } break; case 8: { const int BV = 8; CALL; } break; \
    case 9: { const int BV = 9; CALL; } break; default: { const int BV = 10; CALL; } break; }

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
        if (A->prec == BSR_DOUBLE) {
            DISPATCH_B(D->b, (ilu0_scale<BV, double><<<nb, T, 0, st>>>(n, D->ap, D->asrc, D->adst, D->adiag, D->diagw,
                       D->perm, (const double *)av, D->W, D->dl, D->rowref, D->cnt, D->err)));
        } else {
            DISPATCH_B(D->b, (ilu0_scale<BV, float><<<nb, T, 0, st>>>(n, D->ap, D->asrc, D->adst, D->adiag, D->diagw,
                       D->perm, (const float *)av, D->W, D->dl, D->rowref, D->cnt, D->err)));
        }
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
        DISPATCH_B(D->b, (ilu0_level<BV><<<nb, T, 0, st>>>(nr, D->lvrows + r0, D->Lp, D->Up, D->updp, D->upd, D->nL,
                   D->W, D->rowref, F->pivot_rel, F->opt.strict_pivots, D->cnt, D->err)));
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
