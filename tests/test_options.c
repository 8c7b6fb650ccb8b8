/* SPDX-License-Identifier: BSD-3-Clause */
/* Solver option strings: every key, canonical round trip, and clear errors
 * naming the key for unknown keys and bad values (options left unchanged). */
#include "harness.h"
#include <string.h>

/* The default options with cfg parsed over them (a failed assertion naming cfg when it does not parse). */
static bsr_solver_options parsed(const char *cfg)
{
    bsr_solver_options o;
    bsr_solver_options_default(&o);
    bsr_status s = bsr_solver_options_parse(&o, cfg);
    if (s != BSR_OK) printf("\n  '%s': %s\n", cfg, bsr_last_error());
    CU_ASSERT_EQUAL_FATAL(s, BSR_OK);
    return o;
}

static void test_defaults(void)
{
    bsr_solver_options o;
    bsr_solver_options_default(&o);
    CU_ASSERT_EQUAL(o.method, BSR_BICGSTAB);
    CU_ASSERT_DOUBLE_EQUAL(o.rtol, 1e-8, 0);
    CU_ASSERT_EQUAL(o.restart, 30);
    CU_ASSERT_EQUAL(o.precision, BSR_DOUBLE);
    CU_ASSERT_EQUAL(o.reorder[0], 0);
    /* no keys: the defaults, byte for byte */
    static const char *const none[] = {NULL, "", " , ,"};
    for (int i = 0; i < 3; i++) {
        bsr_solver_options e;
        memcpy(&e, &o, sizeof o);
        BSR_ASSERT_OK(bsr_solver_options_parse(&e, none[i]));
        CU_ASSERT_EQUAL(memcmp(&e, &o, sizeof o), 0);
    }
}

static void test_issue_string(void)
{
    bsr_solver_options o = parsed("method=bicgstab,precond=ilu2,tau1=1e-2,tau2=1e-4,reorder=nd:auto,rtol=1e-8,"
                                  "maxit=500,restart=30,precision=double,precond_precision=float");
    CU_ASSERT_EQUAL(o.method, BSR_BICGSTAB);
    CU_ASSERT_EQUAL(o.precond, BSR_PC_ILU2);
    CU_ASSERT_DOUBLE_EQUAL(o.tau1, 1e-2, 0);
    CU_ASSERT_DOUBLE_EQUAL(o.tau2, 1e-4, 0);
    CU_ASSERT_STRING_EQUAL(o.reorder, "nd:auto");
    CU_ASSERT_EQUAL(o.maxit, 500);
    CU_ASSERT_EQUAL(o.precision, BSR_DOUBLE);
    CU_ASSERT_EQUAL(o.precond_precision, BSR_FLOAT);
}

