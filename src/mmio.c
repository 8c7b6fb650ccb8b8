/* SPDX-License-Identifier: BSD-3-Clause */
/* Matrix Market reader: coordinate real|integer|pattern x general|symmetric|
 * skew-symmetric into sorted CSR (duplicates summed), and array real|integer
 * x general|symmetric|skew-symmetric into dense column-major arrays.
 *
 * The file is read in large chunks and split into lines in place; indices
 * are parsed by hand (strtol is locale- and errno-heavy), reals by strtod
 * (correctly rounded, so %.17g round trips are exact).  Every error names
 * "path:line: what". */
#include "internal.h"
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#ifdef BSR_HAVE_ZLIB
#include <zlib.h>
#endif

/* ---- chunked line reader ----------------------------------------------- */

typedef struct {
    FILE *f;
#ifdef BSR_HAVE_ZLIB
    gzFile gz;            /* set instead of f for gzip-compressed files */
#endif
    const char *path;
    char *buf;
    size_t cap, beg, end; /* unread bytes are buf[beg..end) */
    int eof;
    int64_t line;         /* number of the line last returned (1-based) */
} mm_reader;

#define MM_CHUNK ((size_t)1 << 22)
/* Largest dense array accepted (values): 1 TiB of doubles; beyond, a size
 * line is taken for a mistake rather than tried as an allocation. */
#define MM_DENSE_MAX ((int64_t)1 << 37)

/* Close whichever file the reader has open. */
static void rd_close_files(mm_reader *r)
{
    if (r->f) fclose(r->f);
#ifdef BSR_HAVE_ZLIB
    if (r->gz) gzclose(r->gz);
    r->gz = NULL;
#endif
    r->f = NULL;
}

/* 1 when the file starts with the gzip magic bytes (the file position is
 * left at the start). */
static int is_gzip(FILE *f)
{
    unsigned char m[2];
    size_t got = fread(m, 1, 2, f);
    rewind(f);
    return got == 2 && m[0] == 0x1f && m[1] == 0x8b;
}

/* Open path for chunked line reading; gzip files (recognized by their first
 * bytes, whatever their name) are decompressed while read. */
