/* SPDX-License-Identifier: BSD-3-Clause */
/* Per-field state of the plugin: registry, setup and refactor. */
#include "bsrFoamField.H"
#include <algorithm>
#include <chrono>
#include <map>
#include <memory>

namespace Foam
{
namespace bsrFoam
{

std::string libError(const char* what, bsr_status s)
{
    return std::string(what) + ": " + bsr_status_string(s) + ": " + bsr_last_error();
}

void fieldState::clear(bool all)
{
    bsr_solver_destroy(s);
    bsr_matrix_destroy(A);
    bsr_multivec_destroy(B);
    bsr_multivec_destroy(X);
    s = nullptr;
    A = nullptr;
    B = X = nullptr;
    built.clear();
    if (all)
    {
        ctx = nullptr;
        device = -1;
    }
}

/* The CSR pattern of the addressing addr with the coupled entries (row[k],
 * col[k]): one already built for another field of the same mesh (p, Ux,
 * Uy, Uz share it), else a new one, kept for the next fields.  Patterns no
 * field holds any more are let go as new ones come. */
static std::shared_ptr<const lduCsr> patternFor
(
    const lduAddressing& addr, const std::vector<int>& row, const std::vector<int>& col
)
{
    static auto* patterns = new std::vector<std::shared_ptr<const lduCsr>>;
    for (const auto& p : *patterns)
    {
        if (p->matches(addr, row, col)) return p;
    }
    patterns->erase
    (
        std::remove_if(patterns->begin(), patterns->end(),
                       [](const std::shared_ptr<const lduCsr>& p) { return p.use_count() == 1; }),
        patterns->end()
    );
    auto p = std::make_shared<lduCsr>();
    p->build(addr, row, col);
    patterns->push_back(p);
    return p;
}

/* The process's CUDA context on device: one for every field, made at its
 * first use (a context costs its creation, streams, library handles and
 * pinned buffers, and device memory; OpenFOAM solves one field at a time,
 * so the fields' solvers take turns on it).  Never destroyed, for the reason
 * given at fieldStateFor. */
static bsr_status sharedContext(int device, bsr_context** ctx)
{
    static auto* contexts = new std::map<int, bsr_context*>;
    const auto it = contexts->find(device);
    if (it != contexts->end())
    {
        *ctx = it->second;
        return BSR_OK;
    }
    const bsr_status r = bsr_context_create(ctx, BSR_BACKEND_CUDA, device, nullptr);
    if (r)
    {
        *ctx = nullptr;
        return r;
    }
    (*contexts)[device] = *ctx;
    return BSR_OK;
}

fieldState::~fieldState()
{
    clear(true);
}

/* One entry per region and field for the life of the process.  The map is
 * never destroyed: at exit the process's memory goes with it, and freeing
 * device memory from a static destructor could run after the CUDA
 * runtime's own teardown. */
fieldState& fieldStateFor(const std::string& region, const std::string& name)
{
    static auto* states = new std::map<std::string, std::unique_ptr<fieldState>>;
    std::unique_ptr<fieldState>& p = (*states)[region + '\n' + name];
    if (!p) p.reset(new fieldState);
    return *p;
}

/* A full setup when the pattern, the options, the sign or the backend
 * changed (or none was made yet, or the last one failed); otherwise new
 * values into the same matrix and a numeric refactorization, or nothing
 * when the values are those factored. */
std::string prepare
(
    fieldState& st, const lduMatrix& M,
    const std::vector<int>& row, const std::vector<int>& col, const std::vector<double>& couple,
    const std::string& options, bool cuda, int device
)
{
    const lduAddressing& addr = M.lduAddr();
    const double sign = M.diag().size() && max(M.diag()) < 0 ? -1 : 1;
    const std::string key = options + (sign < 0 ? "|-A" : "|A")
                          + (cuda ? "|cuda:" + std::to_string(device) : "|cpu");
    bsr_status r;

    st.setupParts[0] = st.setupParts[1] = st.setupParts[2] = 0;
    if (st.A && st.s && st.built == key && st.csr && st.csr->matches(addr, row, col))
    {
        // the same coefficients as the factored ones (PISO's second pressure
        // corrector: the same rAU) need no refactorization
        if (!st.csr->values(M, couple, sign, st.val))
        {
            ++st.reuses;
            return "";
        }
        if ((r = bsr_matrix_set_values(st.A, st.val.data(), 0)))
        {
            st.clear(false);
            return libError("new matrix values", r);
        }
        if ((r = bsr_solver_refactor(st.s, st.A)))
        {
            st.clear(false);
            return libError("refactor", r);
        }
        ++st.refactors;
        return "";
    }

    st.clear(!cuda || st.device != device);
    if (cuda && !st.ctx)
    {
        if ((r = sharedContext(device, &st.ctx)))
        {
            st.ctx = nullptr;
            return libError(("backend cuda (device " + std::to_string(device) + ")").c_str(), r);
        }
        st.device = device;
    }
    using clock = std::chrono::steady_clock;
    const auto since = [](clock::time_point t)
    { return std::chrono::duration<double>(clock::now() - t).count(); };
    auto t = clock::now();
    if (!st.csr || !st.csr->matches(addr, row, col)) st.csr = patternFor(addr, row, col);
    st.sign = sign;
    st.csr->values(M, couple, sign, st.val);
    st.setupParts[0] = since(t);
    t = clock::now();
    const int n = int(st.csr->nCells());
    if ((r = bsr_matrix_create(&st.A, n, n, 1, st.csr->rowptr(), st.csr->colind(), st.val.data(),
                               BSR_DOUBLE, BSR_SUM_DUPLICATES)))
    {
        st.A = nullptr;
        return libError("matrix from the LDU coefficients", r);
    }
    st.setupParts[1] = since(t);
    t = clock::now();
    if ((r = bsr_solver_create_str(&st.s, st.ctx, options.c_str())))
    {
        st.s = nullptr;
        st.clear(false);
        return libError(("options \"" + options + "\"").c_str(), r);
    }
    if ((r = bsr_solver_setup(st.s, st.A)))
    {
        st.clear(false);
        return libError("setup", r);
    }
    if ((r = bsr_multivec_create(&st.B, n, 1, BSR_DOUBLE))
     || (r = bsr_multivec_create(&st.X, n, 1, BSR_DOUBLE)))
    {
        st.clear(false);
        return libError("vectors", r);
    }
    st.setupParts[2] = since(t);
    st.built = key;
    ++st.setups;
    return "";
}

} // namespace bsrFoam
} // namespace Foam
