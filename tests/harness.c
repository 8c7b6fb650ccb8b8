/* SPDX-License-Identifier: BSD-3-Clause */
/* Shared CUnit harness and helpers for the bsrsolve test suites. */
#include "harness.h"
#include "internal.h"
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* Run one CUnit suite; exit code 0 ok, 1 failures. */
int bsr_test_main(const char *suite, const bsr_test *tests, int argc, char **argv)
{
    (void)argc; (void)argv;
    if (CU_initialize_registry() != CUE_SUCCESS) return 1;
    CU_pSuite s = CU_add_suite(suite, NULL, NULL);
    /* BSR_TEST_FILTER=substring runs only the matching tests (e.g. "GPU" on the GPU machine) */
    const char *flt = getenv("BSR_TEST_FILTER");
    for (const bsr_test *t = tests; t->name; t++)
        if (!flt || strstr(t->name, flt)) CU_add_test(s, t->name, t->fn);
    CU_basic_set_mode(CU_BRM_VERBOSE);
    CU_basic_run_tests();
    unsigned failed = CU_get_number_of_failures() + CU_get_number_of_tests_failed();
    unsigned run = CU_get_number_of_tests_run();
    CU_cleanup_registry();
    if (run == 0) { printf("%s: no test ran\n", suite); return 1; }
    return failed ? 1 : 0;
}

/* bsr_test_main inside a fresh temporary folder (name in dir), removed afterwards. */
int bsr_test_main_tmpdir(const char *suite, const bsr_test *tests, int argc, char **argv, char *dir,
                         size_t n)
{
    const char *t = getenv("TMPDIR");
    snprintf(dir, n, "%s/bsr_%s_XXXXXX", t && t[0] ? t : "/tmp", suite);
    if (!mkdtemp(dir)) { perror("mkdtemp"); return 1; }
    int rc = bsr_test_main(suite, tests, argc, argv);
    char cmd[1100];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    return rc;
}

/* Nonzero when a CUDA device is usable; otherwise prints why once. */
int bsr_test_have_gpu(void)
{
    static int have = -1;
    if (have < 0) {
        have = bsr_cuda_device_count() > 0;
        if (!have) printf("\n  [skip] no CUDA device (or built without CUDA): GPU checks skipped\n");
    }
    return have;
}

/* BSR_TEST_QUICK set and not "0": the GPU suites' smaller runs (read once). */
int bsr_test_quick(void)
{
    static int quick = -1;
    if (quick < 0) {
        const char *q = getenv("BSR_TEST_QUICK");
        quick = q && q[0] && strcmp(q, "0") != 0;
        if (quick) printf("\n  [quick] BSR_TEST_QUICK: reduced sizes and combinations\n");
    }
    return quick;
}

/* Real-matrix folder ($BSR_REAL_DIR or ../shared/matrices/real), "" when absent. */
const char *bsr_test_real_dir(void)
{
    static char dir[4096];
    const char *d = getenv("BSR_REAL_DIR");
    struct stat st;
    if (!d || stat(d, &st) || !S_ISDIR(st.st_mode)) {
        printf("\n  [skip] real matrices folder %s absent: real-matrix checks skipped\n", d ? d : "(BSR_REAL_DIR unset)");
        return "";
    }
    snprintf(dir, sizeof dir, "%s", d);
    return dir;
}

/* qsort comparison of C-string pointers. */
static int cmp_pstr(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Sorted *.mtx paths of the real-matrix folder (at most max). */
int bsr_test_real_list(char ***list, int max)
{
    *list = NULL;
    const char *dir = bsr_test_real_dir();
    DIR *d = dir[0] ? opendir(dir) : NULL;
    if (!d) return 0;
    int n = 0, cap = 0;
    char **v = NULL;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (len < 5 || strcmp(e->d_name + len - 4, ".mtx")) continue;
        if (n == cap) {
            char **nv = realloc(v, sizeof *v * (size_t)(cap = cap ? 2 * cap : 64));
            if (!nv) break;
            v = nv;
        }
        size_t sz = strlen(dir) + len + 2;
        if (!(v[n] = malloc(sz))) break;
        snprintf(v[n++], sz, "%s/%s", dir, e->d_name);
    }
    closedir(d);
    if (n) qsort(v, (size_t)n, sizeof *v, cmp_pstr);
    while (n > max) free(v[--n]);
    if (!n) { free(v); v = NULL; }
    *list = v;
    return n;
}

