#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Robustness table over real matrices (issue 21; bench/RESULTS.md).

    python3 bench/robustness.py CLI [DIR] > table.md

For every DIR/*.mtx (default ../shared/matrices/real; a NAME_rhs.mtx beside
NAME.mtx is its right-hand side, else ones): ILU(0), ILUT(1e-2) and ILU2(1e-2)
without matching, ILU2 with match=auto and match=mpt, each with BiCGStab and,
where BiCGStab does not converge, GMRES(50), rtol 1e-8, on the CPU backend of
the bsrsolve CLI; and SciPy's spilu (SuperLU ILUTP, drop_tol 1e-4, fill_factor
10) + GMRES(50) on the same matrix and right-hand side (skipped with a message
when SciPy is absent); ROBUST_ONLY="ILU2 auto,SciPy" runs just those columns.  A cell: iterations (g: by GMRES), fill, setup + solve
seconds; "-" when nothing converged; "f 4e-08": converged at the rounding
floor (the true residual, above rtol, within eps*|| |A||x| + |b| ||).
"""
import glob
import json
import os
import subprocess
import sys
import time

CONFIGS = [("ILU(0)", "precond=ilu0"),
           ("ILUT", "precond=ilut,tau1=0.01"),
           ("ILU2", "precond=ilu2,tau1=0.01,match=none"),
           ("ILU2 auto", "precond=ilu2,tau1=0.01,match=auto"),
           ("ILU2 mpt", "precond=ilu2,tau1=0.01,match=mpt")]
METHODS = [("", "method=bicgstab"), ("g", "method=gmres,restart=50")]


def run_cli(cli, path, rhs, cfg):
    """The first method that converges: (mark, json) or (None, last json)."""
    last = None
    for mark, meth in METHODS:
        cmd = [cli, path, "--backend", "cpu", "--rhs", rhs, "--json",
               "--config", f"{cfg},{meth},rtol=1e-8,maxit=1000"]
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
        try:
            r = json.loads(p.stdout)
        except ValueError:
            r = {"result": (p.stderr.strip().splitlines() or ["failed"])[-1]}
        last = r
        if p.returncode == 0:
            return mark, r
    return None, last


def cell(mark, r):
    if mark is None:
        return "-"
    if r.get("at_rounding_floor", [False])[0]:  # converged at the rounding floor: say how far
        mark += f"f {r['true_relres'][0]:.0e}"
    return f"{r['iterations'][0]}{mark} (fill {r['fill']:.2f}, {r['setup_s']:.2f}+{r['solve_s']:.2f} s)"


def scipy_cell(path, rhs_path):
    try:
        import numpy as np
        import scipy.io
        import scipy.sparse.linalg as sla
    except ImportError:
        return "scipy absent"
    A = scipy.io.mmread(path).tocsc()
    n = A.shape[0]
    b = np.ones(n) if rhs_path == "ones" else np.asarray(scipy.io.mmread(rhs_path)).reshape(n, -1)[:, 0]
    t0 = time.perf_counter()
    try:
        ilu = sla.spilu(A, drop_tol=1e-4, fill_factor=10)
    except RuntimeError as e:
        return f"spilu failed ({str(e)[:30]})"
    t1 = time.perf_counter()
    M = sla.LinearOperator(A.shape, ilu.solve)
    its = [0]

    def count(_):
        its[0] += 1

    kw = {"rtol": 1e-8} if "rtol" in sla.gmres.__code__.co_varnames else {"tol": 1e-8}
    x, info = sla.gmres(A, b, M=M, restart=50, maxiter=20, callback=count, callback_type="pr_norm", **kw)
    t2 = time.perf_counter()
    rel = np.linalg.norm(b - A @ x) / np.linalg.norm(b)
    fill = (ilu.L.nnz + ilu.U.nnz - n) / A.nnz
    if info != 0 or not rel <= 1e-7:
        return f"- (relres {rel:.1e})"
    return f"{its[0]}g (fill {fill:.2f}, {t1 - t0:.2f}+{t2 - t1:.2f} s)"


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    cli = sys.argv[1]
    d = sys.argv[2] if len(sys.argv) > 2 else os.path.join(os.path.dirname(__file__), "..", "..", "shared",
                                                            "matrices", "real")
    files = sorted(f for f in glob.glob(os.path.join(d, "*.mtx")) if not f.endswith("_rhs.mtx"))
    # ROBUST_ONLY="ILU2 auto,ILU2": just those columns (a rerun after a change to one of them)
    only = [c for c in os.environ.get("ROBUST_ONLY", "").split(",") if c]
    configs = [c for c in CONFIGS if not only or c[0] in only]
    scipy_on = not only or "SciPy" in only
    head = ["matrix"] + [c for c, _ in configs] + (["SciPy spilu + GMRES(50)"] if scipy_on else [])
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    won = {c: 0 for c, _ in configs}
    for f in files:
        rhs = f[:-4] + "_rhs.mtx"
        rhs = rhs if os.path.exists(rhs) else "ones"
        cells = []
        for name, cfg in configs:
            mark, r = run_cli(cli, f, rhs, cfg)
            won[name] += mark is not None
            cells.append(cell(mark, r))
        if scipy_on:
            cells.append(scipy_cell(f, rhs))
        print(f"| {os.path.basename(f)[:-4]} | " + " | ".join(cells) + " |", flush=True)
    print("\nconverged: " + ", ".join(f"{k} {v}/{len(files)}" for k, v in won.items()))


if __name__ == "__main__":
    main()
