/* SPDX-License-Identifier: BSD-3-Clause */
/* Preconditioned conjugate gradients for symmetric positive definite A and a
 * symmetric positive definite M, k right-hand sides with per-column scalars
 * and masked updates.  p'Ap <= 0 or r'M^{-1}r <= 0 stops the column as
 * indefinite (A or M not SPD) instead of running on with garbage. */
#include "krylov_table.h"
#include <math.h>
#include <string.h>

enum { R, Z, P, Q, NV };

/* The method in the units it is given (see bsr_krylov_scaled). */
static bsr_status run_cg(const bsr_kops *o, const bsr_multivec *B, bsr_multivec *X, bsr_kstate *ks)
{
    int k = o->k;
    bsr_status st = BSR_OK;
    bsr_kwork wk;
    if ((st = bsr_kwork_new(o, NV, 8, 2, "CG workspace", &wk))) goto done;
    bsr_multivec **v = wk.v;
    double *rz = wk.sc, *pq = wk.sc + k, *alpha = wk.sc + 2 * k, *malpha = wk.sc + 3 * k, *rn = wk.sc + 4 * k,
           *one = wk.sc + 5 * k, *beta = wk.sc + 6 * k, *d = wk.sc + 7 * k;
    unsigned char *was = wk.m, *reset = wk.m + k;
    for (int j = 0; j < k; j++) one[j] = 1;

    if ((st = bsr_kops_residual(o, B, X, v[R])) || (st = bsr_kops_norm2(o, v[R], rn))) goto done;
    if (!bsr_kstate_update(ks, rn)) goto done;
    /* z = M^{-1} r, p = z, rz = (r, z) */
    if ((st = bsr_kops_precond(o, v[R], v[Z])) || (st = o->copy(o, v[P], v[Z], NULL)) ||
        (st = o->dot(o, v[R], v[Z], rz)))
        goto done;
    for (int j = 0; j < k; j++)
        if (ks->active[j] && !(rz[j] > 0)) bsr_kstate_stop(ks, j, BSR_DIVERGED_INDEFINITE);
    while (bsr_kstate_nactive(ks) > 0) {
        const unsigned char *act = ks->active;
        memcpy(was, act, (size_t)k);
        if ((st = o->matvec(o, v[P], v[Q])) || (st = o->dot(o, v[P], v[Q], pq))) goto done;
        for (int j = 0; j < k; j++) {
            if (!act[j]) continue;
            if (!(pq[j] > 0)) { bsr_kstate_stop(ks, j, BSR_DIVERGED_INDEFINITE); continue; }
            alpha[j] = rz[j] / pq[j];
            malpha[j] = -alpha[j];
        }
        if ((st = o->axpby(o, X, alpha, v[P], one, act)) || (st = o->axpby(o, v[R], malpha, v[Q], one, act)) ||
            (st = bsr_kops_norm2(o, v[R], rn)))
            goto done;
        ks->it++;
        bsr_kstate_update(ks, rn);
        /* converged columns whose true residual misses: restart from it (r = Q) */
        if (bsr_kstate_verify(o, ks, was, B, X, v[Q], reset, &st) && (st = o->copy(o, v[R], v[Q], reset)))
            goto done;
        if (st) goto done;
        if (!bsr_kstate_nactive(ks)) break;
        if ((st = bsr_kops_precond(o, v[R], v[Z])) || (st = o->dot(o, v[R], v[Z], d))) goto done;
        for (int j = 0; j < k; j++) {
            if (!act[j]) continue;
            if (!(d[j] > 0)) { bsr_kstate_stop(ks, j, BSR_DIVERGED_INDEFINITE); continue; }
            beta[j] = reset[j] ? 0.0 : d[j] / rz[j]; /* a restarted column takes p = z */
            rz[j] = d[j];
        }
        /* p = z + beta p */
        if ((st = o->axpby(o, v[P], one, v[Z], beta, act))) goto done;
    }
done:
    bsr_kwork_free(o, &wk);
    return st;
}

/* Traffic of one iteration (krylov_bytes.c's model): (p, Ap): 2; x += alpha p:
 * 3; r -= alpha Ap with (r, r): 3; (r, z): 2; p = z + beta p: 3; one product,
 * one apply. */
const bsr_krylov_traffic bsr_krylov_cg_model = {1, 1, 13, 0};

/* The method on columns scaled so that its inner products stay in range. */
bsr_status bsr_krylov_cg(const bsr_kops *o, const bsr_multivec *B, bsr_multivec *X, bsr_kstate *ks)
{
    return bsr_krylov_scaled(o, B, X, ks, run_cg);
}
