/* SPDX-License-Identifier: BSD-3-Clause */
/* Solver module internals: the backend vector-operations table the Krylov
 * loops are written against, the preconditioner interface, the solver object. */
#ifndef BSR_SOLVER_IMPL_H
#define BSR_SOLVER_IMPL_H

#include "internal.h"

/* ---- preconditioner: PETSc-PC-like table of function pointers -------------
 * apply computes Y = M^{-1} X for all k columns of backend vectors (host
 * multivecs on the CPU backend, device ones on the CUDA backend) in the
 * solver's working precision; X and Y do not alias. */
typedef struct bsr_pc bsr_pc;
struct bsr_pc {
    const char *name;
    void *data;
    int64_t nnzb;    /* blocks stored */
    int pivots_regularized;
    int exact;       /* the last setup or refactor made A's complete factorization (every
                      * block kept, no pivot changed): M^{-1} A = I up to its rounding */
    int grow_passes; /* threshold ILU with grow: refactorizations with growth weights
                      * in the last setup (0: the factor is grow=0's, bit for bit) */
    char info[480];  /* ordering / levels / factor statistics, for reports */
    /* one apply's least traffic (the profile's bandwidth bound, krylov_bytes.c):
     * bytes of matrix / factor data read, and passes over n x k vectors; both 0
     * when unknown (the bound then counts only what the Krylov method moves) */
    double bytes_fixed, bytes_passes;
    /* seconds of the last setup or refactor spent in device work (uploads,
     * factorization and analysis on the device; 0 on the CPU): the solver's
     * setup_dev_s counts them, setup_pc_s the rest */
    double dev_s;
    bsr_status (*refactor)(bsr_pc *pc, const bsr_matrix *A);  /* new values, same pattern */
    /* new values, the factor's pattern chosen anew on the symbolic value the
     * setup made (its ordering kept): what a new setup would make, without
     * its ordering.  Set by a setup where that holds (a threshold ILU without
     * a matching, on either backend: its symbolic value does not depend on
     * A's values); NULL: a pattern refresh is a new setup */
    bsr_status (*refresh)(bsr_pc *pc, const bsr_matrix *A);
    bsr_status (*apply)(bsr_pc *pc, const bsr_multivec *X, bsr_multivec *Y);
    void (*destroy)(bsr_pc *pc);
    /* during the setup only: an ordering of A made ahead (NULL: none), which
     * a setup asking for that ordering copies instead of making its own */
    const bsr_order_ahead *ahead;
    /* during the setup only: for two levels, their smoother already set up
     * (NULL: the setup makes one), shared with the caller */
    bsr_pc *given;
    /* its holders besides the first (two levels sharing it as their
     * smoother): bsr_pc_destroy lets one go instead of freeing it */
    int holders;
};

/* Build the preconditioner o->precond for A (working precision) on the
 * backend it is applied on: ctx a CUDA context, the device (A may gain a
 * current device mirror, the caller's to keep or release); NULL (or a CPU
 * context), the host.  The one object of
 * (A, ctx), made by the table's row for (kind, backend) (precond_table.c):
 * BSR_ERR_UNSUPPORTED naming both when there is none.  ahead (may be NULL):
 * an ordering of A made ahead, used where the setup asks for that one.
 * smoother (may be NULL; with o->coarse only): the ILU of o's options
 * without the coarse level, already set up on A, which two levels share
 * as their smoother instead of making it again. */
bsr_status bsr_pc_create(const bsr_matrix *A, const bsr_solver_options *o, bsr_context *ctx,
                         const bsr_order_ahead *ahead, bsr_pc *smoother, bsr_pc **pc);
void bsr_pc_destroy(bsr_pc *pc);
/* What a preconditioner's user settles before bsr_pc_create (solver.c; the
 * solver and the distributed overlap preconditioner alike):
 * o->factor and o->cap resolved for A (working precision) applied on the
 * device (device) or the host; BSR_ERR_UNSUPPORTED for factor=gpu without
 * the device or an ILU, or with a matching. */
bsr_status bsr_pc_options_resolve(bsr_solver_options *o, int device, const bsr_matrix *A);
/* BSR_ERR_VALUE naming the first block row of A (the user's precision)
 * whose values are all subnormal in the precision o's preconditioner works
 * in ("rescale A"); BSR_OK for precond=none. */
bsr_status bsr_check_subnormal_rows(const bsr_solver_options *o, const bsr_matrix *A);
/* Nonzero when a refactor of ILUT/ILU2 chooses a new pattern by a new setup:
 * pattern=refresh, or auto once iters_last grew past pattern_growth times
 * iters_base (the first solve's on this pattern; 0: none yet). */
