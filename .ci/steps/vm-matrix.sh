#!/usr/bin/env bash
# Runs the suite inside QEMU guests: `vm-matrix.sh --all` is the whole matrix (what
# .ci/run does), `vm-matrix.sh --kernel 6.1 --variant userns-off` one guest (what each
# job of the workflow does). Reports go to reports/vm/ (matrix.md, matrix.json, each
# guest's canonical JSON and JUnit, its console log). Fails unless every guest is green.
set -euo pipefail
cd "$(dirname "$0")/../.."
.ci/steps/vm-prereqs.sh
cargo run --release --locked -q -p gatehouse-conformance -- vm --out-dir reports/vm "$@"
