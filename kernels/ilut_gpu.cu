/* SPDX-License-Identifier: BSD-3-Clause */
/* The threshold rows of ILUT / ILU2 on the device: the factorization that
 * chooses the pattern (src/ilu_row.c with the thresholds, dynamic fill and
 * the per-row cap), one warp a block row, sync-free.
 *
 * Warps take rows in increasing order by ticket and factor each in row (IKJ)
 * form, as the host does: row k of the scaled, permuted A in a sparse
 * accumulator (a hash of column -> slot and the slots' blocks, in a global
 * slice of the warp's own), its lower columns eliminated in ascending order,
 * each after the row it reads is published (its flag, acquire / release as
 * in sync_mm.cuh).  A row waits only for rows of smaller tickets, taken by
 * running warps: no deadlock.  Every block is formed by the host's arithmetic
 * in the host's order (this file is compiled without FMA contraction), each
 * target of an update by one lane, and new slots are numbered in lane order,
 * so the classes, the cap's choices and the pattern are the host's, and
 * deterministic.  A finished row publishes its inverse pivot, U and W
 * (columns ascending) in a slot sized by the cap (1 + A's upper blocks + 2P),
 * which is why the device needs a cap; its lower columns (L, R and the
 * capped-out class 2) go to a pool.  A row that outgrows its workspace, its
 * slot or the pool sends the whole factorization back to the host.  The host then builds the frozen pattern
 * from the columns (ilu_pattern_build): the values are factored into it by
 * the frozen numeric (kernels/ilu0_gpu.cu), which repeats this arithmetic. */
#include "ilu0_gpu.cuh"
#include <limits.h>

