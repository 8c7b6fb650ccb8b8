#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Host setup against the number of threads: for each problem, the setup at 1,
# 2, 16 and all threads (OMP_NUM_THREADS; "all" = nproc), with profile=1, and
# a table of the setup time and its phases (seconds, median of REPS runs).
# No setup phase should be slower at all threads than at 16, and a small
# problem should not be slower at 2 or all threads than at 1: a "# check:"
# line under each table names what is (check() says by how much).  The header
# shows nproc, the affinity mask, the cgroup CPU quota and the thread count
# the library picks by itself (OMP_NUM_THREADS unset), so that
# oversubscription is visible.  The solves are cut short (maxit=2): only the
# setup is measured, and a "not converged" exit is expected.
#
# usage: sh bench/threads_setup.sh [CLI] [REPS]
#   CLI  the bsrsolve binary (default build/bsrsolve)
#   REPS runs per figure (default 3)
# Environment:
#   BACKENDS="cpu cuda"  backends to run (default cpu; cuda: the host parts of
#                        the device setup, the numbers of the same phases)
#   THREADS="1 2 16 64"  thread counts (default 1 2 16 and nproc)
#   PROBLEMS='GEN|CONFIG;GEN|CONFIG...'  problems (default below)
#   WAIT=passive         OMP_WAIT_POLICY for every run (default: unset)
CLI=${1:-build/bsrsolve}
REPS=${2:-3}
BACKENDS=${BACKENDS:-cpu}
NCPU=$(nproc)
THREADS=${THREADS:-$(printf '%s\n' 1 2 16 "$NCPU" | awk '!seen[$1]++' | tr '\n' ' ')}
PROBLEMS=${PROBLEMS:-'stencil3d:100:4|precond=ilu2,tau1=0.1,reorder=natural;stencil3d:100:4|precond=ilu0,reorder=center;stencil3d:100:4|precond=ilu2;rotconv3d:40,4|precond=ilu2;poisson2d:64|precond=ilu0'}

[ -x "$CLI" ] || { echo "threads_setup.sh: $CLI is not an executable bsrsolve" >&2; exit 2; }
TMP=${TMPDIR:-/tmp}/threads_setup.$$
mkdir -p "$TMP" || exit 2
trap 'rm -rf "$TMP"' EXIT
trap 'rm -rf "$TMP"; exit 130' INT TERM

# The cgroup CPU quota as "QUOTA/PERIOD" (v2 cpu.max of this process's cgroup,
# else v1 cfs_quota_us/cfs_period_us), "none" when unlimited or not found.
quota() {
    d=$(sed -n 's/^0:://p' /proc/self/cgroup 2>/dev/null)
    for f in "/sys/fs/cgroup$d/cpu.max" /sys/fs/cgroup/cpu.max; do
        if [ -r "$f" ]; then
            q=$(cut -d' ' -f1 "$f"); p=$(cut -d' ' -f2 "$f")
            [ "$q" = max ] && { echo "none ($f: max)"; return; }
            echo "$q/$p = $(awk -v q="$q" -v p="$p" 'BEGIN { printf "%.2f", q / p }') CPUs ($f)"; return
        fi
    done
    for dir in /sys/fs/cgroup/cpu /sys/fs/cgroup/cpu,cpuacct; do
        if [ -r "$dir/cpu.cfs_quota_us" ]; then
            q=$(cat "$dir/cpu.cfs_quota_us"); p=$(cat "$dir/cpu.cfs_period_us")
            [ "$q" -le 0 ] 2>/dev/null && { echo "none ($dir: cfs_quota_us $q)"; return; }
            echo "$q/$p = $(awk -v q="$q" -v p="$p" 'BEGIN { printf "%.2f", q / p }') CPUs ($dir)"; return
        fi
    done
    echo "none found"
}

# The verdict on one problem's medians (lines PHASE<TAB>THREADS<TAB>SECONDS):
# a phase (or the setup) slower at the most threads than at 16, by 20% and
# 10 ms or more; the setup slower at any thread count than at 1, by 50% and
# 5 ms or more (a small problem that fans out).  "ok" when neither.
check() {
    awk -F '\t' -v cols="$2" '
        { t[$1, $2] = $3; if (!($1 in seen)) { seen[$1] = 1; ph[++n] = $1 } }
        END {
            nc = split(cols, c, " "); top = c[nc]; bad = ""
            for (i = 1; i <= n; i++) {
                p = ph[i]
                if (p == "wall") continue
                a = t[p, 16]; b = t[p, top]
                if (top != 16 && a != "" && a != "-" && b != "-" && b > 1.2 * a + 0.01)
                    bad = bad sprintf("\n#   %s: %s s at %s threads, %s s at 16", p, b, top, a)
            }
            one = t["setup", 1]
            for (j = 1; j <= nc; j++)
                if (c[j] != 1 && one != "" && one != "-" && t["setup", c[j]] != "-" && t["setup", c[j]] > 1.5 * one + 0.005)
                    bad = bad sprintf("\n#   setup: %s s at %s threads, %s s at 1", t["setup", c[j]], c[j], one)
            print (bad == "" ? "# check: ok" : "# check: slower with more threads:" bad)
        }' "$1"
}