/* Free a list from bsr_test_real_list. */
void bsr_test_free_list(char **list, int n)
{
    for (int i = 0; i < n; i++) free(list[i]);
    free(list);
}

/* Random BSR matrix with row lengths in [minlen,maxlen], values in [-1,1), deterministic from
 * seed. */
bsr_matrix *bsr_test_random_matrix(int nbrows, int nbcols, int b, int minlen, int maxlen,
                                   bsr_precision prec, uint64_t seed)
{
    uint64_t s = seed;
    if (maxlen > nbcols) maxlen = nbcols;
    if (minlen > maxlen) minlen = maxlen;
    int *rowptr = malloc(sizeof(int) * (nbrows + 1));
    int *len = malloc(sizeof(int) * (nbrows + 1));
    rowptr[0] = 0;
    for (int i = 0; i < nbrows; i++) {
        len[i] = minlen + (int)(bsr_splitmix64(&s) % (uint64_t)(maxlen - minlen + 1));
        rowptr[i + 1] = rowptr[i] + len[i];
    }
    int nnzb = rowptr[nbrows];
    int *col = malloc(sizeof(int) * (nnzb + 1));
    char *used = calloc(nbcols + 1, 1);
    for (int i = 0; i < nbrows; i++) {
        for (int p = rowptr[i]; p < rowptr[i + 1]; p++) {
            int j;
            do j = (int)(bsr_splitmix64(&s) % (uint64_t)nbcols); while (used[j]);
            used[j] = 1;
            col[p] = j;
        }
        for (int p = rowptr[i]; p < rowptr[i + 1]; p++) used[col[p]] = 0;
    }
    size_t nv = (size_t)nnzb * b * b;
    void *val = malloc(bsr_precision_size(prec) * (nv + 1));
    for (size_t e = 0; e < nv; e++) {
        double v = (double)(bsr_splitmix64(&s) >> 11) * (2.0 / 9007199254740992.0) - 1.0;
        if (prec == BSR_DOUBLE) ((double *)val)[e] = v; else ((float *)val)[e] = (float)v;
    }
    bsr_matrix *A = NULL;
    bsr_status st = bsr_matrix_create(&A, nbrows, nbcols, b, rowptr, col, val, prec, 0);
    if (st) fprintf(stderr, "random matrix: %s\n", bsr_last_error());
    free(rowptr); free(len); free(col); free(used); free(val);
    return A;
}

/* Columns of row i of bsr_test_irregular_matrix into col (sorted); returns how many. */
static int irregular_row(int n, int i, uint64_t *s, int *col, char *used)
{
    int len = 0, extra = (int)(bsr_splitmix64(s) % 8) + (i % 97 == 0 ? 40 : 0);
    if (i % 7 != 3) col[len++] = i;
    else col[len++] = i - 1;           /* no diagonal; never empty */
    if (i % 7 == 2 && i + 1 < n) col[len++] = i + 1;   /* covers column i+1 */
    for (int t = 0; t < extra; t++) {
        uint64_t r = bsr_splitmix64(s);
        int j = r & 1 ? (int)((r >> 1) % (uint64_t)n) : i - 40 + (int)((r >> 1) % 81);
        if (j >= 0 && j < n && j != i) col[len++] = j;
    }
    int m = 0;   /* sort, drop repeats */
    for (int t = 0; t < len; t++) {
        int j = col[t], q = m;
        if (used[j]) continue;
        used[j] = 1;
        while (q > 0 && col[q - 1] > j) { col[q] = col[q - 1]; q--; }
        col[q] = j;
        m++;
    }
    for (int t = 0; t < m; t++) used[col[t]] = 0;
    return m;
}

