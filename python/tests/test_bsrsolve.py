# SPDX-License-Identifier: BSD-3-Clause
"""bsrsolve's Python package against scipy.sparse.linalg.spsolve.

Generated systems (block and scalar, diagonally dominant) and the real
matrices of $BSR_REAL_DIR (default: ../shared/matrices/real beside the
repository; skipped with a message when absent)."""
import os
import threading

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp
import scipy.sparse.linalg as spla

import bsrsolve

TIGHT = "rtol=1e-12,maxit=2000"
# the backend of the tests that do not name one: the CPU unless asked
# (BSRSOLVE_TEST_BACKEND=cuda or auto runs them on the GPU)
BACKEND = os.environ.get("BSRSOLVE_TEST_BACKEND", "cpu")


def solve(A, b, options="", **kw):
    kw.setdefault("backend", BACKEND)
    return bsrsolve.solve(A, b, options, **kw)


def Solver(options="", **kw):
    kw.setdefault("backend", BACKEND)
    return bsrsolve.Solver(options, **kw)


def relerr(x, ref):
    # spsolve gives (n,) for an (n, 1) right-hand side: compare as flat
    # arrays, never through broadcasting (n,1) - (n,) into (n, n)
    x, ref = np.asarray(x), np.asarray(ref)
    assert x.size == ref.size, (x.shape, ref.shape)
    return np.linalg.norm(x.ravel() - ref.ravel()) / np.linalg.norm(ref.ravel())


def dominant(nb, b, density=0.08, seed=0, symmetric=False):
    """A random nb x nb block-sparse matrix of b x b blocks (CSR), strictly
    diagonally dominant: every block row has its diagonal block."""
    rng = np.random.default_rng(seed)
    P = sp.random(nb, nb, density=density, random_state=rng, format="csr") + sp.eye(nb, format="csr")
    if symmetric:
        P = P + P.T
    A = sp.kron(P, np.ones((b, b)), format="csr")
    A.data = rng.uniform(-1.0, 1.0, A.nnz)
    if symmetric:
        A = (A + A.T) * 0.5
    rowsum = np.asarray(abs(A).sum(axis=1)).ravel()
    return (A + sp.diags(rowsum + 1.0)).tocsr()


def rhs(n, k=None, seed=1):
    rng = np.random.default_rng(seed)
    return rng.uniform(-1.0, 1.0, n if k is None else (n, k))


# ---- generated systems ----------------------------------------------------

@pytest.mark.parametrize("options", [
    "method=bicgstab,precond=ilu0", "method=bicgstab,precond=ilu2", "method=gmres,precond=ilut",
    "method=gmres,precond=jacobi", "method=bicgstab,precond=none", "method=gmres,precond=ssor",
    "method=idr,precond=ilu0", "method=idr,idr_s=1,precond=jacobi"])
def test_scalar_csr_one_rhs(options):
    A = dominant(150, 1, seed=2)
    b = rhs(150)
    # (ssor is a CPU-only preconditioner)
    x, st = solve(A, b, options + "," + TIGHT, backend="cpu" if "ssor" in options else BACKEND)
    assert x.shape == b.shape and x.dtype == np.float64
    assert relerr(x, spla.spsolve(A.tocsc(), b)) < 1e-9
    assert st["converged"] and st["status"] == "converged" and st["reason"] == ["converged"]
    assert st["block_size"] == 1
    # the reported residual is the true one
    true = np.linalg.norm(b - A @ x) / np.linalg.norm(b)
    assert st["relres"][0] == pytest.approx(true, rel=1e-3, abs=1e-15)
    assert st["relres"][0] <= 1e-12


@pytest.mark.parametrize("b", [2, 3, 4, 7])
def test_block_bsr_many_rhs(b):
    A = dominant(40, b, seed=b).tobsr(blocksize=(b, b))
    B = rhs(A.shape[0], 5)
    X, st = solve(A, B, "method=gmres,precond=ilu2,restart=40," + TIGHT)
    assert X.shape == B.shape
    ref = spla.spsolve(A.tocsc(), B)
    for j in range(5):
        assert relerr(X[:, j], ref[:, j]) < 1e-9
    assert st["block_size"] == b
    assert len(st["iterations"]) == 5 and all(i > 0 for i in st["iterations"])
    assert st["fill"] > 0 and "ilu2" in st["precond_info"]


