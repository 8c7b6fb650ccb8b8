/* SPDX-License-Identifier: BSD-3-Clause */
/* Helpers shared by the preconditioner kinds (src/precond*.c). */
#ifndef BSR_PRECOND_IMPL_H
#define BSR_PRECOND_IMPL_H

#include "solver_impl.h"

/* Element e of a value array of precision p, as double; and the setter. */
double bsr_val_get(const void *val, bsr_precision p, size_t e);
void bsr_val_set(void *val, bsr_precision p, size_t e, double v);

/* Scratch for applying a preconditioner stored in one precision to vectors of
 * another: X, Y are converted copies (kept between calls, rebuilt when k changes). */
typedef struct { bsr_multivec *X, *Y; } bsr_pc_mixed;
/* Y = fn(X) with fn working in precision store, converting through m when needed. */
bsr_status bsr_pc_mixed_apply(bsr_pc_mixed *m, bsr_precision store, const bsr_multivec *X,
                              bsr_multivec *Y, bsr_status (*fn)(void *, const bsr_multivec *, bsr_multivec *),
                              void *data);
void bsr_pc_mixed_free(bsr_pc_mixed *m);

/* *Dinv (block diagonal BSR, allocated when NULL, else values overwritten) =
 * scale * inverse of each diagonal block of A, stored in precision prec.
 * BSR_ERR_SINGULAR names the first block row missing or singular. */
bsr_status bsr_diag_inverse(const bsr_matrix *A, double scale, bsr_precision prec, bsr_matrix **Dinv);

/* The block-diagonal inverse held by a Jacobi preconditioner (NULL for other kinds). */
const bsr_matrix *bsr_pc_jacobi_matrix(const bsr_pc *pc);

/* The stored factors of an IC(0) preconditioner (precond_ic0.c): L unit
 * lower (strict part) and U = D L^T (inverted diagonal blocks); NULL for
 * other kinds. */
void bsr_pc_ic0_factors(const bsr_pc *pc, const bsr_matrix **L, const bsr_matrix **U);

/* Device version of an ILU preconditioner (precond_ilu.c): uploads the
 * factors of cpu into pc (whose name/info are set already). */
bsr_status bsr_pc_ilu_device(bsr_context *ctx, const bsr_matrix *A, const bsr_solver_options *o,
                             bsr_pc *cpu, bsr_pc *pc);

#endif