bsr_matrix *bsr_test_irregular_matrix(int n, int b, uint64_t seed)
{
    uint64_t s = seed;
    const int maxlen = 64;
    int *rowptr = malloc(sizeof(int) * ((size_t)n + 1)), *col = malloc(sizeof(int) * ((size_t)n * maxlen + 1));
    char *used = calloc((size_t)n + 1, 1);
    rowptr[0] = 0;
    for (int i = 0; i < n; i++) rowptr[i + 1] = rowptr[i] + irregular_row(n, i, &s, col + rowptr[i], used);
    size_t bb = (size_t)b * b, nv = (size_t)rowptr[n] * bb;
    double *val = malloc(sizeof(double) * (nv + 1));
    for (int i = 0; i < n; i++)
        for (int p = rowptr[i]; p < rowptr[i + 1]; p++)
            for (size_t e = 0; e < bb; e++) {
                double v = (double)(bsr_splitmix64(&s) >> 11) * (2.0 / 9007199254740992.0) - 1.0;
                val[p * bb + e] = v + (col[p] == i && e % (b + 1) == 0 ? 4.0 : 0.0);
            }
    bsr_matrix *A = NULL;
    if (bsr_matrix_create(&A, n, n, b, rowptr, col, val, BSR_DOUBLE, 0))
        fprintf(stderr, "irregular matrix: %s\n", bsr_last_error());
    free(rowptr); free(col); free(used); free(val);
    return A;
}

/* ILU(0) setup of A under ordering kind, default options but symbolic_only. */
static bsr_ilu *ilu0(const bsr_matrix *A, bsr_order_kind kind, int symbolic_only)
{
    bsr_ilu_options o;
    bsr_ilu_options_default(&o, BSR_ILU0);
    bsr_order_options_default(&o.order, kind);
    o.symbolic_only = symbolic_only;
    bsr_ilu *F = NULL;
    BSR_ASSERT_OK(bsr_ilu_setup(A, &o, &F));
    return F;
}

bsr_ilu *bsr_test_ilu0_symbolic(const bsr_matrix *A, bsr_order_kind kind) { return ilu0(A, kind, 1); }

bsr_ilu *bsr_test_ilu0(const bsr_matrix *A, bsr_order_kind kind) { return ilu0(A, kind, 0); }

bsr_solver *bsr_test_solver(bsr_context *ctx, const char *cfg, const bsr_matrix *A)
{
    bsr_solver *s = NULL;
    BSR_ASSERT_OK(bsr_solver_create_str(&s, ctx, cfg));
    if (s) BSR_ASSERT_OK(bsr_solver_setup(s, A));
    return s;
}

bsr_status bsr_test_solve(bsr_context *ctx, const char *cfg, const bsr_matrix *A, const bsr_multivec *B,
                          bsr_multivec *X, bsr_solver_stats *st)
{
    bsr_solver *s = bsr_test_solver(ctx, cfg, A);
    BSR_ASSERT_OK(bsr_multivec_fill(X, 0.0));
    bsr_status r = bsr_solver_solve(s, B, X, st);
    bsr_solver_destroy(s);
    return r;
}