def test_csr_block_size_detected_and_forced():
    A = dominant(53, 4, seed=3)  # n = 212: of 1..10 only 1, 2, 4 divide it
    b = rhs(A.shape[0])
    ref = spla.spsolve(A.tocsc(), b)
    s = Solver("method=bicgstab,precond=ilu0," + TIGHT).setup(A)
    assert s.block_size == 4 and s.shape == A.shape
    assert relerr(s.solve(b)[0], ref) < 1e-9
    s = Solver("method=bicgstab,precond=ilu0," + TIGHT, blocksize=2).setup(A)
    assert s.block_size == 2
    assert relerr(s.solve(b)[0], ref) < 1e-9
    # a bsr matrix whose blocksize is overridden goes through CSR
    x, st = solve(A.tobsr(blocksize=(4, 4)), b, TIGHT, blocksize=1)
    assert st["block_size"] == 1 and relerr(x, ref) < 1e-9


def test_other_formats_duplicates_and_unsorted():
    A = dominant(30, 2, seed=4)
    b = rhs(60)
    ref = spla.spsolve(A.tocsc(), b)
    coo = A.tocoo()
    # the same matrix as COO with every entry split in two halves, shuffled
    perm = np.random.default_rng(5).permutation(2 * coo.nnz)
    dup = sp.coo_matrix((np.r_[coo.data, coo.data][perm] * 0.5,
                         (np.r_[coo.row, coo.row][perm], np.r_[coo.col, coo.col][perm])), shape=A.shape)
    for M in (A.tocsc(), dup, sp.csr_array(A), A.tobsr(blocksize=(2, 2))):
        x, _ = solve(M, b, TIGHT)
        assert relerr(x, ref) < 1e-9
    # a bsr matrix with each row's blocks reversed and the first block split in two
    Bm = A.tobsr(blocksize=(2, 2))
    data, ind, ptr = [], [], [0]
    for i in range(Bm.shape[0] // 2):
        row = list(range(Bm.indptr[i], Bm.indptr[i + 1]))[::-1]
        data += [Bm.data[p] for p in row] + [0.5 * Bm.data[row[0]]]
        data[-len(row) - 1] = 0.5 * Bm.data[row[0]]
        ind += [Bm.indices[p] for p in row] + [Bm.indices[row[0]]]
        ptr.append(len(ind))
    messy = sp.bsr_matrix((np.array(data), np.array(ind), np.array(ptr)), shape=A.shape)
    assert not messy.has_sorted_indices
    x, st = solve(messy, b, TIGHT)
    assert st["block_size"] == 2 and relerr(x, ref) < 1e-9
    # float32 and integer values are taken exactly as float64
    for M in (A.astype(np.float32), sp.csr_matrix(np.round(A.toarray() * 10).astype(np.int64))):
        x, _ = solve(M, b, TIGHT)
        assert relerr(x, spla.spsolve(sp.csc_matrix(M, dtype=np.float64), b)) < 1e-9
    # the caller's matrix is left as it was
    assert not dup.has_canonical_format


def test_cg_symmetric_positive_definite():
    A = dominant(60, 3, seed=6, symmetric=True)
    b = rhs(A.shape[0])
    its = {}
    for pc in ("jacobi", "none", "ic0", "ic2"):
        x, st = solve(A, b, "method=cg,precond=%s,%s" % (pc, TIGHT))
        assert relerr(x, spla.spsolve(A.tocsc(), b)) < 1e-9
        its[pc] = st.iterations[0]
    assert its["ic2"] <= its["ic0"] < its["none"]


def test_initial_guess_and_float32():
    A = dominant(50, 2, seed=7)
    b = rhs(100)
    ref = spla.spsolve(A.tocsc(), b)
    x, st = solve(A, b, TIGHT, x0=ref)
    assert st["iterations"] == [0] and relerr(x, ref) < 1e-12
    x32, _ = solve(A, b.astype(np.float32), "rtol=1e-6")
    assert x32.dtype == np.float32 and relerr(x32, ref) < 1e-5
    # the library's single-precision Krylov vectors
    xf, st = solve(A, b, "precision=float,rtol=1e-5")
    assert "precision=float" in st["options"] and relerr(xf, ref) < 1e-4
    # ILU2 (its error control on) in float to an rtol under float's eps: the column stops at the
    # rounding floor, where the residual is mostly rounding, so its error estimate is a lower bound
    xf, st = solve(A, b, "precond=ilu2,precision=float,rtol=1e-8")
    assert st.converged and st.err_low == [True] and st.err_est[0] > 0 and relerr(xf, ref) < 1e-4
    xf, st = solve(A, b, "precond=ilu2,precision=float,rtol=1e-5")
    assert st.converged and st.err_low == [False] and st.err_est[0] > 0
    # (n, 1) stays two-dimensional; the input is not modified
    b2 = b.reshape(-1, 1).copy()
    x2, _ = solve(A, b2, TIGHT)
    assert x2.shape == (100, 1) and np.array_equal(b2[:, 0], b)


def test_solver_time_steps():
    """setup once, refactor with new values on the pattern, solve each step."""
    A0 = dominant(45, 3, seed=8).tobsr(blocksize=(3, 3))
    b = rhs(A0.shape[0], 2)
    s = Solver("method=bicgstab,precond=ilu2," + TIGHT)
    assert s.block_size is None and s.shape is None
    s.setup(A0)
    X, st0 = s.solve(b)
    assert relerr(X, spla.spsolve(A0.tocsc(), b)) < 1e-9
    rng = np.random.default_rng(9)
    x = X
    for step in range(3):
        A = A0.copy()
        A.data = A.data * (1.0 + 0.2 * rng.uniform(-1, 1, A.data.shape))
        s.refactor(A)
        X, st = s.solve(b, x0=x)
        ref = spla.spsolve(A.tocsc(), b)
        assert relerr(X, ref) < 1e-9, step
        assert not st["pattern_new"]
        x = X
    # refactor from CSR with an entry dropped (a zero now) still fits the pattern
    C = A.tocsr()
    C.data[0] = 0.0
    C.eliminate_zeros()
    s.refactor(C)
    assert relerr(s.solve(b)[0], spla.spsolve(C.tocsc(), b)) < 1e-9
    # set up from a bsr matrix whose rows are not sorted: refactor still puts
    # every value in its block
    P = A.tocsr().tobsr(blocksize=(3, 3))
    order = np.concatenate([np.arange(P.indptr[i], P.indptr[i + 1])[::-1] for i in range(P.shape[0] // 3)])
    rev = sp.bsr_matrix((P.data[order], P.indices[order], P.indptr.copy()), shape=P.shape)
    assert not rev.has_sorted_indices
    s2 = Solver("method=bicgstab,precond=ilu0," + TIGHT).setup(rev)
    rev2 = rev.copy()
    rev2.data = rev2.data * np.linspace(0.5, 1.5, rev2.data.size).reshape(rev2.data.shape)
    assert relerr(s2.refactor(rev2).solve(b)[0], spla.spsolve(rev2.tocsc(), b)) < 1e-9
    # a new pattern needs setup
    extra = A.tocsr() + sp.csr_matrix(([1e-3], ([0], [A.shape[0] - 1])), shape=A.shape)
    with pytest.raises(bsrsolve.ArgumentError, match="pattern"):
        s.refactor(extra)
    s.setup(extra)
    assert relerr(s.solve(b)[0], spla.spsolve(extra.tocsc(), b)) < 1e-9
    # a matrix of another size
    with pytest.raises(bsrsolve.ArgumentError):
        s.refactor(dominant(10, 3))


def test_more_rhs_than_one_solve_takes():
    """Past MAX_RHS (64) columns, b is solved in batches of at most 64: 65
    columns are two solves (33 + 32), not an error."""
    A = dominant(60, 2, seed=22)
    n = A.shape[0]
    assert bsrsolve.MAX_RHS == 64
    for k, batches in ((64, 1), (65, 2), (150, 3)):
        B = rhs(n, k, seed=k)
        X, st = solve(A, B, "method=gmres,precond=ilu0," + TIGHT)
        assert X.shape == (n, k) and st.batches == batches
        assert relerr(X, spla.spsolve(A.tocsc(), B)) < 1e-9
        for key in ("iterations", "reason", "relres", "resnorm", "bnorm", "restarts", "err_est", "err_its",
                    "err_rounds", "err_predicted", "err_low"):
            assert len(st[key]) == k, key
        assert st.converged and st.status == "converged" and max(st.relres) <= 1e-12
    # the initial guess goes with its columns; histories are per column
    B = rhs(n, 70, seed=3)
    ref = spla.spsolve(A.tocsc(), B)
    x0 = ref.copy()
    x0[:, 40:] = 0.0
    X, st = solve(A, B, "method=bicgstab,precond=ilu0,history=1," + TIGHT, x0=x0)
    assert st.iterations[:35] == [0] * 35 and min(st.iterations[40:]) > 0
    assert len(st.history) == 70 and all(len(h) == i + 1 for h, i in zip(st.history, st.iterations))
    assert relerr(X, ref) < 1e-9
    # one float32 b of 100 columns: float32 back
    X32, st = solve(A, B[:, :66].astype(np.float32), "rtol=1e-6")
    assert X32.dtype == np.float32 and X32.shape == (n, 66) and st.batches == 2
    # not converged: every column's result, the first failure's status
    with pytest.raises(bsrsolve.ConvergenceError, match="maxit") as e:
        solve(A, rhs(n, 100), "precond=none,maxit=1,rtol=1e-14")
    assert e.value.x.shape == (n, 100) and e.value.stats.status == "maxit"
    assert e.value.stats.batches == 2 and e.value.stats.reason == ["maxit"] * 100


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_nonfinite_rhs_is_a_value_error(bad):
    """NaN or Inf in b (or x0) is refused before the library runs: ValueError
    naming where, not a ConvergenceError after maxit iterations."""
    A = dominant(20, 1, seed=23)
    s = Solver("method=gmres,precond=ilu0").setup(A)
    b = rhs(20)
    b[7] = bad
    with pytest.raises(ValueError, match="non-finite.*row 7") as e:
        s.solve(b)
    assert not isinstance(e.value, bsrsolve.Error)
    B = rhs(20, 3)
    B[4, 2] = bad
    with pytest.raises(ValueError, match="row 4, column 2"):
        s.solve(B)
    x0 = np.zeros(20)
    x0[0] = bad
    with pytest.raises(ValueError, match="x0"):
        s.solve(rhs(20), x0=x0)
    with pytest.raises(ValueError):
        solve(A, B)
    # the solver is as it was
    x, st = s.solve(rhs(20))
    assert st.converged and relerr(x, spla.spsolve(A.tocsc(), rhs(20))) < 1e-6


def test_stats_are_a_dataclass():
    import dataclasses
    import typing
    A = dominant(30, 2, seed=24)
    x, st = solve(A, rhs(60, 2), "method=gmres,precond=ilu2," + TIGHT)
    assert isinstance(st, bsrsolve.SolveStats) and dataclasses.is_dataclass(st)
    # attributes, typed
    hints = typing.get_type_hints(bsrsolve.SolveStats)
    for f in dataclasses.fields(st):
        assert f.name in hints, f.name
    assert hints["relres"] == typing.List[float] and hints["converged"] is bool
    assert st.converged is True and st.status == "converged" and isinstance(st.iterations[0], int)
    assert st.block_size == 2 and st.fill > 0 and "ilu2" in st.precond_info and st.batches == 1
    assert st.history is None and st.fallbacks == 0
    # the dict of earlier versions: keys, in, get, dict()
    assert st["fill"] == st.fill and st["relres"] is st.relres
    assert "history" not in st and st.get("history") is None and "fill" in st
    with pytest.raises(KeyError):
        st["no_such_key"]
    d = dict(st)
    assert d["status"] == "converged" and len(d) == len(st) and "history" not in d
    assert dataclasses.asdict(st)["options"] == st.options
    # the error control (etol, on by default for ILU2): each column's error estimated, not corrected
    # here (GMRES to 1e-12 leaves it under 100 rtol); off for ILU(0) unless asked
    assert len(st.err_est) == 2 and min(st.err_its) > 0 and st.err_rounds == [0, 0]
    assert st.err_predicted == [False, False] and st.err_low == [False, False]
    assert 0 < max(st.err_est) <= 1e-10
    x, st = solve(A, rhs(60, 2), "method=gmres,precond=ilu0," + TIGHT)
    assert st.err_its == [0, 0] and st.err_est == [0.0, 0.0]
    x, st = solve(A, rhs(60, 2), "method=gmres,precond=ilu0,etol=1e-14," + TIGHT)
    assert min(st.err_its) > 0 and min(st.err_est) > 0
    _, sth = solve(A, rhs(60), "history=1," + TIGHT)
    assert "history" in sth and sth["history"] is sth.history and len(sth.history[0]) > 1
    # the package says it is typed (PEP 561)
    assert os.path.exists(os.path.join(os.path.dirname(bsrsolve.__file__), "py.typed"))


def convection_diffusion(m, peclet=30.0):
    """The 5-point upwind convection-diffusion matrix on an m x m grid
    (nonsymmetric; CSR): what unpreconditioned Krylov methods find hard."""
    h = 1.0 / (m + 1)
    T = sp.diags([-1 - peclet * h, 2 + peclet * h, -1], [-1, 0, 1], shape=(m, m))
    I = sp.identity(m)
    return (sp.kron(I, T) + sp.kron(T, I)).tocsr()


def krylov(method, A, b, M=None, rtol=1e-8):
    """scipy's gmres or bicgstab: (x, info, iterations), rtol named as the
    installed scipy names it (tol before 1.12)."""
    import inspect
    count = [0]

    def tick(*_):
        count[0] += 1
    f = getattr(spla, method)
    kw = {"rtol" if "rtol" in inspect.signature(f).parameters else "tol": rtol, "atol": 0.0, "maxiter": 2000, "M": M,
          "callback": tick}
    if method == "gmres":
        kw.update(restart=30, callback_type="pr_norm")
    x, info = f(A, b, **kw)
    return x, info, count[0]


@pytest.mark.parametrize("options", ["precond=ilu0", "precond=ilu2", "precond=ilut,tau1=1e-3"])
@pytest.mark.parametrize("method", ["gmres", "bicgstab"])
def test_preconditioner_for_scipy_krylov(method, options):
    """bsrsolve.preconditioner as M= of scipy's gmres and bicgstab: converged,
    in far fewer iterations than without it."""
    A = convection_diffusion(40)
    b = A @ np.random.default_rng(25).uniform(-1, 1, A.shape[0])
    M = bsrsolve.preconditioner(A, options)
    assert isinstance(M, spla.LinearOperator) and M.shape == A.shape and M.dtype == np.float64
    x, info, its = krylov(method, A, b, M=M)
    assert info == 0 and np.linalg.norm(b - A @ x) <= 1e-7 * np.linalg.norm(b)
    _, info0, its0 = krylov(method, A, b)
    assert its * 3 <= its0, (its, its0, info0)


def test_preconditioner_operator():
    # tridiagonal: ILU(0) is the exact LU, so M^{-1} = A^{-1}
    A = sp.diags([-1.0, 4.0, -1.5], [-1, 0, 1], shape=(50, 50), format="csr")
    M = bsrsolve.preconditioner(A)
    v = rhs(50)
    assert np.allclose(M @ (A @ v), v, rtol=1e-12, atol=1e-12)
    assert np.allclose(M.matvec(A @ v), v) and M.matvec((A @ v).reshape(-1, 1)).shape == (50, 1)
    V = rhs(50, 3)
    Y = M.matmat(A @ V)
    assert Y.shape == (50, 3) and np.allclose(Y, V)
    assert "precond=ilu0" in M.options and M.info["fill"] == pytest.approx(1.0)
    # block matrices; refactor with new values on the pattern
    Ab = dominant(30, 3, seed=26).tobsr(blocksize=(3, 3))
    Mb = bsrsolve.Preconditioner(Ab, "precond=ilu2,tau1=1e-4")
    assert Mb.block_size == 3 and Mb.info["nnzb_A"] == Ab.nnz // 9
    r0 = np.linalg.norm(Ab @ (Mb @ rhs(90)) - rhs(90))
    Ab2 = Ab.copy()
    Ab2.data *= 2.0
    Mb.refactor(Ab2)
    r1 = np.linalg.norm(Ab2 @ (Mb @ rhs(90)) - rhs(90))
    assert r1 == pytest.approx(r0, rel=1e-9, abs=1e-12)
    # no incomplete factorization, bad options, bad sizes
    for bad in ("precond=jacobi", "precond=none", "precond=ssor", "tau1=-1", "frobnicate=1"):
        with pytest.raises(bsrsolve.ArgumentError):
            bsrsolve.preconditioner(A, bad)
    with pytest.raises(ValueError):
        M @ np.ones(49)
    with pytest.raises(TypeError):
        bsrsolve.preconditioner(A.toarray())
    with pytest.raises(bsrsolve.ArgumentError, match="pattern"):
        M.refactor(A + sp.csr_matrix(([1.0], ([0], [49])), shape=A.shape))


# ---- errors -----------------------------------------------------------------

def test_bad_inputs_raise():
    A = dominant(20, 1, seed=10)
    b = rhs(20)
    with pytest.raises(ValueError, match="square"):
        solve(sp.random(20, 10, density=0.3, format="csr"), b)
    with pytest.raises(TypeError):
        solve(A.toarray(), b)
    with pytest.raises(TypeError):
        solve(A.astype(np.complex128), b)
    with pytest.raises(ValueError, match="rows"):
        solve(A, rhs(21))
    with pytest.raises(ValueError):
        solve(A, np.zeros((20, 2, 2)))
    with pytest.raises(ValueError, match="no columns"):
        solve(A, np.zeros((20, 0)))
    with pytest.raises(TypeError):
        solve(A, b.astype(np.complex128))
    with pytest.raises(TypeError):
        solve(A, np.array(["a"] * 20))
    with pytest.raises(ValueError, match="x0"):
        solve(A, rhs(20, 2), x0=np.zeros(20))
    with pytest.raises(ValueError, match="divide"):
        solve(A, b, blocksize=3)
    with pytest.raises(ValueError):
        solve(sp.csr_matrix((0, 0)), np.zeros(0))
    with pytest.raises(TypeError):
        Solver(options=3)


def test_library_errors_carry_the_message():
    A = dominant(20, 1, seed=11)
    b = rhs(20)
    with pytest.raises(bsrsolve.ArgumentError, match="frobnicate") as e:
        Solver("method=bicgstab,frobnicate=1")
    assert isinstance(e.value, ValueError) and isinstance(e.value, bsrsolve.Error)
    assert e.value.status_name == "invalid argument" and e.value.status == 1
    with pytest.raises(bsrsolve.ArgumentError, match="precond"):
        Solver("precond=magic")
    with pytest.raises(ValueError, match="backend"):
        Solver("", backend="gpu")
    bad = A.copy()
    bad.data[3] = np.nan
    with pytest.raises(bsrsolve.Error):
        solve(bad, b)
    with pytest.raises(bsrsolve.Error):  # b > 10 is not supported
        solve(dominant(2, 11).tobsr(blocksize=(11, 11)), rhs(22))
    s = Solver()
    with pytest.raises(bsrsolve.Error, match="setup"):
        s.solve(b)
    with pytest.raises(bsrsolve.Error, match="setup"):
        s.refactor(A)
    # a structurally singular matrix (an empty row) is refused by the
    # factorization; the solver is usable again after a good setup
    Z = sp.csr_matrix(np.array([[1.0, 0.0], [0.0, 0.0]]))
    with pytest.raises(bsrsolve.Error, match="singular") as e:
        s.setup(Z)
    assert e.value.status_name == "singular pivot"
    with pytest.raises(bsrsolve.Error, match="setup"):
        s.solve([1.0, 2.0])
    s.setup(A)
    assert relerr(s.solve(b)[0], spla.spsolve(A.tocsc(), b)) < 1e-6


def test_low_level_arguments_checked():
    """The extension checks every size itself: wrong buffers are exceptions."""
    s = bsrsolve._core.Solver("", "cpu")
    i32 = lambda *v: np.array(v, dtype=np.int32)
    i64 = lambda *v: np.array(v, dtype=np.int64)
    one = np.ones(1)
    bad = [
        ("bsr", 1, 1, 1, i32(0), i32(0), one),            # indptr too short
        ("bsr", 1, 1, 1, i32(0, 2), i32(0), one),         # nnzb 2, one index
        ("bsr", 1, 1, 2, i32(0, 1), i32(0), one),         # one value for a 2 x 2 block
        ("bsr", -1, 1, 1, i32(0), i32(), one),
        ("csr", 2, 0, i64(0, 1, 2), i32(0, 5), np.ones(2)),   # column out of range
        ("csr", 2, 0, i64(0, 2, 1), i32(0, 1), np.ones(2)),   # indptr decreasing
        ("csr", 1, 0, i64(0, 2), i32(0, 0), np.ones(2)),      # duplicate
        ("csr", 1, 0, i32(0, 1), i32(0), one),                # int32 indptr for int64
        ("coo", 1, 0, i64(0, 1), i32(0), one),
    ]
    for args in bad:
        with pytest.raises((ValueError, TypeError)):
            s.setup(*args)
    with pytest.raises(bsrsolve.Error):
        s.solve(one, np.zeros(1), 1, 1)  # before setup
    s.setup("csr", 2, 0, i64(0, 1, 2), i32(0, 1), np.ones(2))
    for b, x, n, k in [(one, np.zeros(2), 2, 1), (np.ones(2), np.zeros(2), 2, 2), (np.ones(2), np.zeros(2), 3, 1),
                       (np.ones(2), np.zeros(2), 2, 0), (np.ones(2), b"xx" * 8, 2, 1)]:
        with pytest.raises((ValueError, TypeError)):
            s.solve(b, x, n, k)
    x = np.zeros(2)
    assert s.solve(np.ones(2), x, 2, 1)[0] and np.allclose(x, 1.0)


def test_set_tolerances():
    """one setup, a loose then a tight solve: more iterations, no new setup."""
    A = dominant(150, 2, seed=21)
    b = rhs(A.shape[0])
    s = Solver("method=gmres,precond=jacobi,rtol=1e-8").setup(A)
    assert s.tolerances == (1e-8, 0.0, 1000)
    x1, st1 = s.set_tolerances(rtol=1e-3).solve(b)
    assert s.tolerances == (1e-3, 0.0, 1000) and "rtol=0.001" in s.options
    assert 1e-10 < st1["relres"][0] <= 1e-3
    x2, st2 = s.set_tolerances(rtol=1e-11, maxit=500).solve(b)
    assert st2["iterations"][0] > st1["iterations"][0] and st2["relres"][0] <= 1e-11
    assert st2["setup_s"] == st1["setup_s"]  # no new setup
    assert relerr(x2, spla.spsolve(A.tocsc(), b)) < 1e-9
    with pytest.raises(bsrsolve.ConvergenceError, match="maxit"):
        s.set_tolerances(maxit=1).solve(b)
    for bad in ({"rtol": -1.0}, {"atol": float("nan")}, {"rtol": float("inf")}, {"maxit": -1}):
        with pytest.raises(bsrsolve.ArgumentError):
            s.set_tolerances(**bad)
    assert s.tolerances == (1e-11, 0.0, 1)


def test_error_estimate():
    """the estimate of a loose solve's error is near the error to spsolve's
    solution, per column; a solve of A e = r stopped short is a lower bound;
    the solver's later solves are unchanged."""
    A = dominant(150, 2, seed=23)
    b = rhs(A.shape[0], 2)
    s = Solver("method=gmres,precond=jacobi,rtol=1e-4").setup(A)
    x, _ = s.solve(b)
    est, its, low = s.error_estimate(b, x)
    ref = spla.spsolve(A.tocsc(), b)
    err = np.linalg.norm(x - ref, axis=0) / np.linalg.norm(x, axis=0)
    assert est.shape == (2,) and its > 0 and not low
    assert np.all(est > err / 1.5) and np.all(est < 1.5 * err)
    x2, _ = s.solve(b)
    assert np.array_equal(x, x2)
    est1, its1, low1 = s.set_tolerances(maxit=1).error_estimate(b[:, 0], x[:, 0])
    assert its1 == 1 and low1 and 0 < est1[0] < est[0]
    with pytest.raises(ValueError):
        s.error_estimate(b, x[:, 0])


def test_not_converged():
    A = dominant(200, 1, seed=12, density=0.05)
    b = rhs(200)
    with pytest.raises(bsrsolve.ConvergenceError, match="maxit") as e:
        solve(A, b, "precond=none,maxit=2,rtol=1e-14")
    assert e.value.stats["status"] == "maxit" and e.value.stats["iterations"] == [2]
    assert e.value.x.shape == b.shape and e.value.status_name == "maxit"
    x, st = solve(A, b, "precond=none,maxit=2,rtol=1e-14", check=False)
    assert not st["converged"] and st["reason"] == ["maxit"]
    assert np.linalg.norm(b - A @ x) < np.linalg.norm(b)  # an iterate, not garbage


def test_threads_share_nothing():
    """Solvers in threads (the GIL is released while the library works)."""
    A = dominant(80, 2, seed=13)
    ref = spla.spsolve(A.tocsc(), np.eye(160)[:, :4])
    out = [None] * 4

    def work(j):
        out[j] = solve(A, np.eye(160)[:, j], TIGHT)[0]
    ts = [threading.Thread(target=work, args=(j,)) for j in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    for j in range(4):
        assert relerr(out[j], ref[:, j]) < 1e-9


# ---- backends -----------------------------------------------------------------

def test_backend_selection():
    assert isinstance(bsrsolve.has_cuda(), bool)
    assert bsrsolve.device_count() >= 0
    A = dominant(30, 3, seed=14)
    b = rhs(90)
    x, st = solve(A, b, "method=bicgstab,precond=ilu0," + TIGHT, backend="auto")
    assert relerr(x, spla.spsolve(A.tocsc(), b)) < 1e-9
    assert st["device"] == bsrsolve.has_cuda()
    if not bsrsolve.has_cuda():
        with pytest.raises(bsrsolve.Error):
            Solver("", backend="cuda")


def test_cpu_backend():
    A = dominant(30, 2, seed=18)
    s = bsrsolve.Solver("", backend="cpu").setup(A)
    x, st = s.solve(rhs(60))
    assert s.backend == "cpu" and st["backend"] == "cpu" and not st["device"]


@pytest.mark.skipif(not bsrsolve.has_cuda(), reason="no usable CUDA device (or a CPU-only build)")
@pytest.mark.parametrize("options,k", [("method=bicgstab,precond=ilu0", 3), ("method=gmres,precond=ilu2", 1),
                                       ("method=bicgstab,precond=jacobi", 2)])
def test_cuda_matches_spsolve(options, k):
    A = dominant(200, 4, seed=15).tobsr(blocksize=(4, 4))
    B = rhs(A.shape[0], k)
    s = Solver(options + "," + TIGHT, backend="cuda")
    X, st = s.setup(A).solve(B)
    assert st["device"] and s.backend.startswith("cuda")
    assert relerr(X, spla.spsolve(A.tocsc(), B)) < 1e-9
    A2 = A.copy()
    A2.data *= 1.5
    X2, _ = s.refactor(A2).solve(B)
    assert relerr(X2, X / 1.5) < 1e-9


# ---- real matrices -------------------------------------------------------------

REAL_DIR = os.environ.get("BSR_REAL_DIR") or os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "shared", "matrices", "real")

# (file, options, block size (None: the library's choice), tolerance against spsolve):
# the small ones, where spsolve is fast; tolerances ~100x the error measured
REAL = [
    ("e05r0000.mtx", "method=gmres,precond=ilu0", None, 1e-6),
    ("fasp_e05r0500.mtx", "method=bicgstab,precond=ilu2", None, 1e-5),
    ("fasp_gre__115.mtx", "method=bicgstab,precond=ilu2", None, 1e-8),
    ("fasp_jpwh_991.mtx", "method=gmres,precond=ilu0", None, 1e-7),
    ("fasp_sherman1.mtx", "method=bicgstab,precond=ilu2", None, 1e-6),
    ("fasp_spe01_b3.mtx", "method=gmres,precond=ilu2", 3, 1e-8),
    ("fidap004.mtx", "method=gmres,precond=ilu2,restart=50", None, 1e-7),
    ("olm1000.mtx", "method=bicgstab,precond=ilu2", None, 1e-9),
    ("opm_matr33_b3.mtx", "method=gmres,precond=ilu0", None, 1e-6),
    ("orsirr_1.mtx", "method=bicgstab,precond=ilu2", None, 1e-6),
    ("sherman5.mtx", "method=gmres,precond=ilu2", None, 1e-6),
    ("steam2.mtx", "method=gmres,precond=ilu0", None, 1e-5),
    ("ginkgo_ani4.mtx", "method=bicgstab,precond=ilu2", None, 1e-6),
    ("bcsstk13.mtx", "method=bicgstab,precond=ilu2", None, 1e-4),
]


def real_matrix(name):
    path = os.path.join(REAL_DIR, name)
    if not os.path.exists(path):
        pytest.skip("real matrix %s not found (set BSR_REAL_DIR; default %s)" % (name, REAL_DIR))
    return scipy.io.mmread(path).tocsr()


@pytest.mark.parametrize("name,options,block,tol", REAL, ids=[r[0] for r in REAL])
def test_real_matrix(name, options, block, tol):
    A = real_matrix(name)
    n = A.shape[0]
    b = A @ np.random.default_rng(16).uniform(-1.0, 1.0, n)
    rhs_path = os.path.join(REAL_DIR, name.replace(".mtx", "_rhs.mtx"))
    if os.path.exists(rhs_path):  # the right-hand side distributed with it
        b = np.asarray(scipy.io.mmread(rhs_path)).ravel()
    x, st = solve(A, b, options + ",rtol=1e-10,maxit=3000", blocksize=block)
    assert relerr(x, spla.spsolve(A.tocsc(), b)) < tol
    assert np.linalg.norm(b - A @ x) / np.linalg.norm(b) < 1e-9
    if block:
        assert st["block_size"] == block


def test_real_block_size_and_many_rhs():
    A = real_matrix("opm_matr33_b3.mtx")
    assert Solver().setup(A).block_size == 3  # stored zeros do not count as fill
    A = real_matrix("sherman5.mtx")
    B = rhs(A.shape[0], 4, seed=17)
    s = Solver("method=gmres,precond=ilu2,rtol=1e-10").setup(A)
    X, st = s.solve(B)
    ref = spla.spsolve(A.tocsc(), B)
    for j in range(4):
        assert relerr(X[:, j], ref[:, j]) < 1e-6
    # refactor on a real pattern: a scaled matrix, the solution scales back
    X2, _ = s.refactor(A * 4.0).solve(B)
    assert relerr(X2, ref / 4.0) < 1e-6
