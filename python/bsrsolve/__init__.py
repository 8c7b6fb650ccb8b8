# SPDX-License-Identifier: BSD-3-Clause
"""bsrsolve: block-CSR ILU/Krylov solvers (CPU and CUDA) for scipy.sparse matrices.

One call::

    x, stats = bsrsolve.solve(A, b, "method=bicgstab,precond=ilu2")

Time steps (same pattern, new values)::

    s = bsrsolve.Solver("method=gmres,precond=ilu0,rtol=1e-10")
    s.setup(A0)
    x, stats = s.solve(b)
    s.refactor(A1)
    x, stats = s.solve(b1, x0=x)

A is a scipy.sparse matrix or array (bsr is used as is, with its blocksize;
any other format goes through CSR, the block size is then found by the
library unless ``blocksize`` is given); b is an array of shape (n,) or (n, k)
(k right-hand sides solved together).  The options string is the library's
(bsr_solver_options_parse: method, precond, rtol, maxit, reorder, ...).
"""
import numpy as np

from . import _core
from ._core import ArgumentError, ConvergenceError, Error

__all__ = ["solve", "Solver", "Error", "ArgumentError", "ConvergenceError", "has_cuda",
           "device_count", "__version__"]
__version__ = _core.LIBRARY_VERSION

_INT32_MAX = 2**31 - 1


def device_count():
    """Number of usable CUDA devices (0 when the library was built without CUDA)."""
    return _core.device_count()


def has_cuda():
    """True when the library was built with CUDA and a device is usable."""
    return _core.device_count() > 0


def _matrix_args(A, blocksize):
    """The argument tuple of _core.Solver.setup/refactor for the sparse matrix A."""
    try:
        import scipy.sparse as sp
    except ImportError as e:  # pragma: no cover - scipy is a dependency
        raise TypeError("A must be a scipy.sparse matrix (scipy is not installed)") from e
    if not sp.issparse(A):
        raise TypeError("A must be a scipy.sparse matrix or array (bsr, csr, ...), not %s"
                        % type(A).__name__)
    if A.ndim != 2 or A.shape[0] != A.shape[1]:
        raise ValueError("A must be square, its shape is %s" % (A.shape,))
    if A.dtype.kind not in "biuf":
        raise TypeError("A must be real (dtype %s is not supported)" % A.dtype)
    n = A.shape[0]
    if n == 0:
        raise ValueError("A is empty (0 x 0)")
    if n > _INT32_MAX:
        raise ValueError("A has %d rows; at most 2**31 - 1 are supported" % n)
    if blocksize is not None:
        blocksize = int(blocksize)
        if blocksize < 1:
            raise ValueError("blocksize must be >= 1")
        if n % blocksize:
            raise ValueError("blocksize %d does not divide n = %d" % (blocksize, n))
    if A.format == "bsr" and A.blocksize[0] == A.blocksize[1] and blocksize in (None, A.blocksize[0]):
        b = A.blocksize[0]
        if A.indptr[-1] > _INT32_MAX:
            raise ValueError("A has more than 2**31 - 1 blocks")
        return ("bsr", n // b, n // b, b,
                np.ascontiguousarray(A.indptr, dtype=np.int32),
                np.ascontiguousarray(A.indices[:A.indptr[-1]], dtype=np.int32),
                np.ascontiguousarray(A.data[:A.indptr[-1]], dtype=np.float64))
    # a copy: sum_duplicates sorts and merges in place, and A is the caller's
    C = sp.csr_matrix(A, dtype=np.float64, copy=True)
    C.sum_duplicates()
    return ("csr", n, blocksize or 0,
            np.ascontiguousarray(C.indptr, dtype=np.int64),
            np.ascontiguousarray(C.indices, dtype=np.int32),
            np.ascontiguousarray(C.data, dtype=np.float64))


def _columns(v, n, what):
    """v as a C-contiguous float64 (n, k) array (a copy) and whether v was 1-D."""
    try:
        import scipy.sparse as sp
        if sp.issparse(v):
            v = v.toarray()
    except ImportError:  # pragma: no cover
        pass
    v = np.asarray(v)
    if v.dtype.kind not in "biuf":
        raise TypeError("%s must be real (dtype %s is not supported)" % (what, v.dtype))
    if v.ndim not in (1, 2):
        raise ValueError("%s must have shape (n,) or (n, k), not %s" % (what, v.shape))
    if v.shape[0] != n:
        raise ValueError("%s has %d rows, the matrix %d" % (what, v.shape[0], n))
    if v.ndim == 2 and v.shape[1] == 0:
        raise ValueError("%s has no columns" % what)
    return np.array(v, dtype=np.float64, order="C", copy=True).reshape(n, -1), v.ndim == 1


