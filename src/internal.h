/* Internal definitions shared by the library's modules (not installed). */
#ifndef BSR_INTERNAL_H
#define BSR_INTERNAL_H

#include "bsrsolve.h"
#include <stdio.h>
#include <stdlib.h>

/* Host/device residency bits of a matrix or multivector. */
enum { BSR_ON_HOST = 1, BSR_ON_DEVICE = 2 };

struct bsr_matrix {
    int nbrows, nbcols, b, nnzb;
    bsr_precision prec;
    int *rowptr;      /* [nbrows+1] */
    int *colind;      /* [nnzb], sorted, unique per row */
    void *val;        /* [nnzb*b*b], row-major blocks */
    void *dev;        /* device mirror, owned by the CUDA backend (NULL if none) */
    int dev_stale;    /* host values changed since the last upload */
};

struct bsr_multivec {
    int64_t n;
    int k;
    bsr_precision prec;
    void *data;       /* host, row-interleaved; NULL if device-only */
    void *dev;        /* device copy, owned by the CUDA backend (NULL if none) */
    int where;        /* BSR_ON_HOST | BSR_ON_DEVICE: which copies are current */
};

/* Set this thread's last error and return s.  fmt is printf-like. */
bsr_status bsr_error(bsr_status s, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* malloc/calloc that record BSR_ERR_NOMEM with what was asked for. */
void *bsr_malloc(size_t bytes, const char *what);
void *bsr_calloc(size_t count, size_t size, const char *what);

/* Internal matrix helpers (matrix.c). */
bsr_status bsr_matrix_alloc(bsr_matrix **A, int nbrows, int nbcols, int b, int nnzb,
                            bsr_precision prec);
int bsr_matrix_find(const bsr_matrix *A, int i, int j);

/* Shape/precision checks shared by CPU and GPU SpMM (spmm.c). */
bsr_status bsr_spmm_check(const char *fn, const bsr_matrix *A, const bsr_multivec *X,
                          const bsr_multivec *Y);

/* Generators (generate.c): rhs = A*xexact, and the --help listing. */
bsr_status bsr_problem_make_rhs(bsr_problem *P);
void bsr_generate_usage(FILE *f);

/* Hooks implemented by the CUDA backend (kernels/) or by src/nocuda/ stubs. */
void bsr_cuda_matrix_release(bsr_matrix *A);
void bsr_cuda_multivec_release(bsr_multivec *X);
int bsr_cuda_device_count(void); /* usable CUDA devices (0 without CUDA) */

/* Checks shared by every entry point. */
#define BSR_CHECK_ARG(cond, ...) \
    do { if (!(cond)) return bsr_error(BSR_ERR_ARG, __VA_ARGS__); } while (0)
#define BSR_TRY(expr) \
    do { bsr_status _s = (expr); if (_s != BSR_OK) return _s; } while (0)

/* Deterministic hashes (hash.c; added by the audit): splitmix64 stream, and
 * a value in [0,1) from two integers. */
uint64_t bsr_splitmix64(uint64_t *s);
double bsr_hash01(uint64_t a, uint64_t b);

/* Dispatch a function on precision: BSR_DISPATCH(p, f, args) calls f_d or f_f. */
#define BSR_DISPATCH(p, f, ...) ((p) == BSR_DOUBLE ? f##_d(__VA_ARGS__) : f##_f(__VA_ARGS__))

#endif
