/* SPDX-License-Identifier: BSD-3-Clause */
/* The threshold rows of ILUT / ILU2 on the device: the factorization that
 * chooses the pattern (src/ilu/ilu_row.c with the thresholds, dynamic fill and
 * the per-row cap), one warp a block row, sync-free.
 *
 * Warps take rows in increasing order by ticket and factor each in row (IKJ)
 * form, as the host does: row k of A, scaled on the device (ilu0_scale), in a
 * sparse accumulator (a hash of column -> slot and the slots' blocks, in a
 * global slice of the row's context), its lower columns eliminated in
 * ascending order, each after the row it reads is published (its flag,
 * polled relaxed, then acquired; release as in sync_mm.cuh).  Each warp holds
 * up to RMAX rows in flight, one context each, and works on whichever can
 * progress: in natural order a row mostly waits for its predecessor, so the
 * rows in flight, not the warps, are what the wavefront can use.  A row
 * waits only for rows of smaller tickets, all taken by running warps that
 * poll every row they hold: no deadlock.  Every block is formed by the host's
 * arithmetic in the host's order (this file is compiled without FMA
 * contraction), each target of an update by one lane, and new slots are
 * numbered in lane order, so the classes, the cap's choices and the pattern
 * are the host's, and deterministic.  A finished row publishes its inverse
 * pivot, U and W (columns ascending) in a slot sized by the cap (1 + A's
 * upper blocks + 2P), which is why the device needs a cap; its lower columns
 * (L, R and the capped-out class 2) go to a pool.  A row that outgrows its
 * workspace, its slot or the pool sends the whole factorization back to the
 * host.  The frozen pattern, L, U and their schedules are then made from the
 * columns on the device (ilut_pattern_gpu.cu, F->dsym; BSR_ILU_DSYM=0: on
 * the host, ilu_rows_from_dev and ilu_pattern_build, the reference kept to
 * measure against; BSR_ILU_DSYM_CHECK=1: both, compared array for array):
 * the values are factored into it by the frozen numeric
 * (kernels/ilu/ilu0_gpu.cu), which repeats this arithmetic. */
#include "ilu0_gpu.cuh"
#include <limits.h>

