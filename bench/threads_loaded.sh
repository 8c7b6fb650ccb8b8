#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Issue 40: solve times with 1, 2 and all threads, on an idle and on a loaded
# machine, for a small and a medium problem (CPU backend).  The load is one
# busy loop per CPU, started here and killed (by their process ids) at the
# end.  Each figure is the median of REPS runs of setup + solve, as the CLI's
# --json reports them (seconds), and the iterations.  With a second CLI
# (OLD), the same runs of that build come first (before/after a change).
#
# usage: sh bench/threads_loaded.sh [CLI] [REPS] [OLD]
#   CLI  the bsrsolve binary (default build/bsrsolve)
#   REPS runs per figure (default 5)
#   OLD  a second bsrsolve binary to time the same way (optional)
# Environment: SMALL, MEDIUM (generator specs), CONFIG (solver options),
# WAIT="default passive" (OMP_WAIT_POLICY values to try; "default" = unset).
CLI=${1:-build/bsrsolve}
REPS=${2:-5}
OLD=${3:-}
SMALL=${SMALL:-poisson2d:64}
MEDIUM=${MEDIUM:-stencil3d:24:4}
CONFIG=${CONFIG:-method=bicgstab,precond=ilu0}
WAIT=${WAIT:-default passive}
NCPU=$(nproc)
THREADS="1 2"
[ "$NCPU" -gt 2 ] && THREADS="$THREADS $NCPU"

for b in "$CLI" $OLD; do
    [ -x "$b" ] || { echo "threads_loaded.sh: $b is not an executable bsrsolve" >&2; exit 2; }
done

LOADPIDS=""
stop_load() {
    for p in $LOADPIDS; do kill "$p" 2>/dev/null; done
    for p in $LOADPIDS; do wait "$p" 2>/dev/null; done
    LOADPIDS=""
}
trap 'stop_load; exit 130' INT TERM
trap 'stop_load' EXIT
start_load() {
    i=0
    while [ $i -lt "$NCPU" ]; do
        sh -c 'while :; do :; done' &
        LOADPIDS="$LOADPIDS $!"
        i=$((i + 1))
    done
    sleep 1
}

# median of the numbers on stdin
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "nan"; else if (NR % 2) print v[(NR + 1) / 2]; else printf "%.6f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# one figure: binary, generator, threads, wait policy -> "setup solve iterations"
figure() {
    bin=$1; gen=$2; nt=$3; wp=$4
    : > /tmp/threads_loaded.$$.s
    : > /tmp/threads_loaded.$$.v
    r=0
    while [ $r -lt "$REPS" ]; do
        if [ "$wp" = default ]; then
            out=$(env -u OMP_WAIT_POLICY OMP_NUM_THREADS="$nt" "$bin" --gen "$gen" --backend cpu --config "$CONFIG" --json 2>/dev/null)
        else
            out=$(env OMP_WAIT_POLICY="$wp" OMP_NUM_THREADS="$nt" "$bin" --gen "$gen" --backend cpu --config "$CONFIG" --json 2>/dev/null)
        fi
        echo "$out" | sed -n 's/^"setup_s": \([0-9.e+-]*\).*/\1/p' >> /tmp/threads_loaded.$$.s
        echo "$out" | sed -n 's/^"solve_s": \([0-9.e+-]*\).*/\1/p' >> /tmp/threads_loaded.$$.v
        it=$(echo "$out" | sed -n 's/^"iterations": \[\([0-9]*\).*/\1/p')
        r=$((r + 1))
    done
    echo "$(median < /tmp/threads_loaded.$$.s) $(median < /tmp/threads_loaded.$$.v) $it"
    rm -f /tmp/threads_loaded.$$.s /tmp/threads_loaded.$$.v
}

echo "# bench/threads_loaded.sh $(date -u +%Y-%m-%dT%H:%MZ), $(uname -m), $NCPU CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //')"
echo "# config $CONFIG, $REPS runs a figure (medians), seconds"
printf "%-8s %-15s %-6s %7s %-8s %9s %9s %6s\n" build problem load threads wait setup_s solve_s iters
for load in idle loaded; do
    [ $load = loaded ] && start_load
    for gen in "$SMALL" "$MEDIUM"; do
        for nt in $THREADS; do
            for wp in $WAIT; do
                for b in $OLD "$CLI"; do
                    tag=new
                    [ -n "$OLD" ] && [ "$b" = "$OLD" ] && tag=old
                    set -- $(figure "$b" "$gen" "$nt" "$wp")
                    printf "%-8s %-15s %-6s %7s %-8s %9s %9s %6s\n" $tag "$gen" $load "$nt" "$wp" "$1" "$2" "$3"
                done
            done
        done
    done
    [ $load = loaded ] && stop_load
done
echo "# load average at the end $(cut -d' ' -f1-3 /proc/loadavg)"
