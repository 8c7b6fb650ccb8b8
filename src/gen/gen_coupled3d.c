/* SPDX-License-Identifier: BSD-3-Clause */
/* coupled3d: a coupled convection-diffusion system whose coupling makes the
 * operator indefinite at the grid's smooth modes, as velocity-pressure and
 * species couplings of CFD systems do.  Block ILU(0) fails on it; a direct
 * solver does not.
 *
 * Model: b coupled unknowns per cell on the unit cube, cell-centred finite
 * volumes on N^3 cells (h = 1/N, one block row per cell, x fastest,
 * homogeneous Dirichlet ghost cells outside), rows scaled by h^2/nu.
 * Scalar part: central diffusion (weight 1 a face) plus first-order upwind
 * convection by a rotating flow, in cell-Peclet units P = U h / nu:
 *   P = (-t(r) (y-1/2)/r, t(r) (x-1/2)/r, pemin),  r = distance to the axis
 *   x = y = 1/2, t(r) = sqrt(pemax^2 - pemin^2) r / sqrt(1/2),
 * so that |P| runs from pemin on the axis to pemax in the corners (defaults
 * 0.7 and 2.6, independent of N).  Face f of axis a has the weight
 * w_f = 1 + |P_a| on the upstream face, 1 on the other; the scalar diagonal
 * is d = sum_f w_f over all six faces (boundary faces too), so that every
 * interior row of the scalar part sums to zero.
 * Blocks of the row of cell c:
 *   diagonal   d (I + S_c + C_c),
 *   neighbour  -w_f (I + ncouple C_c) on each face f inside the cube,
 * with S_c = diag(s_1..s_b), s_p in [0, shift] (small shifts), and C_c a
 * dense nonsymmetric coupling of zero diagonal whose entries have sizes in
 * [couple/3, couple] and hashed signs.  S and C vary from cell to cell:
 * hashed from (seed, cell, i, j) with bsr_hash01, so the matrix is the same
 * in every run and with any number of threads.
 * For a field constant in space the interior rows give
 *   d (S_c + (1 - ncouple) C_c),
 * and the lowest Dirichlet mode (Laplacian eigenvalue
 * lambda_min = 12 sin^2(pi / (2 (N + 1))) in these units) adds about
 * lambda_min (I + ncouple C_c).  C_c has zero trace, so where the shifts
 * are small against (1 - ncouple) C_c's spread this symbol has eigenvalues
 * with negative real part and an indefinite symmetric part: the smooth modes
 * of the operator reach the left half-plane while its rough modes (Laplacian
 * eigenvalues up to about 2 d, symbol about d (2 I + S + (1 + ncouple) C_c))
 * stay on the right.  Defaults: couple 0.35, ncouple 0.1, shift 0.05,
 * pemin 0.7, pemax 2.6, seed 1.  There, at N = 20 (8000 block rows, b = 5),
 * block ILU(0)-BiCGStab (rtol 1e-10) does not converge in 1000 iterations,
 * ILU2 at its defaults converges (fill about 6), and UMFPACK solves the
 * system to the exact solution; ILU(0) still converges at N = 10 (couple 0.5
 * makes it fail there too).  The difficulty grows with N (the lowest modes
 * come closer to where the symbol crosses zero) and with couple; larger
 * shift or larger ncouple moves the smooth symbols right; couple = 0 leaves
 * the scalar convection-diffusion operator plus positive shifts, an
 * M-matrix.
 * Manufactured exact solution: a smooth trigonometric field per component,
 * rhs = A x*, so error_vs_exact measures the solver alone. */
#include "stencil_impl.h"
#include "gen_rows.h"
#include <math.h>
#include <string.h>

bsr_status bsr_gen_coupled3d(const char *params, bsr_precision prec, bsr_problem *P);

#define CP_MAXB 10

typedef struct {
    gen_cube cube;    /* n, b, h and the model's functions */
    double pemin, pemax, couple, ncouple, shift;
    uint64_t seed;
} cp_par;

/* Deterministic value of cell's entry (i, j): in [0, 1) for tag 0 (the
 * shifts), else |value| in [1/3, 1) with a hashed sign (the coupling). */
static double cp_hash(const cp_par *c, int64_t cell, int tag, int i, int j)
{
    uint64_t key = ((uint64_t)tag * CP_MAXB + (uint64_t)i) * CP_MAXB + (uint64_t)j;
    double u = bsr_hash01(c->seed * 0x100000001b3ull + (uint64_t)cell + 0x5bd1e995ull, key);
    if (tag == 0) return u;
    double m = 1.0 / 3 + (2.0 / 3) * (u < 0.5 ? 2 * u : 2 * u - 1);
    return (u < 0.5 ? -1 : 1) * m;
}