int bsr_pc_pattern_refresh(const bsr_solver_options *o, int iters_base, int iters_last);
/* The work bound of the fallback's setup under o (block multiply-adds):
 * o->work when set, else BSR_FALLBACK_WORK, or for the complete factor
 * (complete nonzero) BSR_FALLBACK_WORK_COMPLETE on the host and
 * BSR_FALLBACK_WORK_DEVICE on the device (device nonzero) (solver.c). */
double bsr_fallback_work(const bsr_solver_options *o, int complete, int device);
/* Nonzero where the host's factorization under o applies a matching to A
 * (an ILU with match=mpt, or auto on a weak diagonal: solver.c). */
int bsr_match_applies(const bsr_solver_options *o, const bsr_matrix *A);
/* Nonzero where the host's complete factor of A under o knows its work from
 * its pattern before its rows (a structurally symmetric A, no matching, whose
 * rows' permutation would make the pattern nonsymmetric: ilu_complete.c), so
 * that it takes BSR_FALLBACK_WORK_COMPLETE; elsewhere the rows choose its
 * pattern, under the rows' bound (solver.c). */
int bsr_complete_known(const bsr_solver_options *o, const bsr_matrix *A);
/* The fallback's stages (solver.c's fallback_options): none, the factor
 * without its cap, with growth weights, the complete factor (on the device
 * where the first factor was factored there, else on the host), the first factor
 * solved by GMRES-DR, two levels on the first factor's options. */
enum { BSR_FB_NONE = 0, BSR_FB_UNCAPPED, BSR_FB_GROW, BSR_FB_COMPLETE, BSR_FB_DEFLATED, BSR_FB_TWOLEVEL,
       BSR_FB_TWOLEVEL_DR };
/* The stages of two levels on the first factor (its smoother shared), probed. */
#define BSR_FB_IS_TWOLEVEL(kind) ((kind) == BSR_FB_TWOLEVEL || (kind) == BSR_FB_TWOLEVEL_DR)
/* The kind of the fallback's first stage (BSR_FB_*) for a factor of options
 * o of a matrix of nbrows block rows on the CUDA backend (device nonzero) or
 * the CPU (solver.c). */
int bsr_fallback_first(const bsr_solver_options *o, int device, int nbrows);
/* Nonzero for the ILU kinds (ilu0, ilut, ilu2): those precond_ilu.c builds. */
#define BSR_PC_IS_ILU(k) ((k) >= BSR_PC_ILU0 && (k) <= BSR_PC_ILU2)
/* Nonzero when some block row of A has a missing, zero or singular diagonal
 * block: where match=auto looks further (ilu_match.c). */
int bsr_ilu_diagonal_weak(const bsr_matrix *A);
/* The host plan of S's ILU preconditioner, NULL when it is no ILU
 * (precond_ilu.c); it holds host factors when F->valid (not with factor=gpu). */
const bsr_ilu *bsr_solver_host_ilu(const bsr_solver *S);
/* Where pc is a threshold ILU whose device rows chose among RCM's variants
 * by their levels (its default order, no reorder given): lv[v] the levels
 * L + U of each variant set up (0: not tried; variant 0's always) and the
 * variant kept returned; elsewhere -1 and lv zero. */
int bsr_pc_rcm_levels(const bsr_pc *pc, int lv[4]);
/* The variant a rank whose RCM variants have the levels lv keeps when the
 * slowest rank's factor has `slowest`: the lowest-numbered one within
 * ILU_RCM_MARGIN of it.  Its fewest levels buy a rank nothing once another
 * rank is slower, and the numbering the others change most converge worst:
 * on rotconv3d:48,4's four overlapped subdomains variant 2 took 1.7x the
 * iterations of variant 1 at about the same slowest rank's levels
 * (bench/RESULTS.md).  kept where none is within. */
int bsr_rcm_variant_pick(const int lv[4], int kept, int slowest);
/* o->cap resolved for a matrix of nbrows block rows: the default
 * (BSR_CAP_DEFAULT) is auto for rows factored on the device (factor_gpu)
 * and for the host's threshold rows (ILUT, ILU2) from BSR_HOST_CAP_ROWS
 * block rows on, none for the host's otherwise (options.c).  A cap so resolved puts the rows in RCM order
 * unless reorder is given, and so does the host's ILU(0) from BSR_HOST_CAP_ROWS
 * block rows on where its levels are wide (precond_ilu.c, ilu0_host_rcm). */
int bsr_cap_resolved(const bsr_solver_options *o, int factor_gpu, int nbrows);
#define BSR_HOST_CAP_ROWS 100000
/* The cap's value as the options write it: "auto" (0), P (> 0), "none" (< 0,
 * the default included: the host's); buf of 16 chars at least. */
