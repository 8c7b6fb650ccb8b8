/* stencil3d:G:B -- a 3D 7-point block stencil on a G^3 grid with b x b blocks.
 * Diagonal blocks 6.5 I + small deterministic perturbation, neighbour blocks
 * -(I + small perturbation): nonsymmetric, block diagonally dominant, so every
 * method converges; exact solution x*(i) = sin-like deterministic values. */
#include "internal.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

bsr_status bsr_problem_make_rhs(bsr_problem *P);

/* Deterministic value in [-1,1) from integer coordinates. */
static double hash01(uint64_t a, uint64_t b)
{
    return 2.0 * bsr_hash01(a, b) - 1.0; /* exact: scaling by 2 */
}

/* Parse "G[:B]" strictly. */
static bsr_status parse(const char *params, int *G, int *B)
{
    char *end;
    long g = strtol(params, &end, 10), bb = 4;
    if (end == params || g < 1 || g > 2000)
        return bsr_error(BSR_ERR_ARG, "stencil3d: grid size '%s' must be an integer 1..2000", params);
    if (*end == ':') {
        const char *q = end + 1;
        bb = strtol(q, &end, 10);
        if (end == q || bb < 1 || bb > BSR_MAX_BLOCK)
            return bsr_error(BSR_ERR_ARG, "stencil3d: block size '%s' must be 1..%d", q, BSR_MAX_BLOCK);
    }
    if (*end) return bsr_error(BSR_ERR_ARG, "stencil3d: unexpected '%s' in parameters", end);
    *G = (int)g; *B = (int)bb;
    return BSR_OK;
}

/* bsr_generate entry of stencil3d:G[:B]: the 3D 7-point block stencil, rhs = A x*. */
bsr_status bsr_gen_stencil3d(const char *params, bsr_precision prec, bsr_problem *P)
{
    int G = 0, b = 0;
    BSR_TRY(parse(params, &G, &b));
    int64_t N64 = (int64_t)G * G * G;
    if (N64 * 7 > INT32_MAX) return bsr_error(BSR_ERR_UNSUPPORTED, "stencil3d: grid %d too large", G);
    int N = (int)N64;
    bsr_matrix *A;
    int nnzb = 0;
    for (int z = 0; z < G; z++) /* count blocks */
        for (int y = 0; y < G; y++)
            for (int x = 0; x < G; x++)
                nnzb += 1 + (x > 0) + (x < G - 1) + (y > 0) + (y < G - 1) + (z > 0) + (z < G - 1);
    BSR_TRY(bsr_matrix_alloc(&A, N, N, b, nnzb, prec));
    P->A = A;
    int p = 0;
    A->rowptr[0] = 0;
    for (int z = 0; z < G; z++)
        for (int y = 0; y < G; y++)
            for (int x = 0; x < G; x++) {
                int i = (z * G + y) * G + x;
                int nb[7], m = 0; /* neighbours in increasing column order */
                if (z > 0) nb[m++] = i - G * G;
                if (y > 0) nb[m++] = i - G;
                if (x > 0) nb[m++] = i - 1;
                nb[m++] = i;
                if (x < G - 1) nb[m++] = i + 1;
                if (y < G - 1) nb[m++] = i + G;
                if (z < G - 1) nb[m++] = i + G * G;
                for (int q = 0; q < m; q++, p++) {
                    int j = nb[q];
                    A->colind[p] = j;
                    for (int r = 0; r < b; r++)
                        for (int c = 0; c < b; c++) {
                            double h = hash01((uint64_t)i * 7 + q, (uint64_t)r * 16 + c);
                            double v = (j == i) ? (r == c ? 6.5 : 0.0) + 0.3 * h / b
                                                : (r == c ? -1.0 : 0.0) + 0.1 * h / b;
                            size_t e = ((size_t)p * b + r) * b + c;
                            if (prec == BSR_DOUBLE) ((double *)A->val)[e] = v;
                            else ((float *)A->val)[e] = (float)v;
                        }
                }
                A->rowptr[i + 1] = p;
            }
    BSR_TRY(bsr_multivec_create(&P->xexact, (int64_t)N * b, 1, prec));
    for (int64_t e = 0; e < (int64_t)N * b; e++) {
        double v = 1.0 + 0.5 * sin(0.001 * (double)e);
        if (prec == BSR_DOUBLE) ((double *)P->xexact->data)[e] = v;
        else ((float *)P->xexact->data)[e] = (float)v;
    }
    snprintf(P->name, sizeof P->name, "stencil3d:%d:%d", G, b);
    return bsr_problem_make_rhs(P);
}
