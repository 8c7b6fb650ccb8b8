/* SPDX-License-Identifier: BSD-3-Clause */
/* Private definitions of the ILU module (src/ilu/ilu_*.c). */
#ifndef BSR_ILU_IMPL_H
#define BSR_ILU_IMPL_H

#include "internal.h"
#include <string.h>

#ifdef __cplusplus
extern "C" {   /* the CUDA modules of the device ILU(0) read and fill bsr_ilu */
#endif

/* One factored row k (permuted numbering), built by ilu_row(): nl blocks
 * of L (strictly lower, columns ascending) at lcol/lval; nu blocks of U
 * (diagonal first, holding the INVERTED pivot, then columns ascending)
 * followed by nw blocks of W (second-order upper part, ILU2 only, columns
 * ascending) at ucol/uval; the nr columns of R (second-order lower part,
 * values not kept: only the frozen pattern needs them) at rcol; the nx
 * columns of first-order lower blocks past the row's cap (ilu_row_cap: they
 * updated the row as L blocks do, then were left out of L) at xcol.  Threshold
 * kinds: storage from the factoring thread's chunks (own = 2; own = 1: a
 * malloc of its own), freed once L and U are assembled.
 * ILU(0): the pattern is known at setup, so the rows point into the BSR
 * arrays of L and U (double factors) or into a double pool laid out like
 * them (float factors), kept for refactor. */
typedef struct {
    int nl, nu, nw, nr, nx;
    int *lcol, *ucol, *rcol, *xcol;
    double *lval, *uval;
    int own;
    double dn2, lo2;    /* threshold kinds: norm bounds of products with d_k^{-1} (ilu_row.c) */
} ilu_row_t;

/* The frozen pattern of a threshold factorization (ILUT/ILU2): the blocks the
 * setup's factorization kept, which refactor factors new values into
 * (nothing outside it is created; an entry that becomes small is kept).  Per
 * row the lower blocks (L and R, columns ascending) and the upper ones (the
 * pivot first, then U and W, columns ascending), each with its class: 0 first
 * order (stored in L, U), 1 second order (R, W: used while factoring only),
 * 2 (lower only) first order past the row's cap: updates as an L block, not
 * stored.
 * The same arrays drive the CPU numeric (ilu_row) and the device one
 * (kernels/ilu/ilu0_gpu.cu).  lmap/umap: index in the lower / upper pattern of
 * each block of L / U (NULL when there is no second-order part: the same). */
typedef struct {
    int n;
    int *lp, *lc, *up, *uc;     /* [n+1], [nlo], [n+1], [nup] */
    unsigned char *lk, *uk;     /* classes */
    int64_t nlo, nup, nsec;     /* blocks, of which second order or capped out (class 1 or 2) */
    int *lmap, *umap;
    bsr_levels *lv;             /* level schedule of the lower pattern (row k reads the rows of lc) */
} ilu_pattern;

/* A chunk of row storage (the data follows the header): the threshold rows
 * a thread factors are carved from its chunks, one allocation per few
 * thousand rows instead of two per row, and freed with the rows; at 1M rows
 * and 16 threads the per-row malloc/free and its page faults contend. */
typedef struct ilu_chunk {
    struct ilu_chunk *next;
    size_t used, cap;
} ilu_chunk;

/* Per-thread workspace of the row kernel: a sparse accumulator (pos[j] =
 * slot of column j or -1), the slots, and a min-heap of lower columns. */
typedef struct {
    int *pos;           /* [n] */
    int *scol;          /* [cap] */
    double *sval;       /* [cap*b*b] */
    int ns, cap;
    int *heap, nh;      /* [cap] lower columns still to eliminate */
    double *tmp;        /* [b*b] */
    int *lsel, *usel, *wsel, *rsel; /* [cap] slots chosen for L, U, W, R */
    int *tslot, *tq;    /* [cap] the updates by one row: target slot, source block */
    int *xsel;          /* [cap] lower columns past the row's cap (ilu_row_t.xcol) */
    double *key;        /* [cap] ranking keys of the cap's candidates */
    double *lblk;       /* [b*b] the inverse pivot of the row */
    double *lbuf;       /* [cap*b*b] the row's multipliers: L blocks 0..nl-1, then the current one */
    int64_t dropped, sec_used, wkept;
    int64_t nprod;      /* block products (updates) this workspace's rows formed (ilu_row.c) */
    int lfill, lfmax;   /* lower fill slots the row tried to create, and its budget (2 x its cap) */
    int rmax;           /* most R blocks in one row */
    int nreg;
    const void *flags;  /* rows factored concurrently, their dependencies found while
                         * factoring (threshold kinds): the completion flags to wait on
                         * before a row is read (ilu_wait_row); NULL otherwise */
    int skipped;        /* the row read a failed or skipped row: not factored, no error of its own */
    int progress_rows;  /* rows factored since this thread last added to the progress count */
    int64_t waits;      /* waits for a row not yet done (ilu_wait_row), and their seconds */
    double wait_s;
    double run_s;       /* seconds this thread spent in the concurrent rows */
    ilu_chunk *arena;   /* storage of the rows this workspace factored (threshold kinds) */
    char msg[256];      /* error detail of the failing row (threads cannot
                         * use bsr_error: its message is thread-local) */
} ilu_work;

/* One ILU plan and its host numeric value (CSparse's css and csn in one
 * struct; ilu_setup.c):
 *  - the symbolic value, made by ilu_sym_build and unchanged afterwards: opt,
 *    t1, t2, pivot_rel, n, b, mode, prec, nnzbA, ord, the matching (rsrc, dr,
 *    dc, scale_right), the map (ap, ac, asrc), tree_ok, and for ILU(0) L and
 *    U's patterns and schedules (or dsym) with their statistics;
 *  - the pattern a threshold kind's first factorization chooses (fz, L and
 *    U's patterns, lvL, lvU; pattern_id), host or pattern pass;
 *  - the host numeric value (ilu_num_host, refactor): aval, rowref, dl,
 *    scale_left, piv, rows, pool, work, L and U's values, valid, apply_ws,
 *    the factorization's statistics;
 *  - state of one running factorization only: use_fz, dev, araw, rowbuf,
 *    grow_l, grow_u, grow_x. */
struct bsr_ilu {
    void *apply_ws;         /* bsr_ilu_apply's work vector, kept between calls (a size_t
                             * capacity, then the data); taken and given back atomically */
    bsr_ilu_options opt;
    double t1, t2;          /* tau1*sqrt(b), tau2*sqrt(b) */
    double pivot_rel;
    int n, b, mode;         /* mode: 0 ILU(0) pattern fixed, 1 threshold */
    bsr_precision prec;     /* precision of the stored factors */
    int nnzbA;
    bsr_ordering *ord;      /* NULL: natural */
    /* Matching (bsr_ilu_options.match, ilu_match.c), NULL when none: the
     * factored matrix is Q (P Dr A Dc) Q^T, its row k taken from A's row
     * rsrc[k] = match[perm[k]], columns renumbered by the ordering alone. */
    int *rsrc;              /* [n] A's block row of permuted row k */
    double *dr, *dc;        /* [n] scalars per A's block row / block column */
    void *scale_right;      /* with a matching: Dc as b x b blocks in factor order (F->prec), the
                             * scatter's scaling of the device apply (bsr_ilu_get_factors) */
    /* A in the permuted numbering (symbolic, from setup): row k holds
     * ap[k]..ap[k+1]-1 with column ac[] ascending, taken from A's block asrc[]. */
    int *ap, *ac, *asrc;
    /* The host numeric value's arrays, allocated by its first factorization
     * (ilu_setup.c, numeric_arrays): NULL in a plan whose values are computed
     * elsewhere (ILU(0) factored on the device). */
    double *aval;           /* scaled permuted A (double), refreshed by refactor */
    double *rowref;         /* [n] r_k: largest scaled block norm of row k / sqrt(b) */
    double *dl;             /* [n*b*b] left scaling, double (permuted rows) */
    void *scale_left;       /* same in the factors' precision */
    double *piv;            /* [n*b*b] pivot blocks d_k (not inverted), double */
    ilu_row_t *rows;        /* [n] during factorization (ILU(0): kept) */
    double *pool;           /* ILU(0) with float factors: rows' values in double */
    bsr_matrix *L, *U;
    bsr_levels *lvL, *lvU;
    bsr_ilu_stats st;
    ilu_work *work;         /* [nwork] per-thread workspaces, kept for refactor */
    int nwork;
    int valid;              /* the last host numeric factorization succeeded: L and U hold
                             * its values (never set by a symbolic phase or a pattern pass) */
    int pattern_only;       /* L and U hold patterns only: the values are computed elsewhere
                             * (a device; bsr_ilu_options.symbolic_only, ilu_pattern_pass), so
                             * the host apply, refactor and diagnostics refuse */
    int tree_ok;            /* ord's tree is usable for the parallel factorization */
    bsr_tree_levels tlv;    /* tree_ok: ord's tree by levels, the apply's tree sweeps (else no nodes) */
    ilu_pattern *fz;        /* threshold kinds: the frozen pattern (built by the first factorization) */
    int use_fz;             /* factor into fz (refactor, pattern frozen) rather than by thresholds */
    uint64_t pattern_id;    /* process-unique id of the current pattern (new at setup and at every
                             * threshold factorization that chose its pattern again) */
    /* ILU(0) in natural order with a device (ilu_sym_build's ctx): the
     * symbolic phase done there, its patterns and schedules here instead of
     * ap/ac/asrc, L, U and lvL, lvU (kernels/ilu/ilu0_sym_gpu.cu); a
     * threshold kind whose rows the device made: the pattern made there, in
     * place of fz, L, U and their schedules (kernels/ilu/ilut_pattern_gpu.cu) */
    void *dsym;
    double sym_dev_s;       /* seconds of the symbolic phase spent on (and waiting for) the device */
    double order_ahead_s;   /* > 0: ord was made ahead, on a second thread, in these seconds */
    bsr_context *dev;       /* during a pattern pass for a device (ilu_pattern_pass): the
                             * pattern-choosing rows run on it (kernels/ilu/ilut_gpu.cu) */
    int *rowbuf;            /* the columns of rows made on the device (rows point into it) */
    const bsr_matrix *aone; /* during a host factorization taking the single pass
                             * (ilu_scaled0.c): A, scaled there row by row */
    double *xrow;           /* [n] the single pass's dense row, kept for refactor */
    int rows_placed;        /* ILU(0): the scaling put each row of the scaled A at its places in
                             * L and U (ilu_scale.c), where the row kernel starts from it */
    int asrc_id;            /* asrc[p] = p for every p (A's rows as they are: no ordering, no
                             * matching, rows sorted): the map is the identity (build_map) */
    const bsr_matrix *araw; /* during a setup whose rows the device makes: A itself, which the
                             * device scales (aval, rowref, dl on the host are not filled) */
    void (*dsym_free)(void *);
    /* growth-weighted dropping (ilu_grow.c): while a refactorization runs,
     * the weights of L blocks by their column (grow_l) and of U blocks by
     * their row (grow_u), [n] each; NULL otherwise (weight 1) */
    double *grow_l, *grow_u;
    double *grow_x;         /* grow=2: the greedy solution of L x = c row by row ([n*b]), each
                             * row setting its own grow_l entry when it is done */
    /* opt.max_work as block products (b^3 multiply-adds each; 0: no bound),
     * and the products of the threshold rows finished so far in this
     * factorization (numeric() zeroes it; grow's refactorization adds on;
     * changed by __atomic builtins: the rows add to it concurrently) */
    int64_t nprod_max;
    int64_t nprod;
};

/* ILU(0)'s row k of the scaled A (F->aval) at its places in L and U: its nl
 * lower blocks in L's row, the diagonal in U's first block (+0 where A has
 * none: hasd 0), its nu upper blocks after it.  The scaling puts each row
 * there as it makes it (ilu_scale.c), the row kernel where the scaling did
 * not (ilu_row0.c). */
static inline void ilu_place_row0(const bsr_ilu *F, int k, int nl, int hasd, int nu, const int b)
{
    const int bb = b * b;
    const ilu_row_t *rk = &F->rows[k];
    const double *av = F->aval + (size_t)F->ap[k] * bb;
    memcpy(rk->lval, av, sizeof(double) * bb * nl);
    if (hasd) memcpy(rk->uval, av + (size_t)nl * bb, sizeof(double) * bb);
    else memset(rk->uval, 0, sizeof(double) * bb);
    memcpy(rk->uval + bb, av + (size_t)(nl + hasd) * bb, sizeof(double) * bb * nu);
}

/* A's block row of the factored (permuted) row k. */
static inline int ilu_src_row(const bsr_ilu *F, int k)
{
    return F->rsrc ? F->rsrc[k] : F->ord ? F->ord->perm[k] : k;
}
/* Matching of A for F->opt.match (ilu_match.c): decides auto, fills F->dr,
 * F->dc and the statistics; *PA = P A's pattern (values unset) for the
 * ordering, NULL when no matching is applied, freed by ilu_match_finish,
 * which sets F->rsrc once the ordering is known. */
bsr_status ilu_match_start(bsr_ilu *F, const bsr_matrix *A, bsr_matrix **PA, int **match);
bsr_status ilu_match_finish(bsr_ilu *F, bsr_matrix *PA, int *match);
/* Chow & Saad's estimate ||(LU)^{-1} e||_inf of the stored factors (ilu_match.c). */
bsr_status ilu_condest(const bsr_ilu *F, double *est);
/* bsr_ilu_setup with match=auto on the host: factors without and, when
 * they look unstable, with the matching; the more stable kept (ilu_match.c). */
bsr_status ilu_setup_auto(const bsr_matrix *A, const bsr_ilu_options *opt, bsr_ilu **F);

/* Stability diagnostics of host factors (ilu_stab.c), per factor row k
 * (permuted numbering): l_row[k] = ||x_k||_inf of L x = c with c in
 * {-1,+1} chosen greedily (a lower bound of the largest scalar row 1-norm of
 * L^{-1} in block row k), u_row[k] likewise for U^T y = c (of the column
 * 1-norms of U^{-1}), piv_cond[k] = ||D_k||_1 ||D_k^{-1}||_1 of the pivot
 * block.  Histograms by decades: bin d < BSR_STAB_DECADES-1 counts values in
 * [10^d, 10^(d+1)) (bin 0 also below 1, the second-to-last everything above),
 * the last bin Inf/NaN.  Separator figures refer to the ND tree of the
 * ordering (none: every row counts as a leaf row). */
#define BSR_STAB_DECADES 18
typedef struct {
    double thresh;              /* in: growth threshold for `first` (<= 0: 1e4) */
    double *l_row, *u_row, *piv_cond;   /* in: [n] per-row figures wanted, or NULL */
    int n, b;
    double l_max, u_max, piv_max;       /* largest per-row figure */
    int l_at, u_at, piv_at;             /* its factor row (-1: n = 0) */
    int l_src, u_src, piv_src;          /* the same rows in A's numbering */
    int l_sep_level, u_sep_level;       /* tree level of the separator holding l_at / u_at, -1: leaf */
    int first, first_src;               /* first factor row whose L or U figure exceeds thresh (-1: none) */
    int first_which;                    /* 'L' or 'U': which one did */
    int first_sep_level;                /* as l_sep_level, for first */
    int over, over_sep;                 /* rows past thresh, of which in separators */
    int sep_rows;                       /* rows in separators */
    double max_leaf, max_sep;           /* largest of the L and U figures over leaf / separator rows */
    int64_t hist_l[BSR_STAB_DECADES], hist_u[BSR_STAB_DECADES], hist_piv[BSR_STAB_DECADES];
} bsr_ilu_stab;
bsr_status bsr_ilu_stability(const bsr_ilu *F, bsr_ilu_stab *out);

/* Workspace: create for n columns of b x b blocks, free; slot of column j
 * (a new zero block when absent and create is set; -1 when absent otherwise
 * or when memory runs out: *nomem is then set). */
bsr_status ilu_work_init(ilu_work *w, int n, int b);
void ilu_work_free(ilu_work *w);
/* bytes (16-aligned) of row storage from w's chunks (NULL: out of memory);
 * ilu_arena_free frees them all. */
void *ilu_arena_alloc(ilu_work *w, size_t bytes);
void ilu_arena_free(ilu_work *w);
int ilu_slot(ilu_work *w, int b, int j, int create, int *nomem);
/* A new slot for column j, absent from the row, its block left unset (the
 * caller writes it whole); -1 when memory runs out. */
int ilu_slot_new(ilu_work *w, int b, int j);
/* Forget the slots of the current row (pos[] back to -1). */
static inline void ilu_work_clear(ilu_work *w)
{
    int *pos = w->pos;   /* in locals: an int stored through w's pointers would reload them */
    const int *scol = w->scol, ns = w->ns;
    for (int s = 0; s < ns; s++) pos[scol[s]] = -1;
    w->ns = 0;
    w->nh = 0;
}
/* Room for ns slots (the per-slot arrays grown together); 0 when memory
 * runs out. */
int ilu_work_reserve(ilu_work *w, int b, int ns);
/* Make F hold at least nt workspaces and zero their counters (ilu_work.c). */
bsr_status ilu_get_work(bsr_ilu *F, int nt);

/* Most fill blocks (outside A's pattern) row k of a threshold factorization
 * keeps in L, in U and in W each (ilu.h, bsr_ilu_options.cap; INT_MAX: no
 * cap). */
int ilu_row_cap(const bsr_ilu *F, int k);
/* The cap's choice among m candidates (ranking key key[t], column col[t],
 * the columns distinct): keep[t] = 1 when fewer than p candidates have a
 * larger key or an equal one and a smaller column (the p with the largest
 * keys, ties to the smaller column; a key that is not a number is kept);
 * returns how many were kept.  The device kernel ranks by the same rule. */
int ilu_cap_select(int m, const double *key, const int *col, int p, unsigned char *keep);

/* Entries of A (block entries nnzb b^2) a thread of the factorization and of
 * the scaling: 512 rows of a 7-point b = 4 stencil, 13000 of a b = 1 one.  A
 * row's cost grows with its blocks and their size; a team over a b = 1
 * problem of a few thousand rows cost more than it gave (poisson2d:64 on 2
 * threads of a loaded 2-core machine: 26-84 ms for rows that take 0.6 ms on one). */
#define ILU_TEAM_GRAIN 65536
/* Values a row (L and U together, on average) from which a frozen pattern
 * without a tree has its rows pipelined one a ticket (run_pipelined): a
 * complete factor's dense separators.  The complete factor of a 16^3 grid
 * of 8 x 8 blocks in METIS's order (106 blocks a row, 420 levels) took
 * 2.82 s serially, 1.62 s so on 2 threads (this VM); the threshold
 * factors' refactors (ILU2 with b = 4 at fill 15: 1,680) stay as they were. */
#define ILU_HEAVY_ROW 2048

/* The runs of consecutive rows that concurrent threads take by ticket
 * (ilu_factor.c): run r = rows [run[r], run[r+1]) of [r0, r1), run[] holding
 * r1 - r0 + 2 ints; returns the count and sets *team, the threads (at most
 * nt) worth running them. */
int ilu_cut_runs(const int *dp, const int *dc, int r0, int r1, int nt, int *run, int *team);

/* Wait until row i of a concurrent factorization is done (flags: its
 * completion flags); 1 when it succeeded, 0 when it failed or was skipped. */
int ilu_wait_row(const void *flags, int i, ilu_work *w);

/* Factor block row k into F->rows[k] from the finished rows it references
 * (ilu_row.c; ILU(0)'s rows: ilu_row0); on failure w->msg names the row. */
bsr_status ilu_row(bsr_ilu *F, ilu_work *w, int k);
/* ILU(0)'s row k into its places in L and U (ilu_row0.c). */
bsr_status ilu_row0(bsr_ilu *F, ilu_work *w, int k);

/* Complete LU of A by UMFPACK (the `bench ilu` anchor): fill
 * (nnz(L)+nnz(U)-n)/nnz(A) in scalars and symbolic+numeric seconds. */
bsr_status ilu_umfpack_lu(const bsr_matrix *A, double *fill, double *seconds);

/* Numeric factorization of F->aval into F->rows and then F->L, F->U
 * (ilu_factor.c).  Serial or over the ND tree. */
bsr_status ilu_factor(bsr_ilu *F);
/* ILU(0) symbolic phase: L, U patterns (A's + diagonal) and their level
 * schedules (ilu_factor.c). */
bsr_status ilu_symbolic0(bsr_ilu *F);
/* ILU(0)'s host rows pointing into L and U (double factors) or into a double
 * pool laid out like them (float factors): the host numeric value's storage
 * (ilu_factor.c). */
bsr_status ilu_rows0(bsr_ilu *F);
/* ILU(0)'s symbolic phase done on the device of ctx from A's current device
 * mirror (kernels/ilu/ilu0_sym_gpu.cu), for ilu_sym_build: F (its ordering
 * natural, no matching, no patterns yet) gets F->dsym and the statistics of
 * the patterns.  BSR_ERR_UNSUPPORTED (error cleared) when A's pattern is not
 * ILU(0)'s as it stands (a block row without its diagonal block): the host
 * builds the patterns then.  BSR_ILU0_SYM_CHECK=1 compares every array with
 * the host's symbolic phase (tests). */
bsr_status bsr_ilu0_symbolic_dev(bsr_context *ctx, bsr_ilu *F, const bsr_matrix *A);
/* Statistics of the ILU(0) patterns (nL + nU blocks, schedules of nlevL and
 * nlevU levels), whichever side built them. */
void bsr_ilu_symbolic_stats(bsr_ilu *F, int nL, int nU, int nlevL, int nlevU);
/* Build F->fz from the rows of a finished threshold factorization
 * (ilu_pattern.c); its level schedule (fz->lv) is left to the caller. */
bsr_status ilu_pattern_build(bsr_ilu *F);
/* ilu_complete.c: nonzero when F's threshold setup keeps every block (tau1 =
 * tau2 = 0, no cap, no fill bound) on a structurally symmetric P A P^T; then
 * ilu_rows_complete makes F->rows (columns only, in F->rowbuf) of the
 * complete LU's pattern from the elimination tree, the rows' block products
 * in F->nprod and st.work, failing past F->nprod_max as the rows would. */
int ilu_complete_ok(const bsr_ilu *F);
bsr_status ilu_rows_complete(bsr_ilu *F);
/* ilu_complete.c: BSR_ERR_UNSUPPORTED, naming the work bound, where F's
 * options keep every block under a work bound (max_work) on a structurally
 * symmetric A whose complete LU's estimated products (bsr_sep_products,
 * an estimate from below) pass BSR_SEP_SLACK times it: neither the
 * ordering nor the pattern (seconds at 1M block rows) is made; BSR_OK
 * otherwise.  ahead (may be NULL): an ordering thread on A's graph whose
 * estimate under the same line is taken instead of a second one. */
bsr_status ilu_complete_bound(const bsr_ilu *F, const bsr_matrix *A, const bsr_order_ahead *ahead);
/* Tests only: off (nonzero) leaves the complete pattern to the rows. */
void bsr_ilu_test_complete_off(int off);
/* The work bound's message (ilu_row.c), for the rows and the complete pattern. */
void ilu_work_bound_msg(const bsr_ilu *F, char *buf, size_t len);
/* The lower pattern of P as a matrix view without values (its schedule's input). */
bsr_matrix ilu_pattern_lower(const ilu_pattern *P, int b);
void ilu_pattern_free(ilu_pattern *P);

/* The threshold rows of F (ILUT/ILU2 after scaling, F->aval and F->rowref
 * current) factored on ctx's device (kernels/ilu/ilut_gpu.cu): the pattern
 * they choose (no values: a pattern pass), with L, U and their schedules,
 * made there into F->dsym with F's statistics (kernels/ilu/ilut_pattern_gpu.cu;
 * or, BSR_ILU_DSYM=0, F->rows get the columns of every row, L, U, W, R, class
 * 2, for the host to make them; BSR_ILU_DSYM_CHECK=1: both), and *c the
 * counters the host's workspaces would hold.  The rows, classes and
 * counters are those of ilu_row on the same F.  BSR_ERR_UNSUPPORTED (no error
 * set) without a cap, or when a row outgrows its workspace or slot: the
 * caller factors on the host; BSR_ERR_SINGULAR naming the
 * row as the host would; BSR_ERR_NODEVICE without CUDA. */
typedef struct { int64_t dropped, sec_used, wkept; int nreg, rmax; } ilu_dev_counts;
bsr_status bsr_gpu_ilut_rows(bsr_context *ctx, bsr_ilu *F, ilu_dev_counts *c);
/* BSR_OK when the pattern the device made (F->dsym) equals, array for array,
 * the one the host made from the same rows (F->fz, F->L, F->U and the three
 * schedules), else BSR_ERR_INTERNAL naming the first array that differs. */
bsr_status bsr_ilu_dsym_check(const bsr_ilu *F);
/* The columns the device published, copied to the host: per row k the upper
 * slot ucol + uoff[k] holds ucnt[2k] U then ucnt[2k+1] W columns (the pivot
 * first), the pool lpool + loff[k] its lcnt[3k] L, lcnt[3k+1] R and lcnt[3k+2]
 * class-2 columns.  ilu_rows_from_dev (ilu_dev_rows.c) makes F->rows of them. */
typedef struct {
    const int *ucnt, *ucol, *lcnt, *lpool;
    const long long *uoff, *loff;
} ilu_dev_cols;
bsr_status ilu_rows_from_dev(bsr_ilu *F, const ilu_dev_cols *c);
/* The device rows' slots (ilu_dev_rows.c): uoff[k] = start of row k's upper
 * slot (the pivot, A's upper blocks, then the cap's U and W fill, bounded by
 * what the workspace fills), uoff[n] their total; adiag[k] = position of A's
 * diagonal block of row k or -1 (when adiag is set).  Returns the lower pool's
 * size in columns. */
long long ilu_dev_slots(const bsr_ilu *F, long long *uoff, int *adiag);
/* F->aval = Ds P A P^T (double), F->dl = Ds, scale_left = Ds and rowref
 * from A's current values; with a matching Ds Q (P Dr A Dc) Q^T and
 * scale_left = Ds Dr (the row scaling folded into the left one)
 * (ilu_scale.c): the host scaling every factorization starts from.  Errors:
 * non-finite A (BSR_ERR_VALUE), zero row, a row of only subnormal values
 * (BSR_ERR_VALUE), overflow of Ds A (BSR_ERR_SINGULAR). */
bsr_status ilu_scale(bsr_ilu *F, const bsr_matrix *A);
/* The plain sum of squares of a block is in bsr_blk_fnorm's safe range
 * (its norm is the sum's square root): the scaling's test. */
#define ILU_SAFE_SUM(s) ((s) <= 1e300 && (s) >= 1e-290)
/* Nonzero when F's host factorization of A takes the single pass
 * (ilu_scaled0.c): ILU(0), b = 1, A in double without a matching's scaling,
 * a team of one thread for the scaling and the rows (ILU_TEAM_GRAIN), no
 * progress reports.  ilu_rows0_scaled: that pass (F->aval, dl, rowref,
 * scale_left, piv, L and U's values, w->nreg, the fallback count, as
 * ilu_scale and the rows make them); 0 when a row fails the rule or memory
 * runs out (nothing reported: the caller runs the two passes instead). */
int ilu_scaled0_ok(const bsr_ilu *F, const bsr_matrix *A);
int ilu_rows0_scaled(bsr_ilu *F, const bsr_matrix *A, ilu_work *w);
/* Tests only: off, every factorization takes the two passes (ilu_scale,
 * then the rows). */
void bsr_ilu_test_single_pass(int on);
/* Tests only: on, the scaling's and ILU(0) rows' instances with b a variable
 * for every b (off: b fixed at compile time where there is one). */
void bsr_ilu_test_generic_kernels(int on);
extern int ilu_generic_kernels;

/* The two phases (ilu_setup.c), CSparse's css / csn:
 * ilu_sym_build: the finished symbolic value of A under opt: options checked,
 * matching, ordering, map of A onto the permuted rows, the tree test and, for
 * ILU(0), the L and U patterns and their level schedules (no numbers are
 * computed or allocated: the matching's scalings are its only values).  ctx
 * (a CUDA context, or NULL): an ILU(0) in natural order without a matching
 * builds its patterns on ctx's device (A's device mirror made current),
 * else on the host.  Threshold kinds find their pattern while factoring: their
 * symbolic value is ordering and map, and the pattern (F->fz, L, U and their
 * schedules) is chosen by the first numeric factorization, the host's
 * (ilu_num_host) or a pattern pass (ilu_pattern_pass).  Nothing of the
 * symbolic value changes after it returns.  ahead (may be NULL): an
 * ordering of A made ahead, copied where it is the one opt asks for and no
 * matching permutes A's graph first. */
bsr_status ilu_sym_build(const bsr_matrix *A, const bsr_ilu_options *opt, bsr_context *ctx,
                         const bsr_order_ahead *ahead, bsr_ilu **F);
/* The host numeric value on F's finished symbolic value: its first
 * factorization of A (scale, factor, statistics; its arrays allocated;
 * stats.setup_s grows by its seconds); bsr_ilu_refactor factors again.
 * BSR_ERR_ARG when F holds patterns only. */
bsr_status ilu_num_host(bsr_ilu *F, const bsr_matrix *A);
/* Threshold kinds whose values are computed elsewhere (a device): the
 * thresholds' factorization of A, which chooses the pattern (F->fz, L and U
 * patterns, their schedules) but leaves no values in L and U (F->pattern_only
 * set); dev: its rows on that device where it can (capped rows, no matching),
 * else on the host. */
bsr_status ilu_pattern_pass(bsr_ilu *F, bsr_context *dev, const bsr_matrix *A);
/* Borrowed views of F's patterns, ordering and scalings whatever its values
 * (bsr_ilu_get_factors without its test of them: a device factor created
 * from the plan fills its own values). */
void ilu_plan_factors(const bsr_ilu *F, bsr_ilu_factors *out);

/* Growth-weighted dropping (ilu_grow.c): after a host threshold
 * factorization with opt.grow on, estimate the growth of the inverse factors
 * and, where it is past the trigger, factor again dropping by ||block|| times
 * the growth of its row or column; fs: the factorization's status (on error
 * only the weights are freed, and fs returned). */
bsr_status ilu_grow_stabilize(bsr_ilu *F, bsr_status fs);
/* grow=2: the arrays of the online weights, before a threshold factorization
 * (nothing otherwise); ilu_grow_stabilize frees them. */
bsr_status ilu_grow_begin(bsr_ilu *F);
/* grow=2: x_k of L x = c from the stored L blocks of finished row k and the
 * x of the rows they reference, and the weight grow_l[k] it gives. */
void ilu_grow_row(bsr_ilu *F, int k, const ilu_row_t *r);

/* Free the per-row storage (all = 0 keeps ILU(0)'s fixed rows); free the
 * per-thread workspaces. */
void ilu_rows_free(bsr_ilu *F, int all);
void ilu_work_release(bsr_ilu *F);

#ifdef __cplusplus
}
#endif

#endif
