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

The preconditioner alone, for SciPy's Krylov methods::

    M = bsrsolve.preconditioner(A, "precond=ilu2")
    x, info = scipy.sparse.linalg.gmres(A, b, M=M)

A is a scipy.sparse matrix or array (bsr is used as is, with its blocksize;
any other format goes through CSR, the block size is then found by the
library unless ``blocksize`` is given); b is an array of shape (n,) or (n, k)
(k right-hand sides solved together, 64 at a time).  The options string is
the library's (bsr_solver_options_parse: method, precond, rtol, maxit,
reorder, ...).
"""
from __future__ import annotations

import dataclasses
from typing import Any, Dict, Iterator, List, Mapping, Optional, Tuple

import numpy as np
from numpy.typing import NDArray
import scipy.sparse as sp
from scipy.sparse.linalg import LinearOperator

from . import _core
from ._core import ArgumentError, ConvergenceError, Error

__all__ = ["solve", "Solver", "SolveStats", "preconditioner", "Preconditioner", "Error",
           "ArgumentError", "ConvergenceError", "has_cuda", "device_count", "MAX_RHS", "__version__"]
__version__: str = _core.LIBRARY_VERSION

#: Right-hand sides one library solve takes; more are solved in batches of at most this many.
MAX_RHS = 64

_INT32_MAX = 2**31 - 1


def device_count() -> int:
    """Number of usable CUDA devices (0 when the library was built without CUDA)."""
    return int(_core.device_count())


def has_cuda() -> bool:
    """True when the library was built with CUDA and a device is usable."""
    return _core.device_count() > 0


@dataclasses.dataclass
class SolveStats(Mapping[str, Any]):
    """What a solve did, per right-hand side (the lists, one entry per column of b)
    and as a whole.  Attributes, and for code written against the dict of
    earlier versions also keys: ``stats.relres`` and ``stats["relres"]`` are
    the same list (``dict(stats)`` or ``dataclasses.asdict(stats)`` copies it)."""

    #: "converged", or why the first column that failed stopped ("maxit", "breakdown", ...)
    status: str
    #: every column converged
    converged: bool
    iterations: List[int]
    #: per column: "converged", "maxit", "stagnated", "breakdown", "diverged", "indefinite", "nan",
    #: "inaccurate" (the error control's estimate stays far above etol)
    reason: List[str]
    #: the true relative residual ||b - A x|| / ||b||, recomputed after the solve
    relres: List[float]
    resnorm: List[float]
    bnorm: List[float]
    restarts: List[int]
    #: seconds of the last setup or refactor, of its preconditioner part, of its device part
    setup_s: float
    setup_pc_s: float
    setup_dev_s: float
    #: seconds of the solve (all batches)
    solve_s: float
    #: preconditioner blocks / blocks of A
    fill: float
    pc_nnzb: int
    pivots_regularized: int
    #: the iteration ran on the CUDA device
    device: bool
    #: ILUT/ILU2: the last setup or refactor chose a new pattern; refactors that did so
    pattern_new: bool
    pattern_refreshes: int
    #: the preconditioner in words
    precond_info: str
    #: the options in use (canonical string)
    options: str
    #: "cpu" or the CUDA device in words
    backend: str
    block_size: int
    #: library solves the columns took (more than one past MAX_RHS columns)
    batches: int = 1
    #: with the option fallback (on by default): solves that were repeated after the ILU's factor did
    #: not converge, by the fallback's stage (the complete factor, two levels, GMRES-DR
    #: on the first factor, the factor without its cap, growth weights); the options say so
    fallbacks: int = 0
    #: seconds of the fallback's setups, those that failed too (not in setup_s, the first setup's)
    fallback_s: float = 0.0
    #: per-column residual histories (relres at iteration 0, 1, ...), with the option history=1
    history: Optional[List[List[float]]] = None
    #: with the option etol (on by default for ILUT/ILU2): per column the last estimate of the relative
    #: error ||x - x*|| / ||x|| (0: none made), the estimate solves' iterations, the corrections x += e,
    #: whether the estimate was predicted from an earlier solve's on the same setup (no solve made;
    #: where the last measured error was over etol / 10, the solve went on past rtol to where it is not),
    #: and whether it is a lower bound only (its solve stopped short of its rtol, or the column's
    #: residual is at the working precision's rounding floor, where the estimate may miss the error)
    err_est: List[float] = dataclasses.field(default_factory=list)
    err_its: List[int] = dataclasses.field(default_factory=list)
    err_rounds: List[int] = dataclasses.field(default_factory=list)
    err_predicted: List[bool] = dataclasses.field(default_factory=list)
    err_low: List[bool] = dataclasses.field(default_factory=list)

    # ---- the read-only mapping of the dict that stats were before ----
    def _keys(self) -> List[str]:
        return [f.name for f in dataclasses.fields(self)
                if not (f.name == "history" and self.history is None)]

    def __getitem__(self, key: str) -> Any:
        if key not in self._keys():
            raise KeyError(key)
        return getattr(self, key)

    def __iter__(self) -> Iterator[str]:
        return iter(self._keys())

    def __len__(self) -> int:
        return len(self._keys())


def _check_options(options: Any, example: str) -> None:
    """TypeError unless options is a string (the message shows example)."""
    if not isinstance(options, str):
        raise TypeError(f"options must be a string like '{example}'")


def _matrix_args(A: Any, blocksize: Optional[int]) -> Tuple[Any, ...]:
    """The argument tuple of _core.Solver.setup/refactor for the sparse matrix A."""
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


def _columns(v: Any, n: int, what: str, finite: bool = True) -> Tuple[NDArray[np.float64], bool]:
    """v as a C-contiguous float64 (n, k) array (a copy) and whether v was 1-D.
    With finite, NaN and Inf are refused (ValueError): no iteration can make
    sense of them."""
    if sp.issparse(v):
        v = v.toarray()
    v = np.asarray(v)
    if v.dtype.kind not in "biuf":
        raise TypeError("%s must be real (dtype %s is not supported)" % (what, v.dtype))
    if v.ndim not in (1, 2):
        raise ValueError("%s must have shape (n,) or (n, k), not %s" % (what, v.shape))
    if v.shape[0] != n:
        raise ValueError("%s has %d rows, the matrix %d" % (what, v.shape[0], n))
    if v.ndim == 2 and v.shape[1] == 0:
        raise ValueError("%s has no columns" % what)
    V = np.array(v, dtype=np.float64, order="C", copy=True).reshape(n, -1)
    bad = ~np.isfinite(V) if finite else None
    if bad is not None and bad.any():
        i, j = np.argwhere(bad)[0]
        raise ValueError("%s has %d non-finite values (NaN or Inf), the first %s at row %d%s"
                         % (what, int(bad.sum()), V[i, j], i, "" if v.ndim == 1 else ", column %d" % j))
    return V, v.ndim == 1


def _batches(k: int) -> List[slice]:
    """Columns 0..k-1 as consecutive slices of at most MAX_RHS, of sizes that differ by 1 at most."""
    nb = -(-k // MAX_RHS)
    edges = [k * i // nb for i in range(nb + 1)]
    return [slice(edges[i], edges[i + 1]) for i in range(nb)]


def _batch(B: NDArray[np.float64], X: NDArray[np.float64], cols: slice,
           whole: bool) -> Tuple[NDArray[np.float64], NDArray[np.float64]]:
    """The columns cols of B and X as C-contiguous arrays: B and X themselves
    when the batch is the whole (no copy), else copies (write Xj back)."""
    if whole:
        return B, X
    return np.ascontiguousarray(B[:, cols]), np.ascontiguousarray(X[:, cols])


def _merge(parts: List[Dict[str, Any]]) -> Dict[str, Any]:
    """One stats record of the batches' (in column order)."""
    if len(parts) == 1:
        return parts[0]
    d = dict(parts[-1])  # setup, preconditioner and pattern as after the last batch
    for key in ("iterations", "reason", "relres", "resnorm", "bnorm", "restarts", "err_est", "err_its",
                "err_rounds", "err_predicted", "err_low"):
        d[key] = [v for p in parts for v in p[key]]
    if any("history" in p for p in parts):
        d["history"] = [h for p in parts for h in p.get("history", [[]] * len(p["iterations"]))]
    d["solve_s"] = sum(p["solve_s"] for p in parts)
    d["fallbacks"] = sum(p["fallbacks"] for p in parts)
    d["fallback_s"] = sum(p["fallback_s"] for p in parts)
    d["converged"] = all(p["converged"] for p in parts)
    d["status"] = next((p["status"] for p in parts if not p["converged"]), "converged")
    return d


