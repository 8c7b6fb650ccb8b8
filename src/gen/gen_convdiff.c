/* SPDX-License-Identifier: BSD-3-Clause */
/* convdiff2d/3d: steady convection-diffusion on the unit square / cube,
 *   -(ax u_xx + ay u_yy [+ az u_zz]) + beta . grad u = g,  beta = pe (1, 1/2 [, 1/4]),
 * Dirichlet boundary; pe is the global Peclet number (length 1, unit
 * diffusion), the cell Peclet number is pe*h.  Convection by first-order
 * upwind (an M-matrix for every pe) or central differences (nonsymmetric and
 * not diagonally dominant once pe*h > 2).  Manufactured x* as in poisson,
 * rhs = A x*. */
#include "stencil_impl.h"
#include <math.h>

typedef struct { double h[3], a[3], beta[3]; int dim, central; } cd_ctx;

/* Stencil row of convection-diffusion at (i,j,k): diffusion plus upwind or central convection. */
static void cd_row(void *c, int i, int j, int k, double a[7], double *f)
{
    const cd_ctx *C = c;
    (void)i; (void)j; (void)k; (void)f;
    for (int d = 0; d < C->dim; d++) {
        double w = C->a[d] / (C->h[d] * C->h[d]), b = C->beta[d] / C->h[d];
        double *lo = &a[1 + 2 * d], *hi = &a[2 + 2 * d]; /* W/E, S/N, B/T */
        a[BSR_STC_C] += 2 * w;
        if (C->central) { *lo = -w - b / 2; *hi = -w + b / 2; }
        else { /* beta >= 0: backward difference */
            *lo = -w - b; *hi = -w;
            a[BSR_STC_C] += b;
        }
    }
}

/* Manufactured exact solution at grid point (i,j,k). */
static double cd_exact(void *c, int i, int j, int k)
{
    const cd_ctx *C = c;
    double x = (i + 1) * C->h[0], y = (j + 1) * C->h[1], z = (k + 1) * C->h[2];
    double s = sin(STC_PI * x) * sin(STC_PI * y);
    return x + (C->dim == 3 ? s * sin(STC_PI * z) : s);
}

/* Parse convdiff2d/3d parameters and build the structured system. */
static bsr_status gen_cd(const char *gen, int dim, const char *params, bsr_stencil *S)
{
    static const char *const pos[] = {"n", "pe", NULL}, *const schemes[] = {"upwind", "central", NULL};
    static const double dir[3] = {1, 0.5, 0.25};
    gen_args a;
    gen_grid g;
    cd_ctx C = {.dim = dim};
    double pe;
    BSR_TRY(gen_args_parse(gen, params, pos, &a));
    BSR_TRY(gen_grid_args(&a, dim, dim == 2 ? 33 : 17, &g));
    BSR_TRY(gen_arg_real(&a, "pe", 10, 0, 1e8, &pe));
    BSR_TRY(gen_arg_choice(&a, "scheme", schemes, 0, &C.central));
    BSR_TRY(gen_arg_real(&a, "ax", 1, 1e-8, 1e8, &C.a[0]));
    BSR_TRY(gen_arg_real(&a, "ay", 1, 1e-8, 1e8, &C.a[1]));
    C.a[2] = 1;
    if (dim == 3) BSR_TRY(gen_arg_real(&a, "az", 1, 1e-8, 1e8, &C.a[2]));
    BSR_TRY(gen_args_done(&a));
    C.h[0] = 1.0 / (g.nx + 1); C.h[1] = 1.0 / (g.ny + 1); C.h[2] = 1.0 / (g.nz + 1);
    for (int d = 0; d < 3; d++) C.beta[d] = pe * dir[d];
    return stc_build(S, &g, cd_row, cd_exact, &C, 1);
}

/* convdiff2d / convdiff3d structured generators. */
bsr_status bsr_stc_convdiff2d(const char *p, bsr_stencil *S) { return gen_cd("convdiff2d", 2, p, S); }
bsr_status bsr_stc_convdiff3d(const char *p, bsr_stencil *S) { return gen_cd("convdiff3d", 3, p, S); }
