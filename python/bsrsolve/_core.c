/* SPDX-License-Identifier: BSD-3-Clause */
/* bsrsolve._core: the CPython extension under the `bsrsolve` package.
 *
 * Only the CPython C API and the buffer protocol are used (no numpy C API),
 * so building needs Python.h and libbsrsolve alone; __init__.py turns scipy
 * matrices and numpy arrays into contiguous int32/int64/float64 buffers, and
 * this file checks every size again before the library sees a pointer: a bad
 * argument is a Python exception, never a crash.
 *
 * One type, Solver, owns the context, the solver and the matrix it was set
 * up with, so their destruction order (solver, matrix, context) cannot be
 * got wrong from Python. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <bsrsolve.h>
#include <limits.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* Python 3.8 and 3.9 lack these two (3.10+) */
#if PY_VERSION_HEX < 0x030A0000
static PyObject *Py_NewRef(PyObject *o)
{
    Py_INCREF(o);
    return o;
}
static int PyModule_AddObjectRef(PyObject *m, const char *name, PyObject *o)
{
    Py_INCREF(o);
    if (PyModule_AddObject(m, name, o) == 0) return 0;
    Py_DECREF(o);
    return -1;
}
#endif

static PyObject *Error, *ArgumentError, *ConvergenceError;

/* Raise the exception class for status s with the library's message. */
static PyObject *raise_status(bsr_status s)
{
    PyObject *cls = Error;
    switch (s) {
    case BSR_ERR_ARG: case BSR_ERR_SIZE: case BSR_ERR_PARSE: case BSR_ERR_VALUE:
    case BSR_ERR_STRUCTURE: cls = ArgumentError; break;
    case BSR_ERR_NOCONV: case BSR_ERR_BREAKDOWN: cls = ConvergenceError; break;
    default: break;
    }
    const char *detail = bsr_last_error();
    PyObject *exc = PyObject_CallFunction(cls, "s", detail && detail[0] ? detail : bsr_status_string(s));
    if (!exc) return NULL;
    PyObject *code = PyLong_FromLong((long)s), *name = PyUnicode_FromString(bsr_status_string(s));
    if (code && name && PyObject_SetAttrString(exc, "status", code) == 0 &&
        PyObject_SetAttrString(exc, "status_name", name) == 0)
        PyErr_SetObject(cls, exc);
    Py_XDECREF(code);
    Py_XDECREF(name);
    Py_DECREF(exc);
    return NULL;
}

/* ---- buffers ------------------------------------------------------------ */

/* Check that buffer v holds exactly n items of itemsize bytes. */
static int check_len(const Py_buffer *v, Py_ssize_t n, Py_ssize_t itemsize, const char *what)
{
    if (v->len != n * itemsize) {
        PyErr_Format(PyExc_ValueError, "%s: %zd bytes given, %zd expected", what, v->len, n * itemsize);
        return -1;
    }
    return 0;
}

/* ---- matrices from raw arrays ---------------------------------------------- */

/* A from BSR arrays (int32 indptr[nbrows+1], indices[nnzb], float64
 * data[nnzb*b*b] with row-major blocks); duplicates are summed.  Builds
 * without the GIL; returns the library status (exception not yet set) or -1
 * with a Python exception set. */
static int matrix_bsr(bsr_matrix **A, int nbrows, int nbcols, int b, Py_buffer *ip, Py_buffer *ix,
                      Py_buffer *dv)
{
    if (nbrows < 0 || nbcols < 0 || b < 1) {
        PyErr_SetString(PyExc_ValueError, "matrix: negative dimensions or block size < 1");
        return -1;
    }
    if (check_len(ip, (Py_ssize_t)nbrows + 1, 4, "indptr")) return -1;
    const int *rowptr = ip->buf;
    int nnzb = rowptr[nbrows];
    if (rowptr[0] != 0 || nnzb < 0) {
        PyErr_SetString(PyExc_ValueError, "indptr must start at 0 and end at nnzb >= 0");
        return -1;
    }
    if (check_len(ix, nnzb, 4, "indices") || check_len(dv, (Py_ssize_t)nnzb * b * b, 8, "data"))
        return -1;
    int s;
    Py_BEGIN_ALLOW_THREADS
    s = bsr_matrix_create(A, nbrows, nbcols, b, rowptr, ix->buf, dv->buf, BSR_DOUBLE, BSR_SUM_DUPLICATES);
    Py_END_ALLOW_THREADS
    return s;
}

/* A (b x b blocks, b = 0: the library picks) from an n x n scalar CSR matrix:
 * int64 indptr[n+1], int32 indices[nnz], float64 data[nnz], each row sorted
 * without duplicates (checked here: the converter relies on it). */
