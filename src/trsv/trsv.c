/* SPDX-License-Identifier: BSD-3-Clause */
/* CPU block triangular solves for k right-hand sides: Y = L^{-1} X with L
 * unit lower (strict blocks stored) and Y = U^{-1} X with U's diagonal block
 * (first in each row) holding the inverted pivot.
 *
 * Every path computes a row the same way: acc = x_i, then acc -= T_p y_col(p)
 * over the row's off-diagonal blocks in stored order, each block's columns in
 * ascending order, in double; then y_i = acc (L) or y_i = 0 + sum_c
 * Dinv(r,c) acc_c (U).  A row reads only finished rows, so any order that
 * respects the dependencies (natural, level schedule, any thread split) gives
 * the same bits.  Paths:
 *   natural  rows in index order (L) or reverse (U) on the calling thread:
 *            contiguous, so the factor streams through the cache once;
 *   levels   rows of a level schedule, a level's rows split among a team;
 *   reference the generic row kernel (b and k loops not unrolled), in the
 *            schedule's order when one is given: the kernel the others are
 *            tested against.
 * The natural and level paths use row kernels with b fixed at compile time
 * (1..BSR_MAX_BLOCK), k = 1 separately, so that the block products unroll. */
#include "internal.h"
#include "blockops.h"
#include <omp.h>
#include <string.h>

#define KC 16   /* right-hand sides per accumulator chunk */
/* Levels narrower than this run on one thread, consecutive ones together
 * (one barrier instead of one per level); which thread computes a row never
 * changes its bits. */
#define TRSV_MIN_PAR 32
/* When the level schedule on a team is used instead of the natural order on
 * the calling thread (trsv_use_levels): TRSV_PAR_MIN_THREADS threads or
 * more, a solve of BSR_PAR_WORK operations or more, some level of
 * TRSV_MIN_PAR rows, and on average TRSV_PAR_MEAN_ROWS rows per level per
 * thread (of TRSV_PAR_RULE_THREADS at most).  The level order alone costs up to 6x on one thread (each level
 * sweeps the whole factor, rows scattered: no streaming; little under RCM,
 * whose levels are nearly index ranges), and every wide level a barrier
 * (microseconds idle, a time slice on a loaded machine), so two threads
 * lose: on a shared 2-core machine, stencil3d:40:4 and 60:4 under natural,
 * RCM and ND orderings ran the level path on 2 threads 1.3-15x slower than
 * the natural path on 1 (bench/RESULTS.md).  From 4 threads on, wide levels
 * repay it: ILU2's factors of stencil3d:100:4 in RCM order (888 levels of
 * 1126 rows on average) took 0.9 s an iteration on the natural path of one
 * thread of 16, where 128 rows a level a thread had been asked for
 * (bench trsvcpu --kind ilu2 compares the paths). */
#define TRSV_PAR_MIN_THREADS 4
#define TRSV_PAR_MEAN_ROWS 16
/* The rule's rows a level grow with the team up to this many threads only:
 * past it a level's barrier costs about what it does at 8, while the natural
 * path stays one thread's.  ILU2's capped factors of coupled3d:60,5,couple=0.3
 * in RCM order (216k block rows, 1,063 levels of 203 rows) on the H200's
 * 16-core host: the level path 31.7 ms on 8 threads and 28.1 ms on 16,
 * the natural path 88-102 ms, which the rule of 16 rows a thread had chosen
 * on 16 threads (bench trsvcpu, bench/RESULTS.md). */
#define TRSV_PAR_RULE_THREADS 8

/* Row i of T for k right-hand sides, KC at a time: acc = y_i, acc -= T_p
 * y_col(p) over the off-diagonal blocks, then y_i = acc (L) or Dinv acc (U)
 * (the file's comment).  BS: the block size (T->b, or a constant where the
 * loops should unroll), NACC: the accumulator's length, UNR: the unroll
 * pragma or nothing.  The body of the reference row and of the b-fixed ones. */
#define TRSV_ROWK_BODY(REAL, BS, NACC, UNR)                                                 \
    {                                                                                       \
        const REAL *val = (const REAL *)T->val;                                             \
        double acc[NACC];                                                                   \
        int p0 = T->rowptr[i] + (upper != 0), p1 = T->rowptr[i + 1];                        \
        for (int j0 = 0; j0 < k; j0 += KC) {                                                \
            int kk = k - j0 < KC ? k - j0 : KC;                                             \
            REAL *yi = y + (size_t)i * (BS) * k + j0;                                       \
            for (int r = 0; r < (BS); r++)                                                  \
                for (int j = 0; j < kk; j++) acc[r * kk + j] = yi[r * k + j];               \
            for (int p = p0; p < p1; p++) {                                                 \
                const REAL *blk = val + (size_t)p * ((BS) * (BS));                          \
                const REAL *yc = y + (size_t)T->colind[p] * (BS) * k + j0;                  \
                UNR for (int r = 0; r < (BS); r++)                                          \
                    UNR for (int c = 0; c < (BS); c++) {                                    \
                        double a = blk[r * (BS) + c];                                       \
                        for (int j = 0; j < kk; j++) acc[r * kk + j] -= a * yc[c * k + j];  \
                    }                                                                       \
            }                                                                               \
            if (!upper) {                                                                   \
                for (int r = 0; r < (BS); r++)                                              \
                    for (int j = 0; j < kk; j++) yi[r * k + j] = (REAL)acc[r * kk + j];     \
            } else {                                                                        \
                const REAL *dinv = val + (size_t)T->rowptr[i] * ((BS) * (BS));              \
                BSR_BLK_MATCOLS(BS, dinv, acc, kk, yi, k, kk, UNR);                         \
            }                                                                               \
        }                                                                                   \
    }

