/* SPDX-License-Identifier: BSD-3-Clause */
/* Structured-grid scalar problems (bsr_stencil): the builder shared by the
 * scalar generators, conversion to a BSR problem, residual, and the table
 * behind bsr_stencil_generate. */
#include "stencil_impl.h"
#include <math.h>
#include <string.h>

/* Free a structured system's arrays and zero it. */
void bsr_stencil_free(bsr_stencil *S)
{
    if (!S) return;
    free(S->coef); free(S->f); free(S->xexact); free(S->hole);
    memset(S, 0, sizeof *S);
}

static const int DI[7] = {0, -1, 1, 0, 0, 0, 0}, DJ[7] = {0, 0, 0, -1, 1, 0, 0},
                 DK[7] = {0, 0, 0, 0, 0, -1, 1};

/* Fill S from the row and exact-solution callbacks on grid g (boundary and holes folded into
 * f). */
bsr_status stc_build(bsr_stencil *S, const gen_grid *g, stc_row_fn row, stc_exact_fn ex,
                     void *ctx, int manufactured)
{
    memset(S, 0, sizeof *S);
    S->dim = g->dim; S->nx = g->nx; S->ny = g->ny; S->nz = g->nz;
    S->ncoef = g->dim == 3 ? 7 : 5;
    int64_t n = S->n = (int64_t)g->nx * g->ny * g->nz;
    S->coef = bsr_malloc((size_t)n * S->ncoef * sizeof(double), "stencil coefficients");
    S->f = bsr_malloc((size_t)n * sizeof(double), "stencil right-hand side");
    S->xexact = bsr_malloc((size_t)n * sizeof(double), "stencil exact solution");
    if (g->holes > 0) S->hole = bsr_malloc((size_t)n, "stencil hole mask");
    if (!S->coef || !S->f || !S->xexact || (g->holes > 0 && !S->hole)) {
        bsr_stencil_free(S);
        return BSR_ERR_NOMEM;
    }
    const int nx = g->nx, ny = g->ny, nz = g->nz, nc = S->ncoef;
    if (S->hole) {
        int64_t nh = 0;
        #pragma omp parallel for collapse(2) reduction(+:nh) if (bsr_par_worth(n)) num_threads(bsr_team_size())
        for (int k = 0; k < nz; k++)
            for (int j = 0; j < ny; j++)
                for (int i = 0; i < nx; i++) {
                    int h = gen_grid_hole(g, i, j, k);
                    S->hole[((int64_t)k * ny + j) * nx + i] = (unsigned char)h;
                    nh += h;
                }
        S->nholes = nh;
    }
    #pragma omp parallel for collapse(2) if (bsr_par_worth(n)) num_threads(bsr_team_size())
    for (int k = 0; k < nz; k++)
        for (int j = 0; j < ny; j++)
            for (int i = 0; i < nx; i++) {
                int64_t p = ((int64_t)k * ny + j) * nx + i;
                double a[7] = {0}, f = 0, x = ex(ctx, i, j, k);
                S->xexact[p] = x;
                if (S->hole && S->hole[p]) {
                    a[0] = 1; f = x;
                } else {
                    row(ctx, i, j, k, a, &f);
                    for (int d = 1; d < nc; d++) {
                        int ni = i + DI[d], nj = j + DJ[d], nk = k + DK[d];
                        int out = ni < 0 || ni >= nx || nj < 0 || nj >= ny || nk < 0 || nk >= nz;
                        if (!out && !(S->hole && S->hole[((int64_t)nk * ny + nj) * nx + ni])) continue;
                        /* Dirichlet value: the boundary or the switched-off cell keeps x* */
                        if (!manufactured) f -= a[d] * ex(ctx, ni, nj, nk);
                        a[d] = 0;
                    }
                    if (manufactured) { /* f = A x* over the kept neighbours */
                        f = 0;
                        for (int d = 0; d < nc; d++)
                            if (a[d] != 0) f += a[d] * ex(ctx, i + DI[d], j + DJ[d], k + DK[d]);
                    }
                }
                for (int d = 0; d < nc; d++) S->coef[d * n + p] = a[d];
                S->f[p] = f;
            }
    return BSR_OK;
}

/* max_i |f_i - (A u)_i| of the structured system. */
double bsr_stencil_resid_max(const bsr_stencil *S, const double *u)
{
    if (!S || !u || !S->coef || !S->f) return NAN; /* no status to return: NaN fails every comparison */
    const int64_t n = S->n, sx = 1, sy = S->nx, sz = (int64_t)S->nx * S->ny;
    const int64_t off[7] = {0, -sx, sx, -sy, sy, -sz, sz};
    double rmax = 0;
    #pragma omp parallel for reduction(max:rmax) if (bsr_par_worth(n)) num_threads(bsr_team_size())
    for (int64_t p = 0; p < n; p++) {
        double r = S->f[p] - S->coef[p] * u[p];
        for (int d = 1; d < S->ncoef; d++) {
            double a = S->coef[d * n + p];
            if (a != 0) r -= a * u[p + off[d]];
        }
        rmax = fmax(rmax, fabs(r));
    }
    return rmax;
}

