/* SPDX-License-Identifier: BSD-3-Clause */
/* Private pieces of the stencil module: generator parameter parsing,
 * the structured-grid builder shared by the scalar generators, and the GPU
 * entry points of RB-GS / wavefront SOR (kernels/stencil/stencil_*.cu, or the CPU
 * build's stand-ins, kernels/entry_points.def). */
#ifndef BSR_STENCIL_IMPL_H
#define BSR_STENCIL_IMPL_H

#include "internal.h"

#define STC_PI 3.14159265358979323846

/* ---- "NAME:key=value,..." parameters ------------------------------------- */
#define GEN_MAXARGS 24
typedef struct {
    const char *gen; /* generator name, for messages */
    int n;
    struct { char key[24]; char val[64]; int used; } kv[GEN_MAXARGS];
} gen_args;

/* Split params at ',' or ':' into key=value pairs; a bare value takes the
 * next name of `positional` (NULL-terminated).  Rejects repeated keys. */
bsr_status gen_args_parse(const char *gen, const char *params, const char *const *positional,
                          gen_args *a);
/* Integer / real value of key in [lo, hi], def when absent. */
bsr_status gen_arg_int(gen_args *a, const char *key, int def, int lo, int hi, int *out);
bsr_status gen_arg_real(gen_args *a, const char *key, double def, double lo, double hi, double *out);
/* A table of real parameters: key, default, range, and where the value goes
 * (offsetof into the generator's parameter struct). */
typedef struct { const char *key; double def, lo, hi; size_t at; } gen_real_arg;
/* gen_arg_real for each of the n rows of t, into par. */
bsr_status gen_arg_reals(gen_args *a, const gen_real_arg *t, int n, void *par);
/* The seed of a random generator (key "seed", 0..2^30, default 1). */
bsr_status gen_arg_seed(gen_args *a, uint64_t *seed);
/* Index of key's value in choices (NULL-terminated), def when absent. */
bsr_status gen_arg_choice(gen_args *a, const char *key, const char *const *choices, int def, int *out);
/* BSR_ERR_ARG naming the first key no getter asked for. */
bsr_status gen_args_done(const gen_args *a);

/* Grid options shared by every structured generator: n (points per direction
 * including the boundary), nx/ny/nz overriding n per direction, holes
 * (fraction of cells switched off), seed (of the hole pattern). */
typedef struct { int dim, nx, ny, nz; double holes; int seed; } gen_grid; /* nx..: unknowns */
bsr_status gen_grid_args(gen_args *a, int dim, int defn, gen_grid *g);
/* 1 when cell (i,j,k) of g is switched off (deterministic from seed). */
int gen_grid_hole(const gen_grid *g, int i, int j, int k);

/* ---- structured builder --------------------------------------------------- */
/* Row of unknown (i,j,k): the full 7 coefficients (C,W,E,S,N,B,T; neighbours
 * outside the grid included) and, for PDE-right-hand-side generators, f. */
typedef void (*stc_row_fn)(void *ctx, int i, int j, int k, double a[7], double *f);
/* Exact solution at grid index (i,j,k), -1..nx etc. (the boundary included). */
typedef double (*stc_exact_fn)(void *ctx, int i, int j, int k);
/* Fill S: manufactured != 0 sets f = (full A) x*; then boundary and hole
 * neighbours are folded into f (f -= a*x*), holes get identity rows. */
bsr_status stc_build(bsr_stencil *S, const gen_grid *g, stc_row_fn row, stc_exact_fn ex,
                     void *ctx, int manufactured);
/* A scalar generator's structured form. */
typedef bsr_status (*stc_gen_fn)(const char *params, bsr_stencil *S);
/* bsr_generate adapter: structured form -> BSR problem. */
bsr_status stc_problem(stc_gen_fn fn, const char *params, bsr_precision prec, bsr_problem *P);

/* ---- point relaxation shared by every CPU solver ------------------------- */
/* New value of unknown q (position q in the arrays' layout): Gauss-Seidel
 * value from the neighbours nb[1..ncoef-1] (positions, -1 = none), relaxed by
 * omega.  The GPU kernels repeat exactly this operation order with
 * non-contracted intrinsics, so every backend rounds identically. */
static inline double stc_relax(const double *coef, int64_t n, int ncoef, double f, const double *u,
                               int64_t q, const int64_t nb[7], double omega)
{
    double s = 0;
    for (int d = 1; d < ncoef; d++)
        if (nb[d] >= 0) s += coef[d * n + q] * u[nb[d]];
    double gs = (f - s) / coef[q];
    return u[q] + omega * (gs - u[q]);
}
/* Validate S and u for the point solvers (fn names the caller). */
bsr_status stc_check(const char *fn, const bsr_stencil *S, const double *u, double omega);

/* x = A^{-1} rhs by UMFPACK (stencil_direct.c; the tests' exact discrete solution). */
bsr_status stc_direct_solve(const bsr_matrix *A, const double *rhs, double *x);

/* ---- GPU entry points (kernels/stencil/stencil_*.cu or CPU stand-ins) ---- */
bsr_status bsr_rbgs_gpu(const bsr_stencil *S, double omega, double tol, int maxit, int check,
                        double *u, bsr_iter_info *info);
bsr_status bsr_sor_gpu(bsr_sor_layout layout, const bsr_stencil *S, double omega, int symmetric,
                       double tol, int maxit, double *u, bsr_iter_info *info);

/* ---- hyperplane ("diagonal transformation") layout (stencil_sor.c) ------- */
/* Plane d = i+j+k holds (k, j) pairs, k ascending then j ascending.
 * pstart[d] = position of the plane's first point, rstart[d*nz + k] = offset
 * of row k inside plane d; perm[pos] = natural index of the point at pos. */
typedef struct {
    int nx, ny, nz, nd;  /* nd = nx+ny+nz-2 planes */
    int64_t *pstart;     /* [nd+1] */
    int *rstart;         /* [nd*nz] */
    int64_t *perm;       /* [n] */
} stc_hyper;
bsr_status stc_hyper_build(const bsr_stencil *S, stc_hyper *H);
void stc_hyper_free(stc_hyper *H);
/* Range of j (jlo..jhi, empty when jlo > jhi) of row k in plane d. */
static inline void stc_hyper_jrange(int nx, int ny, int d, int k, int *jlo, int *jhi)
{
    int lo = d - k - (nx - 1), hi = d - k;
    *jlo = lo > 0 ? lo : 0;
    *jhi = hi < ny - 1 ? hi : ny - 1;
}
/* Range of k of plane d. */
static inline void stc_hyper_krange(int nx, int ny, int nz, int d, int *klo, int *khi)
{
    int lo = d - (nx - 1) - (ny - 1), hi = d;
    *klo = lo > 0 ? lo : 0;
    *khi = hi < nz - 1 ? hi : nz - 1;
}

#endif