namespace {

enum { WARPS = 4 };   /* warps a CUDA block */

/* What the kernel reads and writes (device pointers unless said). */
struct thr_args {
    int n, smax;
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

/* Per-row cap: ilu_row_cap of src/ilu_row.c. */
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

/* The rank of candidate t among m (key descending, column ascending) of
 * those with sel[u] set. */
__device__ int cand_rank(int m, const double *key, const int *col, const int *flag, int want, int mask, int t)
{
    int r = 0;
    for (int u = 0; u < m; u++)
        if ((flag[u] & mask) == want && (key[u] > key[t] || (key[u] == key[t] && col[u] < col[t]))) r++;
    return r;
}

template <int B>
__global__ void __launch_bounds__(WARPS * 32) ilut_rows(thr_args a)
{
    constexpr int BB = B * B;
    const unsigned FULL = 0xffffffffu;
    const int lane = threadIdx.x & 31, wib = threadIdx.x >> 5;
    const long long gw = ((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    __shared__ double sh_l[WARPS][BB], sh_d[WARPS][BB];
    __shared__ int sh_t[WARPS][32];
    double *lb = sh_l[wib], *dv = sh_d[wib];
    int *tsl = sh_t[wib];
    const int S = a.smax, H = 2 * S;
    int *hkey = a.wsi + gw * (2 * (long long)H + 8 * (long long)S);
    int *hval = hkey + H, *scol = hval + H, *hpos = scol + S;
    int *lec = hpos + S, *lef = lec + S;      /* eliminated lower blocks: column, flags */
    int *ucc = lef + S, *ucf = ucc + S, *ucs = ucf + S, *pos = ucs + S;   /* upper candidates */
    double *sval = a.wsd + gw * ((long long)S * BB + 2 * (long long)S);
    double *lek = sval + (size_t)S * BB, *uck = lek + S;
    for (int h = lane; h < H; h += 32) hkey[h] = -1;
    __syncwarp();
    unsigned long long dropped = 0, secu = 0, wk = 0, nregs = 0, rpeak = 0;
    for (;;) {
        int k = 0;
        if (lane == 0) k = atomicAdd(a.done + a.n, 1);
        k = __shfl_sync(FULL, k, 0);
        if (k >= a.n) break;
        const int a0 = a.ap[k], lenA = a.ap[k + 1] - a0, na = a.keep ? lenA : 0;
        int status = 1, ovf = 0, ns = lenA;
        if (lenA + 1 > S) ovf = 1;   /* ovf: 1 the slots, 2 the row's upper slot, 3 the pool */
        /* A's row in slots 0..lenA-1, then the diagonal */
        int sd = -1;
        if (!ovf) {
            for (int p = lane; p < lenA; p += 32) {
                int j = a.ac[a0 + p], hp;
                hash_find(hkey, hval, H, j, &hp);
                hval[hp] = p; scol[p] = j; hpos[p] = hp;
                if (j == k) sd = p;
            }
            for (int e = lane; e < lenA * BB; e += 32) sval[e] = a.aval[(size_t)a0 * BB + e];
            unsigned bd = __ballot_sync(FULL, sd >= 0);
            sd = bd ? __shfl_sync(FULL, sd, __ffs(bd) - 1) : -1;
            if (sd < 0) {
                sd = ns++;
                if (lane == 0) {
                    int hp;
                    hash_find(hkey, hval, H, k, &hp);
                    hval[hp] = sd; scol[sd] = k; hpos[sd] = hp;
                }
                for (int e = lane; e < BB; e += 32) sval[(size_t)sd * BB + e] = 0.0;
            }
            __syncwarp();
        }
        /* elimination of the lower columns in ascending order */
        int nle = 0, last = -1, lfill = 0, tomb = 0;
        const int P = row_cap(a, lenA), lfmax = P < INT_MAX / 2 ? 2 * P : INT_MAX;   /* ilu_row's lower fill budget */
        unsigned long long rdrop = 0;
        while (!ovf && status == 1) {
            unsigned long long best = ~0ull;
            for (int s = lane; s < ns; s += 32) {
                int c = scol[s];
                if (c > last && c < k) {
                    unsigned long long v = ((unsigned long long)c << 32) | (unsigned)s;
                    best = v < best ? v : best;
                }
            }
            best = warp_min(best);
            if (best == ~0ull) break;
            const int i = (int)(best >> 32), si = (int)(best & 0xffffffffu);
            last = i;
            int di;
            while ((di = ld_acquire(a.done + i)) == 0) __nanosleep(100);   /* spare the working warps' issue slots */
            if (di == 2) { status = 3; break; }   /* skipped: no error of its own */
            const long long uo = a.uoff[i];
            const int2 uc = a.ucnt[i];
            const double *x = sval + (size_t)si * BB, *u0 = a.uval + (size_t)uo * BB;
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
                cls = !isfinite(nrm) ? -3 : nrm >= a.t1 || si < na ? 0 : nrm >= a.t2 ? 1 : 2;
                key = sumsq_serial<B>(lb);
            }
            cls = __shfl_sync(FULL, cls, 0);
            key = __shfl_sync(FULL, key, 0);
            if (cls == -3) {
                if (lane == 0) fail(a.err, k, E_LBLK, (unsigned)i);
                status = 2;
                break;
            }
            if (cls == 2) { rdrop++; continue; }
            if (lane == 0) { lec[nle] = i; lef[nle] = cls | (si >= lenA ? 2 : 0); lek[nle] = key; }
            nle++;
            const int qn = cls == 0 ? uc.x + uc.y : uc.x;
            for (int base = 1; base < qn && !ovf; base += 32) {
                const int q = base + lane, act = q < qn;
                int slot = -1, hp = -1;
                if (act) slot = hash_find(hkey, hval, H, a.ucol[uo + q], &hp);
                if (__any_sync(FULL, act && slot < 0 && hp < 0)) { ovf = 1; break; }
                /* lower fill past the budget: dropped unformed (host: ilu_row's lfill) */
                const unsigned low = __ballot_sync(FULL, act && slot < 0 && a.ucol[uo + q] < k);
                const int room = lfmax - lfill, lrank = __popc(low & ((1u << lane) - 1));
                const int skip = ((low >> lane) & 1) && lrank >= (room > 0 ? room : 0);
                lfill = lfill + __popc(low) < lfmax ? lfill + __popc(low) : lfmax;
                if (skip) { hval[hp] = -1; tomb = 1; }   /* known absent for the rest of the row */
                const unsigned need = __ballot_sync(FULL, act && slot < 0 && !skip);
                if (ns + __popc(need) > S) { ovf = 1; break; }
                if (act && slot < 0 && !skip) {
                    slot = ns + __popc(need & ((1u << lane) - 1));
                    hval[hp] = slot; scol[slot] = a.ucol[uo + q]; hpos[slot] = hp;
                    for (int e = 0; e < BB; e++) sval[(size_t)slot * BB + e] = 0.0;
                }
                ns += __popc(need);
                tsl[lane] = act && !skip ? slot : -1;
                __syncwarp();
                const int nact = min(32, qn - base);
                for (int t = lane; t < nact * BB; t += 32) {
                    const int qq = t / BB, e = t % BB, r = e / B, c = e % B;
                    if (tsl[qq] < 0) continue;
                    const double *v = a.uval + (size_t)(uo + base + qq) * BB;
                    double *tg = sval + (size_t)tsl[qq] * BB;
                    double y = tg[e];
                    for (int m = 0; m < B; m++) y -= lb[r * B + m] * v[m * B + c];
                    tg[e] = y;
                }
                __syncwarp();
            }
        }
        /* the pivot */
        if (!ovf && status == 1) {
            int bad = 0;
            if (lane == 0) {
                const double *d = sval + (size_t)sd * BB;
                if (!blk_finite<B>(d)) { fail(a.err, k, E_PIV, 0); bad = 1; }
                else {
                    double lu[BB];
                    int piv[B];
                    for (int e = 0; e < BB; e++) lu[e] = d[e];
                    const int nreg = blk_lu<B>(lu, piv, a.pivot_rel * a.rowref[k]);
                    if (nreg && a.strict) { fail(a.err, k, E_STRICT, (unsigned)nreg); bad = 1; }
                    else {
                        nregs += nreg != 0;
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
            int m = 0;
            for (int t = 0; t < nle; t++) m += (lef[t] & 3) == 2;
            if (m > P)
                for (int t = lane; t < nle; t += 32)
                    if ((lef[t] & 3) == 2 && cand_rank(nle, lek, lec, lef, 2, 3, t) >= P) lef[t] |= 4;
            __syncwarp();
        }
        /* the upper blocks: classes by the norm of d_k^{-1} z */
        int m = 0;
        if (!ovf && status == 1) {
            int bad = 0;
            for (int base = 0; base < ns; base += 32) {
                const int s = base + lane;
                int cls = -1;
                double key = 0.0;
                if (s < ns && scol[s] > k) {
                    double y[BB];
                    blk_mul<B>(y, dv, sval + (size_t)s * BB);
                    double nrm = blk_fnorm<B>(y);
                    cls = !isfinite(nrm) ? -3 : nrm >= a.t1 || s < na ? 0 : nrm >= a.t2 ? 1 : 2;
                    key = sumsq_serial<B>(y);
                }
                const unsigned nf = __ballot_sync(FULL, cls == -3);
                if (nf) {   /* the smallest such column, as the host's loop over slots finds first */
                    if (lane == __ffs(nf) - 1) fail(a.err, k, E_UBLK, (unsigned)scol[s]);
                    bad = 1;
                    break;
                }
                rdrop += __popc(__ballot_sync(FULL, cls == 2));
                const unsigned keep = __ballot_sync(FULL, cls == 0 || cls == 1);
                if (cls == 0 || cls == 1) {
                    const int at = m + __popc(keep & ((1u << lane) - 1));
                    ucc[at] = scol[s]; ucs[at] = s; ucf[at] = cls | (s >= lenA ? 2 : 0); uck[at] = key;
                }
                m += __popc(keep);
            }
            if (bad) status = 2;
            __syncwarp();
        }
        int nu = 0, nw = 0;
        if (!ovf && status == 1) {
            /* U's fill past P becomes W, then W keeps its P largest */
            int mu = 0;
            for (int t = 0; t < m; t++) mu += (ucf[t] & 3) == 2;
            if (mu > P) {
                for (int t = lane; t < m; t += 32)
                    pos[t] = (ucf[t] & 3) == 2 && cand_rank(m, uck, ucc, ucf, 2, 3, t) >= P;
                __syncwarp();
                for (int t = lane; t < m; t += 32) if (pos[t]) ucf[t] |= 1;
                __syncwarp();
            }
            int mw = 0;
            for (int t = 0; t < m; t++) mw += ucf[t] & 1;
            if (mw > P) {
                for (int t = lane; t < m; t += 32) pos[t] = (ucf[t] & 1) && cand_rank(m, uck, ucc, ucf, 1, 1, t) >= P;
                __syncwarp();
                for (int t = lane; t < m; t += 32) if (pos[t]) ucf[t] = 8;   /* dropped */
                __syncwarp();
                rdrop += mw - P;
            }
            for (int t = 0; t < m; t++) { nu += ucf[t] == 0 || ucf[t] == 2; nw += ucf[t] == 1 || ucf[t] == 3; }
            /* publish: the inverse pivot, U then W, columns ascending */
            const long long uo = a.uoff[k];
            if (1 + nu + nw > a.uoff[k + 1] - uo) ovf = 2;
            else {
                for (int t = lane; t < m; t += 32) {
                    const int f = ucf[t];
                    if (f == 8) continue;
                    const int w = f & 1;
                    int at = 0;
                    for (int u = 0; u < m; u++) at += (ucf[u] != 8) && (ucf[u] & 1) == w && ucc[u] < ucc[t];
                    at += 1 + (w ? nu : 0);
                    a.ucol[uo + at] = ucc[t];
                    const double *z = sval + (size_t)ucs[t] * BB;
                    double *o = a.uval + (size_t)(uo + at) * BB;
                    for (int e = 0; e < BB; e++) o[e] = z[e];
                }
                for (int e = lane; e < BB; e += 32) a.uval[(size_t)uo * BB + e] = dv[e];
                if (lane == 0) { a.ucol[uo] = k; a.ucnt[k] = make_int2(1 + nu, nw); }
            }
        }
        /* the lower columns: L, R, class 2 (each ascending: the elimination's order) */
        if (!ovf && status == 1) {
            int nl = 0, nr = 0, nx = 0;
            for (int t = 0; t < nle; t++) {
                const int f = lef[t];
                nl += !(f & 1) && !(f & 4); nr += f & 1; nx += (f & 4) != 0;
            }
            long long off = 0;
            if (lane == 0) off = (long long)atomicAdd(a.ltop, (unsigned long long)(nl + nr + nx));
            off = __shfl_sync(FULL, off, 0);
            if (off + nl + nr + nx > a.lcap) ovf = 3;
            else {
                if (lane == 0) {
                    int il = 0, ir = 0, ix = 0;
                    for (int t = 0; t < nle; t++) {
                        const int f = lef[t];
                        if (f & 4) a.lpool[off + nl + nr + ix++] = lec[t];
                        else if (f & 1) a.lpool[off + nl + ir++] = lec[t];
                        else a.lpool[off + il++] = lec[t];
                    }
                    a.loff[k] = off;
                    a.lcnt[3 * (size_t)k] = nl; a.lcnt[3 * (size_t)k + 1] = nr; a.lcnt[3 * (size_t)k + 2] = nx;
                }
                dropped += rdrop;
                secu += nr + nw;
                wk += nw;
                if ((unsigned long long)nr > rpeak) rpeak = nr;
            }
        }
        if (ovf || __any_sync(FULL, tomb)) {   /* the table may hold stray claims or tombstones */
            if (ovf && lane == 0) atomicMax(a.ovf, ovf);
            if (ovf) status = 2;
            for (int h = lane; h < H; h += 32) hkey[h] = -1;
        } else {
            for (int s = lane; s < ns; s += 32) hkey[hpos[s]] = -1;
        }
        __syncwarp();   /* every lane's writes of row k, before its flag (cumulative release) */
        if (lane == 0) st_release(a.done + k, status == 1 ? 1 : 2);
    }
    if (lane == 0) {
        atomicAdd(&a.cnt[0], dropped);
        atomicAdd(&a.cnt[1], secu);
        atomicAdd(&a.cnt[2], wk);
        atomicAdd(&a.cnt[3], nregs);
        atomicMax(&a.cnt[4], rpeak);
    }
}

template <int B> void launch(const thr_args &a, int blocks, cudaStream_t st)
{
    ilut_rows<B><<<blocks, WARPS * 32, 0, st>>>(a);
}

template <int B> int occupancy(void)
{
    int nb = 0;
    cudaOccupancyMaxActiveBlocksPerMultiprocessor(&nb, ilut_rows<B>, WARPS * 32, 0);
    return nb;
}

typedef void (*launch_fn)(const thr_args &, int, cudaStream_t);
typedef int (*occ_fn)(void);
#define THR_ROW(B) {launch<B>, occupancy<B>},
const struct { launch_fn launch; occ_fn occ; } thr_table[] = {BSR_FOR_EACH_B(THR_ROW)};
#undef THR_ROW

/* A host allocation freed when the run returns, on every path. */
struct host_buf {
    void *p;
    ~host_buf() { free(p); }
};

/* Device allocations of one run, freed together. */
struct thr_mem {
    void *p[24];
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

/* Fill blocks of U and of W that row k's upper slot holds: its cap, no more
 * than the workspace can fill. */
long long slot_fill(const bsr_ilu *F, int k)
{
    const long long P = ilu_row_cap(F, k), len = F->ap[k + 1] - F->ap[k];
    return P < len + 64 ? P : len + 64;
}

}   // namespace

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
    long long lcap = 0;
    uoff[0] = 0;
    for (int k = 0; k < n; k++) {
        int nau = 0, len = F->ap[k + 1] - F->ap[k];
        for (int p = F->ap[k]; p < F->ap[k + 1]; p++) nau += F->ac[p] > k;
        const long long P = slot_fill(F, k);
        uoff[k + 1] = uoff[k] + 1 + nau + 2 * P;
        lcap += 2 * len + 8 * P + 16;
    }
    thr_mem M = {};
    thr_args a = {};
    a.n = n;
    a.t1 = F->t1; a.t2 = F->t2; a.pivot_rel = F->pivot_rel; a.fill = F->opt.fill;
    a.strict = F->opt.strict_pivots; a.keep = F->opt.keep_pattern; a.capv = F->opt.cap;
    a.lcap = lcap;
    int dev = 0, nsm = 0;
    cudaGetDevice(&dev);
    cudaDeviceGetAttribute(&nsm, cudaDevAttrMultiProcessorCount, dev);
    int occ = thr_table[b - 1].occ();
    if (occ < 1) occ = 1;
    /* every resident warp: rows are taken in order, so the warps in flight
     * are the window of rows that can progress (in natural order a few
     * grid lines of a wavefront); the workspaces within a quarter of memory */
    int blocks = nsm * occ;
    const size_t ws = (size_t)WARPS * ((2 * 2 * (size_t)smax + 8 * (size_t)smax) * sizeof(int) +
                                       ((size_t)smax * bb + 2 * (size_t)smax) * sizeof(double));
    if (fr && (size_t)blocks * ws > fr / 4) blocks = (int)(fr / 4 / ws);
    if (blocks < 1) blocks = 1;
    if ((long long)blocks * WARPS > n) blocks = (n + WARPS - 1) / WARPS;
    a.smax = smax;
    const long long nw = (long long)blocks * WARPS, H = 2 * (long long)a.smax;
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
    if (!s) s = bsr_cuda_h2d(ctx, aval, F->aval, sizeof(double) * (size_t)nnz * bb);
    if (!s) s = bsr_cuda_h2d(ctx, rowref, F->rowref, sizeof(double) * (size_t)n);
    if (!s) s = bsr_cuda_h2d(ctx, duoff, uoff, sizeof(long long) * ((size_t)n + 1));
    const long long utot = uoff[n];
    if (s) return s;
    a.ap = ap; a.ac = ac; a.aval = aval; a.rowref = rowref; a.uoff = duoff;
    CU_TRY(cudaMemsetAsync(a.done, 0, sizeof(int) * ((size_t)n + 1), st));
    CU_TRY(cudaMemsetAsync(a.ltop, 0, sizeof(unsigned long long), st));
    CU_TRY(cudaMemsetAsync(a.err, 0xff, sizeof(unsigned long long), st));
    CU_TRY(cudaMemsetAsync(a.ovf, 0, sizeof(int), st));
    CU_TRY(cudaMemsetAsync(a.cnt, 0, 5 * sizeof(unsigned long long), st));
    thr_table[b - 1].launch(a, blocks, st);
    CU_LAUNCHED("ilut_rows");
    unsigned long long err = 0, cnt[5] = {0, 0, 0, 0, 0}, ltop = 0;
    int ovf = 0;
    CU_TRY(cudaMemcpyAsync(&err, a.err, sizeof err, cudaMemcpyDeviceToHost, st));
    CU_TRY(cudaMemcpyAsync(&ovf, a.ovf, sizeof ovf, cudaMemcpyDeviceToHost, st));
    CU_TRY(cudaMemcpyAsync(cnt, a.cnt, sizeof cnt, cudaMemcpyDeviceToHost, st));
    CU_TRY(cudaMemcpyAsync(&ltop, a.ltop, sizeof ltop, cudaMemcpyDeviceToHost, st));
    CU_TRY(cudaStreamSynchronize(st));
    bsr_prof_mark("ilu factor: device threshold rows");
    if (err != ~0ull) return thr_error(F, err);
    if (ovf) {   /* a row outgrew its workspace: the host factors */
        bsr_prof_mark(ovf == 1 ? "ilu factor: device rows past their slots (host rows follow)"
                      : ovf == 2 ? "ilu factor: device rows past their upper slot (host rows follow)"
                                 : "ilu factor: device rows past the lower pool (host rows follow)");
        return BSR_ERR_UNSUPPORTED;
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
    if (!s && !F->rows && !(F->rows = (ilu_row_t *)bsr_calloc((size_t)n, sizeof(ilu_row_t), "ILU rows")))
        s = BSR_ERR_NOMEM;
    size_t tot = 0;
    if (!s) {
        for (int k = 0; k < n; k++)
            tot += (size_t)lcnt[3 * k] + lcnt[3 * k + 1] + lcnt[3 * k + 2] + ucnt[k].x + ucnt[k].y;
        free(F->rowbuf);
        if (!(F->rowbuf = (int *)bsr_malloc(sizeof(int) * (tot + 1), "ILU rows"))) s = BSR_ERR_NOMEM;
    }
    if (!s) {
        int *c = F->rowbuf;
        for (int k = 0; k < n; k++) {
            ilu_row_t *r = &F->rows[k];
            r->nl = lcnt[3 * k]; r->nr = lcnt[3 * k + 1]; r->nx = lcnt[3 * k + 2];
            r->nu = ucnt[k].x; r->nw = ucnt[k].y;
            r->lval = r->uval = NULL;
            r->own = 0;
            const int nlo = r->nl + r->nr + r->nx, nup = r->nu + r->nw;
            memcpy(c, lpool + loff[k], sizeof(int) * (size_t)nlo);
            r->lcol = c; r->rcol = c + r->nl; r->xcol = c + r->nl + r->nr;
            c += nlo;
            memcpy(c, ucol + uoff[k], sizeof(int) * (size_t)nup);
            r->ucol = c;
            c += nup;
        }
        out->dropped = (int64_t)cnt[0];
        out->sec_used = (int64_t)cnt[1];
        out->wkept = (int64_t)cnt[2];
        out->nreg = (int)cnt[3];
        out->rmax = (int)cnt[4];
    }
    free(ucnt); free(ucol); free(lcnt); free(loff); free(lpool);
    return s;
}
