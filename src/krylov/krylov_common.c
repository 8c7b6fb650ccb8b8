/* SPDX-License-Identifier: BSD-3-Clause */
/* Bookkeeping shared by the Krylov methods: per-column tolerances, stopping
 * tests (rtol/atol, maxit, divergence, stagnation, NaN), histories, monitor. */
#include "solver_impl.h"
#include <math.h>
#include <string.h>

bsr_status bsr_kstate_init(bsr_kstate *ks, const bsr_solver_options *opt, int k,
                           const double *bnorm, bsr_col_stats *col)
{
    memset(ks, 0, sizeof *ks);
    ks->opt = opt;
    ks->k = k;
    ks->col = col;
    double *d = bsr_calloc((size_t)6 * k, sizeof(double), "Krylov state");
    ks->best_it = bsr_calloc((size_t)3 * k, sizeof(int), "Krylov state");
    ks->active = bsr_calloc((size_t)k, 1, "Krylov state");
    ks->bnorm = d;
    if (!d || !ks->best_it || !ks->active) {
        bsr_kstate_free(ks);   /* zeroed too: the caller frees ks again on its way out */
        return BSR_ERR_NOMEM;
    }
    ks->tol = d + k; ks->r0norm = d + 2 * k; ks->best = d + 3 * k;
    ks->relres = d + 4 * k;
    ks->above = ks->best_it + k;
    ks->reached = ks->best_it + 2 * k;
    for (int j = 0; j < k; j++) {
        ks->reached[j] = -1;
        ks->bnorm[j] = bnorm[j];
        ks->tol[j] = fmax(opt->rtol * bnorm[j], opt->atol);
        ks->r0norm[j] = -1;
        ks->active[j] = 1;
        col[j].bnorm = bnorm[j];
        col[j].reason = BSR_REASON_NONE;
    }
    return BSR_OK;
}

void bsr_kstate_aim(bsr_kstate *ks, double aim)
{
    for (int j = 0; j < ks->k; j++) ks->tol[j] = fmax(aim * ks->bnorm[j], ks->opt->atol);
    ks->aimed = 1;
}

int bsr_kstate_aim_missed(const bsr_kstate *ks)
{
    for (int j = 0; ks->aimed && j < ks->k; j++)
        if (!bsr_reason_converged(ks->col[j].reason) && ks->reached[j] >= 0) return 1;
    return 0;
}

void bsr_kstate_free(bsr_kstate *ks)
{
    free(ks->bnorm);
    free(ks->best_it);
    free(ks->active);
    memset(ks, 0, sizeof *ks);
}

int bsr_kstate_nactive(const bsr_kstate *ks)
{
    int n = 0;
    for (int j = 0; j < ks->k; j++) n += ks->active[j];
    return n;
}

void bsr_kstate_stop(bsr_kstate *ks, int j, bsr_reason r)
{
    if (!ks->active[j]) return;
    ks->active[j] = 0;
    ks->col[j].reason = r;
    ks->col[j].iterations = ks->it;
}

int bsr_kstate_breakdowns(bsr_kstate *ks, unsigned char *bd)
{
    int n = 0;
    for (int j = 0; j < ks->k; j++) {
        if (!bd[j] || !ks->active[j]) { bd[j] = 0; continue; }
        if (ks->col[j].restarts >= ks->opt->max_restarts) {
            bsr_kstate_stop(ks, j, BSR_DIVERGED_BREAKDOWN);
            bd[j] = 0;
            continue;
        }
        ks->col[j].restarts++;
        n++;
    }
    return n;
}

/* Append v to column j's history (grown geometrically; a failed growth just stops recording). */
static void push_history(bsr_kstate *ks, int j, double v)
{
    bsr_col_stats *c = &ks->col[j];
    if (c->hist_len % 64 == 0) {
        double *h = bsr_realloc(c->history, sizeof(double) * (size_t)(c->hist_len + 64), "residual history");
        if (!h) return;
        c->history = h;
    }
    c->history[c->hist_len++] = v;
}

