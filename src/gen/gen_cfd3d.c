/* SPDX-License-Identifier: BSD-3-Clause */
/* cfd3d: a FlowVision-like coupled block system on a 3D grid.
 *
 * Model: one Newton / pseudo-time step of flow on the unit cube, linearized
 * about a base state, on a collocated grid of n^3 points (boundary included;
 * unknowns at the (n-2)^3 interior points, Dirichlet corrections 0 on the
 * boundary and in holes), unknowns per point q = (u, v, w, p [, T]):
 *   momentum  s u_m + (U.grad) u_m + (u.grad) U_m - nu lap u_m + d_m p [- beta T e_z] = r_m
 *   mass, inc:  div u - stab H^2 lap p = r_p
 *   mass, comp: (s p + U.grad p)/c^2 [- s T/T0] + div u - stab H^2 lap p = r_p
 *   energy (b = 5): s T + U.grad T + u.grad T0 - kappa lap T [+ (gamma-1) T0 div u (comp)] = r_T
 * with base flow U = conv (1 + sin 2pi(y+z)/2, 1/2 + sin 2pi(x+z)/2, 1/4 + sin 2pi(x+y)/2)
 * (divergence-free), base temperature T0 = 1 + (x+y+z)/5, s = 1/dt (0 =
 * steady), c = 1/mach.  The Newton term (u.grad)U_m fills the 3x3 velocity
 * part of the diagonal block (FlowVision's dense coupling blocks), u.grad T0
 * couples T to the velocities, d_m p and div u (central differences) couple
 * velocity and pressure between neighbours, the stabilization stab H^2 lap p
 * (H = max h) keeps the collocated pressure from decoupling.  Convection
 * U.grad by first-order upwind (default) or central differences: the matrix is
 * nonsymmetric; it loses diagonal dominance as conv grows (central: once the
 * cell Reynolds number conv*h/nu > 2).  All rows are scaled by H^2.
 * Manufactured exact solution: smooth trigonometric fields per component,
 * rhs = A x*, so error_vs_exact measures the solver alone. */
#include "stencil_impl.h"
#include <math.h>
#include <string.h>

bsr_status bsr_gen_cfd3d(const char *params, bsr_precision prec, bsr_problem *P);

typedef struct {
    int b, comp, central;
    double h[3], H, conv, nu, kappa, stab, s, beta, c2, gamma;
} cfd_par;

/* Base flow U(x) and its gradient G[m][n] = dU_m/dx_n. */
static void base_flow(const cfd_par *c, const double x[3], double U[3], double G[3][3])
{
    const double tp = 2 * STC_PI;
    double s0 = sin(tp * (x[1] + x[2])), s1 = sin(tp * (x[0] + x[2])), s2 = sin(tp * (x[0] + x[1]));
    double c0 = cos(tp * (x[1] + x[2])), c1 = cos(tp * (x[0] + x[2])), c2 = cos(tp * (x[0] + x[1]));
    U[0] = c->conv * (1 + s0 / 2); U[1] = c->conv * (0.5 + s1 / 2); U[2] = c->conv * (0.25 + s2 / 2);
    double g0 = c->conv * STC_PI * c0, g1 = c->conv * STC_PI * c1, g2 = c->conv * STC_PI * c2;
    G[0][0] = 0;  G[0][1] = g0; G[0][2] = g0;
    G[1][0] = g1; G[1][1] = 0;  G[1][2] = g1;
    G[2][0] = g2; G[2][1] = g2; G[2][2] = 0;
}

/* Convection coefficients of U_a d/dx_a at the centre (cc) and at the lower /
 * upper neighbour (lo, hi) along axis a. */
static void conv_coef(const cfd_par *c, double Ua, double h, double *cc, double *lo, double *hi)
{
    if (c->central) { *cc = 0; *lo = -Ua / (2 * h); *hi = Ua / (2 * h); }
    else if (Ua >= 0) { *cc = Ua / h; *lo = -Ua / h; *hi = 0; }
    else { *cc = -Ua / h; *lo = 0; *hi = Ua / h; }
}

/* The diagonal block D and the six neighbour blocks Nb[2a + (e > 0)] (row-major
 * b x b) of the point at coordinates x. */
