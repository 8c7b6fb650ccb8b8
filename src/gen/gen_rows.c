/* SPDX-License-Identifier: BSD-3-Clause */
/* Generated problems row by row: a row generator's rows [row0, row0 + nrows)
 * as a matrix over a window of block columns, its exact solution on rows,
 * and the whole problem for bsr_generate. */
#include "gen_rows.h"
#include "gen_limit.h"
#include <limits.h>
#include <string.h>

static const struct { const char *name; bsr_status (*make)(const char *, bsr_rowgen *); } rowgens[] = {
    {"stencil3d", bsr_rowgen_stencil3d},
    {"rotconv3d", bsr_rowgen_rotconv3d},
    {"coupled3d", bsr_rowgen_coupled3d},
};

/* The table of row generators by name. */
bsr_status bsr_rowgen_parse(const char *spec, bsr_rowgen *g, int *found)
{
    memset(g, 0, sizeof *g);
    *found = 0;
    const char *colon = strchr(spec, ':');
    size_t len = colon ? (size_t)(colon - spec) : strlen(spec);
    for (size_t i = 0; i < sizeof rowgens / sizeof rowgens[0]; i++)
        if (strlen(rowgens[i].name) == len && !strncmp(spec, rowgens[i].name, len)) {
            *found = 1;
            bsr_status s = rowgens[i].make(colon ? colon + 1 : "", g);
            if (s) bsr_rowgen_free(g);
            return s;
        }
    return BSR_OK;
}

/* The parameters' storage; g itself is the caller's. */
void gen_cube_cell(int n, int64_t r, int ijk[3])
{
    ijk[0] = (int)(r % n);
    ijk[1] = (int)(r / n % n);
    ijk[2] = (int)(r / ((int64_t)n * n));
}

int gen_cube_count(int n, int64_t r)
{
    int ijk[3];
    gen_cube_cell(n, r, ijk);
    return 7 - (ijk[0] == 0) - (ijk[0] == n - 1) - (ijk[1] == 0) - (ijk[1] == n - 1) - (ijk[2] == 0) - (ijk[2] == n - 1);
}

int gen_cube_row(int n, int b, int64_t r, const double *D, const double *const Nb[6], int64_t *cols, double *val)
{
    static const int ax[7] = {2, 1, 0, -1, 0, 1, 2}, sg[7] = {-1, -1, -1, 0, 1, 1, 1};
    const int bb = b * b;
    const int64_t stride[3] = {1, n, (int64_t)n * n};
    int ijk[3], m = 0;
    gen_cube_cell(n, r, ijk);
    for (int q = 0; q < 7; q++) {
        if (ax[q] >= 0 && (ijk[ax[q]] + sg[q] < 0 || ijk[ax[q]] + sg[q] >= n)) continue;
        const double *blk = ax[q] < 0 ? D : Nb[2 * ax[q] + (sg[q] > 0)];
        cols[m] = ax[q] < 0 ? r : r + sg[q] * stride[ax[q]];
        memcpy(val + (size_t)m * bb, blk, sizeof(double) * (size_t)bb);
        m++;
    }
    return m;
}

void gen_cube_centre(int n, double h, int64_t r, double p[3])
{
    int ijk[3];
    gen_cube_cell(n, r, ijk);
    for (int d = 0; d < 3; d++) p[d] = (ijk[d] + 0.5) * h;
}

/* Blocks of row r of a cube model: its cell and the neighbours inside the cube. */
static int cube_count(const bsr_rowgen *g, int64_t r)
{
    return gen_cube_count(((const gen_cube *)g->par)->n, r);
}

/* Row r of a cube model: the blocks of its cell and of its faces inside the cube. */
static int cube_row(const bsr_rowgen *g, int64_t r, int64_t *cols, double *val)
{
    const gen_cube *c = g->par;
    int ijk[3];
    gen_cube_cell(c->n, r, ijk);
    double D[BSR_MAX_BLOCK * BSR_MAX_BLOCK], Nb[6][BSR_MAX_BLOCK * BSR_MAX_BLOCK];
    c->blocks(c, ijk[0], ijk[1], ijk[2], r, D, Nb);
    const double *const nb[6] = {Nb[0], Nb[1], Nb[2], Nb[3], Nb[4], Nb[5]};
    return gen_cube_row(c->n, c->b, r, D, nb, cols, val);
}

/* x* of a cube model at the centre of row r's cell. */
static void cube_exact(const bsr_rowgen *g, int64_t r, double *x)
{
    const gen_cube *c = g->par;
    double p[3];
    gen_cube_centre(c->n, c->h, r, p);
    for (int q = 0; q < c->b; q++) x[q] = c->exact(q, p);
}

bsr_status gen_cube_args(const char *name, const char *params, int bdef, gen_cube *c, size_t size, gen_args *a,
                         bsr_rowgen *g)
{
    static const char *const pos[] = {"n", "b", NULL};
    memset(g, 0, sizeof *g);
    memset(c, 0, size);
    BSR_TRY(gen_args_parse(name, params, pos, a));
    BSR_TRY(gen_arg_int(a, "n", 20, 3, 640, &c->n));
    return gen_arg_int(a, "b", bdef, 1, BSR_MAX_BLOCK, &c->b);
}