static void test_every_key(void)
{
    bsr_solver_options o = parsed(" method = gmres , orth=cgs2,restart=50,precond=ssor,omega=1.3,atol=1e-20,"
                                  "dtol=1e4,stag=40,max_restarts=2,history=1,progress=10,precision=float,profile=1");
    CU_ASSERT_EQUAL(o.method, BSR_GMRES);
    CU_ASSERT_EQUAL(o.orth, BSR_ORTH_CGS2);
    CU_ASSERT_EQUAL(o.restart, 50);
    CU_ASSERT_EQUAL(o.precond, BSR_PC_SSOR);
    CU_ASSERT_DOUBLE_EQUAL(o.omega, 1.3, 0);
    CU_ASSERT_DOUBLE_EQUAL(o.atol, 1e-20, 0);
    CU_ASSERT_DOUBLE_EQUAL(o.dtol, 1e4, 0);
    CU_ASSERT_EQUAL(o.stag, 40);
    CU_ASSERT_EQUAL(o.max_restarts, 2);
    CU_ASSERT_EQUAL(o.history, 1);
    CU_ASSERT_EQUAL(o.progress, 10);
    CU_ASSERT_EQUAL(o.profile, 1);
    CU_ASSERT_EQUAL(o.precision, BSR_FLOAT);
    static const char *pcs[] = {"none", "jacobi", "ssor", "ilu0", "ilut", "ilu2", "ic0", "ic2"};
    for (int i = 0; i < 8; i++) {
        char buf[64];
        snprintf(buf, sizeof buf, "precond=%s", pcs[i]);
        BSR_ASSERT_OK(bsr_solver_options_parse(&o, buf));
        CU_ASSERT_EQUAL((int)o.precond, i);
        CU_ASSERT_STRING_EQUAL(bsr_pc_name(o.precond), pcs[i]);
    }
    BSR_ASSERT_OK(bsr_solver_options_parse(&o, "method=cg"));
    CU_ASSERT_EQUAL(o.method, BSR_CG);
    /* an ordering spec with its own sub-options stays whole */
    BSR_ASSERT_OK(bsr_solver_options_parse(&o, "reorder=nd:4,seed=3,nseps=2,rtol=1e-6"));
    CU_ASSERT_STRING_EQUAL(o.reorder, "nd:4,seed=3,nseps=2");
    CU_ASSERT_DOUBLE_EQUAL(o.rtol, 1e-6, 0);
    BSR_ASSERT_OK(bsr_solver_options_parse(&o, "reorder=rcm"));
    CU_ASSERT_STRING_EQUAL(o.reorder, "rcm");
    /* keep_pattern: auto (default) resolves per kind; 0/1 are explicit */
    char buf[512];
    CU_ASSERT_EQUAL(o.keep_pattern, -1);
    BSR_ASSERT_OK(bsr_solver_options_parse(&o, "precond=ilu2"));
    CU_ASSERT_PTR_NOT_NULL(strstr(bsr_solver_options_string(&o, buf, sizeof buf), "keep_pattern=1"));
    BSR_ASSERT_OK(bsr_solver_options_parse(&o, "precond=ilut"));
    CU_ASSERT_PTR_NOT_NULL(strstr(bsr_solver_options_string(&o, buf, sizeof buf), "keep_pattern=0"));
    BSR_ASSERT_OK(bsr_solver_options_parse(&o, "keep_pattern=1"));
    CU_ASSERT_EQUAL(o.keep_pattern, 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(bsr_solver_options_string(&o, buf, sizeof buf), "keep_pattern=1"));
    BSR_ASSERT_OK(bsr_solver_options_parse(&o, "precond=ilu2,keep_pattern=0"));
    CU_ASSERT_EQUAL(o.keep_pattern, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(bsr_solver_options_string(&o, buf, sizeof buf), "keep_pattern=0"));
    BSR_ASSERT_OK(bsr_solver_options_parse(&o, "keep_pattern=auto"));
    CU_ASSERT_EQUAL(o.keep_pattern, -1);
    /* pivot near 1 with every other long key set: the canonical string
     * parses back to the same options (found by fuzz_options: %g made 1) */
    bsr_solver_options q;
    o = parsed("pivot=0.9999999992,match=auto,trisolve=jacobi:100");
    q = parsed(bsr_solver_options_string(&o, buf, sizeof buf));
    CU_ASSERT_EQUAL(q.pivot, o.pivot);
    CU_ASSERT_EQUAL(q.trisolve, 100);
    CU_ASSERT_EQUAL(q.match, BSR_MATCH_AUTO);
    o = parsed("precond=ilu2,tau1=0.999999999,rtol=0.1234567890123");   /* tau1 likewise (fuzz_options, second CI run) */
    q = parsed(bsr_solver_options_string(&o, buf, sizeof buf));
    CU_ASSERT_EQUAL(q.tau1, o.tau1);
    CU_ASSERT_EQUAL(q.rtol, o.rtol);
    CU_ASSERT_PTR_NOT_NULL(strstr(bsr_solver_options_string(&q, buf, sizeof buf), "atol=0,"));
    /* diag: printed only when set, and read back */
    bsr_solver_options_default(&o);
    CU_ASSERT_EQUAL(o.diag, 0);
    CU_ASSERT_PTR_NULL(strstr(bsr_solver_options_string(&o, buf, sizeof buf), "diag"));
    BSR_ASSERT_OK(bsr_solver_options_parse(&o, "precond=ilu2,diag=1,overlap=1,halo=auto"));
    CU_ASSERT_EQUAL(o.diag, 1);
    q = parsed(bsr_solver_options_string(&o, buf, sizeof buf));
    CU_ASSERT_EQUAL(q.diag, 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, ",diag=1"));
    BSR_ASSERT_OK(bsr_solver_options_check(&q));
    q.diag = 2;
    CU_ASSERT_EQUAL(bsr_solver_options_check(&q), BSR_ERR_ARG);
    bsr_clear_error();
    /* every halo path by name, printed (but the default) and read back; one past the last refused */
    static const char *const halos[] = {"auto", "host", "ipc", "mpi", "nccl"};
    for (int h = 0; h <= BSR_HALO_NCCL; h++) {
        char in[32];
        snprintf(in, sizeof in, "halo=%s", halos[h]);
        o = parsed(in);
        CU_ASSERT_EQUAL(o.halo, h);
        CU_ASSERT_EQUAL(strstr(bsr_solver_options_string(&o, buf, sizeof buf), in) != NULL, h != BSR_HALO_AUTO);
        CU_ASSERT_EQUAL(parsed(buf).halo, h);
    }
    o.halo = BSR_HALO_NCCL + 1;
    CU_ASSERT_EQUAL(bsr_solver_options_check(&o), BSR_ERR_ARG);
    bsr_clear_error();
}