static int matrix_csr(bsr_matrix **A, int n, int b, Py_buffer *ip, Py_buffer *ix, Py_buffer *dv,
                      int *b_used)
{
    if (n < 0 || b < 0) {
        PyErr_SetString(PyExc_ValueError, "matrix: negative size or block size");
        return -1;
    }
    if (check_len(ip, (Py_ssize_t)n + 1, 8, "indptr")) return -1;
    const int64_t *rowptr = ip->buf;
    int64_t nnz = rowptr[n];
    if (rowptr[0] != 0 || nnz < 0 || nnz > PY_SSIZE_T_MAX / 8) {
        PyErr_SetString(PyExc_ValueError, "indptr must start at 0 and end at nnz >= 0");
        return -1;
    }
    if (check_len(ix, (Py_ssize_t)nnz, 4, "indices") || check_len(dv, (Py_ssize_t)nnz, 8, "data")) return -1;
    const int *col = ix->buf;
    for (int i = 0; i < n; i++) {
        if (rowptr[i + 1] < rowptr[i] || rowptr[i + 1] > nnz) {
            PyErr_SetString(PyExc_ValueError, "indptr must be nondecreasing and end at nnz");
            return -1;
        }
        for (int64_t p = rowptr[i]; p < rowptr[i + 1]; p++)
            if (col[p] < 0 || col[p] >= n || (p > rowptr[i] && col[p] <= col[p - 1])) {
                PyErr_SetString(PyExc_ValueError,
                                "indices: out of range, or a row not sorted or with duplicates");
                return -1;
            }
    }
    /* the converter reads these arrays only (bsr_csr's members are not const) */
    bsr_csr C = {n, n, nnz, (int64_t *)rowptr, (int *)col, (double *)dv->buf};
    bsr_convert_info info = {0, 0};
    int s;
    Py_BEGIN_ALLOW_THREADS
    s = bsr_from_csr(&C, b, 0, BSR_DOUBLE, A, &info);
    Py_END_ALLOW_THREADS
    *b_used = s ? 0 : info.b;
    return s;
}

/* Build a matrix from the arguments of setup/refactor:
 * ("bsr", nbrows, nbcols, b, indptr, indices, data) or
 * ("csr", n, b, indptr, indices, data).  NULL matrix with an exception set on
 * failure. */
static bsr_matrix *matrix_from_args(PyObject *args)
{
    const char *kind;
    int d1, d2, d3 = 0, b_used = 0, s;
    Py_buffer ip = {0}, ix = {0}, dv = {0};
    bsr_matrix *A = NULL;
    if (PyTuple_Size(args) > 0 && PyUnicode_Check(PyTuple_GET_ITEM(args, 0)) &&
        PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(args, 0), "bsr") == 0) {
        if (!PyArg_ParseTuple(args, "siiiy*y*y*", &kind, &d1, &d2, &d3, &ip, &ix, &dv)) return NULL;
        s = matrix_bsr(&A, d1, d2, d3, &ip, &ix, &dv);
    } else {
        if (!PyArg_ParseTuple(args, "siiy*y*y*", &kind, &d1, &d2, &ip, &ix, &dv)) return NULL;
        if (strcmp(kind, "csr")) {
            PyErr_SetString(PyExc_ValueError, "matrix kind must be 'bsr' or 'csr'");
            s = -1;
        } else {
            s = matrix_csr(&A, d1, d2, &ip, &ix, &dv, &b_used);
        }
    }
    PyBuffer_Release(&ip);
    PyBuffer_Release(&ix);
    PyBuffer_Release(&dv);
    if (s > 0) raise_status(s);
    if (s) {
        bsr_matrix_destroy(A);
        return NULL;
    }
    return A;
}

/* Copy T's values into A's block pattern: every block of T must be one of
 * A's (A's blocks missing from T become zero).  Returns 0, or -1 with an
 * exception set. */
static int scatter_values(bsr_matrix *A, const bsr_matrix *T)
{
    int N = bsr_matrix_nbrows(A), b = bsr_matrix_block(A);
    if (bsr_matrix_nbrows(T) != N || bsr_matrix_nbcols(T) != bsr_matrix_nbcols(A) || bsr_matrix_block(T) != b) {
        PyErr_SetString(ArgumentError, "refactor: the matrix's shape or block size differs from setup's");
        return -1;
    }
    const int *ar = bsr_matrix_rowptr(A), *ac = bsr_matrix_colind(A);
    const int *tr = bsr_matrix_rowptr(T), *tc = bsr_matrix_colind(T);
    const double *tv = bsr_matrix_values(T);
    size_t bb = (size_t)b * b;
    double *val = calloc((size_t)bsr_matrix_nnzb(A) * bb + 1, sizeof *val);
    if (!val) {
        PyErr_NoMemory();
        return -1;
    }
    int ok = 1;
    for (int i = 0; i < N && ok; i++) {
        int p = ar[i];
        for (int q = tr[i]; q < tr[i + 1]; q++) { /* both rows sorted */
            while (p < ar[i + 1] && ac[p] < tc[q]) p++;
            if (p == ar[i + 1] || ac[p] != tc[q]) {
                ok = 0;
                break;
            }
            memcpy(val + (size_t)p * bb, tv + (size_t)q * bb, bb * sizeof *val);
        }
    }
    /* val follows A's own (sorted) block order, not the order given at creation */
    int s = ok ? bsr_matrix_set_values(A, val, BSR_STORED_ORDER) : 0;
    free(val);
    if (!ok) {
        PyErr_SetString(ArgumentError, "refactor: the matrix has blocks outside the pattern given to "
                                       "setup (call setup for a new pattern)");
        return -1;
    }
    if (s) raise_status(s);
    return s ? -1 : 0;
}

