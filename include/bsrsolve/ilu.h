/* bsrsolve incomplete factorizations: block ILU(0), ILUT(tau), ILU2(tau1,tau2)
 * and the CPU block triangular solves.  Included by bsrsolve.h.
 * (Contract shared by src/ilu*, the GPU triangular solves and the solvers.) */
#ifndef BSRSOLVE_ILU_H
#define BSRSOLVE_ILU_H

#include "core.h"
#include "reorder.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { BSR_ILU0 = 0, BSR_ILUT, BSR_ILU2 } bsr_ilu_kind;

typedef struct {
    bsr_ilu_kind kind;
    double tau1;            /* first-order threshold (ILUT/ILU2) */
    double tau2;            /* second-order threshold (ILU2); <= 0: tau1^2 */
    bsr_order_options order;/* ordering applied before factorization */
    int parallel;           /* factor over the ND tree with OpenMP tasks */
} bsr_ilu_options;

void bsr_ilu_options_default(bsr_ilu_options *o, bsr_ilu_kind kind);

/* Opaque factorization: scaling, ordering, L, U, their level schedules. */
typedef struct bsr_ilu bsr_ilu;

/* Scaling, ordering, symbolic work and the first numeric factorization. */
bsr_status bsr_ilu_setup(const bsr_matrix *A, const bsr_ilu_options *opt, bsr_ilu **F);
/* New values of A on the same pattern; reuses ordering and allocations. */
bsr_status bsr_ilu_refactor(bsr_ilu *F, const bsr_matrix *A);
void bsr_ilu_destroy(bsr_ilu *F);
/* Y = M^{-1} X on the CPU, M ~ A (undoes scaling and permutation).  X and Y
 * are in A's original numbering. */
bsr_status bsr_ilu_apply(const bsr_ilu *F, const bsr_multivec *X, bsr_multivec *Y);

/* The stored factors, in the permuted numbering:
 *  L: unit lower, strictly lower blocks only (diagonal implicit identity);
 *  U: upper, diagonal block first in each row and holding the INVERTED pivot;
 *  lvL, lvU: their level schedules.  The ordering (NULL = natural) and the
 *  block-diagonal left/right scalings (NULL = none; nbrows blocks of b*b,
 *  row-major, same precision as the factors) complete M^{-1}:
 *  M^{-1} x = P^T Sr U^{-1} L^{-1} Sl P x. */
typedef struct {
    const bsr_matrix *L, *U;
    const bsr_levels *lvL, *lvU;
    const bsr_ordering *ord;
    const void *scale_left, *scale_right;
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
} bsr_ilu_stats;
bsr_status bsr_ilu_get_stats(const bsr_ilu *F, bsr_ilu_stats *st);

/* CPU block triangular solves on multivectors (block rows of L's b):
 * Y = L^{-1} X (L unit lower, strict part stored) and Y = U^{-1} X (U's
 * diagonal holds inverted pivots).  lv = NULL: sequential S2 reference;
 * otherwise level-scheduled OpenMP.  X and Y may alias. */
bsr_status bsr_trsv_lower(const bsr_matrix *L, const bsr_levels *lv, const bsr_multivec *X,
                          bsr_multivec *Y);
bsr_status bsr_trsv_upper(const bsr_matrix *U, const bsr_levels *lv, const bsr_multivec *X,
                          bsr_multivec *Y);

#ifdef __cplusplus
}
#endif
#endif