int bsr_kstate_update(bsr_kstate *ks, const double *rn)
{
    const bsr_solver_options *o = ks->opt;
    for (int j = 0; j < ks->k; j++) {
        if (!ks->active[j]) continue;
        double r = rn[j], bn = ks->bnorm[j];
        ks->relres[j] = bn > 0 ? r / bn : r;
        if (o->history) push_history(ks, j, ks->relres[j]);
        if (ks->r0norm[j] < 0) {
            ks->r0norm[j] = r; ks->best[j] = r; ks->best_it[j] = ks->it;
            /* b = 0: relative to the initial residual instead (x = 0 is then the answer) */
            if (bn == 0) ks->tol[j] = fmax(o->rtol * r, o->atol);
        }
        if (!isfinite(r)) { bsr_kstate_stop(ks, j, BSR_DIVERGED_NAN); continue; }
        if (ks->aimed && ks->reached[j] < 0 && bn > 0 && r <= fmax(o->rtol * bn, o->atol)) ks->reached[j] = ks->it;
        if (r <= ks->tol[j]) {
            /* r <= max(rtol bn, atol): atol decided it when r > rtol bn (for bn > 0
             * this reads no absolute value, so it holds for scaled columns too) */
            int by_atol = !(r <= o->rtol * bn) && (bn > 0 || r <= o->atol);
            bsr_kstate_stop(ks, j, by_atol ? BSR_CONVERGED_ATOL : BSR_CONVERGED_RTOL);
            continue;
        }
        if (r > o->dtol * fmax(ks->r0norm[j], ks->tol[j])) { bsr_kstate_stop(ks, j, BSR_DIVERGED_DTOL); continue; }
        if (r < 0.99 * ks->best[j]) { ks->best[j] = r; ks->best_it[j] = ks->it; }
        else if (o->stag > 0 && ks->it - ks->best_it[j] >= o->stag) {
            bsr_kstate_stop(ks, j, BSR_DIVERGED_STAGNATION);
            continue;
        }
        ks->above[j] = r > 2 * ks->r0norm[j] ? ks->above[j] + 1 : 0;
        if (ks->probe > 0 && ks->it >= ks->probe &&
            (ks->best[j] > 0.5 * ks->r0norm[j] || ks->above[j] >= BSR_FALLBACK_PROBE_RUN ||
             ks->it - ks->best_it[j] >= ks->probe)) {
            bsr_kstate_stop(ks, j, BSR_DIVERGED_STAGNATION);
            ks->probe_hit = 1;
            continue;
        }
        if (ks->it >= o->maxit) bsr_kstate_stop(ks, j, BSR_DIVERGED_MAXIT);
    }
    for (int j = 0; j < ks->k; j++)
        if (ks->active[j]) ks->col[j].iterations = ks->it;
    if (ks->ahead && ks->probe > 0 && ks->it >= ks->probe / 10) {
        /* slow: above half the initial residual, or no 1% gained in the
         * last probe / 10 iterations (checked as long as the probe may stop it) */
        int slow = 0;
        for (int j = 0; j < ks->k; j++)
            slow |= ks->active[j] && (ks->best[j] > 0.5 * ks->r0norm[j] || ks->it - ks->best_it[j] >= ks->probe / 10);
        if (slow) {
            ks->ahead(ks->ahead_data);
            ks->ahead = NULL;
        }
    }
    if (o->monitor) o->monitor(o->monitor_data, ks->it, ks->k, ks->relres, ks->active);
    if (o->progress > 0 && ks->it > 0 && ks->it % o->progress == 0) {
        double worst = 0;   /* over the columns that ran this iteration, those it stopped too */
        int na = 0;
        for (int j = 0; j < ks->k; j++) {
            na += ks->active[j];
            if (ks->col[j].iterations == ks->it && ks->relres[j] > worst) worst = ks->relres[j];
        }
        fprintf(stderr, "  iteration %6d: %d of %d columns active, worst relres %.3e\n", ks->it, na,
                ks->k, worst);
    }
    return bsr_kstate_nactive(ks);
}

