/* SPDX-License-Identifier: BSD-3-Clause */
/* Private pieces of the pyramid solver shared by its host files and kernels/. */
#ifndef BSR_PYRAMID_IMPL_H
#define BSR_PYRAMID_IMPL_H

#include "internal.h"

#ifdef __cplusplus
extern "C" {
#endif

struct bsr_grid {
    int dim;
    int64_t n[3];          /* points per axis, 1 beyond dim */
    bsr_precision prec;
    int pinned;            /* page-locked memory was asked for */
    int pin[3];            /* data[0], data[1], rhs actually page-locked */
    void *data[2];         /* field and its out-of-core ping-pong partner (lazy) */
    int cur;               /* which of data[] holds the current field */
    void *rhs;             /* Jacobi right-hand side (lazy) */
};

/* Half-open box [lo, hi) per axis; axes beyond dim are [0, 1). */
typedef struct { int64_t lo[3], hi[3]; } pyr_box;

/* A subdomain plan: output boxes partitioning the grid on a regular split,
 * pass heights, neighbour lists and the device footprint. */
typedef struct {
    int dim;
    int64_t n[3];
    bsr_pyr_problem problem;
    int split[3];          /* subdomains per axis */
    int64_t *cut[3];       /* cut[a][0..split[a]]: output boundaries along axis a */
    int nsub;
    int height;            /* halo / steps of a full pass */
    int npass;
    int *pass_h;           /* [npass] steps of each pass (last may be shorter) */
    int *nbr_ptr, *nbr;    /* subdomains whose output meets j's input (CSR, j itself included) */
    int bufs;              /* device buffers per slot: 2 (heat) or 3 (Jacobi) */
    int nslots;
    size_t vsize;          /* bytes per value */
    int64_t max_in_vol;    /* largest input box (full-height halo) */
    size_t slot_bytes;     /* bufs * max_in_vol * vsize */
} pyr_plan;

int64_t pyr_box_vol(const pyr_box *b);
/* Output box of subdomain j. */
void pyr_out_box(const pyr_plan *P, int j, pyr_box *b);
/* Input box of subdomain j for a pass of height h (output + h per side, clipped). */
void pyr_in_box(const pyr_plan *P, int j, int h, pyr_box *b);
/* Region updated at step t (1..h) of a pass of height h over input box in:
 * shrinks by t at every cut edge, never touches the Dirichlet layer.
 * Returns 0 when empty. */
int pyr_step_region(const pyr_plan *P, const pyr_box *in, int t, pyr_box *reg);

/* Build the plan for grid shape/opts: heights, split (from o->split or the
 * budget), neighbours.  budget = device bytes available to the slots. */
bsr_status pyr_plan_build(pyr_plan *P, int dim, const int64_t *n, bsr_precision prec,
                          const bsr_pyr_opts *o, int height, size_t budget);
void pyr_plan_free(pyr_plan *P);
/* Heights per pass for K steps and height h (Jacobi: h = check). */
int pyr_pass_count(int K, int h);

/* Transfer/compute volumes of a plan, summed over passes. */
typedef struct { double in, out, comp, launches, copies; } pyr_volume;
void pyr_plan_volume(const pyr_plan *P, pyr_volume *v);
/* Pipelined prediction of a plan: 3 stages (h2d, kernels, d2h) on nslots
 * stream slots with inter-pass neighbour dependencies. */
double pyr_plan_predict(const pyr_plan *P, const bsr_pyr_model *M, int host_resident);

/* One step on a box buffer of extents ext (local coordinates), region reg
 * (local): dst = step(src).  Jacobi: g is the rhs box and *diff receives
 * max |dst - src| over reg (when diff != NULL). */
void pyr_step_cpu(bsr_precision p, bsr_pyr_problem pb, int dim, const int64_t *ext,
                  const pyr_box *reg, void *dst, const void *src, const void *g, double r,
                  double *diff);
/* Copy box b of a field with extents fext into / out of a packed buffer. */
void pyr_box_get(size_t vsize, const int64_t *fext, const void *field, const pyr_box *b,
                 void *buf);
void pyr_box_put(size_t vsize, const int64_t *fext, void *field, const pyr_box *b,
                 const int64_t *bext, const int64_t *boff, const void *buf);

/* Validate a grid + options pair (shared by CPU and GPU entry points). */
bsr_status pyr_check(const char *fn, const bsr_grid *G, const bsr_pyr_opts *o);
/* Partner buffer data[1-cur], allocated on demand. */
void *pyr_grid_alt(bsr_grid *G);

/* Host allocation hooks: pinned via CUDA when *pinned and possible
 * (kernels/pyramid/pyramid_gpu.cu), else plain malloc (kernels/entry_points.def);
 * *pinned says which it got. */
void *bsr_pyr_host_alloc(size_t bytes, int *pinned);
void bsr_pyr_host_free(void *p, int pinned);

/* The run statistics of an in-core run of `it` whole-grid sweeps (no pyramid:
 * one sub-domain, height = sweeps), last change diff. */
static inline void bsr_pyr_info_incore(bsr_pyr_info *info, int it, double diff)
{
    info->iters = it;
    info->diff = diff;
    info->height = it;
    info->passes = it > 0;
    info->nsub = 1;
    info->split[0] = info->split[1] = info->split[2] = 1;
}

#ifdef __cplusplus
}
#endif
#endif