const char *bsr_cap_name(int cap, char *buf);
/* The option string's name of a BSR_HALO_* value ("auto", "host", ...; "?" outside them). */
const char *bsr_halo_name(int halo);
/* (ilu2fill) o->keep_pattern resolved: "auto" (-1) is on for ILU2, off otherwise (options.c). */
int bsr_keep_pattern(const bsr_solver_options *o);
/* Nonzero when options pattern and pattern_growth apply to o's
 * preconditioner: ILUT and ILU2 (their threshold pattern), and two levels
 * (coarse=M: the coarse space). */
int bsr_pattern_applies(const bsr_solver_options *o);
/* etol=auto's target with a threshold ILU, in units of rtol. */
#define BSR_ETOL_AUTO 100
/* o->etol resolved (options.c): the relative error target a converged column
 * goes on for, 0 for none ("auto": 100 rtol with ILUT or ILU2, else none). */
double bsr_etol_resolved(const bsr_solver_options *o);
/* Invert a b x b row-major block in double by LU with partial pivoting:
 * returns 0, or 1 when the block is singular (inv untouched then). */
int bsr_block_invert(int b, const double *a, double *inv);

/* ---- backend vector operations -------------------------------------------
 * Every Krylov method is written once against this table.  Vectors are n x k
 * multivectors of the backend; per-column coefficient arrays (length k) live
 * on the host; mask[j] = 0 leaves column j untouched (mask NULL = all).  As in
 * BLAS, a zero coefficient means its vector is not read (so a NaN there does
 * not propagate): axpby with a = b = 0 zeroes Y.
 * Reductions return k doubles to the host: the only per-iteration traffic. */
/* Work vectors kept by the solver between solves (same n, k, precision,
 * backend), so that a time-stepping code pays no allocation per solve. */
#define BSR_POOL_MAX 64
typedef struct {
    bsr_multivec *v[BSR_POOL_MAX];
    int count, k, device;
    bsr_precision prec;
} bsr_vpool;
#define BSR_KMAX 64 /* most columns one solve takes (stack arrays of coefficients) */
typedef struct bsr_kops bsr_kops;
struct bsr_kops {
    void *be;              /* backend state */
    int64_t n;
    int k;
    bsr_precision prec;
    const bsr_matrix *A;   /* operator, working precision */
    bsr_pc *pc;
    bsr_vpool *pool;       /* NULL: vnew/vfree allocate and free */
    struct bsr_kprof *prof;/* NULL unless profiling (krylov_common.c) */
    void *ext;             /* state of a layer wrapping the table (the distributed solve) */
    bsr_status (*vnew)(const bsr_kops *o, bsr_multivec **V);                 /* zeroed */
    void (*vfree)(const bsr_kops *o, bsr_multivec *V);
    bsr_status (*zero)(const bsr_kops *o, bsr_multivec *V);                  /* V = 0 */
    bsr_status (*copy)(const bsr_kops *o, bsr_multivec *Y, const bsr_multivec *X,
                       const unsigned char *mask);
    /* Y = a X + b Y */
    bsr_status (*axpby)(const bsr_kops *o, bsr_multivec *Y, const double *a,
                        const bsr_multivec *X, const double *b, const unsigned char *mask);
    /* Y = a X + b Z + c Y */
    bsr_status (*axpbypcz)(const bsr_kops *o, bsr_multivec *Y, const double *a,
                           const bsr_multivec *X, const double *b, const bsr_multivec *Z,
                           const double *c, const unsigned char *mask);
    /* out[j] = X(:,j).Y(:,j), deterministic, accumulated in double */
    bsr_status (*dot)(const bsr_kops *o, const bsr_multivec *X, const bsr_multivec *Y,
                      double *out);
    /* out[p][j] = (X[p](:,j), Y[p](:,j)) for p < np (1..BSR_KOPS_MAXP) at
     * once (one sweep, one launch and one global reduction), each with the
     * bits of its lone dot; NULL: bsr_kops_dotp makes np dot calls */
    bsr_status (*dotp)(const bsr_kops *o, int np, const bsr_multivec *const *X, const bsr_multivec *const *Y,
                       double *const *out);
    /* out[l*k + j] = (X(:,j), Y[l](:,j)) for l < m: m inner products with one
     * global reduction (GMRES's classical Gram-Schmidt); NULL: bsr_kops_dotm
     * makes them by dotp, BSR_KOPS_MAXP at a time, or by m dot calls */
    bsr_status (*dotm)(const bsr_kops *o, const bsr_multivec *X, bsr_multivec *const *Y, int m, double *out);
    /* Y = b Y + sum_{l<m} c[l*k + j] V[l] per column j of mask (NULL: all),
     * one pass over the vectors: the bits of the axpby calls Y = c_0 V_0 +
     * b Y, then Y = c_l V_l + Y in turn (a zero coefficient reads nothing);
     * NULL: bsr_kops_lincomb makes those calls */
    bsr_status (*lincomb)(const bsr_kops *o, bsr_multivec *Y, const double *b, int m, bsr_multivec *const *V,
                          const double *c, const unsigned char *mask);
    /* Y = A X */
    bsr_status (*matvec)(const bsr_kops *o, const bsr_multivec *X, bsr_multivec *Y);
    /* Fused updates and inner products, one vector pass (NULL: bsr_kops_upd_dot makes
     * the separate calls): for u < nu (1 or 2), Z[u] = a[u] X[u] + b[u] Y[u] +
     * c[u] Z[u] (axpbypcz's rules, one mask), then out1 = (D, W1) (W1 NULL:
     * (D, D)) and, with W2, out2 = (D, W2), D = Z[nu-1]; the bits of the
     * separate calls, in one pass over the vectors */
    bsr_status (*upd_dot)(const bsr_kops *o, int nu, bsr_multivec *const *Z, const double *const *a,
                          const bsr_multivec *const *X, const double *const *b, const bsr_multivec *const *Y,
                          const double *const *c, const unsigned char *mask, const bsr_multivec *W1, double *out1,
                          const bsr_multivec *W2, double *out2);
    /* out[j] = || |A| |X(:,j)| + |B(:,j)| ||_2, the scale of the rounding error
     * of B - A X (krylov_floor.c); NULL: unknown, no floor test */
    bsr_status (*absnorm)(const bsr_kops *o, const bsr_multivec *B, const bsr_multivec *X, double *out);
};

