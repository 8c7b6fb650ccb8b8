/* SPDX-License-Identifier: BSD-3-Clause */
/* bsrsolve Krylov solvers and the solver object.
 * Included by bsrsolve.h.
 *
 * The object a CFD code keeps for the life of a simulation:
 *   bsr_solver_options o; bsr_solver_options_default(&o);
 *   bsr_solver_options_parse(&o, "method=bicgstab,precond=ilu2,rtol=1e-8");
 *   bsr_solver *s; bsr_solver_create(&s, ctx, &o);     ctx NULL = CPU
 *   bsr_solver_setup(s, A);                              scaling, ordering, factors
 *   bsr_solver_solve(s, B, X, &st);                      X: initial guess -> solution
 *   ... new values of A on the same pattern every time step:
 *   bsr_solver_refactor(s, A); bsr_solver_solve(s, B, X, &st);
 *   bsr_solver_stats_free(&st); bsr_solver_destroy(s);
 *
 * Backends: ctx NULL or a CPU context iterates on the host (OpenMP); a CUDA
 * context keeps the operator, the preconditioner and every Krylov vector on
 * the device (B and X may be host or device multivectors; host ones are
 * copied once each way).  Preconditioners are built on the CPU (ordering,
 * pattern) and uploaded; the ILUs on a CUDA context are scaled and factored
 * on the device (factor=gpu, the default there): ILU(0)'s symbolic part runs
 * once (on the device in natural order), ILUT/ILU2 choose their pattern on
 * the host at setup, and every refactor uploads A's new values and factors
 * them into the pattern on the device; on the device:
 * none, jacobi, ilu0/ilut/ilu2 (up to BSR_KMAX = 64 right-hand sides a solve
 * on either backend: the device ILU applies them 16 columns at a time) and
 * ic0 (the device ILU(0) of a symmetric A); ssor and ic2 are CPU-only.
 * One Krylov implementation serves both backends (src/krylov/krylov_*.c over the
 * vector-operation table of src/solver_impl.h). */
#ifndef BSRSOLVE_SOLVER_H
#define BSRSOLVE_SOLVER_H

#include "core.h"
#include "reorder.h"
#include "ilu.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Backend context (context.h); NULL means the CPU. */
typedef struct bsr_context bsr_context;

/* Krylov methods (src/krylov/krylov_table.c has one row per method). */
typedef enum { BSR_BICGSTAB = 0, BSR_GMRES, BSR_CG, BSR_IDR } bsr_method;

typedef enum {
    BSR_PC_NONE = 0,
    BSR_PC_JACOBI,   /* block Jacobi: inverted diagonal blocks */
    BSR_PC_SSOR,     /* symmetric SOR(omega) on A's own triangles */
    BSR_PC_ILU0,     /* block ILU(0) (bsr_ilu) */
    BSR_PC_ILUT,     /* block ILUT(tau1) */
    BSR_PC_ILU2,     /* block ILU2(tau1, tau2), Kaporin's second order */
    BSR_PC_IC0,      /* block incomplete Cholesky IC(0), M = L D L^T on A's pattern:
                        symmetric positive definite A, for method=cg; CPU backend only */
    BSR_PC_IC2       /* block incomplete Cholesky with ILU2's thresholds (tau1, tau2), the
                        symmetric form of ILU2: SPD A, for method=cg; CPU backend only */
} bsr_pc_kind;

typedef enum { BSR_ORTH_MGS = 0, BSR_ORTH_CGS2 } bsr_orth;

/* Per-column iteration progress: it = iterations done so far, relres[j] =
 * ||r_j||/||b_j|| (the recurrence residual), active[j] = column still iterating. */
typedef void (*bsr_monitor_fn)(void *data, int it, int k, const double *relres,
                               const unsigned char *active);

