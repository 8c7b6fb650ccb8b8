/* SPDX-License-Identifier: BSD-3-Clause */
/* Two levels (option coarse=M with ILU0, ILUT or ILU2 on the CPU backend):
 * the ILU S as the smoother and a coarse correction whose basis is made of
 * the modes S leaves, on aggregates of A's block graph (adaptive aggregation,
 * as alpha-SA and bootstrap AMG build theirs):
 *   M^{-1} r:  z = S^{-1} r;  z += P Ac^{-1} P^T (r - A z);  z += S^{-1} (r - A z).
 * Why: on coupled systems whose low modes the coupling turns indefinite the
 * ILU's iterations grow with every refinement of the grid (coupled3d with
 * couple=0.3, b = 5: 95 -> 322 BiCGStab iterations from 64k to 216k block
 * rows with ILU2's capped factor); there the modes
 * it misses are not smooth field by field (each cell's coupling block turns
 * them), so a coarse space of constants per field does not hold them
 * (bench/twolevel_probe.py) and one made from them does
 * (bench/adaptive_probe.py: 13 and 19 iterations).
 * Setup: aggregates of about COARSE_AGG_ROWS block rows (bsr_partition);
 * K = 2M test vectors (at most one an unknown), deterministic
 * pseudo-random, then COARSE_STEPS steps X <- orth((I - S^{-1} A) X)
 * (subspace iteration: the modes where S^{-1} A is far from I grow; a step
 * whose vectors lose rank, where S is exact on some modes, or stop being
 * finite, is not taken); on each aggregate the leading left singular
 * vectors of X restricted to its unknowns, at most M, as P's columns there
 * (orthonormal; those under COARSE_RANK of the first dropped); Ac = P^T A P
 * as a scalar CSR matrix factored by UMFPACK.  Refactor redoes all but the
 * aggregates.  Every step sums in a fixed order: the same bits on any
 * number of threads. */
#include "precond_impl.h"
#include <math.h>
#include <omp.h>
#include <string.h>
#if __has_include(<suitesparse/umfpack.h>)
#include <suitesparse/umfpack.h>
#else
#include <umfpack.h>
#endif

/* Block rows an aggregate, about (a 6^3 box of a 3D grid).  coupled3d:60,5,couple=0.3
 * (216k block rows) with coarse=8, 2 threads: 64 rows 21 iterations, 59 s in all (UMFPACK's
 * factor of the 27,000 coarse unknowns 23 s and its solves most of each apply); 216 rows 29
 * iterations, 24 s; 343 rows 29, 22 s; 512 rows 39, 24 s; at 64k block rows 216 rows take 16
 * iterations, 343 rows 26 (bench/RESULTS.md). */
#define COARSE_AGG_ROWS 216
#define COARSE_STEPS 8       /* smoothing steps of the test vectors (4: 50 iterations where 8 take 29, 12 take 32) */
#define COARSE_RANK 1e-10    /* a singular value under this fraction of the first is dropped */
#define COARSE_CHUNK 4096    /* rows of a partial Gram matrix (fixed: the sums' order) */

typedef struct {
    bsr_pc *S;              /* the ILU (the smoother), made by the table's factory */
    const bsr_matrix *A;    /* the matrix of the last setup or refactor (the apply's products) */
    int n, b, m, K;         /* block rows, block size, vectors an aggregate keeps at most, test vectors */
    int na;                 /* aggregates */
    int *part;              /* [n] aggregate of each block row */
    int *aptr, *acell;      /* aggregate g's block rows acell[aptr[g] .. aptr[g+1]), ascending */
    int *loc;               /* [n] a block row's place in its aggregate */
    int *cptr;              /* [na+1] aggregate g's coarse unknowns cptr[g] .. cptr[g+1] */
    int64_t *poff;          /* [na+1] aggregate g's basis at P + poff[g]: (its rows * b) x m_g, row-major */
    double *P;
    int nc;                 /* coarse unknowns */
    SuiteSparse_long *cp, *ci;   /* Ac as CSR (passed to UMFPACK as the CSC of Ac^T) */
    double *cv;
    void *num;              /* UMFPACK's numeric factor of Ac */
    bsr_multivec *T, *W;    /* the apply's residual and smoother output, kept while k stays */
    double *rc;             /* [nc * k] coarse right-hand sides, then solutions (column-major) */
    double *ec;
    int valid;              /* the last setup or refactor succeeded */
} coarse;