int bsr_test_column_alone(const char *cfg, const bsr_matrix *A, const bsr_multivec *B, const bsr_multivec *X, int j,
                          bsr_solver_stats *st)
{
    const int64_t n = bsr_multivec_rows(B);
    const int k = bsr_multivec_cols(B);
    bsr_multivec *B1, *Y;
    BSR_ASSERT_OK(bsr_multivec_create(&B1, n, 1, BSR_DOUBLE));
    BSR_ASSERT_OK(bsr_multivec_create(&Y, n, 1, BSR_DOUBLE));
    const double *b = bsr_multivec_cdata(B), *x = bsr_multivec_cdata(X);
    double *b1 = bsr_multivec_data(B1);
    for (int64_t i = 0; i < n; i++) b1[i] = b[i * k + j];
    BSR_ASSERT_OK(bsr_test_solve(NULL, cfg, A, B1, Y, st));
    const double *y = bsr_multivec_cdata(Y);
    int same = 1;
    for (int64_t i = 0; i < n; i++) same &= y[i] == x[i * k + j];
    bsr_multivec_destroy(B1);
    bsr_multivec_destroy(Y);
    return same;
}

/* Element e of X as double. */
static double mv_get(const bsr_multivec *X, int64_t e)
{
    const void *d = bsr_multivec_cdata(X);
    return bsr_multivec_precision(X) == BSR_DOUBLE ? ((const double *)d)[e] : ((const float *)d)[e];
}

/* Max over entries of |Y - (alpha A X + beta Y0)| / (|alpha||A||X| + |beta||Y0|) by a dense
 * double reference. */
double bsr_test_spmm_error(double alpha, const bsr_matrix *A, const bsr_multivec *X, double beta,
                           const bsr_multivec *Y0, const bsr_multivec *Y)
{
    int b = bsr_matrix_block(A), k = bsr_multivec_cols(X);
    const int *rp = bsr_matrix_rowptr(A), *ci = bsr_matrix_colind(A);
    const void *val = bsr_matrix_values(A);
    int dbl = bsr_matrix_precision(A) == BSR_DOUBLE;
    double worst = 0;
    for (int i = 0; i < bsr_matrix_nbrows(A); i++)
        for (int r = 0; r < b; r++)
            for (int j = 0; j < k; j++) {
                double ref = 0, mag = 0;
                for (int p = rp[i]; p < rp[i + 1]; p++)
                    for (int c = 0; c < b; c++) {
                        size_t e = ((size_t)p * b + r) * b + c;
                        double a = dbl ? ((const double *)val)[e] : ((const float *)val)[e];
                        double x = mv_get(X, ((int64_t)ci[p] * b + c) * k + j);
                        ref += a * x; mag += fabs(a * x);
                    }
                int64_t ye = ((int64_t)i * b + r) * k + j;
                double y0 = beta != 0 ? mv_get(Y0, ye) : 0;
                ref = alpha * ref + beta * y0;
                mag = fabs(alpha) * mag + fabs(beta * y0);
                double err = fabs(mv_get(Y, ye) - ref) / (mag > 0 ? mag : 1e-300);
                if (!(err <= worst)) worst = isnan(err) ? INFINITY : err; /* NaN counts as failure */
                if (mag == 0 && mv_get(Y, ye) == 0) continue;
            }
    return worst;
}

void bsr_test_problem_k(const char *spec, int k, uint64_t seed, bsr_problem *P, bsr_multivec **B,
                        bsr_multivec **Xs)
{
    BSR_ASSERT_OK(bsr_generate(spec, BSR_DOUBLE, P));
    int64_t n = bsr_multivec_rows(P->rhs);
    BSR_ASSERT_OK(bsr_multivec_create(Xs, n, k, BSR_DOUBLE));
    BSR_ASSERT_OK(bsr_multivec_random(*Xs, seed));
    BSR_ASSERT_OK(bsr_multivec_create(B, n, k, BSR_DOUBLE));
    BSR_ASSERT_OK(bsr_spmm(1.0, P->A, *Xs, 0.0, *B));
}

bsr_multivec *bsr_test_x_like(const bsr_multivec *B)
{
    bsr_multivec *X = NULL;
    BSR_ASSERT_OK(bsr_multivec_create(&X, bsr_multivec_rows(B), bsr_multivec_cols(B), BSR_DOUBLE));
    return X;
}

