/* SPDX-License-Identifier: BSD-3-Clause */
/* bsrsolve stencil generators, red-black Gauss-Seidel, wavefront SOR.
 * Included by bsrsolve.h.
 *
 * The generators (bsr_generate "poisson2d:...", see bsr_generate_usage) build a
 * structured-grid problem; the scalar ones (poisson2d/3d, heat2d/3d,
 * elliptic2d, convdiff2d/3d) are also available in structured form
 * (bsr_stencil) for the point solvers below. */
#ifndef BSRSOLVE_STENCIL_H
#define BSRSOLVE_STENCIL_H

#include "core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Stencil directions: coef[d*n + p] is A(p, neighbour d of p). */
enum { BSR_STC_C = 0, BSR_STC_W, BSR_STC_E, BSR_STC_S, BSR_STC_N, BSR_STC_B, BSR_STC_T };

/* A scalar problem A u = f on an nx x ny x nz array of unknowns (nz = 1 in
 * 2D), natural order p = (k*ny + j)*nx + i, 5-point (2D) or 7-point (3D)
 * stencil.  Row p reads
 *   c u_p + w u_{p-1} + e u_{p+1} + s u_{p-nx} + n u_{p+nx} + b u_{p-nx*ny} + t u_{p+nx*ny} = f_p
 * with the coefficient of a neighbour outside the grid (Dirichlet boundary,
 * folded into f) or in a hole equal to 0.  Hole cells keep an identity row
 * (c = 1, f = xexact), so the structured solution equals xexact there and the
 * active cells solve the same system as the BSR form (which drops holes). */
typedef struct {
    int dim;              /* 2 or 3 */
    int nx, ny, nz;       /* unknowns per direction */
    int ncoef;            /* 5 (2D) or 7 (3D) */
    int64_t n;            /* nx*ny*nz */
    double *coef;         /* [ncoef*n] */
    double *f;            /* [n] */
    double *xexact;       /* [n] (see the generator's usage line for what it is) */
    unsigned char *hole;  /* [n], 1 = switched off; NULL when there are none */
    int64_t nholes;
    char name[128];
} bsr_stencil;

/* Build the structured form of a scalar generator spec (poisson2d, poisson3d,
 * heat2d, heat3d, elliptic2d, convdiff2d, convdiff3d). */
bsr_status bsr_stencil_generate(const char *spec, bsr_stencil *S);
void bsr_stencil_free(bsr_stencil *S);
/* The BSR (b = 1) problem of S's active cells: A, rhs = f, xexact. */
bsr_status bsr_stencil_to_problem(const bsr_stencil *S, bsr_precision prec, bsr_problem *P);
/* max_p |(A u - f)_p| over the structured system (holes included); NaN when
 * S or u is NULL. */
double bsr_stencil_resid_max(const bsr_stencil *S, const double *u);

/* Where a point solver runs.  SEQ is the one-core reference. */
typedef enum { BSR_STENCIL_SEQ = 0, BSR_STENCIL_OMP, BSR_STENCIL_GPU } bsr_stencil_backend;

/* What an iteration did. */
typedef struct {
    int iters;            /* iterations (RB-GS: red+black sweeps; SOR: sweeps) */
    int converged;        /* relative increment reached tol */
    double incr;          /* last max|u_new - u_old| / max|u_new| */
    double seconds;       /* time of the iteration loop */
    double xfer_seconds;  /* GPU: host<->device copies and setup (0 on the CPU) */
} bsr_iter_info;

/* Red-black Gauss-Seidel (over-relaxed by omega, 1 = plain GS) on S from the
 * initial guess u[n], until max|du|/max|u| < tol after a full red+black
 * iteration, checked every `check` iterations (>= 1), or maxit iterations
 * (then BSR_ERR_NOCONV with u and info filled).  Red = (i+j+k) even.  SEQ,
 * OMP and GPU perform the same arithmetic in the same order per point, so
 * their results agree to the last bit (GPU: no FMA contraction). */
bsr_status bsr_rbgs(bsr_stencil_backend be, const bsr_stencil *S, double omega, double tol,
                    int maxit, int check, double *u, bsr_iter_info *info);

/* Storage order used by the wavefront SOR. */
typedef enum {
    BSR_SOR_NATURAL = 0,   /* u[(k*ny + j)*nx + i] */
    BSR_SOR_HYPERPLANE     /* hyperplane i+j+k = d contiguous, (k, j) inside ("diagonal transformation") */
} bsr_sor_layout;

/* SOR (symmetric = 0) or SSOR (forward then backward sweep) with the update
 * order of the lexicographic sweep.  SEQ: the plain lexicographic loops
 * (layout ignored, the reference).  OMP and GPU: hyperplanes i+j+k = const in
 * sequence, points of a hyperplane in parallel, in the given layout; results
 * equal SEQ to the last bit.  Stops after maxit sweeps or when the relative
 * increment of a (symmetric) sweep is < tol (tol <= 0: exactly maxit). */
bsr_status bsr_sor(bsr_stencil_backend be, bsr_sor_layout layout, const bsr_stencil *S,
                   double omega, int symmetric, double tol, int maxit, double *u,
                   bsr_iter_info *info);

/* Measured device-to-device copy bandwidth in GB/s (read+write bytes) on a
 * buffer of `bytes` (the benchmarks' anchor); BSR_ERR_NODEVICE without CUDA. */
bsr_status bsr_stencil_gpu_d2d_gbs(size_t bytes, double *gbs);

#ifdef __cplusplus
}
#endif
#endif
