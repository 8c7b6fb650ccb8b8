# SPDX-License-Identifier: BSD-3-Clause
"""Where the natural-order triangular solve spends a level (issue 6 diagnostic).

Apply bench/diag/trsv_trace.patch (git apply), build with CUDA, then on the GPU:
  BSR_TRSV_TRACE=/tmp/L.bin bsrsolve bench trsv --gen stencil3d:G:4 --k 1 --orders natural \
      --kernels level-syncfree --reps 3
  python3 bench/diag/trsv_trace.py /tmp/L.bin G
The patched pipelined kernel records, for every row of the L solve, when its data was loaded,
when its team began polling it and when it was stored (%globaltimer, ns).  The script maps rows
to the stencil's levels (i + j + k) and dependencies (i-1, j-1, k-1) and prints the row latency
after its last dependency was stored, the share of rows whose team reached them only after
their dependencies were done, and per-level completion times.  Revert the patch afterwards:
it adds a load and branches to the solve.
"""
import sys, numpy as np
f = open(sys.argv[1], 'rb'); G = int(sys.argv[2])
n = int(np.frombuffer(f.read(4), np.int32)[0])
rows = np.frombuffer(f.read(4 * n), np.int32)
t = np.frombuffer(f.read(8 * 3 * n), np.uint64).reshape(n, 3).astype(np.int64)
ok = t[:, 2] > 0
print("n", n, "traced", ok.sum())
t0 = t[ok][:, 1].min()
tl, ts, td = (t[:, 0] - t0), (t[:, 1] - t0), (t[:, 2] - t0)
d = np.diff(np.unique(td[ok])); print("globaltimer: smallest positive steps (ns)", np.unique(d[d > 0])[:8])
r = rows.astype(np.int64); i = r % G; j = (r // G) % G; k = r // (G * G); lev = i + j + k
done = np.zeros(n, np.int64); done[r] = td          # by row index
start = np.zeros(n, np.int64); start[r] = ts
dep = np.full(n, -1, np.int64)
for cond, off in ((i > 0, 1), (j > 0, G), (k > 0, G * G)):
    m = cond
    dep[m] = np.maximum(dep[m], done[r[m] - off])
has = dep >= 0
lag = td - dep; late = ts - dep
print("total L time (us) %.1f, levels %d, per level %.2f us" % (td.max() / 1e3, lev.max() + 1, td.max() / 1e3 / (lev.max() + 1)))
print("row latency after last dep done (us): median %.2f  p10 %.2f  p90 %.2f" % tuple(np.percentile(lag[has], [50, 10, 90]) / 1e3))
print("rows that began polling after their deps were done: %.1f%%, by (median) %.2f us" % (100 * (late[has] > 0).mean(), np.median(late[has][late[has] > 0]) / 1e3))
print("poll start -> done (us): median %.2f ; load -> poll start median %.2f" % (np.median((td - ts)[ok]) / 1e3, np.median((ts - tl)[ok & (tl > -t0)]) / 1e3))
L = lev.max() + 1
mx = np.array([td[lev == l].max() for l in range(L)]); md = np.array([np.median(td[lev == l]) for l in range(L)])
mn = np.array([td[lev == l].min() for l in range(L)]); w = np.bincount(lev)
for l in list(range(0, 6)) + list(range(L // 2 - 4, L // 2 + 4)) + list(range(L - 4, L)):
    print("level %3d width %5d  done min %8.2f med %8.2f max %8.2f us  (max step %.2f)" % (l, w[l], mn[l] / 1e3, md[l] / 1e3, mx[l] / 1e3, (mx[l] - mx[l - 1]) / 1e3 if l else 0))
# where the critical path goes: chain of the latest dep
print("median of (done max of level l) - (done max of level l-1) over middle levels: %.2f us" % (np.median(np.diff(mx)[L // 5:4 * L // 5]) / 1e3))
print("median over rows of the spread within a level (max - min) middle: %.2f us" % (np.median((mx - mn)[L // 5:4 * L // 5]) / 1e3))