/* Reference row i (any b, k): the generic loops. */
#define DEFINE_TRSV_ROW(SUF, REAL)                                                          \
    static void trsv_row_##SUF(const bsr_matrix *T, int upper, int i, REAL *y, int k)       \
        TRSV_ROWK_BODY(REAL, T->b, BSR_MAX_BLOCK * KC, )                                    \
    /* Reference rows rows[q0..q1) (rows NULL: q itself; U runs q downwards). */            \
    static void trsv_rows_ref_##SUF(const bsr_matrix *T, int upper, const int *rows, int q0, \
                                    int q1, REAL *y, int k)                                 \
    {                                                                                       \
        if (!rows && upper)                                                                 \
            for (int q = q1 - 1; q >= q0; q--) trsv_row_##SUF(T, 1, q, y, k);               \
        else                                                                                \
            for (int q = q0; q < q1; q++) trsv_row_##SUF(T, upper, rows ? rows[q] : q, y, k); \
    }

DEFINE_TRSV_ROW(d, double)
DEFINE_TRSV_ROW(f, float)

/* The backward solve reads U's rows from the last to the first, each row's
 * blocks forwards: a pattern the hardware's stream prefetch follows badly
 * (PETSc stores its U rows bottom-up for this), and each row's sum starts
 * with the block of row i + 1, just solved, so the whole row's chain of
 * additions waits on it and the loads of the rows below are not issued
 * early.  So row i - TRSV_PF_ROWS (stored before row i) is fetched into the
 * caches while row i is solved, its lines from the last to the first (the
 * direction the solve walks).  A prefetch changes no result.  The U solve of
 * ILU2's factors of stencil3d:64:4 (2.04M blocks, one thread): 39-44 ms with
 * a prefetch of row i - 1 forwards for the non-temporal cache level, 17-20
 * ms with row i - 1 backwards into all levels, 14 ms with row i - 4;
 * ILU(0)'s: 15.5 -> 9.9 ms (b = 4), 23.6 -> 15.1 ms (b = 5); b = 1 unchanged.
 * The forward solve fetches row i + TRSV_PF_ROWS_L the same way, first line
 * first: ILU(0)'s L of stencil3d:64:4 13.2-13.6 -> 9.3-10.2 ms, ILU2's
 * 15.5-16.9 -> 13.4 ms; b = 1 and 5 within 5% (rows 4, 8, 16 tried). */
#define TRSV_PF_ROWS 4
#define TRSV_PF_ROWS_L 8
#if defined(__GNUC__)
#define TRSV_PREFETCH_DOWN(lo, hi)                                                          \
    for (const char *pf_ = (const char *)(hi) - 1; pf_ >= (const char *)(lo); pf_ -= 64)   \
        __builtin_prefetch(pf_, 0, 3)
#define TRSV_PREFETCH_UP(lo, hi)                                                            \
    for (const char *pf_ = (const char *)(lo); pf_ < (const char *)(hi); pf_ += 64)         \
        __builtin_prefetch(pf_, 0, 3)
#else
#define TRSV_PREFETCH_DOWN(lo, hi) ((void)0)
#define TRSV_PREFETCH_UP(lo, hi) ((void)0)
#endif
/* The fetch ahead of row i's solve (the rule above) in a factor of bytes
 * per block: U's row i - TRSV_PF_ROWS from its last line, L's row i +
 * TRSV_PF_ROWS_L from its first. */
static inline void trsv_pf_row(const int *restrict rowptr, const void *val, size_t bbytes, int n, int upper, int i)
{
    const char *v = (const char *)val;
    if (upper && i > 0) { /* U runs its rows downwards through memory stored upwards */
        const int ip = i > TRSV_PF_ROWS ? i - TRSV_PF_ROWS : 0;
        TRSV_PREFETCH_DOWN(v + (size_t)rowptr[ip] * bbytes, v + (size_t)rowptr[ip + 1] * bbytes);
    } else if (!upper) {
        const int ip = i < n - TRSV_PF_ROWS_L ? i + TRSV_PF_ROWS_L : n - 1;
        TRSV_PREFETCH_UP(v + (size_t)rowptr[ip] * bbytes, v + (size_t)rowptr[ip + 1] * bbytes);
    }
    (void)v; (void)bbytes; (void)n;
}

