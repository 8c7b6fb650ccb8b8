# SPDX-License-Identifier: BSD-3-Clause
"""The probes' loader (schur_probe.py, twolevel_probe.py): a system that
`bsrsolve --gen G --info --write PREFIX` wrote for a cube of N^3 cells, x
fastest (coupled3d, rotconv3d, stencil3d)."""
import numpy as np
import scipy.io as sio


def load(pre, b):
    """A (CSR), the right-hand side, the exact solution, N, and each cell's
    grid coordinates (i, j, k), for PREFIX pre and block size b."""
    A = sio.mmread(pre + ".mtx").tocsr()
    rhs = np.asarray(sio.mmread(pre + "_rhs.mtx")).ravel()
    xe = np.asarray(sio.mmread(pre + "_xexact.mtx")).ravel()
    n = A.shape[0] // b
    N = round(n ** (1 / 3))
    assert N ** 3 == n, "a cube of N^3 cells, x fastest"
    c = np.arange(n)
    return A, rhs, xe, N, (c % N, (c // N) % N, c // (N * N))


def krylov(method, A, rhs, M, **kw):
    """SciPy's Krylov method to rtol 1e-8 (the keyword tol before SciPy 1.12)."""
    try:
        return method(A, rhs, M=M, rtol=1e-8, **kw)
    except TypeError:
        return method(A, rhs, M=M, tol=1e-8, **kw)
