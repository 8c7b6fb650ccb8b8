/* SPDX-License-Identifier: BSD-3-Clause */
/* bsrsolve out-of-core pyramid solver for explicit schemes.
 *
 * Problems on a structured grid of n[0] x n[1] x n[2] points (n[0] fastest,
 * point (i,j,k) at i + n[0]*(j + n[1]*k)), Dirichlet boundary = the outer
 * layer of points, which is never updated:
 *   heat:   u' = u + r * (sum of the 2*dim neighbours - 2*dim*u),  r = a^2 dt / h^2
 *   Jacobi: u' = (sum of the 2*dim neighbours + g) / (2*dim),      g = h^2 f
 *           (steady heat/Poisson -lap u = f), stopping when
 *           ||u' - u||_inf < eps, checked every `check` sweeps.
 * Every backend and algorithm evaluates the same expression per point in the
 * same order, rounded operation by operation (no FMA contraction), so
 * in-core, trivial and pyramid runs agree bit for bit, on the CPU and GPU.
 *
 * Algorithms: in-core (grid on the device), in-core with temporal blocking,
 * trivial out-of-core (each step every subdomain in/step/out) and pyramid
 * (each pass every subdomain with a halo of `height` points per side in,
 * `height` steps on a shrinking region, interior out).  The grid lives in
 * (pinned) host memory; the device holds `nslots` subdomains in flight
 * within a device-memory budget.  Included by bsrsolve.h. */
#ifndef BSRSOLVE_PYRAMID_H
#define BSRSOLVE_PYRAMID_H

#include "core.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { BSR_PYR_HEAT = 0, BSR_PYR_JACOBI = 1 } bsr_pyr_problem;

typedef enum {
    BSR_PYR_INCORE = 0,      /* whole grid on the device, one launch per step */
    BSR_PYR_INCORE_BLOCKED,  /* grid on the device, pyramid temporal blocking (no PCIe) */
    BSR_PYR_TRIVIAL,         /* out-of-core, one step per transfer (height 1) */
    BSR_PYR_PYRAMID          /* out-of-core, `height` steps per transfer */
} bsr_pyr_algo;

typedef enum {
    BSR_PYR_STRIPS = 0,      /* split the slowest axis: rows (2D), planes (3D), segments (1D) */
    BSR_PYR_TILES = 1        /* split the two slowest axes: tiles (2D), pencils (3D) */
} bsr_pyr_decomp;

/* ---- grid: host field (+ Jacobi right-hand side), optionally pinned ------ */
typedef struct bsr_grid bsr_grid;

/* Grid of n[0] x .. x n[dim-1] points (each >= 3), values zero.  pinned:
 * page-locked host memory (needs CUDA; falls back to malloc without it). */
bsr_status bsr_grid_create(bsr_grid **G, int dim, const int64_t *n, bsr_precision prec,
                           int pinned);
void bsr_grid_destroy(bsr_grid *G);
int bsr_grid_dim(const bsr_grid *G);
int64_t bsr_grid_size(const bsr_grid *G, int axis); /* points along axis (1 beyond dim) */
int64_t bsr_grid_points(const bsr_grid *G);
bsr_precision bsr_grid_precision(const bsr_grid *G);
/* The current field (after a run: the result), precision of the grid. */
void *bsr_grid_data(bsr_grid *G);
/* Jacobi right-hand side g = h^2 f (allocated, zero, on first call; NULL on failure). */
void *bsr_grid_rhs(bsr_grid *G);
/* Deterministic smooth-plus-random initial field (boundary included), seed-driven;
 * with_rhs: also fill the right-hand side. */
bsr_status bsr_grid_fill_test(bsr_grid *G, uint64_t seed, int with_rhs);
/* Copy the field of B into A (same shape and precision). */
bsr_status bsr_grid_copy(bsr_grid *A, const bsr_grid *B);
/* Max |A - B| over the fields, and the number of points that differ bitwise. */
bsr_status bsr_grid_compare(const bsr_grid *A, const bsr_grid *B, double *maxdiff,
                            int64_t *ndiff);

/* ---- run options and results -------------------------------------------- */
typedef struct {
    bsr_pyr_problem problem;
    double r;            /* heat: a^2 dt / h^2, stable for r <= 1/(2 dim) */
    int steps;           /* heat: time steps K; Jacobi: maximum sweeps */
    int check;           /* Jacobi: test convergence every `check` sweeps (>= 1) */
    double eps;          /* Jacobi: stop when ||u' - u||_inf < eps */
    bsr_pyr_algo algo;
    bsr_pyr_decomp decomp;
    int height;          /* pyramid height n (steps per pass); 0 = auto (model);
                            Jacobi: forced to `check` so each pass ends on a check */
    int split[3];        /* subdomains per axis; all 0 = fewest that fit the budget */
    size_t device_mem;   /* device budget in bytes; 0 = free device memory */
    int nslots;          /* subdomains in flight on the device (0 = 3; 1 = no overlap) */
} bsr_pyr_opts;