/* UMFPACK's status as the library's, naming the call. */
static bsr_status umf_status(const char *call, long st)
{
    if (st == UMFPACK_OK) return BSR_OK;
    if (st == UMFPACK_WARNING_singular_matrix)
        return bsr_error(BSR_ERR_SINGULAR, "coarse=: the coarse matrix P^T A P is singular (UMFPACK %s)", call);
    return bsr_error(st == UMFPACK_ERROR_out_of_memory ? BSR_ERR_NOMEM : BSR_ERR_INTERNAL,
                     "coarse=: UMFPACK %s failed (status %ld)", call, st);
}

/* X (N x K, row-interleaved) <- X R^{-1}, X^T X = R^T R: an orthonormal
 * basis of its columns (one Cholesky QR; called twice).  The Gram matrix is
 * summed chunk by chunk, the chunks in order.  BSR_ERR_VALUE when X is not
 * finite or has lost a column (the smoother diverged beyond rounding). */
static bsr_status chol_qr(double *X, int64_t N, int K)
{
    const int64_t nch = (N + COARSE_CHUNK - 1) / COARSE_CHUNK;
    double *part = bsr_calloc((size_t)(nch ? nch : 1) * K * K, sizeof(double), "coarse Gram matrices");
    double R[BSR_COARSE_MAX * 2 * BSR_COARSE_MAX * 2];
    if (!part) return BSR_ERR_NOMEM;
    #pragma omp parallel for schedule(static) if (bsr_par_worth(N * K * K)) num_threads(bsr_team_size())
    for (int64_t c = 0; c < nch; c++) {
        double *g = part + (size_t)c * K * K;
        const int64_t r1 = (c + 1) * COARSE_CHUNK < N ? (c + 1) * COARSE_CHUNK : N;
        for (int64_t r = c * COARSE_CHUNK; r < r1; r++) {
            const double *x = X + r * K;
            for (int p = 0; p < K; p++)
                for (int q = p; q < K; q++) g[p * K + q] += x[p] * x[q];
        }
    }
    for (int e = 0; e < K * K; e++) R[e] = 0;
    for (int64_t c = 0; c < nch; c++)
        for (int e = 0; e < K * K; e++) R[e] += part[(size_t)c * K * K + e];
    free(part);
    /* R = chol(G), upper, in place */
    double tr = 0;
    for (int p = 0; p < K; p++) tr += R[p * K + p];
    if (!(tr > 0) || !isfinite(tr)) return bsr_error(BSR_ERR_VALUE, "coarse=: the test vectors are not finite");
    for (int p = 0; p < K; p++) {
        double d = R[p * K + p];
        for (int s = 0; s < p; s++) d -= R[s * K + p] * R[s * K + p];
        if (!(d > 1e-28 * tr)) return bsr_error(BSR_ERR_VALUE, "coarse=: test vector %d of %d lost (dependent on the others)", p, K);
        d = sqrt(d);
        R[p * K + p] = d;
        for (int q = p + 1; q < K; q++) {
            double v = R[p * K + q];
            for (int s = 0; s < p; s++) v -= R[s * K + p] * R[s * K + q];
            R[p * K + q] = v / d;
        }
    }
    /* each row x <- x R^{-1}: x_new R = x, forwards */
    #pragma omp parallel for schedule(static) if (bsr_par_worth(N * K * K)) num_threads(bsr_team_size())
    for (int64_t r = 0; r < N; r++) {
        double *x = X + r * K;
        for (int q = 0; q < K; q++) {
            double v = x[q];
            for (int p = 0; p < q; p++) v -= x[p] * R[p * K + q];
            x[q] = v / R[q * K + q];
        }
    }
    return BSR_OK;
}

/* Eigen-decomposition of the symmetric K x K matrix G by cyclic Jacobi:
 * G = V diag(w) V^T, w descending, V's columns the vectors (row-major). */
