#!/usr/bin/env bash
# Every static check: formatting, clippy (Linux, and macOS where the Seatbelt backend
# lives), no two modules importing each other, ruff and mypy over the Python package, the
# library without its command-line crates, the scenario files, the trace, and the workflow
# files. `.ci/run` and `just lint` both run this script, so the two cannot drift apart.
set -euo pipefail
cd "$(dirname "$0")/../.."

step() { printf "\n==> [%s, %d s into the static checks] %s\n" "$(date -u +%T)" "$SECONDS" "$*"; }

step "format and lints"
cargo fmt --all -- --check
cargo clippy --workspace --all-targets --locked -- -D warnings

step "the library builds without the command line's crates (clap, anyhow)"
cargo check -p gatehouse --lib --no-default-features --locked

step "no two modules import each other, no crate uses a crate of its floor or above"
python3 .ci/module_cycles.py
python3 .ci/crate_graph.py --check

step "Python: ruff and mypy over the adapters, the fakes and the scripts (pyproject.toml)"
# Pinned here, installed by pip when this python3 lacks them (a no-op once they are).
python3 -m pip install --quiet --disable-pip-version-check ruff==0.17.6 mypy==2.4.1
python3 -m ruff check .
python3 -m mypy

step "the reference compiles and is clippy-clean for macOS (Seatbelt backend)"
rustup target add aarch64-apple-darwin >/dev/null 2>&1 || true
cargo clippy -p gatehouse -p gatehouse-policy -p gatehouse-fence -p gatehouse-confine --target aarch64-apple-darwin --locked -- -D warnings

step "scenario files are valid"
cargo run --release --locked -q -p gatehouse-conformance -- lint

step "the README's recipe table is the Justfile's (.ci/readme_recipes.py)"
python3 .ci/readme_recipes.py --check

step "traceability: every MUST and SHOULD has a scenario or a written reason, and the checklist of the current spec version agrees (spec/checklists/)"
cargo run --release --locked -q -p gatehouse-conformance -- trace

step "the submissions kept in docs/submissions/VERSION/ verify against their releases' checklists (PROTO-CERT-5)"
for folder in docs/submissions/[0-9]*/*/; do
  cargo run --release --locked -q -p gatehouse-conformance -- verify "$folder"
done

step "the agents' results kept in docs/submissions/results/ are well formed and not certified, each reason on a line (PROTO-CERT-7)"
for folder in docs/submissions/results/*/; do
  cargo run --release --locked -q -p gatehouse-conformance -- verify --results "$folder"
done

step "the workflow files lint clean (actionlint)"
.ci/steps/lint-workflows.sh
