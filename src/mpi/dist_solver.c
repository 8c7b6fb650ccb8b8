/* SPDX-License-Identifier: BSD-3-Clause */
/* The distributed solver: the serial solver object on the rank's diagonal
 * block (its preconditioner is then block Jacobi over the ranks), with the
 * Krylov table's product and reductions made global.  The Krylov methods are
 * the serial ones, unchanged.
 *
 * A local failure (out of memory, a CUDA error) must not leave the other
 * ranks waiting: the failing rank keeps step with them, skipping its local
 * work but still exchanging halos and joining reductions, until the next
 * reduction, where every rank returns the failure. */
#include "dist_impl.h"
#include "solver_impl.h"
#include <string.h>

typedef struct {
    bsr_kops local;         /* the table before wrapping */
    bsr_pc pc;              /* the local preconditioner behind the pending check */
    bsr_pc *pc_local;
    bsr_status pending;     /* first local failure since the last reduction */
    struct bsr_dsolver *S;
} kdist;

struct bsr_dsolver {
    bsr_dist *d;
    bsr_solver_options opt;
    bsr_solver *local;      /* Krylov on own rows; its preconditioner: block Jacobi */
    struct bsr_dras *ras;   /* overlap = 1: the preconditioner instead */
    bsr_dmatrix *A;
    double setup_s;         /* last setup or refactor, this rank, wall clock */
    size_t dev_held, dev_peak; /* device: library bytes on this rank's GPU after the last setup, and
                                  the most during it (kernels/cuda_alloc.cu) */
    uint64_t warm_k;        /* bit k-1: the product's kernel choice for k columns is made */
    kdist kd;
    bsr_dsolver_comm comm;
    bsr_dtimes tm;          /* the products' parts (profile=1), the halo total always */
    double precond_s, idle_s;
    int64_t precond_calls;
    int halo_path;          /* BSR_DHALO_* of the last solve */
    char halo_note[192];
};

/* Test hook (dist_impl.h): the n-th local operation of this rank fails. */
int bsr_dist_fail_at = 0;
static bsr_status injected(void)
{
    if (bsr_dist_fail_at > 0 && --bsr_dist_fail_at == 0)
        return bsr_error(BSR_ERR_INTERNAL, "injected failure of a local operation (test hook)");
    return BSR_OK;
}

/* A stand-in for a vector a failing rank could not allocate: never read. */
static bsr_multivec no_vector;

static kdist *KD(const bsr_kops *o) { return o->ext; }
#define LOCAL(o) (&KD(o)->local)
/* Run a local operation unless a failure is pending; a new failure becomes pending. */
#define STEP(o, call)                                                   \
    do {                                                                \
        kdist *kd_ = KD(o);                                             \
        if (kd_->pending) return BSR_OK;                                \
        bsr_status s_ = injected();                                     \
        if (!s_) s_ = (call);                                           \
        if (s_) kd_->pending = s_;                                      \
        return BSR_OK;                                                  \
    } while (0)

static bsr_status d_vnew(const bsr_kops *o, bsr_multivec **V)
{
    kdist *kd = KD(o);
    *V = &no_vector;
    if (kd->pending) return BSR_OK;
    bsr_status st = kd->local.vnew(LOCAL(o), V);
    if (st) { kd->pending = st; *V = &no_vector; }
    return BSR_OK;
}
static void d_vfree(const bsr_kops *o, bsr_multivec *V)
{
    if (V != &no_vector) KD(o)->local.vfree(LOCAL(o), V);
}
static bsr_status d_zero(const bsr_kops *o, bsr_multivec *V) { STEP(o, LOCAL(o)->zero(LOCAL(o), V)); }
static bsr_status d_copy(const bsr_kops *o, bsr_multivec *Y, const bsr_multivec *X, const unsigned char *m)
{
    STEP(o, LOCAL(o)->copy(LOCAL(o), Y, X, m));
}
static bsr_status d_axpby(const bsr_kops *o, bsr_multivec *Y, const double *a, const bsr_multivec *X,
                          const double *b, const unsigned char *m)
{
    STEP(o, LOCAL(o)->axpby(LOCAL(o), Y, a, X, b, m));
}
static bsr_status d_axpbypcz(const bsr_kops *o, bsr_multivec *Y, const double *a, const bsr_multivec *X,
                             const double *b, const bsr_multivec *Z, const double *c, const unsigned char *m)
{
    STEP(o, LOCAL(o)->axpbypcz(LOCAL(o), Y, a, X, b, Z, c, m));
}

