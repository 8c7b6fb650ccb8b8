/* SPDX-License-Identifier: BSD-3-Clause */
/* LDU to CSR: the pattern (once per mesh) and the values (every solve). */
#include "lduCsr.H"
#include <cstring>

namespace Foam
{
namespace bsrFoam
{

/* The rows: cell i holds its diagonal, one entry per face it owns (column:
 * the neighbour, coefficient upper) and per face it neighbours (column: the
 * owner, coefficient lower), and its coupled entries, sorted by column (a
 * stable sort: equal columns keep that order).  Sorted, the library stores
 * the rows as given and takes new values with one copy; a cell pair sharing
 * two faces (or a face and a cyclic face) gives a duplicate the library sums
 * (BSR_SUM_DUPLICATES). */
void lduCsr::build(const lduAddressing& addr, const std::vector<int>& row, const std::vector<int>& col)
{
    const labelUList& l = addr.lowerAddr();
    const labelUList& u = addr.upperAddr();
    const label n = addr.size();
    const label nf = l.size();

    nCells_ = n;
    lowerAddr_.assign(l.begin(), l.end());
    upperAddr_.assign(u.begin(), u.end());

    coupleRow_ = row;
    coupleCol_ = col;

    std::vector<int> next(n + 1, 1);    // row i's length, then its next free slot
    for (label f = 0; f < nf; ++f)
    {
        ++next[l[f]];
        ++next[u[f]];
    }
    for (size_t k = 0; k < row.size(); ++k) ++next[row[k]];
    rowptr_.assign(n + 1, 0);
    for (label i = 0; i < n; ++i) rowptr_[i + 1] = rowptr_[i] + next[i];
    colind_.assign(rowptr_[n], 0);
    for (label i = 0; i < n; ++i)
    {
        colind_[rowptr_[i]] = int(i);
        next[i] = rowptr_[i] + 1;
    }
    posUpper_.resize(nf);
    posLower_.resize(nf);
    for (label f = 0; f < nf; ++f)
    {
        posUpper_[f] = next[l[f]]++;
        colind_[posUpper_[f]] = int(u[f]);
        posLower_[f] = next[u[f]]++;
        colind_[posLower_[f]] = int(l[f]);
    }
    posCouple_.resize(row.size());
    for (size_t k = 0; k < row.size(); ++k)
    {
        posCouple_[k] = next[row[k]]++;
        colind_[posCouple_[k]] = col[k];
    }

    // each row sorted by column (an insertion sort: a row is a cell's faces,
    // short, and the sort is stable): where each slot goes, then every
    // position and the columns moved there
    std::vector<int> to(colind_.size()), slots;
    for (label i = 0; i < n; ++i)
    {
        const int p0 = rowptr_[i], p1 = rowptr_[i + 1];
        slots.resize(p1 - p0);
        for (int p = p0; p < p1; ++p)
        {
            int q = p - p0;
            while (q > 0 && colind_[slots[q - 1]] > colind_[p])
            {
                slots[q] = slots[q - 1];
                --q;
            }
            slots[q] = p;
        }
        for (int q = p0; q < p1; ++q) to[slots[q - p0]] = q;
    }
    std::vector<int> sorted(colind_.size());
    for (size_t p = 0; p < colind_.size(); ++p) sorted[to[p]] = colind_[p];
    colind_.swap(sorted);
    posDiag_.resize(n);
    for (label i = 0; i < n; ++i) posDiag_[i] = to[rowptr_[i]];
    for (int& p : posUpper_) p = to[p];
    for (int& p : posLower_) p = to[p];
    for (int& p : posCouple_) p = to[p];
}

/* Same number of cells, the same owner/neighbour lists and the same coupled
 * entries, entry for entry. */
bool lduCsr::matches(const lduAddressing& addr, const std::vector<int>& row, const std::vector<int>& col) const
{
    const labelUList& l = addr.lowerAddr();
    const labelUList& u = addr.upperAddr();
    return nCells_ == addr.size()
        && size_t(l.size()) == lowerAddr_.size()
        && size_t(u.size()) == upperAddr_.size()
        && (l.empty() || std::memcmp(l.cdata(), lowerAddr_.data(), l.size()*sizeof(label)) == 0)
        && (u.empty() || std::memcmp(u.cdata(), upperAddr_.data(), u.size()*sizeof(label)) == 0)
        && row == coupleRow_ && col == coupleCol_;
}

/* diag at each row's first slot, upper and lower at the faces' slots (a
 * symmetric matrix stores upper only: lower() returns it), the coupled
 * coefficients at theirs, times sign. */
bool lduCsr::values(const lduMatrix& A, const std::vector<double>& couple, double sign,
                    std::vector<double>& val) const
{
    // compared while written: one pass over val, not a copy and a comparison
    bool changed = val.size() != colind_.size();
    val.resize(colind_.size());
    double* v = val.data();
    const auto put = [v, &changed](int p, double x) { changed |= !(v[p] == x); v[p] = x; };
    const scalarField& d = A.diag();
    for (label i = 0; i < nCells_; ++i) put(posDiag_[i], sign*d[i]);
    for (size_t k = 0; k < posCouple_.size(); ++k) put(posCouple_[k], sign*couple[k]);
    const label nf = label(posUpper_.size());
    if (nf == 0) return changed;
    const scalarField& up = A.upper();
    const scalarField& lo = A.lower();
    for (label f = 0; f < nf; ++f)
    {
        put(posUpper_[f], sign*up[f]);
        put(posLower_[f], sign*lo[f]);
    }
    return changed;
}

} // namespace bsrFoam
} // namespace Foam