static void sym_eig(double *G, int K, double *w, double *V)
{
    for (int p = 0; p < K; p++)
        for (int q = 0; q < K; q++) V[p * K + q] = p == q;
    for (int sweep = 0; sweep < 60; sweep++) {
        double off = 0, diag = 0;
        for (int p = 0; p < K; p++) {
            diag += G[p * K + p] * G[p * K + p];
            for (int q = p + 1; q < K; q++) off += G[p * K + q] * G[p * K + q];
        }
        if (!(off > 1e-30 * diag)) break;
        for (int p = 0; p < K; p++)
            for (int q = p + 1; q < K; q++) {
                const double apq = G[p * K + q];
                if (apq == 0) continue;
                const double th = (G[q * K + q] - G[p * K + p]) / (2 * apq);
                const double t = (th >= 0 ? 1 : -1) / (fabs(th) + sqrt(th * th + 1));
                const double c = 1 / sqrt(t * t + 1), s = t * c;
                for (int r = 0; r < K; r++) {   /* columns p, q */
                    const double gp = G[r * K + p], gq = G[r * K + q];
                    G[r * K + p] = c * gp - s * gq;
                    G[r * K + q] = s * gp + c * gq;
                }
                for (int r = 0; r < K; r++) {   /* rows p, q */
                    const double gp = G[p * K + r], gq = G[q * K + r];
                    G[p * K + r] = c * gp - s * gq;
                    G[q * K + r] = s * gp + c * gq;
                }
                for (int r = 0; r < K; r++) {
                    const double vp = V[r * K + p], vq = V[r * K + q];
                    V[r * K + p] = c * vp - s * vq;
                    V[r * K + q] = s * vp + c * vq;
                }
            }
    }
    /* sort descending (selection: K is small), columns of V with them */
    for (int p = 0; p < K; p++) w[p] = G[p * K + p];
    for (int p = 0; p < K; p++) {
        int best = p;
        for (int q = p + 1; q < K; q++) if (w[q] > w[best]) best = q;
        if (best == p) continue;
        double t = w[p]; w[p] = w[best]; w[best] = t;
        for (int r = 0; r < K; r++) { t = V[r * K + p]; V[r * K + p] = V[r * K + best]; V[r * K + best] = t; }
    }
}

/* The test vectors: K pseudo-random columns, then COARSE_STEPS times
 * X <- orth(X - S^{-1} A X).  X: N x K, allocated here. */
static bsr_status test_vectors(coarse *C, bsr_multivec **Xout)
{
    const int64_t N = (int64_t)C->n * C->b;
    const int K = C->K;
    bsr_multivec *X = NULL, *Y = NULL, *Z = NULL;
    bsr_status s = bsr_multivec_create(&X, N, K, BSR_DOUBLE);
    if (!s) s = bsr_multivec_create(&Y, N, K, BSR_DOUBLE);
    if (!s) s = bsr_multivec_create(&Z, N, K, BSR_DOUBLE);
    if (!s) {
        double *x = X->data;
        #pragma omp parallel for schedule(static) if (bsr_par_worth(N * K)) num_threads(bsr_team_size())
        for (int64_t r = 0; r < N; r++)
            for (int q = 0; q < K; q++) x[r * K + q] = 2 * bsr_hash01((uint64_t)q + 1, (uint64_t)r) - 1;
        s = chol_qr(x, N, K);
    }
    for (int step = 0; !s && step < COARSE_STEPS; step++) {
        if ((s = bsr_spmm(1, C->A, X, 0, Y)) || (s = C->S->apply(C->S, Y, Z))) break;
        const double *x = X->data;
        double *z = Z->data;
        #pragma omp parallel for schedule(static) if (bsr_par_worth(N * K)) num_threads(bsr_team_size())
        for (int64_t e = 0; e < N * K; e++) z[e] = x[e] - z[e];
        if (!(s = chol_qr(z, N, K))) s = chol_qr(z, N, K);
        if (s == BSR_ERR_VALUE) {   /* S (nearly) exact on some modes, or diverged: the last X stays */
            bsr_clear_error();
            s = BSR_OK;
            break;
        }
        bsr_multivec *t = X; X = Z; Z = t;
    }
    bsr_multivec_destroy(Y);
    bsr_multivec_destroy(Z);
    if (s) { bsr_multivec_destroy(X); return s; }
    *Xout = X;
    return BSR_OK;
}