/* The string must fail with BSR_ERR_ARG, name `what` in the message, and leave o alone. */
static void expect_error(const char *str, const char *what)
{
    bsr_solver_options o, before;
    bsr_solver_options_default(&o);
    o.maxit = 77;
    before = o;
    bsr_status s = bsr_solver_options_parse(&o, str);
    CU_ASSERT_EQUAL(s, BSR_ERR_ARG);
    if (!strstr(bsr_last_error(), what)) {
        printf("\n  '%s': message '%s' does not name '%s'\n", str, bsr_last_error(), what);
        CU_FAIL("error message does not name the key");
    }
    CU_ASSERT_EQUAL(memcmp(&o, &before, sizeof o), 0);
}

static void test_errors(void)
{
    expect_error("mehtod=gmres", "mehtod");
    expect_error("method=gmres,bogus=1", "bogus");
    expect_error("keep_pattern=yes", "keep_pattern");
    expect_error("method=qmr", "method");
    expect_error("precond=ilu3", "precond");
    expect_error("rtol=abc", "rtol");
    expect_error("rtol=-1", "rtol");
    expect_error("rtol=1e-8x", "rtol");
    expect_error("maxit=12.5", "maxit");
    expect_error("maxit=-3", "maxit");
    expect_error("restart=0", "restart");
    expect_error("tau1=2", "tau1");
    expect_error("tau1=1e-3,tau2=1e-2", "tau2");
    expect_error("omega=2", "omega");
    expect_error("orth=householder", "orth");
    expect_error("precision=half", "precision");
    expect_error("precond_precision=quad", "precond_precision");
    expect_error("reorder=zigzag", "reorder");
    expect_error("history=yes", "history");
    expect_error("maxit=", "maxit");
    expect_error("maxit=10,rtol", "rtol");          /* not key=value */
    expect_error("method=gmres,rtol=nan", "rtol");
    expect_error("dtol=0.5", "dtol");
    expect_error("diag=2", "diag");
    /* a solver created from a bad string reports the same error */
    bsr_solver *s = NULL;
    CU_ASSERT_EQUAL(bsr_solver_create_str(&s, NULL, "rtol=x"), BSR_ERR_ARG);
    CU_ASSERT_PTR_NULL(s);
}

/* An inner error quoted in the outer message comes out whole, not overwritten. */
static void test_nested_message(void)
{
    bsr_solver_options o;
    bsr_solver_options_default(&o);
    CU_ASSERT_EQUAL(bsr_solver_options_parse(&o, "reorder=nd:99"), BSR_ERR_ARG);
    CU_ASSERT_STRING_EQUAL(bsr_last_error(), "solver options: reorder=nd:99: ordering spec 'nd:99': "
                                             "depth '99' is not auto or 0..30");
}

/* Combinations are checked as a whole, after the keys have been applied. */
static void test_check(void)
{
    bsr_solver_options o;
    bsr_solver_options_default(&o);
    BSR_ASSERT_OK(bsr_solver_options_check(&o));
    BSR_ASSERT_OK(bsr_solver_options_parse(&o, "method=cg"));  /* precond is still the default ilu0 */
    CU_ASSERT_EQUAL(bsr_solver_options_check(&o), BSR_ERR_ARG);
    CU_ASSERT_STRING_EQUAL(bsr_last_error(), "solver options: method=cg needs a symmetric preconditioner "
                                             "(precond=none, jacobi, ssor, ic0 or ic2), not precond=ilu0");
    static const char *const ok[] = {"precond=none", "precond=jacobi", "precond=ssor", "precond=ic0", "precond=ic2"};
    for (int i = 0; i < 5; i++) {
        BSR_ASSERT_OK(bsr_solver_options_parse(&o, ok[i]));
        BSR_ASSERT_OK(bsr_solver_options_check(&o));
    }
    BSR_ASSERT_OK(bsr_solver_options_parse(&o, "method=gmres,precond=ilu2"));
    BSR_ASSERT_OK(bsr_solver_options_check(&o));
    o.restart = 0; /* a struct filled by hand is checked too */
    CU_ASSERT_EQUAL(bsr_solver_options_check(&o), BSR_ERR_ARG);
    CU_ASSERT_PTR_NOT_NULL(strstr(bsr_last_error(), "restart"));
}

