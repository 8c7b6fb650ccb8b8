/* The matching step of the ILU setup (bsr_ilu_options.match): before the
 * ordering, a maximum-product transversal P and scalings Dr, Dc
 * (reorder/match.c) put large blocks on the diagonal; the ordering Q is then
 * computed on P A's graph, so that the factored matrix Q (P Dr A Dc) Q^T is
 * symmetric-permuted as before (ND tree, level schedules unchanged in kind).
 * The permutation and scalings are chosen at setup and kept by refactor
 * (new values are scaled by the setup's Dr, Dc).
 *
 * auto applies the matching only where the block-Jacobi scaling would fall
 * back: a block row whose diagonal block is missing, zero or numerically
 * singular (an LU pivot <= 1e-14 of the block's largest entry, the test of
 * ilu_setup.c's scale).  A matrix with every diagonal block regular,
 * e.g. every diagonally dominant generator, is left exactly as it was. */
#include "ilu_impl.h"
#include "blockops.h"
#include <math.h>
#include <omp.h>
#include <string.h>

/* Nonzero when some block row of A has a missing, zero or singular diagonal block. */
static int weak_diagonal(const bsr_matrix *A)
{
    const int b = A->b, bb = b * b;
    int weak = 0;
    #pragma omp parallel for schedule(static) reduction(| : weak) if (A->nbrows >= BSR_PAR_ROWS)
    for (int i = 0; i < A->nbrows; i++) {
        int diag = -1;
        for (int p = A->rowptr[i]; p < A->rowptr[i + 1]; p++)
            if (A->colind[p] == i) diag = p;
        if (diag < 0) { weak = 1; continue; }
        double lu[BSR_MAX_BLOCK * BSR_MAX_BLOCK];
        int piv[BSR_MAX_BLOCK];
        for (int e = 0; e < bb; e++)
            lu[e] = A->prec == BSR_DOUBLE ? ((const double *)A->val)[(size_t)diag * bb + e]
                                          : (double)((const float *)A->val)[(size_t)diag * bb + e];
        double amax = bsr_blk_maxabs(b, lu);
        bsr_blk_lu(b, lu, piv, 0.0);
        int singular = amax == 0.0;
        for (int k = 0; k < b; k++) if (fabs(lu[k * b + k]) <= 1e-14 * amax) singular = 1;
        weak |= singular;
    }
    return weak;
}

/* P A's pattern: row j is A's row match[j] (values not set: for the ordering). */
static bsr_status permuted_pattern(const bsr_matrix *A, const int *match, bsr_matrix **PA)
{
    const int n = A->nbrows;
    bsr_matrix *B = bsr_calloc(1, sizeof *B, "matched pattern");
    if (!B) return BSR_ERR_NOMEM;
    *B = (bsr_matrix){.nbrows = n, .nbcols = n, .b = A->b, .nnzb = A->nnzb, .prec = A->prec};
    B->rowptr = bsr_malloc(sizeof(int) * ((size_t)n + 1), "matched pattern");
    B->colind = bsr_malloc(sizeof(int) * ((size_t)A->nnzb + 1), "matched pattern");
    if (!B->rowptr || !B->colind) { free(B->rowptr); free(B->colind); free(B); return BSR_ERR_NOMEM; }
    B->rowptr[0] = 0;
    for (int j = 0; j < n; j++) {
        int r = match[j], len = A->rowptr[r + 1] - A->rowptr[r];
        memcpy(B->colind + B->rowptr[j], A->colind + A->rowptr[r], sizeof(int) * (size_t)len);
        B->rowptr[j + 1] = B->rowptr[j] + len;
    }
    *PA = B;
    return BSR_OK;
}

static void pattern_free(bsr_matrix *B)
{
    if (!B) return;
    free(B->rowptr); free(B->colind); free(B);
}

bsr_status ilu_match_start(bsr_ilu *F, const bsr_matrix *A, bsr_matrix **PA, int **match)
{
    *PA = NULL;
    *match = NULL;
    F->st.match_note = "";
    const int m = F->opt.match;
    if (m == BSR_MATCH_NONE) return BSR_OK;
    double t0 = omp_get_wtime();
    bsr_status s = BSR_OK;
    if (F->opt.symbolic_only) {
        if (m == BSR_MATCH_MPT)
            return bsr_error(BSR_ERR_UNSUPPORTED, "ILU: match=mpt needs the values factored on the host "
                             "(the device factorization takes one symmetric permutation): use factor=cpu "
                             "on the CPU backend, or match=none");
        F->st.match_note = "values factored on the device";
    } else if (m == BSR_MATCH_AUTO && !weak_diagonal(A)) {
        F->st.match_note = "no zero or singular diagonal block";
    } else {
        bsr_matching *M = NULL;
        s = bsr_match_mpt(A, &M);
        if (s == BSR_ERR_SINGULAR && m == BSR_MATCH_AUTO) {
            bsr_clear_error();
            s = BSR_OK;
            F->st.match_note = "structurally singular";
        } else if (!s) {
            s = permuted_pattern(A, M->match, PA);
            if (!s) {
                F->dr = M->dr; F->dc = M->dc; *match = M->match;
                M->dr = M->dc = NULL; M->match = NULL;
                F->st.match_used = 1;
                F->st.match_nperm = M->nperm;
            }
        }
        bsr_matching_free(M);
    }
    F->st.match_s = omp_get_wtime() - t0;
    bsr_prof_mark("ilu setup: matching");
    return s;
}

bsr_status ilu_match_finish(bsr_ilu *F, bsr_matrix *PA, int *match)
{
    bsr_status s = BSR_OK;
    if (PA) {
        F->rsrc = bsr_malloc(sizeof(int) * ((size_t)F->n + 1), "ILU matched rows");
        if (!F->rsrc) s = BSR_ERR_NOMEM;
        else for (int k = 0; k < F->n; k++) F->rsrc[k] = match[F->ord ? F->ord->perm[k] : k];
    }
    pattern_free(PA);
    free(match);
    return s;
}