/* A row kernel inlined into its loops whatever its size: the carry below
 * lives in registers only there (a call passes it through memory, and GCC
 * at -O2 called the row at b >= 2). */
#if defined(__GNUC__)
#define TRSV_ROW_INLINE static inline __attribute__((always_inline))
#else
#define TRSV_ROW_INLINE static inline
#endif

/* Rows rows[q0..q1) (rows NULL: row q; U runs q downwards) with b = B fixed:
 * k = 1 keeps the row's B accumulators in registers, k > 1 runs the
 * reference loops with b known.  Same operations, same order per entry, as
 * trsv_row_SUF.
 * Carry (k = 1): the row solved just before, row cj (-1: none), is still in
 * registers, cv, the values it stored; a block in its column takes them from
 * there instead of loading what was just stored.  In natural order that
 * block is the neighbour each row waits on (U's first, L's last), so the
 * chain from one row to the next loses its trip through the store buffer:
 * ILU(0)'s solves of stencil3d:160:1 (b = 1, one thread) L 16.6 -> 12.3 ms,
 * U 24.2 -> 17.8 ms.  cv holds the stored values themselves, so the bits do
 * not change.  (b = 5's AVX row in the fused apply keeps none: the scalar
 * row with the carry was no faster there.) */
#define DEFINE_TRSV_ROWS_B(SUF, REAL, B)                                                    \
    TRSV_ROW_INLINE void trsv_row1_##SUF##_##B(const int *restrict rowptr,                 \
                                             const int *restrict colind,                    \
                                             const REAL *restrict val, int n, int upper,    \
                                             int i, REAL *y, REAL *cv, int cj)              \
    {                                                                                       \
        double acc[B];                                                                      \
        REAL *yi = y + (size_t)i * B;                                                       \
        for (int r = 0; r < B; r++) acc[r] = yi[r];                                         \
        const int p1 = rowptr[i + 1];                                                       \
        trsv_pf_row(rowptr, val, sizeof(REAL) * (B * B), n, upper, i);                      \
        for (int p = rowptr[i] + upper; p < p1; p++) {                                      \
            const REAL *blk = val + (size_t)p * (B * B);                                    \
            const int col = colind[p];                                                      \
            double v[B];                                                                    \
            if (col == cj) {                                                                \
                BSR_BLK_UNROLL for (int c = 0; c < B; c++) v[c] = cv[c];                       \
            } else {                                                                        \
                const REAL *yc = y + (size_t)col * B;                                       \
                BSR_BLK_UNROLL for (int c = 0; c < B; c++) v[c] = yc[c];                       \
            }                                                                               \
            BSR_BLK_UNROLL for (int r = 0; r < B; r++)                                         \
                BSR_BLK_UNROLL for (int c = 0; c < B; c++) acc[r] -= (double)blk[r * B + c] * v[c]; \
        }                                                                                   \
        if (!upper) {                                                                       \
            BSR_BLK_UNROLL for (int r = 0; r < B; r++) yi[r] = cv[r] = (REAL)acc[r];           \
        } else {                                                                            \
            const REAL *dinv = val + (size_t)rowptr[i] * (B * B);                           \
            BSR_BLK_UNROLL for (int r = 0; r < B; r++) {                                       \
                double s = 0.0;                                                             \
                BSR_BLK_UNROLL for (int c = 0; c < B; c++) s += (double)dinv[r * B + c] * acc[c]; \
                yi[r] = cv[r] = (REAL)s;                                                    \
            }                                                                               \
        }                                                                                   \
    }                                                                                       \
    static void trsv_rowk_##SUF##_##B(const bsr_matrix *T, int upper, int i, REAL *y, int k) \
        TRSV_ROWK_BODY(REAL, B, B * KC, BSR_BLK_UNROLL)                                        \
    static void trsv_rows_##SUF##_##B(const bsr_matrix *T, int upper, const int *rows, int q0, \
                                      int q1, REAL *y, int k)                               \
    {                                                                                       \
        const int *rowptr = T->rowptr, *colind = T->colind;                                 \
        const REAL *val = (const REAL *)T->val;                                             \
        if (k == 1) {                                                                       \
            REAL cv[B] = {0};   /* the row solved just before (natural order) */            \
            if (rows)                                                                       \
                for (int q = q0; q < q1; q++) trsv_row1_##SUF##_##B(rowptr, colind, val, T->nbrows, upper, rows[q], y, cv, -1); \
            else if (upper)                                                                 \
                for (int q = q1 - 1; q >= q0; q--)                                          \
                    trsv_row1_##SUF##_##B(rowptr, colind, val, T->nbrows, 1, q, y, cv, q < q1 - 1 ? q + 1 : -1); \
            else                                                                            \
                for (int q = q0; q < q1; q++)                                               \
                    trsv_row1_##SUF##_##B(rowptr, colind, val, T->nbrows, 0, q, y, cv, q > q0 ? q - 1 : -1); \
        } else {                                                                            \
            if (!rows && upper)                                                             \
                for (int q = q1 - 1; q >= q0; q--) trsv_rowk_##SUF##_##B(T, 1, q, y, k);    \
            else                                                                            \
                for (int q = q0; q < q1; q++) trsv_rowk_##SUF##_##B(T, upper, rows ? rows[q] : q, y, k); \
        }                                                                                   \
    }