namespace {

/* warps a CUDA block; blocks an SM the registers are bounded for (measured
 * on H100: 4 gave 16 warps an SM against 8 unbounded, device rows 0.36 ->
 * 0.27 s at 1M block rows) */
enum { WARPS = 4, MINB = 4 };

/* What the kernel reads and writes (device pointers unless said). */
struct thr_args {
    int n, smax, nctx;          /* nctx: rows in flight a warp */
    const int *ap, *ac;
    const double *aval, *rowref;
    double t1, t2, pivot_rel, fill;
    int strict, keep, capv;
    const long long *uoff;      /* [n+1] slot of row k's upper part */
    int *ucol;
    double *uval;
    int2 *ucnt;                 /* [n] (1 + U blocks, W blocks) */
    int *lpool;                 /* lower columns: L, R, class 2 of each row */
    long long lcap;
    unsigned long long *ltop;
    long long *loff;            /* [n] */
    int *lcnt;                  /* [3n] nl, nr, nx */
    int *done;                  /* [n+1] 0 pending, 1 done, 2 failed or skipped; [n] the ticket */
    unsigned long long *err;
    int *ovf;                   /* a row outgrew its workspace or the pool */
    unsigned long long *cnt;    /* dropped, second-order used, W kept, regularized, R peak */
    int *wsi;                   /* per warp: hash keys, values [2 smax] each, then 8 smax ints */
    double *wsd;                /* per warp: smax blocks, then 2 smax keys */
};

/* Per-row cap: ilu_row_cap of src/ilu/ilu_row.c. */
__device__ int row_cap(const thr_args &a, int len)
{
    int p = a.capv > 0 ? a.capv : a.capv == 0 ? len : INT_MAX;
    if (a.fill > 0) {
        double q = floor((a.fill - 1.0) * len / 2.0);
        int qf = q < 0 ? 0 : q > INT_MAX ? INT_MAX : (int)q;
        p = a.capv > 0 && a.capv < qf ? a.capv : qf;
    }
    return p;
}

template <int B> __device__ double sumsq_serial(const double *x)
{
    double s = 0.0;
    for (int i = 0; i < B * B; i++) s += x[i] * x[i];
    return s;
}

__device__ __forceinline__ unsigned long long warp_min(unsigned long long v)
{
    for (int o = 16; o; o >>= 1) {
        unsigned long long w = __shfl_xor_sync(0xffffffffu, v, o);
        v = w < v ? w : v;
    }
    return v;
}

__device__ __forceinline__ int hash_of(int j, int H) { return (int)(((unsigned)j * 2654435761u) >> 7) & (H - 1); }

/* Slot of column j in the warp's hash (-1 absent); *hp: the free position
 * claimed for j when absent (or -1 when the table is full). */
__device__ int hash_find(int *hkey, const int *hval, int H, int j, int *hp)
{
    int h = hash_of(j, H);
    for (int t = 0; t < H; t++, h = (h + 1) & (H - 1)) {
        int key = *(volatile int *)&hkey[h];
        if (key == j) { *hp = h; return *(volatile const int *)&hval[h]; }
        if (key == -1) {
            if (atomicCAS(&hkey[h], -1, j) == -1) { *hp = h; return -1; }
            if (*(volatile int *)&hkey[h] == j) { *hp = h; return *(volatile const int *)&hval[h]; }
        }
    }
    *hp = -1;
    return -1;
}

/* Over t < m: how many x[t] satisfy pred (every lane gets the count). */
template <class Pred> __device__ int warp_count(int m, int lane, Pred pred)
{
    int c = 0;
    for (int t = lane; t < m; t += 32) c += pred(t);
    return __reduce_add_sync(0xffffffffu, c);
}

/* The rank of candidate t among m (key descending, column ascending) of
 * those with sel[u] set. */
__device__ int cand_rank(int m, const double *key, const int *col, const int *flag, int want, int mask, int t)
{
    int r = 0;
    for (int u = 0; u < m; u++)
        if ((flag[u] & mask) == want && (key[u] > key[t] || (key[u] == key[t] && col[u] < col[t]))) r++;
    return r;
}

/* The scalars of one row in flight, kept in shared memory while its warp
 * works on its other rows. */
struct row_st {
    int k, a0, lenA, na, ns, sd;   /* k < 0: the context holds no row */
    int nle, last, lfill, lfmax, P, tomb, ovf, status;
    int pi, psi;                   /* the next lower column and its slot (-1: to find, INT_MAX: none left) */
    unsigned long long rdrop;
};

/* The workspace of one row context: hash keys and values, then 8 S ints;
 * S blocks, then 2 S keys. */
struct row_ws {
    int *hkey, *hval, *scol, *hpos, *lec, *lef, *ucc, *ucf, *ucs, *pos;
    double *sval, *lek, *uck;
};

template <int B> __device__ row_ws ws_of(const thr_args &a, long long w)
{
    const int S = a.smax, H = 2 * S;
    row_ws r;
    r.hkey = a.wsi + w * (2 * (long long)H + 8 * (long long)S);
    r.hval = r.hkey + H; r.scol = r.hval + H; r.hpos = r.scol + S;
    r.lec = r.hpos + S; r.lef = r.lec + S;   /* eliminated lower blocks: column, flags */
    r.ucc = r.lef + S; r.ucf = r.ucc + S; r.ucs = r.ucf + S; r.pos = r.ucs + S;   /* upper candidates */
    r.sval = a.wsd + w * ((long long)S * B * B + 2 * (long long)S);
    r.lek = r.sval + (size_t)S * B * B; r.uck = r.lek + S;
    return r;
}

/* Per-warp counters of the rows it finished. */
struct row_cnt {
    unsigned long long dropped, secu, wk, nregs, rpeak;
};

/* Row k of the scaled, permuted A into the context's slots, then its diagonal. */
template <int B>
__device__ void row_start(const thr_args &a, const row_ws &w, row_st &s, int k, int lane)
{
    constexpr int BB = B * B;
    const unsigned FULL = 0xffffffffu;
    const int S = a.smax, H = 2 * S;
    s.k = k;
    s.a0 = a.ap[k];
    s.lenA = a.ap[k + 1] - s.a0;
    s.na = a.keep ? s.lenA : 0;
    s.status = 1; s.ovf = 0; s.ns = s.lenA; s.sd = -1;
    s.nle = 0; s.last = -1; s.lfill = 0; s.tomb = 0; s.pi = -1; s.psi = -1; s.rdrop = 0;
    s.P = row_cap(a, s.lenA);
    s.lfmax = s.P < INT_MAX / 2 ? 2 * s.P : INT_MAX;   /* ilu_row's lower fill budget */
    if (s.lenA + 1 > S) { s.ovf = 1; return; }   /* ovf: 1 the slots, 2 the row's upper slot, 3 the pool */
    int sd = -1;
    for (int p = lane; p < s.lenA; p += 32) {
        int j = a.ac[s.a0 + p], hp;
        hash_find(w.hkey, w.hval, H, j, &hp);
        w.hval[hp] = p; w.scol[p] = j; w.hpos[p] = hp;
        if (j == k) sd = p;
    }
    for (int e = lane; e < s.lenA * BB; e += 32) w.sval[e] = a.aval[(size_t)s.a0 * BB + e];
    unsigned bd = __ballot_sync(FULL, sd >= 0);
    sd = bd ? __shfl_sync(FULL, sd, __ffs(bd) - 1) : -1;
    if (sd < 0) {
        sd = s.ns++;
        if (lane == 0) {
            int hp;
            hash_find(w.hkey, w.hval, H, k, &hp);
            w.hval[hp] = sd; w.scol[sd] = k; w.hpos[sd] = hp;
        }
        for (int e = lane; e < BB; e += 32) w.sval[(size_t)sd * BB + e] = 0.0;
    }
    s.sd = sd;
    __syncwarp();
}

/* The eliminations of row s.k's lower columns in ascending order, as far as
 * the rows they read are published: 0 when the next one waits on a pending
 * row before any progress, 1 after progress, 2 when none is left. */
template <int B>
__device__ int row_eliminate(const thr_args &a, const row_ws &w, row_st &s, double *lb, int *tsl, int lane,
                             row_cnt &q)
{
    constexpr int BB = B * B;
    const unsigned FULL = 0xffffffffu;
    const int S = a.smax, H = 2 * S, k = s.k;
    int progressed = 0;
    while (!s.ovf && s.status == 1) {
        if (s.pi < 0) {
            unsigned long long best = ~0ull;
            for (int t = lane; t < s.ns; t += 32) {
                int c = w.scol[t];
                if (c > s.last && c < k) {
                    unsigned long long v = ((unsigned long long)c << 32) | (unsigned)t;
                    best = v < best ? v : best;
                }
            }
            best = warp_min(best);
            if (best == ~0ull) { s.pi = INT_MAX; break; }
            s.pi = (int)(best >> 32); s.psi = (int)(best & 0xffffffffu);
        }
        if (s.pi == INT_MAX) break;
        const int i = s.pi, si = s.psi;
        /* a relaxed poll (an acquire would invalidate the SM's L1 for every
         * warp on it at each failed poll), then the acquire once it is set */
        int di = 0;
        if (lane == 0) di = ld_relaxed(a.done + i);
        if (!__shfl_sync(FULL, di, 0)) return progressed;
        di = ld_acquire(a.done + i);   /* final once nonzero: the same in every lane */
        progressed = 1;
        s.last = i; s.pi = -1;
        if (di == 2) { s.status = 3; break; }   /* skipped: no error of its own */
        const long long uo = a.uoff[i];
        const int2 uc = a.ucnt[i];
        const double *x = w.sval + (size_t)si * BB, *u0 = a.uval + (size_t)uo * BB;
        for (int e = lane; e < BB; e += 32) {
            const int r = e / B, c = e % B;
            double acc = 0.0;
            for (int m = 0; m < B; m++) acc += x[r * B + m] * u0[m * B + c];
            lb[e] = acc;
        }
        __syncwarp();
        int cls = 0;
        double key = 0.0;
        if (lane == 0) {
            double nrm = blk_fnorm<B>(lb);
            cls = !isfinite(nrm) ? -3 : nrm >= a.t1 || si < s.na ? 0 : nrm >= a.t2 ? 1 : 2;
            key = sumsq_serial<B>(lb);
        }
        cls = __shfl_sync(FULL, cls, 0);
        key = __shfl_sync(FULL, key, 0);
        if (cls == -3) {
            if (lane == 0) fail(a.err, k, E_LBLK, (unsigned)i);
            s.status = 2;
            break;
        }
        if (cls == 2) { s.rdrop++; continue; }
        if (lane == 0) { w.lec[s.nle] = i; w.lef[s.nle] = cls | (si >= s.lenA ? 2 : 0); w.lek[s.nle] = key; }
        s.nle++;
        const int qn = cls == 0 ? uc.x + uc.y : uc.x;
        for (int base = 1; base < qn && !s.ovf; base += 32) {
            const int qq0 = base + lane, act = qq0 < qn;
            int slot = -1, hp = -1;
            if (act) slot = hash_find(w.hkey, w.hval, H, a.ucol[uo + qq0], &hp);
            if (__any_sync(FULL, act && slot < 0 && hp < 0)) { s.ovf = 1; break; }
            /* lower fill past the budget: dropped unformed (host: ilu_row's lfill) */
            const unsigned low = __ballot_sync(FULL, act && slot < 0 && a.ucol[uo + qq0] < k);
            const int room = s.lfmax - s.lfill, lrank = __popc(low & ((1u << lane) - 1));
            const int skip = ((low >> lane) & 1) && lrank >= (room > 0 ? room : 0);
            s.lfill = s.lfill + __popc(low) < s.lfmax ? s.lfill + __popc(low) : s.lfmax;
            if (skip) { w.hval[hp] = -1; s.tomb = 1; }   /* known absent for the rest of the row */
            const unsigned need = __ballot_sync(FULL, act && slot < 0 && !skip);
            if (s.ns + __popc(need) > S) { s.ovf = 1; break; }
            if (act && slot < 0 && !skip) {
                slot = s.ns + __popc(need & ((1u << lane) - 1));
                w.hval[hp] = slot; w.scol[slot] = a.ucol[uo + qq0]; w.hpos[slot] = hp;
                for (int e = 0; e < BB; e++) w.sval[(size_t)slot * BB + e] = 0.0;
            }
            s.ns += __popc(need);
            tsl[lane] = act && !skip ? slot : -1;
            __syncwarp();
            const int nact = min(32, qn - base);
            for (int t = lane; t < nact * BB; t += 32) {
                const int qq = t / BB, e = t % BB, r = e / B, c = e % B;
                if (tsl[qq] < 0) continue;
                const double *v = a.uval + (size_t)(uo + base + qq) * BB;
                double *tg = w.sval + (size_t)tsl[qq] * BB;
                double y = tg[e];
                for (int m = 0; m < B; m++) y -= lb[r * B + m] * v[m * B + c];
                tg[e] = y;
            }
            __syncwarp();
        }
        s.tomb = __any_sync(FULL, s.tomb);
    }
    return 2;
}

/* Row s.k once eliminated: its pivot, the classes and caps of its blocks,
 * then U, W and its lower columns published, its slots cleared and its flag
 * released. */
template <int B>
__device__ void row_finish(const thr_args &a, const row_ws &w, row_st &s, double *dv, int lane, row_cnt &q)
{
    constexpr int BB = B * B;
    const unsigned FULL = 0xffffffffu;
    const int H = 2 * a.smax, k = s.k, ns = s.ns, nle = s.nle, P = s.P, lenA = s.lenA, na = s.na;
    int ovf = s.ovf, status = s.status;
    unsigned long long rdrop = s.rdrop;
    /* the pivot */
    if (!ovf && status == 1) {
        int bad = 0;
        if (lane == 0) {
            const double *d = w.sval + (size_t)s.sd * BB;
            if (!blk_finite<B>(d)) { fail(a.err, k, E_PIV, 0); bad = 1; }
            else {
                double lu[BB];
                int piv[B];
                for (int e = 0; e < BB; e++) lu[e] = d[e];
                const int nreg = blk_lu<B>(lu, piv, a.pivot_rel * a.rowref[k]);
                if (nreg && a.strict) { fail(a.err, k, E_STRICT, (unsigned)nreg); bad = 1; }
                else {
                    q.nregs += nreg != 0;
                    blk_lu_inv<B>(lu, piv, dv);
                    if (!blk_finite<B>(dv)) { fail(a.err, k, E_INV, 0); bad = 1; }
                }
            }
        }
        if (__shfl_sync(FULL, bad, 0)) status = 2;
        __syncwarp();
    }
    /* L's cap: first-order fill past P becomes class 2 (flag 4) */
    if (!ovf && status == 1) {
        const int m = warp_count(nle, lane, [&](int t) { return (w.lef[t] & 3) == 2; });
        if (m > P)
            for (int t = lane; t < nle; t += 32)
                if ((w.lef[t] & 3) == 2 && cand_rank(nle, w.lek, w.lec, w.lef, 2, 3, t) >= P) w.lef[t] |= 4;
        __syncwarp();
    }
    /* the upper blocks: classes by the norm of d_k^{-1} z */
    int m = 0;
    if (!ovf && status == 1) {
        int bad = 0;
        for (int base = 0; base < ns; base += 32) {
            const int t = base + lane;
            int cls = -1;
            double key = 0.0;
            if (t < ns && w.scol[t] > k) {
                double y[BB];
                blk_mul<B>(y, dv, w.sval + (size_t)t * BB);
                double nrm = blk_fnorm<B>(y);
                cls = !isfinite(nrm) ? -3 : nrm >= a.t1 || t < na ? 0 : nrm >= a.t2 ? 1 : 2;
                key = sumsq_serial<B>(y);
            }
            const unsigned nf = __ballot_sync(FULL, cls == -3);
            if (nf) {   /* the smallest such column, as the host's loop over slots finds first */
                if (lane == __ffs(nf) - 1) fail(a.err, k, E_UBLK, (unsigned)w.scol[t]);
                bad = 1;
                break;
            }
            rdrop += __popc(__ballot_sync(FULL, cls == 2));
            const unsigned keep = __ballot_sync(FULL, cls == 0 || cls == 1);
            if (cls == 0 || cls == 1) {
                const int at = m + __popc(keep & ((1u << lane) - 1));
                w.ucc[at] = w.scol[t]; w.ucs[at] = t; w.ucf[at] = cls | (t >= lenA ? 2 : 0); w.uck[at] = key;
            }
            m += __popc(keep);
        }
        if (bad) status = 2;
        __syncwarp();
    }
    int nu = 0, nw = 0;
    if (!ovf && status == 1) {
        /* U's fill past P becomes W, then W keeps its P largest */
        const int mu = warp_count(m, lane, [&](int t) { return (w.ucf[t] & 3) == 2; });
        if (mu > P) {
            for (int t = lane; t < m; t += 32)
                w.pos[t] = (w.ucf[t] & 3) == 2 && cand_rank(m, w.uck, w.ucc, w.ucf, 2, 3, t) >= P;
            __syncwarp();
            for (int t = lane; t < m; t += 32) if (w.pos[t]) w.ucf[t] |= 1;
            __syncwarp();
        }
        const int mw = warp_count(m, lane, [&](int t) { return w.ucf[t] & 1; });
        if (mw > P) {
            for (int t = lane; t < m; t += 32) w.pos[t] = (w.ucf[t] & 1) && cand_rank(m, w.uck, w.ucc, w.ucf, 1, 1, t) >= P;
            __syncwarp();
            for (int t = lane; t < m; t += 32) if (w.pos[t]) w.ucf[t] = 8;   /* dropped */
            __syncwarp();
            rdrop += mw - P;
        }
        nu = warp_count(m, lane, [&](int t) { return w.ucf[t] == 0 || w.ucf[t] == 2; });
        nw = warp_count(m, lane, [&](int t) { return w.ucf[t] == 1 || w.ucf[t] == 3; });
        /* publish: the inverse pivot, U then W, columns ascending */
        const long long uo = a.uoff[k];
        if (1 + nu + nw > a.uoff[k + 1] - uo) ovf = 2;
        else {
            for (int t = lane; t < m; t += 32) {
                const int f = w.ucf[t];
                if (f == 8) continue;
                const int wf = f & 1;
                int at = 0;
                for (int u = 0; u < m; u++) at += (w.ucf[u] != 8) && (w.ucf[u] & 1) == wf && w.ucc[u] < w.ucc[t];
                at += 1 + (wf ? nu : 0);
                a.ucol[uo + at] = w.ucc[t];
                const double *z = w.sval + (size_t)w.ucs[t] * BB;
                double *o = a.uval + (size_t)(uo + at) * BB;
                for (int e = 0; e < BB; e++) o[e] = z[e];
            }
            for (int e = lane; e < BB; e += 32) a.uval[(size_t)uo * BB + e] = dv[e];
            if (lane == 0) { a.ucol[uo] = k; a.ucnt[k] = make_int2(1 + nu, nw); }
        }
    }
    /* the lower columns: L, R, class 2 (each ascending: the elimination's order) */
    if (!ovf && status == 1) {
        const int nl = warp_count(nle, lane, [&](int t) { return !(w.lef[t] & 5); });
        const int nr = warp_count(nle, lane, [&](int t) { return w.lef[t] & 1; });
        const int nx = warp_count(nle, lane, [&](int t) { return (w.lef[t] & 4) != 0; });
        long long off = 0;
        if (lane == 0) off = (long long)atomicAdd(a.ltop, (unsigned long long)(nl + nr + nx));
        off = __shfl_sync(FULL, off, 0);
        if (off + nl + nr + nx > a.lcap) ovf = 3;
        else {
            int il = 0, ir = 0, ix = 0;
            for (int base = 0; base < nle; base += 32) {   /* each class in the elimination's order */
                const int t = base + lane, f = t < nle ? w.lef[t] : 8;
                const unsigned below = (1u << lane) - 1, bx = __ballot_sync(FULL, f & 4),
                               br = __ballot_sync(FULL, f != 8 && (f & 1)), bl = __ballot_sync(FULL, f != 8 && !(f & 5));
                if (f & 4) a.lpool[off + nl + nr + ix + __popc(bx & below)] = w.lec[t];
                else if (f != 8 && (f & 1)) a.lpool[off + nl + ir + __popc(br & below)] = w.lec[t];
                else if (f != 8) a.lpool[off + il + __popc(bl & below)] = w.lec[t];
                ix += __popc(bx); ir += __popc(br); il += __popc(bl);
            }
            if (lane == 0) {
                a.loff[k] = off;
                a.lcnt[3 * (size_t)k] = nl; a.lcnt[3 * (size_t)k + 1] = nr; a.lcnt[3 * (size_t)k + 2] = nx;
            }
            q.dropped += rdrop;
            q.secu += nr + nw;
            q.wk += nw;
            if ((unsigned long long)nr > q.rpeak) q.rpeak = nr;
        }
    }
    if (ovf || s.tomb) {   /* the table may hold stray claims or tombstones */
        if (ovf && lane == 0) atomicMax(a.ovf, ovf);
        if (ovf) status = 2;
        for (int h = lane; h < H; h += 32) w.hkey[h] = -1;
    } else {
        for (int t = lane; t < ns; t += 32) w.hkey[w.hpos[t]] = -1;
    }
    __syncwarp();   /* every lane's writes of row k, before its flag (cumulative release) */
    if (lane == 0) st_release(a.done + k, status == 1 ? 1 : 2);
}

/* The threshold rows: each warp holds up to a.nctx rows taken by ticket and
 * works on whichever can progress, so a row waiting on its predecessor does
 * not idle the warp, and the rows in flight (the window of the ordering that
 * can progress at once) are warps x contexts, not warps. */
template <int B>
__global__ void __launch_bounds__(WARPS * 32, MINB) ilut_rows(thr_args a)
{
    constexpr int BB = B * B;
    const unsigned FULL = 0xffffffffu;
    const int lane = threadIdx.x & 31, wib = threadIdx.x >> 5, R = a.nctx;
    const long long gw = ((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    __shared__ double sh_l[WARPS][BB], sh_d[WARPS][BB];
    __shared__ int sh_t[WARPS][32];
    extern __shared__ row_st sh_r[];   /* [WARPS][R] */
    double *lb = sh_l[wib], *dv = sh_d[wib];
    int *tsl = sh_t[wib];
    row_st *rs = sh_r + (size_t)wib * R;
    const int H = 2 * a.smax;
    for (int c = 0; c < R; c++) {
        int *hk = ws_of<B>(a, gw * R + c).hkey;
        for (int h = lane; h < H; h += 32) hk[h] = -1;
        if (lane == 0) rs[c].k = -1;
    }
    __syncwarp();
    row_cnt q = {0, 0, 0, 0, 0};
    int live = 0, more = 1, any = 0;
    for (int c = 0;; c = c + 1 == R ? 0 : c + 1) {
        if (c == 0) {
            if (!more && !live) break;
            if (!any) __nanosleep(64);   /* a round without progress: spare the working warps' issue slots */
            any = 0;
        }
        row_st s = rs[c];
        __syncwarp();
        if (s.k < 0) {
            if (!more) continue;
            int k = 0;
            if (lane == 0) k = atomicAdd(a.done + a.n, 1);
            k = __shfl_sync(FULL, k, 0);
            if (k >= a.n) { more = 0; continue; }
            row_start<B>(a, ws_of<B>(a, gw * R + c), s, k, lane);
            live++;
            any = 1;
        }
        const row_ws w = ws_of<B>(a, gw * R + c);
        const int e = row_eliminate<B>(a, w, s, lb, tsl, lane, q);
        if (e == 2) {
            row_finish<B>(a, w, s, dv, lane, q);
            s.k = -1;
            live--;
        }
        any |= e != 0;
        __syncwarp();
        if (lane == 0) rs[c] = s;
        __syncwarp();
    }
    if (lane == 0) {
        atomicAdd(&a.cnt[0], q.dropped);
        atomicAdd(&a.cnt[1], q.secu);
        atomicAdd(&a.cnt[2], q.wk);
        atomicAdd(&a.cnt[3], q.nregs);
        atomicMax(&a.cnt[4], q.rpeak);
    }
}

template <int B> void launch(const thr_args &a, int blocks, cudaStream_t st)
{
    ilut_rows<B><<<blocks, WARPS * 32, WARPS * (size_t)a.nctx * sizeof(row_st), st>>>(a);
}

template <int B> int occupancy(int nctx)
{
    int nb = 0;
    cudaOccupancyMaxActiveBlocksPerMultiprocessor(&nb, ilut_rows<B>, WARPS * 32, WARPS * (size_t)nctx * sizeof(row_st));
    return nb;
}

typedef void (*launch_fn)(const thr_args &, int, cudaStream_t);
typedef int (*occ_fn)(int);
#define THR_ROW(B) {launch<B>, occupancy<B>},
const struct { launch_fn launch; occ_fn occ; } thr_table[] = {BSR_FOR_EACH_B(THR_ROW)};
#undef THR_ROW

template <int B, typename TA>
void scale_launch(int n, const int *ap, const int *asrc, const int *adiag, const void *A, double *W, double *dl,
                  double *rowref, int *cnt, unsigned long long *err, cudaStream_t st)
{
    /* W in A's layout, one array (every index below the split INT_MAX: L's) */
    ilu0_scale<B, TA><<<(n + 127) / 128, 128, 0, st>>>(n, ap, asrc, NULL, adiag, NULL, NULL, (const TA *)A, NULL, NULL,
                                                     W, W, INT_MAX, dl, rowref, cnt, err);
}
typedef void (*scale_fn)(int, const int *, const int *, const int *, const void *, double *, double *, double *,
                         int *, unsigned long long *, cudaStream_t);
#define SCALE_ROW(B) {scale_launch<B, double>, scale_launch<B, float>},
const scale_fn scale_table[][2] = {BSR_FOR_EACH_B(SCALE_ROW)};
#undef SCALE_ROW

/* A host allocation freed when the run returns, on every path. */
struct host_buf {
    void *p;
    ~host_buf() { free(p); }
};

/* Device allocations of one run, freed together. */
struct thr_mem {
    void *p[32];
    int n;
    ~thr_mem() { for (int i = 0; i < n; i++) bsr_cu_free(p[i]); }
};

template <class T> static bsr_status dalloc(thr_mem &M, T **p, size_t count)
{
    *p = NULL;
    CU_TRY(bsr_cu_malloc(p, (count ? count : 1) * sizeof(T)));
    M.p[M.n++] = *p;
    return BSR_OK;
}

/* aval = Ds P A P^T and rowref from A's own values, scaled on the device
 * (ilu0_scale: the host's arithmetic); scaling fallbacks into F's stats.
 * BSR_ERR_UNSUPPORTED (no error set) on any value the scaling refuses: the
 * host scales and names it. */
bsr_status scale_on_device(bsr_context *ctx, thr_mem &M, bsr_ilu *F, const int *adiag, const int *ap, double *aval,
                           double *rowref)
{
    const bsr_matrix *A = F->araw;
    const int n = F->n, b = F->b, bb = b * b, nnz = F->ap[n];
    const size_t vs = A->prec == BSR_FLOAT ? sizeof(float) : sizeof(double);
    cudaStream_t st = bsr_cuda_stream(ctx);
    int *asrc = NULL, *dadiag = NULL, *cnt = NULL;
    const char *val = NULL;
    double *dl = NULL;
    unsigned long long *err = NULL;
    BSR_TRY(dalloc(M, &asrc, (size_t)nnz));
    BSR_TRY(dalloc(M, &dadiag, (size_t)n));
    /* A's values: its current device mirror in this context, else a copy */
    if (A->dev && !A->dev_stale && bsr_cuda_dmat(A)->ctx == ctx) {
        BSR_TRY(bsr_cuda_matrix_bsr(ctx, A));   /* made from the sliced copy where that is the only one */
        val = (const char *)bsr_cuda_matrix_val(A);
    } else {
        char *v = NULL;
        BSR_TRY(dalloc(M, &v, (size_t)A->nnzb * bb * vs));
        BSR_TRY(bsr_cuda_h2d(ctx, v, A->val, (size_t)A->nnzb * bb * vs));
        val = v;
    }
    BSR_TRY(dalloc(M, &dl, (size_t)n * bb));
    BSR_TRY(dalloc(M, &cnt, 2));
    BSR_TRY(dalloc(M, &err, 1));
    BSR_TRY(bsr_cuda_h2d(ctx, asrc, F->asrc, sizeof(int) * (size_t)nnz));
    BSR_TRY(bsr_cuda_h2d(ctx, dadiag, adiag, sizeof(int) * (size_t)n));
    CU_TRY(cudaMemsetAsync(cnt, 0, 2 * sizeof(int), st));
    CU_TRY(cudaMemsetAsync(err, 0xff, sizeof(unsigned long long), st));
    scale_table[b - 1][A->prec == BSR_FLOAT](n, ap, asrc, dadiag, val, aval, dl, rowref, cnt, err, st);
    CU_LAUNCHED("ilu0_scale");
    unsigned long long e = 0;
    int c[2] = {0, 0};
    CU_TRY(cudaMemcpyAsync(&e, err, sizeof e, cudaMemcpyDeviceToHost, st));
    CU_TRY(cudaMemcpyAsync(c, cnt, sizeof c, cudaMemcpyDeviceToHost, st));
    CU_TRY(cudaStreamSynchronize(st));
    if (e != ~0ull) return BSR_ERR_UNSUPPORTED;
    F->st.scaling_fallbacks = c[1];
    return BSR_OK;
}

/* The host's message for the device's error key (ilu_row.c's words). */
bsr_status thr_error(const bsr_ilu *F, unsigned long long key)
{
    const int row = (int)(key >> 36), kind = (int)((key >> 32) & 15);
    const unsigned aux = (unsigned)(key & 0xffffffffu);
    const int orig = ilu_src_row(F, row);
    switch (kind) {
    case E_LBLK:
        return bsr_error(BSR_ERR_SINGULAR, "ILU: non-finite block L(%d,%d) in block row %d (row %d of A)", row,
                         (int)aux, row, orig);
    case E_PIV:
        return bsr_error(BSR_ERR_SINGULAR, "ILU: non-finite pivot block in block row %d (row %d of A)", row, orig);
    case E_STRICT:
        return bsr_error(BSR_ERR_SINGULAR, "ILU: singular pivot block in block row %d (row %d of A): %u pivot(s) "
                         "below %.3g", row, orig, aux, F->pivot_rel * F->rowref[row]);
    case E_INV:
        return bsr_error(BSR_ERR_SINGULAR, "ILU: non-finite inverse pivot in block row %d (row %d of A)", row, orig);
    default:
        return bsr_error(BSR_ERR_SINGULAR, "ILU: non-finite block U(%d,%d) in block row %d (row %d of A)", row,
                         (int)aux, row, orig);
    }
}

}   // namespace

/* Where the pattern of the device's rows is made: 1 on the device, 2 on
 * the host, 3 both (then compared: ilu_factor calls bsr_ilu_dsym_check).
 * BSR_ILU_DSYM=0 or BSR_ILU_DSYM_CHECK=1 (read once) say otherwise than 1. */
static int dsym_where(void)
{
    static int w = 0;
    if (!w) {
        const char *e = getenv("BSR_ILU_DSYM"), *c = getenv("BSR_ILU_DSYM_CHECK");
        w = c && atoi(c) == 1 ? 3 : e && atoi(e) == 0 ? 2 : 1;
    }
    return w;
}

extern "C" bsr_status bsr_gpu_ilut_rows(bsr_context *ctx, bsr_ilu *F, ilu_dev_counts *out)
{
    const int n = F->n, b = F->b, bb = b * b;
    /* without a cap a row's slot is unbounded: measured, rotconv3d's and
     * cfd3d's separator rows outgrew every workspace (bench/RESULTS.md) */
    if (F->mode != 1 || F->opt.cap == BSR_ILU_CAP_NONE || b < 1 || b > 10 || n < 1) return BSR_ERR_UNSUPPORTED;
    BSR_TRY(bsr_cuda_enter(ctx));
    cudaStream_t st = bsr_cuda_stream(ctx);
    const int nnz = F->ap[n];
    const int smax = b <= 5 ? 1024 : 512;
    size_t fr = 0, total = 0;
    if (cudaMemGetInfo(&fr, &total) != cudaSuccess) fr = 0;
    /* each row's upper slot: the pivot, A's upper blocks, P of U's fill, P of W */
    long long *uoff = (long long *)bsr_malloc(sizeof(long long) * ((size_t)n + 1), "device ILU rows");
    if (!uoff) return BSR_ERR_NOMEM;
    host_buf uoff_buf = {uoff};   /* kept: the columns come back in these slots */
    int *adiag = F->araw ? (int *)bsr_malloc(sizeof(int) * (size_t)n, "device ILU rows") : NULL;
    if (F->araw && !adiag) return BSR_ERR_NOMEM;
    host_buf adiag_buf = {adiag};
    const long long lcap = ilu_dev_slots(F, uoff, adiag);
    bsr_prof_mark("ilu factor: device rows: slots");
    thr_mem M = {};
    thr_args a = {};
    a.n = n;
    a.t1 = F->t1; a.t2 = F->t2; a.pivot_rel = F->pivot_rel; a.fill = F->opt.fill;
    a.strict = F->opt.strict_pivots; a.keep = F->opt.keep_pattern; a.capv = F->opt.cap;
    a.lcap = lcap;
    int dev = 0, nsm = 0;
    cudaGetDevice(&dev);
    cudaDeviceGetAttribute(&nsm, cudaDevAttrMultiProcessorCount, dev);
    /* every resident warp, each holding up to RMAX rows: rows are taken in
     * order, so the rows in flight are the window of the ordering that can
     * progress at once (in natural order a wavefront through a few grid
     * planes); the workspaces within a quarter of the free memory */
    enum { RMAX = 32 };   /* measured on an H200, stencil3d:100:4: 32, 48, 64 rows a warp gave kernels of 198, 201, 211 ms */
    int occ = thr_table[b - 1].occ(RMAX);
    if (occ < 1) occ = 1;
    int blocks = nsm * occ;
    const size_t wsc = (2 * 2 * (size_t)smax + 8 * (size_t)smax) * sizeof(int) +
                       ((size_t)smax * bb + 2 * (size_t)smax) * sizeof(double);   /* one row context */
    const size_t room = fr ? fr / 4 / wsc : (size_t)blocks * WARPS * RMAX;       /* contexts that fit */
    if ((size_t)blocks * WARPS > room) blocks = (int)(room / WARPS);
    if (blocks < 1) blocks = 1;
    if ((long long)blocks * WARPS > n) blocks = (n + WARPS - 1) / WARPS;
    long long nctx = (long long)(room / ((size_t)blocks * WARPS));
    if (nctx > RMAX) nctx = RMAX;
    if (nctx > (n + (long long)blocks * WARPS - 1) / ((long long)blocks * WARPS))
        nctx = (n + (long long)blocks * WARPS - 1) / ((long long)blocks * WARPS);
    /* rows in flight about 8% of the rows: a warp cycling over more rows than
     * the ordering can advance at once only delays the rows the others wait
     * for.  Measured on an H200 (bench/RESULTS.md), kernel seconds at 32 / 8 /
     * 2 / 1 rows a warp: rotconv3d:30,5 (27k rows) 0.137 / 0.129 / 0.118 /
     * 0.111, rotconv3d:40,4 (64k) 0.114 / 0.096 / 0.089 / 0.088, cfd3d:60,4,10
     * (216k) 0.098 / 0.091 / 0.165 / 0.241, stencil3d:100:4 (1M) 0.196 /
     * 0.293 / 0.605 / 0.801 */
    const long long want = (long long)(n / (12.5 * blocks * WARPS) + 0.5);
    if (nctx > want) nctx = want;
    a.nctx = nctx < 1 ? 1 : (int)nctx;
    a.smax = smax;
    const long long nw = (long long)blocks * WARPS * a.nctx, H = 2 * (long long)a.smax;   /* row contexts */
    bsr_status s = BSR_OK;
    int *ap = NULL, *ac = NULL;
    double *aval = NULL, *rowref = NULL;
    long long *duoff = NULL;
    if (!s) s = dalloc(M, &ap, (size_t)n + 1);
    if (!s) s = dalloc(M, &ac, (size_t)nnz);
    if (!s) s = dalloc(M, &aval, (size_t)nnz * bb);
    if (!s) s = dalloc(M, &rowref, (size_t)n);
    if (!s) s = dalloc(M, &duoff, (size_t)n + 1);
    if (!s) s = dalloc(M, &a.ucol, (size_t)uoff[n]);
    if (!s) s = dalloc(M, &a.uval, (size_t)uoff[n] * bb);
    if (!s) s = dalloc(M, &a.ucnt, (size_t)n);
    if (!s) s = dalloc(M, &a.lpool, (size_t)lcap);
    if (!s) s = dalloc(M, &a.ltop, 1);
    if (!s) s = dalloc(M, &a.loff, (size_t)n);
    if (!s) s = dalloc(M, &a.lcnt, 3 * (size_t)n);
    if (!s) s = dalloc(M, &a.done, (size_t)n + 1);
    if (!s) s = dalloc(M, &a.err, 1);
    if (!s) s = dalloc(M, &a.ovf, 1);
    if (!s) s = dalloc(M, &a.cnt, 5);
    if (!s) s = dalloc(M, &a.wsi, (size_t)(nw * (2 * H + 8 * (long long)a.smax)));
    if (!s) s = dalloc(M, &a.wsd, (size_t)(nw * ((long long)a.smax * bb + 2 * (long long)a.smax)));
    if (!s) s = bsr_cuda_h2d(ctx, ap, F->ap, sizeof(int) * ((size_t)n + 1));
    if (!s) s = bsr_cuda_h2d(ctx, ac, F->ac, sizeof(int) * (size_t)nnz);
    if (!s && F->araw) s = scale_on_device(ctx, M, F, adiag, ap, aval, rowref);
    else if (!s) s = bsr_cuda_h2d(ctx, aval, F->aval, sizeof(double) * (size_t)nnz * bb);
    if (!s && !F->araw) s = bsr_cuda_h2d(ctx, rowref, F->rowref, sizeof(double) * (size_t)n);
    if (!s) s = bsr_cuda_h2d(ctx, duoff, uoff, sizeof(long long) * ((size_t)n + 1));
    const long long utot = uoff[n];
    if (s) return s;
    a.ap = ap; a.ac = ac; a.aval = aval; a.rowref = rowref; a.uoff = duoff;
    CU_TRY(cudaMemsetAsync(a.done, 0, sizeof(int) * ((size_t)n + 1), st));
    CU_TRY(cudaMemsetAsync(a.ltop, 0, sizeof(unsigned long long), st));
    CU_TRY(cudaMemsetAsync(a.err, 0xff, sizeof(unsigned long long), st));
    CU_TRY(cudaMemsetAsync(a.ovf, 0, sizeof(int), st));
    CU_TRY(cudaMemsetAsync(a.cnt, 0, 5 * sizeof(unsigned long long), st));
    if (bsr_prof_on()) {
        CU_TRY(cudaStreamSynchronize(st));
        bsr_prof_mark("ilu factor: device rows: allocations, uploads, scaling");
    }
    thr_table[b - 1].launch(a, blocks, st);
    CU_LAUNCHED("ilut_rows");
    unsigned long long err = 0, cnt[5] = {0, 0, 0, 0, 0}, ltop = 0;
    int ovf = 0;
    CU_TRY(cudaMemcpyAsync(&err, a.err, sizeof err, cudaMemcpyDeviceToHost, st));
    CU_TRY(cudaMemcpyAsync(&ovf, a.ovf, sizeof ovf, cudaMemcpyDeviceToHost, st));
    CU_TRY(cudaMemcpyAsync(cnt, a.cnt, sizeof cnt, cudaMemcpyDeviceToHost, st));
    CU_TRY(cudaMemcpyAsync(&ltop, a.ltop, sizeof ltop, cudaMemcpyDeviceToHost, st));
    CU_TRY(cudaStreamSynchronize(st));
    bsr_prof_mark("ilu factor: device threshold rows (kernel)");
    if (err != ~0ull) {
        /* scaled here: the failing row's reference size, which the message names, is on the device */
        const int row = (int)(err >> 36);
        if (F->araw && F->rowref && row >= 0 && row < n)
            BSR_TRY(bsr_cuda_d2h(ctx, F->rowref + row, rowref + row, sizeof(double)));
        return thr_error(F, err);
    }
    if (ovf) {   /* a row outgrew its workspace: the host factors */
        bsr_prof_mark(ovf == 1 ? "ilu factor: device rows past their slots (host rows follow)"
                      : ovf == 2 ? "ilu factor: device rows past their upper slot (host rows follow)"
                                 : "ilu factor: device rows past the lower pool (host rows follow)");
        return BSR_ERR_UNSUPPORTED;
    }
    out->dropped = (int64_t)cnt[0];
    out->sec_used = (int64_t)cnt[1];
    out->wkept = (int64_t)cnt[2];
    out->nreg = (int)cnt[3];
    out->rmax = (int)cnt[4];
    const int where = dsym_where();
    if (where & 1) {   /* the pattern made here */
        const ilu_dev_rows_d r = {a.ucnt, a.ucol, duoff, a.lcnt, a.lpool, a.loff, ap, ac};
        BSR_TRY(bsr_ilut_dsym_build(ctx, F, &r));
        if (!(where & 2)) return BSR_OK;
    }
    /* the columns back, into rows that point into one buffer */
    int2 *ucnt = (int2 *)bsr_malloc(sizeof(int2) * (size_t)n, "device ILU rows");
    int *ucol = (int *)bsr_malloc(sizeof(int) * (size_t)utot, "device ILU rows");
    int *lcnt = (int *)bsr_malloc(sizeof(int) * 3 * (size_t)n, "device ILU rows");
    long long *loff = (long long *)bsr_malloc(sizeof(long long) * (size_t)n, "device ILU rows");
    int *lpool = (int *)bsr_malloc(sizeof(int) * ((size_t)ltop + 1), "device ILU rows");
    s = ucnt && ucol && lcnt && loff && lpool ? BSR_OK : BSR_ERR_NOMEM;
    if (!s) s = bsr_cuda_d2h(ctx, ucnt, a.ucnt, sizeof(int2) * (size_t)n);
    if (!s) s = bsr_cuda_d2h(ctx, ucol, a.ucol, sizeof(int) * (size_t)utot);
    if (!s) s = bsr_cuda_d2h(ctx, lcnt, a.lcnt, sizeof(int) * 3 * (size_t)n);
    if (!s) s = bsr_cuda_d2h(ctx, loff, a.loff, sizeof(long long) * (size_t)n);
    if (!s && ltop) s = bsr_cuda_d2h(ctx, lpool, a.lpool, sizeof(int) * (size_t)ltop);
    bsr_prof_mark("ilu factor: device rows: columns back");
    if (!s) {
        const ilu_dev_cols cols = {(const int *)ucnt, ucol, lcnt, lpool, uoff, loff};
        s = ilu_rows_from_dev(F, &cols);
    }
    free(ucnt); free(ucol); free(lcnt); free(loff); free(lpool);
    return s;
}
