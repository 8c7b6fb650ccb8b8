/* SPDX-License-Identifier: BSD-3-Clause */
/* bsrsolve core: status codes, BSR matrices, multivectors, CSR conversion,
 * Matrix Market I/O and the CPU SpMM reference.  Included by bsrsolve.h. */
#ifndef BSRSOLVE_CORE_H
#define BSRSOLVE_CORE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- status ------------------------------------------------------------ */
typedef enum {
    BSR_OK = 0,
    BSR_ERR_ARG,          /* invalid argument (NULL, out-of-range option) */
    BSR_ERR_SIZE,         /* dimensions do not match */
    BSR_ERR_PARSE,        /* malformed input file */
    BSR_ERR_IO,           /* file cannot be opened / read / written */
    BSR_ERR_NOMEM,        /* host or device allocation failed */
    BSR_ERR_VALUE,        /* NaN/Inf or otherwise invalid numerical value */
    BSR_ERR_STRUCTURE,    /* invalid sparsity structure (rowptr, indices, duplicates) */
    BSR_ERR_SINGULAR,     /* singular / non-finite pivot */
    BSR_ERR_UNSUPPORTED,  /* feature, block size or kernel limit not supported */
    BSR_ERR_CUDA,         /* CUDA runtime / library error */
    BSR_ERR_NODEVICE,     /* no CUDA device, or built without CUDA */
    BSR_ERR_METIS,        /* METIS returned an error */
    BSR_ERR_NOCONV,       /* iterative method did not converge */
    BSR_ERR_BREAKDOWN,    /* iterative method broke down */
    BSR_ERR_INTERNAL      /* a bug: please report */
} bsr_status;

/* ---- version --------------------------------------------------------- */
/* The library's version, "MAJOR.MINOR.PATCH": BSR_VERSION of the headers it
 * was built from (bsrsolve.h), which may differ from the headers a program
 * was compiled with. */
const char *bsr_version(void);

/* Short fixed text of a status code. */
const char *bsr_status_string(bsr_status s);
/* Detail of the last error raised in this thread ("" if none), e.g.
 * "matrix.mtx:17: column index 0 out of range 1..300". */
const char *bsr_last_error(void);
/* Clear this thread's last-error message. */
void bsr_clear_error(void);

typedef enum { BSR_DOUBLE = 0, BSR_FLOAT = 1 } bsr_precision;
/* Size in bytes of one value of precision p. */
size_t bsr_precision_size(bsr_precision p);

/* Largest block size b accepted anywhere (library, CLI, GPU kernels). */
#define BSR_MAX_BLOCK 10

/* ---- BSR matrix ------------------------------------------------------- */
typedef struct bsr_matrix bsr_matrix;

enum {
    BSR_COLMAJOR_BLOCKS = 1u << 0, /* input blocks are column-major */
    BSR_SUM_DUPLICATES  = 1u << 1, /* sum duplicate (row,col) blocks instead of rejecting */
    BSR_ALLOW_NONFINITE = 1u << 2, /* skip the NaN/Inf check (not recommended) */
    BSR_STORED_ORDER    = 1u << 3  /* set_values: blocks in A's stored order (bsr_matrix_colind) */
};

/* Create A by copying caller arrays: nbrows x nbcols blocks of size b x b,
 * rowptr[nbrows+1] (rowptr[0] = 0), colind[nnzb] (0-based, sorted or not),
 * val[nnzb*b*b] of precision prec, each block row-major unless
 * BSR_COLMAJOR_BLOCKS.  Validates everything; unsorted rows are sorted. */
bsr_status bsr_matrix_create(bsr_matrix **A, int nbrows, int nbcols, int b,
                             const int *rowptr, const int *colind, const void *val,
                             bsr_precision prec, unsigned flags);
/* Free A and any device mirror (NULL is fine). */
void bsr_matrix_destroy(bsr_matrix *A);
/* Deep copy of A, values converted to precision prec (created from A's
 * stored arrays: its set_values order is A's stored order). */