/* out[0..n) = global sums of part (may be the same array); every rank
 * learns of a pending failure here and returns it. */
static bsr_status reduce(kdist *kd, const double *part, int n, double *out)
{
    bsr_dsolver *S = kd->S;
    double t0 = MPI_Wtime(), failed = 0, late = 0;
    bsr_status st = bsr_dist_sum_late(S->d, part, out, n, kd->pending ? 1 : 0, &failed, S->tm.on ? &late : NULL);
    if (S->tm.on && S->idle_s >= 0) S->idle_s = late >= 0 ? S->idle_s + late : -1;
    if (!st && failed != 0) st = bsr_dist_agree(S->d, kd->pending);
    S->comm.reduce_s += MPI_Wtime() - t0;
    S->comm.reduce_calls++;
    return st;
}

static bsr_status d_dot(const bsr_kops *o, const bsr_multivec *X, const bsr_multivec *Y, double *out)
{
    kdist *kd = KD(o);
    double part[BSR_KMAX] = {0};
    if (!kd->pending) {
        bsr_status st = injected();
        if (!st) st = kd->local.dot(LOCAL(o), X, Y, part);
        if (st) kd->pending = st;
    }
    return reduce(kd, part, o->k, out);
}

static bsr_status d_dotp(const bsr_kops *o, int np, const bsr_multivec *const *X, const bsr_multivec *const *Y,
                         double *const *out)
{
    kdist *kd = KD(o);
    double part[BSR_KOPS_MAXP * BSR_KMAX] = {0}, sum[BSR_KOPS_MAXP * BSR_KMAX];
    if (!kd->pending) {
        double *pp[BSR_KOPS_MAXP];
        for (int p = 0; p < np; p++) pp[p] = part + (size_t)p * o->k;
        bsr_status st = bsr_kops_dotp(LOCAL(o), np, X, Y, pp);
        if (st) kd->pending = st;
    }
    BSR_TRY(reduce(kd, part, np * o->k, sum));
    for (int p = 0; p < np; p++) memcpy(out[p], sum + (size_t)p * o->k, sizeof(double) * (size_t)o->k);
    return BSR_OK;
}

static bsr_status d_dotm(const bsr_kops *o, const bsr_multivec *X, bsr_multivec *const *Y, int m, double *out)
{
    kdist *kd = KD(o);
    if (!kd->pending) {
        bsr_status st = bsr_kops_dotm(LOCAL(o), X, Y, m, out);
        if (st) kd->pending = st;
    }
    if (kd->pending) memset(out, 0, sizeof(double) * (size_t)m * o->k);
    return reduce(kd, out, m * o->k, out);
}

static bsr_status d_matvec(const bsr_kops *o, const bsr_multivec *X, bsr_multivec *Y)
{
    kdist *kd = KD(o);
    bsr_dsolver *S = kd->S;
    bsr_context *ctx = S->local->device ? S->local->ctx : NULL;
    if (!kd->pending) kd->pending = injected();
    bsr_status st = bsr_dmatrix_spmm_internal(S->A, ctx, kd->pending ? NULL : X, kd->pending ? NULL : Y, &S->tm);
    S->comm.halo_calls++;
    if (st && !kd->pending) kd->pending = st;
    return BSR_OK;
}

/* The preconditioner's apply, timed (profile=1: to the end of its device work). */
static bsr_status pc_apply(kdist *kd, const bsr_multivec *X, bsr_multivec *Y)
{
    bsr_dsolver *S = kd->S;
    if (S->ras) {   /* its halo exchange runs even when a failure is pending */
        bsr_status st = bsr_dras_apply(S->ras, S->A, kd->pending ? NULL : X, Y, &S->tm);
        S->comm.halo_calls++;
        if (st && !kd->pending) kd->pending = st;
        return BSR_OK;
    }
    if (kd->pending) return BSR_OK;
    bsr_pc *in = kd->pc_local;
    bsr_status st = in && in->apply ? in->apply(in, X, Y) : kd->local.copy(&kd->local, Y, X, NULL);
    if (st) kd->pending = st;
    return BSR_OK;
}