/* Cell-Peclet velocity P at the point x. */
static void cp_flow(const cp_par *c, const double x[3], double P[3])
{
    double dx = x[0] - 0.5, dy = x[1] - 0.5, r = sqrt(dx * dx + dy * dy);
    double t = sqrt(c->pemax * c->pemax - c->pemin * c->pemin) / sqrt(0.5); /* t(r) / r */
    P[0] = r > 0 ? -t * dy : 0;
    P[1] = r > 0 ? t * dx : 0;
    P[2] = c->pemin;
}

/* Diagonal block D and neighbour blocks Nb[2a + (upper)] (row-major b x b)
 * of cell (i, j, k), flat index cell. */
static void cp_blocks(const gen_cube *cube, int i, int j, int k, int64_t cell, double *D,
                      double Nb[6][BSR_MAX_BLOCK * BSR_MAX_BLOCK])
{
    const cp_par *c = (const cp_par *)cube;
    const int b = cube->b;
    double x[3] = {(i + 0.5) * cube->h, (j + 0.5) * cube->h, (k + 0.5) * cube->h}, P[3], w[6], d = 0;
    cp_flow(c, x, P);
    for (int a = 0; a < 3; a++) { /* diffusion on every face, upwind convection on the upstream one */
        w[2 * a] = 1 + (P[a] > 0 ? P[a] : 0);
        w[2 * a + 1] = 1 + (P[a] < 0 ? -P[a] : 0);
        d += w[2 * a] + w[2 * a + 1];
    }
    double C[CP_MAXB * CP_MAXB];
    for (int p = 0; p < b; p++)
        for (int q = 0; q < b; q++)
            C[p * b + q] = p == q ? 0 : c->couple * cp_hash(c, cell, 1, p, q);
    for (int p = 0; p < b; p++)
        for (int q = 0; q < b; q++)
            D[p * b + q] = d * ((p == q ? 1 + c->shift * cp_hash(c, cell, 0, p, p) : 0) + C[p * b + q]);
    for (int f = 0; f < 6; f++)
        for (int p = 0; p < b; p++)
            for (int q = 0; q < b; q++)
                Nb[f][p * b + q] = -w[f] * ((p == q) + c->ncouple * C[p * b + q]);
}

/* Manufactured exact solution, component q at x. */
static double cp_exact(int q, const double x[3])
{
    return sin(STC_PI * (x[0] + 0.2 * q)) * cos(STC_PI * (x[1] - 0.1 * q)) * sin(STC_PI * (x[2] + 0.3 * q)) + 0.1 * q;
}

/* The Peclet range runs from pemin on the axis to pemax in the corners. */
static bsr_status cp_check(const void *par)
{
    const cp_par *c = par;
    if (c->pemax < c->pemin)
        return bsr_error(BSR_ERR_ARG, "coupled3d: pemax=%g below pemin=%g (the Peclet range runs from pemin on the axis "
                         "to pemax in the corners)", c->pemax, c->pemin);
    return BSR_OK;
}

/* Row generator of coupled3d: n (cells per direction, N^3 block rows), b,
 * the model's parameters. */
bsr_status bsr_rowgen_coupled3d(const char *params, bsr_rowgen *g)
{
    static const gen_real_arg reals[] = {
        {"pemin", 0.7, 0, 1e4, offsetof(cp_par, pemin)},      {"pemax", 2.6, 0, 1e4, offsetof(cp_par, pemax)},
        {"couple", 0.35, 0, 2, offsetof(cp_par, couple)},     {"ncouple", 0.1, 0, 1, offsetof(cp_par, ncouple)},
        {"shift", 0.05, 0, 10, offsetof(cp_par, shift)},
    };
    static const gen_cube_kind kind = {"coupled3d", 5, sizeof(cp_par), offsetof(cp_par, seed), reals,
                                       (int)(sizeof reals / sizeof reals[0]), cp_blocks, cp_exact, cp_check};
    return gen_cube_make(&kind, params, g);
}

/* bsr_generate entry of coupled3d; rhs = A x* for the manufactured x*. */
bsr_status bsr_gen_coupled3d(const char *params, bsr_precision prec, bsr_problem *P)
{
    return gen_rowgen_generate(bsr_rowgen_coupled3d, params, prec, P);
}
