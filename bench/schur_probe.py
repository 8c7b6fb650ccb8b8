#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""A two-level probe for the indefinite coupled systems of coupled3d:
an ILU of the rows F outside some grid planes D, the Schur complement of
D formed exactly against that ILU and factored by dense LU with partial
pivoting.  It shows whether factoring the separators' Schur complement again
(a second level that pivots) rescues an unstable factor; not a solver.

    bsrsolve --gen coupled3d:16,5,couple=0.5 --info --write PREFIX
    python3 bench/schur_probe.py PREFIX B L [OPTIONS]

B the block size, L the number of planes in D (0: the ILU of the whole A
alone; 1: the plane k = N/2; 2: and j = N/2; 3: and i = N/2; up to 7:
quarter planes of k and j), OPTIONS the ILU's (bsrsolve.preconditioner's
string, default precond=ilu2).  With M_F the ILU of A_FF:
    S = A_DD - A_DF M_F^-1 A_FD         (|D| b solves with M_F)
    M^-1 r: y_F = M_F^-1 r_F, y_D = S^-1 (r_D - A_DF y_F),
            x_F = y_F - M_F^-1 A_FD y_D (two solves with M_F)
so M equals A but in its FF block, where it is M_F.  GMRES(60) on A with M
(SciPy, rtol 1e-8, 600 iterations at most); prints iterations, the true
relative residual, the error against PREFIX_xexact.mtx and the times.
Needs the bsrsolve Python package (PYTHONPATH, or pip install python/)."""
import sys
import time
import numpy as np
import scipy.linalg as la
import scipy.sparse.linalg as sla
import bsrsolve
import cube_system

pre, b, L = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
opts = sys.argv[4] if len(sys.argv) > 4 else "precond=ilu2"
A, rhs, xe, N, (i, j, k) = cube_system.load(pre, b)
n = N ** 3
planes = [k == N // 2, j == N // 2, i == N // 2, k == N // 4, k == 3 * N // 4, j == N // 4, j == 3 * N // 4]
dmask = np.zeros(n, bool)
for p in planes[:L]:
    dmask |= p


def unknowns(m):
    return (np.flatnonzero(m)[:, None] * b + np.arange(b)).ravel()


def gmres(M, name, t0):
    its = [0]
    t1 = time.time()
    x, _ = cube_system.krylov(sla.gmres, A, rhs, M, restart=60, maxiter=10,
                              callback=lambda _: its.__setitem__(0, its[0] + 1), callback_type="pr_norm")
    r = np.linalg.norm(rhs - A @ x) / np.linalg.norm(rhs)
    e = np.linalg.norm(x - xe) / np.linalg.norm(xe)
    print(f"{name}: {its[0]} iterations, relres {r:.2e}, error {e:.2e}, setup {t1 - t0:.1f} s, "
          f"solve {time.time() - t1:.1f} s", flush=True)


t0 = time.time()
if L == 0:
    M = bsrsolve.preconditioner(A, opts, blocksize=b)
    print(f"fill {M.info['fill']:.2f}")
    gmres(M, "one level, " + opts, t0)
    sys.exit()
Fi, Di = unknowns(~dmask), unknowns(dmask)
AFF, AFD = A[Fi][:, Fi].tocsr(), A[Fi][:, Di].tocsr()
ADF, S = A[Di][:, Fi].tocsr(), A[Di][:, Di].toarray()
MF = bsrsolve.preconditioner(AFF, opts, blocksize=b)
print(f"D {len(Di) // b} block rows, fill of M_F {MF.info['fill']:.2f}", flush=True)
AFDc = AFD.tocsc()
for c0 in range(0, len(Di), 256):
    S[:, c0:c0 + 256] -= ADF @ (MF @ AFDc[:, c0:c0 + 256].toarray())
lu = la.lu_factor(S)
print(f"S {S.shape[0]} x {S.shape[0]} formed and factored, {time.time() - t0:.1f} s", flush=True)


def apply(r):
    yF = MF @ r[Fi]
    yD = la.lu_solve(lu, r[Di] - ADF @ yF)
    x = np.empty_like(r)
    x[Di] = yD
    x[Fi] = yF - MF @ (AFD @ yD)
    return x


gmres(sla.LinearOperator(A.shape, apply), f"two levels, {L} planes, " + opts, t0)
