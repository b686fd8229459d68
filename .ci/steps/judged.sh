# Sourced by .ci/steps/peers.sh and agents.sh: one run of the suite judged by the runner
# against an expectations file of conformance/expectations/ (PROTO-VERDICT-13 to 16). The
# run's exit status is the verdict; on a failure the lines that broke the comparison are
# printed, else the run's counts. `out` is the reports' directory of the calling step.
judged() { # $1 report name, $2 expectations file's name, then the run's arguments
  local name=$1 expect=$2; shift 2
  if ! cargo run --release --locked -q -p gatehouse-conformance -- run "$@" --quiet \
      --expectations "conformance/expectations/$expect.toml" \
      --format json --out "$out/$name.json" >/dev/null; then
    echo "FAIL: $name is not as conformance/expectations/$expect.toml predicts:" >&2
    python3 -c 'import json,sys; c=json.load(open(sys.argv[1]))["expectations"]; [print("  "+l) for l in c["regressions"]+c["unexpected_passes"]+c["gone"]]' \
      "$out/$name.json" >&2 || true
    exit 1
  fi
  python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print("%s: %s" % (sys.argv[2], r["summary"]))' \
    "$out/$name.json" "$name"
}
