#!/usr/bin/env bash
# Issue 46's target, measured: `gatehouse exec -- true` (the static build) against the
# bubblewrap line doing the same confinement of one command, idle and with one busy core
# (`yes > /dev/null` pinned to core 0), and the ratio of the two at each load: first
# criterion's medians (benches/benches/exec_true.rs, one function after the other), then
# the interleaved whole-process bench (benches/benches/exec.rs, the two spawned in turn
# round after round, which keeps the ratio honest when the load moves). Target: at most
# 1.00 in every row. Run it on an otherwise idle machine; a run with any steal time
# (`/proc/stat`, a hypervisor taking the guest's cores) is not comparable, and is said.
#
#   benches/exec_ratio.sh [ROUNDS=96]
#
# Builds what it needs (`cargo build-static`, the two benches) in CARGO_TARGET_DIR (default
# target/). Prints one line per load and bench, then a summary.
set -euo pipefail
ROUNDS=${1:-96}
cd "$(dirname "$0")/.."
target=${CARGO_TARGET_DIR:-target}
command -v bwrap >/dev/null || { echo "exec_ratio.sh: bubblewrap is not installed (apt-get install bubblewrap)" >&2; exit 2; }
command -v jq >/dev/null || { echo "exec_ratio.sh: jq is not installed (apt-get install jq)" >&2; exit 2; }
cargo build-static >&2
static="$target/x86_64-unknown-linux-gnu/release/gatehouse"
[ -x "$static" ] || { echo "exec_ratio.sh: no static build at $static" >&2; exit 2; }
static=$(realpath "$static")  # cargo bench runs in the bench crate's folder
cargo bench -p gatehouse-benches --bench exec_true --bench exec --no-run >&2

steal() { awk '/^cpu /{print $9; exit}' /proc/stat; }
hog=""
trap '[ -z "$hog" ] || kill "$hog" 2>/dev/null || true' EXIT
median_ms() { jq '.median.point_estimate / 1e6' "$target/criterion/exec_true/$1/new/estimates.json"; }
summary=()
for load in 0 1; do
  if [ "$load" = 1 ]; then
    if command -v taskset >/dev/null; then (exec taskset -c 0 yes > /dev/null) & else (exec yes > /dev/null) & fi
    hog=$!
    sleep 0.5
  fi
  s0=$(steal)
  GATEHOUSE="$static" cargo bench -q -p gatehouse-benches --bench exec_true -- --noplot >&2
  s1=$(steal)
  bw=$(median_ms bwrap_line); gh=$(median_ms gatehouse_exec)
  ratio=$(awk -v a="$gh" -v b="$bw" 'BEGIN{printf "%.2f", a/b}')
  line=$(printf "busy cores %d  criterion    bwrap %6.2f ms  gatehouse exec %6.2f ms  ratio %s  steal ticks %d" \
    "$load" "$bw" "$gh" "$ratio" "$((s1 - s0))")
  echo "$line"; summary+=("$line")
  s0=$(steal)
  out=$(GATEHOUSE="$static" GATEHOUSE_BENCH_ROUNDS="$ROUNDS" cargo bench -q -p gatehouse-benches --bench exec 2>&1)
  s1=$(steal)
  bw=$(awk '/^  bwrap line/{print $3; exit}' <<<"$out")
  # "  gatehouse exec -- true     8.62 ms    2.20x the bwrap line"
  gh=$(awk '/gatehouse exec -- true/{print $(NF-5); exit}' <<<"$out")
  ratio=$(awk '/gatehouse exec -- true/{sub(/x$/, "", $(NF-3)); print $(NF-3); exit}' <<<"$out")
  line=$(printf "busy cores %d  interleaved  bwrap %6.2f ms  gatehouse exec %6.2f ms  ratio %s  steal ticks %d" \
    "$load" "$bw" "$gh" "$ratio" "$((s1 - s0))")
  echo "$line"; summary+=("$line")
  if [ -n "$hog" ]; then kill "$hog" 2>/dev/null || true; hog=""; fi
done
echo "exec_ratio.sh: static build $static; target at most 1.00 in every row"
printf '%s\n' "${summary[@]}"
