/* SPDX-License-Identifier: BSD-3-Clause */
/* Bandwidth model of a Krylov iteration (profile=1).
 *
 * A sparse iteration is bound by memory traffic: the least bytes it must
 * move, over the device-to-device copy bandwidth, is the time no
 * implementation beats.  Counted here: every matrix, factor and vector
 * that a step of the method reads or writes, once per step, assuming each
 * vector update is fused with the inner products that follow it (the
 * implementation may move more: the gap is what the profile's fraction
 * shows).  V = one pass over an n x k vector in the working precision.
 * How many products, applies and passes a method's iteration makes is its
 * row's traffic function (krylov_table.h), next to the method. */
#include "krylov_table.h"

/* One Y = A X: A's values, column indices and row pointers once, X read, Y written. */
static double spmm_bytes(const bsr_kops *o, double V)
{
    const bsr_matrix *A = o->A;
    const double bb = (double)A->b * A->b;
    return (double)A->nnzb * (bb * bsr_precision_size(A->prec) + 4) + 4.0 * (A->nbrows + 1) + 2 * V;
}

/* One preconditioner apply: what the preconditioner declared, or a copy. */
static double pc_bytes(const bsr_kops *o, double V)
{
    const bsr_pc *pc = o->pc;
    if (!pc || !pc->apply) return 2 * V;
    return pc->bytes_fixed + pc->bytes_passes * V;
}

static double vec_bytes(const bsr_kops *o)
{
    return (double)o->n * o->k * bsr_precision_size(o->prec);
}

double bsr_krylov_iter_bytes(const bsr_kops *o, const bsr_solver_options *opt)
{
    const bsr_krylov_row *row = bsr_krylov_row_of(opt->method);
    bsr_krylov_traffic t;
    if (!bsr_krylov_traffic_of(row, opt, &t)) return 0;
    const double V = vec_bytes(o);
    return t.products * spmm_bytes(o, V) + t.applies * pc_bytes(o, V) + t.passes * V;
}

double bsr_krylov_extra_bytes(const bsr_kops *o, const bsr_solver_options *opt)
{
    const bsr_krylov_row *row = bsr_krylov_row_of(opt->method);
    bsr_krylov_traffic t;
    if (!bsr_krylov_traffic_of(row, opt, &t)) return 0;
    const double V = vec_bytes(o), Ab = spmm_bytes(o, V);
    /* ||b|| (1); r = b - A x (product + b read, r read and written: 3) and ||r||
     * (1), at the start and once more to confirm convergence; and what the
     * method's own start adds */
    return 1 * V + 2 * (Ab + 4 * V) + t.start_passes * V;
}
