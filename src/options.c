/* SPDX-License-Identifier: BSD-3-Clause */
/* Solver options: defaults, the "key=value,..." string parser, canonical form. */
#include "krylov_table.h"
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <string.h>

void bsr_solver_options_default(bsr_solver_options *o)
{
    memset(o, 0, sizeof *o);
    o->method = BSR_BICGSTAB;
    o->precond = BSR_PC_ILU0;
    o->tau1 = 1e-2;
    o->tau2 = 0;
    o->keep_pattern = -1;
    o->cap = BSR_CAP_DEFAULT;   /* by where the rows are factored: bsr_cap_resolved */
    o->pattern = BSR_SOLVER_PATTERN_FROZEN;
    o->pattern_growth = 1.5;
    o->omega = 1.0;
    o->rtol = 1e-8;
    o->atol = 0;
    o->dtol = 1e8;
    o->etol = -1;   /* auto: bsr_etol_resolved */
    o->maxit = 1000;
    o->orth = BSR_ORTH_MGS;
    o->stag = 0;
    o->max_restarts = 5;
    o->fallback = 1;
    o->precision = BSR_DOUBLE;
    o->precond_precision = BSR_DOUBLE;
    int n;
    const bsr_krylov_row *r = bsr_krylov_rows(&n);
    for (int i = 0; i < n; i++)   /* the methods' parameters (GMRES's restart 30, IDR's s 4) */
        if (r[i].param) *bsr_krylov_param(o, &r[i]) = r[i].param_def;
}

static const char *const pc_names[] = {"none", "jacobi", "ssor", "ilu0", "ilut", "ilu2", "ic0", "ic2"};
static const char *const match_names[] = {"none", "mpt", "auto"};   /* BSR_MATCH_* */
static const char *const halo_names[] = {"auto", "host", "ipc", "mpi", "nccl"}; /* BSR_HALO_* */

const char *bsr_method_name(bsr_method m)
{
    const bsr_krylov_row *r = bsr_krylov_row_of(m);
    return r ? r->name : "?";
}

/* "expected bicgstab, gmres, cg or idr": the table's names, for messages. */
static const char *method_list(char *buf, size_t len)
{
    int n;
    const bsr_krylov_row *r = bsr_krylov_rows(&n);
    snprintf(buf, len, "expected");
    for (int i = 0; i < n; i++)
        snprintf(buf + strlen(buf), len - strlen(buf), "%s %s", i == 0 ? "" : i == n - 1 ? " or" : ",", r[i].name);
    return buf;
}

const char *bsr_pc_name(bsr_pc_kind p)
{
    return (unsigned)p < sizeof pc_names / sizeof pc_names[0] ? pc_names[p] : "?";
}

/* Index of v in names[0..n), or -1. */
static int lookup(const char *v, const char *const *names, int n)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(v, names[i])) return i;
    return -1;
}

/* Strict double: the whole value, finite. */
static int parse_double(const char *v, double *out)
{
    char *end;
    errno = 0;
    double d = strtod(v, &end);
    if (end == v || *end || errno == ERANGE || !isfinite(d)) return 0;
    *out = d;
    return 1;
}

static int parse_int(const char *v, int *out)
{
    char *end;
    errno = 0;
    long l = strtol(v, &end, 10);
    if (end == v || *end || errno == ERANGE || l < -2147483647L || l > 2147483647L) return 0;
    *out = (int)l;
    return 1;
}

static int parse_prec(const char *v, bsr_precision *p)
{
    if (!strcmp(v, "double") || !strcmp(v, "fp64")) { *p = BSR_DOUBLE; return 1; }
    if (!strcmp(v, "float") || !strcmp(v, "single") || !strcmp(v, "fp32")) { *p = BSR_FLOAT; return 1; }
    return 0;
}

