/* SPDX-License-Identifier: BSD-3-Clause */
/* Dispatch of the level-scheduled solves (kernels in trsv_level.cuh, one
 * module per block size in trsv_level_bB.cu: CUDA loads a module's image on
 * the first launch of one of its kernels, and one module for all ten block
 * sizes cost the first solve ~40 ms on the H100) and the permutation +
 * scaling kernel of the device ILU apply. */
#include "trsv_cuda.h"

/* No override: every field < 0 (the rules of trsv_level.cuh). */
static const bsr_trsv_tuning rules = {-1, -1, -1, -1, -1, -1, -1, -1};
bsr_trsv_tuning bsr_trsv_tune = rules;

extern "C" void bsr_trsv_set_tuning(const bsr_trsv_tuning *t)
{
    bsr_trsv_tune = t ? *t : rules;
}

/* Implemented in trsv_tree.cu: P21-P24 over the separator-tree levels. */
bsr_status trsv_tree_solve(const bsr_trsv_tri *T, int kernel, const void *x, void *y, int k,
                           bsr_precision vprec, cudaStream_t st);

extern "C" bsr_status bsr_trsv_dev_solve_gather(const bsr_trsv_tri *T, int kernel, int sched, const int *perm,
                                                const void *S, void *w, const void *x, void *y, int k,
                                                bsr_precision vprec, void *stream)
{
    BSR_CHECK_ARG(T && x && y, "bsr_trsv_dev_solve: NULL argument");
    BSR_CHECK_ARG(k >= 1 && k <= TRSV_MAXK, "bsr_trsv_dev_solve: k = %d outside 1..%d", k,
                  TRSV_MAXK);
    BSR_CHECK_ARG(!(S || perm) || (!T->upper && w && w != x && w != y),
                  "bsr_trsv_dev_solve_gather: a gather needs a lower triangle and a distinct work vector");
    if (T->b < 1 || T->b > TRSV_MAXB)
        return bsr_error(BSR_ERR_UNSUPPORTED, "bsr_trsv_dev_solve: block size %d outside 1..%d",
                         T->b, TRSV_MAXB);
    cudaStream_t st = (cudaStream_t)stream;
    if (kernel != TRSV_K_LEVEL) {
        if (S || perm) {
            BSR_TRY(bsr_trsv_dev_permscale(T->n, T->b, k, perm, S, T->fprec, x, w, vprec, 0, st));
            x = w;
        }
        return trsv_tree_solve(T, kernel, x, y, k, vprec, st);
    }
    BSR_CHECK_ARG(sched >= TRSV_S_SYNCFREE && sched <= TRSV_S_FLAGS,
                  "bsr_trsv_dev_solve: unknown schedule %d", sched);
#define TRSV_LEVEL_FN(B) trsv_level_b##B,
    static const trsv_level_fn fn[TRSV_MAXB] = {BSR_FOR_EACH_B(TRSV_LEVEL_FN)};
#undef TRSV_LEVEL_FN
    return fn[T->b - 1](T, sched, perm, S, w, x, y, k, vprec, st);
}

extern "C" bsr_status bsr_trsv_dev_solve(const bsr_trsv_tri *T, int kernel, int sched,
                                         const void *x, void *y, int k, bsr_precision vprec,
                                         void *stream)
{
    return bsr_trsv_dev_solve_gather(T, kernel, sched, NULL, NULL, NULL, x, y, k, vprec, stream);
}

/* ---- permutation + block-diagonal scaling ---------------------------------- */

/* gather: out_i = S_i in_{perm[i]};  scatter: out_{perm[i]} = S_i in_i.
 * One thread per output entry (i, r, j). */
template <int B, typename TF, typename TV>
__global__ void permscale_kernel(int n, int k, const int *__restrict__ perm,
                                 const TF *__restrict__ S, const TV *__restrict__ in,
                                 TV *__restrict__ out, int scatter)
{
    const int64_t e = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    const int bk = B * k;
    if (e >= (int64_t)n * bk) return;
    const int i = (int)(e / bk), o = (int)(e - (int64_t)i * bk), r = o / k, j = o - r * k;
    const int pi = perm ? perm[i] : i;
    const TV *src = in + (size_t)(scatter ? i : pi) * bk;
    TV v;
    if (S) {
        const TF *s = S + (size_t)i * B * B + r * B;
        v = 0;
#pragma unroll
        for (int c = 0; c < B; c++) v += (TV)s[c] * src[c * k + j];
    } else {
        v = src[o];
    }
    out[(size_t)(scatter ? pi : i) * bk + o] = v;
}

extern "C" bsr_status bsr_trsv_dev_permscale(int n, int b, int k, const int *perm, const void *S,
                                             bsr_precision fprec, const void *in, void *out,
                                             bsr_precision vprec, int scatter, void *stream)
{
    BSR_CHECK_ARG(in && out && in != out, "bsr_trsv_dev_permscale: bad buffers");
    if (n == 0) return BSR_OK;
    cudaStream_t st = (cudaStream_t)stream;
    int64_t tot = (int64_t)n * b * k;
    unsigned nb = (unsigned)((tot + 255) / 256);
    int ok = trsv_with_types(fprec, vprec, [&](auto tf, auto tv) {
        using TF = decltype(tf);
        using TV = decltype(tv);
        trsv_with_b(b, [&](auto Bc) {
            permscale_kernel<decltype(Bc)::value, TF, TV><<<nb, 256, 0, st>>>(
                n, k, perm, (const TF *)S, (const TV *)in, (TV *)out, scatter);
        });
    });
    if (!ok) return bsr_error(BSR_ERR_UNSUPPORTED, "bsr_trsv_dev_permscale: precision pair");
    CU_LAUNCHED("permscale_kernel");
    return BSR_OK;
}
