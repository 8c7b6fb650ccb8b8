/* SPDX-License-Identifier: BSD-3-Clause */
/* CUDA backend of the solver, written in C on top of the context API
 * (bsr_ctx_*): the operator, the preconditioner and every Krylov vector are
 * device-resident; per operation only the k coefficients go down and the k
 * inner products come back.  In a CPU-only build the context calls report
 * BSR_ERR_NODEVICE, so this file compiles everywhere. */
#include "precond_impl.h"
#include <string.h>

int bsr_solver_ctx_is_device(bsr_context *ctx)
{
    return ctx && bsr_context_backend(ctx) == BSR_BACKEND_CUDA;
}

/* Active mask (1 = update) to the context API's done array (1 = frozen). */
static const int *done_of(const bsr_kops *o, const unsigned char *mask, int *done)
{
    if (!mask) return NULL;
    for (int j = 0; j < o->k; j++) done[j] = !mask[j];
    return done;
}

static bsr_status dev_vnew(const bsr_kops *o, bsr_multivec **V)
{
    bsr_context *ctx = o->be;
    BSR_TRY(bsr_multivec_create_device(ctx, V, o->n, o->k, o->prec));
    bsr_status s = bsr_ctx_fill(ctx, *V, 0.0);
    if (s) { bsr_multivec_destroy(*V); *V = NULL; }
    return s;
}

static bsr_status dev_zero(const bsr_kops *o, bsr_multivec *V)
{
    return bsr_ctx_fill(o->be, V, 0.0);
}

static void dev_vfree(const bsr_kops *o, bsr_multivec *V)
{
    (void)o;
    bsr_multivec_destroy(V);
}

static bsr_status dev_copy(const bsr_kops *o, bsr_multivec *Y, const bsr_multivec *X,
                           const unsigned char *mask)
{
    if (!mask) return bsr_ctx_copy(o->be, Y, X);
    double one[BSR_KMAX], zero[BSR_KMAX];
    int done[BSR_KMAX];
    for (int j = 0; j < o->k; j++) { one[j] = 1; zero[j] = 0; }
    return bsr_ctx_axpby(o->be, one, X, zero, Y, done_of(o, mask, done));
}

static bsr_status dev_axpby(const bsr_kops *o, bsr_multivec *Y, const double *a,
                            const bsr_multivec *X, const double *b, const unsigned char *mask)
{
    int done[BSR_KMAX];
    return bsr_ctx_axpby(o->be, a, X, b, Y, done_of(o, mask, done));
}

static bsr_status dev_axpbypcz(const bsr_kops *o, bsr_multivec *Y, const double *a,
                               const bsr_multivec *X, const double *b, const bsr_multivec *Z,
                               const double *c, const unsigned char *mask)
{
    int done[BSR_KMAX];
    return bsr_ctx_axpbypcz(o->be, a, X, b, Z, c, Y, done_of(o, mask, done));
}

static bsr_status dev_dot(const bsr_kops *o, const bsr_multivec *X, const bsr_multivec *Y,
                          double *out)
{
    return bsr_ctx_dot(o->be, X, Y, out);
}

static bsr_status dev_dotp(const bsr_kops *o, int np, const bsr_multivec *const *X, const bsr_multivec *const *Y,
                           double *const *out)
{
    return bsr_cuda_mv_dotp(o->be, np, X, Y, out);
}

static bsr_status dev_upd_dot(const bsr_kops *o, int nu, bsr_multivec *const *Z, const double *const *a,
                              const bsr_multivec *const *X, const double *const *b, const bsr_multivec *const *Y,
                              const double *const *c, const unsigned char *mask, const bsr_multivec *W1, double *out1,
                              const bsr_multivec *W2, double *out2)
{
    int done[BSR_KMAX];
    return bsr_cuda_mv_upd_dot(o->be, nu, Z, a, X, b, Y, c, done_of(o, mask, done), W1, out1, W2, out2);
}

static bsr_status dev_lincomb(const bsr_kops *o, bsr_multivec *Y, const double *b, int m, bsr_multivec *const *V,
                              const double *c, const unsigned char *mask)
{
    int done[BSR_KMAX];
    return bsr_cuda_mv_lincomb(o->be, Y, b, m, V, c, done_of(o, mask, done));
}
static bsr_status dev_matvec(const bsr_kops *o, const bsr_multivec *X, bsr_multivec *Y)
{
    return bsr_ctx_spmm(o->be, BSR_KERNEL_AUTO, 1.0, o->A, X, 0.0, Y);
}

/* On the host: only called when a solve stops short of rtol, so a download of
 * B and X costs nothing per iteration and needs no |A| kernel. */
static bsr_status dev_absnorm(const bsr_kops *o, const bsr_multivec *B, const bsr_multivec *X, double *out)
{
    size_t bytes = (size_t)o->n * o->k * bsr_precision_size(o->prec);
    char *h = bsr_malloc(2 * bytes, "residual floor: host copies of B and X");
    if (!h) return BSR_ERR_NOMEM;
    bsr_status st = bsr_cuda_multivec_xfer(o->be, (bsr_multivec *)B, h, 0);
    if (!st) st = bsr_cuda_multivec_xfer(o->be, (bsr_multivec *)X, h + bytes, 0);
    if (!st) st = bsr_absnorm_host(o->A, h, h + bytes, o->k, out);
    free(h);
    return st;
}