static const char *const keys[] = {"method", "precond", "tau1", "tau2", "keep_pattern", "omega", "reorder",
                                   "rtol", "atol", "dtol", "maxit", "orth", "stag",
                                   "max_restarts", "precision", "precond_precision", "factor", "history",
                                   "progress", "profile", "pattern", "pattern_growth", "fill", "cap", "overlap", "halo", "match", "pivot", "trisolve", "diag", "grow",
                                   "fallback", "work", "etol", "deflate", "flex", "coarse", NULL};

/* Is s (up to its '=' or end) a known key (of the list, or a method's parameter)? */
static int starts_with_key(const char *s, size_t len)
{
    const char *eq = memchr(s, '=', len);
    size_t kl = eq ? (size_t)(eq - s) : len;
    for (int i = 0; keys[i]; i++)
        if (strlen(keys[i]) == kl && !strncmp(s, keys[i], kl)) return 1;
    int n;
    const bsr_krylov_row *r = bsr_krylov_rows(&n);
    for (int i = 0; i < n; i++)
        if (r[i].param && strlen(r[i].param) == kl && !strncmp(s, r[i].param, kl)) return 1;
    return 0;
}

/* "method, precond, ...": every key, the methods' parameters last. */
static const char *key_list(char *buf, size_t len)
{
    buf[0] = 0;
    for (int i = 0; keys[i]; i++) snprintf(buf + strlen(buf), len - strlen(buf), "%s%s", i ? ", " : "", keys[i]);
    int n;
    const bsr_krylov_row *r = bsr_krylov_rows(&n);
    for (int i = 0; i < n; i++)
        if (r[i].param) snprintf(buf + strlen(buf), len - strlen(buf), ", %s", r[i].param);
    return buf;
}