static void test_roundtrip(void)
{
    bsr_solver_options o = parsed("method=gmres,restart=17,orth=cgs2,precond=ilu2,tau1=3e-2,tau2=2e-4,keep_pattern=0,"
                                  "reorder=rcm,rtol=1e-9,atol=1e-30,maxit=321,precision=float,precond_precision=float");
    char buf[512];
    bsr_solver_options p = parsed(bsr_solver_options_string(&o, buf, sizeof buf));
    CU_ASSERT_EQUAL(p.method, o.method);
    CU_ASSERT_EQUAL(p.restart, o.restart);
    CU_ASSERT_EQUAL(p.orth, o.orth);
    CU_ASSERT_EQUAL(p.precond, o.precond);
    CU_ASSERT_DOUBLE_EQUAL(p.tau1, o.tau1, 0);
    CU_ASSERT_DOUBLE_EQUAL(p.tau2, o.tau2, 0);
    CU_ASSERT_EQUAL(p.keep_pattern, 0);
    CU_ASSERT_STRING_EQUAL(p.reorder, o.reorder);
    CU_ASSERT_DOUBLE_EQUAL(p.rtol, o.rtol, 0);
    CU_ASSERT_DOUBLE_EQUAL(p.atol, o.atol, 0);
    CU_ASSERT_EQUAL(p.maxit, o.maxit);
    CU_ASSERT_EQUAL(p.precision, o.precision);
    CU_ASSERT_EQUAL(p.precond_precision, o.precond_precision);
}

/* The printed options (the CLI's "solver" line and the "config" of --json)
 * reproduce the run: non-default stag, dtol, fill and cap parse back to the
 * same options, field for field (issue 40: stag and dtol were not printed);
 * at their defaults stag and dtol are not printed (the strings of existing
 * runs stay as they were). */
static void test_roundtrip_limits(void)
{
    static const char *const cfgs[] = {
        "method=gmres,precond=ilu2,tau1=3e-2,tau2=1e-3,keep_pattern=1,fill=3.5,cap=12,stag=25,dtol=1e6",
        "method=bicgstab,precond=ilut,tau1=0.015,keep_pattern=0,fill=0,cap=auto,stag=7,dtol=123.456",
        "method=bicgstab,precond=ilut,tau1=0.015,keep_pattern=0,fill=2,cap=none,stag=1,dtol=1.0000000001",
        "method=cg,precond=jacobi,stag=40,dtol=1e300",
        "method=gmres,precond=ilu2,tau1=0.02,tau2=4e-4,keep_pattern=1,pattern=auto,pattern_growth=2.25,max_restarts=9,stag=3,dtol=1e7",
        "method=bicgstab,precond=ilut,tau1=0.02,keep_pattern=0,pattern=refresh,max_restarts=0,stag=2,dtol=1e5",
        "method=bicgstab,precond=ilu0,factor=cpu,stag=4,dtol=1e4",
        "method=bicgstab,precond=ilu2,tau1=0.01,tau2=1e-4,keep_pattern=1,factor=gpu,stag=5,dtol=1e3",
    };
    char buf[512];
    for (int c = 0; c < 8; c++) {
        bsr_solver_options o, p;
        bsr_test_options_round_trip(cfgs[c], &o, &p, buf, sizeof buf);
        CU_ASSERT_EQUAL(p.stag, o.stag);
        CU_ASSERT_EQUAL(p.dtol, o.dtol);
        CU_ASSERT_EQUAL(p.fill, o.fill);
        CU_ASSERT_EQUAL(p.cap, o.cap);
        CU_ASSERT_EQUAL(p.pattern, o.pattern);
        CU_ASSERT_EQUAL(p.pattern_growth, o.pattern_growth);
        CU_ASSERT_EQUAL(p.max_restarts, o.max_restarts);
        CU_ASSERT_EQUAL(p.factor, o.factor);
        CU_ASSERT_EQUAL(strstr(buf, ",factor=") != NULL, c >= 6);
        CU_ASSERT_PTR_NOT_NULL(strstr(buf, ",stag="));
        CU_ASSERT_PTR_NOT_NULL(strstr(buf, ",dtol="));
    }
    /* defaults: neither is printed */
    bsr_solver_options o;
    bsr_solver_options_default(&o);
    bsr_solver_options_string(&o, buf, sizeof buf);
    CU_ASSERT_PTR_NULL(strstr(buf, "stag="));
    CU_ASSERT_PTR_NULL(strstr(buf, "dtol="));
    CU_ASSERT_PTR_NULL(strstr(buf, "max_restarts="));
    CU_ASSERT_PTR_NULL(strstr(buf, "pattern="));
}

int main(int argc, char **argv)
{
    static const bsr_test tests[] = {
        {"defaults", test_defaults},
        {"issue string", test_issue_string},
        {"every key", test_every_key},
        {"errors name the key", test_errors},
        {"nested error message", test_nested_message},
        {"combinations checked", test_check},
        {"canonical round trip", test_roundtrip},
        {"round trip of stag, dtol, fill, cap", test_roundtrip_limits},
        {NULL, NULL},
    };
    return bsr_test_main("options", tests, argc, argv);
}