/* The matrix of args (matrix_from_args) scattered into A's values, then
 * refactor(obj, A) without the GIL: None, or NULL with the Python error set;
 * *st = the refactor's status (BSR_OK where it did not run). */
static PyObject *refactor_from_args(PyObject *args, bsr_matrix *A, bsr_status (*refactor)(void *, const bsr_matrix *),
                                    void *obj, bsr_status *st)
{
    PyObject *ret = NULL;
    bsr_matrix *T = matrix_from_args(args);
    if (T && scatter_values(A, T) == 0) {
        bsr_status s;
        Py_BEGIN_ALLOW_THREADS
        s = refactor(obj, A);
        Py_END_ALLOW_THREADS
        *st = s;
        if (s) raise_status(s);
        else ret = Py_NewRef(Py_None);
    }
    bsr_matrix_destroy(T);
    return ret;
}


/* Getter: the scalar rows of the object's matrix (at closure; None for none). */
static PyObject *get_rows(PyObject *self, void *closure)
{
    const bsr_matrix *A = *(bsr_matrix **)((char *)self + (size_t)closure);
    if (!A) Py_RETURN_NONE;
    return PyLong_FromLongLong((long long)bsr_matrix_nbrows(A) * bsr_matrix_block(A));
}

/* Getter: the block size of the object's matrix (at closure; None for none). */
static PyObject *get_block(PyObject *self, void *closure)
{
    const bsr_matrix *A = *(bsr_matrix **)((char *)self + (size_t)closure);
    if (!A) Py_RETURN_NONE;
    return PyLong_FromLong(bsr_matrix_block(A));
}

/* The getset entries "rows" and "block_size" (get_rows, get_block) of the
 * object type T, whose matrix pointer A they read (the closure: its offset),
 * with their docs. */
#define MATRIX_GETSET(T, rows_doc, block_doc)                     \
    {"rows", get_rows, NULL, rows_doc, (void *)offsetof(T, A)}, \
    {"block_size", get_block, NULL, block_doc, (void *)offsetof(T, A)}

/* T, a static type of this module without GC (its head and name set): the
 * object size, doc, the hooks and tables, then PyType_Ready. */
static int ready_type(PyTypeObject *T, Py_ssize_t size, const char *doc, destructor dealloc, newfunc new_,
                      PyMethodDef *methods, PyGetSetDef *getset)
{
    T->tp_basicsize = size;
    T->tp_dealloc = dealloc;
    T->tp_flags = Py_TPFLAGS_DEFAULT;
    T->tp_doc = doc;
    T->tp_methods = methods;
    T->tp_getset = getset;
    T->tp_new = new_;
    return PyType_Ready(T);
}

/* The operands of an operator on A (solve, apply) from args (in, out, n,
 * k): the float64 buffers *iv (input) and *ov (output) of n x k values,
 * row-interleaved, checked against A's rows (ValueError naming what and
 * owner) and their lengths (naming iname, oname); *I = a copy of iv, *O the
 * output, n x k double.  0, or -1 with the Python error set (the caller
 * releases the buffers, zeroed before, and destroys *I and *O, NULL before). */
static int vector_pair(PyObject *args, const bsr_matrix *A, const char *what, const char *owner, const char *iname,
                       const char *oname, Py_buffer *iv, Py_buffer *ov, Py_ssize_t *nk, bsr_multivec **I,
                       bsr_multivec **O)
{
    Py_ssize_t n, k;
    if (!PyArg_ParseTuple(args, "y*w*nn", iv, ov, &n, &k)) return -1;
    nk[0] = n;
    nk[1] = k;
    int64_t rows = (int64_t)bsr_matrix_nbrows(A) * bsr_matrix_block(A);
    if (n != rows || k < 1 || k > INT_MAX || n > PY_SSIZE_T_MAX / 8 / k) {
        PyErr_Format(PyExc_ValueError, "%s: %zd x %zd, %s has %lld rows", what, n, k, owner, (long long)rows);
        return -1;
    }
    if (check_len(iv, n * k, 8, iname) || check_len(ov, n * k, 8, oname)) return -1;
    bsr_clear_error();
    bsr_status s = bsr_multivec_create(I, n, (int)k, BSR_DOUBLE);
    if (!s) s = bsr_multivec_create(O, n, (int)k, BSR_DOUBLE);
    if (s) {
        raise_status(s);
        return -1;
    }
    memcpy(bsr_multivec_data(*I), iv->buf, (size_t)(n * k) * 8);
    return 0;
}

/* ---- the Solver type ------------------------------------------------------ */

typedef struct {
    PyObject_HEAD
    bsr_context *ctx; /* NULL: CPU */
    bsr_solver *s;
    bsr_matrix *A;    /* the matrix of the last setup (the solver keeps a reference to it) */
    int ready;        /* setup succeeded since A was replaced */
    int busy;         /* a call runs without the GIL: a second thread must not enter */
} SolverObject;

