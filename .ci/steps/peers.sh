#!/usr/bin/env bash
# CI step: real third-party sandboxes must fail the fence scenarios their known weaknesses
# predict, and pass a control. Bubblewrap (Debian) as agents commonly call it and with
# --cap-drop ALL, and the landlock crate's example sandboxer (crates.io); the npm-based
# peers run in `just peers`. The predictions come from a held-out probe of the same tools
# (docs/implementations.md, "Cross-check with the probes").
set -euo pipefail
cd "$(dirname "$0")/../.."
start=$(date +%s)

conformance/adapters/install.sh --ci
out=reports/peers-ci
mkdir -p "$out"
# Each run is judged by the runner against conformance/expectations/<label>.toml
# (PROTO-VERDICT-16): the steps each peer's known weaknesses predict must fail safety,
# every other verdict is as recorded (made as root on this machine; the root-only
# predictions say `when = "root"`), and a control the file does not name must pass.
. .ci/steps/judged.sh
judged bwrap bwrap --filter fence/ --impl "python3 conformance/adapters/bwrap/adapter.py"
judged bwrap-hardened bwrap-hardened --filter fence/ --impl "python3 conformance/adapters/bwrap/adapter.py --hardened"
judged landlock-sandboxer landlock-sandboxer --filter fence/ --impl "python3 conformance/adapters/landlock_sandboxer/adapter.py"
echo "peers: every predicted weakness failed its step, every control passed"
echo "peers: CI step took $(( $(date +%s) - start )) s"