#define TRSV_ROWS_D(B) DEFINE_TRSV_ROWS_B(d, double, B)
#define TRSV_ROWS_F(B) DEFINE_TRSV_ROWS_B(f, float, B)
BSR_FOR_EACH_B(TRSV_ROWS_D)
BSR_FOR_EACH_B(TRSV_ROWS_F)

typedef void trsv_rows_fn_d(const bsr_matrix *, int, const int *, int, int, double *, int);
typedef void trsv_rows_fn_f(const bsr_matrix *, int, const int *, int, int, float *, int);
#define TRSV_ENTRY_D(B) trsv_rows_d_##B,
#define TRSV_ENTRY_F(B) trsv_rows_f_##B,
static trsv_rows_fn_d *const trsv_rows_d_tab[BSR_MAX_BLOCK] = {BSR_FOR_EACH_B(TRSV_ENTRY_D)};
static trsv_rows_fn_f *const trsv_rows_f_tab[BSR_MAX_BLOCK] = {BSR_FOR_EACH_B(TRSV_ENTRY_F)};

/* Nonzero when the level schedule lv on a team is expected to beat the
 * natural order on one thread (the rule at TRSV_PAR_MEAN_ROWS). */
static int trsv_use_levels(const bsr_matrix *T, const bsr_levels *lv, int k)
{
    if (!lv || lv->nlevels <= 0 || omp_in_parallel()) return 0;
    int nt = bsr_team_size();
    if (nt < TRSV_PAR_MIN_THREADS || lv->max_width < TRSV_MIN_PAR) return 0;
    if (!bsr_par_worth((int64_t)T->nnzb * T->b * T->b * k)) return 0;
    return (int64_t)lv->n >= (int64_t)lv->nlevels * TRSV_PAR_MEAN_ROWS * (nt < TRSV_PAR_RULE_THREADS ? nt : TRSV_PAR_RULE_THREADS);
}

/* The solve on y in place along the chosen path; rows(T, upper, rows, q0, q1,
 * y, k) computes rows rows[q0..q1) (natural order when rows is NULL). */
#define DEFINE_TRSV(SUF, REAL)                                                              \
    static void trsv_##SUF(const bsr_matrix *T, const bsr_levels *lv, int upper,            \
                           bsr_trsv_cpu_path path, REAL *y, int k)                          \
    {                                                                                       \
        const int n = T->nbrows;                                                            \
        trsv_rows_fn_##SUF *rows = path == BSR_TRSV_CPU_REFERENCE ? trsv_rows_ref_##SUF     \
                                                                  : trsv_rows_##SUF##_tab[T->b - 1]; \
        if (path == BSR_TRSV_CPU_AUTO) path = trsv_use_levels(T, lv, k) ? BSR_TRSV_CPU_LEVELS \
                                                                       : BSR_TRSV_CPU_NATURAL; \
        if (!lv || path == BSR_TRSV_CPU_NATURAL) {                                          \
            rows(T, upper, NULL, 0, n, y, k);                                               \
            return;                                                                         \
        }                                                                                   \
        const int *lp = lv->level_ptr;                                                      \
        /* a team only when some level is wide and the solve worth one */                  \
        const int par = path == BSR_TRSV_CPU_LEVELS && lv->max_width >= TRSV_MIN_PAR &&     \
                        bsr_par_worth((int64_t)T->nnzb * T->b * T->b * k);                  \
        const int team = bsr_team_size();   /* a barrier a level: the one team size */      \
        _Pragma("omp parallel if (par) num_threads(team)")                                  \
        {                                                                                   \
            const int nt = omp_get_num_threads(), t = omp_get_thread_num();                 \
            for (int l = 0; l < lv->nlevels;) {                                             \
                if (lp[l + 1] - lp[l] >= TRSV_MIN_PAR) {                                    \
                    /* contiguous static share of the level, then its barrier */            \
                    int64_t w = lp[l + 1] - lp[l];                                          \
                    int q0 = lp[l] + (int)(w * t / nt), q1 = lp[l] + (int)(w * (t + 1) / nt); \
                    rows(T, upper, lv->rows, q0, q1, y, k);                                 \
                    _Pragma("omp barrier")                                                  \
                    l++;                                                                    \
                } else { /* a run of narrow levels: one thread, one barrier */              \
                    int l1 = l;                                                             \
                    while (l1 < lv->nlevels && lp[l1 + 1] - lp[l1] < TRSV_MIN_PAR) l1++;    \
                    _Pragma("omp single")                                                   \
                    rows(T, upper, lv->rows, lp[l], lp[l1], y, k);                          \
                    l = l1;                                                                 \
                }                                                                           \
            }                                                                               \
        }                                                                                   \
    }