static bsr_status rd_open(mm_reader *r, const char *path)
{
    memset(r, 0, sizeof *r);
    r->path = path;
    if (!path) return bsr_error(BSR_ERR_ARG, "Matrix Market: NULL path");
    /* opening is a file-read event of the fault hook: an armed one fails as EIO would */
    r->f = bsr_fault_hit(BSR_FAULT_FILE_READ) ? (errno = EIO, NULL) : fopen(path, "rb");
    if (!r->f) return bsr_error(BSR_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    /* small files get a small buffer; large ones are read MM_CHUNK at a time */
    struct stat st;
    r->cap = MM_CHUNK;
    int reg = !fstat(fileno(r->f), &st) && S_ISREG(st.st_mode);
    int gz = reg && is_gzip(r->f); /* a pipe cannot be rewound: read as text */
    if (reg && !gz && (uint64_t)st.st_size < MM_CHUNK)
        r->cap = (size_t)st.st_size < 4096 ? 4096 : (size_t)st.st_size + 1;
    if (gz) {
#ifdef BSR_HAVE_ZLIB
        /* gzdopen takes over a duplicate so that fclose below leaves it open */
        int fd = dup(fileno(r->f));
        fclose(r->f);
        r->f = NULL;
        if (fd < 0 || !(r->gz = gzdopen(fd, "rb"))) {
            if (fd >= 0) close(fd);
            return bsr_error(BSR_ERR_IO, "%s: cannot open for gzip decompression", path);
        }
#else
        fclose(r->f);
        r->f = NULL;
        return bsr_error(BSR_ERR_UNSUPPORTED, "%s: gzip-compressed, but this build of bsrsolve has no zlib "
                         "(install zlib1g-dev and rebuild, or gunzip the file)", path);
#endif
    }
    r->buf = bsr_malloc(r->cap + 1, "Matrix Market read buffer");
    if (!r->buf) { rd_close_files(r); return BSR_ERR_NOMEM; }
    return BSR_OK;
}

/* Close the reader and free its buffer. */
static void rd_close(mm_reader *r)
{
    rd_close_files(r);
    free(r->buf);
    r->buf = NULL;
}

/* Read up to n bytes into p: the count, 0 at end of input, or -(status) on
 * a read error or a corrupt / truncated gzip stream.  Each call is a
 * file-read event of the fault hook (an armed one fails as EIO would). */
static int64_t rd_raw(mm_reader *r, char *p, size_t n)
{
    if (bsr_fault_hit(BSR_FAULT_FILE_READ))
        return -(int64_t)bsr_error(BSR_ERR_IO, "%s:%lld: read error: %s", r->path, (long long)r->line + 1, strerror(EIO));
#ifdef BSR_HAVE_ZLIB
    if (r->gz) {
        if (n > INT32_MAX) n = INT32_MAX;
        int got = gzread(r->gz, p, (unsigned)n);
        int zerr = Z_OK;
        const char *msg = got > 0 ? NULL : gzerror(r->gz, &zerr);
        if (got > 0) return got;
        if (zerr == Z_OK || zerr == Z_STREAM_END) return 0;
        if (zerr == Z_ERRNO) msg = strerror(errno);
        return -(int64_t)bsr_error(zerr == Z_MEM_ERROR ? BSR_ERR_NOMEM : BSR_ERR_IO,
                                    "%s:%lld: gzip stream is corrupt or truncated: %s", r->path,
                                    (long long)r->line + 1, msg ? msg : "unknown zlib error");
    }
#endif
    size_t got = fread(p, 1, n, r->f);
    if (got == 0 && ferror(r->f))
        return -(int64_t)bsr_error(BSR_ERR_IO, "%s:%lld: read error: %s", r->path, (long long)r->line + 1, strerror(errno));
    return (int64_t)got;
}

/* Next line as [*s, *e), NUL-terminated at *e (the '\n' is overwritten).
 * Returns 1 for a line, 0 at end of file, or -(status) on an I/O error. */
static int rd_line(mm_reader *r, char **s, char **e)
{
    for (;;) {
        char *nl = r->end > r->beg ? memchr(r->buf + r->beg, '\n', r->end - r->beg) : NULL;
        if (nl || (r->eof && r->end > r->beg)) {
            char *start = r->buf + r->beg;
            char *stop = nl ? nl : r->buf + r->end;
            *stop = '\0'; /* buf has one spare byte past cap for the last line */
            r->beg = nl ? (size_t)(nl - r->buf) + 1 : r->end;
            *s = start; *e = stop;
            r->line++;
            return 1;
        }
        if (r->eof) return 0;
        /* no complete line left: keep the partial one, grow if it fills the buffer */
        memmove(r->buf, r->buf + r->beg, r->end - r->beg);
        r->end -= r->beg; r->beg = 0;
        if (r->end == r->cap) {
            char *nb = bsr_realloc(r->buf, 2 * r->cap + 1, "Matrix Market read buffer");
            if (!nb) return -(int)bsr_error(BSR_ERR_NOMEM, "%s:%lld: line too long to buffer", r->path, (long long)r->line + 1);
            r->buf = nb; r->cap *= 2;
        }
        int64_t got = rd_raw(r, r->buf + r->end, r->cap - r->end);
        if (got < 0) return (int)got;
        r->end += (size_t)got;
        if (got == 0) r->eof = 1;
    }
}

/* ---- tokens -------------------------------------------------------------- */

static int is_ws(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

/* Next whitespace-separated token of [*p, e): returns its start and sets *p to
 * its end; NULL when the line has no more tokens. */
static char *next_tok(char **p, char *e)
{
    char *s = *p;
    while (s < e && is_ws(*s)) s++;
    if (s == e) { *p = s; return NULL; }
    char *t = s;
    while (t < e && !is_ws(*t)) t++;
    *p = t;
    return s;
}

/* Printable copy of a token for messages (at most 40 characters). */
static const char *show(const char *s, const char *e, char out[48])
{
    int n = 0;
    for (; s < e && n < 40; s++) out[n++] = (*s >= 32 && *s < 127) ? *s : '?';
    if (s < e) { out[n++] = '.'; out[n++] = '.'; out[n++] = '.'; }
    out[n] = 0;
    return out;
}

/* Parse a decimal integer token [s, e) into *v.  0 ok, 1 not an integer,
 * 2 out of the int64 range. */
static int parse_i64(const char *s, const char *e, int64_t *v)
{
    int neg = 0;
    if (s < e && (*s == '+' || *s == '-')) neg = *s++ == '-';
    if (s == e) return 1;
    uint64_t x = 0;
    for (; s < e; s++) {
        unsigned d = (unsigned char)*s - '0';
        if (d > 9) return 1;
        if (x > (UINT64_MAX - d) / 10) return 2;
        x = x * 10 + d;
    }
    if (x > (uint64_t)INT64_MAX + neg) return 2;
    *v = neg ? (int64_t)(0 - x) : (int64_t)x;
    return 0;
}

/* Case-insensitive equality of token [s, e) and lowercase word w. */
static int tok_is(const char *s, const char *e, const char *w)
{
    for (; s < e && *w; s++, w++) {
        char c = *s;
        if (c >= 'A' && c <= 'Z') c += 'a' - 'A';
        if (c != *w) return 0;
    }
    return s == e && !*w;
}

/* ---- header ------------------------------------------------------------- */

enum { MM_REAL, MM_INTEGER, MM_PATTERN };
enum { MM_GENERAL, MM_SYMMETRIC, MM_SKEW };

typedef struct {
    int array;            /* 1: array (dense), 0: coordinate */
    int field, symm;
    int64_t nrows, ncols, nnz; /* nnz: announced entries (coordinate) */
    int64_t size_line;
} mm_header;

/* Record "path:line: what" for the current line and return st. */
static bsr_status rd_err(const mm_reader *r, bsr_status st, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
static bsr_status rd_err(const mm_reader *r, bsr_status st, const char *fmt, ...)
{
    char what[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return bsr_error(st, "%s:%lld: %s", r->path, (long long)r->line, what);
}

/* Next line that is neither blank nor a comment: 1, 0 at EOF, or -(status).
 * A banner after the first line is an error, not a comment: it means two
 * files were concatenated, and merging them silently gives a wrong matrix. */
static int data_line(mm_reader *r, char **s, char **e)
{
    for (;;) {
        int got = rd_line(r, s, e);
        if (got <= 0) return got;
        char *p = *s;
        while (p < *e && is_ws(*p)) p++;
        if (p < *e && *p != '%') { *s = p; return 1; }
        char *q = p, *t = next_tok(&q, *e);
        if (t && tok_is(t, q, "%%matrixmarket"))
            return -(int)rd_err(r, BSR_ERR_PARSE, "second %%%%MatrixMarket banner (concatenated files?)");
    }
}

/* Parse one size token, 0 <= value <= max. */
static bsr_status size_tok(mm_reader *r, char **p, char *e, const char *what, int64_t max, int64_t *v)
{
    char sh[48];
    char *t = next_tok(p, e);
    if (!t) return rd_err(r, BSR_ERR_PARSE, "size line too short: missing %s", what);
    int rc = parse_i64(t, *p, v);
    if (rc == 1) return rd_err(r, BSR_ERR_PARSE, "%s '%s' is not an integer", what, show(t, *p, sh));
    if (rc == 2 || *v > max) return rd_err(r, BSR_ERR_PARSE, "%s %s exceeds %lld", what, show(t, *p, sh), (long long)max);
    if (*v < 0) return rd_err(r, BSR_ERR_PARSE, "%s %lld is negative", what, (long long)*v);
    return BSR_OK;
}

/* Banner, comments and size line. */
static bsr_status read_header(mm_reader *r, mm_header *h)
{
    char *s, *e, *p, sh[48];
    memset(h, 0, sizeof *h);
    int got = rd_line(r, &s, &e);
    if (got < 0) return (bsr_status)-got;
    if (got == 0) { r->line = 1; return rd_err(r, BSR_ERR_PARSE, "empty file: missing %%%%MatrixMarket banner"); }
    p = s;
    char *t[6], *te[6];
    int nt = 0;
    for (char *x; nt < 6 && (x = next_tok(&p, e)); nt++) { t[nt] = x; te[nt] = p; }
    if (nt == 0 || !tok_is(t[0], te[0], "%%matrixmarket"))
        return rd_err(r, BSR_ERR_PARSE, "missing %%%%MatrixMarket banner");
    if (nt < 5) return rd_err(r, BSR_ERR_PARSE, "banner needs 4 words after %%%%MatrixMarket (matrix FORMAT FIELD SYMMETRY)");
    if (nt > 5) return rd_err(r, BSR_ERR_PARSE, "extra word '%s' in banner", show(t[5], te[5], sh));
    if (!tok_is(t[1], te[1], "matrix"))
        return rd_err(r, BSR_ERR_PARSE, "unsupported object '%s' (only 'matrix')", show(t[1], te[1], sh));
    if (tok_is(t[2], te[2], "coordinate")) h->array = 0;
    else if (tok_is(t[2], te[2], "array")) h->array = 1;
    else return rd_err(r, BSR_ERR_PARSE, "unknown format '%s' (coordinate or array)", show(t[2], te[2], sh));
    if (tok_is(t[3], te[3], "real") || tok_is(t[3], te[3], "double")) h->field = MM_REAL;
    else if (tok_is(t[3], te[3], "integer")) h->field = MM_INTEGER;
    else if (tok_is(t[3], te[3], "pattern")) h->field = MM_PATTERN;
    else if (tok_is(t[3], te[3], "complex"))
        return rd_err(r, BSR_ERR_UNSUPPORTED, "complex matrices are not supported");
    else return rd_err(r, BSR_ERR_PARSE, "unknown field '%s' (real, integer or pattern)", show(t[3], te[3], sh));
    if (tok_is(t[4], te[4], "general")) h->symm = MM_GENERAL;
    else if (tok_is(t[4], te[4], "symmetric")) h->symm = MM_SYMMETRIC;
    else if (tok_is(t[4], te[4], "skew-symmetric")) h->symm = MM_SKEW;
    else if (tok_is(t[4], te[4], "hermitian"))
        return rd_err(r, BSR_ERR_UNSUPPORTED, "hermitian matrices are not supported");
    else return rd_err(r, BSR_ERR_PARSE, "unknown symmetry '%s' (general, symmetric or skew-symmetric)", show(t[4], te[4], sh));
    if (h->field == MM_PATTERN && h->array)
        return rd_err(r, BSR_ERR_PARSE, "'array pattern' is not a valid Matrix Market type");
    if (h->field == MM_PATTERN && h->symm == MM_SKEW)
        return rd_err(r, BSR_ERR_PARSE, "'pattern skew-symmetric' is not a valid Matrix Market type");

    got = data_line(r, &s, &e);
    if (got < 0) return (bsr_status)-got;
    if (got == 0) { r->line++; return rd_err(r, BSR_ERR_PARSE, "missing size line"); }
    h->size_line = r->line;
    p = s;
    BSR_TRY(size_tok(r, &p, e, "number of rows", INT32_MAX - 1, &h->nrows));
    BSR_TRY(size_tok(r, &p, e, "number of columns", INT32_MAX - 1, &h->ncols));
    if (!h->array) BSR_TRY(size_tok(r, &p, e, "number of entries", INT64_MAX / 4, &h->nnz));
    char *x = next_tok(&p, e);
    if (x) return rd_err(r, BSR_ERR_PARSE, "extra token '%s' on size line", show(x, p, sh));
    if (h->symm != MM_GENERAL && h->nrows != h->ncols)
        return rd_err(r, BSR_ERR_SIZE, "%s matrix is %lld x %lld, not square",
                   h->symm == MM_SKEW ? "skew-symmetric" : "symmetric", (long long)h->nrows, (long long)h->ncols);
    return BSR_OK;
}

/* Parse a value token [t, e) into *v per field; errors name `what`. */
static bsr_status value_tok(mm_reader *r, int field, char *t, char *e, const char *what, double *v)
{
    char sh[48];
    if (field == MM_INTEGER) {
        int64_t x;
        int rc = parse_i64(t, e, &x);
        if (rc == 1) return rd_err(r, BSR_ERR_PARSE, "%s '%s' is not an integer", what, show(t, e, sh));
        if (rc == 2) return rd_err(r, BSR_ERR_PARSE, "integer %s '%s' overflows", what, show(t, e, sh));
        *v = (double)x;
        return BSR_OK;
    }
    char *end;
    *v = strtod(t, &end);
    if (end != e || end == t) return rd_err(r, BSR_ERR_PARSE, "%s '%s' is not a number", what, show(t, e, sh));
    if (!isfinite(*v)) return rd_err(r, BSR_ERR_VALUE, "%s '%s' is not finite", what, show(t, e, sh));
    return BSR_OK;
}

/* ---- coordinate -> CSR --------------------------------------------------- */

typedef struct { int *i, *j; double *v; int64_t n, cap; } mm_coo;

/* Free a triplet list and zero it. */
static void coo_free(mm_coo *T) { free(T->i); free(T->j); free(T->v); memset(T, 0, sizeof *T); }

/* Make room for one more entry, growing geometrically up to `max`: the
 * announced count is not trusted for a single up-front allocation. */
static int coo_grow(const mm_reader *r, mm_coo *T, int64_t max, int pattern)
{
    int64_t cap = T->cap ? 2 * T->cap : ((int64_t)1 << 16);
    if (cap > max) cap = max;
    if (cap < T->n + 1) cap = T->n + 1;
    int *ni = bsr_realloc(T->i, sizeof(int) * (size_t)cap, "Matrix Market entries");
    if (ni) T->i = ni;
    int *nj = bsr_realloc(T->j, sizeof(int) * (size_t)cap, "Matrix Market entries");
    if (nj) T->j = nj;
    double *nv = pattern ? NULL : bsr_realloc(T->v, sizeof(double) * (size_t)cap, "Matrix Market entries");
    if (nv) T->v = nv;
    if (!ni || !nj || (!pattern && !nv)) {
        rd_err(r, BSR_ERR_NOMEM, "out of memory for %lld entries", (long long)cap);
        return 0;
    }
    T->cap = cap;
    return 1;
}

/* Read all coordinate entries into T (symmetric files: lower triangle only). */
static bsr_status read_coord(mm_reader *r, const mm_header *h, mm_coo *T)
{
    char *s, *e, *p, sh[48];
    int pattern = h->field == MM_PATTERN;
    int64_t seen = 0; /* entry lines; T->n omits zero skew diagonals */
    for (;;) {
        int got = data_line(r, &s, &e);
        if (got < 0) return (bsr_status)-got;
        if (got == 0) break;
        if (seen++ == h->nnz)
            return rd_err(r, BSR_ERR_PARSE, "more entries than the %lld announced on line %lld",
                       (long long)h->nnz, (long long)h->size_line);
        p = s;
        int64_t ij[2];
        for (int k = 0; k < 2; k++) {
            const char *what = k ? "column index" : "row index";
            int64_t lim = k ? h->ncols : h->nrows;
            char *t = next_tok(&p, e);
            if (!t) return rd_err(r, BSR_ERR_PARSE, "missing %s", what);
            int rc = parse_i64(t, p, &ij[k]);
            if (rc == 1) return rd_err(r, BSR_ERR_PARSE, "%s '%s' is not an integer", what, show(t, p, sh));
            if (rc == 2 || ij[k] < 1 || ij[k] > lim)
                return rd_err(r, BSR_ERR_PARSE, "%s %s out of range 1..%lld", what, show(t, p, sh), (long long)lim);
        }
        double v = 1.0;
        if (!pattern) {
            char *t = next_tok(&p, e);
            if (!t) return rd_err(r, BSR_ERR_PARSE, "missing value");
            BSR_TRY(value_tok(r, h->field, t, p, "value", &v));
        }
        char *x = next_tok(&p, e);
        if (x) return rd_err(r, BSR_ERR_PARSE, "extra token '%s' after the entry", show(x, p, sh));
        if (h->symm != MM_GENERAL && ij[1] > ij[0])
            return rd_err(r, BSR_ERR_PARSE, "entry (%lld,%lld) above the diagonal in a %s file",
                       (long long)ij[0], (long long)ij[1], h->symm == MM_SKEW ? "skew-symmetric" : "symmetric");
        if (h->symm == MM_SKEW && ij[0] == ij[1]) {
            if (v != 0) return rd_err(r, BSR_ERR_PARSE, "nonzero diagonal entry (%lld,%lld) in a skew-symmetric file",
                                   (long long)ij[0], (long long)ij[1]);
            continue; /* an explicit zero diagonal is harmless: not stored */
        }
        if (T->n == T->cap && !coo_grow(r, T, h->nnz, pattern)) return BSR_ERR_NOMEM;
        T->i[T->n] = (int)ij[0] - 1;
        T->j[T->n] = (int)ij[1] - 1;
        if (!pattern) T->v[T->n] = v;
        T->n++;
    }
    if (seen < h->nnz) {
        r->line++;
        return rd_err(r, BSR_ERR_PARSE, "file ends after %lld of the %lld entries announced (truncated?)",
                   (long long)seen, (long long)h->nnz);
    }
    return BSR_OK;
}

/* Stable sort of one row's entries c[0..n) (values v, NULL for pattern) by
 * column: insertion sort for short rows, merge sort through tc/tv otherwise.
 * Stability keeps duplicates in file order, so their sum is reproducible. */
static void sort_row(int *c, double *v, int64_t n, int *tc, double *tv)
{
    if (n <= 16) {
        for (int64_t q = 1; q < n; q++) {
            int x = c[q];
            double y = v ? v[q] : 0;
            int64_t p = q;
            for (; p > 0 && c[p - 1] > x; p--) { c[p] = c[p - 1]; if (v) v[p] = v[p - 1]; }
            c[p] = x;
            if (v) v[p] = y;
        }
        return;
    }
    int64_t h = n / 2;
    sort_row(c, v, h, tc, tv);
    sort_row(c + h, v ? v + h : NULL, n - h, tc, tv);
    if (c[h - 1] <= c[h]) return; /* already in order */
    memcpy(tc, c, sizeof(int) * (size_t)h);
    if (v) memcpy(tv, v, sizeof(double) * (size_t)h);
    int64_t i = 0, j = h, o = 0;
    while (i < h && j < n) {
        if (c[j] < tc[i]) { c[o] = c[j]; if (v) v[o] = v[j]; j++; }
        else { c[o] = tc[i]; if (v) v[o] = tv[i]; i++; }
        o++;
    }
    for (; i < h; i++, o++) { c[o] = tc[i]; if (v) v[o] = tv[i]; }
}

/* Physical memory of this machine in bytes (0 when unknown). */
static double phys_bytes(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
    return pages > 0 && psize > 0 ? (double)pages * (double)psize : 0.0;
}

/* 1 when n CSR row pointers (int64) fit in half of physical memory (or when
 * the memory size is unknown: then the allocation itself decides).  Half:
 * the BSR conversion that follows needs another 4 bytes a row and the
 * caller's own data must fit too. */
static int rowptr_fits(uint64_t n)
{
    double mem = phys_bytes();
    return mem <= 0 || 8.0 * (double)n <= 0.5 * mem;
}

/* C = T as CSR, symmetric/skew parts mirrored, each row sorted, duplicates
 * summed.  A counting sort by row (arrays of nrows+1 only: no ncols-sized
 * work, so a wide matrix with few entries stays cheap), then each row that is
 * not already in order (files are usually sorted) is sorted on its own. */
static bsr_status coo_to_csr(mm_coo *T, int nrows, int ncols, int symm, int pattern, bsr_csr *C)
{
    int64_t tot = T->n;
    if (symm != MM_GENERAL)
        for (int64_t k = 0; k < T->n; k++) tot += T->i[k] != T->j[k];
    double sgn = symm == MM_SKEW ? -1.0 : 1.0;
    int mirror = symm != MM_GENERAL;
    memset(C, 0, sizeof *C);
    C->nrows = nrows; C->ncols = ncols;
    C->rowptr = bsr_calloc((size_t)nrows + 1, sizeof(int64_t), "CSR row pointers");
    C->colind = bsr_malloc(sizeof(int) * (size_t)tot, "CSR column indices");
    C->val = pattern ? NULL : bsr_malloc(sizeof(double) * (size_t)tot, "CSR values");
    if (!C->rowptr || !C->colind || (!pattern && !C->val)) { bsr_csr_free(C); coo_free(T); return BSR_ERR_NOMEM; }
    int64_t *rp = C->rowptr;
    for (int64_t k = 0; k < T->n; k++) {
        rp[T->i[k] + 1]++;
        if (mirror && T->i[k] != T->j[k]) rp[T->j[k] + 1]++;
    }
    for (int i = 0; i < nrows; i++) rp[i + 1] += rp[i];
    /* scatter in file order; rp[i] runs to the end of row i */
    for (int64_t k = 0; k < T->n; k++) {
        int64_t d = rp[T->i[k]]++;
        C->colind[d] = T->j[k];
        if (!pattern) C->val[d] = T->v[k];
        if (mirror && T->i[k] != T->j[k]) {
            d = rp[T->j[k]]++;
            C->colind[d] = T->i[k];
            if (!pattern) C->val[d] = sgn * T->v[k];
        }
    }
    coo_free(T);
    for (int i = nrows; i > 0; i--) rp[i] = rp[i - 1];
    rp[0] = 0;
    /* sort unsorted rows; scratch as long as the longest such row */
    int64_t maxlen = 0;
    for (int i = 0; i < nrows; i++)
        for (int64_t q = rp[i] + 1; q < rp[i + 1]; q++)
            if (C->colind[q] < C->colind[q - 1]) {
                if (rp[i + 1] - rp[i] > maxlen) maxlen = rp[i + 1] - rp[i];
                break;
            }
    if (maxlen) {
        int *tc = bsr_malloc(sizeof(int) * (size_t)maxlen, "row sort scratch");
        double *tv = pattern ? NULL : bsr_malloc(sizeof(double) * (size_t)maxlen, "row sort scratch");
        if (!tc || (!pattern && !tv)) { free(tc); free(tv); bsr_csr_free(C); return BSR_ERR_NOMEM; }
        for (int i = 0; i < nrows; i++)
            sort_row(C->colind + rp[i], pattern ? NULL : C->val + rp[i], rp[i + 1] - rp[i], tc, tv);
        free(tc); free(tv);
    }
    /* sum duplicates (adjacent now), compacting in place */
    int64_t w = 0;
    for (int i = 0; i < nrows; i++) {
        int64_t q = rp[i], end = rp[i + 1];
        rp[i] = w;
        for (; q < end; q++) {
            if (w > rp[i] && C->colind[w - 1] == C->colind[q]) {
                if (!pattern) C->val[w - 1] += C->val[q];
                continue;
            }
            C->colind[w] = C->colind[q];
            if (!pattern) C->val[w] = C->val[q];
            w++;
        }
    }
    rp[nrows] = w;
    C->nnz = w;
    return BSR_OK;
}

/* ---- array -> dense ------------------------------------------------------ */

/* Read the values of an array file into a dense column-major nrows x ncols
 * array, expanding symmetric/skew storage (lower triangle by columns). */
static bsr_status read_array(mm_reader *r, const mm_header *h, double **out)
{
    char *s, *e, *p, sh[48];
    int64_t m = h->nrows, n = h->ncols;
    if (n && m > MM_DENSE_MAX / n)
        return bsr_error(BSR_ERR_NOMEM, "%s:%lld: %lld x %lld dense array is too large", r->path,
                         (long long)h->size_line, (long long)m, (long long)n);
    /* entries expected in file order: (i,j) for j, then i >= j (symmetric: i >= j,
     * skew: i > j) */
    int64_t want = m * n;
    if (h->symm == MM_SYMMETRIC) want = n * (n + 1) / 2;
    if (h->symm == MM_SKEW) want = n * (n - 1) / 2;
    /* grow while reading: a size line is not trusted for one huge allocation */
    int64_t cap = m * n < ((int64_t)1 << 20) ? m * n : ((int64_t)1 << 20);
    double *a = bsr_malloc(sizeof(double) * (size_t)cap, "dense array");
    if (!a) return BSR_ERR_NOMEM;
    int64_t k = 0, i = h->symm == MM_SKEW ? 1 : 0, j = 0;
    for (;;) {
        int got = data_line(r, &s, &e);
        if (got < 0) { free(a); return (bsr_status)-got; }
        if (got == 0) break;
        if (k == want) {
            free(a);
            return rd_err(r, BSR_ERR_PARSE, "more values than the %lld of a %lld x %lld %s array", (long long)want,
                       (long long)m, (long long)n, h->symm == MM_GENERAL ? "general" : "symmetric");
        }
        p = s;
        char *t = next_tok(&p, e);
        double v;
        bsr_status st = value_tok(r, h->field, t, p, "value", &v);
        char *x = st ? NULL : next_tok(&p, e);
        if (x) st = rd_err(r, BSR_ERR_PARSE, "extra token '%s' (array files hold one value per line)", show(x, p, sh));
        if (st) { free(a); return st; }
        int64_t pos = j * m + i; /* storage slot of (i,j), column-major */
        int64_t need = h->symm == MM_GENERAL ? pos + 1 : m * n;
        if (need > cap) {
            int64_t nc = 2 * cap > need ? 2 * cap : need;
            if (nc > m * n) nc = m * n;
            double *na = bsr_realloc(a, sizeof(double) * (size_t)nc, "dense array");
            if (!na) { free(a); return bsr_error(BSR_ERR_NOMEM, "%s: out of memory for the dense array", r->path); }
            a = na; cap = nc;
        }
        a[pos] = v;
        if (h->symm != MM_GENERAL) a[i * m + j] = h->symm == MM_SKEW ? -v : v;
        k++;
        if (++i == m) { j++; i = h->symm == MM_SKEW ? j + 1 : j; if (h->symm == MM_GENERAL) i = 0; }
    }
    if (k < want) {
        free(a);
        r->line++;
        return rd_err(r, BSR_ERR_PARSE, "file ends after %lld of %lld values (truncated?)", (long long)k, (long long)want);
    }
    if (h->symm == MM_SKEW)
        for (int64_t d = 0; d < n; d++) a[d * m + d] = 0;
    *out = a;
    return BSR_OK;
}

/* ---- public readers ------------------------------------------------------ */

/* Open, parse the header and, for coordinate files, read into CSR.  For
 * array files *dense gets the values (when dense != NULL) else CSR gets the
 * nonzeros.  need_square: BSR_ERR_SIZE for non-square sizes. */
static bsr_status mm_read_any(const char *path, int need_square, bsr_csr *C, mm_header *hout,
                              double **dense)
{
    mm_reader r;
    mm_header h;
    BSR_TRY(rd_open(&r, path));
    bsr_status st = read_header(&r, &h);
    if (!st && need_square && h.nrows != h.ncols) {
        r.line = h.size_line;
        st = rd_err(&r, BSR_ERR_SIZE, "matrix is %lld x %lld, a square matrix is needed", (long long)h.nrows,
                 (long long)h.ncols);
    }
    if (!st && dense && h.ncols && h.nrows > MM_DENSE_MAX / h.ncols) {
        r.line = h.size_line;
        st = rd_err(&r, BSR_ERR_NOMEM, "%lld x %lld is too large for a dense array", (long long)h.nrows,
                 (long long)h.ncols);
    }
    if (!st && !dense && !rowptr_fits((uint64_t)h.nrows + 1)) {
        /* a valid size line can announce 2^31 rows with one entry: the row
         * pointers alone would then take 17 GB, which calloc grants lazily
         * and the counting sort then touches, ending in the OOM killer */
        r.line = h.size_line;
        st = rd_err(&r, BSR_ERR_NOMEM, "%lld rows need %.1f GB of row pointers, more than half of this machine's %.1f GB of memory",
                    (long long)h.nrows, 8.0 * ((double)h.nrows + 1) / 1e9, phys_bytes() / 1e9);
    }
    if (st) { rd_close(&r); return st; }
    if (hout) *hout = h;
    if (h.array) {
        double *a = NULL;
        st = read_array(&r, &h, &a);
        rd_close(&r);
        if (st) return st;
        if (dense) { *dense = a; return BSR_OK; }
        /* CSR of the nonzeros of the dense array */
        int64_t m = h.nrows, n = h.ncols, nz = 0;
        for (int64_t q = 0; q < m * n; q++) nz += a[q] != 0;
        mm_coo T = {0};
        T.i = bsr_malloc(sizeof(int) * (size_t)nz, "array entries");
        T.j = bsr_malloc(sizeof(int) * (size_t)nz, "array entries");
        T.v = bsr_malloc(sizeof(double) * (size_t)nz, "array entries");
        if (!T.i || !T.j || !T.v) { coo_free(&T); free(a); return BSR_ERR_NOMEM; }
        for (int64_t j = 0; j < n; j++)
            for (int64_t i = 0; i < m; i++)
                if (a[j * m + i] != 0) { T.i[T.n] = (int)i; T.j[T.n] = (int)j; T.v[T.n++] = a[j * m + i]; }
        free(a);
        return coo_to_csr(&T, (int)m, (int)n, MM_GENERAL, 0, C);
    }
    mm_coo T = {0};
    st = read_coord(&r, &h, &T);
    if (st) { coo_free(&T); rd_close(&r); return st; }
    rd_close(&r);
    if (dense) { /* coordinate file read as dense: go through CSR (sums duplicates) */
        bsr_csr D;
        st = coo_to_csr(&T, (int)h.nrows, (int)h.ncols, h.symm, h.field == MM_PATTERN, &D);
        if (st) return st;
        size_t mn = (size_t)h.nrows * (size_t)h.ncols;
        double *a = bsr_calloc(mn, sizeof(double), "dense array");
        if (!a) { bsr_csr_free(&D); return BSR_ERR_NOMEM; }
        for (int i = 0; i < D.nrows; i++)
            for (int64_t q = D.rowptr[i]; q < D.rowptr[i + 1]; q++)
                a[(size_t)D.colind[q] * D.nrows + i] = D.val ? D.val[q] : 1.0;
        bsr_csr_free(&D);
        *dense = a;
        return BSR_OK;
    }
    return coo_to_csr(&T, (int)h.nrows, (int)h.ncols, h.symm, h.field == MM_PATTERN, C);
}

/* C = the coordinate (or array) Matrix Market file at path as sorted CSR. */
bsr_status bsr_mm_read_csr(const char *path, bsr_csr *C)
{
    BSR_CHECK_ARG(path && C, "bsr_mm_read_csr: NULL argument");
    memset(C, 0, sizeof *C);
    return mm_read_any(path, 0, C, NULL, NULL);
}

/* A = a square Matrix Market file as BSR with block size b (0: detected). */
bsr_status bsr_mm_read(const char *path, int b, bsr_precision prec, bsr_matrix **A,
                       bsr_convert_info *info)
{
    BSR_CHECK_ARG(path && A, "bsr_mm_read: NULL argument");
    *A = NULL;
    BSR_CHECK_ARG(b >= 0 && b <= BSR_MAX_BLOCK, "bsr_mm_read: block size %d out of range 0..%d", b, BSR_MAX_BLOCK);
    bsr_csr C;
    memset(&C, 0, sizeof C);
    BSR_TRY(mm_read_any(path, 1, &C, NULL, NULL));
    bsr_status s = bsr_from_csr(&C, b, 0, prec, A, info);
    bsr_csr_free(&C);
    if (s) { /* prefix the conversion's message with the file */
        char msg[900];
        snprintf(msg, sizeof msg, "%s", bsr_last_error());
        bsr_error(s, "%s: %s", path, msg);
    }
    return s;
}

/* Dense column-major nrows x ncols array of a Matrix Market file (array or coordinate). */
bsr_status bsr_mm_read_dense(const char *path, int *nrows, int *ncols, double **val)
{
    BSR_CHECK_ARG(path && nrows && ncols && val, "bsr_mm_read_dense: NULL argument");
    *val = NULL; *nrows = *ncols = 0;
    mm_header h;
    BSR_TRY(mm_read_any(path, 0, NULL, &h, val));
    *nrows = (int)h.nrows; *ncols = (int)h.ncols;
    return BSR_OK;
}