# median of the numbers on stdin
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "-"; else if (NR % 2) print v[(NR + 1) / 2]; else printf "%.4f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# One run: backend, generator, config, threads -> appends "PHASE<TAB>SECONDS"
# lines to $TMP/phases.N (the profile's phases, summed by name; "setup" the
# CLI's setup time, "wall" the whole process).
run_one() {
    be=$1; gen=$2; cfg=$3; nt=$4; out=$5
    t0=$(date +%s.%N)
    if [ -n "${WAIT:-}" ]; then
        OMP_WAIT_POLICY=$WAIT OMP_NUM_THREADS=$nt "$CLI" --gen "$gen" --backend "$be" --config "$cfg,profile=1,maxit=2" > "$TMP/out" 2>&1
    else
        env -u OMP_WAIT_POLICY OMP_NUM_THREADS="$nt" "$CLI" --gen "$gen" --backend "$be" --config "$cfg,profile=1,maxit=2" > "$TMP/out" 2>&1
    fi
    rc=$?
    t1=$(date +%s.%N)
    if [ $rc -ne 0 ] && [ $rc -ne 3 ]; then
        echo "  $be $gen $cfg, $nt threads: exit $rc: $(grep 'bsrsolve' "$TMP/out" | tail -n 1)" >&2
        return 1
    fi
    {
        sed -n 's/^prof: \(.*[^ ]\)  *\([0-9.e+-][0-9.e+-]*\) s$/\1\t\2/p' "$TMP/out" | grep -v '^solve:'
        sed -n 's/^time  *setup \([0-9.e+-]*\) s.*/setup\t\1/p' "$TMP/out"
        awk -v a="$t0" -v b="$t1" 'BEGIN { printf "wall\t%.4f\n", b - a }'
    } | awk -F '\t' '{ s[$1] += $2; if (!($1 in o)) { o[$1] = ++n; k[n] = $1 } } END { for (i = 1; i <= n; i++) printf "%s\t%.4f\n", k[i], s[k[i]] }' >> "$out"
}

echo "# bench/threads_setup.sh $(date -u +%Y-%m-%dT%H:%MZ), $(uname -m), $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //')"
echo "# nproc $NCPU; affinity $(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status); cgroup CPU quota $(quota)"
echo "# load average $(cut -d' ' -f1-3 /proc/loadavg); OMP_WAIT_POLICY ${WAIT:-unset}; $REPS runs a figure (medians), seconds"
echo "# threads the library picks (OMP_NUM_THREADS unset): $(env -u OMP_NUM_THREADS "$CLI" --gen poisson2d:8 --backend cpu --json 2>/dev/null | sed -n 's/^"threads": *\([0-9]*\).*/\1/p')"
echo "# solves cut at maxit=2: setup only"

IFS_OLD=$IFS
echo "$PROBLEMS" | tr ';' '\n' > "$TMP/problems"
while IFS='|' read -r gen cfg; do
    IFS=$IFS_OLD
    [ -n "$gen" ] || continue
    for be in $BACKENDS; do
        echo
        echo "## $gen  $cfg  --backend $be"
        cols=""
        for nt in $THREADS; do
            : > "$TMP/ph.$nt"
            r=0
            while [ $r -lt "$REPS" ]; do
                run_one "$be" "$gen" "$cfg" "$nt" "$TMP/ph.$nt" || break
                r=$((r + 1))
            done
            cols="$cols $nt"
        done
        # phases in the order of their first appearance, one column a thread count
        cat $(for nt in $cols; do echo "$TMP/ph.$nt"; done) | cut -f1 | awk '!seen[$0]++' > "$TMP/names"
        printf "%-44s" "phase \\ threads"
        for nt in $cols; do printf " %9s" "$nt"; done
        echo
        : > "$TMP/medians"
        while IFS= read -r ph; do
            printf "%-44s" "$ph"
            for nt in $cols; do
                m=$(awk -F '\t' -v p="$ph" '$1 == p { print $2 }' "$TMP/ph.$nt" | median)
                printf " %9s" "$m"
                printf '%s\t%s\t%s\n' "$ph" "$nt" "$m" >> "$TMP/medians"
            done
            echo
        done < "$TMP/names"
        check "$TMP/medians" "$cols"
    done
    IFS='|'
done < "$TMP/problems"
IFS=$IFS_OLD
echo
echo "# load average at the end $(cut -d' ' -f1-3 /proc/loadavg)"
