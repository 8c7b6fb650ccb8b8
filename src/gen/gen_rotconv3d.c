/* SPDX-License-Identifier: BSD-3-Clause */
/* rotconv3d: a coupled convection-diffusion-reaction system in a rotating flow,
 * the "hard class" of block systems on which block ILU(0)-BiCGStab breaks down
 * or stalls while the second-order ILU2 converges.
 *
 * Model: b coupled species c = (c_1..c_b) on the unit cube, cell-centred
 * finite volumes on N^3 cells (h = 1/N, one block row per cell, x fastest,
 * homogeneous Dirichlet ghost cells outside), one implicit pseudo-time step
 *   (I + K) (s c + outflow(U c)) - sum_faces inflow(U (I + Q_f) c) - nu lap c = r
 * with the vortex U = conv (-(y-1/2), x-1/2, swirl sin(pi x) sin(pi y))
 * (divergence-free: closed streamlines in every z-plane, carried slowly along
 * z; conv is the angular velocity), s = conv/(cfl h) (a pseudo-time step of
 * CFL number cfl; cfl=0: steady), first-order upwind convection and
 * component-wise central diffusion.  Per cell:
 * - diagonal block (s + w) (I + K) + 6 nu/h^2 I, w = sum_a |U_a|/h: the time
 *   and outflow terms act on the species through the linearized kinetics /
 *   state relation I + K, K of zero diagonal, dense, non-symmetric, entries
 *   of size in [kcouple/3, kcouple] (0.1..0.3 of the diagonal at the default
 *   kcouple 0.3 where convection dominates; theta * that range in general,
 *   theta = (s + w) / (s + w + 6 nu/h^2));
 * - neighbour block of face f: -nu/h^2 I, plus on the upstream face
 *   -|U_a|/h (I + Q_f): the inflow convects the species with the
 *   cross-convection Q_f, zero diagonal, dense, non-symmetric, entries of size
 *   in [couple/3, couple] * (3/(b-1))^0.7 (a scaling between keeping the
 *   1-norm and the 2-norm of a row of Q_f as at b = 4, so that b = 4 and 5
 *   are about equally hard).
 * K and Q_f vary from cell to cell: sizes and signs are hashed from
 * (seed, cell, face, i, j) with bsr_hash01, so the matrix is the same in every
 * run and with any number of threads.  The scalar part alone is an M-matrix
 * (diffusion-dominated: weakly diagonally dominant); the couplings make the
 * matrix nonsymmetric and take away diagonal dominance as conv/nu grows (at
 * conv = 10, 100 ILU(0)-BiCGStab converges in ~35 iterations at N = 20).
 * The fill that ILU(0) drops where the rotating flow runs against the
 * ordering then makes its factors unstable (nested dissection and natural
 * order alike), while ILU2 keeps enough of it.  Defaults: conv 2000, nu 1,
 * couple 0.9, kcouple 0.3, cfl 17.5, swirl 0.2, seed 1, tuned so that
 * ILU(0)-BiCGStab (rtol 1e-10) breaks down and ILU2 (tau1 1e-2) converges
 * to error vs exact <= 1e-6 for b = 4 and 5 at N = 20..40.  More couple or
 * cfl (steadier) is harder for every preconditioner; N = 16 and below is
 * borderline for ILU(0).  Rows are scaled by h^2 like cfd3d.
 * Manufactured exact solution: a smooth trigonometric field per component,
 * rhs = A x*, so error_vs_exact measures the solver alone. */
#include "stencil_impl.h"
#include "gen_rows.h"
#include <math.h>
#include <string.h>

bsr_status bsr_gen_rotconv3d(const char *params, bsr_precision prec, bsr_problem *P);

#define RC_MAXB 10

typedef struct {
    gen_cube cube;    /* n, b, h and the model's functions */
    double conv, nu, couple, kcouple, cfl, swirl;
    uint64_t seed;
} rc_par;

/* Deterministic value with |value| in [lo, 1) and a hashed sign, from (seed,
 * cell, tag, i, j): tag 0..5 a face's Q_f, 6 the cell's K. */
