#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""How much a system amplifies a residual into an error (bench/RESULTS.md).

    bsrsolve --gen coupled3d:40,4 --info --write /tmp/c40
    python3 bench/amplification.py /tmp/c40 [RTOL] [TRIALS]

PREFIX.mtx, PREFIX_rhs.mtx and PREFIX_xexact.mtx (bsrsolve --info --write)
are read; A is factored by SciPy's SuperLU (COLAMD; minutes and gigabytes
at 1e5 block rows).  Printed: the direct solve's error against the exact
solution, then, for TRIALS (default 3) random perturbations d with
||d|| = RTOL ||b|| (default 1e-8), the relative error of A^-1 (b + d): the
error of an exact solve of a system whose residual is a random vector at
the tolerance; and ||A^-1||_2 (30 steps of inverse iteration on A^T A) with
the worst case ||A^-1|| ||b|| / ||x||: the largest error a relative residual
of 1 can leave.  A solver stopping at relative residual RTOL cannot promise
an error below about RTOL times the random-residual figure; its residual's
direction decides where between that and the worst case it lands.
"""
import sys
import time

try:
    import numpy as np
    import scipy.io as sio
    import scipy.sparse.linalg as sla
except ImportError:
    sys.exit("amplification.py needs NumPy and SciPy (pip install scipy)")


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    prefix = sys.argv[1]
    rtol = float(sys.argv[2]) if len(sys.argv) > 2 else 1e-8
    trials = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    A = sio.mmread(prefix + ".mtx").tocsc()
    b = np.asarray(sio.mmread(prefix + "_rhs.mtx")).ravel()
    xs = np.asarray(sio.mmread(prefix + "_xexact.mtx")).ravel()
    nx, nb = np.linalg.norm(xs), np.linalg.norm(b)
    t = time.time()
    lu = sla.splu(A, permc_spec="COLAMD")
    print(f"{prefix}: n = {A.shape[0]}, nnz = {A.nnz}; SuperLU factor {time.time() - t:.1f} s")
    print(f"direct solve: error vs exact {np.linalg.norm(lu.solve(b) - xs) / nx:.2e}")
    rng = np.random.default_rng(1)
    for k in range(trials):
        d = rng.standard_normal(A.shape[0])
        d *= rtol * nb / np.linalg.norm(d)
        print(f"random residual {rtol:g} (trial {k + 1}): error {np.linalg.norm(lu.solve(d)) / nx:.2e}")
    v = rng.standard_normal(A.shape[0])
    v /= np.linalg.norm(v)
    s = 0.0
    for _ in range(30):
        w = lu.solve(lu.solve(v), trans="T")
        s = np.linalg.norm(w)
        v = w / s
    ninv = np.sqrt(s)
    print(f"||A^-1||_2 ~ {ninv:.3e}; worst case ||A^-1|| ||b|| / ||x|| ~ {ninv * nb / nx:.3e} "
          f"(an error up to {rtol * ninv * nb / nx:.1e} at relative residual {rtol:g})")


if __name__ == "__main__":
    main()