/* P from X: on each aggregate the leading left singular vectors of X's rows
 * there (from the eigenvectors of their K x K Gram matrix), at most m. */
static bsr_status build_basis(coarse *C, const double *X)
{
    const int b = C->b, K = C->K, m = C->m, na = C->na;
    double *wv = bsr_malloc(sizeof(double) * (size_t)na * (K + K * K), "coarse singular vectors");
    int *mg = bsr_malloc(sizeof(int) * (size_t)na, "coarse sizes");
    if (!wv || !mg) { free(wv); free(mg); return BSR_ERR_NOMEM; }
    #pragma omp parallel num_threads(bsr_team_size()) if (bsr_par_worth((int64_t)C->n * b * K * K))
    {
        double G[4 * BSR_COARSE_MAX * BSR_COARSE_MAX];
        #pragma omp for schedule(dynamic, 16)
        for (int g = 0; g < na; g++) {
            double *w = wv + (size_t)g * (K + K * K), *V = w + K;
            for (int e = 0; e < K * K; e++) G[e] = 0;
            for (int a = C->aptr[g]; a < C->aptr[g + 1]; a++)
                for (int r = 0; r < b; r++) {
                    const double *x = X + ((int64_t)C->acell[a] * b + r) * K;
                    for (int p = 0; p < K; p++)
                        for (int q = p; q < K; q++) G[p * K + q] += x[p] * x[q];
                }
            for (int p = 0; p < K; p++)
                for (int q = 0; q < p; q++) G[p * K + q] = G[q * K + p];
            sym_eig(G, K, w, V);
            int keep = 0;
            const int most = m < (C->aptr[g + 1] - C->aptr[g]) * b ? m : (C->aptr[g + 1] - C->aptr[g]) * b;
            while (keep < most && w[keep] > COARSE_RANK * COARSE_RANK * w[0] && w[0] > 0) keep++;
            mg[g] = keep;
        }
    }
    C->cptr[0] = 0;
    C->poff[0] = 0;
    for (int g = 0; g < na; g++) {
        C->cptr[g + 1] = C->cptr[g] + mg[g];
        C->poff[g + 1] = C->poff[g] + (int64_t)(C->aptr[g + 1] - C->aptr[g]) * b * mg[g];
    }
    C->nc = C->cptr[na];
    free(C->P);
    C->P = bsr_malloc(sizeof(double) * (size_t)(C->poff[na] ? C->poff[na] : 1), "coarse basis");
    bsr_status s = C->P ? BSR_OK : BSR_ERR_NOMEM;
    if (!s) {
        /* column q of aggregate g: X V_q / sqrt(w_q) */
        #pragma omp parallel for schedule(dynamic, 16) num_threads(bsr_team_size()) if (bsr_par_worth((int64_t)C->n * b * K * m))
        for (int g = 0; g < na; g++) {
            const double *w = wv + (size_t)g * (K + K * K), *V = w + K;
            const int mq = mg[g];
            double *Pg = C->P + C->poff[g];
            for (int a = C->aptr[g]; a < C->aptr[g + 1]; a++)
                for (int r = 0; r < b; r++) {
                    const double *x = X + ((int64_t)C->acell[a] * b + r) * K;
                    double *prow = Pg + ((int64_t)(a - C->aptr[g]) * b + r) * mq;
                    for (int q = 0; q < mq; q++) {
                        double v = 0;
                        for (int p = 0; p < K; p++) v += x[p] * V[p * K + q];
                        prow[q] = v / sqrt(w[q]);
                    }
                }
        }
    }
    free(wv);
    free(mg);
    return s;
}

/* Ac = P^T A P as CSR over the coarse unknowns: aggregate I's rows, its
 * neighbour aggregates J ascending, each a dense m_I x m_J block. */