typedef struct {
    bsr_method method;
    bsr_pc_kind precond;
    double tau1, tau2;         /* ILUT/ILU2 thresholds (tau2 <= 0: tau1^2) */
    int keep_pattern;          /* ILUT/ILU2: 1 keeps A's own blocks as first-order (L+U then
                                  contains ILU(0)'s pattern; thresholds decide only the fill
                                  outside it), 0 lets tau1 drop them too, -1 (default, "auto"):
                                  1 for ILU2, 0 for ILUT (bench/RESULTS.md, "ILU2 vs ILU(0)
                                  at comparable fill", has the measurements) */
    double omega;              /* SSOR relaxation, 0 < omega < 2 */
    char reorder[64];          /* ordering spec for ILU, see bsr_order_parse ("": the ILU
                                  default, nested dissection, but natural for an ILU(0)
                                  factored on the device) */
    double rtol, atol;         /* stop when ||r|| <= max(rtol*||b||, atol) */
    double dtol;               /* diverged when ||r|| > dtol*||r0|| */
    int maxit;                 /* iterations (BiCGStab: full steps; GMRES: inner steps; IDR(s):
                                  products with A, s + 1 a cycle) */
    int restart;               /* GMRES(m) */
    bsr_orth orth;             /* GMRES orthogonalization */
    int stag;                  /* stagnated after this many iterations without a 1% gain in
                                  the best residual (0 = off) */
    int max_restarts;          /* breakdown restarts allowed per column */
    bsr_precision precision;   /* Krylov vectors and operator */
    bsr_precision precond_precision; /* preconditioner storage */
    int history;               /* record per-column residual histories in the stats */
    int progress;              /* print a progress line to stderr every N iterations (0 = off) */
    int profile;               /* time the solve's parts (synchronizing the device after each
                                  operation: slower; for diagnosis) into the stats */
    int factor;                /* where an ILU is factored: BSR_FACTOR_AUTO (the device on the
                                  CUDA backend, else the CPU), _CPU, _GPU */
    int pattern;               /* ILUT/ILU2 refactor: BSR_SOLVER_PATTERN_FROZEN (default: the new
                                  values are factored into the pattern the setup chose),
                                  _REFRESH (every refactor chooses the pattern anew: the
                                  factor a new setup would make; without a matching it keeps
                                  the setup's ordering (on the CUDA backend its RCM variant
                                  too), with one it is a full setup), _AUTO (frozen until a solve needs more than
                                  pattern_growth times the iterations of the first solve on
                                  the pattern; the next refactor then refreshes it) */
    double pattern_growth;     /* pattern=auto's factor (default 1.5) */
    double fill;               /* ILUT/ILU2: > 0 bounds the stored fill by a per-row cap, in one
                                  pass (bsr_ilu_options.fill), 0 (default): the cap alone */
    int cap;                   /* ILUT/ILU2: fill blocks a row keeps in L, U and W each
                                  (bsr_ilu_options.cap): -1 ("none") no cap, 0 ("auto") the
                                  row's blocks in A, P > 0; BSR_CAP_DEFAULT (the default): auto
                                  where the rows are factored on the device (the CUDA backend),
                                  none on the host.  With a cap the work is bounded and, on the
                                  CUDA backend, the pattern's rows run on the device in RCM
                                  order; without one they run on the host in nested dissection
                                  order (rotconv3d converges fastest so: RESULTS.md) */
    int overlap;               /* distributed solves (bsrsolve_mpi.h): 0 (default) block Jacobi over
                                  the ranks (each rank's preconditioner on its own rows), 1 restricted
                                  additive Schwarz: each rank's preconditioner built on its rows and
                                  their neighbours' (one layer of overlap), its result kept on its
                                  own rows; ignored by the serial solver */
    int halo;                  /* distributed solves on the CUDA backend: how ghost rows travel
                                  between the ranks' GPUs (option halo=auto|host|ipc|mpi|nccl):
                                  BSR_HALO_AUTO (default) device to device by CUDA IPC where every
                                  neighbour pair shares a host and peer access, else device
                                  pointers to a CUDA-aware MPI, else pinned host buffers;
                                  _HOST pinned host buffers; _IPC CUDA IPC (falling back to host
                                  buffers, said in the profile, where it cannot be set up); _MPI
                                  device pointers to MPI (host buffers unless CUDA-aware); _NCCL
                                  NCCL's sends and receives, queued on the device (NCCL loaded at
                                  run time, libnccl.so.2 or the file BSR_NCCL_LIBRARY names; host
                                  buffers, said in the profile, where some rank has none).
                                  Ignored on the CPU and by the serial solver */
    int match;                 /* ILU: BSR_MATCH_NONE (default), _MPT or _AUTO (ilu.h): a
                                  maximum-product transversal and scaling before the ordering
                                  (the preconditioner owns the transform: the Krylov iteration
                                  sees A); auto keeps a regular diagonal as it is (diagonally
                                  dominant problems are solved bit for bit as with none), else
                                  factors without the matching and, when those factors look
                                  unstable (estimate of ||(LU)^{-1}||_inf > 100), with it too,
                                  and keeps the more stable (the info line names both
                                  estimates).  CPU backend only: on the CUDA backend mpt is
                                  refused and auto is none.  Default none */
    int trisolve;              /* ILU apply on the device: 0 (default, "exact") the level-scheduled
                                  triangular solves L then U; N > 0 ("jacobi:N") N Jacobi sweeps
                                  on each factor instead (y = x - L_off y, z = D^{-1}(y - U_off z),
                                  every row in parallel: an approximate M^{-1} that changes the
                                  iterations: fewer waits, more iterations).  CPU backend: exact only */
    double pivot;              /* ILU pivot rule (option pivot=REL|strict): 0 (default) the ILU's
                                  1e-8; REL in (0, 1): a pivot entry |p| < REL*r_k (r_k the
                                  scaled row's size, ilu.h) is set to sign(p)*REL*r_k, the stated
                                  perturbation, counted in the info line; < 0 ("strict"): such
                                  a pivot is an error (BSR_ERR_SINGULAR naming the row) */
    bsr_monitor_fn monitor;    /* called every iteration when set */
    void *monitor_data;
    int diag;                  /* option diag=0|1: the CLI reports the stability of host ILU
                                  factors (growth estimates of L^{-1} and U^{-1}, pivot
                                  conditioning); the solve itself is unchanged.  Default 0 */
    int grow;                  /* option grow=0|1|2: ILUT/ILU2 factored on the host drop by the
                                  growth of the inverse factors (bsr_ilu_options.grow): 1 refactors
                                  with weights when the estimate passes 1e3, 2 weighs L while
                                  factoring.  Default 0 */
    int idr_s;                 /* IDR(s): the dimension s of the shadow space, 1..16 (option
                                  idr_s=S, default 4) */
    int fallback;              /* option fallback=off|on: 1 ("on", the default): when a solve
                                  with a capped ILUT/ILU2 factor does not converge (iterations run
                                  out, divergence, a breakdown, stagnation, or a residual still
                                  above half the initial one after BSR_FALLBACK_PROBE iterations,
                                  or past them above twice the initial one for
                                  BSR_FALLBACK_PROBE_RUN iterations in a row, or a best residual
                                  that gained less than 1% in the last BSR_FALLBACK_PROBE
                                  iterations: the probe), the solver sets the preconditioner up again.
                                  First as the complete block LU, factored where the first factor
                                  was (tau1=0,cap=none,fill=0,grow=0, no coarse level, factor=gpu
                                  on the CUDA backend, factor=cpu on the CPU or where the first
                                  factor's rows were the host's; in METIS_NodeND's
                                  order with its top lifted to the end, reorder=metis,lift=1,
                                  unless reorder is given: every block kept, its pattern from the
                                  elimination tree; stable on indefinite coupled systems where
                                  dropping is not), whose block products are bounded by work as
                                  the rows' are (BSR_FALLBACK_WORK_COMPLETE on the host for a
                                  structurally symmetric A, BSR_FALLBACK_WORK_DEVICE on the
                                  device, unless work is set); for an uncapped factor too, unless
                                  it keeps every block already; past
                                  that bound (or the device's memory) two levels made on the first
                                  factor's options (coarse=BSR_FALLBACK_COARSE_DR, double
                                  precision, unless coarse is given: on indefinite coupled systems
                                  too large for the complete factor they hold the low modes the
                                  ILU misses; the first factor itself is their smoother, not set
                                  up again) under flexible GMRES-DR (method=gmres,restart=
                                  BSR_FALLBACK_TWODR_M,deflate=BSR_FALLBACK_TWODR_K,orth=cgs2,
                                  flex=1: the capped smoother's amplification left out of the
                                  true residual), their solve given up by the probe's rules; then
                                  two levels of coarse=BSR_FALLBACK_COARSE under the first
                                  method, probed the same way; then the first
                                  factor again, solved by GMRES-DR (method=gmres,restart=BSR_FALLBACK_DR_M,
                                  deflate=BSR_FALLBACK_DR_K,orth=cgs2: it converges where the
                                  Krylov method, not the factor, stalls on an indefinite system's
                                  few small eigenvalues), that solve given up by the probe's rules;
                                  after it, and on the CPU backend after the complete factor and
                                  both two levels' stages as above,
                                  without the cap and with growth-weighted dropping (cap=none, grow=1
                                  unless grow is set, factor=cpu: the factorization on the host,
                                  in nested dissection with METIS's order in each leaf (reorder=
                                  nd:auto,leafnd=1) unless reorder is given; on the CUDA backend
                                  the solves stay on the device) and solves again from the same
                                  initial guess.  An uncapped factor without growth weights (the
                                  CPU's default) is set up again, where the complete factor's setup
                                  fails (its bound), with grow=1 in its
                                  own order; where the growth stays below grow's trigger that is
                                  the same factor, and there is no second solve.  Later
                                  refactors keep the fallback's pattern, and the options then
                                  say so.  The uncapped rows' work grows with the
                                  problem faster than its size, so the fallback's setups are bounded
                                  by option work (BSR_FALLBACK_WORK unless work is set): past it
                                  in every stage the solver sets the capped factor up again, a capped solve the
                                  probe gave up goes on from its last iterate to maxit, and a
                                  failure is reported saying why there was no second solve; the
                                  solver does not try again until the next bsr_solver_setup.
                                  A first factor whose setup breaks down (a pivot or block
                                  not finite) is replaced by the same stages at setup; a
                                  refactor that breaks down sets A up again.
                                  0 ("off") reports the first failure at once.  The initial guess
                                  is kept on the host for the second solve: an X resident on the
                                  device alone is solved without the fallback.  Not in
                                  distributed solves */
    double work;               /* option work=W: ILUT/ILU2 factored on the host stop their setup
                                  (BSR_ERR_UNSUPPORTED) past W block multiply-adds (b^3 a product
                                  of two blocks; bsr_ilu_options.max_work).  Default 0: no bound,
                                  except for the fallback's setup */
    double etol;               /* option etol=E|auto|off: after a solve whose columns all converged,
                                  each one's relative error ||x - x*|| / ||x|| is estimated by
                                  solving A e = b - A x from zero to rtol BSR_ERREST_RTOL by the
                                  same method and preconditioner (||e|| / ||x||: on the generators
                                  within a few percent of the true error); where the estimate is
                                  above E, x += e and again (once corrected, until the estimate is
                                  under E / 2: a correction lands just under its target, and the
                                  estimate is a few percent off), at most BSR_ETOL_ROUNDS times, while
                                  each correction halves the estimate and while the estimates'
                                  solves have taken less than twice the solve's iterations.  x is left as it is where the
                                  first estimate is within E.  The residual is a weak bound on
                                  ill-conditioned systems: on indefinite coupled ones a relative
                                  residual of 1e-8 has come with errors of 1e-4.  The estimate costs
                                  about half the solve again; a later solve on the same pattern (the
                                  refactored steps of a time loop) whose error the last estimate
                                  predicts under E / 10 skips it, 7 in a row at most
                                  (col.err_predicted); where the error that estimate measured was
                                  over E / 10, such a solve goes on past rtol to the residual
                                  where the prediction is under it (with room), so that it
                                  predicts instead of measuring and correcting (a time step of
                                  the indefinite coupled3d class at 216k block rows 0.84-0.88 ->
                                  0.59 s on an H200; one that stops short of it is solved again to rtol,
                                  and the pattern's later solves stop there).  Not with A's
                                  complete factorization (its refinement step does that); in
                                  distributed solves too.  0 ("off"): none; < 0 ("auto", the
                                  default): 100 rtol with a threshold ILU
                                  (ILUT, ILU2: the preconditioners of the hard systems), off
                                  otherwise */
    int deflate;               /* option deflate=K, method=gmres: GMRES-DR(restart, K), GMRES with
                                  deflated restarting: each cycle keeps the harmonic Ritz vectors
                                  of the K smallest harmonic Ritz values of A M^{-1} (K + 1 where a
                                  complex pair would be cut), the directions restarted GMRES
                                  forgets and stalls on with indefinite systems; restart >= K + 2.
                                  Default 0: plain GMRES(restart) */
    int flex;                  /* option flex=1, method=gmres: flexible GMRES (FGMRES), each
                                  cycle's preconditioned vectors M^{-1} v kept and the correction
                                  made of them (restart more vectors, one application fewer a
                                  cycle).  Where the factors' inverses grow (an unstable ILU on an
                                  indefinite system: |M^{-1} v| 1e6-1e8 |v|), M^{-1} applied to the
                                  cycle's combination V y is not the combination of the M^{-1} v
                                  that the Arnoldi relation holds for, and the true residual parts
                                  from GMRES's own by orders of magnitude; with them kept it does
                                  not.  The error control's solves take the kept space as with
                                  GMRES-DR, its M^{-1} V too.  Default 0 */
    int coarse;                /* option coarse=M (1..BSR_COARSE_MAX), ILU0/ILUT/ILU2 on either
                                  backend: two levels, the ILU as the smoother and a coarse
                                  correction on aggregates of A's block graph made by pairwise
                                  matching (boxes of 256 block rows on 3D grids), each keeping up
                                  to M vectors of the modes the ILU leaves (test vectors smoothed
                                  by I - M_ILU^{-1} A; Ac = P^T A P in M x M blocks, factored
                                  completely on the host by the library's block LU and applied
                                  where the solver computes).
                                  For coupled systems whose low modes the coupling turns
                                  indefinite, where the ILU alone needs more iterations with every
                                  refinement of the grid.  Default 0: the ILU alone */
} bsr_solver_options;

