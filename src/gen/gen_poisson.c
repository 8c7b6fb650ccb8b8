/* SPDX-License-Identifier: BSD-3-Clause */
/* poisson2d/3d and heat2d/3d: the 5-/7-point Laplacian on the unit square /
 * cube with Dirichlet boundary, optionally anisotropic,
 *   L u = -(ax u_xx + ay u_yy [+ az u_zz]),
 * and one implicit step of u_t = -L u: A = I/dt + theta L (theta = 1 backward
 * Euler, 1/2 Crank-Nicolson; the explicit half of CN only enters the rhs).
 * Manufactured solution x* = x + sin(pi x) sin(pi y) [sin(pi z)] sampled at the
 * unknowns, rhs = A x* (so error_vs_exact measures the solver alone). */
#include "stencil_impl.h"
#include <math.h>

typedef struct { double hx, hy, hz, ax, ay, az, shift, scale; int dim; } lap_ctx;

/* Row of shift*I + scale*L at any unknown (constant coefficients). */
static void lap_row(void *c, int i, int j, int k, double a[7], double *f)
{
    const lap_ctx *L = c;
    (void)i; (void)j; (void)k; (void)f;
    double wx = L->scale * L->ax / (L->hx * L->hx), wy = L->scale * L->ay / (L->hy * L->hy);
    double wz = L->dim == 3 ? L->scale * L->az / (L->hz * L->hz) : 0;
    a[BSR_STC_C] = L->shift + 2 * (wx + wy + wz);
    a[BSR_STC_W] = a[BSR_STC_E] = -wx;
    a[BSR_STC_S] = a[BSR_STC_N] = -wy;
    a[BSR_STC_B] = a[BSR_STC_T] = -wz;
}

/* Manufactured exact solution of the Laplacian/heat generators at (i,j,k). */
static double lap_exact(void *c, int i, int j, int k)
{
    const lap_ctx *L = c;
    double x = (i + 1) * L->hx, y = (j + 1) * L->hy, z = (k + 1) * L->hz;
    double s = sin(STC_PI * x) * sin(STC_PI * y);
    return x + (L->dim == 3 ? s * sin(STC_PI * z) : s);
}

/* Shared body: heat != 0 adds dt and scheme. */
static bsr_status gen_lap(const char *gen, int dim, int heat, const char *params, bsr_stencil *S)
{
    static const char *const pos_p[] = {"n", NULL}, *const pos_h[] = {"n", "dt", NULL};
    static const char *const schemes[] = {"be", "cn", NULL};
    gen_args a;
    gen_grid g;
    lap_ctx L = {.dim = dim, .shift = 0, .scale = 1};
    BSR_TRY(gen_args_parse(gen, params, heat ? pos_h : pos_p, &a));
    BSR_TRY(gen_grid_args(&a, dim, dim == 2 ? 33 : 17, &g));
    BSR_TRY(gen_arg_real(&a, "ax", 1, 1e-8, 1e8, &L.ax));
    BSR_TRY(gen_arg_real(&a, "ay", 1, 1e-8, 1e8, &L.ay));
    L.az = 1;
    if (dim == 3) BSR_TRY(gen_arg_real(&a, "az", 1, 1e-8, 1e8, &L.az));
    if (heat) {
        double dt;
        int cn;
        BSR_TRY(gen_arg_real(&a, "dt", 1e-3, 1e-12, 1e12, &dt));
        BSR_TRY(gen_arg_choice(&a, "scheme", schemes, 0, &cn));
        L.shift = 1 / dt;
        L.scale = cn ? 0.5 : 1.0;
    }
    BSR_TRY(gen_args_done(&a));
    L.hx = 1.0 / (g.nx + 1); L.hy = 1.0 / (g.ny + 1); L.hz = 1.0 / (g.nz + 1);
    return stc_build(S, &g, lap_row, lap_exact, &L, 1);
}

/* poisson2d/3d and heat2d/3d structured generators (one builder, gen_lap). */
bsr_status bsr_stc_poisson2d(const char *p, bsr_stencil *S) { return gen_lap("poisson2d", 2, 0, p, S); }
bsr_status bsr_stc_poisson3d(const char *p, bsr_stencil *S) { return gen_lap("poisson3d", 3, 0, p, S); }
bsr_status bsr_stc_heat2d(const char *p, bsr_stencil *S) { return gen_lap("heat2d", 2, 1, p, S); }
bsr_status bsr_stc_heat3d(const char *p, bsr_stencil *S) { return gen_lap("heat3d", 3, 1, p, S); }