static bsr_status build_coarse(coarse *C)
{
    const bsr_matrix *A = C->A;
    const int b = C->b, na = C->na, bb = b * b;
    const int *rp = A->rowptr, *ci = A->colind;
    const double *av = A->val;
    int *nnb = bsr_calloc((size_t)na + 1, sizeof(int), "coarse neighbour counts");
    if (!nnb) return BSR_ERR_NOMEM;
    bsr_status s = BSR_OK;
    int *nbl = NULL, *mark = NULL;
    /* neighbour aggregates of each aggregate: counted, then listed ascending */
    const int team = bsr_par_worth((int64_t)A->nnzb * bb) ? bsr_team_size() : 1;
    mark = bsr_malloc(sizeof(int) * (size_t)team * na, "coarse marks");
    if (!mark) { free(nnb); return BSR_ERR_NOMEM; }
    for (int64_t e = 0; e < (int64_t)team * na; e++) mark[e] = -1;
    #pragma omp parallel num_threads(team)
    {
        int *mk = mark + (size_t)omp_get_thread_num() * na;
        #pragma omp for schedule(dynamic, 64)
        for (int g = 0; g < na; g++) {
            int c = 0;
            for (int a = C->aptr[g]; a < C->aptr[g + 1]; a++)
                for (int p = rp[C->acell[a]]; p < rp[C->acell[a] + 1]; p++) {
                    const int J = C->part[ci[p]];
                    if (mk[J] != g) { mk[J] = g; c++; }
                }
            nnb[g + 1] = c;
        }
    }
    for (int g = 0; g < na; g++) nnb[g + 1] += nnb[g];
    nbl = bsr_malloc(sizeof(int) * (size_t)(nnb[na] ? nnb[na] : 1), "coarse neighbours");
    free(C->cp); free(C->ci); free(C->cv);
    C->cp = bsr_malloc(sizeof(SuiteSparse_long) * ((size_t)C->nc + 1), "coarse row pointers");
    C->ci = NULL; C->cv = NULL;
    if (!nbl || !C->cp) s = BSR_ERR_NOMEM;
    if (!s) {
        for (int64_t e = 0; e < (int64_t)team * na; e++) mark[e] = -1;
        #pragma omp parallel num_threads(team)
        {
            int *mk = mark + (size_t)omp_get_thread_num() * na;
            #pragma omp for schedule(dynamic, 64)
            for (int g = 0; g < na; g++) {
                int c = nnb[g];
                for (int a = C->aptr[g]; a < C->aptr[g + 1]; a++)
                    for (int p = rp[C->acell[a]]; p < rp[C->acell[a] + 1]; p++) {
                        const int J = C->part[ci[p]];
                        if (mk[J] != g) { mk[J] = g; nbl[c++] = J; }
                    }
                /* ascending (insertion: a few dozen neighbours) */
                for (int x = nnb[g] + 1; x < nnb[g + 1]; x++) {
                    const int v = nbl[x];
                    int y = x;
                    while (y > nnb[g] && nbl[y - 1] > v) { nbl[y] = nbl[y - 1]; y--; }
                    nbl[y] = v;
                }
            }
        }
        /* row pointers: each of I's rows holds sum over J of m_J */
        C->cp[0] = 0;
        for (int g = 0; g < na; g++) {
            SuiteSparse_long len = 0;
            for (int x = nnb[g]; x < nnb[g + 1]; x++) len += C->cptr[nbl[x] + 1] - C->cptr[nbl[x]];
            for (int q = C->cptr[g]; q < C->cptr[g + 1]; q++) C->cp[q + 1] = C->cp[q] + len;
        }
        C->ci = bsr_malloc(sizeof(SuiteSparse_long) * (size_t)(C->cp[C->nc] ? C->cp[C->nc] : 1), "coarse columns");
        C->cv = bsr_calloc((size_t)(C->cp[C->nc] ? C->cp[C->nc] : 1), sizeof(double), "coarse values");
        if (!C->ci || !C->cv) s = BSR_ERR_NOMEM;
    }
    if (!s) {
        for (int64_t e = 0; e < (int64_t)team * na; e++) mark[e] = -1;
        #pragma omp parallel num_threads(team)
        {
            /* mk[J]: J's column offset in I's rows while I is built */
            int *mk = mark + (size_t)omp_get_thread_num() * na;
            double tmp[10 * 2 * BSR_COARSE_MAX];   /* A_p P_d: b x m_J */
            #pragma omp for schedule(dynamic, 64)
            for (int g = 0; g < na; g++) {
                const int mI = C->cptr[g + 1] - C->cptr[g];
                if (mI == 0) continue;
                int off = 0;
                for (int x = nnb[g]; x < nnb[g + 1]; x++) {
                    const int J = nbl[x], mJ = C->cptr[J + 1] - C->cptr[J];
                    mk[J] = off;
                    for (int q = 0; q < mI; q++)
                        for (int t = 0; t < mJ; t++) C->ci[C->cp[C->cptr[g] + q] + off + t] = C->cptr[J] + t;
                    off += mJ;
                }
                const double *PI = C->P + C->poff[g];
                for (int a = C->aptr[g]; a < C->aptr[g + 1]; a++) {
                    const int c = C->acell[a];
                    const double *Pc = PI + (int64_t)(a - C->aptr[g]) * b * mI;
                    for (int p = rp[c]; p < rp[c + 1]; p++) {
                        const int d = ci[p], J = C->part[d], mJ = C->cptr[J + 1] - C->cptr[J];
                        if (mJ == 0) continue;
                        const double *Pd = C->P + C->poff[J] + (int64_t)C->loc[d] * b * mJ;
                        const double *Ab = av + (size_t)p * bb;
                        for (int r = 0; r < b; r++)
                            for (int t = 0; t < mJ; t++) {
                                double v = 0;
                                for (int e = 0; e < b; e++) v += Ab[r * b + e] * Pd[e * mJ + t];
                                tmp[r * mJ + t] = v;
                            }
                        for (int q = 0; q < mI; q++) {
                            double *row = C->cv + C->cp[C->cptr[g] + q] + mk[J];
                            for (int t = 0; t < mJ; t++) {
                                double v = 0;
                                for (int r = 0; r < b; r++) v += Pc[r * mI + q] * tmp[r * mJ + t];
                                row[t] += v;
                            }
                        }
                    }
                }
            }
        }
    }
    free(nnb); free(nbl); free(mark);
    return s;
}