/* Defaults: heat, r = 0.9/(2 dim) is left to the caller (r = 0.2 here), 16 steps,
 * pyramid, strips, auto height, 3 slots. */
void bsr_pyr_opts_default(bsr_pyr_opts *o);

typedef struct {
    bsr_pyr_decomp decomp;
    int height;          /* n used */
    int passes;          /* passes done */
    int split[3];        /* subdomains per axis */
    int nsub;            /* subdomains */
    int iters;           /* steps / sweeps done */
    double diff;         /* Jacobi: last ||u' - u||_inf */
    double seconds;      /* measured wall time of the run (no set-up) */
    double predicted;    /* model's prediction (GPU runs; 0 when not modelled) */
    double h2d_bytes, d2h_bytes;   /* host<->device traffic */
    double updates;      /* useful point updates (interior points x steps) */
    double computed;     /* point updates computed, recomputed halos included */
    size_t device_bytes; /* device memory allocated by the run */
} bsr_pyr_info;

/* Device constants of the duration model (seconds).  tau_c is the transfer
 * cost per value (h2d, d2h separately), tau_a the compute cost per point
 * update, t_launch the fixed cost of one kernel launch. */
typedef struct {
    double tau_h2d, tau_d2h, tau_a, t_launch;
    double d2d_bw;       /* device copy bandwidth measured at calibration (bytes/s) */
    int dim;
    bsr_precision prec;
    double duplex;       /* slowdown of each direction while h2d and d2h overlap (0 = 1) */
    double tau_h2d_2d, tau_d2h_2d; /* per value for strided boxes (rows narrower
                                      than the grid, e.g. tiles); 0 = tau_h2d/d2h */
} bsr_pyr_model;

/* CPU run: algo INCORE = OpenMP reference; TRIVIAL/PYRAMID/INCORE_BLOCKED
 * execute the same subdomain plan as the GPU with host buffers (tests the
 * decomposition in CI).  device_mem is the budget the plan honours. */
bsr_status bsr_pyr_run_cpu(bsr_grid *G, const bsr_pyr_opts *o, bsr_pyr_info *info);
/* GPU run (model M used for height 0 and for `predicted`; NULL = calibrate). */
bsr_status bsr_pyr_run_gpu(bsr_grid *G, const bsr_pyr_opts *o, const bsr_pyr_model *M,
                           bsr_pyr_info *info);
/* Measure tau_h2d, tau_d2h, tau_a, t_launch on the device for grids of this
 * dimension and precision, using at most `budget` device bytes (0 = free). */
bsr_status bsr_pyr_calibrate(int dim, bsr_precision prec, size_t budget, bsr_pyr_model *M);

/* The original method's duration formula for 1D decomposition of an Ni x Nj grid
 * into strips of R rows (halo included), height n, K steps:
 * tau = K (Ni-1) (R-n)/(R-2n) (2 tau_c / n + tau_a), per value of a row of Nj
 * (the grid's sizes are not named I and J: <complex.h> defines I). */
double bsr_pyr_model_strips(double K, double Ni, double Nj, double R, double n, double tau_c,
                            double tau_a);
/* Its 2D-decomposition analogue for tiles of R x Q points (halo included). */
double bsr_pyr_model_tiles(double K, double Ni, double Nj, double R, double Q, double n,
                           double tau_c, double tau_a);
/* Predicted seconds of a run (plan built from G's shape and o) under model M,
 * overlapping transfers and kernels of different subdomains. */
bsr_status bsr_pyr_predict(const bsr_grid *G, const bsr_pyr_opts *o, const bsr_pyr_model *M,
                           double *seconds);
/* Choose split and height (1..max_height) minimising the predicted time
 * within the budget o->device_mem, and the decomposition too when
 * any_decomp (else o->decomp is kept); writes them into o. */
bsr_status bsr_pyr_choose(const bsr_grid *G, bsr_pyr_opts *o, const bsr_pyr_model *M,
                          int max_height, int any_decomp, double *seconds);

/* ---- long-vector in-core 2D variant (cuBLAS) ----------------------------- */
/* Heat steps on an N x N grid (double) as whole-vector operations: v = u,
 * v *= (1 - 4r), four shifted axpys v += r * shift(u), boundary restored.
 * u on the host, in/out.  seconds: device time of the steps. */
bsr_status bsr_pyr_longvec_gpu(double *u, int64_t N, double r, int steps, double *seconds);
/* The same operations on the CPU (reference). */
bsr_status bsr_pyr_longvec_cpu(double *u, int64_t N, double r, int steps);
/* Long-vector model: per step, ops launches of t_launch plus t_wave per
 * ceil(m / resident) waves of each op, m = N*N. */
typedef struct { double t_launch, t_wave; int64_t resident; int ops; } bsr_lv_model;
double bsr_lv_predict(const bsr_lv_model *M, int64_t N, int steps);
/* Calibrate on the device (resident = SMs x max threads per SM). */
bsr_status bsr_lv_calibrate(bsr_lv_model *M);

#ifdef __cplusplus
}
#endif
#endif