bsr_status bsr_kops_cuda(bsr_kops *o, bsr_context *ctx, const bsr_matrix *A, bsr_pc *pc, int k)
{
    bsr_kops_base(o, A, pc, k);
    if (!bsr_solver_ctx_is_device(ctx))
        return bsr_error(BSR_ERR_NODEVICE, "solver: the context is not a CUDA context");
    o->be = ctx;
    o->vnew = dev_vnew;
    o->vfree = dev_vfree;
    o->zero = dev_zero;
    o->copy = dev_copy;
    o->axpby = dev_axpby;
    o->axpbypcz = dev_axpbypcz;
    o->dot = dev_dot;
    o->dotp = dev_dotp;
    o->matvec = dev_matvec;
    o->upd_dot = dev_upd_dot;
    o->lincomb = dev_lincomb;
    o->absnorm = dev_absnorm;
    return BSR_OK;
}

/* ---- the solver's device setup and vectors -------------------------------- */
/* One product and one preconditioner apply with k columns on a vector of
 * ones (see solver_impl.h), so that no Krylov iteration pays AUTO's timed
 * trial of the SpMM kernels (8 extra products at k = 1, ~40 at k = 9), the
 * lazy loading of the SpMM and triangular-solve modules, or the
 * preconditioner's first work-vector allocation: inside the solve these made
 * the SpMM cost 0.52 ms a call against 0.34 ms in bench spmm at k = 1, 2.26
 * against 0.65 ms at k = 9.  The two vectors go to the pool, which
 * the solve then takes. */
bsr_status bsr_solver_device_warm(bsr_solver *s, int k)
{
    const uint64_t bit = k >= 1 && k <= 64 ? (uint64_t)1 << (k - 1) : 0;
    if (s->warm_k & bit) return BSR_OK;
    const bsr_matrix *A = s->A_work ? s->A_work : s->A_user;
    bsr_kops o;
    BSR_TRY(bsr_kops_cuda(&o, s->ctx, A, s->pc, k));
    bsr_kops_use_pool(&o, &s->pool, 1);
    bsr_multivec *X = NULL, *Y = NULL;
    bsr_status st = o.vnew(&o, &X);
    if (!st) st = o.vnew(&o, &Y);
    if (!st) st = bsr_ctx_fill(s->ctx, X, 1.0);
    if (!st && !s->op_external) st = o.matvec(&o, X, Y);
    if (!st && s->pc && s->pc->apply) st = s->pc->apply(s->pc, X, Y);
    if (!st) st = bsr_context_sync(s->ctx);
    if (Y) o.vfree(&o, Y);
    if (X) o.vfree(&o, X);
    if (!st) s->warm_k |= bit;
    return st;
}

bsr_status bsr_solver_device_operator(bsr_solver *s, bsr_status st)
{
    bsr_matrix *A = s->A_work ? s->A_work : (bsr_matrix *)s->A_user; /* gains a device mirror */
    if (s->op_external) {
        bsr_cuda_matrix_release(A);
        return st;
    }
    if (st) return st;
    BSR_TRY(bsr_matrix_upload(s->ctx, A));
    /* A once on the device: its values stay in the layout its products read */
    bsr_cuda_matrix_one_layout(A, 1);
    return BSR_OK;
}

bsr_status bsr_solver_cuda_work_vec(bsr_solver *s, const bsr_kops *o, const bsr_multivec *V,
                                    bsr_multivec **W, int *own)
{
    *own = 0;
    if (bsr_multivec_on_device(V) && bsr_cuda_multivec_context(V) == s->ctx && V->prec == o->prec) {
        *W = (bsr_multivec *)V; /* device-resident already: used in place */
        return BSR_OK;
    }
    if (bsr_multivec_on_device(V)) { /* another context or precision: convert on the device */
        BSR_TRY(o->vnew(o, W));
        *own = 1;
        bsr_status st = bsr_ctx_copy(s->ctx, *W, V);
        if (st) { o->vfree(o, *W); *W = NULL; *own = 0; }
        return st;
    }
    if (V->prec == o->prec && V->data && (V->where & BSR_ON_HOST)) {
        /* host, same precision: straight into a pooled device vector (no host copy) */
        BSR_TRY(o->vnew(o, W));
        *own = 1;
        bsr_status st = bsr_cuda_multivec_xfer(s->ctx, *W, V->data, 1);
        if (st) { o->vfree(o, *W); *W = NULL; *own = 0; }
        return st;
    }
    /* host, other precision: a converted host copy, uploaded (it then lives on the device) */
    BSR_TRY(bsr_multivec_create(W, V->n, V->k, o->prec));
    *own = 1;
    bsr_status st = bsr_multivec_copy(*W, V);
    if (!st) st = bsr_multivec_upload(s->ctx, *W);
    if (st) { bsr_multivec_destroy(*W); *W = NULL; *own = 0; }   /* not the pool's: its upload failed */
    return st;
}

bsr_status bsr_solver_cuda_work_back(bsr_solver *s, const bsr_kops *o, const bsr_multivec *W,
                                     bsr_multivec *V)
{
    (void)o;
    if (bsr_multivec_on_device(V) && bsr_cuda_multivec_context(V) == s->ctx)
        return bsr_ctx_copy(s->ctx, V, W);
    if (V->prec == W->prec && V->data) {   /* straight into the host data */
        BSR_TRY(bsr_cuda_multivec_xfer(s->ctx, (bsr_multivec *)W, V->data, 0));
        V->where = BSR_ON_HOST;            /* a device mirror of V is now stale */
        return BSR_OK;
    }
    BSR_TRY(bsr_multivec_download(s->ctx, (bsr_multivec *)W));
    return bsr_multivec_copy(V, W);
}