bsr_status gen_cube_rowgen(const gen_cube *par, size_t size, const char *what, bsr_rowgen *g)
{
    gen_cube *keep = bsr_malloc(size, what);
    if (!keep) return BSR_ERR_NOMEM;
    memcpy(keep, par, size);
    keep->h = 1.0 / keep->n;
    g->par = keep;
    g->n = (int64_t)keep->n * keep->n * keep->n;
    g->b = keep->b;
    g->reach = (int64_t)keep->n * keep->n;
    g->count = cube_count;
    g->row = cube_row;
    g->exact = cube_exact;
    return BSR_OK;
}

bsr_status gen_cube_make(const gen_cube_kind *m, const char *params, bsr_rowgen *g)
{
    gen_cube *c = bsr_calloc(1, m->size, m->name);
    if (!c) return BSR_ERR_NOMEM;
    gen_args a;
    bsr_status s = gen_cube_args(m->name, params, m->bdef, c, m->size, &a, g);
    if (!s) s = gen_arg_reals(&a, m->reals, m->nreals, c);
    if (!s) s = gen_arg_seed(&a, (uint64_t *)((char *)c + m->seed_at));
    if (!s) s = gen_args_done(&a);
    if (!s && m->check) s = m->check(c);
    c->blocks = m->blocks;
    c->exact = m->exact;
    if (!s) s = gen_cube_rowgen(c, m->size, m->name, g);
    free(c);
    return s;
}

bsr_status gen_rowgen_generate(bsr_status (*make)(const char *, bsr_rowgen *), const char *params,
                               bsr_precision prec, bsr_problem *P)
{
    bsr_rowgen g;
    BSR_TRY(make(params, &g));
    bsr_status st = bsr_rowgen_problem(&g, prec, P);
    bsr_rowgen_free(&g);
    return st;
}

void bsr_rowgen_free(bsr_rowgen *g)
{
    if (!g) return;
    free(g->par);
    g->par = NULL;
}

/* Value e of a host array of precision prec = v (rounded once, as the
 * generators always stored their values). */
static void store(void *a, bsr_precision prec, size_t e, double v)
{
    if (prec == BSR_DOUBLE) ((double *)a)[e] = v;
    else ((float *)a)[e] = (float)v;
}

/* Row offsets first, then the rows filled in parallel. */
bsr_status bsr_rowgen_matrix(const bsr_rowgen *g, bsr_precision prec, int64_t row0, int nrows, int64_t col0,
                             int ncols, bsr_matrix **W)
{
    int64_t nnz = 0;
    for (int i = 0; i < nrows; i++) nnz += g->count(g, row0 + i);
    if (nnz > INT_MAX)
        return bsr_error(BSR_ERR_UNSUPPORTED, "generator: %lld blocks in block rows %lld..%lld, more than 32-bit "
                         "indices hold (use more ranks)", (long long)nnz, (long long)row0, (long long)(row0 + nrows - 1));
    BSR_TRY(bsr_matrix_alloc(W, nrows, ncols, g->b, (int)nnz, prec));
    bsr_matrix *A = *W;
    A->rowptr[0] = 0;
    for (int i = 0; i < nrows; i++) A->rowptr[i + 1] = A->rowptr[i] + g->count(g, row0 + i);
    const size_t bb = (size_t)g->b * g->b;
#pragma omp parallel for schedule(static) num_threads(bsr_team(nrows, BSR_ROW_GRAIN))
    for (int i = 0; i < nrows; i++) {
        int64_t cols[GEN_ROW_MAXBLK];
        double val[GEN_ROW_MAXBLK * BSR_MAX_BLOCK * BSR_MAX_BLOCK];
        int m = g->row(g, row0 + i, cols, val), p = A->rowptr[i];
        for (int q = 0; q < m; q++) {
            A->colind[p + q] = (int)(cols[q] - col0);
            for (size_t e = 0; e < bb; e++) store(A->val, prec, (size_t)(p + q) * bb + e, val[(size_t)q * bb + e]);
        }
    }
    return BSR_OK;
}

/* One row's b values at a time, in parallel. */
bsr_status bsr_rowgen_exact(const bsr_rowgen *g, bsr_precision prec, int64_t row0, int nrows, bsr_multivec **X)
{
    BSR_TRY(bsr_multivec_create(X, (int64_t)nrows * g->b, 1, prec));
    void *x = (*X)->data;
    const int b = g->b;
#pragma omp parallel for schedule(static) num_threads(bsr_team(nrows, BSR_ROW_GRAIN))
    for (int i = 0; i < nrows; i++) {
        double v[BSR_MAX_BLOCK];
        g->exact(g, row0 + i, v);
        for (int r = 0; r < b; r++) store(x, prec, (size_t)i * b + r, v[r]);
    }
    return BSR_OK;
}

/* The whole problem: all rows over all columns, rhs = A x* as every
 * generator makes it (bsr_problem_make_rhs). */
bsr_status bsr_rowgen_problem(const bsr_rowgen *g, bsr_precision prec, bsr_problem *P)
{
    if (g->n > INT_MAX)
        return bsr_error(BSR_ERR_UNSUPPORTED, "generator: %lld block rows, more than 32-bit indices hold "
                         "(distributed: bsr_generate_rows)", (long long)g->n);
    BSR_TRY(bsr_generate_check_rows(g->name[0] ? g->name : "generator", g->n));
    BSR_TRY(bsr_rowgen_matrix(g, prec, 0, (int)g->n, 0, (int)g->n, &P->A));
    BSR_TRY(bsr_rowgen_exact(g, prec, 0, (int)g->n, &P->xexact));
    if (g->name[0]) snprintf(P->name, sizeof P->name, "%s", g->name);
    return bsr_problem_make_rhs(P);
}