static void cfd_blocks(const cfd_par *c, const double x[3], double *D, double Nb[6][25])
{
    const int b = c->b, ip = 3, iT = 4;
    double U[3], G[3][3], T0 = 1 + (x[0] + x[1] + x[2]) / 5, H2 = c->H * c->H;
    base_flow(c, x, U, G);
    memset(D, 0, sizeof(double) * b * b);
    memset(Nb, 0, sizeof(double) * 6 * 25);
#define E(M, r, q) (M)[(r) * b + (q)]
    for (int m = 0; m < 3; m++) {
        E(D, m, m) += c->s;
        for (int n = 0; n < 3; n++) E(D, m, n) += G[m][n];
    }
    if (b == 5) {
        E(D, iT, iT) += c->s;
        for (int n = 0; n < 3; n++) E(D, iT, n) += 0.2; /* u . grad T0 */
        if (!c->comp) E(D, 2, iT) -= c->beta;         /* Boussinesq buoyancy */
        else E(D, ip, iT) -= c->s / T0;                /* density from the equation of state */
    }
    if (c->comp) E(D, ip, ip) += c->s / c->c2;
    for (int a = 0; a < 3; a++) {
        double h = c->h[a], dif = 1 / (h * h), cc, lo, hi;
        conv_coef(c, U[a], h, &cc, &lo, &hi);
        double *L = Nb[2 * a], *R = Nb[2 * a + 1];
        for (int m = 0; m < 3; m++) { /* momentum: convection-diffusion, pressure gradient */
            E(D, m, m) += cc + 2 * c->nu * dif;
            E(L, m, m) += lo - c->nu * dif;
            E(R, m, m) += hi - c->nu * dif;
        }
        E(L, a, ip) -= 1 / (2 * h); E(R, a, ip) += 1 / (2 * h);
        E(L, ip, a) -= 1 / (2 * h); E(R, ip, a) += 1 / (2 * h); /* divergence */
        E(D, ip, ip) += 2 * c->stab * H2 * dif;
        E(L, ip, ip) -= c->stab * H2 * dif; E(R, ip, ip) -= c->stab * H2 * dif;
        if (c->comp) { E(D, ip, ip) += cc / c->c2; E(L, ip, ip) += lo / c->c2; E(R, ip, ip) += hi / c->c2; }
        if (b == 5) {
            E(D, iT, iT) += cc + 2 * c->kappa * dif;
            E(L, iT, iT) += lo - c->kappa * dif;
            E(R, iT, iT) += hi - c->kappa * dif;
            if (c->comp) {
                double w = (c->gamma - 1) * T0 / (2 * h);
                E(L, iT, a) -= w; E(R, iT, a) += w;
            }
        }
    }
#undef E
    for (int e = 0; e < b * b; e++) D[e] *= H2;
    for (int d = 0; d < 6; d++)
        for (int e = 0; e < b * b; e++) Nb[d][e] *= H2;
}

/* Manufactured exact solution, component q at coordinates x. */
static double cfd_exact(int q, const double x[3])
{
    return sin(STC_PI * (x[0] + 0.3 * q)) * cos(STC_PI * (x[1] - 0.2 * q)) * (1 + 0.5 * x[2] * (q + 1)) + 0.1 * q;
}

