#!/usr/bin/env bash
# Runs the whole suite against the reference and every third-party adapter, keeps each
# canonical JSON report in reports/peers/, and rewrites the table in
# docs/implementations.md (everything below its marker line). `just peers-table` runs it
# after install.sh. `--table-only` re-renders the table from the reports already there.
set -euo pipefail
cd "$(dirname "$0")/../.."

runner=(cargo run --release --locked -q -p gatehouse-conformance -- run)
out=reports/peers
mkdir -p "$out"

# LABEL|IMPLEMENTATION ('' = the reference)
impls=(
  "reference|"
  "bwrap|python3 conformance/adapters/bwrap/adapter.py"
  "bwrap-hardened|python3 conformance/adapters/bwrap/adapter.py --hardened"
  "landlock-sandboxer|python3 conformance/adapters/landlock_sandboxer/adapter.py"
  "codex|python3 conformance/adapters/codex/adapter.py"
  "srt|python3 conformance/adapters/srt/adapter.py"
  "codex-execpolicy|python3 conformance/adapters/codex_execpolicy/adapter.py"
)
table_only=false
[ "${1:-}" = "--table-only" ] && table_only=true
args=()
for entry in "${impls[@]}"; do
  label="${entry%%|*}" impl="${entry#*|}"
  args+=("$label=$out/$label.json")
  $table_only && continue
  [ "$label" = reference ] && cargo build --release --locked -q -p gatehouse -p gatehouse-conformance
  impl_args=()
  [ -n "$impl" ] && impl_args=(--impl "$impl")
  start=$(date +%s)
  # A third party is expected to fail scenarios: the exit status is the table's, not ours.
  "${runner[@]}" "${impl_args[@]}" --quiet --format json --out "$out/$label.json" >/dev/null || true
  python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(sys.argv[2], r["summary"], sys.argv[3] + " s")' \
    "$out/$label.json" "$label" "$(( $(date +%s) - start ))"
done

doc=docs/implementations.md
marker='<!-- everything below is written by `just peers-table` -->'
grep -qF "$marker" "$doc" || { echo "peers: $doc has no marker line" >&2; exit 1; }
{
  sed "/$(printf '%s' "$marker" | sed 's/[^^]/[&]/g; s/\^/\\^/g')/q" "$doc"
  echo
  python3 conformance/adapters/table.py --command "just peers-table" "${args[@]}"
  echo
} > "$doc.new"
mv "$doc.new" "$doc"
echo "peers: wrote $doc"