/* P = S as a BSR problem (b = 1, switched-off cells dropped) with rhs and exact solution. */
bsr_status bsr_stencil_to_problem(const bsr_stencil *S, bsr_precision prec, bsr_problem *P)
{
    BSR_CHECK_ARG(S && P && S->coef, "bsr_stencil_to_problem: NULL argument");
    memset(P, 0, sizeof *P);
    BSR_CHECK_ARG(prec == BSR_DOUBLE || prec == BSR_FLOAT,
                  "bsr_stencil_to_problem: precision %d is neither BSR_DOUBLE nor BSR_FLOAT", (int)prec);
    const int64_t n = S->n, sx = 1, sy = S->nx, sz = (int64_t)S->nx * S->ny;
    const int64_t off[7] = {0, -sx, sx, -sy, sy, -sz, sz};
    static const int order[7] = {BSR_STC_B, BSR_STC_S, BSR_STC_W, BSR_STC_C, BSR_STC_E, BSR_STC_N, BSR_STC_T};
    int *map = bsr_malloc((size_t)n * sizeof(int), "stencil index map");
    if (!map) return BSR_ERR_NOMEM;
    int na = 0, nnz = 0;
    for (int64_t p = 0; p < n; p++) {
        map[p] = (S->hole && S->hole[p]) ? -1 : na++;
        if (map[p] < 0) continue;
        for (int d = 0; d < S->ncoef; d++) nnz += d == 0 || S->coef[d * n + p] != 0;
    }
    bsr_matrix *A;
    bsr_status s = bsr_matrix_alloc(&A, na, na, 1, nnz, prec);
    if (s) { free(map); return s; }
    P->A = A;
    if ((s = bsr_multivec_create(&P->rhs, na, 1, prec)) || (s = bsr_multivec_create(&P->xexact, na, 1, prec))) {
        free(map); bsr_problem_free(P); return s;
    }
    int q = 0;
    A->rowptr[0] = 0;
    for (int64_t p = 0; p < n; p++) {
        int r = map[p];
        if (r < 0) continue;
        for (int o = 0; o < 7; o++) {
            int d = order[o];
            if (d >= S->ncoef) continue;
            double a = S->coef[d * n + p];
            if (d != 0 && a == 0) continue;
            A->colind[q] = map[p + off[d]];
            if (prec == BSR_DOUBLE) ((double *)A->val)[q] = a; else ((float *)A->val)[q] = (float)a;
            q++;
        }
        A->rowptr[r + 1] = q;
        if (prec == BSR_DOUBLE) {
            ((double *)P->rhs->data)[r] = S->f[p];
            ((double *)P->xexact->data)[r] = S->xexact[p];
        } else {
            ((float *)P->rhs->data)[r] = (float)S->f[p];
            ((float *)P->xexact->data)[r] = (float)S->xexact[p];
        }
    }
    free(map);
    snprintf(P->name, sizeof P->name, "%s", S->name);
    return BSR_OK;
}

/* bsr_generate adapter: run a structured generator, convert to a BSR problem. */
bsr_status stc_problem(stc_gen_fn fn, const char *params, bsr_precision prec, bsr_problem *P)
{
    bsr_stencil S;
    BSR_TRY(fn(params, &S));
    bsr_status s = bsr_stencil_to_problem(&S, prec, P);
    bsr_stencil_free(&S);
    return s;
}

/* The scalar generators (gen_poisson.c, gen_convdiff.c, gen_elliptic2d.c). */
bsr_status bsr_stc_poisson2d(const char *params, bsr_stencil *S);
bsr_status bsr_stc_poisson3d(const char *params, bsr_stencil *S);
bsr_status bsr_stc_heat2d(const char *params, bsr_stencil *S);
bsr_status bsr_stc_heat3d(const char *params, bsr_stencil *S);
bsr_status bsr_stc_elliptic2d(const char *params, bsr_stencil *S);
bsr_status bsr_stc_convdiff2d(const char *params, bsr_stencil *S);
bsr_status bsr_stc_convdiff3d(const char *params, bsr_stencil *S);

static const struct { const char *name; stc_gen_fn fn; } scalar_gens[] = {
    {"poisson2d", bsr_stc_poisson2d}, {"poisson3d", bsr_stc_poisson3d},
    {"heat2d", bsr_stc_heat2d},       {"heat3d", bsr_stc_heat3d},
    {"elliptic2d", bsr_stc_elliptic2d},
    {"convdiff2d", bsr_stc_convdiff2d}, {"convdiff3d", bsr_stc_convdiff3d},
};

/* Structured system of a generator spec NAME:PARAMS (scalar generators only). */
bsr_status bsr_stencil_generate(const char *spec, bsr_stencil *S)
{
    BSR_CHECK_ARG(spec && S, "bsr_stencil_generate: NULL argument");
    memset(S, 0, sizeof *S);
    const char *colon = strchr(spec, ':');
    size_t len = colon ? (size_t)(colon - spec) : strlen(spec);
    for (size_t i = 0; i < sizeof scalar_gens / sizeof scalar_gens[0]; i++)
        if (strlen(scalar_gens[i].name) == len && !strncmp(spec, scalar_gens[i].name, len)) {
            BSR_TRY(scalar_gens[i].fn(colon ? colon + 1 : "", S));
            snprintf(S->name, sizeof S->name, "%s", spec);
            return BSR_OK;
        }
    return bsr_error(BSR_ERR_ARG, "bsr_stencil_generate: '%.*s' is not a scalar structured generator "
                     "(poisson2d|poisson3d|heat2d|heat3d|elliptic2d|convdiff2d|convdiff3d)", (int)len, spec);
}

/* bsr_generate entries for the scalar generators (table in generate.c). */
#define STC_GEN(name) \
    bsr_status bsr_gen_##name(const char *params, bsr_precision prec, bsr_problem *P); \
    bsr_status bsr_gen_##name(const char *params, bsr_precision prec, bsr_problem *P) \
    { return stc_problem(bsr_stc_##name, params, prec, P); }
STC_GEN(poisson2d)
STC_GEN(poisson3d)
STC_GEN(heat2d)
STC_GEN(heat3d)
STC_GEN(elliptic2d)
STC_GEN(convdiff2d)
STC_GEN(convdiff3d)
