#!/usr/bin/env bash
# The composite action (action.yml) checked without GitHub: its metadata against the
# action schema (check-jsonschema's copy of SchemaStore's), then its steps run here by
# action.py three times, with a cache store of its own: the example adapter on gate/ must
# pass (a cache miss: the runner is built and saved), the allow-everything fake must fail
# with every report still written (a cache hit: no build) and, with the summary's limit
# lowered, the summary must hold the report's head and the pointer to the artifact. The venv under target/ is the one
# lint-workflows.sh uses; nothing is installed system-wide.
set -euo pipefail
cd "$(dirname "$0")/../.."
venv="${CARGO_TARGET_DIR:-target}/ci-venv"
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/pip" install -q 'check-jsonschema==0.33.0' 'PyYAML==6.0.2'
"$venv/bin/check-jsonschema" --builtin-schema vendor.github-actions action.yml
# `cargo install` inside the action reuses this checkout's release build.
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target}"
out="${CARGO_TARGET_DIR}/action-smoke"
rm -rf "$out"
export ACTION_CACHE="$out/cache"
"$venv/bin/python" .ci/steps/action.py 0 --cache miss \
  impl='python3 conformance/examples/python_adapter.py' filter='gate/' reports="${out#$PWD/}/pass"
GH_SUMMARY_LIMIT=2000 ACTION_SUMMARY_COPY="$out/summary.md" \
  "$venv/bin/python" .ci/steps/action.py nonzero --cache hit \
  impl='python3 conformance/tests/fakes/allow_all.py' filter='gate/read gate/jail' reports="${out#$PWD/}/fail"
size=$(wc -c < "$out/summary.md")
grep -q 'the rest is in report.md of the artifact `gatehouse-reports-local-' "$out/summary.md" ||
  { echo "action.sh: FAIL: a summary over the limit has no pointer to the artifact"; exit 1; }
[ "$size" -lt 2400 ] || { echo "action.sh: FAIL: the summary is $size bytes over a 2000-byte limit"; exit 1; }
echo "action.sh: a report over the summary's limit left $size bytes and the pointer"
