/* SPDX-License-Identifier: BSD-3-Clause */
/* ROWJ dispatch (kernels in spmm_rowj.cuh, one module per block size), the
 * static choice of the vectors per thread, and AUTO's timed choice. */
#include "spmm_rowj.cuh"

#define ROWJ_DECL(B) \
    bsr_status bsr_spmm_rowj_b##B(bsr_context *, const bsr_matrix *, double, const void *, double, void *, int, int, int, int, int);
BSR_FOR_EACH_B(ROWJ_DECL)
#undef ROWJ_DECL

/* Vectors per thread (J code) for a chunk of kk vectors: layout V on the
 * sliced copy with one vector a thread at kk <= 2, two at kk <= 4, three
 * above: AUTO's usual picks at b = 4, 5 on the H100 (bench/RESULTS.md).
 * AUTO does not use the rule: it times the candidates.  BSR_ROWJ_J
 * (1..5, 11..15, 21..25, 31..35) overrides it. */
int bsr_spmm_rowj_cols(int b, int kk)
{
    static int env_j = -1; /* sweep knob, read once (README, "Environment variables") */
    if (env_j < 0) env_j = getenv("BSR_ROWJ_J") ? atoi(getenv("BSR_ROWJ_J")) : 0;
    if (rowj_valid(env_j)) return env_j;
    (void)b;
    return kk <= 2 ? 21 : kk <= 4 ? 22 : 23;
}

bsr_status bsr_spmm_rowj(bsr_context *ctx, const bsr_matrix *A, double alpha, const void *x,
                         double beta, void *y, int k, int j0, int kk, int J, int T)
{
    typedef bsr_status (*fn_t)(bsr_context *, const bsr_matrix *, double, const void *, double, void *, int, int, int,
                               int, int);
#define ROWJ_FN(B) bsr_spmm_rowj_b##B,
    static const fn_t fn[10] = {BSR_FOR_EACH_B(ROWJ_FN)};
#undef ROWJ_FN
    if (A->nbrows == 0) return BSR_OK;
    if (A->b < 1 || A->b > 10) return bsr_error(BSR_ERR_UNSUPPORTED, "GPU SpMM: block size %d not in 1..10", A->b);
    if (!rowj_valid(J)) J = bsr_spmm_rowj_cols(A->b, kk);
    int avail = 0;
    if (J > 20) BSR_TRY(bsr_spmm_sell_prepare(ctx, A, &avail)); /* not kept: rowj_b falls back */
    if (!(avail && rowj_code_sliced(A->b, J))) BSR_TRY(bsr_cuda_matrix_bsr(ctx, A));   /* reads val */
    return fn[A->b - 1](ctx, A, alpha, x, beta, y, k, j0, kk, J, T);
}

int bsr_spmm_rowj_reads_sliced(const bsr_matrix *A, int kk, int code, int autopick)
{
    const bsr_dev_matrix *d = bsr_cuda_dmat(A);
    if (!d || d->sell != 2 || kk < 1 || kk > 16) return 0;
    int J = autopick ? d->auto_j[kk] : code;
    if (!autopick && !rowj_valid(J)) J = bsr_spmm_rowj_cols(A->b, kk);
    return rowj_code_sliced(A->b, J);
}

/* AUTO: ROWJ with (J, T) chosen once per matrix and chunk width by timing
 * each candidate on the device (one warm-up and one timed launch into
 * scratch, beta = 0): the r-split layout and the sliced copy's kernels (or
 * layout V on BSR where the sliced copy is not kept; for a matrix held once,
 * bsr_cuda_matrix_one_layout, the winner's layout is the one kept).  Every candidate
 * sums each output in the same order (blocks ascending, then columns within
 * a block, in double), so the result is bit-identical whichever wins: the
 * choice cannot break determinism. */
