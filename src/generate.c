/* bsr_generate: problems from a spec "NAME:PARAMS", with exact solutions.
 * Each generator builds A, sets xexact and rhs = A*xexact. */
#include "internal.h"
#include <stdio.h>
#include <string.h>

bsr_status bsr_gen_stencil3d(const char *params, bsr_precision prec, bsr_problem *P);

typedef bsr_status (*gen_fn)(const char *params, bsr_precision prec, bsr_problem *P);
static const struct { const char *name; gen_fn fn; const char *usage; } generators[] = {
    {"stencil3d", bsr_gen_stencil3d, "stencil3d:G[:B]  3D 7-point block stencil, G^3 block rows, b = B (1..10, default 4)"},
};
#define NGEN (sizeof generators / sizeof generators[0])

/* Print the generators' usage lines to f (for --help). */
void bsr_generate_usage(FILE *f)
{
    for (size_t i = 0; i < NGEN; i++) fprintf(f, "    %s\n", generators[i].usage);
}

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

bsr_status bsr_generate(const char *spec, bsr_precision prec, bsr_problem *P)
{
    BSR_CHECK_ARG(spec && P, "bsr_generate: NULL argument");
    memset(P, 0, sizeof *P);
    const char *colon = strchr(spec, ':');
    size_t len = colon ? (size_t)(colon - spec) : strlen(spec);
    for (size_t i = 0; i < NGEN; i++)
        if (strlen(generators[i].name) == len && !strncmp(spec, generators[i].name, len)) {
            bsr_status s = generators[i].fn(colon ? colon + 1 : "", prec, P);
            if (s) { bsr_problem_free(P); return s; }
            if (!P->name[0]) snprintf(P->name, sizeof P->name, "%s", spec);
            return BSR_OK;
        }
    return bsr_error(BSR_ERR_ARG, "bsr_generate: unknown generator '%.*s' (try stencil3d:G:B)", (int)len, spec);
}