DEFINE_TRSV(d, double)
DEFINE_TRSV(f, float)

/* The ILU apply's solves with its gather and scatter fused (b = B fixed,
 * double, one vector, natural order): row i of the L solve starts from
 * t_i = Ds_i x_{src[i]} (the gather's sums: from +0, columns ascending)
 * computed just before the row reads it, and each row of the U solve, once
 * solved, is scattered at once, y_{dst[i]} = c t_i (c = dc[dst[i]], or 1).
 * The same operations on the same values as the gather, the two solves and
 * the scatter in turn, hence the same bits, with t_i still in L1 cache
 * where the separate passes read and wrote t twice more from memory. */
#if defined(BSR_BLK_AVX_COLS)
#define TRSV_AVX5 1
/* trsv_row1_d_5 with AVX, for the fused ILU apply: rows 0-3 of the
 * accumulators in one register, row 4 in a scalar; each row subtracts
 * t_r0 v_0 .. t_r4 v_4 block after block and U's rows sum Dinv(r,c) acc_c
 * from +0, each product and sum rounded, as the scalar kernel does: the
 * same bits (test_ilu's fused apply compares them); the blocks' columns
 * from bsr_blk_cols_avx. */
__attribute__((target("avx"))) static void trsv_row1_d_5_avx(const int *restrict rowptr, const int *restrict colind,
                                                              const double *restrict val, int n, int upper, int i,
                                                              double *y)
{
    double *yi = y + (size_t)i * 5;
    __m256d acc = _mm256_loadu_pd(yi), c[5];
    double acc4 = yi[4];
    const int p1 = rowptr[i + 1];
    trsv_pf_row(rowptr, val, sizeof(double) * 25, n, upper, i);
    for (int p = rowptr[i] + upper; p < p1; p++) {
        const double *blk = val + (size_t)p * 25, *yc = y + (size_t)colind[p] * 5;
        bsr_blk_cols_avx(blk, 5, c);
        BSR_BLK_UNROLL for (int q = 0; q < 5; q++) acc = _mm256_sub_pd(acc, _mm256_mul_pd(c[q], _mm256_broadcast_sd(yc + q)));
        BSR_BLK_UNROLL for (int q = 0; q < 5; q++) acc4 -= blk[20 + q] * yc[q];
    }
    if (!upper) {
        _mm256_storeu_pd(yi, acc);
        yi[4] = acc4;
        return;
    }
    double a[5];
    _mm256_storeu_pd(a, acc);
    a[4] = acc4;
    const double *dinv = val + (size_t)rowptr[i] * 25;
    bsr_blk_cols_avx(dinv, 5, c);
    __m256d s = _mm256_setzero_pd();
    double s4 = 0.0;
    BSR_BLK_UNROLL for (int q = 0; q < 5; q++) s = _mm256_add_pd(s, _mm256_mul_pd(c[q], _mm256_broadcast_sd(a + q)));
    BSR_BLK_UNROLL for (int q = 0; q < 5; q++) s4 += dinv[20 + q] * a[q];
    _mm256_storeu_pd(yi, s);
    yi[4] = s4;
}
#endif

/* Row i of the fused apply: b = 5's AVX row where the processor has it
 * (avx: bsr_cpu_avx(), read once an apply), else the b-fixed row. */
