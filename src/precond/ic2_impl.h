/* SPDX-License-Identifier: BSD-3-Clause */
/* Private definitions of block IC2 (precond_ic2.c: the preconditioner;
 * ic2_factor.c: the factorization). */
#ifndef BSR_IC2_IMPL_H
#define BSR_IC2_IMPL_H

#include "precond_impl.h"

/* One row's workspace: pos[j] = slot of column j or -1; slots scol, sval,
 * their class while classifying (scls) and ranking keys (skey); the cap's
 * candidates (ckey, ccol, ckeep); the sort's keys (stmp). */
typedef struct {
    int *pos;
    int *scol, *sidx, ns, scap;
    unsigned char *scls;
    double *sval, *skey, *ckey;
    int *ccol;
    unsigned char *ckeep;
    int64_t *stmp;
} ic2_ws;

typedef struct {
    bsr_pc_tri t;           /* the stored L and U = D L^T (first-order blocks), precision t.prec */
    bsr_ordering *ord;      /* NULL: natural */
    bsr_multivec *px, *py;  /* the apply's permuted vectors, kept while k and precision stay */
    int n, b, keep, valid;  /* valid: the last factorization succeeded */
    int cap;                /* fill blocks a row keeps in U and W each: BSR_ILU_CAP_NONE, 0 auto (B's row), P */
    double t1, t2, alpha;   /* thresholds (times sqrt(b)); the last factorization's shift */
    /* the pattern: row i's blocks j > i at up[i]..up[i+1]-1, columns ascending,
     * class uk (0 first order, 1 second order), values uv (double) */
    int *up, *uc;
    unsigned char *uk;
    double *uv;
    int64_t room;           /* room in uc, uk, uv (blocks) */
    int64_t n1, n2;         /* first- and second-order blocks */
    /* the updates of each row, in the order the setup took them: row i reads
     * the blocks lq[lp[i]..lp[i+1]-1] (positions in uc/uv, each in column i)
     * of the rows lk[...]; the frozen refactor replays them */
    int *lp, *lq, *lk;
    bsr_levels *sched;      /* the frozen refactor's schedule: the levels of those reads */
    int *lpos;              /* L's block of each first-order position (-1: second order) */
    double *D, *Dinv, *sc;  /* [n*b*b] pivots and their inverses, [n*b] the Jacobi scaling */
    ic2_ws *ws;             /* [nws] row workspaces, one a thread */
    int nws;
    int *head, *next, *first;   /* the setup's linked columns: rows whose next block is in column j */
} ic2;

/* Factor A's values: by the thresholds (frozen 0: the setup, which records
 * the pattern, the updates and the schedule) or into the recorded pattern
 * (frozen 1: serially, or level by level on the library's team), with the
 * shift rule; then the stored factors (ic2_factor.c).  On failure S->valid
 * is 0 and the status names the row. */
bsr_status ic2_numeric(ic2 *S, const bsr_matrix *A, int frozen);
/* Free what ic2_numeric allocated into S (pattern, records, workspaces). */
void ic2_free_factor(ic2 *S);

#endif