class Solver:
    """A solver kept across solves: setup(A) once per pattern, refactor(A) for
    new values on it, solve(b) as often as needed.

    options: the library's options string, e.g. "method=gmres,precond=ilu2,rtol=1e-10".
    backend: "cpu", "cuda" (bsrsolve.Error when no device is usable) or "auto"
    (CUDA when has_cuda()).  device: the CUDA device id.  blocksize: the block
    size for matrices that are not bsr (default: the library picks one).
    """

    def __init__(self, options: str = "", backend: str = "auto", device: int = 0,
                 blocksize: Optional[int] = None) -> None:
        _check_options(options, "method=bicgstab,precond=ilu2")
        if not isinstance(backend, str):
            raise TypeError("backend must be 'cpu', 'cuda' or 'auto'")
        self._s = _core.Solver(options, backend, int(device))
        self._blocksize = blocksize

    @property
    def options(self) -> str:
        """The options in use, as the library's canonical string."""
        return str(self._s.options)

    @property
    def block_size(self) -> Optional[int]:
        """The block size of the matrix set up (None before setup)."""
        return self._s.block_size

    @property
    def backend(self) -> str:
        """'cpu', or the CUDA device in words."""
        return str(self._s.backend)

    @property
    def shape(self) -> Optional[Tuple[int, int]]:
        """The shape of the matrix set up (None before setup)."""
        n = self._s.rows
        return None if n is None else (n, n)

    @property
    def tolerances(self) -> Tuple[float, float, int]:
        """(rtol, atol, maxit) of the next solves."""
        return tuple(self._s.tolerances)  # type: ignore[return-value]

    def set_tolerances(self, rtol: Optional[float] = None, atol: Optional[float] = None,
                       maxit: Optional[int] = None) -> "Solver":
        """New rtol, atol and/or maxit for the next solves (None keeps the one in
        use), without a new setup: the preconditioner stays.  Values are checked
        as in the options string (ArgumentError); returns self."""
        r, a, m = self._s.tolerances
        self._s.set_tolerances(r if rtol is None else float(rtol), a if atol is None else float(atol),
                               m if maxit is None else int(maxit))
        return self

    def setup(self, A: Any) -> "Solver":
        """Preconditioner (ordering, pattern, factors) for A; returns self."""
        self._s.setup(*_matrix_args(A, self._blocksize))
        return self

    def refactor(self, A: Any) -> "Solver":
        """New values of A on the pattern given to setup (entries absent now
        count as zeros): numeric refactorization only; returns self."""
        self._s.refactor(*_matrix_args(A, self._s.block_size))
        return self

    def solve(self, b: Any, x0: Any = None, check: bool = True) -> Tuple[NDArray[Any], SolveStats]:
        """Solve A x = b for b of shape (n,) or (n, k).  Returns (x, stats),
        x shaped as b (float32 when b is float32, else float64).  More than
        MAX_RHS columns are solved in batches of at most MAX_RHS (stats.batches).
        b and x0 must be finite (ValueError).  With check (default) a column
        that did not converge raises ConvergenceError (its .x and .stats hold
        the result); else stats.converged says."""
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
        parts = []
        batches = _batches(B.shape[1])
        for cols in batches:
            Bj, Xj = _batch(B, X, cols, len(batches) == 1)
            converged, d = self._s.solve(Bj, Xj, n, Bj.shape[1])
            if Xj is not X:
                X[:, cols] = Xj
            d["converged"] = bool(converged)
            parts.append(d)
        stats = SolveStats(batches=len(parts), **_merge(parts))
        x = X[:, 0] if one else X
        if np.asarray(b).dtype == np.float32:
            x = x.astype(np.float32)
        if check and not stats.converged:
            e = ConvergenceError("%s after %s iterations (relative residuals %s)"
                                 % (stats.status, stats.iterations, stats.relres))
            # the library's codes for these two (bsr_status)
            e.status = 14 if stats.status == "breakdown" else 13
            e.status_name, e.x, e.stats = stats.status, x, stats
            raise e
        return x, stats

    def error_estimate(self, b: Any, x: Any) -> Tuple[NDArray[np.float64], int, bool]:
        """Estimate the error of x, a solution of A x = b on this setup:
        ||e|| / ||x|| per column, e solving A e = b - A x to rtol 0.01 with this
        solver (the residual does not bound the error on ill-conditioned
        systems).  Returns (estimates, iterations, lower_bound): lower_bound
        when that solve stopped short (the estimates are then lower bounds).
        The solver's later solves are unchanged."""
        n = self._s.rows
        if n is None:
            raise Error("error_estimate: call setup first")
        B, _ = _columns(b, n, "b")
        X, _ = _columns(x, n, "x")
        if X.shape != B.shape:
            raise ValueError("x has shape %s, b %s" % (X.shape, B.shape))
        est: List[float] = []
        its, low = 0, False
        batches = _batches(B.shape[1])
        for cols in batches:
            Bj, Xj = _batch(B, X, cols, len(batches) == 1)
            e, i, lb = self._s.error_estimate(Bj, Xj, n, Bj.shape[1])
            est += e
            its, low = max(its, int(i)), low or bool(lb)
        return np.asarray(est, dtype=np.float64), its, low


