/* SPDX-License-Identifier: BSD-3-Clause */
/* Parameters of the generators: "NAME:v1,v2,key=value,..." (',' or ':'
 * separate items, for every generator; bare values are positional), strict
 * range checks, and the grid options (size, holes) every structured generator
 * shares. */
#include "stencil_impl.h"
#include "gen_limit.h"
#include <errno.h>
#include <math.h>
#include <string.h>

/* Split params into key=value pairs (bare values take the positional names in order); rejects
 * repeated keys. */
bsr_status gen_args_parse(const char *gen, const char *params, const char *const *positional,
                          gen_args *a)
{
    memset(a, 0, sizeof *a);
    a->gen = gen;
    int npos = 0;
    const char *s = params ? params : "";
    while (*s) {
        size_t len = strcspn(s, ",:");
        if (len == 0) return bsr_error(BSR_ERR_ARG, "%s: empty item in parameters '%s'", gen, params);
        const char *eq = memchr(s, '=', len);
        if (a->n == GEN_MAXARGS) return bsr_error(BSR_ERR_ARG, "%s: too many parameters", gen);
        char key[24], val[64];
        if (eq) {
            size_t kl = (size_t)(eq - s), vl = len - kl - 1;
            if (kl == 0 || kl >= sizeof key || vl == 0 || vl >= sizeof val)
                return bsr_error(BSR_ERR_ARG, "%s: malformed parameter '%.*s' (want key=value)", gen, (int)len, s);
            memcpy(key, s, kl); key[kl] = 0;
            memcpy(val, eq + 1, vl); val[vl] = 0;
        } else {
            if (!positional || !positional[npos])
                return bsr_error(BSR_ERR_ARG, "%s: unexpected value '%.*s' (too many positional parameters; use key=value)",
                                 gen, (int)len, s);
            if (len >= sizeof val) return bsr_error(BSR_ERR_ARG, "%s: value '%.*s' too long", gen, (int)len, s);
            snprintf(key, sizeof key, "%s", positional[npos++]);
            memcpy(val, s, len); val[len] = 0;
        }
        for (int i = 0; i < a->n; i++)
            if (!strcmp(a->kv[i].key, key)) return bsr_error(BSR_ERR_ARG, "%s: parameter '%s' given twice", gen, key);
        snprintf(a->kv[a->n].key, sizeof a->kv[0].key, "%s", key);
        snprintf(a->kv[a->n].val, sizeof a->kv[0].val, "%s", val);
        a->n++;
        s += len;
        if (*s) {
            s++;
            if (!*s) return bsr_error(BSR_ERR_ARG, "%s: trailing separator in parameters '%s'", gen, params);
        }
    }
    return BSR_OK;
}

/* The value string of key (marked used), or NULL. */
static const char *lookup(gen_args *a, const char *key)
{
    for (int i = 0; i < a->n; i++)
        if (!strcmp(a->kv[i].key, key)) { a->kv[i].used = 1; return a->kv[i].val; }
    return NULL;
}

/* The value of key in [lo, hi] (def when absent), parsed as an integer
 * (strtol, integer != 0) or a finite real; BSR_ERR_ARG naming generator and
 * key otherwise. */
static bsr_status arg_number(gen_args *a, const char *key, int integer, double def, double lo, double hi, double *out)
{
    const char *v = lookup(a, key);
    if (!v) { *out = def; return BSR_OK; }
    char *end;
    errno = 0;
    const double x = integer ? (double)strtol(v, &end, 10) : strtod(v, &end);
    if (end == v || *end || errno || !isfinite(x))
        return bsr_error(BSR_ERR_ARG, "%s: %s='%s' is not %s", a->gen, key, v, integer ? "an integer" : "a finite number");
    if (x < lo || x > hi) {
        if (integer)
            return bsr_error(BSR_ERR_ARG, "%s: %s=%.0f out of range %.0f..%.0f", a->gen, key, x, lo, hi);
        return bsr_error(BSR_ERR_ARG, "%s: %s=%g out of range [%g, %g]", a->gen, key, x, lo, hi);
    }
    *out = x;
    return BSR_OK;
}

bsr_status gen_arg_real(gen_args *a, const char *key, double def, double lo, double hi, double *out)
{
    return arg_number(a, key, 0, def, lo, hi, out);
}

bsr_status gen_arg_int(gen_args *a, const char *key, int def, int lo, int hi, int *out)
{
    double x;
    BSR_TRY(arg_number(a, key, 1, def, lo, hi, &x));
    *out = (int)x;
    return BSR_OK;
}