/* bsr_generate entry of cfd3d: the coupled flow system, rhs = A x* for the manufactured x*. */
bsr_status bsr_gen_cfd3d(const char *params, bsr_precision prec, bsr_problem *P)
{
    static const char *const pos[] = {"n", "b", "conv", NULL}, *const schemes[] = {"upwind", "central", NULL},
                             *const models[] = {"inc", "comp", NULL};
    gen_args a;
    gen_grid g;
    cfd_par c;
    double dt, mach;
    memset(&c, 0, sizeof c);
    BSR_TRY(gen_args_parse("cfd3d", params, pos, &a));
    BSR_TRY(gen_grid_args(&a, 3, 12, &g));
    BSR_TRY(gen_arg_int(&a, "b", 4, 4, 5, &c.b));
    BSR_TRY(gen_arg_real(&a, "conv", 10, 0, 1e8, &c.conv));
    BSR_TRY(gen_arg_choice(&a, "scheme", schemes, 0, &c.central));
    BSR_TRY(gen_arg_choice(&a, "model", models, 0, &c.comp));
    BSR_TRY(gen_arg_real(&a, "nu", 1, 1e-8, 1e8, &c.nu));
    BSR_TRY(gen_arg_real(&a, "kappa", 1, 1e-8, 1e8, &c.kappa));
    BSR_TRY(gen_arg_real(&a, "stab", 1, 1e-8, 1e8, &c.stab));
    BSR_TRY(gen_arg_real(&a, "dt", 0, 0, 1e12, &dt));
    BSR_TRY(gen_arg_real(&a, "beta", 1, 0, 1e8, &c.beta));
    BSR_TRY(gen_arg_real(&a, "mach", 0.5, 1e-4, 10, &mach));
    BSR_TRY(gen_arg_real(&a, "gamma", 1.4, 1, 3, &c.gamma));
    BSR_TRY(gen_args_done(&a));
    c.s = dt > 0 ? 1 / dt : 0;
    c.c2 = 1 / (mach * mach);
    const int nx = g.nx, ny = g.ny, nz = g.nz, b = c.b;
    c.h[0] = 1.0 / (nx + 1); c.h[1] = 1.0 / (ny + 1); c.h[2] = 1.0 / (nz + 1);
    c.H = fmax(c.h[0], fmax(c.h[1], c.h[2]));
    const int64_t n = (int64_t)nx * ny * nz;
    int *map = bsr_malloc((size_t)n * sizeof(int), "cfd3d index map");
    if (!map) return BSR_ERR_NOMEM;
    int na = 0;
    for (int k = 0; k < nz; k++)
        for (int j = 0; j < ny; j++)
            for (int i = 0; i < nx; i++) map[((int64_t)k * ny + j) * nx + i] = gen_grid_hole(&g, i, j, k) ? -1 : na++;
    if (na == 0) { free(map); return bsr_error(BSR_ERR_ARG, "cfd3d: every cell is a hole"); }
    /* neighbour order by increasing column: -z, -y, -x, centre, +x, +y, +z */
    static const int ax[7] = {2, 1, 0, -1, 0, 1, 2}, sg[7] = {-1, -1, -1, 0, 1, 1, 1};
    int nnzb = 0;
    for (int k = 0; k < nz; k++)
        for (int j = 0; j < ny; j++)
            for (int i = 0; i < nx; i++) {
                if (map[((int64_t)k * ny + j) * nx + i] < 0) continue;
                for (int q = 0; q < 7; q++) {
                    int ij[3] = {i, j, k}, lim[3] = {nx, ny, nz};
                    if (ax[q] >= 0) ij[ax[q]] += sg[q];
                    if (ax[q] >= 0 && (ij[ax[q]] < 0 || ij[ax[q]] >= lim[ax[q]])) continue;
                    nnzb += map[((int64_t)ij[2] * ny + ij[1]) * nx + ij[0]] >= 0;
                }
            }
    bsr_matrix *A;
    bsr_status s = bsr_matrix_alloc(&A, na, na, b, nnzb, prec);
    if (s) { free(map); return s; }
    P->A = A;
    if ((s = bsr_multivec_create(&P->xexact, (int64_t)na * b, 1, prec))) { free(map); return s; }
    int p = 0;
    A->rowptr[0] = 0;
    for (int k = 0; k < nz; k++)
        for (int j = 0; j < ny; j++)
            for (int i = 0; i < nx; i++) {
                int r = map[((int64_t)k * ny + j) * nx + i];
                if (r < 0) continue;
                double x[3] = {(i + 1) * c.h[0], (j + 1) * c.h[1], (k + 1) * c.h[2]}, D[25], Nb[6][25];
                cfd_blocks(&c, x, D, Nb);
                for (int q = 0; q < 7; q++) {
                    int ij[3] = {i, j, k}, lim[3] = {nx, ny, nz};
                    if (ax[q] >= 0) ij[ax[q]] += sg[q];
                    if (ax[q] >= 0 && (ij[ax[q]] < 0 || ij[ax[q]] >= lim[ax[q]])) continue;
                    int col = map[((int64_t)ij[2] * ny + ij[1]) * nx + ij[0]];
                    if (col < 0) continue;
                    const double *blk = ax[q] < 0 ? D : Nb[2 * ax[q] + (sg[q] > 0)];
                    A->colind[p] = col;
                    for (int e = 0; e < b * b; e++) {
                        size_t o = (size_t)p * b * b + e;
                        if (prec == BSR_DOUBLE) ((double *)A->val)[o] = blk[e];
                        else ((float *)A->val)[o] = (float)blk[e];
                    }
                    p++;
                }
                A->rowptr[r + 1] = p;
                for (int q = 0; q < b; q++) {
                    double v = cfd_exact(q, x);
                    if (prec == BSR_DOUBLE) ((double *)P->xexact->data)[(size_t)r * b + q] = v;
                    else ((float *)P->xexact->data)[(size_t)r * b + q] = (float)v;
                }
            }
    free(map);
    return bsr_problem_make_rhs(P);
}
