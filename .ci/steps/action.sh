#!/usr/bin/env bash
# The composite action (action.yml) checked without GitHub: its metadata against the
# action schema (check-jsonschema's copy of SchemaStore's), then its steps run here by
# action.py twice: the example adapter on gate/ must pass, the allow-everything fake
# must fail with every report still written. The venv under target/ is the one
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
"$venv/bin/python" .ci/steps/action.py 0 \
  impl='python3 conformance/examples/python_adapter.py' filter='gate/' reports="${out#$PWD/}/pass"
"$venv/bin/python" .ci/steps/action.py nonzero \
  impl='python3 conformance/tests/fakes/allow_all.py' filter='gate/read gate/jail' reports="${out#$PWD/}/fail"