/* Apply one key=value to o. */
static bsr_status apply_kv(bsr_solver_options *o, const char *key, const char *val)
{
    int iv, idx;
    double dv;
    char msg[512];
    const bsr_krylov_row *kr;
#define BAD(what) return bsr_error(BSR_ERR_ARG, "solver options: %s=%s: %s", key, val, what)
    if (!*val) BAD("empty value");
    if (!strcmp(key, "method")) {
        if (!(kr = bsr_krylov_row_named(val))) BAD(method_list(msg, sizeof msg));
        o->method = kr->method;
    } else if (!strcmp(key, "precond")) {
        if (!strcmp(val, "ilu") || !strcmp(val, "ilu(0)")) idx = BSR_PC_ILU0;
        else if (!strcmp(val, "bjacobi")) idx = BSR_PC_JACOBI;
        else if (!strcmp(val, "ic") || !strcmp(val, "ic(0)") || !strcmp(val, "icc")) idx = BSR_PC_IC0;
        else if ((idx = lookup(val, pc_names, (int)(sizeof pc_names / sizeof pc_names[0]))) < 0)
            BAD("expected none, jacobi, ssor, ilu0, ilut, ilu2, ic0 or ic2");
        o->precond = (bsr_pc_kind)idx;
    } else if (!strcmp(key, "tau1") || !strcmp(key, "tau2")) {
        if (!parse_double(val, &dv) || dv < 0 || dv >= 1) BAD("expected a number in [0,1)");
        if (key[3] == '1') o->tau1 = dv; else o->tau2 = dv;
    } else if (!strcmp(key, "keep_pattern")) {
        if (!strcmp(val, "auto")) o->keep_pattern = -1;
        else if (!strcmp(val, "0") || !strcmp(val, "1")) o->keep_pattern = val[0] == '1';
        else BAD("expected auto, 0 or 1");
    } else if (!strcmp(key, "omega")) {
        if (!parse_double(val, &dv) || dv <= 0 || dv >= 2) BAD("expected 0 < omega < 2");
        o->omega = dv;
    } else if (!strcmp(key, "reorder")) {
        bsr_order_options oo;
        if (strlen(val) >= sizeof o->reorder) BAD("spec too long");
        if (bsr_order_parse(val, &oo) != BSR_OK)
            return bsr_error(BSR_ERR_ARG, "solver options: reorder=%s: %s", val, bsr_last_error());
        snprintf(o->reorder, sizeof o->reorder, "%s", val);
    } else if (!strcmp(key, "rtol") || !strcmp(key, "atol")) {
        if (!parse_double(val, &dv) || dv < 0 || dv >= 1e300) BAD("expected a number >= 0");
        if (key[0] == 'r') o->rtol = dv; else o->atol = dv;
    } else if (!strcmp(key, "dtol")) {
        if (!parse_double(val, &dv) || dv <= 1) BAD("expected a number > 1");
        o->dtol = dv;
    } else if (!strcmp(key, "etol")) {
        if (!strcmp(val, "auto")) o->etol = -1;
        else if (!strcmp(val, "off")) o->etol = 0;
        else if (!parse_double(val, &dv) || dv < 0 || dv >= 1) BAD("expected auto, off or a number in [0, 1)");
        else o->etol = dv;
    } else if (!strcmp(key, "deflate")) {
        if (!parse_int(val, &iv) || iv < 0 || iv > 998) BAD("expected an integer 0..998");
        o->deflate = iv;
    } else if (!strcmp(key, "flex")) {
        if (strcmp(val, "0") && strcmp(val, "1")) BAD("expected 0 or 1");
        o->flex = val[0] == '1';
    } else if (!strcmp(key, "coarse")) {
        if (!parse_int(val, &iv) || iv < 0 || iv > BSR_COARSE_MAX) BAD("expected an integer 0..10 (vectors an aggregate keeps)");
        o->coarse = iv;
    } else if (!strcmp(key, "maxit")) {
        if (!parse_int(val, &iv) || iv < 0) BAD("expected an integer >= 0");
        o->maxit = iv;
    } else if ((kr = bsr_krylov_row_param(key))) {
        snprintf(msg, sizeof msg, "expected an integer %d..%d", kr->param_min, kr->param_max);
        if (!parse_int(val, &iv) || iv < kr->param_min || iv > kr->param_max) BAD(msg);
        *bsr_krylov_param(o, kr) = iv;
    } else if (!strcmp(key, "orth")) {
        if (!strcmp(val, "mgs")) o->orth = BSR_ORTH_MGS;
        else if (!strcmp(val, "cgs2")) o->orth = BSR_ORTH_CGS2;
        else BAD("expected mgs or cgs2");
    } else if (!strcmp(key, "stag") || !strcmp(key, "max_restarts") || !strcmp(key, "progress")) {
        if (!parse_int(val, &iv) || iv < 0) BAD("expected an integer >= 0");
        if (key[0] == 's') o->stag = iv;
        else if (key[0] == 'm') o->max_restarts = iv;
        else o->progress = iv;
    } else if (!strcmp(key, "precision") || !strcmp(key, "precond_precision")) {
        bsr_precision p;
        if (!parse_prec(val, &p)) BAD("expected double or float");
        if (key[9] == '\0') o->precision = p; else o->precond_precision = p;
    } else if (!strcmp(key, "factor")) {
        if (!strcmp(val, "auto")) o->factor = BSR_FACTOR_AUTO;
        else if (!strcmp(val, "cpu")) o->factor = BSR_FACTOR_CPU;
        else if (!strcmp(val, "gpu")) o->factor = BSR_FACTOR_GPU;
        else BAD("expected auto, cpu or gpu");
    } else if (!strcmp(key, "pattern")) {
        if (!strcmp(val, "frozen")) o->pattern = BSR_SOLVER_PATTERN_FROZEN;
        else if (!strcmp(val, "refresh")) o->pattern = BSR_SOLVER_PATTERN_REFRESH;
        else if (!strcmp(val, "auto")) o->pattern = BSR_SOLVER_PATTERN_AUTO;
        else BAD("expected frozen, refresh or auto");
    } else if (!strcmp(key, "fill")) {
        if (!parse_double(val, &dv) || dv < 0 || dv > 1e3) BAD("expected a number >= 0 (0: the cap alone)");
        o->fill = dv;
    } else if (!strcmp(key, "cap")) {
        if (!strcmp(val, "auto")) o->cap = 0;
        else if (!strcmp(val, "none")) o->cap = BSR_ILU_CAP_NONE;
        else if (!parse_int(val, &iv) || iv < 1) BAD("expected auto, none or a count >= 1 of fill blocks a row");
        else o->cap = iv;
    } else if (!strcmp(key, "overlap")) {
        if (strcmp(val, "0") && strcmp(val, "1")) BAD("expected 0 (block Jacobi over ranks) or 1 (restricted additive Schwarz)");
        o->overlap = val[0] == '1';
    } else if (!strcmp(key, "halo")) {
        if ((idx = lookup(val, halo_names, (int)(sizeof halo_names / sizeof halo_names[0]))) < 0)
            BAD("expected auto (IPC where possible), host (pinned host buffers), ipc, mpi (device pointers to MPI) "
                "or nccl");
        o->halo = idx;
    } else if (!strcmp(key, "pivot")) {
        if (!strcmp(val, "strict")) o->pivot = -1;
        else if (!parse_double(val, &dv) || !(dv > 0 && dv < 1)) BAD("expected strict or a level in (0, 1)");
        else o->pivot = dv;
    } else if (!strcmp(key, "match")) {
        if ((idx = lookup(val, match_names, 3)) < 0) BAD("expected none, mpt or auto");
        o->match = idx;
    } else if (!strcmp(key, "trisolve")) {
        if (!strcmp(val, "exact")) o->trisolve = 0;
        else if (!strncmp(val, "jacobi:", 7) && parse_int(val + 7, &iv) && iv >= 1 && iv <= 100) o->trisolve = iv;
        else BAD("expected exact or jacobi:N (N sweeps, 1..100)");
    } else if (!strcmp(key, "pattern_growth")) {
        if (!parse_double(val, &dv) || dv < 1 || dv > 1e6) BAD("expected a number >= 1");
        o->pattern_growth = dv;
    } else if (!strcmp(key, "diag")) {
        if (strcmp(val, "0") && strcmp(val, "1")) BAD("expected 0 or 1");
        o->diag = val[0] == '1';
    } else if (!strcmp(key, "fallback")) {
        if (strcmp(val, "off") && strcmp(val, "on")) BAD("expected off or on");
        o->fallback = val[1] == 'n';
    } else if (!strcmp(key, "work")) {
        if (!parse_double(val, &dv) || !(dv >= 0 && dv <= 1e18))
            BAD("expected a count of block multiply-adds in [0, 1e18] (0: no bound)");
        o->work = dv;
    } else if (!strcmp(key, "grow")) {
        if (strcmp(val, "0") && strcmp(val, "1") && strcmp(val, "2")) BAD("expected 0, 1 or 2");
        o->grow = val[0] - '0';
    } else if (!strcmp(key, "history") || !strcmp(key, "profile")) {
        if (strcmp(val, "0") && strcmp(val, "1")) BAD("expected 0 or 1");
        if (key[0] == 'h') o->history = val[0] == '1'; else o->profile = val[0] == '1';
    } else {
        return bsr_error(BSR_ERR_ARG, "solver options: unknown key '%s' (known: %s)", key, key_list(msg, sizeof msg));
    }
#undef BAD
    return BSR_OK;
}

