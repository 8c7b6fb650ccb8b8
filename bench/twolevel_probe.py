#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""A two-level probe for the indefinite coupled systems of coupled3d: the
device's capped ILU2 (cap=auto, RCM, factored here on the host) as the
smoother, and a coarse correction on a^3-cell aggregates of the grid with
b x b identity blocks (each unknown's field constant on an aggregate, the
smooth modes where the coupling turns the operator indefinite), the coarse
matrix P^T A P factored by SuperLU.  It shows whether a coarse space makes
the capped factor's iterations stop growing with the grid; not a solver.

    bsrsolve --gen coupled3d:40,5,couple=0.3 --info --write PREFIX
    python3 bench/twolevel_probe.py PREFIX B A [post]

B the block size, A the aggregate's edge in cells, post: smooth after the
coarse correction too.  M^-1 r: z = M_ILU^-1 r; z += P Ac^-1 P^T (r - A z)
(post: z += M_ILU^-1 (r - A z)).  GMRES(60) (600 iterations at most) and
BiCGStab (600) from SciPy, rtol 1e-8, with the ILU alone and with the two
levels: iterations, the true relative residual, the error against
PREFIX_xexact.mtx, seconds.  Needs the bsrsolve Python package (PYTHONPATH,
or pip install python/)."""
import sys
import time
import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as sla
import bsrsolve
import cube_system

pre, b, a = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
post = len(sys.argv) > 4 and sys.argv[4] == "post"
t0 = time.time()
A, rhs, xe, N, (i, j, k) = cube_system.load(pre, b)
n = N ** 3
Nc = -(-N // a)
agg = (i // a) + Nc * ((j // a) + Nc * (k // a))
nc = Nc ** 3
rows = (np.arange(n)[:, None] * b + np.arange(b)).ravel()
cols = (agg[:, None] * b + np.arange(b)).ravel()
P = sp.csr_matrix((np.ones(rows.size), (rows, cols)), shape=(n * b, nc * b))
t1 = time.time()
M = bsrsolve.preconditioner(A, "precond=ilu2,cap=auto,reorder=rcm", blocksize=b)
t2 = time.time()
lu = sla.splu((P.T @ A @ P).tocsc())
t3 = time.time()
print(f"{pre}: b = {b}, aggregates of {a}^3 cells: coarse {nc} cells ({nc * b} unknowns); "
      f"read {t1 - t0:.1f} s, ILU2 {t2 - t1:.1f} s, coarse LU {t3 - t2:.1f} s", flush=True)


def two_level(r):
    z = M @ r
    z = z + P @ lu.solve(P.T @ (r - A @ z))
    if post:
        z = z + M @ (r - A @ z)
    return z


for name, op in (("ILU2 alone", M), ("two levels", sla.LinearOperator(A.shape, matvec=two_level))):
    for label, method, kw in (("GMRES(60)", sla.gmres, {"restart": 60, "maxiter": 10, "callback_type": "pr_norm"}),
                              ("BiCGStab", sla.bicgstab, {"maxiter": 600})):
        its = [0]
        t = time.time()
        x, _ = cube_system.krylov(method, A, rhs, op, callback=lambda _: its.__setitem__(0, its[0] + 1),
                                  **kw)
        r = np.linalg.norm(rhs - A @ x) / np.linalg.norm(rhs)
        e = np.linalg.norm(x - xe) / np.linalg.norm(xe)
        print(f"  {name}, {label}: {its[0]} iterations, relres {r:.2e}, error {e:.2e}, {time.time() - t:.1f} s",
              flush=True)
