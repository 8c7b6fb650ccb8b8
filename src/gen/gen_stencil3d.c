/* SPDX-License-Identifier: BSD-3-Clause */
/* stencil3d:G:B -- a 3D 7-point block stencil on a G^3 grid with b x b blocks.
 * Diagonal blocks 6.5 I + small deterministic perturbation, neighbour blocks
 * -(I + small perturbation): nonsymmetric, block diagonally dominant, so every
 * method converges; exact solution x*(i) = sin-like deterministic values. */
#include "stencil_impl.h"
#include "gen_rows.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Deterministic value in [-1,1) from integer coordinates. */
static double hash01(uint64_t a, uint64_t b)
{
    return 2.0 * bsr_hash01(a, b) - 1.0; /* exact: scaling by 2 */
}

/* Parse "G[:B]" strictly, items separated by ':' or ',' as every generator's
 * (gen_args_parse; also g=, b=). */
static bsr_status parse(const char *params, int *G, int *B)
{
    static const char *const pos[] = {"g", "b", NULL};
    gen_args a;
    BSR_TRY(gen_args_parse("stencil3d", params, pos, &a));
    BSR_TRY(gen_arg_int(&a, "g", 0, 1, 2000, G));
    BSR_TRY(gen_arg_int(&a, "b", 4, 1, BSR_MAX_BLOCK, B));
    BSR_TRY(gen_args_done(&a));
    if (*G == 0) return bsr_error(BSR_ERR_ARG, "stencil3d: the grid size is missing (stencil3d:G[:B], G 1..2000)");
    return BSR_OK;
}

/* The parameters: G^3 cells, x fastest; b x b blocks. */
typedef struct { int64_t G; int b; } st3_par;

/* Blocks of row i: itself and its neighbours inside the grid. */
static int st3_count(const bsr_rowgen *g, int64_t i)
{
    const st3_par *c = g->par;
    int64_t G = c->G, x = i % G, y = i / G % G, z = i / (G * G);
    return 1 + (x > 0) + (x < G - 1) + (y > 0) + (y < G - 1) + (z > 0) + (z < G - 1);
}

/* Row i: the neighbours in increasing column order; the hash of (row, place
 * in the row, entry) perturbs every block. */
static int st3_row(const bsr_rowgen *g, int64_t i, int64_t *nb, double *val)
{
    const st3_par *c = g->par;
    const int64_t G = c->G, x = i % G, y = i / G % G, z = i / (G * G);
    const int b = c->b;
    int m = 0;
    if (z > 0) nb[m++] = i - G * G;
    if (y > 0) nb[m++] = i - G;
    if (x > 0) nb[m++] = i - 1;
    nb[m++] = i;
    if (x < G - 1) nb[m++] = i + 1;
    if (y < G - 1) nb[m++] = i + G;
    if (z < G - 1) nb[m++] = i + G * G;
    for (int q = 0; q < m; q++)
        for (int r = 0; r < b; r++)
            for (int cc = 0; cc < b; cc++) {
                double h = hash01((uint64_t)i * 7 + q, (uint64_t)r * 16 + cc);
                val[((size_t)q * b + r) * b + cc] = (nb[q] == i) ? (r == cc ? 6.5 : 0.0) + 0.3 * h / b
                                                                 : (r == cc ? -1.0 : 0.0) + 0.1 * h / b;
            }
    return m;
}

/* x*(e) = 1 + sin(0.001 e)/2 of the global unknown e = i b + r. */
static void st3_exact(const bsr_rowgen *g, int64_t i, double *x)
{
    const st3_par *c = g->par;
    for (int r = 0; r < c->b; r++) x[r] = 1.0 + 0.5 * sin(0.001 * (double)(i * c->b + r));
}

/* Row generator of stencil3d:G[:B]. */
bsr_status bsr_rowgen_stencil3d(const char *params, bsr_rowgen *g)
{
    int G = 0, b = 0;
    memset(g, 0, sizeof *g);
    BSR_TRY(parse(params, &G, &b));
    st3_par *c = bsr_malloc(sizeof *c, "stencil3d parameters");
    if (!c) return BSR_ERR_NOMEM;
    c->G = G;
    c->b = b;
    g->par = c;
    g->n = (int64_t)G * G * G;
    g->b = b;
    g->reach = (int64_t)G * G;
    snprintf(g->name, sizeof g->name, "stencil3d:%d:%d", G, b);
    g->count = st3_count;
    g->row = st3_row;
    g->exact = st3_exact;
    return BSR_OK;
}

/* bsr_generate entry of stencil3d:G[:B]: the 3D 7-point block stencil, rhs = A x*. */
bsr_status bsr_gen_stencil3d(const char *params, bsr_precision prec, bsr_problem *P)
{
    bsr_rowgen g;
    BSR_TRY(bsr_rowgen_stencil3d(params, &g));
    int G = (int)((st3_par *)g.par)->G;
    bsr_status st = g.n * 7 > INT32_MAX ? bsr_error(BSR_ERR_UNSUPPORTED, "stencil3d: grid %d too large", G)
                                        : bsr_rowgen_problem(&g, prec, P);
    bsr_rowgen_free(&g);
    return st;
}