static bsr_status check_taus(const bsr_solver_options *o);

bsr_status bsr_solver_options_parse(bsr_solver_options *o, const char *str)
{
    BSR_CHECK_ARG(o, "bsr_solver_options_parse: options are NULL");
    if (!str) return BSR_OK;
    bsr_solver_options t = *o; /* o is only changed when the whole string is good */
    const char *p = str;
    while (*p) {
        while (*p == ',' || isspace((unsigned char)*p)) p++;
        if (!*p) break;
        /* one item ends at the next ',' that starts a known key (so reorder=nd:4,seed=3 stays whole) */
        const char *end = p;
        for (;;) {
            const char *c = strchr(end, ',');
            if (!c) { end = p + strlen(p); break; }
            const char *nx = c + 1;
            while (isspace((unsigned char)*nx)) nx++;
            size_t rest = strcspn(nx, ",");
            if (!strncmp(p, "reorder=", 8) && *nx && !starts_with_key(nx, rest)) { end = c + 1; continue; }
            end = c;
            break;
        }
        char item[256];
        size_t len = (size_t)(end - p);
        while (len && isspace((unsigned char)p[len - 1])) len--;
        if (len >= sizeof item) return bsr_error(BSR_ERR_ARG, "solver options: item '%.40s...' too long", p);
        memcpy(item, p, len);
        item[len] = 0;
        char *eq = strchr(item, '=');
        if (!eq) return bsr_error(BSR_ERR_ARG, "solver options: '%s' is not key=value", item);
        *eq = 0;
        char *key = item;
        while (*key && isspace((unsigned char)*key)) key++;
        size_t kl = strlen(key);
        while (kl && isspace((unsigned char)key[kl - 1])) key[--kl] = 0;
        char *val = eq + 1;
        while (*val && isspace((unsigned char)*val)) val++;
        BSR_TRY(apply_kv(&t, key, val));
        p = *end ? end + 1 : end;
    }
    BSR_TRY(check_taus(&t));
    *o = t;
    return BSR_OK;
}