static double rc_hash(const rc_par *c, int64_t cell, int tag, int i, int j, double lo)
{
    uint64_t key = ((uint64_t)tag * RC_MAXB + (uint64_t)i) * RC_MAXB + (uint64_t)j;
    double u = bsr_hash01(c->seed * 0x100000001b3ull + (uint64_t)cell, key);
    double m = lo + (1 - lo) * (u < 0.5 ? 2 * u : 2 * u - 1);
    return (u < 0.5 ? -1 : 1) * m;
}

/* Velocity at x. */
static void rc_flow(const rc_par *c, const double x[3], double U[3])
{
    U[0] = -c->conv * (x[1] - 0.5);
    U[1] = c->conv * (x[0] - 0.5);
    U[2] = c->conv * c->swirl * sin(STC_PI * x[0]) * sin(STC_PI * x[1]);
}

/* Diagonal block D and neighbour blocks Nb[2a + (upper)] (row-major b x b,
 * scaled by h^2) of cell (i,j,k), flat index cell. */
static void rc_blocks(const gen_cube *cube, int i, int j, int k, int64_t cell, double *D,
                      double Nb[6][BSR_MAX_BLOCK * BSR_MAX_BLOCK])
{
    const rc_par *c = (const rc_par *)cube;
    const int b = cube->b;
    const double h = cube->h, dif = c->nu / (h * h), h2 = h * h;
    double x[3] = {(i + 0.5) * h, (j + 0.5) * h, (k + 0.5) * h}, U[3], wc = 0, wf[6];
    rc_flow(c, x, U);
    for (int a = 0; a < 3; a++) { /* first-order upwind: the outflow on the diagonal, the upstream face */
        double w = fabs(U[a]) / h;
        wf[2 * a] = U[a] > 0 ? w : 0;
        wf[2 * a + 1] = U[a] < 0 ? w : 0;
        wc += w;
    }
    /* convective and time part of the centre (acts through I + K), component-wise diffusion */
    const double ct = wc + (c->cfl > 0 ? c->conv / (c->cfl * h) : 0), qs = b > 1 ? pow(3.0 / (b - 1), 0.7) : 0;
    for (int p = 0; p < b; p++)
        for (int q = 0; q < b; q++)
            D[p * b + q] = h2 * (p == q ? ct + 6 * dif : ct * c->kcouple * rc_hash(c, cell, 6, p, q, 1.0 / 3));
    for (int f = 0; f < 6; f++)
        for (int p = 0; p < b; p++)
            for (int q = 0; q < b; q++)
                Nb[f][p * b + q] = -h2 * (p == q ? dif + wf[f] : wf[f] * qs * c->couple * rc_hash(c, cell, f, p, q, 1.0 / 3));
}

/* Manufactured exact solution, component q at x. */
static double rc_exact(int q, const double x[3])
{
    return sin(STC_PI * (x[0] + 0.25 * q)) * sin(STC_PI * (x[1] + 0.15 * q)) * cos(STC_PI * (x[2] - 0.1 * q)) + 0.2 * q;
}

/* Row generator of rotconv3d: n (cells per direction, N^3 block rows), b,
 * the model's parameters. */
bsr_status bsr_rowgen_rotconv3d(const char *params, bsr_rowgen *g)
{
    static const gen_real_arg reals[] = {
        {"conv", 2000, 0, 1e8, offsetof(rc_par, conv)},       {"nu", 1, 1e-8, 1e8, offsetof(rc_par, nu)},
        {"couple", 0.9, 0, 4, offsetof(rc_par, couple)},      {"kcouple", 0.3, 0, 1, offsetof(rc_par, kcouple)},
        {"cfl", 17.5, 0, 1e12, offsetof(rc_par, cfl)},        {"swirl", 0.2, 0, 10, offsetof(rc_par, swirl)},
    };
    static const gen_cube_kind kind = {"rotconv3d", 4, sizeof(rc_par), offsetof(rc_par, seed), reals,
                                       (int)(sizeof reals / sizeof reals[0]), rc_blocks, rc_exact, NULL};
    return gen_cube_make(&kind, params, g);
}

/* bsr_generate entry of rotconv3d; rhs = A x* for the manufactured x*. */
bsr_status bsr_gen_rotconv3d(const char *params, bsr_precision prec, bsr_problem *P)
{
    return gen_rowgen_generate(bsr_rowgen_rotconv3d, params, prec, P);
}
