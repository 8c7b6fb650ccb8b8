/* SPDX-License-Identifier: BSD-3-Clause */
/* bsrsolve incomplete factorizations: block ILU(0), ILUT(tau), ILU2(tau1,tau2)
 * and the CPU block triangular solves.  Included by bsrsolve.h.
 * (Contract shared by src/ilu/ilu*, the GPU triangular solves and the solvers.) */
#ifndef BSRSOLVE_ILU_H
#define BSRSOLVE_ILU_H

#include "core.h"
#include "reorder.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { BSR_ILU0 = 0, BSR_ILUT, BSR_ILU2 } bsr_ilu_kind;

/* Scaling and dropping (see src/ilu/ilu_setup.c for the whole story):
 *  - A is scaled from the left by the inverses of its diagonal blocks
 *    (block Jacobi: the scaled diagonal blocks are I); a row whose diagonal
 *    block is missing or singular is scaled by 1/s, s = its largest block
 *    Frobenius norm / sqrt(b) (counted in stats.scaling_fallbacks).
 *  - Magnitude of a block x: ||x||_F of the scaled block, for L blocks after
 *    the division by the pivot (x = l_ik), for U blocks of the normalized
 *    row (x = d_k^{-1} u_kj); first-order when >= tau1*sqrt(b) (||I||_F =
 *    sqrt(b)), second-order when >= tau2*sqrt(b), dropped otherwise.
 *  - Pivot rule: the pivot block d_k is LU-factored with partial pivoting;
 *    a pivot entry with |p| < pivot_rel * r_k (r_k = largest scaled block
 *    norm of row k / sqrt(b), >= 1 for a scaled row) becomes
 *    sign(p) * pivot_rel * r_k; each regularized block is counted. */
typedef struct {
    bsr_ilu_kind kind;
    double tau1;            /* first-order threshold (ILUT/ILU2) */
    double tau2;            /* second-order threshold (ILU2); <= 0: tau1^2 */
    bsr_order_options order;/* ordering applied before factorization */
    int parallel;           /* factor over the ND tree with OpenMP tasks */
    double pivot_rel;       /* pivot regularization level (<= 0: 1e-8) */
    int strict_pivots;      /* nonzero: a pivot needing regularization is an
                             * error (BSR_ERR_SINGULAR) instead */
    int prec;               /* precision of the stored factors: -1 = A's,
                             * else a bsr_precision (factoring is in double) */
    int symbolic_only;      /* deprecated, kept for source and ABI compatibility (the
                             * library's device preconditioner no longer uses it: it
                             * builds a symbolic value and a device numeric value).
                             * Nonzero: the values are computed elsewhere (a device), so
                             * apply, error_norm and refactor refuse and L, U hold
                             * patterns only.  ILU(0): setup does the ordering, the map
                             * of A and the L/U patterns and schedules but no numeric
                             * work (no scaled copy of A, scaling, pivots or per-row
                             * storage are allocated).  ILUT/ILU2: the thresholds'
                             * factorization runs (its values choose the pattern) but is
                             * not copied into L, U.  match: mpt refused, auto = none */
    int keep_pattern;       /* ILUT/ILU2: nonzero keeps every block of A's own pattern
                             * as first-order (so L+U contains ILU(0)'s pattern); the
                             * thresholds then decide only the fill outside it */
    double fill;            /* > 0, ILUT/ILU2: a bound on the stored fill (L+U blocks / A's),
                             * met in one pass by the per-row cap: row k keeps at most
                             * floor((fill - 1) len_k / 2) fill blocks in L and in U each
                             * (len_k its blocks in A; min with cap when cap > 0).  tau1
                             * and tau2 stay as given.  0 (default): cap alone */
    int cap;                /* ILUT/ILU2, the per-row cap (ILUT(p, tau)'s p): row k keeps at most
                             * P fill blocks (blocks outside A's row) in L, in U and in W each,
                             * the largest by the norm their class is decided by (ties: the
                             * smaller column); U blocks past it become second order (W),
                             * W blocks past it are dropped, L blocks past it are not stored
                             * (they made their updates: the frozen pattern keeps them as
                             * class 2).  It bounds the work and memory of the factorization
                             * by the fill kept.  0 ("auto", the solver's default): P = len_k,
                             * the row's blocks in A; > 0: P; BSR_ILU_CAP_NONE (-1, the
                             * default of bsr_ilu_options_default): no cap */
    int pattern;            /* ILUT/ILU2 refactor: BSR_PATTERN_FROZEN (default) factors the
                             * new values into the pattern the setup chose (L, U and ILU2's
                             * second-order R, W), BSR_PATTERN_REFRESH drops by the
                             * thresholds again (a new pattern, as a fresh setup) */
    int match;              /* BSR_MATCH_NONE (default), _MPT: factor Q (P Dr A Dc) Q^T with
                             * P, Dr, Dc the maximum-product transversal and its scaling
                             * (bsr_match_mpt) and Q the ordering computed on P A's graph;
                             * _AUTO: none when every diagonal block is regular (the scaling's
                             * fallback test below: not missing, zero or numerically singular);
                             * else the factors without the matching are kept when stable
                             * (est = ||(LU)^{-1} e||_inf <= 100), otherwise those with it too
                             * are computed and the smaller est wins (stats.match_est_*); a
                             * structurally singular A stays at none (stats.match_note says
                             * why).  With symbolic_only (values factored elsewhere):
                             * mpt refused, auto = none */
    int grow;               /* ILUT/ILU2 with host rows: nonzero estimates the growth of the
                             * inverse factors after the factorization (as diag=1 reports it)
                             * and, when it is past 1e3, factors again dropping a block by its
                             * norm times the growth of L^{-1} at its column (L) or of U^{-1} at
                             * its row (U), Bollhoefer's inverse-based rule (src/ilu/ilu_grow.c);
                             * below the trigger the factors are those of grow = 0 bit for bit.
                             * 2: one factorization, the L blocks of column i weighted by the
                             * estimate of row i of L^{-1} made as row i was finished (no U
                             * weights; rows whose estimate stays <= 10 weigh 1) */
    double max_work;        /* ILUT/ILU2 with host rows: > 0 bounds the rows' work, counted in
                             * block multiply-adds (b^3 for each product of two blocks; the
                             * setup and, with grow, its refactorization together): past it
                             * the setup fails with BSR_ERR_UNSUPPORTED naming the bound,
                             * whatever the thread count (the count is the same for any
                             * schedule).  0 (default): no bound.  A frozen refactor is not
                             * counted (its work is the setup's) */
} bsr_ilu_options;