/* Route o's vnew/vfree through pool (emptied first when its shape differs). */
void bsr_kops_use_pool(bsr_kops *o, bsr_vpool *pool, int device);
void bsr_vpool_clear(bsr_vpool *pool);

/* Profiling: wrap o's operations so that each is timed (after a device
 * synchronization) into 4 classes: SpMM, preconditioner, updates, reductions. */
enum { BSR_PROF_MATVEC = 0, BSR_PROF_PRECOND, BSR_PROF_UPDATE, BSR_PROF_REDUCE };
struct bsr_kprof {
    bsr_kops inner;        /* the unwrapped table */
    bsr_context *ctx;      /* synchronized before reading the clock (NULL: CPU) */
    void *ev;              /* device: CUDA events around each operation instead of a
                              synchronization (bsr_cuda_evlog; NULL: host clock) */
    double s[4];
    int calls[4];
};
/* On the device the operations are timed by events on the stream, so that the
 * profile adds no synchronization to the iteration it measures;
 * bsr_kops_profile_finish then waits for them and sums them into P->s. */
void bsr_kops_profile(bsr_kops *o, struct bsr_kprof *P, bsr_context *ctx);
void bsr_kops_profile_finish(struct bsr_kprof *P);
/* Bandwidth model (krylov_bytes.c): bytes one iteration of the method of
 * opt moves at the least on o (A, the preconditioner's pc->bytes_*, the
 * vectors; the method's row says how many of each, krylov_table.h), and
 * those of the phase's work outside the iterations (the residual norms of the
 * start and of the convergence check); 0 when the method is not modelled. */
double bsr_krylov_iter_bytes(const bsr_kops *o, const bsr_solver_options *opt);
double bsr_krylov_extra_bytes(const bsr_kops *o, const bsr_solver_options *opt);

/* CPU table for A and pc (o->be unused). */
/* The backend-independent fields of o (the rest zeroed): n, k, precision, A, pc. */
void bsr_kops_base(bsr_kops *o, const bsr_matrix *A, bsr_pc *pc, int k);
void bsr_kops_cpu(bsr_kops *o, const bsr_matrix *A, bsr_pc *pc, int k);
/* CUDA table (src/krylov/solver_cuda.c): vectors created on ctx's device; A must be
 * uploaded already.  BSR_ERR_NODEVICE without CUDA. */
bsr_status bsr_kops_cuda(bsr_kops *o, bsr_context *ctx, const bsr_matrix *A, bsr_pc *pc, int k);
/* Y = M^{-1} X through o->pc (identity copy when none). */
bsr_status bsr_kops_precond(const bsr_kops *o, const bsr_multivec *X, bsr_multivec *Y);
/* R = B - A X (all columns; T is scratch for A X). */
bsr_status bsr_kops_residual(const bsr_kops *o, const bsr_multivec *B, const bsr_multivec *X,
                             bsr_multivec *R);
/* out[j] = ||X(:,j)||_2. */
bsr_status bsr_kops_norm2(const bsr_kops *o, const bsr_multivec *X, double *out);
/* A Krylov method's workspace: nv vectors shaped like the solve's
 * (o->vnew), ns * k scalars and nm * k flags, zeroed; what names the method
 * in messages.  Free with bsr_kwork_free (also after a failed new). */