def solve(A: Any, b: Any, options: str = "", backend: str = "auto", x0: Any = None,
          blocksize: Optional[int] = None, check: bool = True) -> Tuple[NDArray[Any], SolveStats]:
    """Solve A x = b once: Solver(options, backend).setup(A).solve(b).
    Returns (x, stats); see Solver.solve."""
    return Solver(options, backend, blocksize=blocksize).setup(A).solve(b, x0=x0, check=check)


class Preconditioner(LinearOperator):  # type: ignore[misc]  # (scipy has no type hints)
    """M^{-1} for an incomplete factorization M ~ A (block ILU(0), ILUT or
    ILU2, factored and applied on the CPU), as a scipy LinearOperator: pass it
    as ``M=`` to scipy.sparse.linalg's gmres, bicgstab, cg, ...; ``M @ x`` and
    ``M.matvec(x)`` apply it.  See preconditioner()."""

    def __init__(self, A: Any, options: str = "precond=ilu0", blocksize: Optional[int] = None) -> None:
        _check_options(options, "precond=ilu2,tau1=1e-3")
        self._p = _core.Preconditioner(options, *_matrix_args(A, blocksize))
        n = int(self._p.rows)
        super().__init__(dtype=np.dtype(np.float64), shape=(n, n))

    @property
    def options(self) -> str:
        """The options in use (the solver's canonical string; the ILU's keys count)."""
        return str(self._p.options)

    @property
    def block_size(self) -> int:
        """The block size of the factored matrix."""
        return int(self._p.block_size)

    @property
    def info(self) -> Dict[str, Any]:
        """The factorization in numbers: fill ((L+U blocks) / A's), nnzb_L, nnzb_U,
        nnzb_A, pivots_regularized, scaling_fallbacks, dropped, setup_s, factor_s, match_used."""
        return dict(self._p.stats)

    def refactor(self, A: Any) -> "Preconditioner":
        """New values of A on the pattern factored (entries absent now count as
        zeros): the ordering and, for ILUT/ILU2, the pattern are kept; returns self."""
        self._p.refactor(*_matrix_args(A, self.block_size))
        return self

    def _matmat(self, X: Any) -> NDArray[np.float64]:
        n = self.shape[0]
        # (a NaN of a broken-down iteration passes through, as through any operator)
        V, one = _columns(X, n, "x", finite=False)
        Y = np.empty_like(V)
        self._p.apply(V, Y, n, V.shape[1])
        return Y[:, 0] if one else Y

    def _matvec(self, x: Any) -> NDArray[np.float64]:
        return self._matmat(np.asarray(x).reshape(-1)).reshape(np.shape(x))

    def _adjoint(self) -> LinearOperator:
        raise NotImplementedError("the transpose of an ILU preconditioner is not available")


def preconditioner(A: Any, options: str = "precond=ilu0", blocksize: Optional[int] = None) -> Preconditioner:
    """The preconditioner of the options string, factored for A, as a
    LinearOperator applying M^{-1} (CPU), for SciPy's Krylov methods::

        M = bsrsolve.preconditioner(A, "precond=ilu2,tau1=1e-3")
        x, info = scipy.sparse.linalg.gmres(A, b, M=M, rtol=1e-10)

    options: the solver's keys that shape an ILU: precond (ilu0, ilut, ilu2;
    default ilu0), tau1, tau2, fill, cap, keep_pattern, reorder, match, pivot,
    precond_precision (others are accepted and ignored; precond=none, jacobi,
    ssor, ic0, ic2 raise ArgumentError).  blocksize as for Solver."""
    return Preconditioner(A, options, blocksize)
