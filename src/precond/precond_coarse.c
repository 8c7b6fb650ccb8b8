/* SPDX-License-Identifier: BSD-3-Clause */
/* Two levels (option coarse=M with ILU0, ILUT or ILU2, on either backend):
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
 * Setup: aggregates of about COARSE_AGG_ROWS block rows by pairwise matching
 * (bsr_aggregate_pairs); K = 2M test vectors (at most one an unknown),
 * deterministic pseudo-random, then COARSE_STEPS steps
 * X <- orth((I - S^{-1} A) X) (subspace iteration: the modes where S^{-1} A
 * is far from I grow; a step whose vectors lose rank, where S is exact on
 * some modes, or stop being finite, is not taken), every step where the
 * solver computes (the orthonormalization's K x K Cholesky factor on the
 * host: bsr_ctx_gram and bsr_ctx_rsolve give the same bits on both
 * backends); on each aggregate
 * the leading left singular vectors of X restricted to its unknowns, at most
 * M, as P's columns there (orthonormal; those under COARSE_RANK of the first
 * left zero, their unknowns given 1 on Ac's diagonal); Ac = P^T A P as a BSR
 * matrix of M x M blocks, one block row an aggregate, factored completely by
 * the library's own block ILU2 with no dropping (tau1=0, cap=none) in METIS's
 * order on the host (COARSE_FACTOR).  The apply runs where the solver
 * computes, through the context's kernels: P and P^T are scalar sparse
 * matrices.  Refactor keeps the coarse space as the ILU keeps its pattern
 * (S refactored, Ac = P^T A P made again and its factor refactored);
 * pc->refresh (pattern=refresh, or auto once the iterations grow) makes all
 * but the aggregates anew.  Every step sums in a fixed order: the same bits
 * on any number of threads. */
#include "precond_impl.h"
#include <limits.h>
#include <math.h>
#include <omp.h>
#include <string.h>

/* Block rows an aggregate, about: pairwise matching then makes boxes of 256
 * on 3D grids.  coupled3d:60,5,couple=0.3 (216k block rows) with coarse=8
 * and the capped ILU2, 2 threads: METIS's k-way parts of 64 rows 21
 * iterations (59 s in all: the coarse LU), of 216 rows 29 (24 s), 343 rows
 * 29, 512 rows 39; the matching's boxes of 256 (this value) 27, of 128 (a
 * cap of 216) 23 iterations but twice the coarse unknowns (bench/RESULTS.md). */
#define COARSE_AGG_ROWS 216
#define COARSE_STEPS 8       /* smoothing steps of the test vectors (4: 50 iterations where 8 take 29, 12 take 32) */
#define COARSE_RANK 1e-10    /* a singular value under this fraction of the first is dropped */

typedef struct {
    bsr_pc *S;              /* the ILU (the smoother), made by the table's factory */
    const bsr_matrix *A;    /* the matrix of the last setup or refactor (the apply's products) */
    bsr_context *ctx;       /* where the apply computes: the solver's device, or own (the host) */
    bsr_context *own;       /* the host context made here when the solver gave none */
    int n, b, m, K;         /* block rows, block size, vectors an aggregate (Ac's block size), test vectors */
    int na;                 /* aggregates: Ac's block rows */
    int *part;              /* [n] aggregate of each block row */
    int *aptr, *acell;      /* aggregate g's block rows acell[aptr[g] .. aptr[g+1]), ascending */
    int *mg;                /* [na] P's nonzero columns on aggregate g (the rest are zero) */
    double *P;              /* block row i's b x m block of P at P + i * b * m (row-major), kept for refactors */
    bsr_matrix *Pm, *Rm;    /* P and P^T as scalar sparse matrices (b = 1): the apply's transfers */
    bsr_matrix *Ac;         /* P^T A P */
    bsr_pc *cs;             /* its complete factorization */
    bsr_multivec *T, *W;    /* the apply's residual and smoother output, kept while k stays */
    bsr_multivec *Rc, *Ec;  /* the coarse right-hand sides and solutions */
    int valid;              /* the last setup or refactor succeeded */
    int space;              /* P, Pm and Rm are of one build (what a refactor keeps) */
} coarse;