static void Solver_dealloc(SolverObject *self)
{
    /* the objects living on a context go before it */
    bsr_solver_destroy(self->s);
    bsr_matrix_destroy(self->A);
    bsr_context_destroy(self->ctx);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* Solver(options, backend="auto", device=0) */
static PyObject *Solver_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"options", "backend", "device", NULL};
    const char *options = "", *backend = "auto";
    int device = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|ssi", kwlist, &options, &backend, &device)) return NULL;
    int cuda;
    if (!strcmp(backend, "cpu")) cuda = 0;
    else if (!strcmp(backend, "cuda")) cuda = 1;
    else if (!strcmp(backend, "auto")) cuda = bsr_device_count() > 0;
    else return PyErr_Format(PyExc_ValueError, "backend must be 'cpu', 'cuda' or 'auto', not '%s'", backend);
    SolverObject *self = (SolverObject *)type->tp_alloc(type, 0);
    if (!self) return NULL;
    bsr_clear_error();
    bsr_status s = BSR_OK;
    if (cuda) s = bsr_context_create(&self->ctx, BSR_BACKEND_CUDA, device, NULL);
    if (!s) s = bsr_solver_create_str(&self->s, self->ctx, options);
    if (s) {
        raise_status(s);
        Py_DECREF(self);
        return NULL;
    }
    return (PyObject *)self;
}

/* Refuse a call while another thread is inside this solver. */
static int enter(SolverObject *self)
{
    if (self->busy) {
        PyErr_SetString(PyExc_RuntimeError, "Solver is in use by another thread");
        return -1;
    }
    self->busy = 1;
    bsr_clear_error();
    return 0;
}

/* setup(kind, ...): the matrix as for matrix_from_args; returns the block size. */
static PyObject *Solver_setup(SolverObject *self, PyObject *args)
{
    if (enter(self)) return NULL;
    PyObject *ret = NULL;
    bsr_matrix *A = matrix_from_args(args);
    if (A) {
        bsr_status s;
        Py_BEGIN_ALLOW_THREADS
        s = bsr_solver_setup(self->s, A);
        Py_END_ALLOW_THREADS
        /* the solver no longer uses the old matrix, or (failed setup) is not
           used until the next setup succeeds */
        bsr_matrix_destroy(self->A);
        self->A = A;
        self->ready = !s;
        ret = s ? raise_status(s) : PyLong_FromLong(bsr_matrix_block(A));
    }
    self->busy = 0;
    return ret;
}

/* bsr_solver_refactor on obj (a bsr_solver), for refactor_from_args. */
static bsr_status solver_refactor(void *obj, const bsr_matrix *A) { return bsr_solver_refactor(obj, A); }

/* refactor(kind, ...): new values on setup's pattern (or a part of it). */
static PyObject *Solver_refactor(SolverObject *self, PyObject *args)
{
    if (!self->ready) {
        PyErr_SetString(Error, "refactor: call setup first (or again, after a failed setup)");
        return NULL;
    }
    if (enter(self)) return NULL;
    bsr_status s = BSR_OK;
    PyObject *ret = refactor_from_args(args, self->A, solver_refactor, self->s, &s);
    self->ready = !s;
    self->busy = 0;
    return ret;
}

