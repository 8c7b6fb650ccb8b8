#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""A probe for the indefinite coupled systems of coupled3d: does GMRES with
deflated restarting (GMRES-DR(m, k), Morgan 2002) get past the stall of
restarted GMRES with the device's capped ILU2 (cap=auto, RCM, factored here on
the host)?  A stall of restarted GMRES that full GMRES does not have points
at a few small eigenvalues of the preconditioned operator, which each restart
forgets; GMRES-DR keeps the k harmonic Ritz vectors of the smallest ones from
cycle to cycle.  Not a solver.

    bsrsolve --gen coupled3d:60,5,couple=0.3 --info --write PREFIX
    python3 bench/gmresdr_probe.py PREFIX B M:K [M:K ...]

B the block size, M:K a cycle of M vectors keeping K (K = 0: GMRES(M)).
Right preconditioning, rtol 1e-8 on the true residual, 1000 products at
most: products, relative residual, error against PREFIX_xexact.mtx,
seconds.  Needs the bsrsolve Python package (PYTHONPATH, or pip install
python/)."""
import sys
import time
import numpy as np
import scipy.linalg as la
import bsrsolve
import cube_system


def harmonic(H, k):
    """The (m+1) x k real basis of the harmonic Ritz vectors of the k smallest
    harmonic Ritz values of Hbar (m+1 x m), a complex pair split into its
    real and imaginary parts (k grows by one where a pair would be cut)."""
    m = H.shape[1]
    f = la.solve(H[:m, :m].T, np.eye(m)[:, m - 1])
    G = H[:m, :m] + H[m, m - 1] ** 2 * np.outer(f, np.eye(m)[m - 1])
    th, g = la.eig(G)
    order = np.argsort(np.abs(th))
    cols, i = [], 0
    while len(cols) < k and i < m:
        v = g[:, order[i]]
        if abs(th[order[i]].imag) > 1e-14 * abs(th[order[i]]):
            cols += [v.real, v.imag]
            i += 2   # the conjugate follows in the order of |theta|
        else:
            cols.append(v.real)
            i += 1
    P = np.zeros((m + 1, len(cols)))
    P[:m] = np.array(cols).T
    return P


def gmresdr(A, M, rhs, m, k, rtol=1e-8, maxp=1000):
    """x, products, relres history: right-preconditioned GMRES-DR(m, k)."""
    n = rhs.size
    x = np.zeros(n)
    nb = np.linalg.norm(rhs)
    r = rhs.copy()
    V = np.zeros((n, m + 1))
    H = np.zeros((m + 1, m))
    beta = np.linalg.norm(r)
    V[:, 0] = r / beta
    c = np.zeros(m + 1)
    c[0] = beta
    j0, prods, hist = 0, 0, []
    while True:
        for j in range(j0, m):
            w = A @ (M @ V[:, j])
            prods += 1
            for _ in range(2):   # CGS2
                h = V[:, :j + 1].T @ w
                w -= V[:, :j + 1] @ h
                H[:j + 1, j] += h
            H[j + 1, j] = np.linalg.norm(w)
            V[:, j + 1] = w / H[j + 1, j]
        y = la.lstsq(H, c)[0]
        x += M @ (V[:, :m] @ y)
        s = c - H @ y
        rel = np.linalg.norm(rhs - A @ x) / nb
        hist.append((prods, rel, np.linalg.norm(s) / nb))
        if rel <= rtol or prods >= maxp:
            return x, prods, hist
        if k == 0:
            r = rhs - A @ x
            beta = np.linalg.norm(r)
            V[:, 0] = r / beta
            H[:] = 0
            c[:] = 0
            c[0] = beta
            j0 = 0
            continue
        P = harmonic(H, k)
        kk = P.shape[1]
        Q, _ = np.linalg.qr(np.column_stack([P, s]))
        Hn = Q.T @ H @ Q[:m, :kk]
        V[:, :kk + 1] = V @ Q
        H[:] = 0
        H[:kk + 1, :kk] = Hn
        c[:] = 0
        c[:kk + 1] = Q.T @ s
        j0 = kk


pre, b = sys.argv[1], int(sys.argv[2])
t0 = time.time()
A, rhs, xe, N, _ = cube_system.load(pre, b)
t1 = time.time()
M = bsrsolve.preconditioner(A, "precond=ilu2,cap=auto,reorder=rcm", blocksize=b)
t2 = time.time()
print(f"{pre}: b = {b}, {N}^3 cells; read {t1 - t0:.1f} s, ILU2 {t2 - t1:.1f} s", flush=True)
for spec in sys.argv[3:]:
    m, k = (int(v) for v in spec.split(":"))
    t = time.time()
    x, p, hist = gmresdr(A, M, rhs, m, k)
    e = np.linalg.norm(x - xe) / np.linalg.norm(xe)
    trail = " ".join(f"{q}:{r:.1e}" for q, r, _ in hist[:: max(1, len(hist) // 8)])
    print(f"  GMRES-DR({m},{k}): {p} products, relres {hist[-1][1]:.2e}, error {e:.2e}, "
          f"{time.time() - t:.1f} s  [{trail}]", flush=True)