int bsr_kstate_verify(const bsr_kops *o, bsr_kstate *ks, const unsigned char *was_active,
                      const bsr_multivec *B, const bsr_multivec *X, bsr_multivec *R,
                      unsigned char *reopen, bsr_status *st)
{
    int any = 0, n = 0;
    for (int j = 0; j < ks->k; j++) {
        reopen[j] = 0;
        if (was_active[j] && !ks->active[j] && (ks->col[j].reason == BSR_CONVERGED_RTOL ||
                                                 ks->col[j].reason == BSR_CONVERGED_ATOL)) any = 1;
    }
    *st = BSR_OK;
    if (!any) return 0;
    double *tn = ks->relres + ks->k; /* spare scratch: bnorm block has 6k doubles */
    if ((*st = bsr_kops_residual(o, B, X, R)) || (*st = bsr_kops_norm2(o, R, tn))) return 0;
    for (int j = 0; j < ks->k; j++) {
        if (!was_active[j] || ks->active[j]) continue;
        if (ks->col[j].reason != BSR_CONVERGED_RTOL && ks->col[j].reason != BSR_CONVERGED_ATOL) continue;
        if (tn[j] <= ks->tol[j] || !(tn[j] == tn[j])) continue;
        /* the recurrence drifted from the true residual: restart from the true one */
        if (ks->col[j].restarts >= ks->opt->max_restarts) {
            ks->col[j].reason = BSR_DIVERGED_STAGNATION;
            continue;
        }
        ks->col[j].restarts++;
        ks->col[j].reason = BSR_REASON_NONE;
        ks->active[j] = 1;
        reopen[j] = 1;
        /* progress is measured from the true residual from now on: the
         * recurrence's best is not one the iterate has (the stagnation and
         * probe rules would stop a column that converges from here) */
        ks->best[j] = tn[j];
        ks->best_it[j] = ks->it;
        n++;
    }
    return n;
}

/* bsr_now after the device (if any) has finished its queued work. */
static double prof_now(struct bsr_kprof *P)
{
    if (P->ctx) bsr_context_sync(P->ctx);
    return bsr_now();
}
/* Time one operation into class cls: by events on the device (no
 * synchronization added), by the host clock otherwise. */
#define PROF(o, cls, call)                                  \
    do {                                                    \
        struct bsr_kprof *P_ = (o)->prof;                   \
        P_->calls[cls]++;                                   \
        if (P_->ev) {                                       \
            int b_ = bsr_cuda_evlog_begin(P_->ev);          \
            bsr_status s_ = (call);                         \
            bsr_cuda_evlog_end(P_->ev, b_, cls);            \
            return s_;                                      \
        }                                                   \
        double t0_ = prof_now(P_);                          \
        bsr_status s_ = (call);                             \
        P_->s[cls] += prof_now(P_) - t0_;                   \
        return s_;                                          \
    } while (0)

static bsr_status prof_copy(const bsr_kops *o, bsr_multivec *Y, const bsr_multivec *X, const unsigned char *m)
{
    PROF(o, BSR_PROF_UPDATE, o->prof->inner.copy(&o->prof->inner, Y, X, m));
}
static bsr_status prof_axpby(const bsr_kops *o, bsr_multivec *Y, const double *a, const bsr_multivec *X,
                             const double *b, const unsigned char *m)
{
    PROF(o, BSR_PROF_UPDATE, o->prof->inner.axpby(&o->prof->inner, Y, a, X, b, m));
}
static bsr_status prof_axpbypcz(const bsr_kops *o, bsr_multivec *Y, const double *a, const bsr_multivec *X,
                                const double *b, const bsr_multivec *Z, const double *c, const unsigned char *m)
{
    PROF(o, BSR_PROF_UPDATE, o->prof->inner.axpbypcz(&o->prof->inner, Y, a, X, b, Z, c, m));
}
static bsr_status prof_dot(const bsr_kops *o, const bsr_multivec *X, const bsr_multivec *Y, double *out)
{
    PROF(o, BSR_PROF_REDUCE, o->prof->inner.dot(&o->prof->inner, X, Y, out));
}
static bsr_status prof_dotp(const bsr_kops *o, int np, const bsr_multivec *const *X, const bsr_multivec *const *Y,
                           double *const *out)
{
    PROF(o, BSR_PROF_REDUCE, o->prof->inner.dotp(&o->prof->inner, np, X, Y, out));
}
static bsr_status prof_dotm(const bsr_kops *o, const bsr_multivec *X, bsr_multivec *const *Y, int m, double *out)
{
    PROF(o, BSR_PROF_REDUCE, o->prof->inner.dotm(&o->prof->inner, X, Y, m, out));
}
static bsr_status prof_upd_dot(const bsr_kops *o, int nu, bsr_multivec *const *Z, const double *const *a,
                               const bsr_multivec *const *X, const double *const *b, const bsr_multivec *const *Y,
                               const double *const *c, const unsigned char *m, const bsr_multivec *W1, double *o1,
                               const bsr_multivec *W2, double *o2)
{
    /* counted with the reductions: each ends in one */
    PROF(o, BSR_PROF_REDUCE, o->prof->inner.upd_dot(&o->prof->inner, nu, Z, a, X, b, Y, c, m, W1, o1, W2, o2));
}
static bsr_status prof_lincomb(const bsr_kops *o, bsr_multivec *Y, const double *b, int m, bsr_multivec *const *V,
                               const double *c, const unsigned char *mask)
{
    PROF(o, BSR_PROF_UPDATE, o->prof->inner.lincomb(&o->prof->inner, Y, b, m, V, c, mask));
}
static bsr_status prof_matvec(const bsr_kops *o, const bsr_multivec *X, bsr_multivec *Y)
{
    PROF(o, BSR_PROF_MATVEC, o->prof->inner.matvec(&o->prof->inner, X, Y));
}

