/* SPDX-License-Identifier: BSD-3-Clause */
/* The "bsrsolve" lduMatrix::solver: OpenFOAM's residual and stopping test
 * around the library's Krylov solves. */
#include "bsrsolveSolver.H"
#include "bsrFoamField.H"
#include "addToRunTimeSelectionTable.H"
#include "objectRegistry.H"
#include "cyclicLduInterface.H"
#include "lduInterfaceField.H"
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#ifdef _OPENMP
#include <omp.h>
#endif

namespace Foam
{
    defineTypeNameAndDebug(bsrsolveSolver, 0);

    lduMatrix::solver::addsymMatrixConstructorToTable<bsrsolveSolver>
        addbsrsolveSolverSymMatrixConstructorToTable_;

    lduMatrix::solver::addasymMatrixConstructorToTable<bsrsolveSolver>
        addbsrsolveSolverAsymMatrixConstructorToTable_;
}

Foam::bsrsolveSolver::bsrsolveSolver
(
    const word& fieldName, const lduMatrix& matrix,
    const FieldField<Field, scalar>& interfaceBouCoeffs, const FieldField<Field, scalar>& interfaceIntCoeffs,
    const lduInterfaceFieldPtrsList& interfaces, const dictionary& solverControls
)
:
    lduMatrix::solver
    (
        fieldName,
        matrix,
        interfaceBouCoeffs,
        interfaceIntCoeffs,
        interfaces,
        solverControls
    )
{}

/* method and precond from the dictionary, then the `config` string, whose
 * keys override them.  Defaults on the CPU: CG with IC(0) for a symmetric
 * matrix, BiCGStab with Jacobi for an asymmetric one (momentum, transport:
 * a few iterations, where an ILU(0) refactorization costs more than they
 * do: U solves of the 1M-cell cube 55.7 s with ILU(0), 11.3 s with Jacobi,
 * bench/RESULTS.md); on the CUDA backend CG with IC(0) (the device ILU(0)
 * of the symmetric matrix) and BiCGStab with ILU(0), both factored on the
 * device. */
std::string Foam::bsrsolveSolver::optionString() const
{
    const bool cuda = controlDict_.lookupOrDefault<word>("backend", "cpu") == "cuda";
    const bool cg = matrix_.symmetric();
    const word method = controlDict_.lookupOrDefault<word>("method", cg ? "cg" : "bicgstab");
    const word precond = controlDict_.lookupOrDefault<word>("precond", cg ? "ic0" : cuda ? "ilu0" : "jacobi");
    const string config = controlDict_.lookupOrDefault<string>("config", "");
    std::string o = "method=" + method + ",precond=" + precond;
    if (!config.empty()) o += "," + config;
    return o;
}