#define BSR_KWORK_MAXV 12
typedef struct {
    bsr_multivec *v[BSR_KWORK_MAXV];
    int nv;
    double *sc;
    unsigned char *m;
} bsr_kwork;
bsr_status bsr_kwork_new(const bsr_kops *o, int nv, int ns, int nm, const char *what, bsr_kwork *w);
void bsr_kwork_free(const bsr_kops *o, bsr_kwork *w);
/* o->dotp, or its np dot calls. */
#define BSR_KOPS_MAXP 3
bsr_status bsr_kops_dotp(const bsr_kops *o, int np, const bsr_multivec *const *X, const bsr_multivec *const *Y,
                         double *const *out);
/* out[j] = sqrt(out[j]), out holding the sums of squares of X's columns,
 * with bsr_kops_norm2's rescaling of the columns whose sum left range. */
bsr_status bsr_kops_norm2_finish(const bsr_kops *o, const bsr_multivec *X, double *out);

/* o->upd_dot, or its separate calls (axpbypcz for each update, then dot or
 * dotp) when the backend has none or bsr_kops_set_unfused(1) was called. */
bsr_status bsr_kops_upd_dot(const bsr_kops *o, int nu, bsr_multivec *const *Z, const double *const *a,
                            const bsr_multivec *const *X, const double *const *b, const bsr_multivec *const *Y,
                            const double *const *c, const unsigned char *mask, const bsr_multivec *W1, double *out1,
                            const bsr_multivec *W2, double *out2);

/* out[l*k + j] = (X(:,j), Y[l](:,j)), l < m, fused when the backend can. */
bsr_status bsr_kops_dotm(const bsr_kops *o, const bsr_multivec *X, bsr_multivec *const *Y, int m, double *out);
/* o->lincomb (b NULL: 1), or its axpby calls when the backend has none or
 * bsr_kops_set_unfused(1) was called. */
bsr_status bsr_kops_lincomb(const bsr_kops *o, bsr_multivec *Y, const double *b, int m, bsr_multivec *const *V,
                            const double *c, const unsigned char *mask);

/* ---- shared Krylov bookkeeping (krylov_common.c) ------------------------- */
/* The deflation space a GMRES-DR solve leaves to the next solves on the
 * same operator and preconditioner (the error control's): column j's basis
 * is column j of V[0..kk[j]], orthonormal, with A M^{-1} V_kk = V_kk+1 Hbar_j
 * (Hbar_j: (kk[j] + 1) x kk[j], column-major, leading dimension ld, at
 * H + j ld (ld - 1)); kk[j] = 0: none for that column; a flexible solve's
 * (flex=1) keeps Z = M^{-1} V_kk as made too, A Z = V_kk+1 Hbar_j.  Those solves'
 * GMRES keeps the space out of its cycles (krylov_gmres.c): the few
 * eigenvalues near the origin that the GMRES-DR solve found need not be
 * found again (the error control's estimate on coupled3d in 15 iterations
 * instead of 53). */
typedef struct {
    int k, top, ld;           /* columns; multivectors held (the largest kk + 1, or K + 2 where a
                                 column's basis was copied out while others went on); ld = K + 2 */
    bsr_multivec **V;         /* top of them, the solve's backend's; NULL: nothing kept */
    bsr_multivec **Z;         /* a flexible solve's M^{-1} V_kk as made (top - 1 of them), else NULL */
    int kk[BSR_KMAX];
    double *H;
} bsr_krecycle;
/* r's multivectors (o's) and matrices freed, r zeroed. */
void bsr_krecycle_free(const bsr_kops *o, bsr_krecycle *r);

typedef struct {
    const bsr_solver_options *opt;
    int k;
    double *bnorm, *tol;       /* per column: ||b||, max(rtol*||b||, atol) */
    double *r0norm, *best;     /* initial and best residual norms */
    int *best_it;
    int *above;                /* iterations in a row with the residual above twice the initial one */
    unsigned char *active;     /* column still iterating */
    bsr_col_stats *col;        /* results, owned by the caller's stats */
    int it;                    /* iterations done */
    double *relres;            /* scratch for the monitor */
    int hist_cap;
    int probe;                 /* > 0: a column whose best residual is still above half its
                                  initial one after this many iterations stops as stagnated, as
                                  does one past them whose residual stayed above twice the initial
                                  one for BSR_FALLBACK_PROBE_RUN iterations, or whose best residual
                                  gained less than 1% in the last probe iterations (the fallback's
                                  probe of the first factor; 0: none) */
    int probe_hit;             /* the probe stopped a column */
    /* called once, at the first iteration from probe / 10 on where a
     * column's best residual is still above half its initial one, or has
     * not gained 1% in the last probe / 10 iterations (the probe may stop
     * it): the fallback's host work can start beside the solve; NULL: none */
    void (*ahead)(void *data);
    void *ahead_data;
    bsr_krecycle *keep;        /* GMRES-DR leaves its last deflation space here (NULL: not kept) */
    const bsr_krecycle *proj;  /* GMRES keeps this space out of its cycles (NULL: none) */
    int aimed;                 /* tol is the error control's aim, tighter than rtol (bsr_kstate_aim) */
    int *reached;              /* aimed: the iteration whose residual first met rtol (-1: none yet) */
} bsr_kstate;
/* The columns' tolerances tightened to aim (a relative residual under
 * rtol: bsr_etol_aim's), ks->aimed set. */