/* bsr_ilu_options.cap: no per-row cap (the thresholds alone decide). */
#define BSR_ILU_CAP_NONE (-1)

/* Values of bsr_ilu_options.pattern. */
enum { BSR_PATTERN_FROZEN = 0, BSR_PATTERN_REFRESH = 1 };
/* Values of bsr_ilu_options.match (bsr_solver_options.match too). */
enum { BSR_MATCH_NONE = 0, BSR_MATCH_MPT = 1, BSR_MATCH_AUTO = 2 };

/* Defaults: tau1 = 1e-2 (ILUT/ILU2), tau2 = tau1^2, ND ordering (depth auto),
 * parallel on, pivot_rel 1e-8, factors in A's precision, keep_pattern off,
 * pattern frozen, cap none (the solver's default is auto), fill 0. */
void bsr_ilu_options_default(bsr_ilu_options *o, bsr_ilu_kind kind);

/* Opaque factorization: scaling, ordering, L, U, their level schedules. */
typedef struct bsr_ilu bsr_ilu;

/* Scaling, ordering, symbolic work and the first numeric factorization. */
bsr_status bsr_ilu_setup(const bsr_matrix *A, const bsr_ilu_options *opt, bsr_ilu **F);
/* New values of A on the same pattern; reuses ordering and allocations.
 * Reused: the ordering and ND tree, the symbolic map of A onto the permuted
 * rows, the scaled-matrix / scaling / pivot arrays and the per-thread
 * workspaces, L, U and their level schedules (values are overwritten in
 * place).  ILUT/ILU2 with pattern = BSR_PATTERN_FROZEN: the new values are
 * factored into the setup's pattern with the same rules (a block of the
 * pattern that becomes small is kept, nothing outside it is created; with
 * the setup's values the factors equal the setup's bit for bit).  With
 * BSR_PATTERN_REFRESH dropping is redone from scratch (the result equals a
 * fresh setup bit for bit), and L, U and the level schedules are kept only
 * when the new pattern is the same (otherwise rebuilt: the pointers from
 * get_factors change, and stats.pattern_id grows).
 * BSR_ERR_ARG when A's sizes differ from the setup's, BSR_ERR_STRUCTURE when
 * its pattern does.  After a failed refactor F refuses apply/get_factors
 * until a refactor succeeds. */
bsr_status bsr_ilu_refactor(bsr_ilu *F, const bsr_matrix *A);
void bsr_ilu_destroy(bsr_ilu *F);
/* Y = M^{-1} X on the CPU, M ~ A (undoes scaling and permutation).  X and Y
 * are in A's original numbering, on the host, of any precision (the solves
 * run in the factors' precision), and may alias.  Thread-safe on a const F. */
bsr_status bsr_ilu_apply(const bsr_ilu *F, const bsr_multivec *X, bsr_multivec *Y);