/* cv, cj: the carry of trsv_row1 (the AVX row neither takes nor leaves one). */
#if defined(TRSV_AVX5)
#define TRSV_ILU_ROW(B, avx, rp, ci, val, n, up, i, t, cv, cj)                              \
    do {                                                                                    \
        if (B == 5 && (avx)) { trsv_row1_d_5_avx(rp, ci, val, n, up, i, t); cj = -1; }     \
        else { trsv_row1_d_##B(rp, ci, val, n, up, i, t, cv, cj); cj = i; }                \
    } while (0)
#else
#define TRSV_ILU_ROW(B, avx, rp, ci, val, n, up, i, t, cv, cj)                              \
    do { trsv_row1_d_##B(rp, ci, val, n, up, i, t, cv, cj); cj = i; } while (0)
#endif

/* The gather's and the scatter's rows ahead: with an ordering they lie
 * anywhere in x and y, and a row's B values are fetched TRSV_PF_PERM rows
 * before the sweep reaches it (the scatter's for writing).  A prefetch
 * changes no result.  ILU(0)'s apply in nested-dissection order on one
 * thread: stencil3d:64:4 17.1 -> 14.4 ms, stencil3d:160:1 67 -> 52 ms,
 * stencil3d:48:5 10.6 -> 8.1 ms (AMD VM); on 16 threads no change. */
#define TRSV_PF_PERM 16
static inline void trsv_pf_block(const double *p, int b, int write)
{
#if defined(__GNUC__)
    if (write) {
        __builtin_prefetch(p, 1, 3);
        __builtin_prefetch(p + b - 1, 1, 3);
    } else {
        __builtin_prefetch(p, 0, 3);
        __builtin_prefetch(p + b - 1, 0, 3);
    }
#else
    (void)p; (void)b; (void)write;
#endif
}

/* The fused apply's halves over a range of rows: L's rows [i0, i1) upwards,
 * each gathered and scaled just before it is solved (t_i = Ds_i x_src[i]),
 * and U's rows [i0, i1) downwards, each scattered as soon as it is solved
 * (y_dst[i] = c t_i).  A range starts without a carry. */
#define DEFINE_TRSV_ILU_B(B)                                                                \
    static void trsv_ilu_l_##B(const bsr_matrix *L, const double *ds, const int *src,       \
                               const double *x, double *t, int i0, int i1)                  \
    {                                                                                       \
        const int n = L->nbrows, avx = B == 5 && bsr_cpu_avx();                             \
        const double *lval = (const double *)L->val;                                        \
        double cv[B] = {0};   /* trsv_row1's carry */                                       \
        int cj = -1;                                                                        \
        (void)avx;                                                                          \
        for (int i = i0; i < i1; i++) {                                                     \
            if (src && i + TRSV_PF_PERM < i1) trsv_pf_block(x + (size_t)src[i + TRSV_PF_PERM] * B, B, 0); \
            const double *xr = x + (size_t)(src ? src[i] : i) * B;                          \
            BSR_BLK_MATVEC(B, ds + (size_t)i * (B * B), xr, t + (size_t)i * B);           \
            TRSV_ILU_ROW(B, avx, L->rowptr, L->colind, lval, n, 0, i, t, cv, cj);           \
        }                                                                                   \
    }                                                                                       \
    static void trsv_ilu_u_##B(const bsr_matrix *U, const int *dst, const double *dc,       \
                               double *t, double *y, int i0, int i1)                        \
    {                                                                                       \
        const int n = U->nbrows, avx = B == 5 && bsr_cpu_avx();                             \
        const double *uval = (const double *)U->val;                                        \
        double cv[B] = {0};                                                                 \
        int cj = -1;                                                                        \
        (void)avx;                                                                          \
        for (int i = i1 - 1; i >= i0; i--) {                                                \
            if (dst && i - TRSV_PF_PERM >= i0) trsv_pf_block(y + (size_t)dst[i - TRSV_PF_PERM] * B, B, 1); \
            TRSV_ILU_ROW(B, avx, U->rowptr, U->colind, uval, n, 1, i, t, cv, cj);           \
            const int r = dst ? dst[i] : i;                                                 \
            const double c = dc ? dc[r] : 1.0;                                              \
            BSR_BLK_UNROLL for (int e = 0; e < B; e++) y[(size_t)r * B + e] = c * t[(size_t)i * B + e]; \
        }                                                                                   \
    }
BSR_FOR_EACH_B(DEFINE_TRSV_ILU_B)

typedef void trsv_ilu_l_fn(const bsr_matrix *, const double *, const int *, const double *, double *, int, int);
typedef void trsv_ilu_u_fn(const bsr_matrix *, const int *, const double *, double *, double *, int, int);
#define TRSV_ILU_L_ENTRY(B) trsv_ilu_l_##B,
#define TRSV_ILU_U_ENTRY(B) trsv_ilu_u_##B,
static trsv_ilu_l_fn *const trsv_ilu_l_tab[BSR_MAX_BLOCK] = {BSR_FOR_EACH_B(TRSV_ILU_L_ENTRY)};
static trsv_ilu_u_fn *const trsv_ilu_u_tab[BSR_MAX_BLOCK] = {BSR_FOR_EACH_B(TRSV_ILU_U_ENTRY)};

/* One node's rows [i0, i1) of L's sweep (upper 0) or U's (upper 1), for tree_sweeps. */
typedef void tree_node_fn(const void *arg, int upper, int i0, int i1);

bsr_status bsr_tree_levels_build(const bsr_ordering *o, bsr_tree_levels *t)
{
    memset(t, 0, sizeof *t);
    if (!o || o->nnodes < 2 || !o->nodes) return BSR_OK;
    const bsr_tree_node *nd = o->nodes;
    const int nn = o->nnodes;
    int top = 0;
    for (int v = 0; v < nn; v++) if (nd[v].level > top) top = nd[v].level;
    int *lp = bsr_calloc((size_t)top + 2, sizeof(int), "tree levels"),
        *byl = bsr_malloc(sizeof(int) * (size_t)nn, "tree levels"),
        *at = bsr_malloc(sizeof(int) * ((size_t)top + 1), "tree levels");
    if (!lp || !byl || !at) { free(lp); free(byl); free(at); return BSR_ERR_NOMEM; }
    for (int v = 0; v < nn; v++) lp[nd[v].level + 1]++;
    for (int l = 0; l <= top; l++) lp[l + 1] += lp[l];
    memcpy(at, lp, sizeof(int) * ((size_t)top + 1));
    for (int v = 0; v < nn; v++) byl[at[nd[v].level]++] = v;
    free(at);
    *t = (bsr_tree_levels){nd, lp, byl, top};
    return BSR_OK;
}