void bsr_kops_profile(bsr_kops *o, struct bsr_kprof *P, bsr_context *ctx)
{
    memset(P, 0, sizeof *P);
    P->inner = *o;
    P->ctx = ctx;
    bsr_cuda_evlog *L = NULL;
    if (ctx && bsr_cuda_evlog_create(ctx, &L) == BSR_OK) P->ev = L; /* else the host clock */
    o->prof = P;
    o->copy = prof_copy;
    o->axpby = prof_axpby;
    o->axpbypcz = prof_axpbypcz;
    o->dot = prof_dot;
    if (o->dotp) o->dotp = prof_dotp;
    if (o->dotm) o->dotm = prof_dotm;
    if (o->upd_dot) o->upd_dot = prof_upd_dot;
    if (o->lincomb) o->lincomb = prof_lincomb;
    o->matvec = prof_matvec;
}

void bsr_kops_profile_finish(struct bsr_kprof *P)
{
    if (!P->ev) return;
    if (bsr_cuda_evlog_finish(P->ev, P->s) != BSR_OK) for (int c = 0; c < 4; c++) P->s[c] = -1; /* unknown */
    P->ev = NULL;
}

/* Y = M^{-1} X with the preconditioner, or a copy without one. */
static bsr_status precond_raw(const bsr_kops *o, const bsr_multivec *X, bsr_multivec *Y)
{
    if (!o->pc || !o->pc->apply) return o->copy(o, Y, X, NULL);
    return o->pc->apply(o->pc, X, Y);
}

bsr_status bsr_kops_precond(const bsr_kops *o, const bsr_multivec *X, bsr_multivec *Y)
{
    if (!o->prof) return precond_raw(o, X, Y);
    PROF(o, BSR_PROF_PRECOND, precond_raw(o, X, Y));
}

bsr_status bsr_kops_residual(const bsr_kops *o, const bsr_multivec *B, const bsr_multivec *X,
                             bsr_multivec *R)
{
    double one[BSR_KMAX], mone[BSR_KMAX];
    for (int j = 0; j < o->k; j++) { one[j] = 1; mone[j] = -1; }
    BSR_TRY(o->matvec(o, X, R));
    return o->axpby(o, R, one, B, mone, NULL);
}

/* out[j] = sqrt of the sum of squares out[j] of X's column j: columns whose
 * sum left the double range are summed again scaled by a power of 2 (exact;
 * bsr_norm_scales). */
bsr_status bsr_kops_norm2_finish(const bsr_kops *o, const bsr_multivec *X, double *out)
{
    double sc[BSR_KMAX], zero[BSR_KMAX] = {0}, d[BSR_KMAX];
    if (bsr_norm_scales(out, o->k, sc)) {
        bsr_multivec *T = NULL;
        bsr_status st = o->vnew(o, &T);
        if (!st) st = o->axpby(o, T, sc, X, zero, NULL);
        if (!st) st = o->dot(o, T, T, d);
        if (T) o->vfree(o, T);
        BSR_TRY(st);
        for (int j = 0; j < o->k; j++)
            if (sc[j] != 1) out[j] = d[j];
    }
    for (int j = 0; j < o->k; j++) out[j] = sqrt(out[j] > 0 ? out[j] : (out[j] == out[j] ? 0 : out[j])) / sc[j];
    return BSR_OK;
}

bsr_status bsr_kops_norm2(const bsr_kops *o, const bsr_multivec *X, double *out)
{
    BSR_TRY(o->dot(o, X, X, out));
    return bsr_kops_norm2_finish(o, X, out);
}