/* max over columns j of ||X(:,j) - Y(:,j)|| / ||Y(:,j)|| (||X - Y|| where Y(:,j) = 0); NaN counts as worst. */
double bsr_test_rel_err(const bsr_multivec *X, const bsr_multivec *Y)
{
    int k = bsr_multivec_cols(X);
    int64_t n = bsr_multivec_rows(X);
    double *x = malloc(sizeof(double) * n * k), *y = malloc(sizeof(double) * n * k), worst = 0;
    bsr_multivec_to_colmajor(X, x, n);
    bsr_multivec_to_colmajor(Y, y, n);
    for (int j = 0; j < k; j++) {
        double d = 0, m = 0;
        for (int64_t i = 0; i < n; i++) {
            d += (x[j * n + i] - y[j * n + i]) * (x[j * n + i] - y[j * n + i]);
            m += y[j * n + i] * y[j * n + i];
        }
        double e = m > 0 ? sqrt(d / m) : sqrt(d);
        if (!(e <= worst)) worst = e;
    }
    free(x); free(y);
    return worst;
}

int bsr_test_gpu_main(const char *suite, const bsr_test *tests, int argc, char **argv, bsr_context **ctx)
{
    if (!bsr_test_have_gpu()) return 77;
    if (bsr_context_create(ctx, BSR_BACKEND_CUDA, 0, NULL) != BSR_OK) {
        printf("cannot create a CUDA context: %s\n", bsr_last_error());
        return 1;
    }
    printf("device: %s\n", bsr_context_describe(*ctx));
    int rc = bsr_test_main(suite, tests, argc, argv);
    bsr_context_destroy(*ctx);
    *ctx = NULL;
    return rc;
}

bsr_matrix *bsr_test_dominant(const bsr_matrix *R, double diag, double off)
{
    int n = bsr_matrix_nbrows(R), b = bsr_matrix_block(R), nnzb = bsr_matrix_nnzb(R), bb = b * b;
    const int *rp = bsr_matrix_rowptr(R), *ci = bsr_matrix_colind(R);
    const double *v = bsr_matrix_values(R);
    int *rp2 = malloc(sizeof(int) * (n + 1)), *ci2 = malloc(sizeof(int) * (nnzb + n));
    double *v2 = malloc(sizeof(double) * (size_t)(nnzb + n) * bb);
    int q = 0;
    rp2[0] = 0;
    for (int i = 0; i < n; i++) {
        for (int p = rp[i]; p < rp[i + 1]; p++, q++) {
            ci2[q] = ci[p];
            memcpy(v2 + (size_t)q * bb, v + (size_t)p * bb, sizeof(double) * bb);
        }
        ci2[q] = i; /* summed with an existing diagonal block */
        for (int e = 0; e < bb; e++) v2[(size_t)q * bb + e] = (e % (b + 1) == 0) ? diag * b * (rp[i + 1] - rp[i] + 1) : off * e / bb;
        q++;
        rp2[i + 1] = q;
    }
    bsr_matrix *A = NULL;
    CU_ASSERT_EQUAL(bsr_matrix_create(&A, n, n, b, rp2, ci2, v2, BSR_DOUBLE, BSR_SUM_DUPLICATES), BSR_OK);
    free(rp2); free(ci2); free(v2);
    return A;
}

bsr_matrix *bsr_test_offdiag_scaled(const bsr_matrix *A, double f, bsr_precision prec)
{
    bsr_matrix *B = NULL;
    BSR_ASSERT_OK(bsr_matrix_copy(A, BSR_DOUBLE, &B));
    const int bb = A->b * A->b;
    double *v = B->val;
    for (int i = 0; i < A->nbrows; i++)
        for (int p = A->rowptr[i]; p < A->rowptr[i + 1]; p++)
            if (A->colind[p] != i)
                for (int e = 0; e < bb; e++) v[(size_t)p * bb + e] *= f;
    if (prec == BSR_FLOAT) {
        bsr_matrix *C = NULL;
        BSR_ASSERT_OK(bsr_matrix_copy(B, BSR_FLOAT, &C));
        bsr_matrix_destroy(B);
        B = C;
    }
    return B;
}