static bsr_status d_pc_apply(bsr_pc *pc, const bsr_multivec *X, bsr_multivec *Y)
{
    kdist *kd = pc->data;
    bsr_dsolver *S = kd->S;
    if (!kd->pending) kd->pending = injected();
    double t0 = MPI_Wtime();
    bsr_status st = pc_apply(kd, X, Y);
    if (S->tm.on && S->local->device && !kd->pending) {
        bsr_status s2 = bsr_context_sync(S->local->ctx);
        if (s2) kd->pending = s2;
    }
    S->precond_s += MPI_Wtime() - t0;
    S->precond_calls++;
    return st;
}

/* The hook bsr_solver_solve calls on its table. */
static bsr_status wrap_kops(void *data, bsr_kops *o)
{
    bsr_dsolver *S = data;
    kdist *kd = &S->kd;
    memset(kd, 0, sizeof *kd);
    kd->S = S;
    kd->local = *o;
    kd->pc_local = o->pc;
    if (o->pc) { kd->pc = *o->pc; kd->pc.data = kd; kd->pc.apply = d_pc_apply; kd->pc.destroy = NULL; o->pc = &kd->pc; }
    o->ext = kd;
    o->vnew = d_vnew; o->vfree = d_vfree; o->zero = d_zero; o->copy = d_copy;
    o->axpby = d_axpby; o->axpbypcz = d_axpbypcz;
    o->dot = d_dot; o->dotp = d_dotp; o->dotm = d_dotm; o->matvec = d_matvec;
    o->absnorm = NULL; /* the local |A| misses the other ranks' columns: no floor test */
    return BSR_OK;
}

bsr_status bsr_dsolver_create(bsr_dsolver **out, bsr_dist *d, const bsr_solver_options *o)
{
    BSR_CHECK_ARG(out && d, "bsr_dsolver_create: NULL argument");
    *out = NULL;
    bsr_dsolver *S = bsr_calloc(1, sizeof *S, "distributed solver");
    bsr_status st = S ? BSR_OK : BSR_ERR_NOMEM;
    if (S) {
        if (o) S->opt = *o; else bsr_solver_options_default(&S->opt);
        /* with overlap the local solver only iterates: the preconditioner is the Schwarz one
         * (the error control resolved from its factor's kind, as without overlap) */
        bsr_solver_options lo = S->opt;
        if (lo.overlap) { lo.etol = bsr_etol_resolved(&S->opt); lo.precond = BSR_PC_NONE; lo.factor = BSR_FACTOR_AUTO; }
        st = bsr_solver_create(&S->local, d->ctx, &lo);
    }
    if ((st = bsr_dist_agree(d, st))) { bsr_dsolver_destroy(S); return st; }
    S->d = d;
    S->local->kops_hook = wrap_kops;
    S->local->kops_hook_data = S;
    S->local->op_external = 1;   /* the product is A's own (Aint, Aifc): Aoo not kept on the device */
    *out = S;
    return BSR_OK;
}

void bsr_dsolver_destroy(bsr_dsolver *S)
{
    if (!S) return;
    bsr_dras_destroy(S->ras);
    bsr_solver_destroy(S->local);
    free(S);
}

/* The halo path of a solve with k columns (collective, the same on every
 * rank): as the option halo= asks where possible (A->halo_path), with
 * A->halo_note saying why not. */