/* The stats record as a dict. */
static PyObject *stats_dict(SolverObject *self, const bsr_solver_stats *st)
{
    int k = st->col ? st->k : 0, all = k > 0, hist = 0;
    const char *status = k ? "converged" : "none";
    PyObject *it = PyList_New(k), *reason = PyList_New(k), *relres = PyList_New(k), *resnorm = PyList_New(k),
             *bnorm = PyList_New(k), *restarts = PyList_New(k), *err_est = PyList_New(k),
             *err_its = PyList_New(k), *err_rounds = PyList_New(k), *err_pred = PyList_New(k),
             *err_low = PyList_New(k), *d = PyDict_New();
    if (!it || !reason || !relres || !resnorm || !bnorm || !restarts || !err_est || !err_its || !err_rounds ||
        !err_pred || !err_low || !d)
        goto fail;
    for (int j = 0; j < k; j++) {
        const bsr_col_stats *c = &st->col[j];
        int conv = bsr_reason_converged(c->reason);
        if (!conv && all) status = bsr_reason_string(c->reason);
        all &= conv;
        hist |= c->hist_len > 0;
        PyList_SET_ITEM(it, j, PyLong_FromLong(c->iterations));
        PyList_SET_ITEM(reason, j, PyUnicode_FromString(bsr_reason_string(c->reason)));
        PyList_SET_ITEM(relres, j, PyFloat_FromDouble(c->relres));
        PyList_SET_ITEM(resnorm, j, PyFloat_FromDouble(c->resnorm));
        PyList_SET_ITEM(bnorm, j, PyFloat_FromDouble(c->bnorm));
        PyList_SET_ITEM(restarts, j, PyLong_FromLong(c->restarts));
        PyList_SET_ITEM(err_est, j, PyFloat_FromDouble(c->err_est));
        PyList_SET_ITEM(err_its, j, PyLong_FromLong(c->err_its));
        PyList_SET_ITEM(err_rounds, j, PyLong_FromLong(c->err_rounds));
        PyList_SET_ITEM(err_pred, j, PyBool_FromLong(c->err_predicted));
        PyList_SET_ITEM(err_low, j, PyBool_FromLong(c->err_low));
    }
    if (PyErr_Occurred()) goto fail;
    char opts[512];
    bsr_solver_options_string(bsr_solver_get_options(self->s), opts, sizeof opts);
    PyObject *v;
#define PUT(key, expr) \
    if (!(v = (expr)) || PyDict_SetItemString(d, key, v)) { Py_XDECREF(v); goto fail; } \
    Py_DECREF(v);
    PUT("status", PyUnicode_FromString(status));
    PUT("converged", PyBool_FromLong(all));
    PUT("iterations", Py_NewRef(it));
    PUT("reason", Py_NewRef(reason));
    PUT("relres", Py_NewRef(relres));
    PUT("resnorm", Py_NewRef(resnorm));
    PUT("bnorm", Py_NewRef(bnorm));
    PUT("restarts", Py_NewRef(restarts));
    PUT("err_est", Py_NewRef(err_est));
    PUT("err_its", Py_NewRef(err_its));
    PUT("err_rounds", Py_NewRef(err_rounds));
    PUT("err_predicted", Py_NewRef(err_pred));
    PUT("err_low", Py_NewRef(err_low));
    PUT("setup_s", PyFloat_FromDouble(st->setup_s));
    PUT("setup_pc_s", PyFloat_FromDouble(st->setup_pc_s));
    PUT("setup_dev_s", PyFloat_FromDouble(st->setup_dev_s));
    PUT("solve_s", PyFloat_FromDouble(st->solve_s));
    PUT("fill", PyFloat_FromDouble(st->fill));
    PUT("pc_nnzb", PyLong_FromLongLong(st->pc_nnzb));
    PUT("pivots_regularized", PyLong_FromLong(st->pivots_regularized));
    PUT("device", PyBool_FromLong(st->device));
    PUT("pattern_new", PyBool_FromLong(st->pattern_new));
    PUT("pattern_refreshes", PyLong_FromLong(st->pattern_refreshes));
    PUT("precond_info", PyUnicode_FromString(st->precond_info));
    PUT("fallbacks", PyLong_FromLong(st->fallbacks));
    PUT("fallback_s", PyFloat_FromDouble(st->fallback_s));
    PUT("options", PyUnicode_FromString(opts));
    PUT("backend", PyUnicode_FromString(self->ctx ? bsr_context_describe(self->ctx) : "cpu"));
    PUT("block_size", PyLong_FromLong(bsr_matrix_block(self->A)));
    if (hist) {
        PyObject *h = PyList_New(k);
        if (!h) goto fail;
        for (int j = 0; j < k; j++) {
            const bsr_col_stats *c = &st->col[j];
            PyObject *row = PyList_New(c->hist_len > 0 ? c->hist_len : 0);
            if (row)
                for (int i = 0; i < c->hist_len; i++) PyList_SET_ITEM(row, i, PyFloat_FromDouble(c->history[i]));
            if (!row) {
                Py_DECREF(h);
                goto fail;
            }
            PyList_SET_ITEM(h, j, row);
        }
        PUT("history", h);
    }
#undef PUT
    Py_DECREF(it); Py_DECREF(reason); Py_DECREF(relres); Py_DECREF(resnorm); Py_DECREF(bnorm);
    Py_DECREF(restarts); Py_DECREF(err_est); Py_DECREF(err_its); Py_DECREF(err_rounds); Py_DECREF(err_pred);
    Py_DECREF(err_low);
    return d;
fail:
    Py_XDECREF(it); Py_XDECREF(reason); Py_XDECREF(relres); Py_XDECREF(resnorm); Py_XDECREF(bnorm);
    Py_XDECREF(restarts); Py_XDECREF(err_est); Py_XDECREF(err_its); Py_XDECREF(err_rounds); Py_XDECREF(err_pred);
    Py_XDECREF(err_low); Py_XDECREF(d);
    return NULL;
}

/* The vectors of a call on a solver (solve, error_estimate): b and x, the
 * buffers, as multivectors B and X (X holding x's values), the solver entered. */
typedef struct {
    Py_buffer bv, xv;
    Py_ssize_t nk[2];
    bsr_multivec *B, *X;
    int entered;
} solver_io;

/* io for args (b, x, n, k) of fn on self; -1 with the exception set. */
static int io_open(SolverObject *self, PyObject *args, const char *fn, solver_io *io)
{
    memset(io, 0, sizeof *io);
    if (!self->ready) {
        PyErr_Format(Error, "%s: call setup first (or again, after a failed setup or refactor)", fn);
        return -1;
    }
    if (vector_pair(args, self->A, "right-hand side", "the matrix", "b", "x", &io->bv, &io->xv, io->nk, &io->B, &io->X))
        return -1;
    memcpy(bsr_multivec_data(io->X), io->xv.buf, (size_t)(io->nk[0] * io->nk[1]) * 8);
    if (enter(self)) return -1;
    io->entered = 1;
    return 0;
}

/* Leave the solver, free io's vectors, release its buffers. */
static void io_close(SolverObject *self, solver_io *io)
{
    if (io->entered) self->busy = 0;
    bsr_multivec_destroy(io->B);
    bsr_multivec_destroy(io->X);
    PyBuffer_Release(&io->bv);
    PyBuffer_Release(&io->xv);
}

/* solve(b, x, n, k): b and x float64 buffers of n*k values, row-interleaved
 * (a C-contiguous n x k array); x holds the initial guess and receives the
 * solution.  Returns (converged, stats); a failure other than
 * non-convergence raises. */
