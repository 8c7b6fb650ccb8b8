/* SPDX-License-Identifier: BSD-3-Clause */
/* Patterns and schedules made on the device: ILU(0)'s symbolic phase
 * (kernels/ilu/ilu0_sym_gpu.cu) or the frozen pattern of a threshold
 * factorization whose rows the device made (kernels/ilu/ilut_pattern_gpu.cu).
 * What the device preconditioner (trsv_ilu.cu) and the device factorization
 * (ilu0_gpu.cu) read instead of the host's patterns when F->dsym is set. */
#ifndef BSR_ILU0_SYM_GPU_CUH
#define BSR_ILU0_SYM_GPU_CUH
#include "cuda_internal.h"
#include "ilu_impl.h"

/* ILU(0) (frozen = 0): natural order, A's pattern with every diagonal block
 * present: the map of A is the identity (ap = A's row pointers, asrc[p] = p),
 * L = A's strictly lower blocks, U = the diagonal then A's strictly upper
 * blocks (the host layout).
 * Threshold kinds (frozen = 1): ap, ac = the map of A (F->ap, F->ac; asrc and
 * the ordering stay on the host), L and U the first-order factors the
 * preconditioner stores (F->L, F->U), and the frozen pattern the device
 * factorization fills (F->fz: lower = L, R and capped-out blocks merged,
 * upper = the pivot then U and W merged, their classes, where L's and U's
 * blocks sit in it, its lower part's schedule). */
typedef struct {
    bsr_context *ctx;
    int n, nnzA, nL, nU;
    int *ap, *ac;           /* device copies of A's row pointers and columns (frozen: the permuted map) */
    int *Lp, *Lc, *Up, *Uc; /* device patterns, columns ascending (U: pivot first) */
    int *rows[2];           /* device schedules of L and U: rows by level, ascending within one */
    int nlev[2], width[2];  /* levels and widest level */
    int *level_ptr[2];      /* host [nlev+1] */
    int trimmed;            /* ac, Lc, Uc, rows[1] released (bsr_ilu0_dsym_trim): no further
                             * preconditioner or factorization can be made from it */
    int frozen;             /* a threshold factorization's pattern: the fields below */
    int nlo, nup;           /* blocks of the frozen pattern's lower and upper parts */
    long long nsec;         /* of them second order or capped out (0: the pattern is L, U) */
    int *Fp, *Fc, *Gp, *Gc; /* its lower (F) and upper (G) parts, device */
    unsigned char *fk, *gk; /* their classes (0 first order, 1 second, 2 capped out) */
    int *lmap, *umap;       /* position in Fc of L's blocks, in Gc of U's (NULL when nsec = 0) */
    int *frows, fnlev, fwidth, *flevel_ptr;   /* the lower part's schedule (level pointers on the host) */
} bsr_ilu0_dsym;

/* The level schedule of one triangle of the pattern (p, c) on the device:
 * level(i) = 1 + the largest level of the rows row i depends on (the columns
 * below i, or above it when upper), rows[] = rows by level, ascending within
 * one (the host's bsr_levels), *level_ptr (host, nlev + 1 entries, made
 * here), *nlev, *width = widest level.  ws: scratch of the caller, kept
 * between calls (bsr_dsym_ws_free). */
typedef struct {
    int n, *lev, *iota, *cnt;
    unsigned *key;
    void *tmp;
    size_t tmp_bytes;
} bsr_dsym_ws;
cudaError_t bsr_dsym_ws_init(bsr_dsym_ws *w, int n, cudaStream_t st);
void bsr_dsym_ws_free(bsr_dsym_ws *w);
cudaError_t bsr_dsym_schedule(bsr_dsym_ws *w, const int *p, const int *c, int upper, int *rows, int *nlev,
                              int **level_ptr, int *width, cudaStream_t st);
/* Frees S and everything it holds (F->dsym_free). */
extern "C" void bsr_dsym_free(void *S);
/* BSR_OK when the bytes of the device array dev equal the host array's,
 * else BSR_ERR_INTERNAL naming what (checks of the device's patterns). */
bsr_status bsr_dsym_same(const void *dev, const void *host, size_t bytes, const char *what);

/* The columns the device threshold rows published (kernels/ilu/ilut_gpu.cu),
 * on the device: row k's upper slot ucol + uoff[k] holds ucnt[k].x U blocks
 * (the pivot first) then ucnt[k].y W blocks, its lower pool lpool + loff[k]
 * lcnt[3k] L, lcnt[3k+1] R and lcnt[3k+2] capped-out blocks, each list
 * ascending; ap, ac: the map of A they were made from. */
typedef struct {
    const int2 *ucnt;
    const int *ucol;
    const long long *uoff;
    const int *lcnt, *lpool;
    const long long *loff;
    const int *ap, *ac;
} ilu_dev_rows_d;
/* F->dsym = the frozen pattern of those rows, with L, U and the three
 * schedules, and F's statistics (kernels/ilu/ilut_pattern_gpu.cu). */
extern "C" bsr_status bsr_ilut_dsym_build(bsr_context *ctx, bsr_ilu *F, const ilu_dev_rows_d *r);

/* F's device symbolic phase, or NULL when it was done on the host. */
static inline const bsr_ilu0_dsym *bsr_ilu_dsym(const bsr_ilu *F)
{
    return F ? (const bsr_ilu0_dsym *)F->dsym : NULL;
}

#endif