/* The drop tolerances are ordered: tau2 (0 = tau1^2) at most tau1. */
static bsr_status check_taus(const bsr_solver_options *o)
{
    if (o->tau2 > 0 && o->tau2 > o->tau1)
        return bsr_error(BSR_ERR_ARG, "solver options: tau2=%g must not exceed tau1=%g", o->tau2, o->tau1);
    return BSR_OK;
}

bsr_status bsr_solver_options_check(const bsr_solver_options *o)
{
    BSR_CHECK_ARG(o, "bsr_solver_options_check: options are NULL");
    const bsr_krylov_row *kr = bsr_krylov_row_of(o->method);
    if (!kr || (unsigned)o->precond > BSR_PC_IC2 || !(o->rtol >= 0) ||
        !(o->atol >= 0) || o->maxit < 0 || o->restart < 1 || !(o->omega > 0 && o->omega < 2) ||
        (o->overlap != 0 && o->overlap != 1) || (unsigned)o->match > BSR_MATCH_AUTO ||
        (unsigned)o->trisolve > 100 || (unsigned)o->halo > BSR_HALO_NCCL || (o->diag != 0 && o->diag != 1) ||
        (unsigned)o->grow > 2 || (o->fallback != 0 && o->fallback != 1) || !(o->work >= 0 && o->work <= 1e18) || !(o->etol < 1))
        return bsr_error(BSR_ERR_ARG, "solver options: method, precond, rtol, atol, maxit, restart, omega, "
                         "overlap, halo, match, trisolve, diag, grow, fallback, work or etol out of range");
    BSR_TRY(check_taus(o));
    if (!(o->pivot < 1) || (o->pivot < 0 && o->pivot != -1))
        return bsr_error(BSR_ERR_ARG, "solver options: pivot=%g must be -1 (strict), 0 (default) or in (0, 1)", o->pivot);
    /* the method's own parameter in the parser's range */
    if (kr->param) {
        int v = bsr_krylov_param_get(o, kr);
        if (v < kr->param_min || v > kr->param_max)
            return bsr_error(BSR_ERR_ARG, "solver options: %s=%d out of range for method=%s (%d..%d)", kr->param, v,
                             kr->name, kr->param_min, kr->param_max);
    }
    if (o->coarse < 0 || o->coarse > BSR_COARSE_MAX || (o->coarse > 0 && !BSR_PC_IS_ILU(o->precond)))
        return bsr_error(BSR_ERR_ARG, "solver options: coarse=%d needs precond=ilu0, ilut or ilu2 (precond=%s) and "
                         "at most %d vectors an aggregate", o->coarse, bsr_pc_name(o->precond), BSR_COARSE_MAX);
    if (o->deflate < 0 || (o->deflate > 0 && (o->method != BSR_GMRES || o->restart < o->deflate + 2)))
        return bsr_error(BSR_ERR_ARG, "solver options: deflate=%d needs method=gmres with restart >= deflate + 2 "
                         "(method=%s, restart=%d)", o->deflate, kr->name, o->restart);
    if (o->flex && (o->flex != 1 || o->method != BSR_GMRES))
        return bsr_error(BSR_ERR_ARG, "solver options: flex=%d needs method=gmres and 0 or 1 (method=%s)", o->flex,
                         kr->name);
    /* the preconditioners the method takes (CG: the symmetric ones) */
    if (!(kr->pcs & (1u << o->precond)))
        return bsr_error(BSR_ERR_ARG, "solver options: method=%s needs %s, not precond=%s", kr->name, kr->pcs_need,
                         bsr_pc_name(o->precond));
    return BSR_OK;
}