static int kops_unfused; /* bsr_kops_set_unfused: benchmark and test hook */
void bsr_kops_set_unfused(int on) { kops_unfused = on != 0; }

bsr_status bsr_kops_upd_dot(const bsr_kops *o, int nu, bsr_multivec *const *Z, const double *const *a,
                            const bsr_multivec *const *X, const double *const *b, const bsr_multivec *const *Y,
                            const double *const *c, const unsigned char *mask, const bsr_multivec *W1, double *out1,
                            const bsr_multivec *W2, double *out2)
{
    if (o->upd_dot && !kops_unfused) return o->upd_dot(o, nu, Z, a, X, b, Y, c, mask, W1, out1, W2, out2);
    for (int u = 0; u < nu; u++) BSR_TRY(o->axpbypcz(o, Z[u], a[u], X[u], b[u], Y[u], c[u], mask));
    const bsr_multivec *D = Z[nu - 1];
    if (W2) {
        const bsr_multivec *Xp[2] = {D, W2}, *Yp[2] = {W1 ? W1 : D, D};
        double *const outp[2] = {out1, out2};
        return bsr_kops_dotp(o, 2, Xp, Yp, outp);
    }
    return o->dot(o, D, W1 ? W1 : D, out1);
}

bsr_status bsr_kops_lincomb(const bsr_kops *o, bsr_multivec *Y, const double *b, int m, bsr_multivec *const *V,
                            const double *c, const unsigned char *mask)
{
    double one[BSR_KMAX], zero[BSR_KMAX];
    for (int j = 0; j < o->k; j++) { one[j] = 1; zero[j] = 0; }
    if (!b) b = one;
    if (m < 1) return o->axpby(o, Y, zero, Y, b, mask);   /* Y = b Y */
    if (o->lincomb && !kops_unfused) return o->lincomb(o, Y, b, m, V, c, mask);
    for (int l = 0; l < m; l++) BSR_TRY(o->axpby(o, Y, c + (size_t)l * o->k, V[l], l ? one : b, mask));
    return BSR_OK;
}

bsr_status bsr_krylov_scaled(const bsr_kops *o, const bsr_multivec *B, bsr_multivec *X, bsr_kstate *ks,
                             bsr_status (*run)(const bsr_kops *, const bsr_multivec *, bsr_multivec *,
                                               bsr_kstate *))
{
    int k = o->k, any = 0;
    double s[BSR_KMAX], inv[BSR_KMAX], zero[BSR_KMAX];
    for (int j = 0; j < k; j++) {
        double bn = ks->bnorm[j];
        zero[j] = 0;
        s[j] = inv[j] = 1;
        if (bn > 0x1p200 || (bn > 0 && bn < 0x1p-200)) {
            s[j] = ldexp(1.0, -ilogb(bn));
            inv[j] = 1 / s[j];
            any = 1;
        }
    }
    if (!any) return run(o, B, X, ks);
    bsr_multivec *Bs = NULL;
    bsr_status st = o->vnew(o, &Bs);
    if (!st) st = o->axpby(o, Bs, s, B, zero, NULL);
    if (!st) st = o->axpby(o, X, zero, X, s, NULL);
    if (!st) {
        for (int j = 0; j < k; j++) { ks->bnorm[j] *= s[j]; ks->tol[j] *= s[j]; }
        st = run(o, Bs, X, ks);
        for (int j = 0; j < k; j++) { ks->bnorm[j] *= inv[j]; ks->tol[j] *= inv[j]; }
        bsr_status s2 = o->axpby(o, X, zero, X, inv, NULL);
        if (!st) st = s2;
    }
    if (Bs) o->vfree(o, Bs);
    return st;
}

bsr_status bsr_kops_dotp(const bsr_kops *o, int np, const bsr_multivec *const *X, const bsr_multivec *const *Y,
                         double *const *out)
{
    if (np < 1 || np > BSR_KOPS_MAXP) return bsr_error(BSR_ERR_ARG, "bsr_kops_dotp: %d pairs, 1..%d", np, BSR_KOPS_MAXP);
    if (o->dotp) return o->dotp(o, np, X, Y, out);
    for (int p = 0; p < np; p++) BSR_TRY(o->dot(o, X[p], Y[p], out[p]));
    return BSR_OK;
}