/* Everything made from A's values: the test vectors, P, Ac and its factor
 * (after S was set up or refactored on A). */
static bsr_status build(coarse *C)
{
    C->valid = 0;
    bsr_multivec *X = NULL;
    BSR_TRY(test_vectors(C, &X));
    bsr_prof_mark("coarse setup: test vectors");
    bsr_status s = build_basis(C, X->data);
    bsr_multivec_destroy(X);
    bsr_prof_mark("coarse setup: basis");
    if (!s) s = build_coarse(C);
    bsr_prof_mark("coarse setup: P^T A P");
    if (s) return s;
    if (C->num) umfpack_dl_free_numeric(&C->num);
    void *sym = NULL;
    double control[UMFPACK_CONTROL], info[UMFPACK_INFO];
    umfpack_dl_defaults(control);
    long st = umfpack_dl_symbolic(C->nc, C->nc, C->cp, C->ci, C->cv, &sym, control, info);
    if (st == UMFPACK_OK) st = umfpack_dl_numeric(C->cp, C->ci, C->cv, sym, &C->num, control, info);
    if (sym) umfpack_dl_free_symbolic(&sym);
    bsr_prof_mark("coarse setup: UMFPACK");
    BSR_TRY(umf_status("factorization", st));
    C->valid = 1;
    return BSR_OK;
}

/* pc's figures: the smoother's, and the coarse level's line. */
static void describe(bsr_pc *pc, const coarse *C)
{
    pc->nnzb = C->S->nnzb;
    pc->pivots_regularized = C->S->pivots_regularized;
    snprintf(pc->info, sizeof pc->info, "%.330s; coarse level: %d aggregates, %d unknowns (%d test vectors), "
             "P^T A P %lld entries", C->S->info, C->na, C->nc, C->K, (long long)C->cp[C->nc]);
}

