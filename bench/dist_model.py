#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Model of a distributed BiCGStab + block-Jacobi ILU solve on p GPUs on
separate hosts, one rank per GPU (bench/RESULTS.md, "Distributed solves").

Per iteration a rank computes on its n = N/p block rows (time t_row * n,
t_row measured on one GPU) and communicates:
  - 2 halo exchanges (one per SpMM; 4 with overlap=1, one more per
    preconditioner application), each: for every neighbour one message
    (latency L), its ghost bytes over the link (bandwidth W), and on a
    non-CUDA-aware MPI the device <-> pinned host staging of the halo
    (bandwidth S each way);
  - R global reductions (BiCGStab with fused dots: 4), each a latency
    L_red * ceil(log2 p).
The halo is not assumed hidden behind the interior product (an upper bound:
the code overlaps it with the interior rows).

Ghost blocks per rank come from the real partition: the partition figures
measured by bsrsolve under mpiexec (ghosts per rank against rows per rank)
give a shape factor f = ghosts / (6 (n)^(2/3)) that is applied at scale (a
cube of n cells has 6 n^(2/3) face neighbours).

Iterations grow with p under block Jacobi; the measured counts are fitted
as its(p) = a + c * log2(p) and extrapolated.
"""
import argparse
import math


def halo_s(n, b, f, nbr, L, W, S, vbytes):
    ghosts = f * 6.0 * n ** (2.0 / 3.0)
    byt = ghosts * b * vbytes          # one direction; sends and receives overlap
    stage = 0.0 if S <= 0 else 2.0 * byt / S
    return nbr * L + byt / W + stage, byt


def fit_log(points):
    """Least-squares its = a + c log2 p over the measured (p, its)."""
    xs = [math.log2(p) for p, _ in points]
    ys = [i for _, i in points]
    m = len(xs)
    if m == 1:
        return ys[0], 0.0
    mx, my = sum(xs) / m, sum(ys) / m
    sxx = sum((x - mx) ** 2 for x in xs)
    c = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx if sxx > 0 else 0.0
    return my - c * mx, c


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cells", type=float, default=100e6, help="global block rows N (default 1e8)")
    ap.add_argument("--b", type=int, default=5)
    ap.add_argument("--t-row", type=float, required=True,
                    help="seconds per block row per iteration on one GPU (measured, same b)")
    ap.add_argument("--shape", type=float, default=1.0, help="ghosts / (6 n^(2/3)) of the real partition")
    ap.add_argument("--neighbours", type=int, default=6)
    ap.add_argument("--latency", type=float, default=5e-6, help="per message, s")
    ap.add_argument("--bandwidth", type=float, default=25e9, help="link, bytes/s per rank")
    ap.add_argument("--staging", type=float, default=25e9,
                    help="device<->host halo copies, bytes/s (0: CUDA-aware MPI, none)")
    ap.add_argument("--red-latency", type=float, default=3e-6, help="per allreduce stage, s")
    ap.add_argument("--reductions", type=int, default=4)
    ap.add_argument("--exchanges", type=int, default=2)
    ap.add_argument("--iters", default="", help="measured iterations 'p:its,p:its,...' (fit a + c log2 p)")
    ap.add_argument("--weak-rows", type=float, default=12.5e6, help="block rows per GPU for weak scaling")
    ap.add_argument("--gpus", default="8,64,512")
    a = ap.parse_args()

    pts = [tuple(map(float, t.split(":"))) for t in a.iters.split(",") if t]
    ia, ic = fit_log(pts) if pts else (1.0, 0.0)
    its = lambda p: ia + ic * math.log2(p)

    def per_iter(n, p):
        comp = a.t_row * n
        if p == 1:
            return comp, 0.0, 0.0
        h, byt = halo_s(n, a.b, a.shape, a.neighbours, a.latency, a.bandwidth, a.staging, 8)
        red = a.reductions * a.red_latency * math.ceil(math.log2(p))
        return comp, a.exchanges * h + red, byt

    gpus = [int(g) for g in a.gpus.split(",")]
    print(f"model: N = {a.cells:.3g} block rows, b = {a.b}, t_row = {a.t_row:.3g} s, shape factor {a.shape:.2f}, "
          f"{a.neighbours} neighbours, link {a.bandwidth / 1e9:.0f} GB/s + {a.latency * 1e6:.0f} us, staging "
          f"{'none' if a.staging <= 0 else f'{a.staging / 1e9:.0f} GB/s'}, {a.reductions} reductions x "
          f"{a.red_latency * 1e6:.0f} us x log2 p")
    if pts:
        print(f"iterations fitted: {ia:.1f} + {ic:.2f} log2 p (from {a.iters})")
    for title, nfun in (("strong", lambda p: a.cells / p), ("weak", lambda p: a.weak_rows)):
        print(f"\n{title} scaling ({'N fixed' if title == 'strong' else f'{a.weak_rows:.3g} rows per GPU'}):")
        print("| GPUs | rows/GPU | halo MB/exch | compute ms/it | comm ms/it | comm share | its | time to solution s | speed-up | efficiency |")
        print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        base = None
        for p in gpus:
            n = nfun(p)
            comp, comm, byt = per_iter(n, p)
            t = (comp + comm) * its(p)
            if base is None:
                base = t
            su = base / t if title == "strong" else None
            eff = (su / (p / gpus[0])) if title == "strong" else base / t
            sus = f"{su:.1f}" if su is not None else "-"
            print(f"| {p} | {n:.3g} | {byt / 1e6:.2f} | {comp * 1e3:.2f} | {comm * 1e3:.3f} | "
                  f"{comm / (comp + comm):.1%} | {its(p):.0f} | {t:.3g} | {sus} | {eff:.0%} |")


if __name__ == "__main__":
    main()