/* The largest coarse=M (vectors an aggregate keeps, the coarse matrix's
 * block size; 2 M test vectors are made). */
#define BSR_COARSE_MAX 10

/* The fallback's probe: the first solve is given up after this many
 * iterations while its residual is above half its initial one, and, from
 * then on, once its residual has stayed above twice the initial one for
 * BSR_FALLBACK_PROBE_RUN iterations in a row (a factor that amplifies:
 * BiCGStab's residual on a converging solve of the coupled class spikes
 * 20-fold past the initial one, but not for 25 iterations together), or
 * once its best residual has gained less than 1% in the last
 * BSR_FALLBACK_PROBE iterations (stalled: at that rate no rtol is reached
 * within maxit). */
#define BSR_FALLBACK_PROBE 100
#define BSR_FALLBACK_PROBE_RUN 25

/* The fallback's work bound in block multiply-adds (bsr_solver_options.work)
 * for the threshold rows it sets up on the host:
 * room for the uncapped factor of a coupled 3D block system of some 30^3
 * cells (1.2-1.4e11 at b = 5), while a 1M-row one stops after 10-15 s of a
 * 16-core host's rows (a minute of a 2-core machine's) instead of running
 * for hours. */
#define BSR_FALLBACK_WORK 5e11
/* The bound of the fallback's complete block LU on the host (unless work is
 * set) for a structurally symmetric A, in the same unit.  Its work is then
 * known exactly from its pattern before any value is factored, so a setup
 * past it stops after the ordering and the pattern, not after rows spent
 * (elsewhere the rows choose its pattern, under BSR_FALLBACK_WORK): room for
 * the complete factor of a coupled 3D system of 40^3 cells (9.4e11 at b = 4:
 * 21 s on a 16-core host, where the growth-weighted factor diverged; about
 * 1.8e12 at b = 5). */
