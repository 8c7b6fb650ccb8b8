/* SPDX-License-Identifier: BSD-3-Clause */
/* SOR / SSOR on a structured 5-/7-point problem in lexicographic update
 * order: the sequential reference loops, and the wavefront (hyperplane
 * i+j+k = d) OpenMP versions in natural and hyperplane storage.  A point of
 * plane d depends on W, S, B (plane d-1, already new in a forward sweep) and
 * E, N, T (plane d+1, still old): exactly the lexicographic dependencies, so
 * all versions produce the same bits. */
#include "stencil_impl.h"
#include <math.h>
#include <omp.h>
#include <string.h>

/* Free a hyperplane layout. */
void stc_hyper_free(stc_hyper *H)
{
    if (!H) return;
    free(H->pstart); free(H->rstart); free(H->perm);
    memset(H, 0, sizeof *H);
}

/* H = the hyperplane (i+j+k = d) layout of S's grid: plane starts, row starts, permutation. */
bsr_status stc_hyper_build(const bsr_stencil *S, stc_hyper *H)
{
    memset(H, 0, sizeof *H);
    const int nx = S->nx, ny = S->ny, nz = S->nz, nd = nx + ny + nz - 2;
    H->nx = nx; H->ny = ny; H->nz = nz; H->nd = nd;
    H->pstart = bsr_malloc((size_t)(nd + 1) * sizeof(int64_t), "hyperplane starts");
    H->rstart = bsr_malloc((size_t)nd * nz * sizeof(int), "hyperplane row starts");
    H->perm = bsr_malloc((size_t)S->n * sizeof(int64_t), "hyperplane permutation");
    if (!H->pstart || !H->rstart || !H->perm) { stc_hyper_free(H); return BSR_ERR_NOMEM; }
    int64_t pos = 0;
    for (int d = 0; d < nd; d++) {
        H->pstart[d] = pos;
        for (int k = 0; k < nz; k++) {
            int jlo, jhi;
            H->rstart[(int64_t)d * nz + k] = (int)(pos - H->pstart[d]);
            if (k > d) continue;
            stc_hyper_jrange(nx, ny, d, k, &jlo, &jhi);
            for (int j = jlo; j <= jhi; j++) H->perm[pos++] = ((int64_t)k * ny + j) * nx + (d - j - k);
        }
    }
    H->pstart[nd] = pos;
    if (pos != S->n) { stc_hyper_free(H); return bsr_error(BSR_ERR_INTERNAL, "stc_hyper_build: %lld of %lld points", (long long)pos, (long long)S->n); }
    return BSR_OK;
}

/* Position of (i = d-j-k, j, k) in hyperplane storage. */
static inline int64_t hpos(const stc_hyper *H, int d, int j, int k)
{
    int jlo, jhi;
    stc_hyper_jrange(H->nx, H->ny, d, k, &jlo, &jhi);
    return H->pstart[d] + H->rstart[(int64_t)d * H->nz + k] + (j - jlo);
}

/* Sequential lexicographic sweep (dir = +1 forward, -1 backward). */
static void sweep_seq(const bsr_stencil *S, double omega, int dir, double *u, double *dm, double *um)
{
    const int nx = S->nx, ny = S->ny, nz = S->nz;
    const int64_t sy = nx, sz = (int64_t)nx * ny;
    for (int kk = 0; kk < nz; kk++)
        for (int jj = 0; jj < ny; jj++)
            for (int ii = 0; ii < nx; ii++) {
                int i = dir > 0 ? ii : nx - 1 - ii, j = dir > 0 ? jj : ny - 1 - jj, k = dir > 0 ? kk : nz - 1 - kk;
                int64_t p = k * sz + j * sy + i;
                int64_t nb[7] = {p, i > 0 ? p - 1 : -1, i < nx - 1 ? p + 1 : -1, j > 0 ? p - sy : -1,
                                 j < ny - 1 ? p + sy : -1, k > 0 ? p - sz : -1, k < nz - 1 ? p + sz : -1};
                double v = stc_relax(S->coef, S->n, S->ncoef, S->f[p], u, p, nb, omega);
                *dm = fmax(*dm, fabs(v - u[p]));
                *um = fmax(*um, fabs(v));
                u[p] = v;
            }
}

/* Wavefront sweep by hyperplanes, OpenMP inside each plane.  H == NULL:
 * natural storage (coef, f, u as in S); else hyperplane storage (coef, f, u
 * permuted by H->perm). */