void bsr_tree_levels_free(bsr_tree_levels *t)
{
    if (!t) return;
    free(t->lp);
    free(t->byl);
    memset(t, 0, sizeof *t);
}

/* Both solves of an ILU over the nested-dissection tree t: L's sweep goes
 * up the tree a level at a time, the nodes of a level on the team
 * concurrently (a node's own rows [sep_first, last): a leaf's all, an inner
 * node's separator), U's down.  A row of L reads only rows of its node's
 * subtree and one of U only its node's and its ancestors' (the factors of a
 * p-bordered matrix, ilu_setup.c's tree check), so every row reads what the
 * natural sweep would have given it: the same bits. */
static void tree_sweeps(const bsr_tree_levels *t, int team, tree_node_fn *node, const void *arg)
{
    const bsr_tree_node *nd = t->nodes;
    const int *lp = t->lp, *byl = t->byl;
    #pragma omp parallel num_threads(team)
    {
        for (int l = t->top; l >= 0; l--) {
            #pragma omp for schedule(dynamic, 1)
            for (int q = lp[l]; q < lp[l + 1]; q++) node(arg, 0, nd[byl[q]].sep_first, nd[byl[q]].last);
        }
        for (int l = 0; l <= t->top; l++) {
            #pragma omp for schedule(dynamic, 1)
            for (int q = lp[l]; q < lp[l + 1]; q++) node(arg, 1, nd[byl[q]].sep_first, nd[byl[q]].last);
        }
    }
    __atomic_fetch_add(&bsr_trsv_tree_sweeps, 1, __ATOMIC_RELAXED);   /* applies on a const F may run concurrently */
}

/* The team for the two solves of L and U over a tree (1: none worth it,
 * BSR_PAR_WORK as the solves' other kernels; none inside a parallel region). */
static int tree_team(const bsr_matrix *L, const bsr_matrix *U, const bsr_tree_levels *t, int k)
{
    if (!t || !t->nodes || omp_in_parallel()) return 1;
    return bsr_team(((int64_t)L->nnzb + U->nnzb) * L->b * L->b * k, BSR_PAR_WORK / 2);
}

/* tree_sweeps' node for the fused apply. */
typedef struct {
    const bsr_matrix *L, *U;
    const double *ds, *dc, *x;
    const int *src, *dst;
    double *t, *y;
} fused_arg;
static void fused_node(const void *arg, int upper, int i0, int i1)
{
    const fused_arg *a = arg;
    if (!upper) trsv_ilu_l_tab[a->L->b - 1](a->L, a->ds, a->src, a->x, a->t, i0, i1);
    else trsv_ilu_u_tab[a->L->b - 1](a->U, a->dst, a->dc, a->t, a->y, i0, i1);
}

/* tree_sweeps' node for the solves on t in place (k columns, the factors' precision). */
typedef struct {
    const bsr_matrix *L, *U;
    void *t;
    int k;
} plain_arg;
static void plain_node(const void *arg, int upper, int i0, int i1)
{
    const plain_arg *a = arg;
    const bsr_matrix *T = upper ? a->U : a->L;
    if (T->prec == BSR_DOUBLE) trsv_rows_d_tab[T->b - 1](T, upper, NULL, i0, i1, a->t, a->k);
    else trsv_rows_f_tab[T->b - 1](T, upper, NULL, i0, i1, a->t, a->k);
}

int bsr_trsv_ilu_tree(const bsr_matrix *L, const bsr_levels *lvL, const bsr_matrix *U, const bsr_levels *lvU,
                      const bsr_tree_levels *tree, void *t, int k)
{
    if (L->prec != U->prec || L->b != U->b || L->b < 1 || L->b > BSR_MAX_BLOCK || L->nbrows != U->nbrows ||
        trsv_use_levels(L, lvL, k) || trsv_use_levels(U, lvU, k))
        return 0;
    const int team = tree_team(L, U, tree, k);
    if (team < 2) return 0;
    const plain_arg a = {L, U, t, k};
    tree_sweeps(tree, team, plain_node, &a);
    return 1;
}

int bsr_trsv_tree_sweeps;

