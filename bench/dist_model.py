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

--measured RUNS.jsonl (bench/dist_halo.sh's runs.jsonl, or a file of the
same fields) fits the model to one machine instead: t_row from the 1-rank
runs (time an iteration over block rows, scaled by (b / b_measured)^2 to
the model's b: the product and the solves move b^2 values a block), and
the cost of one halo exchange (latency; its bytes are small on NVLink)
from the multi-rank runs of one halo path (--path, default ipc): their
halo seconds over iterations and exchanges.  Only the runs of the model's
own solve are fitted (ILU(0), no overlap: dist_halo.sh's weak and strong
cases); the others in the file (ILU2's hard cases) are left out.  It then
prints each measured run next to the model's time an iteration, the upper
bound (halo not hidden) and the lower one (hidden behind the interior
product), before the predictions.
"""
import json
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


def run_figures(r):
    """(ranks, block rows, b, iterations, seconds an iteration, halo seconds) of one run."""
    its = max(r["iterations"]) if isinstance(r.get("iterations"), list) else r.get("iterations", 0)
    tpi = r.get("time_per_iteration_s", r["solve_s"] / max(its, 1))
    return (r.get("nranks", r.get("ranks", 1)), r["block_rows"], r["block"], its, tpi,
            r.get("comm", {}).get("halo_s_max", 0.0))


def median(v):
    v = sorted(v)
    return v[len(v) // 2] if len(v) % 2 else 0.5 * (v[len(v) // 2 - 1] + v[len(v) // 2])


def model_config(cfg):
    """True when a run's --config is the model's solve: block-Jacobi ILU(0)."""
    kv = dict(t.split("=", 1) for t in cfg.split(",") if "=" in t)
    return kv.get("precond") == "ilu0" and kv.get("overlap", "0") == "0"


def fit_measured(a):
    """Set a.t_row and a.latency (bandwidth: the halo's fixed cost dominates
    on NVLink) from measured runs; print each run against the model."""
    runs = [json.loads(l) for l in open(a.measured) if l.strip()]
    runs = [r for r in runs if "solve_s" in r and r.get("exit", 0) == 0 and model_config(r.get("cfg", "precond=ilu0"))]
    one = [run_figures(r) for r in runs if r.get("nranks", 1) == 1]
    many = [(r, run_figures(r)) for r in runs if r.get("nranks", 1) > 1 and r.get("halo_path", a.path) == a.path]
    if not one or not many:
        raise SystemExit("dist_model.py: --measured needs 1-rank runs and multi-rank runs of halo path " + a.path)
    bm = one[0][2]
    t_row = median([tpi / rows for _, rows, _, _, tpi, _ in one])
    per_exch = median([h / max(its, 1) / a.exchanges for _, (_, _, _, its, _, h) in many])
    a.t_row = t_row * (a.b / bm) ** 2
    a.latency, a.bandwidth, a.staging = per_exch / max(a.neighbours, 1), 1e30, 0.0
    print(f"fitted on {a.measured}: t_row {t_row:.3g} s (b = {bm}; {a.t_row:.3g} s at b = {a.b}), "
          f"one halo exchange {per_exch * 1e3:.3f} ms ({a.path}; {len(many)} runs)")
    print("| run | ranks | rows/rank | measured ms/it | model, halo not hidden | model, halo hidden |")
    print("|---|---:|---:|---:|---:|---:|")
    for r in runs:
        p, rows, _, its, tpi, _ = run_figures(r)
        comp = t_row * rows / p
        comm = 0.0 if p == 1 else a.exchanges * per_exch + a.reductions * a.red_latency * math.ceil(math.log2(p))
        print(f"| {r.get('name', '?')} | {p} | {rows / p:.3g} | {tpi * 1e3:.2f} | {(comp + comm) * 1e3:.2f} | "
              f"{max(comp, comm) * 1e3:.2f} |")
    print("(a cost fitted on one host's NVLink: past 8 GPUs the ranks span hosts, whose links it does not measure)")
    print()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cells", type=float, default=100e6, help="global block rows N (default 1e8)")
    ap.add_argument("--b", type=int, default=5)
    ap.add_argument("--t-row", type=float, default=0.0,
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
    ap.add_argument("--measured", default="", help="runs.jsonl of bench/dist_halo.sh: fit t_row and the halo cost")
    ap.add_argument("--path", default="ipc", help="the halo path whose runs fit the halo cost (--measured)")
    a = ap.parse_args()
    if a.measured:
        fit_measured(a)
    if a.t_row <= 0:
        raise SystemExit("dist_model.py: --t-row (or --measured) is needed")

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
          f"{a.neighbours} neighbours, link {'latency-bound' if a.bandwidth >= 1e29 else f'{a.bandwidth / 1e9:.0f} GB/s'} + {a.latency * 1e6:.0f} us, staging "
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
