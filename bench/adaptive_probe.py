#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""An adaptive two-level probe for the indefinite coupled systems of
coupled3d: the device's capped ILU2 (cap=auto, RCM, factored here on the
host) as the smoother, and a coarse space built from the modes that smoother
leaves (adaptive aggregation, as alpha-SA and bootstrap AMG do), where
twolevel_probe.py's identity blocks (each field constant on an aggregate)
did not stop the iterations growing with the grid.

    bsrsolve --gen coupled3d:60,5,couple=0.3 --info --write PREFIX
    python3 bench/adaptive_probe.py PREFIX B A M [K S]

B the block size, A the aggregate's edge in cells (A must divide N), M the
coarse vectors an aggregate keeps, K test vectors (default 2 M) and S
smoothing steps (default 8).  Test vectors: K random vectors, each step
X <- orth((I - M_ILU^-1 A) X) (subspace iteration: the modes where
M_ILU^-1 A is far from 1, negative or near 0, grow); an aggregate's basis is
the M leading left singular vectors of X restricted to its cells' unknowns.
M^-1 r: z = M_ILU^-1 r; z += P Ac^-1 P^T (r - A z); z += M_ILU^-1 (r - A z)
(pre- and post-smoothing), Ac = P^T A P by SuperLU.  GMRES(60) and BiCGStab
(600 iterations at most) from SciPy, rtol 1e-8: iterations, the true
relative residual, the error against PREFIX_xexact.mtx, seconds.  Needs the
bsrsolve Python package (PYTHONPATH, or pip install python/)."""
import sys
import time
import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as sla
import bsrsolve
import cube_system

pre, b, a, m = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
K = int(sys.argv[5]) if len(sys.argv) > 5 else 2 * m
S = int(sys.argv[6]) if len(sys.argv) > 6 else 8
t0 = time.time()
A, rhs, xe, N, (i, j, k) = cube_system.load(pre, b)
assert N % a == 0, "the aggregate's edge must divide N"
n, Nc = N ** 3, N // a
nc = Nc ** 3
agg = (i // a) + Nc * ((j // a) + Nc * (k // a))
M = bsrsolve.preconditioner(A, "precond=ilu2,cap=auto,reorder=rcm", blocksize=b)
t1 = time.time()

# test vectors by subspace iteration on I - M^-1 A
rng = np.random.default_rng(1)
X = rng.standard_normal((n * b, K))
for s in range(S):
    Y = np.column_stack([X[:, q] - M @ (A @ X[:, q]) for q in range(K)])
    grow = np.linalg.norm(Y, axis=0) / np.linalg.norm(X, axis=0)
    X, _ = np.linalg.qr(Y)
    print(f"  step {s + 1}: |(I - M^-1 A) x| / |x| per vector {np.array2string(grow, precision=2)}", flush=True)
t2 = time.time()

# each aggregate's basis: its cells' unknowns (cells sorted by aggregate), the M leading singular vectors
order = np.argsort(agg, kind="stable")
cell_unknowns = (order[:, None] * b + np.arange(b)).ravel()        # unknowns aggregate by aggregate
na = a ** 3 * b                                                     # unknowns an aggregate
Xa = X[cell_unknowns].reshape(nc, na, K)
U, sv, _ = np.linalg.svd(Xa, full_matrices=False)
basis = U[:, :, :m]                                                 # nc x na x m
rows = np.repeat(cell_unknowns, m)
cols = (np.arange(nc)[:, None, None] * m + np.arange(m)[None, None, :]).repeat(na, axis=1).ravel()
P = sp.csr_matrix((basis.ravel(), (rows, cols)), shape=(n * b, nc * m))
Ac = (P.T @ A @ P).tocsc()
lu = sla.splu(Ac)
t3 = time.time()
print(f"{pre}: b = {b}, {nc} aggregates of {a}^3 cells, {m} of {K} test vectors each ({nc * m} coarse unknowns, "
      f"{Ac.nnz} entries); ILU2 {t1 - t0:.1f} s, test vectors {t2 - t1:.1f} s, coarse space + LU {t3 - t2:.1f} s",
      flush=True)


def two_level(r):
    z = M @ r
    z = z + P @ lu.solve(P.T @ (r - A @ z))
    return z + M @ (r - A @ z)


for name, op in (("ILU2 alone", M), ("adaptive two levels", sla.LinearOperator(A.shape, matvec=two_level))):
    for label, method, kw in (("GMRES(60)", sla.gmres, {"restart": 60, "maxiter": 10, "callback_type": "pr_norm"}),
                              ("BiCGStab", sla.bicgstab, {"maxiter": 600})):
        its = [0]
        t = time.time()
        x, _ = cube_system.krylov(method, A, rhs, op, callback=lambda _: its.__setitem__(0, its[0] + 1), **kw)
        r = np.linalg.norm(rhs - A @ x) / np.linalg.norm(rhs)
        e = np.linalg.norm(x - xe) / np.linalg.norm(xe)
        print(f"  {name}, {label}: {its[0]} iterations, relres {r:.2e}, error {e:.2e}, {time.time() - t:.1f} s",
              flush=True)