bsr_status bsr_matrix_copy(const bsr_matrix *A, bsr_precision prec, bsr_matrix **B);
/* Replace the values of A (same pattern, same layout as at creation: the
 * blocks in the order of the colind given to bsr_matrix_create, even where it
 * sorted a row or summed duplicates; with BSR_STORED_ORDER, in the order of
 * bsr_matrix_colind(A) instead); keeps the pattern and any analysis built on
 * it.  Marks a device mirror stale. */
bsr_status bsr_matrix_set_values(bsr_matrix *A, const void *val, unsigned flags);

int bsr_matrix_nbrows(const bsr_matrix *A);
int bsr_matrix_nbcols(const bsr_matrix *A);
int bsr_matrix_block(const bsr_matrix *A);
int bsr_matrix_nnzb(const bsr_matrix *A);
bsr_precision bsr_matrix_precision(const bsr_matrix *A);
const int *bsr_matrix_rowptr(const bsr_matrix *A);
const int *bsr_matrix_colind(const bsr_matrix *A);
const void *bsr_matrix_values(const bsr_matrix *A); /* host values, row-major blocks */

/* Statistics printed by `bsrsolve --info`. */
typedef struct {
    int64_t n;              /* scalar rows = nbrows*b */
    int b, nbrows, nnzb;
    int64_t nnz_stored;     /* nnzb*b*b */
    int64_t nnz_nonzero;    /* stored values that are nonzero */
    double fill_ratio;      /* nnz_stored / nnz_nonzero (1 = blocks fully dense) */
    int structurally_symmetric; /* block pattern symmetric */
    int numerically_symmetric;  /* A == A^T exactly */
    int empty_rows;         /* block rows with no blocks */
    int missing_diag;       /* block rows without a stored diagonal block */
    int diag_dominant_rows; /* scalar rows with |a_ii| >= sum_{j!=i} |a_ij| */
    double min_row_len, mean_row_len; int max_row_len; /* blocks per row */
} bsr_matrix_info;
bsr_status bsr_matrix_get_info(const bsr_matrix *A, bsr_matrix_info *info);

/* ---- CSR (scalar) matrix: transparent, as CSparse's cs -------------------- */
typedef struct {
    int nrows, ncols;
    int64_t nnz;
    int64_t *rowptr; /* [nrows+1] */
    int *colind;     /* [nnz], sorted and unique within each row */
    double *val;     /* [nnz], NULL for pattern-only */
} bsr_csr;
void bsr_csr_free(bsr_csr *C);

/* Information returned by conversions to BSR. */
typedef struct {
    int b;             /* block size used (chosen if 0 was asked) */
    double fill_ratio; /* stored block entries / scalar nonzeros */
} bsr_convert_info;

/* A = C in BSR with blocks of size b (b = 0: largest b in 1..10 dividing n
 * whose fill ratio is <= max_fill, max_fill <= 0 meaning 1.5).  Zeros fill
 * partial blocks.  BSR_ERR_SIZE when n % b != 0. */
bsr_status bsr_from_csr(const bsr_csr *C, int b, double max_fill, bsr_precision prec,
                        bsr_matrix **A, bsr_convert_info *info);
/* C = A as a scalar CSR (explicit zeros inside blocks dropped unless keep_zeros). */
bsr_status bsr_to_csr(const bsr_matrix *A, int keep_zeros, bsr_csr *C);

/* ---- Matrix Market I/O -------------------------------------------------- */
/* Read a coordinate matrix (real|integer|pattern x general|symmetric|
 * skew-symmetric) into sorted CSR with duplicates summed.  Errors name the
 * file and line. */
bsr_status bsr_mm_read_csr(const char *path, bsr_csr *C);
/* Read a square coordinate matrix straight into BSR (b as in bsr_from_csr). */
bsr_status bsr_mm_read(const char *path, int b, bsr_precision prec, bsr_matrix **A,
                       bsr_convert_info *info);
/* Read an `array real general` (or coordinate) file as a dense column-major
 * nrows x ncols array (*val malloc'ed, caller frees). */