#define BSR_FALLBACK_WORK_COMPLETE 2e12
/* The bound of the fallback's complete block LU on the device (unless work
 * is set), in the same unit: the device forms about 6 times the block
 * products a second of a 16-core host's rows, so this is about the same
 * time: room for the complete factor of a coupled 3D system of 40^3 cells
 * (1.6e10 products at b = 5: 2e12), not for 1M rows (about 1e14). */
#define BSR_FALLBACK_WORK_DEVICE 3e12
/* The fallback's GMRES-DR on the first factor (after the complete factor on
 * the device, where that is past its bound): GMRES-DR(BSR_FALLBACK_DR_M,
 * BSR_FALLBACK_DR_K), the restart the options' where larger. */
#define BSR_FALLBACK_DR_M 60
#define BSR_FALLBACK_DR_K 20
/* The fallback's two levels (after the complete factor, where that is past
 * its bound): the first
 * factor's options with coarse=BSR_FALLBACK_COARSE_DR under flexible
 * GMRES-DR (BSR_FALLBACK_TWODR_M, BSR_FALLBACK_TWODR_K, flex=1, the restart
 * the options' where larger); then, before GMRES-DR on the first factor,
 * with coarse=BSR_FALLBACK_COARSE under the first method. */
#define BSR_FALLBACK_COARSE 8
#define BSR_FALLBACK_COARSE_DR 10
#define BSR_FALLBACK_TWODR_M 80
#define BSR_FALLBACK_TWODR_K 30