static PyObject *Solver_solve(SolverObject *self, PyObject *args)
{
    solver_io io;
    bsr_solver_stats st;
    memset(&st, 0, sizeof st);
    PyObject *ret = NULL;
    if (io_open(self, args, "solve", &io)) goto out;
    bsr_status s;
    Py_BEGIN_ALLOW_THREADS
    s = bsr_solver_solve(self->s, io.B, io.X, &st);
    Py_END_ALLOW_THREADS
    if (s && s != BSR_ERR_NOCONV && s != BSR_ERR_BREAKDOWN) {
        raise_status(s);
        goto out;
    }
    /* X is the last iterate when a column did not converge: the caller decides */
    memcpy(io.xv.buf, bsr_multivec_cdata(io.X), (size_t)(io.nk[0] * io.nk[1]) * 8);
    PyObject *d = stats_dict(self, &st);
    if (d) ret = Py_BuildValue("(NN)", PyBool_FromLong(s == BSR_OK), d);
out:
    bsr_solver_stats_free(&st);
    io_close(self, &io);
    return ret;
}

/* error_estimate(b, x, n, k): bsr_solver_error_estimate of the solution x
 * of A x = b (buffers as solve's, x unchanged).  Returns (estimates, its,
 * lower_bound): a list of k relative errors, the iterations of the solve of
 * A e = b - A x, and whether it stopped short (the figures are then lower
 * bounds); any other failure raises. */
static PyObject *Solver_error_estimate(SolverObject *self, PyObject *args)
{
    solver_io io;
    PyObject *ret = NULL, *list = NULL;
    double *est = NULL;
    int its = 0;
    if (io_open(self, args, "error_estimate", &io)) goto out;
    if (!(est = malloc(sizeof(double) * (size_t)io.nk[1]))) { PyErr_NoMemory(); goto out; }
    bsr_status s;
    Py_BEGIN_ALLOW_THREADS
    s = bsr_solver_error_estimate(self->s, io.B, io.X, est, &its);
    Py_END_ALLOW_THREADS
    if (s && s != BSR_ERR_NOCONV && s != BSR_ERR_BREAKDOWN) {
        raise_status(s);
        goto out;
    }
    if (!(list = PyList_New(io.nk[1]))) goto out;
    for (Py_ssize_t j = 0; j < io.nk[1]; j++) {
        PyObject *v = PyFloat_FromDouble(est[j]);
        if (!v) goto out;
        PyList_SET_ITEM(list, j, v);
    }
    ret = Py_BuildValue("(NiN)", list, its, PyBool_FromLong(s != BSR_OK));
    list = NULL;
out:
    Py_XDECREF(list);
    free(est);
    io_close(self, &io);
    return ret;
}

/* set_tolerances(rtol, atol, maxit): the next solves' stopping tests, no new setup. */
static PyObject *Solver_set_tolerances(SolverObject *self, PyObject *args)
{
    double rtol, atol;
    int maxit;
    if (!PyArg_ParseTuple(args, "ddi", &rtol, &atol, &maxit)) return NULL;
    if (enter(self)) return NULL;
    bsr_status s = bsr_solver_set_tolerances(self->s, rtol, atol, maxit);
    self->busy = 0;
    if (s) return raise_status(s);
    Py_RETURN_NONE;
}

/* (rtol, atol, maxit) in use. */
static PyObject *Solver_get_tolerances(SolverObject *self, void *unused)
{
    (void)unused;
    const bsr_solver_options *o = bsr_solver_get_options(self->s);
    return Py_BuildValue("(ddi)", o->rtol, o->atol, o->maxit);
}

static PyObject *Solver_get_options(SolverObject *self, void *unused)
{
    (void)unused;
    char buf[512];
    return PyUnicode_FromString(bsr_solver_options_string(bsr_solver_get_options(self->s), buf, sizeof buf));
}

static PyObject *Solver_get_backend(SolverObject *self, void *unused)
{
    (void)unused;
    return PyUnicode_FromString(self->ctx ? bsr_context_describe(self->ctx) : "cpu");
}