bsr_status bsr_mm_read_dense(const char *path, int *nrows, int *ncols, double **val);
/* Write CSR as coordinate real general (pattern-only CSR as pattern). */
bsr_status bsr_mm_write_csr(const char *path, const bsr_csr *C);
/* Write A as coordinate real general (scalar entries, zeros in blocks kept). */
bsr_status bsr_mm_write(const char *path, const bsr_matrix *A);
/* Write a dense column-major array as `array real general`. */
bsr_status bsr_mm_write_dense(const char *path, int nrows, int ncols, const double *val);

/* ---- multivectors: n rows x k vectors, row-interleaved x[i*k + j] -------- */
typedef struct bsr_multivec bsr_multivec;

bsr_status bsr_multivec_create(bsr_multivec **X, int64_t n, int k, bsr_precision prec);
void bsr_multivec_destroy(bsr_multivec *X);
int64_t bsr_multivec_rows(const bsr_multivec *X);
int bsr_multivec_cols(const bsr_multivec *X);
bsr_precision bsr_multivec_precision(const bsr_multivec *X);
/* Host data, row-interleaved (NULL for a device-only multivector). */
void *bsr_multivec_data(bsr_multivec *X);
const void *bsr_multivec_cdata(const bsr_multivec *X);
/* X(:,j) = value for all j. */
bsr_status bsr_multivec_fill(bsr_multivec *X, double value);
/* Deterministic pseudo-random values in [-1,1) from seed. */
bsr_status bsr_multivec_random(bsr_multivec *X, uint64_t seed);
/* Y = X (same shape; precisions may differ). */
bsr_status bsr_multivec_copy(bsr_multivec *Y, const bsr_multivec *X);
/* Y(:,j) += alpha[j] * X(:,j). */
bsr_status bsr_multivec_axpy(bsr_multivec *Y, const double *alpha, const bsr_multivec *X);
/* X(:,j) *= alpha[j]. */
bsr_status bsr_multivec_scale(bsr_multivec *X, const double *alpha);
/* out[j] = X(:,j) . Y(:,j), accumulated in double, deterministic. */
bsr_status bsr_multivec_dot(const bsr_multivec *X, const bsr_multivec *Y, double *out);
/* out[j] = ||X(:,j)||_2. */
bsr_status bsr_multivec_norm2(const bsr_multivec *X, double *out);
/* Copy from / to a dense column-major array with leading dimension ld >= n. */
bsr_status bsr_multivec_from_colmajor(bsr_multivec *X, const double *src, int64_t ld);
bsr_status bsr_multivec_to_colmajor(const bsr_multivec *X, double *dst, int64_t ld);

/* ---- CPU SpMM: Y = alpha*A*X + beta*Y ------------------------------------ */
typedef enum {
    BSR_SPMM_AUTO = 0,  /* backend's best (CPU: OpenMP) */
    BSR_SPMM_S1,        /* sequential CPU reference */
    BSR_SPMM_OMP        /* OpenMP CPU, row-parallel, same result bit for bit */
} bsr_spmm_kernel;
/* beta == 0 means Y is write-only (NaN in Y is not propagated).  A, X, Y in
 * the same precision; X has nbcols*b rows, Y nbrows*b rows, same k. */
bsr_status bsr_spmm(double alpha, const bsr_matrix *A, const bsr_multivec *X, double beta,
                    bsr_multivec *Y);
bsr_status bsr_spmm_cpu(bsr_spmm_kernel kernel, double alpha, const bsr_matrix *A,
                        const bsr_multivec *X, double beta, bsr_multivec *Y);

/* ---- generated problems ------------------------------------------------- */
/* A generated linear system: matrix, right-hand side(s) and exact solution
 * (xexact NULL when none is known). */
typedef struct {
    bsr_matrix *A;
    bsr_multivec *rhs;     /* k = 1 unless the generator says otherwise */
    bsr_multivec *xexact;  /* NULL when unknown */
    char name[128];        /* canonical spec, e.g. "stencil3d:32:4" */
} bsr_problem;
/* Build a problem from a spec "NAME:PARAMS", e.g. "stencil3d:G:B" (G^3 block
 * rows, b = B).  bsrsolve --gen and the tests use this. */
bsr_status bsr_generate(const char *spec, bsr_precision prec, bsr_problem *P);
void bsr_problem_free(bsr_problem *P);

#ifdef __cplusplus
}
#endif
#endif