/* The options of the host ILU factorization (bsr_ilu_setup) that o asks for,
 * as the solver makes its CPU preconditioner: kind from precond (ilu0, ilut,
 * ilu2), tau1, tau2 (0 for ILUT), fill, cap (for BSR_CAP_DEFAULT the CPU's
 * default below 100,000 block rows, none: o has no matrix; the solver caps
 * larger ones, in RCM order), keep_pattern, precision, match, pivot, pattern (frozen
 * unless refresh) and the reorder string parsed.  BSR_ERR_ARG when precond is
 * not an ILU or reorder does not parse. */
bsr_status bsr_ilu_options_from_solver(const bsr_solver_options *o, bsr_ilu_options *io);

/* bsr_solver_options.cap: the backend's default (auto on the device, none on the host). */
#define BSR_CAP_DEFAULT (-2)

/* Values of bsr_solver_options.halo. */
enum { BSR_HALO_AUTO = 0, BSR_HALO_HOST = 1, BSR_HALO_IPC = 2, BSR_HALO_MPI = 3, BSR_HALO_NCCL = 4 };

/* Values of bsr_solver_options.factor (option string: factor=auto|cpu|gpu).
 * On the device, ILU(0) is scaled and factored there (setup and refactor);
 * ILUT/ILU2 choose their pattern on the host at setup, then factor into it
 * on the device (setup and every refactor). */
enum { BSR_FACTOR_AUTO = 0, BSR_FACTOR_CPU = 1, BSR_FACTOR_GPU = 2 };
/* Values of bsr_solver_options.pattern (option string: pattern=frozen|refresh|auto). */
enum { BSR_SOLVER_PATTERN_FROZEN = 0, BSR_SOLVER_PATTERN_REFRESH, BSR_SOLVER_PATTERN_AUTO };

/* Defaults: bicgstab, ilu0, tau1 1e-2, tau2 0 (= tau1^2), keep_pattern -1 (auto), omega 1, reorder "",
 * rtol 1e-8, atol 0, dtol 1e8, maxit 1000, restart 30, idr_s 4, mgs, stag 0 (off), max_restarts 5,
 * double/double, no history, no progress. */