void bsr_kstate_aim(bsr_kstate *ks, double aim);
/* 1 when an aimed solve stopped a column short of its aim (not converged)
 * after its residual had met rtol: the same solve without the aim would
 * have stopped converged there. */
int bsr_kstate_aim_missed(const bsr_kstate *ks);

/* Error control (options.etol, solve_etol.c), after a solve whose columns
 * all converged (solve_once): each converged column's relative error
 * ||x - x*|| / ||x|| estimated as ||E|| / ||X|| with A E = R solved from
 * zero by opt's method and o's preconditioner (to rtol BSR_ERREST_RTOL, in
 * at most as many iterations as the column took, at least 20, and twice
 * that over all the estimates); where above etol, X += E and again with
 * E's rtol the reduction the estimate asks for, at most BSR_ETOL_ROUNDS
 * corrections, each while the last one halved the estimate.  X stays where
 * the first estimate is within etol.  A later solve on the same pattern
 * predicts its error instead where it can (*amp, *since: the solver's,
 * zeroed at a setup or a new pattern; the systems of a time loop,
 * refactored on one pattern, keep their conditioning from step to step).
 * R = B - A X on entry and on return; col's norms follow X, its err_*
 * fields say what was done.  rec (may be NULL): the solve's deflation
 * space, which the estimates' GMRES starts from.  BSR_ERR_NOCONV where a
 * column ends inaccurate (bsr_etol_verdict). */
bsr_status bsr_solve_etol(const bsr_kops *o, const bsr_solver_options *opt, double etol, const bsr_multivec *B,
                          bsr_multivec *X, bsr_multivec *R, bsr_col_stats *col, double *amp, double *meas,
                          int *since, const bsr_krecycle *rec);
/* The relative residual a later solve on a pattern aims at (0: rtol's, no
 * aim), where the last estimate on it measured amp (the error over the
 * relative residual; 0: none) and the error meas (the largest column's, of
 * the x the solve stopped with), and since solves have predicted their
 * error from it: where meas was over etol / ETOL_MARGIN (a solve stopped
 * as that one did predicts no error under it; where it was under, nothing
 * changes), the residual whose predicted error is etol / ETOL_MARGIN times
 * ETOL_AIM_ROOM, if tighter than opt's rtol, at least ETOL_AIM_EPS units
 * of the working precision's rounding, and not where the next solve
 * measures again (solve_etol.c).  The Krylov solve goes on to it
 * (a few more iterations of the same solve), so that bsr_solve_etol
 * predicts its error instead of solving for an estimate and corrections:
 * on time loops of ill-conditioned systems, the systems whose error the
 * residual hides. */
double bsr_etol_aim(double amp, double meas, int since, double etol, const bsr_solver_options *opt);
/* The error control's verdict on k columns: a converged column whose
 * estimate is of the x returned (last_of_x[j]: no correction followed it),
 * no lower bound, finite and over both etol and BSR_ETOL_FAIL is
 * BSR_DIVERGED_INACCURATE; BSR_ERR_NOCONV naming the first such column,
 * else BSR_OK (solve_etol.c). */
bsr_status bsr_etol_verdict(bsr_col_stats *col, const unsigned char *last_of_x, double etol, int k);
/* bsr_solver_error_estimate's work on the backend's vectors (solve_etol.c):
 * R = B - A X, then one estimate of X's error by the error control's solve
 * within opt's maxit (col's err_est, err_its, err_low, and reason: the
 * estimate's solve's, BSR_CONVERGED_FLOOR where B - A X is at the rounding
 * floor); X as given. */
bsr_status bsr_estimate_x(const bsr_kops *o, const bsr_solver_options *opt, const bsr_multivec *B,
                          const bsr_multivec *X, bsr_multivec *R, bsr_col_stats *col);
/* c's true residual norm rn and its relative residual (solver.c). */
void bsr_col_residual(bsr_col_stats *c, double rn);