static bsr_status choose_halo(bsr_dsolver *S, int k)
{
    bsr_dmatrix *A = S->A;
    bsr_context *ctx = S->local->device ? S->local->ctx : NULL;
    const int mode = S->opt.halo;
    A->halo_note[0] = 0;
    const size_t row = (size_t)A->b * (size_t)k * sizeof(double);   /* rows of k doubles at most */
    if (!ctx && bsr_dipc_host && (mode == BSR_HALO_AUTO || mode == BSR_HALO_IPC) && S->d->size > 1) {
        BSR_TRY(bsr_dipc_setup(A, NULL, row));
        A->halo_path = A->ipc ? BSR_DHALO_IPC : BSR_DHALO_CPU;
    } else if (!ctx) {
        A->halo_path = BSR_DHALO_CPU;
        if (mode == BSR_HALO_IPC || mode == BSR_HALO_MPI || mode == BSR_HALO_NCCL)
            snprintf(A->halo_note, sizeof A->halo_note, "halo=%s applies to the CUDA backend: host vectors here",
                     bsr_halo_name(mode));
    }
    else if (mode == BSR_HALO_HOST) A->halo_path = BSR_DHALO_HOST;
    else if (mode == BSR_HALO_MPI) {
        A->halo_path = S->d->cuda_aware ? BSR_DHALO_MPI : BSR_DHALO_HOST;
        if (!S->d->cuda_aware)
            snprintf(A->halo_note, sizeof A->halo_note, "MPI takes no device pointers here (not CUDA-aware, "
                     "or turned off by bsr_dist_set_cuda_aware)");
    } else if (S->d->size == 1) {
        A->halo_path = BSR_DHALO_HOST;
        snprintf(A->halo_note, sizeof A->halo_note, "one rank: no halo");
    } else if (mode == BSR_HALO_NCCL) {   /* NCCL where every rank has it */
        BSR_TRY(bsr_dnccl_setup(A, ctx, row));
        A->halo_path = A->nccl ? BSR_DHALO_NCCL : BSR_DHALO_HOST;
    } else {   /* auto, ipc: CUDA IPC where every rank can */
        BSR_TRY(bsr_dipc_setup(A, ctx, row));
        A->halo_path = A->ipc ? BSR_DHALO_IPC
                     : mode == BSR_HALO_AUTO && S->d->cuda_aware ? BSR_DHALO_MPI : BSR_DHALO_HOST;
    }
    S->halo_path = A->halo_path;
    snprintf(S->halo_note, sizeof S->halo_note, "%s", A->halo_note);
    return BSR_OK;
}

/* Each rank's RCM variant against the slowest rank's levels: where the
 * device rows chose a rank's variant by its own fewest levels
 * (bsr_pc_rcm_levels), the rank sets its preconditioner up again in the
 * lowest-numbered variant within reach of the slowest rank's levels
 * (bsr_rcm_variant_pick): the iteration waits for that rank anyway, and
 * the other numberings converge worse.  Ranks whose factors are not RCM's
 * default (CPU rows, an ordering given) keep theirs. */
static bsr_status rcm_balance(bsr_dsolver *S)
{
    int lv[4];
    const int kept = bsr_pc_rcm_levels(S->ras ? bsr_dras_pc(S->ras) : S->local->pc, lv);
    int mine = kept >= 0 ? lv[kept] : 0, slowest = 0;
    MPI_TRY(MPI_Allreduce(&mine, &slowest, 1, MPI_INT, MPI_MAX, S->d->comm));
    const int v = kept > 0 ? bsr_rcm_variant_pick(lv, kept, slowest) : kept;
    bsr_status st = BSR_OK;
    if (v != kept) {
        char order[32];
        snprintf(order, sizeof order, "rcm,variant=%d", v);
        if (S->ras) st = bsr_dras_reorder(S->ras, order);
        else {   /* this setup's only: the next one chooses again */
            char given[sizeof S->local->opt.reorder];
            memcpy(given, S->local->opt.reorder, sizeof given);
            snprintf(S->local->opt.reorder, sizeof S->local->opt.reorder, "%s", order);
            st = bsr_solver_setup(S->local, S->A->Aoo);
            memcpy(S->local->opt.reorder, given, sizeof given);
        }
        bsr_pc *pc = S->ras ? bsr_dras_pc(S->ras) : S->local->pc;
        if (!st && pc) {   /* the report says why this variant ran */
            const size_t n = strlen(pc->info);
            snprintf(pc->info + n, sizeof pc->info - n, " (the slowest rank has %d levels: variant %d's %d would "
                     "wait for it)", slowest, kept, lv[kept]);
        }
    }
    return bsr_dist_agree(S->d, st);
}