/* X (N x K, row-interleaved, current where ctx computes) <- X R^{-1},
 * X^T X = R^T R: an orthonormal basis of its columns (one Cholesky QR; called
 * twice).  The Gram matrix and the solve where ctx computes (the same bits on
 * both backends: bsr_ctx_gram), its K x K Cholesky factor on the host.
 * BSR_ERR_VALUE when X is not finite or has lost a column (the smoother
 * diverged beyond rounding). */
static bsr_status chol_qr(bsr_context *ctx, bsr_multivec *X)
{
    const int K = X->k;
    double R[BSR_COARSE_MAX * 2 * BSR_COARSE_MAX * 2];
    BSR_TRY(bsr_ctx_gram(ctx, X, R));
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
    return bsr_ctx_rsolve(ctx, X, R);
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

/* The test vectors: K pseudo-random columns (made on the host, then
 * uploaded where C computes), then COARSE_STEPS times
 * X <- orth(X - S^{-1} A X), every step where C computes.  X: N x K,
 * allocated here, returned current on the host. */
static bsr_status test_vectors(coarse *C, bsr_multivec **Xout)
{
    const int64_t N = (int64_t)C->n * C->b;
    const int K = C->K;
    double ones[2 * BSR_COARSE_MAX], mones[2 * BSR_COARSE_MAX];
    for (int q = 0; q < K; q++) { ones[q] = 1; mones[q] = -1; }
    bsr_multivec *X = NULL, *Y = NULL, *Z = NULL;
    bsr_status s = bsr_multivec_create(&X, N, K, BSR_DOUBLE);
    if (!s) s = bsr_multivec_create_device(C->ctx, &Y, N, K, BSR_DOUBLE);
    if (!s) s = bsr_multivec_create_device(C->ctx, &Z, N, K, BSR_DOUBLE);
    if (!s) {
        double *x = X->data;
        #pragma omp parallel for schedule(static) if (bsr_par_worth(N * K)) num_threads(bsr_team_size())
        for (int64_t r = 0; r < N; r++)
            for (int q = 0; q < K; q++) x[r * K + q] = 2 * bsr_hash01((uint64_t)q + 1, (uint64_t)r) - 1;
        X->where = BSR_ON_HOST;
        s = bsr_multivec_upload(C->ctx, X);
        if (!s) s = chol_qr(C->ctx, X);
    }
    for (int step = 0; !s && step < COARSE_STEPS; step++) {
        /* Z = X - S^{-1} A X */
        if ((s = bsr_ctx_spmm(C->ctx, BSR_KERNEL_AUTO, 1, C->A, X, 0, Y)) || (s = C->S->apply(C->S, Y, Z)) ||
            (s = bsr_ctx_axpby(C->ctx, ones, X, mones, Z, NULL)))
            break;
        if (!(s = chol_qr(C->ctx, Z))) s = chol_qr(C->ctx, Z);
        if (s == BSR_ERR_VALUE) {   /* S (nearly) exact on some modes, or diverged: the last X stays */
            bsr_clear_error();
            s = BSR_OK;
            break;
        }
        bsr_multivec *t = X; X = Z; Z = t;
    }
    if (!s) s = bsr_multivec_download(C->ctx, X);
    bsr_multivec_destroy(Y);
    bsr_multivec_destroy(Z);
    if (s) { bsr_multivec_destroy(X); return s; }
    *Xout = X;
    return BSR_OK;
}

/* P from X: on each aggregate the leading left singular vectors of X's rows
 * there (from the eigenvectors of their K x K Gram matrix), at most m; the
 * aggregate's other columns of P zero (mg[g] says how many are not). */
static bsr_status build_basis(coarse *C, const double *X)
{
    const int b = C->b, K = C->K, m = C->m, na = C->na;
    free(C->P);
    C->P = bsr_calloc((size_t)C->n * b * m, sizeof(double), "coarse basis");
    if (!C->P) return BSR_ERR_NOMEM;
    #pragma omp parallel num_threads(bsr_team_size()) if (bsr_par_worth((int64_t)C->n * b * K * K))
    {
        double G[4 * BSR_COARSE_MAX * BSR_COARSE_MAX], V[4 * BSR_COARSE_MAX * BSR_COARSE_MAX], w[2 * BSR_COARSE_MAX];
        #pragma omp for schedule(dynamic, 16)
        for (int g = 0; g < na; g++) {
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
            const int rows = (C->aptr[g + 1] - C->aptr[g]) * b, most = m < rows ? m : rows;
            while (keep < most && w[0] > 0 && w[keep] > COARSE_RANK * COARSE_RANK * w[0]) keep++;
            C->mg[g] = keep;
            /* column q: X V_q / sqrt(w_q) */
            for (int a = C->aptr[g]; a < C->aptr[g + 1]; a++)
                for (int r = 0; r < b; r++) {
                    const double *x = X + ((int64_t)C->acell[a] * b + r) * K;
                    double *prow = C->P + ((int64_t)C->acell[a] * b + r) * m;
                    for (int q = 0; q < keep; q++) {
                        double v = 0;
                        for (int p = 0; p < K; p++) v += x[p] * V[p * K + q];
                        prow[q] = v / sqrt(w[q]);
                    }
                }
        }
    }
    return BSR_OK;
}

/* Ac = P^T A P as a BSR matrix of m x m blocks: block row I an aggregate,
 * its neighbour aggregates J ascending; the unknowns of P's zero columns
 * get 1 on the diagonal (decoupled: their right-hand side is always 0).
 * A new matrix in *Ac.  Row i of aggregate I adds P_i^T W_iJ to block
 * (I, J) once for each J its row reaches, W_iJ = the sum of A_id P_d over
 * its blocks d in J (stored order): P_i^T is applied once a neighbour
 * aggregate instead of once a block of A (with b = 5, m = 8, 7 blocks a row
 * reaching 2 aggregates: 2,040 multiply-adds a row against 3,640). */
static bsr_status build_coarse(coarse *C, bsr_matrix **Ac)
{
    const bsr_matrix *A = C->A;
    const int n = C->n, b = C->b, na = C->na, bb = b * b, m = C->m, mm = m * m, bm = b * m;
    const int *rp = A->rowptr, *ci = A->colind;
    const double *av = A->val;
    const int team = bsr_par_worth((int64_t)A->nnzb * bb * m) ? bsr_team_size() : 1;
    int wide = 1;   /* A's longest block row: the most aggregates a row reaches */
    for (int i = 0; i < n; i++)
        if (rp[i + 1] - rp[i] > wide) wide = rp[i + 1] - rp[i];
    int *brp = bsr_calloc((size_t)na + 1, sizeof(int), "coarse row pointers");
    int *mark = bsr_malloc(sizeof(int) * (size_t)team * na, "coarse marks");
    int *rowj = bsr_malloc(sizeof(int) * (size_t)team * wide, "coarse row aggregates");
    double *w = bsr_malloc(sizeof(double) * (size_t)team * wide * bm, "coarse row products");
    int *bci = NULL;
    double *bval = NULL;
    bsr_status s = brp && mark && rowj && w ? BSR_OK : BSR_ERR_NOMEM;
    /* neighbour aggregates of each aggregate: counted, then listed ascending */
    if (!s) {
        for (int64_t e = 0; e < (int64_t)team * na; e++) mark[e] = -1;
        #pragma omp parallel num_threads(team)
        {
            int *mk = mark + (size_t)omp_get_thread_num() * na;
            #pragma omp for schedule(dynamic, 4)
            for (int g = 0; g < na; g++) {
                int c = 0;
                for (int a = C->aptr[g]; a < C->aptr[g + 1]; a++)
                    for (int p = rp[C->acell[a]]; p < rp[C->acell[a] + 1]; p++) {
                        const int J = C->part[ci[p]];
                        if (mk[J] != g) { mk[J] = g; c++; }
                    }
                brp[g + 1] = c;
            }
        }
        for (int g = 0; g < na; g++) brp[g + 1] += brp[g];
        bci = bsr_malloc(sizeof(int) * (size_t)(brp[na] ? brp[na] : 1), "coarse columns");
        bval = bsr_calloc((size_t)brp[na] * mm + 1, sizeof(double), "coarse values");
        if (!bci || !bval) s = BSR_ERR_NOMEM;
    }
    if (!s) {
        for (int64_t e = 0; e < (int64_t)team * na; e++) mark[e] = -1;
        #pragma omp parallel num_threads(team)
        {
            const int th = omp_get_thread_num();
            int *mk = mark + (size_t)th * na;        /* J's block in I's row while I is built */
            int *rj = rowj + (size_t)th * wide;      /* the aggregates row i reaches, in the order reached */
            double *wr = w + (size_t)th * wide * bm; /* W_iJ for each of them: b x m */
            #pragma omp for schedule(dynamic, 4)
            for (int g = 0; g < na; g++) {
                int c = brp[g];
                for (int a = C->aptr[g]; a < C->aptr[g + 1]; a++)
                    for (int p = rp[C->acell[a]]; p < rp[C->acell[a] + 1]; p++) {
                        const int J = C->part[ci[p]];
                        if (mk[J] != -2 - g) { mk[J] = -2 - g; bci[c++] = J; }
                    }
                for (int x = brp[g] + 1; x < brp[g + 1]; x++) {   /* ascending (a few dozen) */
                    const int v = bci[x];
                    int y = x;
                    while (y > brp[g] && bci[y - 1] > v) { bci[y] = bci[y - 1]; y--; }
                    bci[y] = v;
                }
                for (int x = brp[g]; x < brp[g + 1]; x++) mk[bci[x]] = x;
                for (int a = C->aptr[g]; a < C->aptr[g + 1]; a++) {
                    const int i = C->acell[a];
                    const double *Pi = C->P + (int64_t)i * bm;
                    int nj = 0;
                    for (int p = rp[i]; p < rp[i + 1]; p++) {
                        const int d = ci[p], J = C->part[d];
                        int slot = 0;
                        while (slot < nj && rj[slot] != J) slot++;
                        double *acc = wr + (size_t)slot * bm;
                        if (slot == nj) {
                            rj[nj++] = J;
                            for (int e = 0; e < bm; e++) acc[e] = 0;
                        }
                        const double *Pd = C->P + (int64_t)d * bm, *Ab = av + (size_t)p * bb;
                        for (int r = 0; r < b; r++) {   /* the sums over e, columns t side by side */
                            double v[BSR_COARSE_MAX] = {0};
                            for (int e = 0; e < b; e++)
                                for (int t = 0; t < m; t++) v[t] += Ab[r * b + e] * Pd[e * m + t];
                            for (int t = 0; t < m; t++) acc[r * m + t] += v[t];
                        }
                    }
                    for (int slot = 0; slot < nj; slot++) {
                        const double *acc = wr + (size_t)slot * bm;
                        double *blk = bval + (size_t)mk[rj[slot]] * mm;
                        for (int q = 0; q < m; q++) {
                            double v[BSR_COARSE_MAX] = {0};
                            for (int r = 0; r < b; r++)
                                for (int t = 0; t < m; t++) v[t] += Pi[r * m + q] * acc[r * m + t];
                            for (int t = 0; t < m; t++) blk[q * m + t] += v[t];
                        }
                    }
                }
                /* (a row of A without its diagonal block stops the ILU's setup before this) */
                if (mk[g] >= brp[g] && mk[g] < brp[g + 1] && bci[mk[g]] == g) {
                    double *dblk = bval + (size_t)mk[g] * mm;
                    for (int q = C->mg[g]; q < m; q++) dblk[q * m + q] = 1;
                }
            }
        }
    }
    if (!s) s = bsr_matrix_create(Ac, na, na, m, brp, bci, bval, BSR_DOUBLE, 0);
    free(brp); free(bci); free(bval); free(mark); free(rowj); free(w);
    return s;
}

/* P and P^T as scalar sparse matrices (b = 1), current where C computes:
 * row i b + r of P holds aggregate g = part[i]'s mg[g] columns g m + q, row
 * g m + q of P^T the aggregate's unknowns, ascending (the order the sums of
 * the restriction take). */
static bsr_status build_transfer(coarse *C)
{
    const int b = C->b, m = C->m, na = C->na;
    const int64_t N = (int64_t)C->n * b, nc = (int64_t)na * m;
    int64_t nnz = 0;
    for (int g = 0; g < na; g++) nnz += (int64_t)(C->aptr[g + 1] - C->aptr[g]) * b * C->mg[g];
    if (nnz >= INT_MAX || N >= INT_MAX)
        return bsr_error(BSR_ERR_UNSUPPORTED, "coarse=%d: P has %lld nonzeros in %lld rows, past 32-bit indices", m,
                         (long long)nnz, (long long)N);
    bsr_matrix_destroy(C->Pm);
    bsr_matrix_destroy(C->Rm);
    C->Pm = C->Rm = NULL;
    /* filled in place: the rows are built sorted and P's values are finite
     * (X was), so bsr_matrix_create's checks and copy would only cost time */
    BSR_TRY(bsr_matrix_alloc(&C->Pm, (int)N, (int)nc, 1, (int)nnz, BSR_DOUBLE));
    BSR_TRY(bsr_matrix_alloc(&C->Rm, (int)nc, (int)N, 1, (int)nnz, BSR_DOUBLE));
    int *prp = C->Pm->rowptr, *rrp = C->Rm->rowptr, *pci = C->Pm->colind, *rci = C->Rm->colind;
    double *pv = C->Pm->val, *rv = C->Rm->val;
    prp[0] = rrp[0] = 0;
    for (int64_t e = 0; e < N; e++) prp[e + 1] = prp[e] + C->mg[C->part[e / b]];
    for (int64_t e = 0; e < nc; e++) {
        const int g = (int)(e / m), q = (int)(e % m);
        rrp[e + 1] = rrp[e] + (q < C->mg[g] ? (C->aptr[g + 1] - C->aptr[g]) * b : 0);
    }
    #pragma omp parallel for schedule(static) num_threads(bsr_team_size()) if (bsr_par_worth(nnz))
    for (int64_t e = 0; e < N; e++) {
        const int g = C->part[e / b];
        for (int q = 0, x = prp[e]; q < C->mg[g]; q++, x++) {
            pci[x] = g * m + q;
            pv[x] = C->P[e * m + q];
        }
    }
    #pragma omp parallel for schedule(dynamic, 16) num_threads(bsr_team_size()) if (bsr_par_worth(nnz))
    for (int g = 0; g < na; g++)
        for (int q = 0; q < C->mg[g]; q++) {
            int x = rrp[(int64_t)g * m + q];
            for (int a = C->aptr[g]; a < C->aptr[g + 1]; a++)
                for (int r = 0; r < b; r++, x++) {
                    const int64_t e = (int64_t)C->acell[a] * b + r;
                    rci[x] = (int)e;
                    rv[x] = C->P[e * m + q];
                }
        }
    BSR_TRY(bsr_matrix_upload(C->ctx, C->Pm));
    return bsr_matrix_upload(C->ctx, C->Rm);
}

/* Ac's complete factorization: the library's block LU in METIS's order,
 * factored on the host and, where C computes on a device, applied there
 * (factor=cpu): the device's own complete factor takes its dense tail to
 * tensor-core kernels built for large problems, and took 11 s for the
 * 1,000 block rows of 8 x 8 that 216k block rows give (an H200; the host's
 * factor under a second). */
#define COARSE_FACTOR "precond=ilu2,tau1=0,cap=none,reorder=metis,factor=cpu,fallback=off"

/* Ac = P^T A P from C's P and its complete factor: a new factorization
 * after a new P; else (P kept, so Ac's pattern too) the factor's refactor
 * on Ac's new values. */
static bsr_status build_level(coarse *C, int new_p)
{
    bsr_matrix *Ac = NULL;
    bsr_status s = build_coarse(C, &Ac);
    if (!s && new_p) s = build_transfer(C);
    if (!s) C->space = 1;
    bsr_prof_mark("coarse setup: P^T A P");
    if (s) { bsr_matrix_destroy(Ac); return s; }
    if (!new_p && C->cs) {
        s = C->cs->refactor(C->cs, Ac);
    } else {
        bsr_pc_destroy(C->cs);
        C->cs = NULL;
        bsr_solver_options co;
        bsr_solver_options_default(&co);
        s = bsr_solver_options_parse(&co, COARSE_FACTOR);
        if (!s) s = bsr_pc_create(Ac, &co, C->own ? NULL : C->ctx, NULL, NULL, &C->cs);
    }
    bsr_prof_mark("coarse setup: Ac's LU");
    bsr_matrix_destroy(C->Ac);   /* (after the factor took Ac's values) */
    C->Ac = Ac;
    if (s) return bsr_error(s, "coarse=: the coarse matrix P^T A P (%d block rows of %d x %d): %s", C->na, C->m, C->m,
                            bsr_last_error());
    return BSR_OK;
}

/* Everything made from A's values: the test vectors, P, Ac and its factor
 * (after S was set up or refreshed on A). */
static bsr_status build(coarse *C)
{
    C->valid = 0;
    C->space = 0;
    bsr_multivec *X = NULL;
    BSR_TRY(test_vectors(C, &X));
    bsr_prof_mark("coarse setup: test vectors");
    bsr_status s = build_basis(C, X->data);
    bsr_multivec_destroy(X);
    bsr_prof_mark("coarse setup: basis");
    if (!s) s = build_level(C, 1);
    if (!s) C->valid = 1;
    return s;
}

/* pc's figures: the smoother's, and the coarse level's line. */
static void describe(bsr_pc *pc, const coarse *C)
{
    pc->nnzb = C->S->nnzb;
    pc->pivots_regularized = C->S->pivots_regularized;
    pc->bytes_fixed = C->S->bytes_fixed;
    pc->bytes_passes = C->S->bytes_passes;
    pc->dev_s = C->S->dev_s;
    snprintf(pc->info, sizeof pc->info, "%.300s; coarse level: %d aggregates of %d unknowns (%d test vectors), "
             "P^T A P %d blocks, its LU %lld", C->S->info, C->na, C->m, C->K, bsr_matrix_nnzb(C->Ac),
             (long long)C->cs->nnzb);
}

/* The apply's scratch for k columns, where C computes. */
static bsr_status scratch(coarse *C, int k)
{
    if (C->T && bsr_multivec_cols(C->T) == k) return BSR_OK;
    bsr_multivec *v[4] = {C->T, C->W, C->Rc, C->Ec};
    for (int i = 0; i < 4; i++) bsr_multivec_destroy(v[i]);
    C->T = C->W = C->Rc = C->Ec = NULL;
    const int64_t N = (int64_t)C->n * C->b, nc = (int64_t)C->na * C->m;
    BSR_TRY(bsr_multivec_create_device(C->ctx, &C->Rc, nc, k, BSR_DOUBLE));
    BSR_TRY(bsr_multivec_create_device(C->ctx, &C->Ec, nc, k, BSR_DOUBLE));
    BSR_TRY(bsr_multivec_create_device(C->ctx, &C->W, N, k, BSR_DOUBLE));
    return bsr_multivec_create_device(C->ctx, &C->T, N, k, BSR_DOUBLE);
}

/* T = X - A Y. */
static bsr_status residual(coarse *C, const bsr_multivec *X, const bsr_multivec *Y)
{
    BSR_TRY(bsr_ctx_copy(C->ctx, C->T, X));
    return bsr_ctx_spmm(C->ctx, BSR_KERNEL_AUTO, -1, C->A, Y, 1, C->T);
}

static bsr_status coarse_apply(bsr_pc *pc, const bsr_multivec *X, bsr_multivec *Y)
{
    coarse *C = pc->data;
    if (!C->valid)
        return bsr_error(BSR_ERR_ARG, "coarse=: the last setup or refactor failed; refactor (or set up) again before solving");
    if (X->prec != BSR_DOUBLE || Y->prec != BSR_DOUBLE)
        return bsr_error(BSR_ERR_UNSUPPORTED, "coarse=: double vectors only");
    const int k = X->k;
    if (k > BSR_KMAX) return bsr_error(BSR_ERR_ARG, "coarse=: %d columns, at most %d an apply", k, BSR_KMAX);
    double one[BSR_KMAX];
    for (int j = 0; j < k; j++) one[j] = 1;
    BSR_TRY(scratch(C, k));
    BSR_TRY(C->S->apply(C->S, X, Y));
    BSR_TRY(residual(C, X, Y));
    BSR_TRY(bsr_ctx_spmm(C->ctx, BSR_KERNEL_AUTO, 1, C->Rm, C->T, 0, C->Rc));   /* Rc = P^T T */
    BSR_TRY(C->cs->apply(C->cs, C->Rc, C->Ec));
    BSR_TRY(bsr_ctx_spmm(C->ctx, BSR_KERNEL_AUTO, 1, C->Pm, C->Ec, 1, Y));      /* Y += P Ec */
    BSR_TRY(residual(C, X, Y));
    BSR_TRY(C->S->apply(C->S, C->T, C->W));
    return bsr_ctx_axpy(C->ctx, Y, one, C->W);
}

/* New values on the setup's pattern: S refactored, the coarse space (the
 * test vectors' P) kept as the ILU's pattern is, Ac made from it and its
 * factor refactored.  A refactor on the setup's values thus gives the
 * setup's bits; pc->refresh makes the space anew (as does a refactor after
 * a build that failed before its transfers). */
static bsr_status coarse_refactor(bsr_pc *pc, const bsr_matrix *A)
{
    coarse *C = pc->data;
    C->valid = 0;
    if (C->S->refactor) BSR_TRY(C->S->refactor(C->S, A));
    C->A = A;
    if (!C->space) {   /* the last build failed before its transfers: nothing to keep */
        BSR_TRY(build(C));
    } else {
        BSR_TRY(build_level(C, 0));
        C->valid = 1;
    }
    describe(pc, C);
    return BSR_OK;
}

/* pc->refresh (pattern=refresh, or auto once the iterations grew): S's
 * pattern chosen again where it can be (else refactored), then the test
 * vectors, P, Ac and its factor made anew, as a setup makes them. */
static bsr_status coarse_refresh(bsr_pc *pc, const bsr_matrix *A)
{
    coarse *C = pc->data;
    C->valid = 0;
    if (C->S->refresh) BSR_TRY(C->S->refresh(C->S, A));
    else if (C->S->refactor) BSR_TRY(C->S->refactor(C->S, A));
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
    bsr_pc_destroy(C->cs);
    bsr_matrix_destroy(C->Ac);
    bsr_matrix_destroy(C->Pm);
    bsr_matrix_destroy(C->Rm);
    bsr_multivec *v[4] = {C->T, C->W, C->Rc, C->Ec};
    for (int i = 0; i < 4; i++) bsr_multivec_destroy(v[i]);
    free(C->part); free(C->aptr); free(C->acell); free(C->mg); free(C->P);
    bsr_context_destroy(C->own);
    free(C);
}

static bsr_status coarse_setup(bsr_pc *pc, const bsr_matrix *A, const bsr_solver_options *o, bsr_context *ctx)
{
    if (o->precision != BSR_DOUBLE || A->prec != BSR_DOUBLE)
        return bsr_error(BSR_ERR_UNSUPPORTED, "coarse=%d: needs precision=double and a double matrix", o->coarse);
    coarse *C = bsr_calloc(1, sizeof *C, "two-level preconditioner");
    if (!C) return BSR_ERR_NOMEM;
    pc->data = C;
    if (!ctx) BSR_TRY(bsr_context_create(&C->own, BSR_BACKEND_CPU, 0, NULL));
    C->ctx = ctx ? ctx : C->own;
    bsr_solver_options io = *o;
    io.coarse = 0;
    if (pc->given) {   /* shared with the caller, who set it up on A with io */
        C->S = pc->given;
        C->S->holders++;
    } else {
        BSR_TRY(bsr_pc_create(A, &io, ctx, pc->ahead, NULL, &C->S));
    }
    bsr_prof_mark("coarse setup: smoother (the ILU)");
    const int n = A->nbrows;
    C->A = A;
    C->n = n;
    C->b = A->b;
    /* 2 M test vectors, at most one an unknown (a tiny system) */
    C->K = 2 * (int64_t)o->coarse <= (int64_t)n * A->b ? 2 * o->coarse : n * A->b;
    C->m = o->coarse < C->K ? o->coarse : C->K;
    C->part = bsr_malloc(sizeof(int) * ((size_t)n + 1), "aggregates");
    C->acell = bsr_malloc(sizeof(int) * ((size_t)n + 1), "aggregate rows");
    if (!C->part || !C->acell) return BSR_ERR_NOMEM;
    BSR_TRY(bsr_aggregate_pairs(A, COARSE_AGG_ROWS, C->part, &C->na));
    bsr_prof_mark("coarse setup: aggregates");
    const int na = C->na;
    C->aptr = bsr_calloc((size_t)na + 1, sizeof(int), "aggregate pointers");
    C->mg = bsr_malloc(sizeof(int) * ((size_t)na + 1), "aggregate columns");
    if (!C->aptr || !C->mg) return BSR_ERR_NOMEM;
    for (int i = 0; i < n; i++) C->aptr[C->part[i] + 1]++;
    for (int g = 0; g < na; g++) C->aptr[g + 1] += C->aptr[g];
    for (int g = 0; g < na; g++) C->mg[g] = C->aptr[g];   /* the cursor, for now */
    for (int i = 0; i < n; i++) {   /* rows ascending within an aggregate */
        const int g = C->part[i];
        C->acell[C->mg[g]++] = i;
    }
    BSR_TRY(build(C));
    describe(pc, C);
    pc->refresh = coarse_refresh;
    return BSR_OK;
}

const bsr_pc_ops bsr_pc_coarse_ops = {coarse_setup, coarse_refactor, coarse_apply, coarse_destroy};