/* The stored factors, in the permuted numbering:
 *  L: unit lower, strictly lower blocks only (diagonal implicit identity);
 *  U: upper, diagonal block first in each row and holding the INVERTED pivot;
 *  lvL, lvU: their level schedules.  The ordering (NULL = natural) and the
 *  block-diagonal left/right scalings (NULL = none; nbrows blocks of b*b,
 *  row-major, same precision as the factors) complete M^{-1}:
 *  M^{-1} x = P^T Sr U^{-1} L^{-1} Sl P x.
 *  With a matching, the gather reads other rows than the scatter writes:
 *  factor row i takes x's block row gather[i] (NULL: P's, ord->perm[i]) and
 *  its result goes to block row ord->perm[i]; Sl holds Ds Dr, Sr the column
 *  scaling Dc (one scalar per block row as a b x b block). */
typedef struct {
    const bsr_matrix *L, *U;
    const bsr_levels *lvL, *lvU;
    const bsr_ordering *ord;
    const void *scale_left, *scale_right;
    const int *gather;
} bsr_ilu_factors;
bsr_status bsr_ilu_get_factors(const bsr_ilu *F, bsr_ilu_factors *out);

typedef struct {
    int64_t nnzb_L, nnzb_U, nnzb_A;
    double fill;               /* (nnzb_L + nnzb_U) / nnzb_A */
    size_t bytes_factors;
    int64_t second_order_peak; /* ILU2: R+W blocks held at peak */
    int64_t dropped;           /* blocks dropped */
    int pivots_regularized;
    double setup_s, factor_s;
    /* second_order_peak: the factorization runs in row (IKJ) form, where an
     * R block is needed only while its own row is eliminated and W blocks
     * live until the end: peak = all W blocks + the most R blocks of one row.
     * dropped counts blocks computed and then discarded, fill-ins included. */
    int scaling_fallbacks;     /* rows scaled by a scalar (diagonal block singular/missing) */
    int64_t second_order_total;/* ILU2: second-order blocks used (R + W) */
    int nlevels_L, nlevels_U;  /* level-schedule lengths (0 when not built) */
    int tree_parallel;         /* 1: factored over the ND tree with OpenMP tasks; 2: without a
                                * tree, by concurrent rows waiting for the rows they read; 3: the
                                * pattern's rows on the device (the solver's CUDA backend); 0: serial */
    double tau1;               /* ILUT/ILU2: the first-order threshold used */
    int pattern_id;            /* bumped whenever L, U and their level schedules are
                                * rebuilt (ILUT/ILU2 refactor with a new pattern);
                                * same id = same patterns, same pointers: a device
                                * copy then needs the values only */
    int match_used;            /* 1: the maximum-product transversal and scaling are applied */
    int match_nperm;           /* its permuted block rows (match[j] != j) */
    double match_s;            /* seconds of the auto test, the matching and P A's pattern */
    const char *match_note;    /* why auto ended at none, "" otherwise (static) */
    double order_s;            /* seconds of the ordering (0 for natural) */
    double match_est_none;     /* auto with a weak diagonal: ||(LU)^{-1} e||_inf of the factors
                                * without / with the matching; -1 when not computed */
    double match_est_mpt;
    int grow_passes;           /* opt.grow: refactorizations with growth weights (0: stable as made) */
    double grow_est0, grow_est;/* opt.grow: largest growth estimate of the first / the kept factors
                                * (0: not estimated) */
    double work;               /* the threshold rows of the last setup factored on the host, in
                                * block multiply-adds (b^3 a product of two blocks; with grow,
                                * its refactorization too): what opt.max_work bounds */
} bsr_ilu_stats;
bsr_status bsr_ilu_get_stats(const bsr_ilu *F, bsr_ilu_stats *st);

/* ||Ds P A P^T - L U||_F / ||Ds P A P^T||_F, the relative error of the stored
 * factors on the scaled, permuted matrix they approximate (Ds the left
 * scaling; Frobenius norms are invariant under the permutation).  Costs
 * about one sparse product L*U (uses the scaled matrix kept by setup). */
bsr_status bsr_ilu_error_norm(const bsr_ilu *F, double *rel);

/* CPU block triangular solves on multivectors (block rows of L's b):
 * Y = L^{-1} X (L unit lower, strict part stored) and Y = U^{-1} X (U's
 * diagonal holds inverted pivots).  lv = NULL: rows in natural order on the
 * calling thread; otherwise the level schedule lv on an OpenMP team where it
 * pays (4 threads or more and wide levels), natural order elsewhere; the
 * same bits either way.  X and Y may alias.  b at most BSR_MAX_BLOCK. */
bsr_status bsr_trsv_lower(const bsr_matrix *L, const bsr_levels *lv, const bsr_multivec *X,
                          bsr_multivec *Y);
bsr_status bsr_trsv_upper(const bsr_matrix *U, const bsr_levels *lv, const bsr_multivec *X,
                          bsr_multivec *Y);

#ifdef __cplusplus
}
#endif
#endif