bsr_status bsr_dsolver_setup(bsr_dsolver *S, bsr_dmatrix *A)
{
    BSR_CHECK_ARG(S && A, "bsr_dsolver_setup: NULL argument");
    BSR_TRY(bsr_dmatrix_check_values(A, "bsr_dsolver_setup"));
    /* the product's rows stay in the matrix's precision (every rank alike: the options are collective) */
    if (S->opt.precision != A->prec) {
        const char *want = S->opt.precision == BSR_FLOAT ? "float" : "double";
        return bsr_error(BSR_ERR_UNSUPPORTED, "bsr_dsolver_setup: precision=%s on a %s matrix: a distributed solve "
                         "runs in the matrix's precision (make the matrix in %s, or use precond_precision=float "
                         "for float factors)", want, A->prec == BSR_FLOAT ? "float" : "double", want);
    }
    double t0 = MPI_Wtime();
    S->A = A;
    bsr_dras_destroy(S->ras);
    S->ras = NULL;
    if (S->local->device) bsr_cuda_mem_bytes(S->local->ctx, NULL, NULL, 1);   /* this setup's peak from here */
    BSR_TRY(bsr_dist_agree(S->d, bsr_solver_setup(S->local, A->Aoo)));
    bsr_context *ctx = S->local->device ? S->local->ctx : NULL;
    if (S->opt.overlap) BSR_TRY(bsr_dras_setup(&S->ras, A, ctx, &S->opt));
    BSR_TRY(rcm_balance(S));
    BSR_TRY(choose_halo(S, 1));   /* the IPC buffers for one column: a solve with more grows them */
    S->warm_k = 0;
    BSR_TRY(bsr_dist_agree(S->d, bsr_dmatrix_warm(A, ctx, 1)));
    S->warm_k = 1;
    S->setup_s = MPI_Wtime() - t0;
    /* the whole rank's: local preconditioner, Schwarz rows, product matrices */
    if (ctx) bsr_cuda_mem_bytes(ctx, &S->dev_held, &S->dev_peak, 0);
    return BSR_OK;
}

bsr_status bsr_dsolver_refactor(bsr_dsolver *S, bsr_dmatrix *A)
{
    BSR_CHECK_ARG(S && A, "bsr_dsolver_refactor: NULL argument");
    BSR_TRY(bsr_dmatrix_check_values(A, "bsr_dsolver_refactor"));
    double t0 = MPI_Wtime();
    bsr_status st = A == S->A ? BSR_OK
                    : bsr_error(BSR_ERR_ARG, "bsr_dsolver_refactor: not the matrix given to setup");
    if (!st) st = bsr_solver_refactor(S->local, A->Aoo);
    BSR_TRY(bsr_dist_agree(S->d, st));
    if (S->ras) BSR_TRY(bsr_dras_refactor(S->ras, A));
    S->setup_s = MPI_Wtime() - t0;
    return BSR_OK;
}

/* Statuses every rank returns alike by construction (decided by global reductions). */
static int global_outcome(bsr_status st)
{
    return st == BSR_OK || st == BSR_ERR_NOCONV || st == BSR_ERR_BREAKDOWN;
}

