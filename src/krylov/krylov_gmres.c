/* SPDX-License-Identifier: BSD-3-Clause */
/* Restarted GMRES(m) with right preconditioning, batched over k columns: the
 * Arnoldi step does one preconditioner application and one SpMM on all k
 * columns; each column has its own Hessenberg matrix, Givens rotations and
 * least-squares right-hand side.  Orthogonalization by modified Gram-Schmidt
 * or classical Gram-Schmidt applied twice (CGS2).  Since the preconditioner
 * is fixed, the correction of a cycle is M^{-1} (V y): one more application
 * per cycle instead of storing M^{-1} V.  A column stops inside a cycle when
 * its least-squares residual meets the tolerance; its true residual is checked
 * at the cycle's end (and it is reopened if they disagree). */
#include "krylov_table.h"
#include <math.h>
#include <string.h>

typedef struct {
    int m, k;
    double *H;  /* [k][(m+1)*m], column-major per column: H[j][i*(m+1)+l] = h(l,i) */
    double *cs, *sn, *g, *y; /* [k][m+1] */
} hess;

#define HIDX(hs, j, l, i) ((size_t)(j) * ((hs)->m + 1) * (hs)->m + (size_t)(i) * ((hs)->m + 1) + (l))
#define VIDX(hs, j, l) ((size_t)(j) * ((hs)->m + 1) + (l))

/* Givens rotation zeroing b in (a, b): c, s with c a + s b = r, -s a + c b = 0. */
static void givens(double a, double b, double *c, double *s)
{
    if (b == 0) { *c = 1; *s = 0; return; }
    double r = hypot(a, b);
    *c = a / r;
    *s = b / r;
}

/* Column j, step i: apply old rotations to h(:,i), make a new one, update g;
 * returns |g(i+1)|, the least-squares residual. */
static double rotate(hess *hs, int j, int i)
{
    double *h = hs->H + HIDX(hs, j, 0, i), *cs = hs->cs + VIDX(hs, j, 0), *sn = hs->sn + VIDX(hs, j, 0),
           *g = hs->g + VIDX(hs, j, 0);
    for (int l = 0; l < i; l++) {
        double a = h[l], b = h[l + 1];
        h[l] = cs[l] * a + sn[l] * b;
        h[l + 1] = -sn[l] * a + cs[l] * b;
    }
    givens(h[i], h[i + 1], &cs[i], &sn[i]);
    h[i] = cs[i] * h[i] + sn[i] * h[i + 1];
    h[i + 1] = 0;
    g[i + 1] = -sn[i] * g[i];
    g[i] = cs[i] * g[i];
    return fabs(g[i + 1]);
}

/* y = R^{-1} g for column j's first s steps (R upper triangular in H). */
static void backsolve(hess *hs, int j, int s)
{
    double *y = hs->y + VIDX(hs, j, 0), *g = hs->g + VIDX(hs, j, 0);
    for (int i = s - 1; i >= 0; i--) {
        double v = g[i];
        for (int l = i + 1; l < s; l++) v -= hs->H[HIDX(hs, j, i, l)] * y[l];
        double d = hs->H[HIDX(hs, j, i, i)];
        y[i] = d != 0 ? v / d : 0; /* d = 0 only after an exact breakdown at step i */
    }
}

/* W orthogonalized against V[0..i] in the columns of cyc (CGS2: classical
 * Gram-Schmidt twice, the projections of a pass against the same W; MGS:
 * one at a time); h[l*k + j] = the sum of W_j's projections on V_l. */
bsr_status bsr_gmres_orth(const bsr_kops *o, bsr_orth orth, bsr_multivec *const *V, int i, bsr_multivec *W,
                          const unsigned char *cyc, double *h)
{
    const int k = o->k;
    double one[BSR_KMAX], c[BSR_KMAX], d[BSR_KMAX];
    for (int j = 0; j < k; j++) one[j] = 1;
    for (size_t e = 0; e < (size_t)(i + 1) * k; e++) h[e] = 0;
    if (orth != BSR_ORTH_CGS2) {
        for (int l = 0; l <= i; l++) {
            BSR_TRY(o->dot(o, W, V[l], d));
            for (int j = 0; j < k; j++) { c[j] = -d[j]; h[(size_t)l * k + j] = d[j]; }
            BSR_TRY(o->axpby(o, W, c, V[l], one, cyc));
        }
        return BSR_OK;
    }
    double hh[BSR_KMAX * 64];
    double *hp = (size_t)(i + 1) * k <= sizeof hh / sizeof hh[0] ? hh : NULL, *heap = NULL;
    if (!hp && !(hp = heap = bsr_malloc(sizeof(double) * (size_t)(i + 1) * k, "CGS2"))) return BSR_ERR_NOMEM;
    bsr_status st = BSR_OK;
    for (int pass = 0; pass < 2 && !st; pass++) {
        st = bsr_kops_dotm(o, W, V, i + 1, hp);
        for (int l = 0; l <= i && !st; l++) {
            for (int j = 0; j < k; j++) {
                c[j] = -hp[(size_t)l * k + j];
                h[(size_t)l * k + j] += hp[(size_t)l * k + j];
            }
            st = o->axpby(o, W, c, V[l], one, cyc);
        }
    }
    free(heap);
    return st;
}

