#!/usr/bin/env bash
# What CI checks on macOS: the tests, the decision tier (gate, paths, trust) and the
# enforcement tier against the reference's Seatbelt backend. Called by the workflow's
# macOS job.
set -euo pipefail
cd "$(dirname "$0")/../.."
mkdir -p reports
cargo test --workspace --locked
cargo run --release --locked -q -p gatehouse-conformance -- run \
  --filter 'gate/' --format human --json-out reports/macos-gate.json
cargo run --release --locked -q -p gatehouse-conformance -- run \
  --filter 'paths/' --format human --json-out reports/macos-paths.json
cargo run --release --locked -q -p gatehouse-conformance -- run \
  --filter 'trust/' --format human --json-out reports/macos-trust.json
cargo run --release --locked -q -p gatehouse-conformance -- run \
  --filter 'fence/' --expect-fence-backend seatbelt \
  --format human --json-out reports/macos-fence.json
