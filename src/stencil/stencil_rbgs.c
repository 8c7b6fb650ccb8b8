/* SPDX-License-Identifier: BSD-3-Clause */
/* Red-black Gauss-Seidel on a structured 5-/7-point problem: sequential and
 * OpenMP CPU versions, dispatch to the GPU one (kernels/stencil/stencil_rbgs.cu).
 * Red points have (i+j+k) even; each colour depends only on the other, so a
 * half-sweep is fully parallel and every backend gives the same bits. */
#include "stencil_impl.h"
#include <math.h>
#include <omp.h>

/* Validate S, u and omega for the point solvers; BSR_ERR_ARG naming fn otherwise. */
bsr_status stc_check(const char *fn, const bsr_stencil *S, const double *u, double omega)
{
    BSR_CHECK_ARG(S && u, "%s: NULL argument", fn);
    BSR_CHECK_ARG(S->coef && S->f && S->nx > 0 && S->ny > 0 && S->nz > 0 &&
                  S->n == (int64_t)S->nx * S->ny * S->nz && (S->dim == 2 || S->dim == 3) &&
                  S->ncoef == (S->dim == 3 ? 7 : 5) && (S->dim == 3 || S->nz == 1),
                  "%s: malformed bsr_stencil (%d x %d x %d, dim %d, %d coefficients)", fn, S->nx, S->ny,
                  S->nz, S->dim, S->ncoef);
    BSR_CHECK_ARG(omega > 0 && omega < 2, "%s: relaxation factor omega = %g outside (0, 2)", fn, omega);
    int64_t bad = -1;
    #pragma omp parallel for reduction(max:bad) if (bsr_par_worth(S->n)) num_threads(bsr_team_size())
    for (int64_t p = 0; p < S->n; p++)
        if (S->coef[p] == 0 || !isfinite(S->coef[p]) || !isfinite(S->f[p]) || !isfinite(u[p])) bad = p > bad ? p : bad;
    if (bad >= 0) {
        int64_t i = bad % S->nx, j = bad / S->nx % S->ny, k = bad / S->nx / S->ny;
        if (S->coef[bad] == 0) return bsr_error(BSR_ERR_SINGULAR, "%s: zero diagonal at unknown (%lld,%lld,%lld)", fn,
                                                (long long)i, (long long)j, (long long)k);
        return bsr_error(BSR_ERR_VALUE, "%s: NaN/Inf in diagonal, f or u at unknown (%lld,%lld,%lld)", fn,
                         (long long)i, (long long)j, (long long)k);
    }
    return BSR_OK;
}

/* One half-sweep over colour c; *dmax, *umax = max |du|, max |u_new| over it. */
static void half_sweep(const bsr_stencil *S, double omega, int c, double *u, int par, double *dmax,
                       double *umax)
{
    const int nx = S->nx, ny = S->ny, nz = S->nz, nc = S->ncoef;
    const int64_t n = S->n, sy = nx, sz = (int64_t)nx * ny;
    double dm = 0, um = 0;
    #pragma omp parallel for collapse(2) reduction(max:dm, um) if (par && bsr_par_worth(n)) num_threads(bsr_team_size())
    for (int k = 0; k < nz; k++)
        for (int j = 0; j < ny; j++)
            for (int i = (j + k + c) & 1; i < nx; i += 2) {
                int64_t p = k * sz + j * sy + i;
                int64_t nb[7] = {p, i > 0 ? p - 1 : -1, i < nx - 1 ? p + 1 : -1, j > 0 ? p - sy : -1,
                                 j < ny - 1 ? p + sy : -1, k > 0 ? p - sz : -1, k < nz - 1 ? p + sz : -1};
                double v = stc_relax(S->coef, n, nc, S->f[p], u, p, nb, omega);
                dm = fmax(dm, fabs(v - u[p]));
                um = fmax(um, fabs(v));
                u[p] = v;
            }
    *dmax = fmax(*dmax, dm);
    *umax = fmax(*umax, um);
}

/* max |du| / max |u| with 0/0 = 0. */
static double rel_incr(double dmax, double umax)
{
    return dmax == 0 ? 0 : umax > 0 ? dmax / umax : INFINITY;
}

/* Red-black Gauss-Seidel (SOR with omega) on backend be until max|du|/max|u| < tol. */
bsr_status bsr_rbgs(bsr_stencil_backend be, const bsr_stencil *S, double omega, double tol,
                    int maxit, int check, double *u, bsr_iter_info *info)
{
    BSR_TRY(stc_check("bsr_rbgs", S, u, omega));
    BSR_CHECK_ARG(tol >= 0 && maxit >= 1 && check >= 1, "bsr_rbgs: need tol >= 0, maxit >= 1, check >= 1 (got %g, %d, %d)",
                  tol, maxit, check);
    bsr_iter_info dummy, *I = info ? info : &dummy;
    *I = (bsr_iter_info){0};
    if (be == BSR_STENCIL_GPU) return bsr_rbgs_gpu(S, omega, tol, maxit, check, u, I);
    BSR_CHECK_ARG(be == BSR_STENCIL_SEQ || be == BSR_STENCIL_OMP, "bsr_rbgs: unknown backend %d", (int)be);
    double t0 = bsr_now();
    for (int it = 1; it <= maxit; it++) {
        double dm = 0, um = 0;
        half_sweep(S, omega, 0, u, be == BSR_STENCIL_OMP, &dm, &um);
        half_sweep(S, omega, 1, u, be == BSR_STENCIL_OMP, &dm, &um);
        I->iters = it;
        /* |u| is taken over both half-sweeps: each point is updated once per iteration */
        if (it % check == 0 || it == maxit) {
            I->incr = rel_incr(dm, um);
            if (I->incr < tol) { I->converged = 1; break; }
        }
    }
    I->seconds = bsr_now() - t0;
    if (!I->converged)
        return bsr_error(BSR_ERR_NOCONV, "bsr_rbgs: relative increment %.3e > tol %.3e after %d iterations",
                         I->incr, tol, I->iters);
    return BSR_OK;
}