/* The end of an Arnoldi step: V_{i+1} = e W in the columns of mask, the
 * iteration counted with the columns' residual estimates rn, and cyc
 * cleared where a column stopped. */
bsr_status bsr_gmres_step_end(const bsr_kops *o, bsr_kstate *ks, bsr_multivec *Vn, const double *e,
                              const bsr_multivec *W, const unsigned char *mask, const double *rn, unsigned char *cyc)
{
    double zero[BSR_KMAX];
    for (int j = 0; j < o->k; j++) zero[j] = 0;
    BSR_TRY(o->axpby(o, Vn, e, W, zero, mask));
    ks->it++;
    bsr_kstate_update(ks, rn);
    for (int j = 0; j < o->k; j++) cyc[j] = cyc[j] && ks->active[j];
    return BSR_OK;
}

/* The end of a cycle: X += M^{-1} (V y) in the columns of was (column j's y
 * its steps[j] first entries of y + j ldy); the columns that converged
 * confirmed by their true residual (bsr_kstate_verify, reopen); where some
 * stay active, W = B - A X and rn its norms, a column whose norm is not
 * finite stopped.  U scratch. */
bsr_status bsr_gmres_cycle_end(const bsr_kops *o, bsr_kstate *ks, bsr_multivec *const *V, const double *y, int ldy,
                               const int *steps, const unsigned char *was, const bsr_multivec *B, bsr_multivec *X,
                               bsr_multivec *W, bsr_multivec *U, double *rn, unsigned char *reopen)
{
    const int k = o->k;
    double one[BSR_KMAX], zero[BSR_KMAX], c[BSR_KMAX];
    int m = 0;
    for (int j = 0; j < k; j++) {
        one[j] = 1;
        zero[j] = 0;
        if (was[j] && steps[j] > m) m = steps[j];
    }
    if (m > 0) {
        BSR_TRY(o->axpby(o, W, zero, W, zero, NULL));
        for (int l = 0; l < m; l++) {
            int used = 0;
            for (int j = 0; j < k; j++) {
                c[j] = was[j] && l < steps[j] ? y[(size_t)j * ldy + l] : 0;
                used |= c[j] != 0;
            }
            if (used) BSR_TRY(o->axpby(o, W, c, V[l], one, was));
        }
        BSR_TRY(bsr_kops_precond(o, W, U));
        BSR_TRY(o->axpby(o, X, one, U, one, was));
    }
    bsr_status st = BSR_OK;
    bsr_kstate_verify(o, ks, was, B, X, W, reopen, &st);
    if (st || !bsr_kstate_nactive(ks)) return st;
    BSR_TRY(bsr_kops_residual(o, B, X, W));
    BSR_TRY(bsr_kops_norm2(o, W, rn));
    for (int j = 0; j < k; j++) {
        /* a NaN or Inf that the estimate missed stops the column here */
        if (ks->active[j] && !isfinite(rn[j])) bsr_kstate_stop(ks, j, BSR_DIVERGED_NAN);
    }
    return BSR_OK;
}