static void sweep_wave(const bsr_stencil *S, const stc_hyper *H, const double *coef, const double *f,
                       double omega, int dir, double *u, double *dm, double *um)
{
    const int nx = S->nx, ny = S->ny, nz = S->nz, nd = nx + ny + nz - 2;
    const int64_t sy = nx, sz = (int64_t)nx * ny;
    double dmx = 0, umx = 0;
    #pragma omp parallel reduction(max:dmx, umx) if (bsr_par_worth(S->n)) num_threads(bsr_team_size())
    for (int dd = 0; dd < nd; dd++) {
        int d = dir > 0 ? dd : nd - 1 - dd, klo, khi;
        stc_hyper_krange(nx, ny, nz, d, &klo, &khi);
        #pragma omp for schedule(static)
        for (int k = klo; k <= khi; k++) {
            int jlo, jhi;
            stc_hyper_jrange(nx, ny, d, k, &jlo, &jhi);
            for (int j = jlo; j <= jhi; j++) {
                int i = d - j - k;
                int64_t p, nb[7];
                if (!H) {
                    p = k * sz + j * sy + i;
                    int64_t t[7] = {p, i > 0 ? p - 1 : -1, i < nx - 1 ? p + 1 : -1, j > 0 ? p - sy : -1,
                                    j < ny - 1 ? p + sy : -1, k > 0 ? p - sz : -1, k < nz - 1 ? p + sz : -1};
                    memcpy(nb, t, sizeof nb);
                } else {
                    p = hpos(H, d, j, k);
                    nb[0] = p;
                    nb[1] = i > 0 ? hpos(H, d - 1, j, k) : -1;
                    nb[2] = i < nx - 1 ? hpos(H, d + 1, j, k) : -1;
                    nb[3] = j > 0 ? hpos(H, d - 1, j - 1, k) : -1;
                    nb[4] = j < ny - 1 ? hpos(H, d + 1, j + 1, k) : -1;
                    nb[5] = k > 0 ? hpos(H, d - 1, j, k - 1) : -1;
                    nb[6] = k < nz - 1 ? hpos(H, d + 1, j, k + 1) : -1;
                }
                double v = stc_relax(coef, S->n, S->ncoef, f[p], u, p, nb, omega);
                dmx = fmax(dmx, fabs(v - u[p]));
                umx = fmax(umx, fabs(v));
                u[p] = v;
            }
        }
    }
    *dm = fmax(*dm, dmx);
    *um = fmax(*um, umx);
}

/* Lexicographic (symmetric) SOR sweeps on a 3D 7-point system, natural or hyperplane layout. */
bsr_status bsr_sor(bsr_stencil_backend be, bsr_sor_layout layout, const bsr_stencil *S,
                   double omega, int symmetric, double tol, int maxit, double *u,
                   bsr_iter_info *info)
{
    BSR_TRY(stc_check("bsr_sor", S, u, omega));
    BSR_CHECK_ARG(maxit >= 1, "bsr_sor: maxit = %d must be >= 1", maxit);
    BSR_CHECK_ARG(layout == BSR_SOR_NATURAL || layout == BSR_SOR_HYPERPLANE, "bsr_sor: unknown layout %d", (int)layout);
    bsr_iter_info dummy, *I = info ? info : &dummy;
    *I = (bsr_iter_info){0};
    if (be == BSR_STENCIL_GPU) return bsr_sor_gpu(layout, S, omega, symmetric, tol, maxit, u, I);
    BSR_CHECK_ARG(be == BSR_STENCIL_SEQ || be == BSR_STENCIL_OMP, "bsr_sor: unknown backend %d", (int)be);
    const int64_t n = S->n;
    stc_hyper H;
    double *coef = S->coef, *f = S->f, *w = u;
    int hyper = be == BSR_STENCIL_OMP && layout == BSR_SOR_HYPERPLANE;
    double t0 = bsr_now();
    if (hyper) { /* permute into hyperplane storage (counted as setup) */
        BSR_TRY(stc_hyper_build(S, &H));
        coef = bsr_malloc((size_t)n * S->ncoef * sizeof(double), "hyperplane coefficients");
        f = bsr_malloc((size_t)n * sizeof(double), "hyperplane rhs");
        w = bsr_malloc((size_t)n * sizeof(double), "hyperplane solution");
        if (!coef || !f || !w) { free(coef); free(f); free(w); stc_hyper_free(&H); return BSR_ERR_NOMEM; }
        #pragma omp parallel for if (bsr_par_worth(n)) num_threads(bsr_team_size())
        for (int64_t q = 0; q < n; q++) {
            int64_t p = H.perm[q];
            for (int d = 0; d < S->ncoef; d++) coef[d * n + q] = S->coef[d * n + p];
            f[q] = S->f[p];
            w[q] = u[p];
        }
    }
    double t1 = bsr_now();
    for (int it = 1; it <= maxit; it++) {
        double dm = 0, um = 0;
        for (int half = 0; half < 1 + (symmetric != 0); half++) {
            int dir = half ? -1 : 1;
            if (be == BSR_STENCIL_SEQ) sweep_seq(S, omega, dir, w, &dm, &um);
            else sweep_wave(S, hyper ? &H : NULL, coef, f, omega, dir, w, &dm, &um);
        }
        I->iters = it;
        I->incr = dm == 0 ? 0 : um > 0 ? dm / um : INFINITY;
        if (tol > 0 && I->incr < tol) { I->converged = 1; break; }
    }
    double t2 = bsr_now();
    if (hyper) {
        #pragma omp parallel for if (bsr_par_worth(n)) num_threads(bsr_team_size())
        for (int64_t q = 0; q < n; q++) u[H.perm[q]] = w[q];
        free(coef); free(f); free(w);
        stc_hyper_free(&H);
    }
    I->seconds = t2 - t1;
    I->xfer_seconds = (t1 - t0) + (bsr_now() - t2);
    if (tol > 0 && !I->converged)
        return bsr_error(BSR_ERR_NOCONV, "bsr_sor: relative increment %.3e > tol %.3e after %d sweeps", I->incr, tol,
                         I->iters);
    return BSR_OK;
}
