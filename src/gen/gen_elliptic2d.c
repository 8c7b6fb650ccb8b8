/* SPDX-License-Identifier: BSD-3-Clause */
/* elliptic2d: d/dx(sigma du/dx) + d/dy(sigma du/dy) = f on [x0,x1]x[y0,y1],
 * u = g on the boundary, by the 5-point integro-interpolation (balance)
 * scheme with sigma evaluated at the half points:
 *   -[s(i+1/2,j)(u(i+1,j) - u(i,j)) - s(i-1/2,j)(u(i,j) - u(i-1,j))]/hx^2 - [same in y]/hy^2 = -f(i,j)
 * (rows negated so that A is symmetric positive definite).
 * Default case (sigma=invxy): sigma = 1/(x y), f = 3(x^2 + y^2), g = x^3 y^3
 * on [1,2]^2, whose exact solution is u = x^3 y^3; sigma=one: sigma = 1,
 * f = 6xy(x^2 + y^2), same u.  xexact is u at the grid points and rhs is the
 * discretization's own, so error_vs_exact = ||x - u||/||u|| measures the
 * discretization error plus the solver's, O(h^2) for an exact solve.  Holes
 * are interior Dirichlet cells with u = g. */
#include "stencil_impl.h"
#include <math.h>

typedef struct { double x0, y0, hx, hy; int one; } el_ctx;

/* Conductivity sigma(x,y): 1/(x y), or 1 with sigma=one. */
static double sigma(const el_ctx *E, double x, double y) { return E->one ? 1.0 : 1.0 / (x * y); }

/* Integro-interpolation row at (i,j): sigma at half points, f = 3(x^2 + y^2) (or the sigma=one
 * analogue). */
static void el_row(void *c, int i, int j, int k, double a[7], double *f)
{
    const el_ctx *E = c;
    (void)k;
    double x = E->x0 + (i + 1) * E->hx, y = E->y0 + (j + 1) * E->hy;
    double ihx2 = 1 / (E->hx * E->hx), ihy2 = 1 / (E->hy * E->hy);
    /* half points as x0 + (i + 1/2) hx so that both rows sharing a face get the same bits */
    double xw = E->x0 + (i + 0.5) * E->hx, xe = E->x0 + (i + 1.5) * E->hx;
    double ys = E->y0 + (j + 0.5) * E->hy, yn = E->y0 + (j + 1.5) * E->hy;
    double sw = sigma(E, xw, y), se = sigma(E, xe, y), ss = sigma(E, x, ys), sn = sigma(E, x, yn);
    a[BSR_STC_W] = -sw * ihx2; a[BSR_STC_E] = -se * ihx2;
    a[BSR_STC_S] = -ss * ihy2; a[BSR_STC_N] = -sn * ihy2;
    a[BSR_STC_C] = (sw + se) * ihx2 + (ss + sn) * ihy2;
    *f = -(E->one ? 6 * x * y * (x * x + y * y) : 3 * (x * x + y * y));
}

/* Exact solution u = x^3 y^3 at grid point (i,j). */
static double el_exact(void *c, int i, int j, int k)
{
    const el_ctx *E = c;
    (void)k;
    double x = E->x0 + (i + 1) * E->hx, y = E->y0 + (j + 1) * E->hy;
    return x * x * x * y * y * y;
}

/* elliptic2d structured generator: parse parameters and build the system with its PDE right-
 * hand side. */
bsr_status bsr_stc_elliptic2d(const char *params, bsr_stencil *S)
{
    static const char *const pos[] = {"n", NULL}, *const sig[] = {"invxy", "one", NULL};
    gen_args a;
    gen_grid g;
    el_ctx E;
    double x1, y1;
    BSR_TRY(gen_args_parse("elliptic2d", params, pos, &a));
    BSR_TRY(gen_grid_args(&a, 2, 33, &g));
    BSR_TRY(gen_arg_choice(&a, "sigma", sig, 0, &E.one));
    BSR_TRY(gen_arg_real(&a, "x0", 1, 1e-3, 1e6, &E.x0));
    BSR_TRY(gen_arg_real(&a, "x1", E.x0 + 1, 1e-3, 1e6, &x1));
    BSR_TRY(gen_arg_real(&a, "y0", 1, 1e-3, 1e6, &E.y0));
    BSR_TRY(gen_arg_real(&a, "y1", E.y0 + 1, 1e-3, 1e6, &y1));
    BSR_TRY(gen_args_done(&a));
    if (x1 <= E.x0 || y1 <= E.y0)
        return bsr_error(BSR_ERR_ARG, "elliptic2d: empty domain [%g,%g]x[%g,%g] (need x0 < x1, y0 < y1)",
                         E.x0, x1, E.y0, y1);
    E.hx = (x1 - E.x0) / (g.nx + 1);
    E.hy = (y1 - E.y0) / (g.ny + 1);
    return stc_build(S, &g, el_row, el_exact, &E, 0);
}