/* The method in the units it is given (see bsr_krylov_scaled). */
static bsr_status run_gmres(const bsr_kops *o, const bsr_multivec *B, bsr_multivec *X, bsr_kstate *ks)
{
    const bsr_solver_options *opt = ks->opt;
    int k = o->k, m = opt->restart;
    bsr_status st = BSR_OK;
    hess hs = {m, k, NULL, NULL, NULL, NULL, NULL};
    bsr_multivec **V = bsr_calloc((size_t)m + 1, sizeof *V, "GMRES basis");
    bsr_multivec *W = NULL, *U = NULL;
    double *sc = bsr_calloc((size_t)8 * k, sizeof(double), "GMRES scalars");
    unsigned char *mk = bsr_calloc((size_t)3 * k, 1, "GMRES masks");
    int *steps = bsr_calloc((size_t)k, sizeof(int), "GMRES steps");
    double *hc = bsr_malloc(sizeof(double) * (size_t)(m + 1) * k, "GMRES projections");
    hs.H = bsr_calloc((size_t)k * (m + 1) * m, sizeof(double), "GMRES Hessenberg");
    hs.cs = bsr_calloc((size_t)4 * k * (m + 1), sizeof(double), "GMRES rotations");
    if (!V || !sc || !mk || !steps || !hc || !hs.H || !hs.cs) { st = BSR_ERR_NOMEM; goto done; }
    hs.sn = hs.cs + (size_t)k * (m + 1);
    hs.g = hs.sn + (size_t)k * (m + 1);
    hs.y = hs.g + (size_t)k * (m + 1);
    for (int l = 0; l <= m; l++)
        if ((st = o->vnew(o, &V[l]))) goto done;
    if ((st = o->vnew(o, &W)) || (st = o->vnew(o, &U))) goto done;
    double *rn = sc, *one = sc + k, *zero = sc + 2 * k, *d = sc + 3 * k, *e = sc + 5 * k;
    unsigned char *was = mk, *cyc = mk + k, *reopen = mk + 2 * k;
    for (int j = 0; j < k; j++) { one[j] = 1; zero[j] = 0; }

    /* r = b - A x: the iteration-0 test */
    if ((st = bsr_kops_residual(o, B, X, W)) || (st = bsr_kops_norm2(o, W, rn))) goto done;
    if (!bsr_kstate_update(ks, rn)) goto done;
    for (;;) {
        /* cycle start: V0 = r / ||r|| for the active columns */
        memcpy(was, ks->active, (size_t)k);
        memcpy(cyc, ks->active, (size_t)k);
        for (int j = 0; j < k; j++) {
            steps[j] = 0;
            e[j] = rn[j] > 0 ? 1.0 / rn[j] : 0;
            hs.g[VIDX(&hs, j, 0)] = rn[j];
        }
        if ((st = o->axpby(o, V[0], e, W, zero, cyc))) goto done;
        for (int i = 0; i < m && bsr_kstate_nactive(ks) > 0; i++) {
            /* W = A M^{-1} V_i */
            if ((st = bsr_kops_precond(o, V[i], U)) || (st = o->matvec(o, U, W))) goto done;
            if ((st = bsr_gmres_orth(o, opt->orth, V, i, W, cyc, hc))) goto done;
            for (int j = 0; j < k; j++)
                for (int l = 0; l <= i; l++) hs.H[HIDX(&hs, j, l, i)] = hc[(size_t)l * k + j];
            if ((st = bsr_kops_norm2(o, W, d))) goto done;
            for (int j = 0; j < k; j++) {
                if (!cyc[j]) continue;
                hs.H[HIDX(&hs, j, i + 1, i)] = d[j];
                e[j] = d[j] > 0 ? 1.0 / d[j] : 0; /* d = 0: happy breakdown, the residual below is 0 */
                rn[j] = rotate(&hs, j, i);
                steps[j] = i + 1;
            }
            if ((st = bsr_gmres_step_end(o, ks, V[i + 1], e, W, cyc, rn, cyc))) goto done;
        }
        /* x += M^{-1} (V y) per column, with its own number of steps; the
         * next cycle starts from the true residual */
        for (int j = 0; j < k; j++)
            if (was[j]) backsolve(&hs, j, steps[j]);
        if ((st = bsr_gmres_cycle_end(o, ks, V, hs.y, m + 1, steps, was, B, X, W, U, rn, reopen))) goto done;
        if (!bsr_kstate_nactive(ks)) break;
    }
done:
    if (V)
        for (int l = 0; l <= m; l++)
            if (V[l]) o->vfree(o, V[l]);
    free(V);
    if (W) o->vfree(o, W);
    if (U) o->vfree(o, U);
    free(sc);
    free(mk);
    free(steps);
    free(hc);
    free(hs.H);
    free(hs.cs);
    return st;
}

/* The method on columns scaled so that its inner products stay in range;
 * with option deflate, GMRES-DR (krylov_gmresdr.c). */
bsr_status bsr_krylov_gmres(const bsr_kops *o, const bsr_multivec *B, bsr_multivec *X, bsr_kstate *ks)
{
    return bsr_krylov_scaled(o, B, X, ks, ks->opt->deflate > 0 ? bsr_gmresdr_run : run_gmres);
}