bsr_status bsr_spmm_rowj_auto(bsr_context *ctx, const bsr_matrix *A, double alpha, const void *x,
                              double beta, void *y, int k, int j0, int kk)
{
    bsr_dev_matrix *d = (bsr_dev_matrix *)A->dev;
    if (!d->auto_j[kk]) {
        /* J = 5: one group at k = 5, two at k = 9 (H100: b=4 k=9 67.6% of
         * copy against 62.6% at J = 3; J = 8, 9 lost everywhere); 64 and
         * 512 threads only on the sliced copy (512: layout V's 128-register
         * build, b = 5, k = 5, 6; 128 beat 256 at almost every point) */
        int sliced = 0;
        BSR_TRY(bsr_spmm_sell_prepare(ctx, A, &sliced));
        static const int Js[] = {1, 2, 3, 4, 5, 11, 12, 13, 14, 15, 21, 22, 23, 24, 25, 31, 32, 33, 34, 35},
                         Ts[] = {64, 128, 256, 512};
        size_t bytes = (size_t)A->nbrows * A->b * k * bsr_precision_size(A->prec);
        void *scr;
        BSR_TRY(bsr_cuda_scratch(ctx, bytes > 0 ? bytes : 8, &scr));
        cudaEvent_t e0, e1;
        CU_TRY(cudaEventCreate(&e0));
        cudaError_t ce = cudaEventCreate(&e1);
        if (ce != cudaSuccess) { cudaEventDestroy(e0); return bsr_cuda_fail(ce, "cudaEventCreate", __FILE__, __LINE__); }
        float best = 1e30f;
        bsr_status s = BSR_OK;
        for (int a = 0; a < (int)(sizeof Js / sizeof Js[0]) && s == BSR_OK; a++)
            for (int b = 0; b < 4 && s == BSR_OK; b++) {
                const int Jv = Js[a] % 10, V = Js[a] > 10 && Js[a] < 30;
                if ((Jv > 1 && Jv > kk) || (V && !ROWV_FITS(A->b, Jv)) || (Js[a] > 30 && !SELLC_FITS(A->b, Jv))) continue;
                if ((Js[a] > 20) != (sliced != 0) && Js[a] > 10) continue; /* layout V on one copy only */
                if (d->bsr_gone && !rowj_code_sliced(A->b, Js[a])) continue;   /* A's values are sliced only */
                if ((Ts[b] < 128 && Js[a] < 21) || (Ts[b] > 256 && (Js[a] < 21 || Js[a] > 25))) continue;
                float ms = 0;
                s = bsr_spmm_rowj(ctx, A, 1.0, x, 0.0, scr, k, j0, kk, Js[a], Ts[b]);
                if (s == BSR_OK && (ce = cudaEventRecord(e0, ctx->cuda->stream)) != cudaSuccess) s = bsr_cuda_fail(ce, "cudaEventRecord", __FILE__, __LINE__);
                if (s == BSR_OK) s = bsr_spmm_rowj(ctx, A, 1.0, x, 0.0, scr, k, j0, kk, Js[a], Ts[b]);
                if (s == BSR_OK && ((ce = cudaEventRecord(e1, ctx->cuda->stream)) != cudaSuccess ||
                                    (ce = cudaEventSynchronize(e1)) != cudaSuccess ||
                                    (ce = cudaEventElapsedTime(&ms, e0, e1)) != cudaSuccess))
                    s = bsr_cuda_fail(ce, "AUTO trial timing", __FILE__, __LINE__);
                if (s == BSR_OK && ms < best) { best = ms; d->auto_j[kk] = (unsigned char)Js[a]; d->auto_t[kk] = (short)Ts[b]; }
            }
        cudaEventDestroy(e0); cudaEventDestroy(e1);
        if (s != BSR_OK) { d->auto_j[kk] = 0; return s; }
        /* A held once (the solver's operator): the layout of the fastest
         * kernel stays, the other goes; the BSR values once a product has
         * read the sliced copy (bsr_spmm_drop_bsr), the sliced copy here, for
         * good (not kept: the BSR kernels serve every later pick) */
        if (d->one_layout && sliced && !rowj_code_sliced(A->b, d->auto_j[kk])) {
            bsr_spmm_sell_release(d);   /* cudaFree: the trials are done */
            d->sell = -1;
        }
    }
    return bsr_spmm_rowj(ctx, A, alpha, x, beta, y, k, j0, kk, d->auto_j[kk], d->auto_t[kk]);
}

extern "C" void bsr_cuda_spmm_auto_pick(const bsr_matrix *A, int kk, int *code, int *threads)
{
    const bsr_dev_matrix *d = bsr_cuda_dmat(A);
    const int ok = d && kk >= 1 && kk <= 16;
    *code = ok ? d->auto_j[kk] : 0;
    *threads = ok ? d->auto_t[kk] : 0;
}