bsr_status bsr_kstate_init(bsr_kstate *ks, const bsr_solver_options *opt, int k,
                           const double *bnorm, bsr_col_stats *col);
void bsr_kstate_free(bsr_kstate *ks);
/* Record residual norms rn[j] of active columns after iteration ks->it, and
 * decide per column: converged, diverged, stagnated, NaN, maxit.  Columns that
 * stop get their reason and active = 0.  Returns the number still active. */
int bsr_kstate_update(bsr_kstate *ks, const double *rn);
/* Stop column j with reason r (its iteration count = ks->it). */
void bsr_kstate_stop(bsr_kstate *ks, int j, bsr_reason r);
/* After a step in which some columns of was_active converged by their
 * recurrence residual: R = B - A X (all columns), and columns whose true
 * residual misses their tolerance are reopened (reopen[j] = 1, a restart
 * counted; after max_restarts they stop as stagnated).  Returns how many were
 * reopened; R then holds their true residual.  *st: backend errors. */
int bsr_kstate_verify(const bsr_kops *o, bsr_kstate *ks, const unsigned char *was_active,
                      const bsr_multivec *B, const bsr_multivec *X, bsr_multivec *R,
                      unsigned char *reopen, bsr_status *st);
/* Columns that broke down (bd[j] != 0): an active one restarts (its restart
 * counted; bd[j] stays 1) unless it has had max_restarts, then it stops as
 * BSR_DIVERGED_BREAKDOWN; bd[j] = 0 for all others.  Returns how many restart. */
int bsr_kstate_breakdowns(bsr_kstate *ks, unsigned char *bd);
/* Number of active columns. */
int bsr_kstate_nactive(const bsr_kstate *ks);
/* The rounding floor (krylov_floor.c): floor[j] = eps * || |A| |X(:,j)| + |B(:,j)| ||
 * in the working precision's eps (0 when o->absnorm is NULL). */
bsr_status bsr_kops_floor(const bsr_kops *o, const bsr_multivec *B, const bsr_multivec *X, double *floor);
/* A column whose true residual misses tol but lies at or under the floor
 * converged as far as the precision shows: reason BSR_CONVERGED_FLOOR, 1;
 * unless the residual is no better than x = 0's or the floor exceeds
 * ||b||/10 (x grown as only a numerically singular A makes it): then
 * c->singular = 1 (b != 0), the reason stays, 0. */
int bsr_floor_accept(bsr_col_stats *c, double tol, double resnorm, double floor);
/* || |A| |X(:,j)| + |B(:,j)| ||_2 from host data in A's precision (k columns). */
bsr_status bsr_absnorm_host(const bsr_matrix *A, const void *B, const void *X, int k, double *out);

/* The methods are the rows of the Krylov table (krylov_table.h): each solves
 * with B, X backend vectors (X: initial guess in, solution out); the stats
 * columns get iterations, reasons, restarts, histories. */
/* run(o, B, X, ks) on columns scaled by powers of 2 so that ||b|| is near 1
 * where it lies outside [2^-200, 2^200] (the methods' inner products would
 * overflow or underflow); X in and out and the stats stay in the caller's
 * units.  Columns within the range are passed through unchanged. */
bsr_status bsr_krylov_scaled(const bsr_kops *o, const bsr_multivec *B, bsr_multivec *X, bsr_kstate *ks,
                             bsr_status (*run)(const bsr_kops *, const bsr_multivec *, bsr_multivec *,
                                               bsr_kstate *));