void bsr_solver_options_default(bsr_solver_options *o);
/* Apply "key=value,key=value" on top of o.  Keys: method (bicgstab|gmres|cg|idr),
 * precond (none|jacobi|ssor|ilu0|ilut|ilu2|ic0), tau1, tau2, keep_pattern (auto|0|1), omega, reorder
 * (natural|rcm|nd[:auto|:H]|metis|amd; the rest of the string up to the next key
 * is the spec, so "reorder=nd:4,seed=3" works), rtol, atol, dtol, maxit, restart, deflate, flex (0|1), idr_s,
 * orth (mgs|cgs2), stag, max_restarts, precision and precond_precision
 * (double|float), factor (auto|cpu|gpu), pattern (frozen|refresh|auto), pattern_growth, fill, cap (auto|none|P), overlap (0|1),
 * match (none|mpt|auto), pivot (REL|strict),
 * history (0|1), progress, profile (0|1), trisolve (exact|jacobi:N), diag (0|1).  BSR_ERR_ARG naming the key and the value on error; o is unchanged then. */
bsr_status bsr_solver_options_parse(bsr_solver_options *o, const char *str);
/* The options as a whole are usable: every value in range and the combinations
 * allowed (method=cg takes precond none, jacobi, ssor or ic0 only).  BSR_ERR_ARG
 * naming the options otherwise.  bsr_solver_create calls it; call it after
 * bsr_solver_options_parse to refuse a bad combination before loading a matrix. */
bsr_status bsr_solver_options_check(const bsr_solver_options *o);
/* The options as a canonical string (for reports); returns buf. */
const char *bsr_solver_options_string(const bsr_solver_options *o, char *buf, size_t len);
const char *bsr_method_name(bsr_method m);
const char *bsr_pc_name(bsr_pc_kind p);

/* Why a column stopped. */
typedef enum {
    BSR_REASON_NONE = 0,     /* not run */
    BSR_CONVERGED_RTOL,      /* ||r|| <= rtol*||b|| */
    BSR_CONVERGED_ATOL,      /* ||r|| <= atol */
    BSR_DIVERGED_MAXIT,      /* maxit reached */
    BSR_DIVERGED_DTOL,       /* residual grew by dtol */
    BSR_DIVERGED_STAGNATION, /* no progress for `stag` iterations */
    BSR_DIVERGED_BREAKDOWN,  /* breakdown persisted after max_restarts restarts */
    BSR_DIVERGED_INDEFINITE, /* CG: p'Ap <= 0 or preconditioner not positive */
    BSR_DIVERGED_NAN,        /* non-finite residual */
    BSR_CONVERGED_FLOOR,     /* stopped (stagnated or maxit) with rtol*||b|| < ||r|| <=
                                eps*|| |A||x| + |b| ||: the true residual is at the rounding
                                floor of its own evaluation in the working precision, which
                                no representable x lowers reliably (an rtol below what an
                                ill-conditioned system allows); serial solves only.  Never
                                with ||r|| >= ||b|| nor with a floor above ||b||/10 (x grown
                                without bound): those stay maxit/stagnated, col.singular = 1 */
    BSR_DIVERGED_INACCURATE  /* options.etol: the residual reached its tolerance, but the error
                                the error control estimates for the x returned (not a lower
                                bound) stays over etol and over BSR_ETOL_FAIL (1%) once its
                                corrections stop gaining: x is no solution */
} bsr_reason;
/* "converged" for the three converged reasons, else "maxit", "diverged",
 * "stagnated", "breakdown", "indefinite", "nan", "inaccurate", "none". */
const char *bsr_reason_string(bsr_reason r);
/* 1 for BSR_CONVERGED_RTOL, _ATOL and _FLOOR, else 0. */
int bsr_reason_converged(bsr_reason r);

typedef struct {
    int iterations;
    bsr_reason reason;
    double bnorm;        /* ||b|| */
    double resnorm;      /* final TRUE residual ||b - A x||, recomputed */
    double relres;       /* resnorm / ||b|| (resnorm when b = 0) */
    int restarts;        /* breakdown restarts (and residual-drift restarts) */
    int hist_len;        /* history[0..hist_len): relres at iteration 0, 1, ... */
    double *history;
    int singular;        /* 1: stopped (maxit or stagnated) with the true residual within the
                            rounding floor, but the floor verdict was refused: the residual is
                            no better than x = 0's, or eps*|| |A||x| || > ||b||/10 (x grown
                            as only a system singular in the working precision makes it,
                            src/krylov/krylov_floor.c); "system singular or too ill-conditioned in
                            this precision".  0 otherwise */
    double err_est;      /* options.etol: the last estimate of ||x - x*|| / ||x|| (of the x
                            returned, unless a correction followed it: err_rounds reached
                            BSR_ETOL_ROUNDS, or the estimates' solves used up twice the solve's
                            iterations); 0 when none */
    int err_low;         /* 1: that estimate's solve stopped short of its rtol, or the column converged at the
                            rounding floor (its residual mostly rounding): a lower bound */
    int err_its;         /* options.etol: iterations of the estimates' solves (not in iterations) */
    int err_rounds;      /* options.etol: corrections x += e made */
    int err_predicted;   /* options.etol: 1 when err_est is predicted, no estimate's solve made:
                            relres times the largest error estimate over relres that an earlier
                            solve on this pattern measured, under etol / 10 (at most 7 solves in
                            a row; a setup or a new pattern measures anew) */
} bsr_col_stats;