void bsr_test_slurp(const char *path, char *buf, size_t cap)
{
    buf[0] = 0;
    FILE *f = fopen(path, "rb");
    if (!f) return;
    size_t n = fread(buf, 1, cap - 1, f);
    buf[n] = 0;
    fclose(f);
}

const char *bsr_test_put(const char *dir, const char *name, const char *text, char *path, size_t cap)
{
    snprintf(path, cap, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fwrite(text, 1, strlen(text), f);
    fclose(f);
    return path;
}

int bsr_test_run_cli(const char *cli, const char *dir, const char *args, char *out, char *err, size_t cap)
{
    char cmd[4096], o[512], e[512];
    snprintf(o, sizeof o, "%s/out.txt", dir);
    snprintf(e, sizeof e, "%s/err.txt", dir);
    snprintf(cmd, sizeof cmd, "'%s' %s >'%s' 2>'%s' </dev/null", cli, args, o, e);
    int st = system(cmd);
    bsr_test_slurp(o, out, cap);
    bsr_test_slurp(e, err, cap);
    if (st == -1 || !WIFEXITED(st)) return -1;
    return WEXITSTATUS(st);
}

int bsr_test_cli_main(const char *suite, const bsr_test *tests, int argc, char **argv, const char **cli,
                      char *dir, size_t n, int need_cli)
{
    *cli = getenv("BSR_CLI");
    if (*cli && !(*cli)[0]) *cli = NULL;
    if (!*cli && need_cli) { printf("  [skip] BSR_CLI unset (run through ctest)\n"); return 77; }
    return bsr_test_main_tmpdir(suite, tests, argc, argv, dir, n);
}

double bsr_test_json_num(const char *json, const char *key)
{
    char pat[128];
    snprintf(pat, sizeof pat, "\"%s\":", key);
    const char *p = json ? strstr(json, pat) : NULL;
    if (!p) return NAN;
    p += strlen(pat);
    while (*p == ' ') p++;
    if (*p == '[') p++;
    char *end;
    double v = strtod(p, &end);
    return end == p ? NAN : v;
}

int bsr_test_options_round_trip(const char *cfg, bsr_solver_options *o, bsr_solver_options *p, char *buf,
                                size_t cap)
{
    bsr_solver_options_default(o);
    BSR_ASSERT_OK(bsr_solver_options_parse(o, cfg));
    bsr_solver_options_string(o, buf, cap);
    bsr_solver_options_default(p);
    BSR_ASSERT_OK(bsr_solver_options_parse(p, buf));
    int same = !memcmp(o, p, sizeof *o);
    if (!same) printf("\n  '%s' printed as '%s' does not parse back to it", cfg, buf);
    CU_ASSERT(same);
    return same;
}

int bsr_test_same_ints(const int *a, const int *b, size_t n)
{
    return n == 0 || memcmp(a, b, n * sizeof(int)) == 0;
}

double bsr_test_rel_diff(const double *d, const void *c, bsr_precision p, size_t m)
{
    double dm = 0, cm = 0;
    for (size_t e = 0; e < m; e++) {
        double x = p == BSR_DOUBLE ? ((const double *)c)[e] : ((const float *)c)[e];
        if (!isfinite(d[e])) return INFINITY;
        if (fabs(d[e] - x) > dm) dm = fabs(d[e] - x);
        if (fabs(x) > cm) cm = fabs(x);
    }
    return dm / (cm > 0 ? cm : 1);
}

double bsr_test_max_rel_err(const bsr_multivec *Y, const bsr_multivec *R)
{
    int64_t m = bsr_multivec_rows(R) * bsr_multivec_cols(R);
    int yd = bsr_multivec_precision(Y) == BSR_DOUBLE, rd = bsr_multivec_precision(R) == BSR_DOUBLE;
    const void *y = bsr_multivec_cdata(Y), *r = bsr_multivec_cdata(R);
    double dmax = 0, rmax = 0;
    for (int64_t e = 0; e < m; e++) {
        double a = yd ? ((const double *)y)[e] : ((const float *)y)[e];
        double c = rd ? ((const double *)r)[e] : ((const float *)r)[e];
        if (!isfinite(a)) return INFINITY;
        if (fabs(a - c) > dmax) dmax = fabs(a - c);
        if (fabs(c) > rmax) rmax = fabs(c);
    }
    return dmax / (rmax > 0 ? rmax : 1);
}

bsr_multivec *bsr_test_dev_random(bsr_context *ctx, int64_t n, int k, bsr_precision p, uint64_t seed)
{
    bsr_multivec *X = NULL;
    bsr_multivec_create(&X, n, k, p);
    bsr_multivec_random(X, seed);
    bsr_multivec_upload(ctx, X);
    return X;
}

bsr_multivec *bsr_test_dev_poisoned(bsr_context *ctx, int64_t n, int k, bsr_precision p)
{
    bsr_multivec *Y = NULL;
    bsr_multivec_create(&Y, n, k, p);
    bsr_multivec_fill(Y, NAN);
    bsr_multivec_upload(ctx, Y);
    return Y;
}

int bsr_test_same_bits(const bsr_multivec *A, const bsr_multivec *B)
{
    size_t bytes = (size_t)bsr_multivec_rows(A) * bsr_multivec_cols(A) * bsr_precision_size(bsr_multivec_precision(A));
    return !memcmp(bsr_multivec_cdata(A), bsr_multivec_cdata(B), bytes);
}

uint64_t bsr_test_lcg(uint64_t *s)
{
    return *s = *s * 6364136223846793005ull + 1442695040888963407ull;
}

double bsr_test_unif(uint64_t *s)
{
    return (double)(bsr_test_lcg(s) >> 11) / 9007199254740992.0;
}

double bsr_test_unif_pm(uint64_t *s)
{
    return 2 * bsr_test_unif(s) - 1;
}

/* A wide level, then a chain of long rows (harness.h). */
bsr_matrix *bsr_test_chain_tail_matrix(int n, int nt, int b, uint64_t seed)
{
    int *rp = malloc(sizeof(int) * ((size_t)n + 1)), *ci = malloc(sizeof(int) * (size_t)n * n);
    double *v = NULL;
    uint64_t x = seed;
    rp[0] = 0;
    for (int i = 0, z = 0; i < n; i++) {
        for (int j = 0; j < n; j++) {
            const int pick = (int)(bsr_test_lcg(&x) >> 59);   /* 0..31 */
            const int keep = j == i || (i >= n - nt ? (j >= n - nt || pick < 24)
                                                    : (j > i && j - i <= 8 && pick < 12) || (j >= n - nt && pick < 8));
            if (keep) ci[z++] = j;
        }
        rp[i + 1] = z;
    }
    const size_t bb = (size_t)b * b;
    v = malloc(sizeof(double) * (size_t)rp[n] * bb);
    for (int i = 0; i < n; i++)
        for (int p = rp[i]; p < rp[i + 1]; p++)
            for (size_t e = 0; e < bb; e++) {
                v[(size_t)p * bb + e] = bsr_test_unif_pm(&x) +
                                        (ci[p] == i && e % (b + 1) == 0 ? 4.0 * b : 0);
            }
    bsr_matrix *A = NULL;
    BSR_ASSERT_OK(bsr_matrix_create(&A, n, n, b, rp, ci, v, BSR_DOUBLE, 0));
    free(rp); free(ci); free(v);
    return A;
}
