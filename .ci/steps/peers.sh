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
run() { # $1 label, $2 adapter
  if ! cargo run --release --locked -q -p gatehouse-conformance -- run --filter fence/ \
      --impl "$2" --quiet --expectations "conformance/expectations/$1.toml" \
      --format json --out "$out/$1.json" >/dev/null; then
    echo "FAIL: peer $1 is not as conformance/expectations/$1.toml predicts:" >&2
    python3 -c 'import json,sys; c=json.load(open(sys.argv[1]))["expectations"]; [print("  "+l) for l in c["regressions"]+c["unexpected_passes"]+c["gone"]]' \
      "$out/$1.json" >&2 || true
    exit 1
  fi
  python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print("peer %s: %s" % (sys.argv[2], r["summary"]))' \
    "$out/$1.json" "$1"
}
run bwrap "python3 conformance/adapters/bwrap/adapter.py"
run bwrap-hardened "python3 conformance/adapters/bwrap/adapter.py --hardened"
run landlock-sandboxer "python3 conformance/adapters/landlock_sandboxer/adapter.py"
echo "peers: every predicted weakness failed its step, every control passed"
echo "peers: CI step took $(( $(date +%s) - start )) s"