typedef struct {
    int k;
    bsr_col_stats *col;  /* [k] */
    double setup_s;      /* last setup or refactor */
    double setup_pc_s;   /* of which: host preconditioner (scaling, ordering, factorization) */
    double setup_dev_s;  /* of which: device uploads and preconditioner analysis (0 on the CPU) */
    double solve_s;
    double fill;         /* preconditioner blocks / blocks of A (0 for none) */
    int64_t pc_nnzb;     /* preconditioner blocks stored */
    int pivots_regularized;
    int device;          /* 1 when the iteration ran on the device */
    int pattern_new;     /* 1: the last setup or refactor chose a new preconditioner pattern (setup,
                            pattern=refresh, pattern=auto after the iterations grew); 0: it
                            factored into the frozen one */
    int pattern_refreshes; /* refactors that chose a new pattern since setup */
    char precond_info[512]; /* ordering, levels, factor statistics in words */
    /* with options.profile: seconds and calls in the operator (SpMM), the
     * preconditioner, vector updates and reductions (0 otherwise) */
    double prof_s[4];
    int prof_calls[4];
    /* with options.profile on the device: the Krylov phase against its
     * bandwidth bound.  prof_bytes = the bytes its operations move at the
     * least (each matrix, factor and vector read or written once per use: the
     * model of src/krylov/krylov_bytes.c), prof_iter_bytes those of one iteration,
     * prof_copy_gbs the device-to-device copy bandwidth measured in the same
     * process (bytes read + written per second / 1e9), prof_krylov_s the
     * phase's wall time; bound = prof_bytes / copy bandwidth, and bound /
     * prof_krylov_s is the fraction of it reached (0 on the CPU) */
    double prof_bytes, prof_iter_bytes, prof_copy_gbs, prof_krylov_s;
    /* on the device: the bytes the library held on the context's device
     * after the last setup (A's copy, the preconditioner, the first
     * product's and apply's work) and the most it held during that setup,
     * from its allocator's own count (process-wide on that device: with one
     * solver a process, or a rank, per GPU, this solver's); 0 on the CPU */
    double dev_bytes, dev_peak_bytes;
    int fallbacks;       /* 1: this solve's first factor did not converge and the columns were
                            solved again after the fallback's setup (options.fallback);
                            solve_s then counts both solves, the second setup is fallback_s
                            and the parts setup_pc_s and setup_dev_s are its own.  Also 1,
                            with fallback_iterations 0, in the first solve after a setup or
                            refactor whose factor broke down (BSR_ERR_SINGULAR) and whose
                            fallback set A up instead (setup_s then the seconds of the one
                            that broke down, fallback_s the setup after it) */
    double fallback_s;   /* seconds of the fallback's setups, failed or not, not in setup_s
                            (which stays the first setup's): each stage's setup tried (the
                            first factor is kept meanwhile, not set up again, for GMRES-DR's
                            stage and for the solve that goes on where every stage failed);
                            0 without */
    int fallback_iterations; /* the failed solve's iterations (the most of a column) */
    char fallback_reason[192]; /* why the first solve failed (its status message), or what
                                  broke down at the setup or refactor */
} bsr_solver_stats;
void bsr_solver_stats_free(bsr_solver_stats *st);

typedef struct bsr_solver bsr_solver;

/* Copy the options (NULL = defaults); ctx NULL (or a CPU context) = CPU. */
bsr_status bsr_solver_create(bsr_solver **s, bsr_context *ctx, const bsr_solver_options *o);
/* Same, with an option string applied on top of the defaults. */
bsr_status bsr_solver_create_str(bsr_solver **s, bsr_context *ctx, const char *options);
/* Preconditioner setup and uploads for A (kept by reference until the next
 * setup: A must stay alive while solving).  With options.fallback on, a
 * threshold factor whose setup breaks down (BSR_ERR_SINGULAR: a pivot or
 * block not finite) is replaced by the fallback's stages, as after a failed
 * solve; the next solve's stats say so (fallbacks, fallback_iterations 0).
 * Where every stage fails too, the first factor's error is returned. */
bsr_status bsr_solver_setup(bsr_solver *s, const bsr_matrix *A);
/* New values of A on the pattern given to setup: numeric refactorization
 * only.  With options.fallback on, a threshold factor that breaks down on
 * the new values (BSR_ERR_SINGULAR) is set up again on them instead (a new
 * pattern; the setup's fallback where that breaks down too), and the next
 * solve's stats say so.  Where that fails too, the error is returned, the
 * solves refuse, and the next refactor sets its A up. */
