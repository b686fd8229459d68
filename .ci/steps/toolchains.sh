#!/usr/bin/env bash
# The common toolchains in the fence (spec/execution-plane.md, FENCE-TOOL-1 to 6): the
# ignored tests of reference/tests/exec_toolchains.rs, which build a small Rust, Python,
# Node and Go project with `gatehouse exec` from a fresh temporary home, with no flag but
# `--fetch`, and run the guard's rewritten `cargo build && cargo test`. They need rustup
# and pyenv where their installers put them, Debian's node, npm and go (tools.sh) and
# crates.io, PyPI and the npm registry reachable. The time they take is printed: kept
# under two minutes.
set -euo pipefail
cd "$(dirname "$0")/../.."
start=$SECONDS
GATEHOUSE_TEST_BWRAP=1 cargo test -p gatehouse --locked --test exec_toolchains -- --ignored --test-threads 2
echo "toolchains: the builds in the fence took $((SECONDS - start)) s (compiling included)"
