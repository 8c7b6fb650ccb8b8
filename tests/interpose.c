/* SPDX-License-Identifier: BSD-3-Clause */
/* ctest `interposition`: a program linked against libbsrsolve.so that
 * defines functions under the names of the library's internal ones.  The
 * library must keep calling its own: it exports only the public API, so
 * these definitions replace nothing.  Generates a cfd3d problem (the
 * generators parse their parameters with gen_args_parse), solves it with
 * ILU2 + BiCGStab (the ILU setup factors with ilu_factor) and checks the
 * solution against the exact one.  Exit 0 when right; 42 or 43 when the
 * library called one of the program's functions; 1 on a wrong solution. */
#include <bsrsolve.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* Names of functions inside the library (src/ilu/ilu_impl.h, src/stencil/stencil_impl.h),
 * with other signatures: the dynamic linker matches names only. */
int ilu_factor(void);
int gen_args_parse(void);
int bsr_cmp_int(void);

int ilu_factor(void)
{
    fprintf(stderr, "interpose: the library called the program's ilu_factor\n");
    exit(42);
}

int gen_args_parse(void)
{
    fprintf(stderr, "interpose: the library called the program's gen_args_parse\n");
    exit(43);
}

int bsr_cmp_int(void)
{
    fprintf(stderr, "interpose: the library called the program's bsr_cmp_int\n");
    exit(44);
}

#define CHECK(call)                                                                                    \
    do {                                                                                               \
        bsr_status s_ = (call);                                                                        \
        if (s_ != BSR_OK) {                                                                            \
            fprintf(stderr, "interpose: %s: %s: %s\n", #call, bsr_status_string(s_), bsr_last_error()); \
            return 1;                                                                                  \
        }                                                                                              \
    } while (0)

int main(void)
{
    bsr_problem P;
    bsr_multivec *X;
    bsr_solver *S;
    bsr_solver_stats st;
    CHECK(bsr_generate("cfd3d:8,4,10", BSR_DOUBLE, &P));
    if (!P.xexact) { fprintf(stderr, "interpose: cfd3d has no exact solution\n"); return 1; }
    int64_t n = bsr_multivec_rows(P.rhs);
    CHECK(bsr_multivec_create(&X, n, 1, BSR_DOUBLE));
    CHECK(bsr_solver_create_str(&S, NULL, "method=bicgstab,precond=ilu2,reorder=nd:auto,rtol=1e-10"));
    CHECK(bsr_solver_setup(S, P.A));
    CHECK(bsr_solver_solve(S, P.rhs, X, &st));
    const double *x = bsr_multivec_cdata(X), *xe = bsr_multivec_cdata(P.xexact);
    double num = 0, den = 0;
    for (int64_t i = 0; i < n; i++) {
        num += (x[i] - xe[i]) * (x[i] - xe[i]);
        den += xe[i] * xe[i];
    }
    double err = sqrt(num / den);
    printf("interpose: cfd3d:8,4,10, ILU2 + BiCGStab: %d iterations, error vs exact %.2e (%s)\n",
           st.col[0].iterations, err, st.precond_info);
    bsr_solver_stats_free(&st);
    bsr_solver_destroy(S);
    bsr_multivec_destroy(X);
    bsr_problem_free(&P);
    if (!(err < 1e-6)) { fprintf(stderr, "interpose: wrong solution\n"); return 1; }
    return 0;
}
