#!/usr/bin/env bash
# Two builds of gatehouse against each other and against the bwrap line, as the tables of
# benches/README.md measure them: the exec bench (benches/benches/exec.rs) with build A in
# its first slot and B in its second, then the other way round, RUNS times each, under
# LOAD busy cores (`yes > /dev/null`, 0 to the number of cores). One line per run: the
# share of the run the hypervisor stole from this guest (`/proc/stat`, steal), a run with
# any steal is not comparable; the bwrap line's median; each build's ratio to it.
#
#   cargo bench -p gatehouse-benches --bench exec --no-run
#   benches/ab.sh A B [RUNS=4] [ROUNDS=192] [LOAD=0]
#
# A and B are absolute paths to release builds (cargo build-static, copied aside).
set -euo pipefail
A=${1:?build A}; B=${2:?build B}; RUNS=${3:-4}; ROUNDS=${4:-192}; LOAD=${5:-0}
cd "$(dirname "$0")/.."
bench=$(ls -t target/release/deps/exec-* 2>/dev/null | grep -v '\.d$' | head -1)
[ -n "$bench" ] || { echo "ab.sh: build the exec bench first (cargo bench -p gatehouse-benches --bench exec --no-run)" >&2; exit 2; }
cores=$(nproc)
steal() { awk '/^cpu /{print $9; exit}' /proc/stat; }
hogs=()
trap '[ ${#hogs[@]} -eq 0 ] || kill "${hogs[@]}" 2>/dev/null' EXIT
for _ in $(seq 1 "$LOAD"); do (exec yes > /dev/null) & hogs+=($!); done
sleep 0.5
for r in $(seq 1 "$RUNS"); do
  for order in AB BA; do
    if [ "$order" = AB ]; then first=$A; second=$B; else first=$B; second=$A; fi
    s0=$(steal); t0=$(date +%s%N)
    out=$(GATEHOUSE=$first GATEHOUSE_BENCH_BEFORE=$second GATEHOUSE_BENCH_ROUNDS=$ROUNDS "$bench" 2>&1)
    s1=$(steal); t1=$(date +%s%N)
    # Ticks of 10 ms stolen, as a share of the run's time on every core.
    st=$(( (s1 - s0) * 10000000 * 100 / ((t1 - t0) * cores) ))
    bw=$(awk '/^  bwrap line/{print $3; exit}' <<<"$out")
    x=$(awk '/gatehouse exec -- true/{print $(NF-3); exit}' <<<"$out")
    y=$(awk '/the same, before/{print $(NF-3); exit}' <<<"$out")
    [ "$order" = AB ] || { t=$x; x=$y; y=$t; }
    echo "load=$LOAD run=$r order=$order steal=${st}% bwrap=${bw}ms A=$x B=$y"
  done
done