static PyMethodDef Solver_methods[] = {
    {"setup", (PyCFunction)Solver_setup, METH_VARARGS, "setup(kind, ...): preconditioner for a new matrix"},
    {"refactor", (PyCFunction)Solver_refactor, METH_VARARGS, "refactor(kind, ...): new values, same pattern"},
    {"solve", (PyCFunction)Solver_solve, METH_VARARGS, "solve(b, x, n, k) -> (converged, stats)"},
    {"error_estimate", (PyCFunction)Solver_error_estimate, METH_VARARGS,
     "error_estimate(b, x, n, k) -> (estimates, iterations, lower_bound)"},
    {"set_tolerances", (PyCFunction)Solver_set_tolerances, METH_VARARGS,
     "set_tolerances(rtol, atol, maxit): new stopping tests, no new setup"},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef Solver_getset[] = {
    {"options", (getter)Solver_get_options, NULL, "options in use, canonical string", NULL},
    {"tolerances", (getter)Solver_get_tolerances, NULL, "(rtol, atol, maxit) in use", NULL},
    {"backend", (getter)Solver_get_backend, NULL, "'cpu' or the CUDA device description", NULL},
    MATRIX_GETSET(SolverObject, "scalar rows of the matrix set up (None before setup)",
                  "block size of the matrix set up (None before setup)"),
    {NULL, NULL, NULL, NULL, NULL}};

static PyTypeObject SolverType = {PyVarObject_HEAD_INIT(NULL, 0).tp_name = "bsrsolve._core.Solver"}; /* ready_type */

/* ---- the Preconditioner type: an incomplete factorization alone ------------ */

/* M ~ A from bsr_ilu_setup, applied as M^{-1} by bsr_ilu_apply (CPU).  Owns
 * the matrix it was factored from: refactor scatters new values into it. */
typedef struct {
    PyObject_HEAD
    bsr_ilu *F;
    bsr_matrix *A;
    char options[512]; /* the options in use, the solver's canonical string */
    int busy;          /* refactor runs without the GIL: nothing else may enter */
    int applying;      /* apply calls running without the GIL (any number at once) */
} IluObject;

static void Ilu_dealloc(IluObject *self)
{
    bsr_ilu_destroy(self->F);
    bsr_matrix_destroy(self->A);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* The factorization's options from the solver's option string: precond
 * (ilu0, ilut, ilu2), tau1, tau2, fill, cap, keep_pattern, reorder, match,
 * pivot, precond_precision, as the solver's ILU takes them on the CPU. */
static int ilu_options_from(const char *options, bsr_ilu_options *io, char *canon, size_t len)
{
    bsr_solver_options o;
    bsr_solver_options_default(&o);
    bsr_status s = bsr_solver_options_parse(&o, options);
    if (s) {
        raise_status(s);
        return -1;
    }
    if (o.precond != BSR_PC_ILU0 && o.precond != BSR_PC_ILUT && o.precond != BSR_PC_ILU2) {
        PyErr_Format(ArgumentError, "preconditioner: precond=%s is no incomplete factorization "
                                    "(ilu0, ilut or ilu2)", bsr_pc_name(o.precond));
        return -1;
    }
    bsr_solver_options_string(&o, canon, len);
    if ((s = bsr_ilu_options_from_solver(&o, io))) {
        raise_status(s);
        return -1;
    }
    return 0;
}

/* Preconditioner(options, kind, ...): options as the solver's, the matrix as
 * for matrix_from_args. */
static PyObject *Ilu_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
    if (kw && PyDict_Size(kw)) {
        PyErr_SetString(PyExc_TypeError, "Preconditioner takes positional arguments only");
        return NULL;
    }
    Py_ssize_t na = PyTuple_Size(args);
    if (na < 1 || !PyUnicode_Check(PyTuple_GET_ITEM(args, 0))) {
        PyErr_SetString(PyExc_TypeError, "Preconditioner(options, kind, ...): options must be a string");
        return NULL;
    }
    const char *options = PyUnicode_AsUTF8(PyTuple_GET_ITEM(args, 0));
    if (!options) return NULL;
    bsr_clear_error();
    bsr_ilu_options io;
    char canon[512];
    if (ilu_options_from(options, &io, canon, sizeof canon)) return NULL;
    PyObject *rest = PyTuple_GetSlice(args, 1, na);
    if (!rest) return NULL;
    bsr_matrix *A = matrix_from_args(rest);
    Py_DECREF(rest);
    if (!A) return NULL;
    IluObject *self = (IluObject *)type->tp_alloc(type, 0);
    if (!self) {
        bsr_matrix_destroy(A);
        return NULL;
    }
    self->A = A;
    memcpy(self->options, canon, sizeof canon);
    bsr_status s;
    Py_BEGIN_ALLOW_THREADS
    s = bsr_ilu_setup(A, &io, &self->F);
    Py_END_ALLOW_THREADS
    if (s) {
        raise_status(s);
        Py_DECREF(self);
        return NULL;
    }
    return (PyObject *)self;
}

/* apply(x, y, n, k): y = M^{-1} x for float64 buffers of n*k values
 * (C-contiguous n x k arrays). */
static PyObject *Ilu_apply(IluObject *self, PyObject *args)
{
    if (self->busy) {
        PyErr_SetString(PyExc_RuntimeError, "Preconditioner is being refactored by another thread");
        return NULL;
    }
    Py_buffer xv = {0}, yv = {0};
    Py_ssize_t nk[2] = {0, 0};
    bsr_multivec *X = NULL, *Y = NULL;
    PyObject *ret = NULL;
    if (vector_pair(args, self->A, "vector", "the preconditioner", "x", "y", &xv, &yv, nk, &X, &Y)) goto out;
    bsr_status s;
    /* bsr_ilu_apply is thread-safe on a const factorization: apply calls in
     * several threads at once are fine, a refactor meanwhile is not */
    self->applying++;
    Py_BEGIN_ALLOW_THREADS
    s = bsr_ilu_apply(self->F, X, Y);
    Py_END_ALLOW_THREADS
    self->applying--;
    if (s) {
        raise_status(s);
        goto out;
    }
    memcpy(yv.buf, bsr_multivec_cdata(Y), (size_t)(nk[0] * nk[1]) * 8);
    ret = Py_NewRef(Py_None);
out:
    bsr_multivec_destroy(X);
    bsr_multivec_destroy(Y);
    PyBuffer_Release(&xv);
    PyBuffer_Release(&yv);
    return ret;
}

/* bsr_ilu_refactor on obj (a bsr_ilu), for refactor_from_args. */
static bsr_status ilu_refactor(void *obj, const bsr_matrix *A) { return bsr_ilu_refactor(obj, A); }

/* refactor(kind, ...): new values on the pattern factored (or a part of it). */
static PyObject *Ilu_refactor(IluObject *self, PyObject *args)
{
    if (self->busy || self->applying) {
        PyErr_SetString(PyExc_RuntimeError, "Preconditioner is in use by another thread");
        return NULL;
    }
    self->busy = 1;
    bsr_clear_error();
    bsr_status s = BSR_OK;
    PyObject *ret = refactor_from_args(args, self->A, ilu_refactor, self->F, &s);
    self->busy = 0;
    return ret;
}

/* The factorization's statistics as a dict. */
static PyObject *Ilu_get_stats(IluObject *self, void *unused)
{
    (void)unused;
    bsr_ilu_stats st;
    bsr_clear_error();
    bsr_status s = bsr_ilu_get_stats(self->F, &st);
    if (s) return raise_status(s);
    return Py_BuildValue("{s:d,s:L,s:L,s:L,s:i,s:i,s:L,s:d,s:d,s:i}", "fill", st.fill, "nnzb_L", (long long)st.nnzb_L, "nnzb_U", (long long)st.nnzb_U,
                         "nnzb_A", (long long)st.nnzb_A, "pivots_regularized", st.pivots_regularized,
                         "scaling_fallbacks", st.scaling_fallbacks, "dropped", (long long)st.dropped,
                         "setup_s", st.setup_s, "factor_s", st.factor_s, "match_used", st.match_used);
}

static PyObject *Ilu_get_options(IluObject *self, void *unused)
{
    (void)unused;
    return PyUnicode_FromString(self->options);
}

static PyMethodDef Ilu_methods[] = {
    {"apply", (PyCFunction)Ilu_apply, METH_VARARGS, "apply(x, y, n, k): y = M^{-1} x"},
    {"refactor", (PyCFunction)Ilu_refactor, METH_VARARGS, "refactor(kind, ...): new values, same pattern"},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef Ilu_getset[] = {
    {"stats", (getter)Ilu_get_stats, NULL, "the factorization's statistics (dict)", NULL},
    {"options", (getter)Ilu_get_options, NULL, "options in use, the solver's canonical string", NULL},
    MATRIX_GETSET(IluObject, "scalar rows", "block size"),
    {NULL, NULL, NULL, NULL, NULL}};

static PyTypeObject IluType = {PyVarObject_HEAD_INIT(NULL, 0).tp_name = "bsrsolve._core.Preconditioner"}; /* ready_type */

/* ---- module ---------------------------------------------------------------- */

static PyObject *device_count(PyObject *m, PyObject *unused)
{
    (void)m; (void)unused;
    return PyLong_FromLong(bsr_device_count());
}

static PyMethodDef module_methods[] = {
    {"device_count", device_count, METH_NOARGS, "Usable CUDA devices (0 in a CPU-only build)."},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module_def = {PyModuleDef_HEAD_INIT, "bsrsolve._core",
                                        "C extension of bsrsolve (see the package)", -1, module_methods,
                                        NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__core(void)
{
    if (ready_type(&SolverType, sizeof(SolverObject), "Low-level solver; use bsrsolve.Solver.",
                   (destructor)Solver_dealloc, Solver_new, Solver_methods, Solver_getset) < 0 ||
        ready_type(&IluType, sizeof(IluObject), "Low-level incomplete factorization; use bsrsolve.preconditioner.",
                   (destructor)Ilu_dealloc, Ilu_new, Ilu_methods, Ilu_getset) < 0)
        return NULL;
    PyObject *m = PyModule_Create(&module_def);
    if (!m) return NULL;
    Error = PyErr_NewExceptionWithDoc("bsrsolve.Error",
                                      "A library call failed; .status and .status_name give the code.", NULL, NULL);
    PyObject *bases = Error ? PyTuple_Pack(2, Error, PyExc_ValueError) : NULL;
    ArgumentError = bases ? PyErr_NewExceptionWithDoc("bsrsolve.ArgumentError",
                                                      "The library refused an argument (options, matrix, sizes).",
                                                      bases, NULL)
                          : NULL;
    Py_XDECREF(bases);
    ConvergenceError = Error ? PyErr_NewExceptionWithDoc("bsrsolve.ConvergenceError",
                                                         "A column did not converge; .x and .stats hold the "
                                                         "last iterate and the statistics.", Error, NULL)
                             : NULL;
    if (!ArgumentError || !ConvergenceError || PyModule_AddObjectRef(m, "Error", Error) ||
        PyModule_AddObjectRef(m, "ArgumentError", ArgumentError) ||
        PyModule_AddObjectRef(m, "ConvergenceError", ConvergenceError) ||
        PyModule_AddObjectRef(m, "Solver", (PyObject *)&SolverType) ||
        PyModule_AddObjectRef(m, "Preconditioner", (PyObject *)&IluType) ||
        PyModule_AddStringConstant(m, "LIBRARY_VERSION", BSR_VERSION)) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