/* cap resolved for where the threshold rows run (factor_gpu: on the device)
 * and the matrix's size.  The default on the device is "auto": its rows need
 * a cap, and with it the setup's work is bounded on any system (uncapped host
 * rows took 16-48 s on dense coupled systems).  On the host "none" below
 * BSR_HOST_CAP_ROWS block rows, where nested dissection without a cap keeps
 * the fewest iterations (rotconv3d:40,4: 9 against about 100 capped, 3.9 s
 * to the solution against 6.2 s on 16 threads) and its setup is affordable;
 * "auto" from there on, where the uncapped factor's setup grows faster than
 * the problem (at 1M block rows on 16 threads 11.4 s for stencil3d, 16.6 s
 * for rotconv3d, cfd3d's unfinished after 45 s) while the capped one's stays
 * linear (1.4 s there), and the capped factor is the faster to the solution
 * (2.9 against 13.0 s, 3.8 against 20.2 s; bench/RESULTS.md). */
int bsr_cap_resolved(const bsr_solver_options *o, int factor_gpu, int nbrows)
{
    const int threshold = o->precond == BSR_PC_ILUT || o->precond == BSR_PC_ILU2;   /* (ILU(0) drops nothing) */
    return o->cap != BSR_CAP_DEFAULT ? o->cap
           : factor_gpu || (threshold && nbrows >= BSR_HOST_CAP_ROWS) ? 0 : BSR_ILU_CAP_NONE;
}

const char *bsr_halo_name(int halo)
{
    return halo >= 0 && halo <= BSR_HALO_NCCL ? halo_names[halo] : "?";
}

const char *bsr_cap_name(int cap, char *buf)
{
    if (cap > 0) snprintf(buf, 16, "%d", cap);
    else snprintf(buf, 16, "%s", cap == 0 ? "auto" : "none");
    return buf;
}

/* Whether o's refactor has a threshold pattern to freeze or refresh: ILUT, ILU2,
 * or any ILU with the coarse correction (coarse with another kind is refused
 * and not printed, so its pattern keys are not printed either). */
int bsr_pattern_applies(const bsr_solver_options *o)
{
    return o->precond == BSR_PC_ILUT || o->precond == BSR_PC_ILU2 || (o->coarse > 0 && BSR_PC_IS_ILU(o->precond));
}

/* keep_pattern resolved for o's preconditioner ("auto": on for ILU2 and IC2 only). */
int bsr_keep_pattern(const bsr_solver_options *o)
{
    return o->keep_pattern >= 0 ? o->keep_pattern : o->precond == BSR_PC_ILU2 || o->precond == BSR_PC_IC2;
}