/* ---- the solver object ---------------------------------------------------- */
struct bsr_solver {
    bsr_solver_options opt;
    bsr_context *ctx;
    int device;                /* iterate on the device */
    const bsr_matrix *A_user;
    int nbrows;                /* block rows of the last matrix set up (A_user's, kept when a setup fails:
                                * the fallback's stages resolve the cap's default by it) */
    int pattern_sym;           /* A_user's pattern structurally symmetric and no matching
                                * (bsr_complete_known), found at setup where the fallback may
                                * make the host's complete factor: its bound */
    bsr_matrix *A_work;        /* copy in working precision (NULL: A_user is it) */
    bsr_pc *pc;                /* the preconditioner, on the backend the solve runs on */
    bsr_vpool pool;            /* work vectors reused between solves */
    double setup_s;
    double setup_pc_s, setup_dev_s; /* parts of setup_s (profiling) */
    int pattern_new;           /* the last setup/refactor chose the preconditioner's pattern */
    int pattern_refreshes;     /* refactors that did (pattern=refresh|auto) */
    int fallback_stopped;      /* the fallback gave up on this matrix (its setup failed, as past
                                  its work bound, or growth weights left the factor as it was):
                                  the solves until the next setup do not try it again */
    char setup_fb[192];        /* why the fallback set A up at a setup or refactor (the factor broke
                                  down: BSR_ERR_SINGULAR), for the next solve's stats; "" otherwise */
    double setup_fb_s;         /* the seconds of the setup or refactor that broke down */
    int refactor_setup;        /* a refactor's fallback could not set A up: the next refactor sets its
                                  A up (the solves refuse until then, refactor_failed) */
    int iters_base, iters_last;/* most iterations of a column: first solve on the pattern, last solve */
    double err_amp;            /* options.etol: the largest error estimate over relative residual the
                                  last estimate's solve measured on this pattern (0: none yet) */
    double err_meas;           /* and the largest error estimate it measured (bsr_etol_aim) */
    int err_since;             /* solves since that estimate whose error was predicted from it
                                  (bsr_solve_etol) */
    int aim_off;               /* a solve on this pattern stopped short of the error control's aim
                                  (bsr_etol_aim): later ones stop at rtol again */
    int refactor_failed;       /* the last refactor failed part way: the operator or the preconditioner
                                * may hold older values, so solves refuse until a setup or refactor succeeds */
    /* A distributed solve (src/mpi/) makes the Krylov table's product and
     * reductions global through this hook, called on the table once it is
     * built; NULL for a serial solver. */
    bsr_status (*kops_hook)(void *data, bsr_kops *o);
    void *kops_hook_data;
    int op_external;           /* the operator's product is not this solver's (a distributed solve: the
                                  product runs on the rank's own matrices; overlap: only the
                                  preconditioner is used): A's device copy serves the device
                                  preconditioner's setup and refactor only and is released after
                                  them, so that the rank's rows are not held twice on the device */
    double copy_gbs;           /* profile: device-to-device copy bandwidth, measured once */
    uint64_t warm_k;           /* bit k-1: a product and an apply with k columns ran (bsr_solver_device_warm) */
    size_t dev_held, dev_peak; /* device: library bytes on the context's device after the last setup,
                                  and the most during it (kernels/cuda_alloc.cu) */
    bsr_order_ahead *ahead;    /* the fallback's first stage's ordering, made on a second host thread
                                  beside the probe (bsr_solver_solve): used by the stages, or called
                                  off and let go, unwaited, by the next solve, setup or destroy;
                                  NULL: none */
    const bsr_solver_options *ahead_opt; /* while a stage's solve is probed: the options of the
                                  stage after it, whose ordering the probe's hook starts (NULL: the
                                  first stage's, from the solver's options) */
    bsr_pc *smoother;          /* while the fallback sets two levels up: the first factor, which they
                                  share as their smoother (NULL: none) */
};

/* Tests: the fallback's ordering made ahead on the CPU backend too (on by
 * default only beside a device solve, where the host is idle; a CPU solve's
 * team takes every core). */
void bsr_solver_test_order_ahead(int on);
/* Tests: off, the CPU backend's fallback has no complete factor's stage (a
 * capped factor goes to two levels and the factor without its cap, an
 * uncapped one to growth weights), so that tests see those stages on
 * problems whose complete factor costs less than they do. */
void bsr_solver_test_complete_stage(int on);

/* Backend plumbing (solver_backend.c; the CUDA parts in solver_cuda.c, which
 * return BSR_ERR_NODEVICE in CPU-only builds). */
int bsr_solver_ctx_is_device(bsr_context *ctx);
/* Working vector for V: V itself when usable as is (*own = 0), else a copy. */
bsr_status bsr_solver_work_vec(bsr_solver *s, const bsr_kops *o, const bsr_multivec *V,
                               bsr_multivec **W, int *own);
/* V = W (copy back to the caller's precision/residency). */
bsr_status bsr_solver_work_back(bsr_solver *s, const bsr_kops *o, const bsr_multivec *W,
                                bsr_multivec *V);
/* After the preconditioner's setup or refactor (its status st): the working
 * matrix's device mirror made current for the products, or released when the
 * product is not this solver's (op_external: the preconditioner holds what it
 * needs); st, else the upload's status. */
bsr_status bsr_solver_device_operator(bsr_solver *s, bsr_status st);
/* One product and one apply with k columns on pooled vectors of ones, once
 * per solver and k: AUTO's timed kernel choice for k, module loads and the
 * apply's work vectors are paid here, before the Krylov phase, not inside
 * its first iterations (setup does k = 1, a solve any other k). */
bsr_status bsr_solver_device_warm(bsr_solver *s, int k);
bsr_status bsr_solver_cuda_work_vec(bsr_solver *s, const bsr_kops *o, const bsr_multivec *V,
                                    bsr_multivec **W, int *own);
bsr_status bsr_solver_cuda_work_back(bsr_solver *s, const bsr_kops *o, const bsr_multivec *W,
                                     bsr_multivec *V);

#endif