bsr_status bsr_dsolver_solve(bsr_dsolver *S, const bsr_multivec *B, bsr_multivec *X, bsr_solver_stats *stats)
{
    BSR_CHECK_ARG(S && B && X, "bsr_dsolver_solve: NULL argument");
    if (stats) memset(stats, 0, sizeof *stats);
    bsr_status st = S->A ? bsr_dmatrix_check_values(S->A, "bsr_dsolver_solve")
                         : bsr_error(BSR_ERR_ARG, "bsr_dsolver_solve: call bsr_dsolver_setup first");
    bsr_multivec *Bi = NULL, *Xi = NULL;
    int64_t n = S->A ? (int64_t)S->A->nrows * S->A->b : 0;
    if (!st && (B->n != n || X->n != n || X->k != B->k))
        st = bsr_error(BSR_ERR_SIZE, "bsr_dsolver_solve: %lld local rows; B is %lld x %d, X %lld x %d",
                       (long long)n, (long long)B->n, B->k, (long long)X->n, X->k);
    if (!st && (!B->data || !(B->where & BSR_ON_HOST) || !X->data || !(X->where & BSR_ON_HOST)))
        st = bsr_error(BSR_ERR_ARG, "bsr_dsolver_solve: B and X must be current on the host");
    if (!st) st = bsr_multivec_create(&Bi, n, B->k, B->prec);
    if (!st) st = bsr_multivec_create(&Xi, n, X->k, X->prec);
    if (!st) st = bsr_dmatrix_permute(S->A, B, Bi, 1);
    if (!st) st = bsr_dmatrix_permute(S->A, X, Xi, 1);
    memset(&S->comm, 0, sizeof S->comm);
    memset(&S->tm, 0, sizeof S->tm);
    S->tm.on = S->opt.profile;
    S->precond_s = S->idle_s = 0;
    S->precond_calls = 0;
    /* a new column count: its kernel choice before the solve's clock (setup made k = 1's) */
    if (!st && B->k > 1 && B->k <= 64 && !(S->warm_k >> (B->k - 1) & 1)) {
        st = bsr_dmatrix_warm(S->A, S->local->device ? S->local->ctx : NULL, B->k);
        if (!st) S->warm_k |= 1ull << (B->k - 1);
    }
    if (!(st = bsr_dist_agree(S->d, st)) && !(st = choose_halo(S, B->k))) {
        st = bsr_solver_solve(S->local, Bi, Xi, stats);
        bsr_status sq = bsr_dipc_quiesce(S->A);   /* no IPC message left in flight */
        if (sq && global_outcome(st)) st = sq;
        S->comm.halo_s = S->tm.halo_s;
        if (S->ras && stats && stats->col) bsr_dras_stats(S->ras, stats);
        if (stats && stats->col) {
            stats->setup_s = S->setup_s;
            stats->dev_bytes = (double)S->dev_held;
            stats->dev_peak_bytes = (double)S->dev_peak;
        }
        if (global_outcome(st)) {
            bsr_status s2 = bsr_dmatrix_permute(S->A, Xi, X, 0);
            if ((s2 = bsr_dist_agree(S->d, s2))) st = s2;
        } else {
            st = bsr_dist_agree(S->d, st);
        }
    }
    bsr_multivec_destroy(Bi);
    bsr_multivec_destroy(Xi);
    return st;
}

const char *bsr_dhalo_path_name(int path)
{
    static const char *const names[] = {"cpu", "host", "mpi", "ipc", "nccl"};
    return path >= 0 && path <= BSR_DHALO_NCCL ? names[path] : "?";
}

bsr_status bsr_dsolver_get_profile(const bsr_dsolver *S, bsr_dsolver_profile *p)
{
    BSR_CHECK_ARG(S && p, "bsr_dsolver_get_profile: NULL argument");
    memset(p, 0, sizeof *p);
    const double *t = S->tm.t;
    p->spmm_interior_s = t[DT_INT];
    p->spmm_interface_s = t[DT_IFC];
    p->halo_pack_s = t[DT_PACK];
    p->halo_post_s = t[DT_POST];
    p->halo_wait_s = t[DT_WAIT];
    p->halo_unpack_s = t[DT_UNPACK];
    p->precond_s = S->tm.on ? S->precond_s : 0;
    p->reduce_s = S->comm.reduce_s;
    p->reduce_idle_s = S->tm.on ? S->idle_s : 0;
    p->halo_calls = S->comm.halo_calls;
    p->reduce_calls = S->comm.reduce_calls;
    p->precond_calls = S->precond_calls;
    p->profiled = S->tm.on;
    p->halo_path = S->halo_path;
    snprintf(p->halo_note, sizeof p->halo_note, "%s", S->halo_note);
    return BSR_OK;
}

bsr_status bsr_dsolver_get_comm(const bsr_dsolver *S, bsr_dsolver_comm *c)
{
    BSR_CHECK_ARG(S && c, "bsr_dsolver_get_comm: NULL argument");
    *c = S->comm;
    return BSR_OK;
}
