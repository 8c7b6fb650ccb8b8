/* SPDX-License-Identifier: BSD-3-Clause */
/* Generators whose block rows are built one at a time from a 64-bit global
 * row index (stencil3d, rotconv3d, coupled3d).  The same row code makes the serial
 * problem (bsr_generate) and a rank's rows in place (bsr_generate_rows), so
 * that the two are equal bit for bit. */
#ifndef BSR_GEN_ROWS_H
#define BSR_GEN_ROWS_H

#include "internal.h"
#include "stencil_impl.h" /* gen_args */

#define GEN_ROW_MAXBLK 7 /* blocks of a row at most: 7-point stencils */

typedef struct bsr_rowgen bsr_rowgen;
struct bsr_rowgen {
    int64_t n;        /* block rows (= block columns) */
    int b;
    int64_t reach;    /* max |column - row| of any block: how far a row's rhs reads x */
    char name[128];   /* canonical spec; empty: the spec as given */
    void *par;        /* the generator's parameters (malloc'd; bsr_rowgen_free) */
    /* Number of blocks of row i. */
    int (*count)(const bsr_rowgen *g, int64_t i);
    /* Blocks of row i, columns ascending: cols[m] and row-major b x b values
     * val[m*b*b] in double; returns m. */
    int (*row)(const bsr_rowgen *g, int64_t i, int64_t *cols, double *val);
    /* The exact solution on row i: x[0..b). */
    void (*exact)(const bsr_rowgen *g, int64_t i, double *x);
};

/* The row generators' constructors from their parameters (after "NAME:"). */
bsr_status bsr_rowgen_stencil3d(const char *params, bsr_rowgen *g); /* gen_stencil3d.c */
bsr_status bsr_rowgen_rotconv3d(const char *params, bsr_rowgen *g); /* gen_rotconv3d.c */
bsr_status bsr_rowgen_coupled3d(const char *params, bsr_rowgen *g); /* gen_coupled3d.c */

/* Cubes of n^3 cells numbered x fastest, with 7-point rows (rotconv3d,
 * coupled3d): cell (i, j, k) of block row r; the blocks of row r (the cell
 * and its neighbours inside the cube); the row itself from the cell's
 * diagonal block D and its six face blocks Nb[2 axis + (side > 0)], columns
 * ascending (-z, -y, -x, centre, +x, +y, +z), b x b row-major; the centre of
 * the cell at spacing h. */
void gen_cube_cell(int n, int64_t r, int ijk[3]);
int gen_cube_count(int n, int64_t r);
int gen_cube_row(int n, int b, int64_t r, const double *D, const double *const Nb[6], int64_t *cols, double *val);
void gen_cube_centre(int n, double h, int64_t r, double p[3]);
/* A model on the cube (rotconv3d, coupled3d): its parameters start with a
 * gen_cube: n cells per direction, b, the spacing h = 1/n, the blocks of
 * cell (i, j, k) of block row r (D and Nb as gen_cube_row takes them) and
 * component q of the exact solution at the point x. */
typedef struct gen_cube gen_cube;
struct gen_cube {
    int n, b;
    double h;
    void (*blocks)(const gen_cube *c, int i, int j, int k, int64_t r, double *D,
                   double Nb[6][BSR_MAX_BLOCK * BSR_MAX_BLOCK]);
    double (*exact)(int q, const double x[3]);
};
/* The start of a cube model's parsing: g and its parameters (size bytes, a
 * gen_cube first) zeroed, params of generator name parsed into *a
 * (positional n, b), n (default 20, 3..640) and b (default bdef,
 * 1..BSR_MAX_BLOCK) read into c; the model reads its own keys after. */
bsr_status gen_cube_args(const char *name, const char *params, int bdef, gen_cube *c, size_t size, gen_args *a,
                         bsr_rowgen *g);
/* g = the row generator of the cube model par (size bytes with a gen_cube
 * first, its n, b, blocks and exact set; h = 1/n is set here), kept in a copy
 * (what: the allocation's name). */
bsr_status gen_cube_rowgen(const gen_cube *par, size_t size, const char *what, bsr_rowgen *g);
/* A cube model as a table row: its name, default b, parameter struct (size
 * bytes, a gen_cube first, a uint64_t seed at seed_at), its real parameters,
 * its functions, and a check of the parsed values (NULL: none). */
typedef struct {
    const char *name;
    int bdef;
    size_t size, seed_at;
    const gen_real_arg *reals;
    int nreals;
    void (*blocks)(const gen_cube *c, int i, int j, int k, int64_t r, double *D,
                   double Nb[6][BSR_MAX_BLOCK * BSR_MAX_BLOCK]);
    double (*exact)(int q, const double x[3]);
    bsr_status (*check)(const void *par);
} gen_cube_kind;
/* g = the row generator of model m with parameters params (n, b, the model's
 * reals and seed; anything else refused). */
bsr_status gen_cube_make(const gen_cube_kind *m, const char *params, bsr_rowgen *g);
/* bsr_generate's entry of the row generator make: the whole problem of params. */
bsr_status gen_rowgen_generate(bsr_status (*make)(const char *, bsr_rowgen *), const char *params,
                               bsr_precision prec, bsr_problem *P);

/* The row generator a spec "NAME:PARAMS" names: *found = 0 (and BSR_OK) when
 * NAME has none; an error for bad parameters. */
bsr_status bsr_rowgen_parse(const char *spec, bsr_rowgen *g, int *found);
void bsr_rowgen_free(bsr_rowgen *g);
/* The whole problem of g (A, xexact, rhs = A xexact) as bsr_generate gives it. */
bsr_status bsr_rowgen_problem(const bsr_rowgen *g, bsr_precision prec, bsr_problem *P);

/* *W = block rows [row0, row0 + nrows) of g over the block columns [col0,
 * col0 + ncols) (stored column = global column - col0; every column of the
 * rows must lie there: g->reach says how far they go). */
bsr_status bsr_rowgen_matrix(const bsr_rowgen *g, bsr_precision prec, int64_t row0, int nrows, int64_t col0,
                             int ncols, bsr_matrix **W);
/* *X = g's exact solution on block rows [row0, row0 + nrows) (nrows*b x 1). */
bsr_status bsr_rowgen_exact(const bsr_rowgen *g, bsr_precision prec, int64_t row0, int nrows, bsr_multivec **X);

#endif