double bsr_etol_resolved(const bsr_solver_options *o)
{
    if (o->etol >= 0) return o->etol;
    return o->precond == BSR_PC_ILUT || o->precond == BSR_PC_ILU2 ? BSR_ETOL_AUTO * o->rtol : 0;
}

/* v as %g when that reads back as v (the short form of existing reports),
 * else with 17 digits: the canonical string must parse back to the same
 * options (0.999999999 as %g is 1, which tau1 and pivot refuse). */
static const char *num(char b[32], double v)
{
    snprintf(b, 32, "%g", v);
    if (strtod(b, NULL) != v) snprintf(b, 32, "%.17g", v);
    return b;
}

const char *bsr_solver_options_string(const bsr_solver_options *o, char *buf, size_t len)
{
    char tau[128] = "", n1[32], n2[32];
    const char *keep = bsr_keep_pattern(o) ? ",keep_pattern=1" : ",keep_pattern=0";
    if (o->precond == BSR_PC_ILUT) snprintf(tau, sizeof tau, ",tau1=%s%s", num(n1, o->tau1), keep);
    if (o->precond == BSR_PC_ILU2 || o->precond == BSR_PC_IC2) snprintf(tau, sizeof tau, ",tau1=%s,tau2=%s%s", num(n1, o->tau1),
                                            num(n2, bsr_ilu_tau2(BSR_ILU2, o->tau1, o->tau2)), keep);
    if (o->precond == BSR_PC_ILUT || o->precond == BSR_PC_ILU2 || o->precond == BSR_PC_IC2) {
        if (o->fill > 0 && o->precond != BSR_PC_IC2) snprintf(tau + strlen(tau), sizeof tau - strlen(tau), ",fill=%s", num(n1, o->fill));
        if (o->cap != BSR_CAP_DEFAULT)
            snprintf(tau + strlen(tau), sizeof tau - strlen(tau), ",cap=%s", bsr_cap_name(o->cap, n2));
    }
    if (o->precond == BSR_PC_SSOR) snprintf(tau, sizeof tau, ",omega=%s", num(n1, o->omega));
    char gm[64] = "";   /* the method's own keys */
    const bsr_krylov_row *kr = bsr_krylov_row_of(o->method);
    if (kr && kr->param) snprintf(gm, sizeof gm, ",%s=%d", kr->param, bsr_krylov_param_get(o, kr));
    if (kr && kr->orth) snprintf(gm + strlen(gm), sizeof gm - strlen(gm), ",orth=%s", o->orth == BSR_ORTH_MGS ? "mgs" : "cgs2");
    if (kr && kr->method == BSR_GMRES && o->deflate > 0)
        snprintf(gm + strlen(gm), sizeof gm - strlen(gm), ",deflate=%d", o->deflate);
    if (kr && kr->method == BSR_GMRES && o->flex) snprintf(gm + strlen(gm), sizeof gm - strlen(gm), ",flex=1");
    char mt[192] = "";   /* only when set: the strings of existing runs stay as they were */
    if (BSR_PC_IS_ILU(o->precond) && o->match && (unsigned)o->match <= BSR_MATCH_AUTO)
        snprintf(mt, sizeof mt, ",match=%s", match_names[o->match]);
    if (BSR_PC_IS_ILU(o->precond) && o->pivot < 0) snprintf(mt + strlen(mt), sizeof mt - strlen(mt), ",pivot=strict");
    if (BSR_PC_IS_ILU(o->precond) && o->pivot > 0) snprintf(mt + strlen(mt), sizeof mt - strlen(mt), ",pivot=%s", num(n1, o->pivot));
    /* factor=cpu|gpu when given (auto resolves the same way again) */
    if (BSR_PC_IS_ILU(o->precond) && (o->factor == BSR_FACTOR_CPU || o->factor == BSR_FACTOR_GPU))
        snprintf(mt + strlen(mt), sizeof mt - strlen(mt), ",factor=%s", o->factor == BSR_FACTOR_CPU ? "cpu" : "gpu");
    if (BSR_PC_IS_ILU(o->precond) && o->trisolve > 0)
        snprintf(mt + strlen(mt), sizeof mt - strlen(mt), ",trisolve=jacobi:%d", o->trisolve);
    /* the refactor's pattern (threshold kinds, two levels), only when not the default */
    static const char *const pattern_names[] = {"frozen", "refresh", "auto"};   /* BSR_SOLVER_PATTERN_* */
    if (bsr_pattern_applies(o) && o->pattern > 0 && o->pattern <= BSR_SOLVER_PATTERN_AUTO)
        snprintf(mt + strlen(mt), sizeof mt - strlen(mt), ",pattern=%s", pattern_names[o->pattern]);
    if (bsr_pattern_applies(o) && o->pattern == BSR_SOLVER_PATTERN_AUTO &&
        o->pattern_growth != 1.5)
        snprintf(mt + strlen(mt), sizeof mt - strlen(mt), ",pattern_growth=%s", num(n1, o->pattern_growth));
    char lim[112] = "";  /* the stopping tests beyond rtol/atol/maxit, only when not the defaults */
    if (o->stag != 0) snprintf(lim, sizeof lim, ",stag=%d", o->stag);
    if (o->dtol != 1e8) snprintf(lim + strlen(lim), sizeof lim - strlen(lim), ",dtol=%s", num(n1, o->dtol));
    if (o->max_restarts != 5) snprintf(lim + strlen(lim), sizeof lim - strlen(lim), ",max_restarts=%d", o->max_restarts);
    if (o->etol >= 0) snprintf(lim + strlen(lim), sizeof lim - strlen(lim), ",etol=%s", o->etol > 0 ? num(n2, o->etol) : "off");
    char ov[160] = "";   /* the distributed keys, diag, grow, fallback, work and coarse, only when not the defaults */
    if (o->overlap) snprintf(ov, sizeof ov, ",overlap=1");
    if (o->halo > 0 && (unsigned)o->halo <= BSR_HALO_NCCL)
        snprintf(ov + strlen(ov), sizeof ov - strlen(ov), ",halo=%s", halo_names[o->halo]);
    if (o->diag) snprintf(ov + strlen(ov), sizeof ov - strlen(ov), ",diag=1");   /* only when asked */
    if (o->grow && (o->precond == BSR_PC_ILUT || o->precond == BSR_PC_ILU2))
        snprintf(ov + strlen(ov), sizeof ov - strlen(ov), ",grow=%d", o->grow);
    if (o->fallback == 0 && (o->precond == BSR_PC_ILUT || o->precond == BSR_PC_ILU2))
        snprintf(ov + strlen(ov), sizeof ov - strlen(ov), ",fallback=off");
    if (o->work > 0 && (o->precond == BSR_PC_ILUT || o->precond == BSR_PC_ILU2))
        snprintf(ov + strlen(ov), sizeof ov - strlen(ov), ",work=%s", num(n2, o->work));
    if (o->coarse > 0 && BSR_PC_IS_ILU(o->precond))
        snprintf(ov + strlen(ov), sizeof ov - strlen(ov), ",coarse=%d", o->coarse);
    snprintf(buf, len, "method=%s%s,precond=%s%s%s%s%s%s,rtol=%s,atol=%s,maxit=%d%s,precision=%s,precond_precision=%s",
             bsr_method_name(o->method), gm, bsr_pc_name(o->precond), tau, mt, ov,
             o->reorder[0] ? ",reorder=" : "", o->reorder, num(n1, o->rtol), num(n2, o->atol), o->maxit, lim,
             o->precision == BSR_DOUBLE ? "double" : "float",
             o->precond_precision == BSR_DOUBLE ? "double" : "float");
    return buf;
}
