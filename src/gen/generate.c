/* SPDX-License-Identifier: BSD-3-Clause */
/* bsr_generate: problems from a spec "NAME:PARAMS", with exact solutions.
 * Each generator builds A, sets xexact and rhs = A*xexact. */
#include "internal.h"
#include <stdio.h>
#include <string.h>

bsr_status bsr_gen_stencil3d(const char *params, bsr_precision prec, bsr_problem *P);
/* structured generators (src/stencil/stencil.c, src/gen/gen_cfd3d.c) */
bsr_status bsr_gen_poisson2d(const char *params, bsr_precision prec, bsr_problem *P);
bsr_status bsr_gen_poisson3d(const char *params, bsr_precision prec, bsr_problem *P);
bsr_status bsr_gen_heat2d(const char *params, bsr_precision prec, bsr_problem *P);
bsr_status bsr_gen_heat3d(const char *params, bsr_precision prec, bsr_problem *P);
bsr_status bsr_gen_elliptic2d(const char *params, bsr_precision prec, bsr_problem *P);
bsr_status bsr_gen_convdiff2d(const char *params, bsr_precision prec, bsr_problem *P);
bsr_status bsr_gen_convdiff3d(const char *params, bsr_precision prec, bsr_problem *P);
bsr_status bsr_gen_cfd3d(const char *params, bsr_precision prec, bsr_problem *P);
bsr_status bsr_gen_rotconv3d(const char *params, bsr_precision prec, bsr_problem *P);
bsr_status bsr_gen_coupled3d(const char *params, bsr_precision prec, bsr_problem *P);

typedef bsr_status (*gen_fn)(const char *params, bsr_precision prec, bsr_problem *P);
static const struct { const char *name; gen_fn fn; const char *usage; } generators[] = {
    {"stencil3d", bsr_gen_stencil3d, "stencil3d:G[:B]  3D 7-point block stencil, G^3 block rows, b = B (1..10, default 4)"},
    {"poisson2d", bsr_gen_poisson2d, "poisson2d:N[,ax=,ay=]  5-point -(ax u_xx + ay u_yy), unit square, N points per side incl. boundary (default 33)"},
    {"poisson3d", bsr_gen_poisson3d, "poisson3d:N[,ax=,ay=,az=]  7-point Laplacian, unit cube (default N 17)"},
    {"heat2d", bsr_gen_heat2d, "heat2d:N,DT[,scheme=be|cn]  one implicit heat step, A = I/dt + theta*L (dt default 1e-3, be: theta 1, cn: 1/2)"},
    {"heat3d", bsr_gen_heat3d, "heat3d:N,DT[,scheme=be|cn]  the same in 3D"},
    {"elliptic2d", bsr_gen_elliptic2d, "elliptic2d:N[,sigma=invxy|one,x0=,x1=,y0=,y1=]  div(sigma grad u) = f, sigma at half points, [1,2]^2, "
                                      "u = x^3 y^3; PDE rhs: error_vs_exact = discretization + solver error"},
    {"convdiff2d", bsr_gen_convdiff2d, "convdiff2d:N,PE[,scheme=upwind|central]  -lap u + pe(1,1/2).grad u (pe default 10)"},
    {"convdiff3d", bsr_gen_convdiff3d, "convdiff3d:N,PE[,scheme=upwind|central]  the same in 3D, beta = pe(1,1/2,1/4)"},
    {"cfd3d", bsr_gen_cfd3d, "cfd3d:N,B,CONV[,model=inc|comp,scheme=upwind|central,nu=,kappa=,stab=,dt=,beta=,mach=,gamma=]  "
                            "linearized flow (u,v,w,p[,T]), b = 4|5, dense coupling blocks (default 12,4,10)"},
    {"rotconv3d", bsr_gen_rotconv3d, "rotconv3d:N,B[,conv=,nu=,couple=,kcouple=,cfl=,swirl=,seed=]  b coupled species in a vortex, "
                                    "N^3 cells, upwind, dense nonsymmetric blocks: ILU(0) fails, ILU2 converges (default 20,4)"},
    {"coupled3d", bsr_gen_coupled3d, "coupled3d:N,B[,pemin=,pemax=,couple=,ncouple=,shift=,seed=]  b unknowns a cell, N^3 cells, "
                                    "rotating upwind convection (cell Peclet pemin..pemax), zero-row-sum diffusion, blocks "
                                    "d(I+S+C) and -w(I+ncouple C): smooth modes indefinite, ILU(0) fails (default 20,5)"},
};
#define NGEN (sizeof generators / sizeof generators[0])

/* Print the generators' usage lines to f (for --help). */
void bsr_generate_usage(FILE *f)
{
    for (size_t i = 0; i < NGEN; i++) fprintf(f, "    %s\n", generators[i].usage);
    fprintf(f, "    every generator: items separated by ',' or ':', bare values are positional in the order shown,\n"
               "    or key=value (stencil3d: g=, b=); the structured ones (all but stencil3d, rotconv3d,\n"
               "    coupled3d) also take nx=,ny=[,nz=] (points per direction incl. boundary), holes=F (fraction\n"
               "    0..0.9 of cells switched off), seed=S.\n"
               "    Unless stated, xexact is a smooth manufactured field and rhs = A*xexact, so\n"
               "    error_vs_exact measures the solver alone.\n");
}

/* Free a generated problem's matrix and vectors and zero the struct. */
void bsr_problem_free(bsr_problem *P)
{
    if (!P) return;
    bsr_matrix_destroy(P->A);
    bsr_multivec_destroy(P->rhs);
    bsr_multivec_destroy(P->xexact);
    memset(P, 0, sizeof *P);
}

/* Set P->rhs = A * P->xexact (k columns of xexact). */
bsr_status bsr_problem_make_rhs(bsr_problem *P)
{
    BSR_TRY(bsr_multivec_create(&P->rhs, (int64_t)P->A->nbrows * P->A->b, P->xexact->k, P->A->prec));
    return bsr_spmm_cpu(BSR_SPMM_OMP, 1.0, P->A, P->xexact, 0.0, P->rhs);
}

/* Problem (A, rhs, exact solution) of a generator spec NAME:PARAMS; BSR_ERR_ARG for unknown
 * names. */
bsr_status bsr_generate(const char *spec, bsr_precision prec, bsr_problem *P)
{
    BSR_CHECK_ARG(spec && P, "bsr_generate: NULL argument");
    memset(P, 0, sizeof *P);
    bsr_threads_default();
    BSR_CHECK_ARG(prec == BSR_DOUBLE || prec == BSR_FLOAT, "bsr_generate: %s: precision %d is neither BSR_DOUBLE nor BSR_FLOAT",
                  spec, (int)prec);
    const char *colon = strchr(spec, ':');
    size_t len = colon ? (size_t)(colon - spec) : strlen(spec);
    for (size_t i = 0; i < NGEN; i++)
        if (strlen(generators[i].name) == len && !strncmp(spec, generators[i].name, len)) {
            bsr_status s = generators[i].fn(colon ? colon + 1 : "", prec, P);
            if (s) { bsr_problem_free(P); return s; }
            if (!P->name[0]) snprintf(P->name, sizeof P->name, "%s", spec);
            return BSR_OK;
        }
    return bsr_error(BSR_ERR_ARG, "bsr_generate: unknown generator '%.*s' (see bsrsolve --help for the list)", (int)len, spec);
}