class Solver:
    """A solver kept across solves: setup(A) once per pattern, refactor(A) for
    new values on it, solve(b) as often as needed.

    options: the library's options string, e.g. "method=gmres,precond=ilu2,rtol=1e-10".
    backend: "cpu", "cuda" (bsrsolve.Error when no device is usable) or "auto"
    (CUDA when has_cuda()).  device: the CUDA device id.  blocksize: the block
    size for matrices that are not bsr (default: the library picks one).
    """

    def __init__(self, options="", backend="auto", device=0, blocksize=None):
        if not isinstance(options, str):
            raise TypeError("options must be a string like 'method=bicgstab,precond=ilu2'")
        if not isinstance(backend, str):
            raise TypeError("backend must be 'cpu', 'cuda' or 'auto'")
        self._s = _core.Solver(options, backend, int(device))
        self._blocksize = blocksize

    @property
    def options(self):
        """The options in use, as the library's canonical string."""
        return self._s.options

    @property
    def backend(self):
        """'cpu', or the CUDA device in words."""
        return self._s.backend

    @property
    def block_size(self):
        """The block size of the matrix set up (None before setup)."""
        return self._s.block_size

    @property
    def shape(self):
        """The shape of the matrix set up (None before setup)."""
        n = self._s.rows
        return None if n is None else (n, n)

    @property
    def tolerances(self):
        """(rtol, atol, maxit) of the next solves."""
        return self._s.tolerances

    def set_tolerances(self, rtol=None, atol=None, maxit=None):
        """New rtol, atol and/or maxit for the next solves (None keeps the one in
        use), without a new setup: the preconditioner stays.  Values are checked
        as in the options string (ArgumentError); returns self."""
        r, a, m = self._s.tolerances
        self._s.set_tolerances(r if rtol is None else float(rtol), a if atol is None else float(atol),
                               m if maxit is None else int(maxit))
        return self

    def setup(self, A):
        """Preconditioner (ordering, pattern, factors) for A; returns self."""
        self._s.setup(*_matrix_args(A, self._blocksize))
        return self

    def refactor(self, A):
        """New values of A on the pattern given to setup (entries absent now
        count as zeros): numeric refactorization only; returns self."""
        self._s.refactor(*_matrix_args(A, self._s.block_size))
        return self

    def solve(self, b, x0=None, check=True):
        """Solve A x = b for b of shape (n,) or (n, k).  Returns (x, stats),
        x shaped as b (float32 when b is float32, else float64).  With check
        (default) a column that did not converge raises ConvergenceError
        (its .x and .stats hold the result); else stats["converged"] says."""
        n = self._s.rows
        if n is None:
            raise Error("solve: call setup first")
        B, one = _columns(b, n, "b")
        if x0 is None:
            X = np.zeros_like(B)
        else:
            X, _ = _columns(x0, n, "x0")
            if X.shape != B.shape:
                raise ValueError("x0 has shape %s, b %s" % (X.shape, B.shape))
        converged, stats = self._s.solve(B, X, n, B.shape[1])
        x = X[:, 0] if one else X
        if np.asarray(b).dtype == np.float32:
            x = x.astype(np.float32)
        if check and not converged:
            e = ConvergenceError("%s after %s iterations (relative residuals %s)"
                                 % (stats["status"], stats["iterations"], stats["relres"]))
            # the library's codes for these two (bsr_status)
            e.status = 14 if stats["status"] == "breakdown" else 13
            e.status_name, e.x, e.stats = stats["status"], x, stats
            raise e
        return x, stats


def solve(A, b, options="", backend="auto", x0=None, blocksize=None, check=True):
    """Solve A x = b once: Solver(options, backend).setup(A).solve(b).
    Returns (x, stats); see Solver.solve."""
    return Solver(options, backend, blocksize=blocksize).setup(A).solve(b, x0=x0, check=check)
