/* SPDX-License-Identifier: BSD-3-Clause */
/* Bandwidth model of a Krylov iteration (profile=1, issue 22).
 *
 * A sparse iteration is bound by memory traffic: the least bytes it must
 * move, over the device-to-device copy bandwidth, is the time no
 * implementation beats.  Counted here: every matrix, factor and vector
 * that a step of the method reads or writes, once per step, assuming each
 * vector update is fused with the inner products that follow it (the
 * implementation may move more: the gap is what the profile's fraction
 * shows).  V = one pass over an n x k vector in the working precision. */
#include "solver_impl.h"

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

double bsr_krylov_iter_bytes(const bsr_kops *o, bsr_method m)
{
    const double V = vec_bytes(o), Ab = spmm_bytes(o, V), Mb = pc_bytes(o, V);
    switch (m) {
    case BSR_BICGSTAB:
        /* p = r + beta (p - omega v): r, p, v read, p written (4); (rhat, v), (v, v): 2;
         * s = r - alpha v: 3; (t, s), (t, t), (s, s): 2; x += alpha phat + omega shat:
         * 4; r = s - omega t with (r, r), (rhat, r): 4; two products, two applies */
        return 2 * Ab + 2 * Mb + 19 * V;
    case BSR_CG:
        /* (p, Ap): 2; x += alpha p: 3; r -= alpha Ap with (r, r): 3; (r, z): 2; p = z + beta p: 3 */
        return Ab + Mb + 13 * V;
    default:
        return 0; /* GMRES: the orthogonalization grows with the restart cycle, not modelled */
    }
}

double bsr_krylov_extra_bytes(const bsr_kops *o, bsr_method m)
{
    const double V = vec_bytes(o), Ab = spmm_bytes(o, V);
    if (m != BSR_BICGSTAB && m != BSR_CG) return 0;
    /* ||b|| (1); r = b - A x (product + b read, r read and written: 3) and ||r||
     * (1), at the start and once more to confirm convergence; BiCGStab's start
     * also copies r to rhat and zeroes p and v (4) */
    return 1 * V + 2 * (Ab + 4 * V) + (m == BSR_BICGSTAB ? 4 * V : 0);
}
