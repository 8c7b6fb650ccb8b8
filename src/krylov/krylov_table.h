/* SPDX-License-Identifier: BSD-3-Clause */
/* The Krylov table: one row per method (src/krylov/krylov_table.c).  The option
 * parser, the canonical option string, the solver's dispatch and the
 * bandwidth model look a method up here instead of switching on it: a new
 * method is one file (its solve and traffic functions) and one row. */
#ifndef BSR_KRYLOV_TABLE_H
#define BSR_KRYLOV_TABLE_H

#include "solver_impl.h"
#include <stddef.h>

/* Least traffic of one iteration, in units the bandwidth model prices
 * (krylov_bytes.c): products with A, preconditioner applies, passes over an
 * n x k vector; and the passes the method's start adds to the residual
 * norms every method pays (the initial one and the convergence check). */
typedef struct {
    double products, applies, passes;
    double start_passes;
} bsr_krylov_traffic;

typedef struct {
    bsr_method method;      /* the public enum value */
    const char *name;       /* method=NAME, and the name printed */
    /* B, X backend vectors (X: initial guess in, solution out) */
    bsr_status (*solve)(const bsr_kops *o, const bsr_multivec *B, bsr_multivec *X, bsr_kstate *ks);
    /* the preconditioner kinds it accepts: bit (1u << kind); and what a
     * refusal says it needs ("a symmetric preconditioner (...)") */
    unsigned pcs;
    const char *pcs_need;
    /* its integer parameter: the option key, the field of bsr_solver_options
     * (offsetof), the range the parser accepts and the default; key NULL: none */
    const char *param;
    size_t param_off;
    int param_min, param_max, param_def;
    int orth;               /* it reads orth= (printed with it) */
    /* its traffic: a fixed model, or a function of the options o (returns 0
     * when not modelled); neither: the bound is left 0 */
    const bsr_krylov_traffic *model;
    int (*traffic)(const bsr_solver_options *o, bsr_krylov_traffic *t);
} bsr_krylov_row;

/* Every preconditioner kind (the pcs of a method that takes them all). */
#define BSR_PCS_ALL ((1u << (BSR_PC_IC2 + 1)) - 1)

/* The rows and their number. */
const bsr_krylov_row *bsr_krylov_rows(int *n);
/* The row of method m, or NULL. */
const bsr_krylov_row *bsr_krylov_row_of(bsr_method m);
/* The row named name, or NULL. */
const bsr_krylov_row *bsr_krylov_row_named(const char *name);
/* Row's traffic under options o into *t; 0 when it has no model. */
int bsr_krylov_traffic_of(const bsr_krylov_row *row, const bsr_solver_options *o, bsr_krylov_traffic *t);
/* The row whose parameter key is key, or NULL. */
const bsr_krylov_row *bsr_krylov_row_param(const char *key);
/* The value of row's parameter in o (row->param non-NULL), and its address. */
int *bsr_krylov_param(bsr_solver_options *o, const bsr_krylov_row *row);
int bsr_krylov_param_get(const bsr_solver_options *o, const bsr_krylov_row *row);

/* The methods' solve functions and traffic models (one file each). */
bsr_status bsr_krylov_bicgstab(const bsr_kops *o, const bsr_multivec *B, bsr_multivec *X, bsr_kstate *ks);
bsr_status bsr_krylov_gmres(const bsr_kops *o, const bsr_multivec *B, bsr_multivec *X, bsr_kstate *ks);
bsr_status bsr_krylov_cg(const bsr_kops *o, const bsr_multivec *B, bsr_multivec *X, bsr_kstate *ks);
bsr_status bsr_krylov_idr(const bsr_kops *o, const bsr_multivec *B, bsr_multivec *X, bsr_kstate *ks);
extern const bsr_krylov_traffic bsr_krylov_bicgstab_model, bsr_krylov_cg_model;
int bsr_krylov_idr_traffic(const bsr_solver_options *o, bsr_krylov_traffic *t);

#endif