/* The apply's scratch for k columns. */
static bsr_status scratch(coarse *C, int k)
{
    if (C->T && bsr_multivec_cols(C->T) == k) return BSR_OK;
    bsr_multivec_destroy(C->T); bsr_multivec_destroy(C->W);
    C->T = C->W = NULL;
    free(C->rc); free(C->ec);
    C->rc = bsr_malloc(sizeof(double) * ((size_t)C->nc * k + 1), "coarse right-hand sides");
    C->ec = bsr_malloc(sizeof(double) * ((size_t)C->nc * k + 1), "coarse solutions");
    if (!C->rc || !C->ec) return BSR_ERR_NOMEM;
    const int64_t N = (int64_t)C->n * C->b;
    BSR_TRY(bsr_multivec_create(&C->T, N, k, BSR_DOUBLE));
    return bsr_multivec_create(&C->W, N, k, BSR_DOUBLE);
}

/* T = X - A Y. */
static bsr_status residual(coarse *C, const bsr_multivec *X, const bsr_multivec *Y)
{
    memcpy(C->T->data, X->data, sizeof(double) * (size_t)X->n * X->k);
    return bsr_spmm(-1, C->A, Y, 1, C->T);
}

static bsr_status coarse_apply(bsr_pc *pc, const bsr_multivec *X, bsr_multivec *Y)
{
    coarse *C = pc->data;
    if (!C->valid)
        return bsr_error(BSR_ERR_ARG, "coarse=: the last setup or refactor failed; refactor (or set up) again before solving");
    if (X->prec != BSR_DOUBLE || Y->prec != BSR_DOUBLE || !(X->where & BSR_ON_HOST))
        return bsr_error(BSR_ERR_UNSUPPORTED, "coarse=: double vectors on the host only");
    const int k = X->k, b = C->b, nc = C->nc;
    BSR_TRY(scratch(C, k));
    BSR_TRY(C->S->apply(C->S, X, Y));
    BSR_TRY(residual(C, X, Y));
    /* rc = P^T T, column-major */
    const double *t = C->T->data;
    #pragma omp parallel for schedule(dynamic, 64) num_threads(bsr_team_size()) if (bsr_par_worth((int64_t)C->n * b * k * C->m))
    for (int g = 0; g < C->na; g++) {
        const int m = C->cptr[g + 1] - C->cptr[g];
        const double *Pg = C->P + C->poff[g];
        for (int q = 0; q < m; q++)
            for (int j = 0; j < k; j++) {
                double v = 0;
                for (int a = C->aptr[g]; a < C->aptr[g + 1]; a++)
                    for (int r = 0; r < b; r++)
                        v += Pg[((int64_t)(a - C->aptr[g]) * b + r) * m + q] * t[((int64_t)C->acell[a] * b + r) * k + j];
                C->rc[(size_t)j * nc + C->cptr[g] + q] = v;
            }
    }
    double control[UMFPACK_CONTROL], info[UMFPACK_INFO];
    umfpack_dl_defaults(control);
    for (int j = 0; j < k; j++) {
        long st = umfpack_dl_solve(UMFPACK_At, C->cp, C->ci, C->cv, C->ec + (size_t)j * nc, C->rc + (size_t)j * nc,
                                   C->num, control, info);
        BSR_TRY(umf_status("solve", st));
    }
    /* Y += P ec */
    double *y = Y->data;
    #pragma omp parallel for schedule(dynamic, 64) num_threads(bsr_team_size()) if (bsr_par_worth((int64_t)C->n * b * k * C->m))
    for (int g = 0; g < C->na; g++) {
        const int m = C->cptr[g + 1] - C->cptr[g];
        const double *Pg = C->P + C->poff[g];
        for (int a = C->aptr[g]; a < C->aptr[g + 1]; a++)
            for (int r = 0; r < b; r++) {
                const double *prow = Pg + ((int64_t)(a - C->aptr[g]) * b + r) * m;
                double *yr = y + ((int64_t)C->acell[a] * b + r) * k;
                for (int j = 0; j < k; j++) {
                    double v = 0;
                    for (int q = 0; q < m; q++) v += prow[q] * C->ec[(size_t)j * nc + C->cptr[g] + q];
                    yr[j] += v;
                }
            }
    }
    BSR_TRY(residual(C, X, Y));
    BSR_TRY(C->S->apply(C->S, C->T, C->W));
    const double *w = C->W->data;
    const int64_t ne = X->n * k;
    #pragma omp parallel for schedule(static) if (bsr_par_worth(ne)) num_threads(bsr_team_size())
    for (int64_t e = 0; e < ne; e++) y[e] += w[e];
    Y->where = BSR_ON_HOST;
    return BSR_OK;
}