bsr_status bsr_kops_dotm(const bsr_kops *o, const bsr_multivec *X, bsr_multivec *const *Y, int m, double *out)
{
    if (o->dotm) return o->dotm(o, X, Y, m, out);
    if (!o->dotp) {
        for (int l = 0; l < m; l++) BSR_TRY(o->dot(o, X, Y[l], out + (size_t)l * o->k));
        return BSR_OK;
    }
    /* BSR_KOPS_MAXP at a time where the backend sweeps them together (each
     * with its lone dot's bits): a device's GMRES step waits for a third
     * of the reductions */
    const bsr_multivec *xs[BSR_KOPS_MAXP];
    double *outs[BSR_KOPS_MAXP];
    for (int p = 0; p < BSR_KOPS_MAXP; p++) xs[p] = X;
    for (int l = 0; l < m; l += BSR_KOPS_MAXP) {
        const int np = m - l < BSR_KOPS_MAXP ? m - l : BSR_KOPS_MAXP;
        for (int p = 0; p < np; p++) outs[p] = out + (size_t)(l + p) * o->k;
        BSR_TRY(bsr_kops_dotp(o, np, xs, (const bsr_multivec *const *)(Y + l), outs));
    }
    return BSR_OK;
}

/* The backend's own allocator, whichever table o is. */
static bsr_status base_vnew(const bsr_kops *o, bsr_multivec **V)
{
    if (o->pool->device) {
        BSR_TRY(bsr_multivec_create_device(o->be, V, o->n, o->k, o->prec));
    } else {
        BSR_TRY(bsr_multivec_create(V, o->n, o->k, o->prec));
    }
    bsr_status s = o->zero(o, *V);
    if (s) { bsr_multivec_destroy(*V); *V = NULL; }
    return s;
}

static bsr_status pool_vnew(const bsr_kops *o, bsr_multivec **V)
{
    bsr_vpool *p = o->pool;
    if (p->count == 0) return base_vnew(o, V);
    *V = p->v[--p->count];
    bsr_status s = o->zero(o, *V);
    if (s) { p->v[p->count++] = *V; *V = NULL; }   /* as base_vnew: nothing to free on failure */
    return s;
}

static void pool_vfree(const bsr_kops *o, bsr_multivec *V)
{
    bsr_vpool *p = o->pool;
    if (!V) return;
    if (p->count < BSR_POOL_MAX && V->n == o->n && V->k == o->k && V->prec == o->prec) p->v[p->count++] = V;
    else bsr_multivec_destroy(V);
}

void bsr_vpool_clear(bsr_vpool *pool)
{
    for (int i = 0; i < pool->count; i++) bsr_multivec_destroy(pool->v[i]);
    pool->count = 0;
}

void bsr_kops_use_pool(bsr_kops *o, bsr_vpool *pool, int device)
{
    if (pool->count && (pool->k != o->k || pool->prec != o->prec || pool->device != device ||
                        pool->v[0]->n != o->n))
        bsr_vpool_clear(pool);
    pool->k = o->k;
    pool->prec = o->prec;
    pool->device = device;
    o->pool = pool;
    o->vnew = pool_vnew;
    o->vfree = pool_vfree;
}

void bsr_kops_base(bsr_kops *o, const bsr_matrix *A, bsr_pc *pc, int k)
{
    memset(o, 0, sizeof *o);
    o->n = (int64_t)A->nbrows * A->b;
    o->k = k;
    o->prec = A->prec;
    o->A = A;
    o->pc = pc;
}

bsr_status bsr_kwork_new(const bsr_kops *o, int nv, int ns, int nm, const char *what, bsr_kwork *w)
{
    memset(w, 0, sizeof *w);
    if (nv > BSR_KWORK_MAXV) return bsr_error(BSR_ERR_INTERNAL, "%s: %d work vectors (at most %d)", what, nv, BSR_KWORK_MAXV);
    w->sc = bsr_calloc((size_t)ns * o->k + 1, sizeof(double), what);
    w->m = bsr_calloc((size_t)nm * o->k + 1, 1, what);
    if (!w->sc || !w->m) return BSR_ERR_NOMEM;
    for (w->nv = 0; w->nv < nv; w->nv++) BSR_TRY(o->vnew(o, &w->v[w->nv]));
    return BSR_OK;
}

void bsr_kwork_free(const bsr_kops *o, bsr_kwork *w)
{
    for (int i = 0; i < w->nv; i++)
        if (w->v[i]) o->vfree(o, w->v[i]);
    free(w->sc);
    free(w->m);
    memset(w, 0, sizeof *w);
}
