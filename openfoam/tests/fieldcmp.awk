# SPDX-License-Identifier: BSD-3-Clause
# Compare the internalField of two OpenFOAM ascii field files (scalar or
# vector, nonuniform or uniform): prints "maxdiff maxref n", the largest
# absolute difference of any component, the largest absolute component of
# the first file and the number of values (with -v mean=1 also the mean of
# A - B over all components: a level offset); exits 2 when the files do not
# hold the same number of values.
# usage: awk [-v mean=1] -f fieldcmp.awk FILE_A FILE_B
function readfield(file, vals,    line, n, inlist, count, i, k, parts) {
    n = 0; inlist = 0; count = -1
    while ((getline line < file) > 0) {
        if (!inlist) {
            if (line ~ /^internalField[ \t]+uniform/) {
                sub(/^internalField[ \t]+uniform[ \t]*/, "", line)
                gsub(/[();]/, " ", line)
                k = split(line, parts, " ")
                for (i = 1; i <= k; i++) vals[++n] = parts[i] + 0
                break
            }
            if (line ~ /^internalField[ \t]+nonuniform/) { inlist = 1; continue }
            continue
        }
        if (count < 0) { if (line ~ /^[0-9]+$/) count = line + 0; continue }
        if (line == "(") continue
        if (line == ")") break
        gsub(/[()]/, " ", line)
        k = split(line, parts, " ")
        for (i = 1; i <= k; i++) vals[++n] = parts[i] + 0
    }
    close(file)
    return n
}
BEGIN {
    na = readfield(ARGV[1], a); nb = readfield(ARGV[2], b)
    if (na != nb || na == 0) { printf "fieldcmp: %s has %d values, %s has %d\n", ARGV[1], na, ARGV[2], nb; exit 2 }
    md = 0; mr = 0; sd = 0
    for (i = 1; i <= na; i++) {
        d = a[i] - b[i]; sd += d; if (d < 0) d = -d
        r = a[i]; if (r < 0) r = -r
        if (d > md) md = d
        if (r > mr) mr = r
    }
    if (mean) printf "%.6g %.6g %d %.6g\n", md, mr, na, sd / na
    else printf "%.6g %.6g %d\n", md, mr, na
    exit 0
}
