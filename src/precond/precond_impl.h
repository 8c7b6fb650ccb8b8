/* SPDX-License-Identifier: BSD-3-Clause */
/* Helpers shared by the preconditioner kinds (the files of src/precond/ and
 * src/ilu/precond_ilu.c). */
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

/* Two stored triangular factors, M^{-1} X = U^{-1} L^{-1} X (IC(0), SSOR):
 * L strictly lower, U upper with its diagonal, both of precision prec, their
 * level schedules, and the scratch for vectors of another precision. */
typedef struct {
    bsr_precision prec;
    bsr_matrix *L, *U;
    bsr_levels *lvL, *lvU;
    bsr_pc_mixed mix;
} bsr_pc_tri;
/* Y = U^{-1} L^{-1} X in the vectors' precision. */
bsr_status bsr_pc_tri_apply(bsr_pc_tri *T, const bsr_multivec *X, bsr_multivec *Y);
/* Free the factors, schedules and scratch of T (its fields NULL after). */
void bsr_pc_tri_free(bsr_pc_tri *T);

/* *Dinv (block diagonal BSR, allocated when NULL, else values overwritten) =
 * scale * inverse of each diagonal block of A, stored in precision prec.
 * BSR_ERR_SINGULAR names the first block row missing or singular. */
bsr_status bsr_diag_inverse(const bsr_matrix *A, double scale, bsr_precision prec, bsr_matrix **Dinv);

/* The stored factors of an IC(0) preconditioner (precond_ic0.c): L unit
 * lower (strict part) and U = D L^T (inverted diagonal blocks); NULL for
 * other kinds. */
void bsr_pc_ic0_factors(const bsr_pc *pc, const bsr_matrix **L, const bsr_matrix **U);
/* The same for an IC2 preconditioner (precond_ic2.c), in its ordering's
 * numbering (*perm: perm[new] = old, NULL when natural). */
void bsr_pc_ic2_factors(const bsr_pc *pc, const bsr_matrix **L, const bsr_matrix **U, const int **perm);

/* ---- shared by the incomplete Cholesky kinds (precond_chol.c) ------------- */
/* A square, with a pattern that is its own transpose and values within a
 * relative sqrt(eps) of A^T's: BSR_ERR_SIZE, _STRUCTURE or _VALUE naming the
 * first offending block and the kind (who: "ic0") otherwise. */
bsr_status bsr_pc_check_symmetric(const bsr_matrix *A, const char *who);
/* c -= a * m^T for b x b row-major blocks. */
void bsr_blk_mulsub_t(int b, double *c, const double *a, const double *m);
/* Nonzero when the symmetric b x b block a is positive definite (a Cholesky
 * factorization with every pivot above a tiny fraction of the largest
 * diagonal entry succeeds). */
int bsr_blk_spd(int b, const double *a);
/* d symmetrized in place, then dinv = d^{-1} (symmetrized); BSR_ERR_SINGULAR
 * (no message) when d is not positive definite. */
bsr_status bsr_pc_pivot_sym(int b, double *d, double *dinv);

/* ---- the preconditioner table (precond_table.c) ----------------------------
 * One row per (kind, backend): the functions of one preconditioner object.
 * setup builds it for A on pc (calloc'ed, name and the three functions below
 * already set from the row; ctx: the CUDA context of a device row, NULL for
 * a host one); on failure the caller destroys pc, so destroy must take
 * whatever part setup made (pc->data NULL included).  A device row that
 * reads A's device mirror (setup or refactor) makes it current itself, after
 * its host work; the caller keeps or releases it.  A new kind or backend is
 * one file defining its ops and one row of the table. */
typedef struct {
    bsr_status (*setup)(bsr_pc *pc, const bsr_matrix *A, const bsr_solver_options *o, bsr_context *ctx);
    bsr_status (*refactor)(bsr_pc *pc, const bsr_matrix *A);   /* NULL: nothing to redo */
    bsr_status (*apply)(bsr_pc *pc, const bsr_multivec *X, bsr_multivec *Y);   /* NULL: M = I */
    void (*destroy)(bsr_pc *pc);   /* NULL: nothing owned */
} bsr_pc_ops;

typedef struct {
    bsr_pc_kind kind;
    bsr_backend backend;
    const bsr_pc_ops *ops;
} bsr_pc_row;

/* The row of (kind, backend): BSR_ERR_UNSUPPORTED naming both when the table
 * has none (a CUDA row in a CPU-only build, ssor or ic2 on the device). */
bsr_status bsr_pc_row_find(bsr_pc_kind kind, bsr_backend backend, const bsr_pc_row **row);
/* The table's rows (tests list them): *n rows. */
const bsr_pc_row *bsr_pc_rows(int *n);

/* The ops of each kind and backend (the files named). */
extern const bsr_pc_ops bsr_pc_none_ops;          /* precond.c: M = I, any backend */
extern const bsr_pc_ops bsr_pc_jacobi_cpu_ops;    /* precond_jacobi.c */
extern const bsr_pc_ops bsr_pc_jacobi_cuda_ops;   /* precond_jacobi_cuda.c */
extern const bsr_pc_ops bsr_pc_ssor_cpu_ops;      /* precond_ssor.c */
extern const bsr_pc_ops bsr_pc_ic0_cpu_ops;       /* precond_ic0.c */
extern const bsr_pc_ops bsr_pc_ic0_cuda_ops;      /* precond_ic0_cuda.c: the device ILU(0) of symmetric A */
extern const bsr_pc_ops bsr_pc_ic2_cpu_ops;       /* precond_ic2.c */
extern const bsr_pc_ops bsr_pc_ilu_cpu_ops;       /* precond_ilu.c: ilu0, ilut, ilu2 */
extern const bsr_pc_ops bsr_pc_ilu_cuda_ops;      /* precond_ilu.c: ilu0, ilut, ilu2 */
extern const bsr_pc_ops bsr_pc_coarse_ops;        /* precond_coarse.c: two levels around an ILU (coarse=M) */

#endif
