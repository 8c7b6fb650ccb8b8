/* Chunk schedule of a triangle for the GPU tile kernel (issue 6): with a
 * narrow band (natural 3D order: L reaches one grid plane back), cutting the
 * rows into ranges of one band width leaves each range depending only on
 * itself and the range before; a CUDA block solves a range level by level
 * (its own levels, a barrier apart) and waits on the earlier range only
 * where a row reads it, so the dependency chain between CUDA blocks is the
 * number of ranges, not the number of levels. */
#include "internal.h"
#include "../kernels/trsv.h"
#include <string.h>

void bsr_trsv_chunks_free(bsr_trsv_chunks *ch)
{
    if (!ch) return;
    free(ch->rows); free(ch->lptr); free(ch->cptr);
    memset(ch, 0, sizeof *ch);
}

int bsr_trsv_bandwidth(const bsr_matrix *M, int upper)
{
    int bw = 0;
#pragma omp parallel for schedule(static) reduction(max : bw) if (M->nbrows >= BSR_PAR_ROWS)
    for (int i = 0; i < M->nbrows; i++)
        for (int p = M->rowptr[i]; p < M->rowptr[i + 1]; p++) {
            int d = upper ? M->colind[p] - i : i - M->colind[p];
            if (d > bw) bw = d;
        }
    return bw;
}

/* Row at position q of the solve order. */
static int solve_row(int n, int upper, int q) { return upper ? n - 1 - q : q; }

/* Local levels of chunk c's rows (lev[q] for its solve positions q); returns
 * the chunk's level count. */
static int chunk_levels(const bsr_matrix *M, int upper, int q0, int q1, int *lev)
{
    const int n = M->nbrows;
    int nl = 0;
    for (int q = q0; q < q1; q++) {
        const int i = solve_row(n, upper, q);
        int l = 0;
        for (int p = M->rowptr[i]; p < M->rowptr[i + 1]; p++) {
            const int j = M->colind[p], qj = solve_row(n, upper, j);
            if (j != i && qj >= q0 && qj < q && lev[qj] + 1 > l) l = lev[qj] + 1;
        }
        lev[q] = l;
        if (l + 1 > nl) nl = l + 1;
    }
    return nl;
}

bsr_status bsr_trsv_chunks_build(const bsr_matrix *M, int upper, int C, bsr_trsv_chunks *ch)
{
    BSR_CHECK_ARG(M && ch && C >= 1, "bsr_trsv_chunks_build: bad argument");
    memset(ch, 0, sizeof *ch);
    const int n = M->nbrows, nc = n ? (n + C - 1) / C : 0;
    int *lev = bsr_malloc((size_t)(n ? n : 1) * sizeof(int), "chunk levels");
    ch->rows = bsr_malloc((size_t)(n ? n : 1) * sizeof(int), "chunk rows");
    ch->cptr = bsr_calloc((size_t)nc + 1, sizeof(int), "chunk level pointers");
    if (!lev || !ch->rows || !ch->cptr) { free(lev); bsr_trsv_chunks_free(ch); return BSR_ERR_NOMEM; }
    ch->n = n; ch->C = C; ch->nchunks = nc;
#pragma omp parallel for schedule(dynamic, 1)
    for (int c = 0; c < nc; c++) {
        const int q0 = c * C, q1 = q0 + C < n ? q0 + C : n;
        ch->cptr[c + 1] = chunk_levels(M, upper, q0, q1, lev);
    }
    for (int c = 0; c < nc; c++) ch->cptr[c + 1] += ch->cptr[c];
    ch->nl = ch->cptr[nc];
    ch->lptr = bsr_calloc((size_t)ch->nl + 1, sizeof(int), "chunk level starts");
    if (!ch->lptr) { free(lev); bsr_trsv_chunks_free(ch); return BSR_ERR_NOMEM; }
    /* counting sort of each chunk by level (rows in solve order within a
     * level); a chunk touches only its own level starts */
#pragma omp parallel for schedule(dynamic, 1)
    for (int c = 0; c < nc; c++) {
        const int q0 = c * C, q1 = q0 + C < n ? q0 + C : n, nlc = ch->cptr[c + 1] - ch->cptr[c];
        int *lp = ch->lptr + ch->cptr[c];
        for (int q = q0; q < q1; q++) lp[lev[q]]++;
        for (int l = 0, start = q0; l < nlc; l++) { int cnt = lp[l]; lp[l] = start; start += cnt; }
        for (int q = q0; q < q1; q++) ch->rows[lp[lev[q]]++] = solve_row(n, upper, q);
        for (int l = nlc - 1; l > 0; l--) lp[l] = lp[l - 1]; /* cursors ended at the next level's start */
        if (nlc > 0) lp[0] = q0;
    }
    ch->lptr[ch->nl] = n;
    free(lev);
    return BSR_OK;
}