bsr_status gen_arg_reals(gen_args *a, const gen_real_arg *t, int n, void *par)
{
    for (int i = 0; i < n; i++)
        BSR_TRY(gen_arg_real(a, t[i].key, t[i].def, t[i].lo, t[i].hi, (double *)((char *)par + t[i].at)));
    return BSR_OK;
}

bsr_status gen_arg_seed(gen_args *a, uint64_t *seed)
{
    int s;
    BSR_TRY(gen_arg_int(a, "seed", 1, 0, 1 << 30, &s));
    *seed = (uint64_t)s;
    return BSR_OK;
}

/* Index of key's value in choices (def when absent); BSR_ERR_ARG listing the choices
 * otherwise. */
bsr_status gen_arg_choice(gen_args *a, const char *key, const char *const *choices, int def, int *out)
{
    const char *v = lookup(a, key);
    if (!v) { *out = def; return BSR_OK; }
    char list[160] = "";
    for (int i = 0; choices[i]; i++) {
        if (!strcmp(v, choices[i])) { *out = i; return BSR_OK; }
        size_t l = strlen(list);
        snprintf(list + l, sizeof list - l, "%s%s", i ? "|" : "", choices[i]);
    }
    return bsr_error(BSR_ERR_ARG, "%s: %s='%s' must be one of %s", a->gen, key, v, list);
}

/* BSR_ERR_ARG naming the first key that no getter asked for. */
bsr_status gen_args_done(const gen_args *a)
{
    for (int i = 0; i < a->n; i++)
        if (!a->kv[i].used) return bsr_error(BSR_ERR_ARG, "%s: unknown parameter '%s'", a->gen, a->kv[i].key);
    return BSR_OK;
}

/* Grid of a structured generator: n (points per side incl. boundary), nx/ny/nz, holes, seed. */
bsr_status gen_grid_args(gen_args *a, int dim, int defn, gen_grid *g)
{
    int n, nx, ny, nz = 3;
    memset(g, 0, sizeof *g);
    g->dim = dim;
    int maxn = dim == 2 ? 20000 : 1200;
    BSR_TRY(gen_arg_int(a, "n", defn, 3, maxn, &n));
    BSR_TRY(gen_arg_int(a, "nx", n, 3, maxn, &nx));
    BSR_TRY(gen_arg_int(a, "ny", n, 3, maxn, &ny));
    if (dim == 3) BSR_TRY(gen_arg_int(a, "nz", n, 3, maxn, &nz));
    BSR_TRY(gen_arg_real(a, "holes", 0.0, 0.0, 0.9, &g->holes));
    BSR_TRY(gen_arg_int(a, "seed", 1, 0, 1 << 30, &g->seed));
    g->nx = nx - 2; g->ny = ny - 2; g->nz = dim == 3 ? nz - 2 : 1;
    if ((int64_t)g->nx * g->ny * g->nz * 7 > INT32_MAX)
        return bsr_error(BSR_ERR_UNSUPPORTED, "%s: grid %d x %d x %d has too many unknowns for 32-bit indices",
                         a->gen, g->nx, g->ny, g->nz);
    return bsr_generate_check_rows(a->gen, (int64_t)g->nx * g->ny * g->nz);
}

/* The cap of bsr_generate_limit_rows; 0: none. */
static int64_t gen_max_rows;

/* Set the cap on generated block rows (0: none). */
void bsr_generate_limit_rows(int64_t max_rows)
{
    gen_max_rows = max_rows > 0 ? max_rows : 0;
}

/* BSR_ERR_UNSUPPORTED when rows exceeds the cap. */
bsr_status bsr_generate_check_rows(const char *gen, int64_t rows)
{
    if (gen_max_rows && rows > gen_max_rows)
        return bsr_error(BSR_ERR_UNSUPPORTED, "%s: %lld block rows, more than the limit of %lld set by "
                         "bsr_generate_limit_rows", gen, (long long)rows, (long long)gen_max_rows);
    return BSR_OK;
}

/* 1 when cell (i,j,k) of g is switched off (deterministic hash of seed and cell). */
int gen_grid_hole(const gen_grid *g, int i, int j, int k)
{
    if (g->holes <= 0) return 0;
    uint64_t p = ((uint64_t)k * (uint64_t)g->ny + (uint64_t)j) * (uint64_t)g->nx + (uint64_t)i;
    return bsr_hash01((uint64_t)g->seed, p) < g->holes;
}