bsr_status bsr_solver_refactor(bsr_solver *s, const bsr_matrix *A);
/* Solve A X = B for k columns; X holds the initial guess.  B and X: host or
 * device multivectors, any precision.  st (may be NULL) is filled (free it with
 * bsr_solver_stats_free).  Returns BSR_OK when every column converged,
 * BSR_ERR_NOCONV or BSR_ERR_BREAKDOWN otherwise (X then holds the last iterate;
 * st says per column why).  With A's complete factorization as the
 * preconditioner (an ILUT/ILU2 with tau1=0, cap=none, nothing dropped, no
 * pivot changed: the fallback's first stage on the device), a converged
 * column whose relative residual is above 1e-3 rtol gets one step of
 * iterative refinement, kept where it lowers the residual: the factor's
 * rounding can leave the residual just below rtol and the error cond(A)
 * times it.  A solve with the fallback may leave an ordering being made on
 * a second host thread, called off, which ends at its METIS call's end (on
 * the CUDA backend the fallback's ordering starts beside the probe); the
 * library's METIS calls take turns with it, but a caller's own METIS calls
 * meanwhile would share METIS's random numbers (the C library's rand())
 * with it. */
bsr_status bsr_solver_solve(bsr_solver *s, const bsr_multivec *B, bsr_multivec *X,
                            bsr_solver_stats *st);
/* An estimate of the error of X, a solution of A X = B on s's setup (host
 * multivectors, A's precision): est[j] = ||e_j|| / ||X(:,j)|| where e solves
 * A e = B - A X from zero, by s's method and preconditioner (no fallback),
 * to rtol BSR_ERREST_RTOL within s's maxit; *its (may be NULL): the most
 * iterations a column took.  Where that solve converges the estimate is on
 * the generators within a few percent of the true relative error, which the
 * residual does not bound on ill-conditioned systems (an indefinite coupled
 * system of 64,000 block rows turns a random relative residual of 1e-8 into
 * errors of 3e-5 to 3e-4).  The estimate's rtol is no bound on its own
 * error: where the error lies in slow modes with little residual, the
 * estimate's solve must go far enough to reach them (such a 64,000-row
 * system's error 2.1e-5 estimated at 4.8e-7 after 14 iterations to rtol
 * 0.1, at 2.2e-5 to rtol 0.01).  s, its preconditioner and what its later solves
 * compute are unchanged.  BSR_ERR_NOCONV / BSR_ERR_BREAKDOWN when a column's
 * solve did not converge (est then from its last iterate: a lower bound), and
 * BSR_ERR_NOCONV where a column's residual B - A X is at the working
 * precision's rounding floor (then A e = r solves mostly for rounding: the
 * estimate is a lower bound too). */
#define BSR_ERREST_RTOL 0.01
bsr_status bsr_solver_error_estimate(bsr_solver *s, const bsr_multivec *B, const bsr_multivec *X, double *est,
                                     int *its);
/* options.etol: the first estimate's solve runs to rtol BSR_ERREST_RTOL, a
 * later one to the reduction the last estimate asks for, down to
 * BSR_ETOL_INNER_MIN; BSR_ETOL_ROUNDS corrections at most. */
#define BSR_ETOL_INNER_MIN 1e-3
#define BSR_ETOL_ROUNDS 4
/* options.etol: a converged column whose relative error, estimated for the
 * x returned (not a lower bound), stays over etol and over this once the
 * corrections stop gaining is not converged (BSR_DIVERGED_INACCURATE): the
 * corrections stop where rounding decides the error, which in double takes
 * a condition number past 1e13 to reach 1%, and a float solve's target
 * under its reach (ILL at etol=1e-10: 4.9e-6) stays converged.  Without
 * it an indefinite coupled system at 1M block rows was reported converged
 * at relres 8.4e-10 with an error of 0.94 (estimate 0.68). */
#define BSR_ETOL_FAIL 1e-2
void bsr_solver_destroy(bsr_solver *s);
/* Options in use. */
const bsr_solver_options *bsr_solver_get_options(const bsr_solver *s);
/* New stopping tolerances and iteration limit for the next solves (rtol, atol:
 * finite, >= 0 and < 1e300; maxit >= 0, as the option string takes them):
 * no new setup, the preconditioner stays.  BSR_ERR_ARG naming the value (s
 * unchanged) otherwise.  Not during a solve on s. */
bsr_status bsr_solver_set_tolerances(bsr_solver *s, double rtol, double atol, int maxit);

/* UMFPACK reference: X = A^{-1} B by sparse LU (SuiteSparse), column by column,
 * in double.  times (may be NULL): [0] symbolic+numeric, [1] solves. */
bsr_status bsr_umfpack_solve(const bsr_matrix *A, const bsr_multivec *B, bsr_multivec *X,
                             double *times);

#ifdef __cplusplus
}
#endif
#endif