static bsr_status coarse_refactor(bsr_pc *pc, const bsr_matrix *A)
{
    coarse *C = pc->data;
    C->valid = 0;
    if (C->S->refactor) BSR_TRY(C->S->refactor(C->S, A));
    C->A = A;
    BSR_TRY(build(C));
    describe(pc, C);
    return BSR_OK;
}

static void coarse_destroy(bsr_pc *pc)
{
    coarse *C = pc->data;
    if (!C) return;
    bsr_pc_destroy(C->S);
    if (C->num) umfpack_dl_free_numeric(&C->num);
    bsr_multivec_destroy(C->T); bsr_multivec_destroy(C->W);
    free(C->part); free(C->aptr); free(C->acell); free(C->loc); free(C->cptr); free(C->poff); free(C->P);
    free(C->cp); free(C->ci); free(C->cv); free(C->rc); free(C->ec);
    free(C);
}

static bsr_status coarse_setup(bsr_pc *pc, const bsr_matrix *A, const bsr_solver_options *o, bsr_context *ctx)
{
    (void)ctx;
    if (o->precision != BSR_DOUBLE || A->prec != BSR_DOUBLE)
        return bsr_error(BSR_ERR_UNSUPPORTED, "coarse=%d: needs precision=double and a double matrix", o->coarse);
    coarse *C = bsr_calloc(1, sizeof *C, "two-level preconditioner");
    if (!C) return BSR_ERR_NOMEM;
    pc->data = C;
    bsr_solver_options io = *o;
    io.coarse = 0;
    BSR_TRY(bsr_pc_create(A, &io, NULL, pc->ahead, &C->S));
    bsr_prof_mark("coarse setup: smoother (the ILU)");
    const int n = A->nbrows;
    C->A = A;
    C->n = n;
    C->b = A->b;
    /* 2 M test vectors, at most one an unknown (a tiny system) */
    C->K = 2 * (int64_t)o->coarse <= (int64_t)n * A->b ? 2 * o->coarse : n * A->b;
    C->m = o->coarse < C->K ? o->coarse : C->K;
    C->part = bsr_malloc(sizeof(int) * ((size_t)n + 1), "aggregates");
    C->loc = bsr_malloc(sizeof(int) * ((size_t)n + 1), "aggregate places");
    C->acell = bsr_malloc(sizeof(int) * ((size_t)n + 1), "aggregate rows");
    if (!C->part || !C->loc || !C->acell) return BSR_ERR_NOMEM;
    BSR_TRY(bsr_partition(A, COARSE_AGG_ROWS, C->part, &C->na));
    bsr_prof_mark("coarse setup: aggregates");
    const int na = C->na;
    C->aptr = bsr_calloc((size_t)na + 1, sizeof(int), "aggregate pointers");
    C->cptr = bsr_malloc(sizeof(int) * ((size_t)na + 1), "coarse pointers");
    C->poff = bsr_malloc(sizeof(int64_t) * ((size_t)na + 1), "basis offsets");
    if (!C->aptr || !C->cptr || !C->poff) return BSR_ERR_NOMEM;
    for (int i = 0; i < n; i++) C->aptr[C->part[i] + 1]++;
    for (int g = 0; g < na; g++) C->aptr[g + 1] += C->aptr[g];
    for (int i = 0; i < n; i++) {   /* rows ascending within an aggregate (cptr as the cursor) */
        const int g = C->part[i];
        if (i == 0) for (int h = 0; h < na; h++) C->cptr[h] = C->aptr[h];
        C->loc[i] = C->cptr[g] - C->aptr[g];
        C->acell[C->cptr[g]++] = i;
    }
    BSR_TRY(build(C));
    describe(pc, C);
    return BSR_OK;
}

const bsr_pc_ops bsr_pc_coarse_cpu_ops = {coarse_setup, coarse_refactor, coarse_apply, coarse_destroy};