Foam::solverPerformance Foam::bsrsolveSolver::solve
(
    scalarField& psi,
    const scalarField& source,
    const direction cmpt
) const
{
    const std::string options = optionString();
    solverPerformance perf("bsrsolve(" + options + ")", fieldName_);

    // Coupled patches: a plain (translational) cyclic couples each of its
    // faces' cells with the cell across: A(cell, cell across) gets
    // -interfaceBouCoeffs (what cyclicFvPatchField::updateInterfaceMatrix
    // subtracts in Amul).  Others (processor: parallel runs; cyclicAMI,
    // rotational or jump cyclics: interpolated, transformed or affine
    // couplings) are refused.
    std::vector<int> crow, ccol;
    std::vector<double> cval;
    forAll(interfaces_, patchi)
    {
        if (!interfaces_.set(patchi)) continue;
        const lduInterfaceField& field = interfaces_[patchi];
        const lduInterface& iface = field.interface();
        const cyclicLduInterface* cyc = dynamic_cast<const cyclicLduInterface*>(&iface);
        const lduInterface* across = cyc ? dynamic_cast<const lduInterface*>(&cyc->neighbPatch()) : nullptr;
        if (!cyc || !across || field.type() != "cyclic" || cyc->forwardT().size())
        {
            FatalErrorInFunction
                << "bsrsolve: field " << fieldName_ << ": coupled interface "
                << patchi << " (patch type " << field.type()
                << (cyc && cyc->forwardT().size() ? ", rotational" : "")
                << ") is not supported: the plugin handles translational "
                   "cyclic patches only (no processor patches: serial runs); "
                   "choose another solver for this field" << exit(FatalError);
        }
        const labelUList& cells = iface.faceCells();
        const labelUList& cellsAcross = across->faceCells();
        const scalarField& coeffs = interfaceBouCoeffs_[patchi];
        forAll(cells, i)
        {
            crow.push_back(int(cells[i]));
            ccol.push_back(int(cellsAcross[i]));
            cval.push_back(-coeffs[i]);
        }
    }

    const word backend = controlDict_.lookupOrDefault<word>("backend", "cpu");
    if (backend != "cpu" && backend != "cuda")
    {
        FatalIOErrorInFunction(controlDict_)
            << "bsrsolve: field " << fieldName_ << ": backend " << backend
            << " is not cpu or cuda" << exit(FatalIOError);
    }
    const bool cuda = backend == "cuda";
    const label device = controlDict_.lookupOrDefault<label>("device", 0);
    const label threads = controlDict_.lookupOrDefault<label>("threads", 0);
    const bool verbose = controlDict_.lookupOrDefault<bool>("verbose", false);
    if (threads < 0 || device < 0)
    {
        FatalIOErrorInFunction(controlDict_)
            << "bsrsolve: field " << fieldName_ << ": threads " << threads
            << " and device " << device << " must be >= 0" << exit(FatalIOError);
    }
#ifdef _OPENMP
    // The library's OpenMP teams: `threads N`, else OMP_NUM_THREADS where
    // set, else one thread.  OpenFOAM runs one process a core: a team of
    // threads spinning beside the solver's own work oversubscribes the cores
    // (cube 40^3 on a loaded 2-core machine: 24.2 s with two threads
    // spinning, 3.4 s with one; bench/RESULTS.md)
    const char* env = std::getenv("OMP_NUM_THREADS");
    if (threads > 0) omp_set_num_threads(int(threads));
    else if (!env || !*env) omp_set_num_threads(1);
#endif

    const std::string region =
        matrix_.mesh().hasDb() ? std::string(matrix_.mesh().thisDb().name()) : std::string();
    bsrFoam::fieldState& st = bsrFoam::fieldStateFor(region, fieldName_);

    // OpenFOAM's residual: rA = source - A psi, its L1 norm over normFactor
    const label n = psi.size();
    scalarField wA(n), rA(n), tmp(n);
    matrix_.Amul(wA, psi, interfaceBouCoeffs_, interfaces_, cmpt);
    rA = source - wA;
    matrix().setResidualField(rA, fieldName_, true);
    const scalar normFactor = this->normFactor(psi, source, wA, tmp);
    perf.initialResidual() = gSumMag(rA, matrix().mesh().comm())/normFactor;
    perf.finalResidual() = perf.initialResidual();

    // Whether another pass is due: the loop condition of OpenFOAM's own
    // solvers (below maxIter and not converged, or below minIter)
    const auto passDue = [&]()
    {
        return
            (perf.nIterations() < maxIter_ && !perf.checkConvergence(tolerance_, relTol_))
         || perf.nIterations() < minIter_;
    };

    // A field converged already (a velocity component at rest) goes back
    // untouched, its matrix not handed to the library (no setup, no
    // refactor), as OpenFOAM's own solvers then build no preconditioner
    if (!passDue())
    {
        perf.checkConvergence(tolerance_, relTol_);
        matrix().setResidualField(rA, fieldName_, false);
        return perf;
    }
    const auto t0 = std::chrono::steady_clock::now();
    const std::string err = bsrFoam::prepare(st, matrix_, crow, ccol, cval, options, cuda, int(device));
    // what the values' conversion and the (re)factorization took, for `verbose`
    const double prepareTime =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (!err.empty())
    {
        FatalIOErrorInFunction(controlDict_)
            << "bsrsolve: field " << fieldName_ << " (" << options << ", "
            << backend << "): " << err.c_str() << exit(FatalIOError);
    }

    // The library stops on the 2-norm of its residual, OpenFOAM on the
    // 1-norm of the true residual: each pass asks for the 2-norm that meets
    // OpenFOAM's target if the 1-norm/2-norm ratio grows from its value now
    // as much as it grew over this field's last solve (the iteration damps
    // the rough part of the residual first: the ratio rises), then checks
    // OpenFOAM's measure on the true residual A psi - source.  A pass that
    // falls short continues from its iterate (a Krylov restart) with the
    // ratio it ended with, and half the 2-norm after a second miss.
    const double ratio0 = gSumMag(rA)/max(std::sqrt(gSumSqr(rA)), VSMALL);
    double* X = static_cast<double*>(bsr_multivec_data(st.X));
    double* B = static_cast<double*>(bsr_multivec_data(st.B));
    for (label i = 0; i < n; ++i) B[i] = st.sign*source[i];
    double shrink = 1;
    int passes = 0;
    while (passDue())
    {
        const bool minOnly = perf.checkConvergence(tolerance_, relTol_);
        const double target = normFactor*
            (relTol_ > solverPerformance::small_
           ? max(tolerance_, relTol_*perf.initialResidual()) : tolerance_);
        const double l1 = gSumMag(rA), l2 = std::sqrt(gSumSqr(rA));
        const double ratio = passes == 0 ? l1/max(l2, VSMALL)*st.growth : l1/max(l2, VSMALL);
        const double atol = minOnly || l1 <= 0 ? 0 : shrink*target/ratio;
        const int maxit = int(minOnly ? minIter_ - perf.nIterations()
                                      : maxIter_ - perf.nIterations());
        bsr_status r = bsr_solver_set_tolerances(st.s, 0, atol, maxit);
        if (r)
        {
            FatalErrorInFunction << "bsrsolve: field " << fieldName_ << ": "
                << bsrFoam::libError("tolerances", r).c_str() << exit(FatalError);
        }
        std::memcpy(X, psi.cdata(), n*sizeof(double));
        bsr_solver_stats stats;
        std::memset(&stats, 0, sizeof stats);
        r = bsr_solver_solve(st.s, st.B, st.X, &stats);
        const int its = stats.col ? stats.col[0].iterations : 0;
        const bsr_reason why = stats.col ? stats.col[0].reason : BSR_REASON_NONE;
        const double setupTime = stats.setup_s + stats.fallback_s, solveTime = stats.solve_s;
        const double prof[4] = {stats.prof_s[0], stats.prof_s[1], stats.prof_s[2], stats.prof_s[3]};
        bsr_solver_stats_free(&stats);
        if (r && r != BSR_ERR_NOCONV && r != BSR_ERR_BREAKDOWN)
        {
            FatalErrorInFunction << "bsrsolve: field " << fieldName_ << ": "
                << bsrFoam::libError("solve", r).c_str() << exit(FatalError);
        }
        std::memcpy(psi.data(), X, n*sizeof(double));
        perf.nIterations() += its;
        ++passes;

        matrix_.Amul(wA, psi, interfaceBouCoeffs_, interfaces_, cmpt);
        rA = source - wA;
        perf.finalResidual() = gSumMag(rA, matrix().mesh().comm())/normFactor;
        if (verbose)
        {
            Info<< "bsrsolve: " << fieldName_ << " pass " << passes << ": "
                << its << " iterations (" << bsr_reason_string(why)
                << ", 2-norm asked " << atol << ", ratio growth " << st.growth
                << "), OpenFOAM residual " << perf.finalResidual()
                << "; values and factorization " << prepareTime << " s";
            if (st.setupParts[0] + st.setupParts[1] + st.setupParts[2] > 0)
            {
                Info<< " (a setup: pattern and values " << st.setupParts[0]
                    << " s, matrix " << st.setupParts[1] << " s, solver "
                    << st.setupParts[2] << " s)";
            }
            Info<< "; setup " << setupTime << " s, solve " << solveTime
                << " s; field: " << st.setups << " setups, " << st.refactors
                << " refactors, " << st.reuses << " reuses";
            if (prof[0] + prof[1] + prof[2] + prof[3] > 0)
            {
                Info<< " (operator " << prof[0] << " s, preconditioner " << prof[1]
                    << " s, vectors " << prof[2] << " s, reductions " << prof[3] << " s)";
            }
            Info<< endl;
        }
        if (minOnly)
        {
            if (its == 0) break;    // nothing more the library can do
            continue;
        }
        if (perf.checkConvergence(tolerance_, relTol_)) continue;
        // no progress: a breakdown, a stagnation or a residual at its
        // rounding floor; OpenFOAM reports it as not converged
        if (its == 0 && shrink < 1e-6) break;
        if (why == BSR_DIVERGED_NAN || !std::isfinite(perf.finalResidual()))
        {
            FatalErrorInFunction << "bsrsolve: field " << fieldName_
                << ": the residual became non-finite after " << perf.nIterations()
                << " iterations (" << options.c_str() << ")" << exit(FatalError);
        }
        if (r == BSR_ERR_BREAKDOWN || why == BSR_DIVERGED_INDEFINITE)
        {
            WarningInFunction << "bsrsolve: field " << fieldName_ << ": "
                << bsr_reason_string(why) << " after " << perf.nIterations()
                << " iterations" << endl;
            break;
        }
        if (passes > 1) shrink *= 0.5;
    }
    if (passes > 0 && perf.finalResidual() > 0 && ratio0 > 0)
    {
        const double l2 = std::sqrt(gSumSqr(rA));
        if (l2 > 0) st.growth = min(max(gSumMag(rA)/l2/ratio0, 1.0), 1e3);
    }
    perf.checkConvergence(tolerance_, relTol_);
    matrix().setResidualField(rA, fieldName_, false);
    return perf;
}