int bsr_trsv_ilu_fused(const bsr_matrix *L, const bsr_levels *lvL, const bsr_matrix *U, const bsr_levels *lvU,
                       const bsr_tree_levels *tree, const double *ds, const int *src, const int *dst,
                       const double *dc, const double *x, double *t, double *y)
{
    if (L->prec != BSR_DOUBLE || U->prec != BSR_DOUBLE || L->b != U->b || L->b < 1 || L->b > BSR_MAX_BLOCK ||
        L->nbrows != U->nbrows || !ds || trsv_use_levels(L, lvL, 1) || trsv_use_levels(U, lvU, 1))
        return 0;
    const int team = tree_team(L, U, tree, 1);
    const fused_arg a = {L, U, ds, dc, x, src, dst, t, y};
    if (team > 1) {
        tree_sweeps(tree, team, fused_node, &a);
        return 1;
    }
    trsv_ilu_l_tab[L->b - 1](L, ds, src, x, t, 0, L->nbrows);
    trsv_ilu_u_tab[L->b - 1](U, dst, dc, t, y, 0, U->nbrows);
    return 1;
}

/* Checks shared by both solves. */
static bsr_status trsv_check(const char *fn, const bsr_matrix *T, const bsr_levels *lv, int upper,
                             const bsr_multivec *X, const bsr_multivec *Y)
{
    if (!T || !X || !Y) return bsr_error(BSR_ERR_ARG, "%s: NULL argument", fn);
    if (T->nbrows != T->nbcols)
        return bsr_error(BSR_ERR_SIZE, "%s: triangle is %d x %d blocks", fn, T->nbrows, T->nbcols);
    if (T->b < 1 || T->b > BSR_MAX_BLOCK)
        return bsr_error(BSR_ERR_ARG, "%s: block size %d outside 1..%d", fn, T->b, BSR_MAX_BLOCK);
    if (X->n != (int64_t)T->nbrows * T->b || Y->n != X->n || X->k != Y->k)
        return bsr_error(BSR_ERR_SIZE, "%s: triangle has %lld rows, X is %lld x %d, Y %lld x %d", fn,
                         (long long)T->nbrows * T->b, (long long)X->n, X->k, (long long)Y->n, Y->k);
    if (X->prec != T->prec || Y->prec != T->prec)
        return bsr_error(BSR_ERR_ARG, "%s: triangle, X and Y must have the same precision", fn);
    if (!X->data || !Y->data || !(X->where & BSR_ON_HOST))
        return bsr_error(BSR_ERR_ARG, "%s: X and Y must be on the host", fn);
    if (lv && lv->n != T->nbrows)
        return bsr_error(BSR_ERR_SIZE, "%s: level schedule is for %d rows, triangle has %d", fn,
                         lv->n, T->nbrows);
    /* structure: strict triangle (upper: diagonal first) */
    for (int i = 0; i < T->nbrows; i++) {
        int p0 = T->rowptr[i], p1 = T->rowptr[i + 1];
        if (upper && (p0 == p1 || T->colind[p0] != i))
            return bsr_error(BSR_ERR_STRUCTURE, "%s: block row %d of U does not start with its diagonal", fn, i);
        if (!upper && p1 > p0 && T->colind[p1 - 1] >= i)
            return bsr_error(BSR_ERR_STRUCTURE, "%s: block row %d of L has block column %d (not strictly lower)",
                             fn, i, T->colind[p1 - 1]);
    }
    return BSR_OK;
}

/* Y = T^{-1} X along path: copy X into Y (if distinct), then solve in place
 * in Y (a row reads its own x_i before writing y_i, and only finished y_j). */
bsr_status bsr_trsv_cpu(const bsr_matrix *T, const bsr_levels *lv, int upper, bsr_trsv_cpu_path path,
                        const bsr_multivec *X, bsr_multivec *Y)
{
    const char *fn = upper ? "bsr_trsv_upper" : "bsr_trsv_lower";
    BSR_TRY(trsv_check(fn, T, lv, upper, X, Y));
    if (Y != X) memcpy(Y->data, X->data, bsr_precision_size(X->prec) * (size_t)X->n * X->k);
    if (T->prec == BSR_DOUBLE) trsv_d(T, lv, upper, path, Y->data, Y->k);
    else trsv_f(T, lv, upper, path, Y->data, Y->k);
    Y->where = BSR_ON_HOST;
    return BSR_OK;
}

/* Y = L^{-1} X for unit lower block L (strict part stored); lv NULL: natural
 * order on the calling thread, else natural or level-scheduled OpenMP by
 * trsv_use_levels. */
bsr_status bsr_trsv_lower(const bsr_matrix *L, const bsr_levels *lv, const bsr_multivec *X,
                          bsr_multivec *Y)
{
    return bsr_trsv_cpu(L, lv, 0, BSR_TRSV_CPU_AUTO, X, Y);
}

/* Y = U^{-1} X for block upper U whose diagonal holds inverted pivots; lv as
 * for bsr_trsv_lower. */
bsr_status bsr_trsv_upper(const bsr_matrix *U, const bsr_levels *lv, const bsr_multivec *X,
                          bsr_multivec *Y)
{
    return bsr_trsv_cpu(U, lv, 1, BSR_TRSV_CPU_AUTO, X, Y);
}
