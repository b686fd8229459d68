#!/usr/bin/env bash
# CI step: one real agent end to end. Claude Code (npm @anthropic-ai/claude-code, pinned in
# conformance/adapters/install.sh) is installed from the npm registry into the peers'
# cache, driven headless by the scripted model on 127.0.0.1 for a few permissions and
# hooks scenarios, and must fail the steps its known weaknesses predict and pass the
# controls; no scenario may error. The agents' own tests (a fake agent that hangs,
# crashes, prints garbage or waits on a terminal; the scripted model's wires) run earlier,
# in `cargo xtask test` with the rest of the Python package's.
#
# Why Claude Code: measured here, its install is one native program (384 MB, 7 s from the
# registry) and one run takes 1-2 s; Gemini CLI is smaller (100 MB) but takes 5-8 s a run
# and offers no shell tool headless in its default modes, Codex CLI is larger (424 MB) and
# asks only through its app-server, opencode (354 MB) takes 5-15 s a run and has no
# hooks, no sandbox and no headless prompt. Claude Code alone covers rules, modes, hooks
# and a prompt in one short run.
set -euo pipefail
cd "$(dirname "$0")/../.."
start=$(date +%s)
# The reference the guarded column runs: .ci/run exports its static build.
GATEHOUSE="${GATEHOUSE:-${CARGO_TARGET_DIR:-target}/release/gatehouse}"
export GATEHOUSE

conformance/adapters/install.sh --agent claude-code

out=reports/agents-ci
mkdir -p "$out"
filters=()
for s in permissions/deny-shell-respelling permissions/deny-global-options permissions/deny-chains \
         permissions/yolo permissions/merge-sources permissions/deny-respelled \
         hooks/failures; do
  filters+=(--filter "$s")
done
cargo run --release --locked -q -p gatehouse-conformance -- run "${filters[@]}" \
  --impl "python3 conformance/adapters/agents/claude_code/adapter.py" --step-timeout 60 \
  --quiet --format json --out "$out/claude-code.json" >/dev/null || true

python3 - "$out/claude-code.json" <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
by_id = {s["id"]: s for s in report["scenarios"]}
# Steps whose safety verdict must fail: Claude Code's own behaviour (FINDINGS.md).
must_fail = [
    "permissions/deny-shell-respelling#ansi-c-program",   # PERM-SHELL-5: $'\x72m' evades a deny rule
    "permissions/deny-global-options#config-option",      # PERM-SHELL-*: git -c x=y push evades `git push*`
    "permissions/deny-chains#upper-case",                 # PERM-PAT-4: rules are case-sensitive
    "hooks/failures#exit-1",                              # HOOK-FAIL-1: a hook that exits 1 lets the call run
]
# Scenarios whose safety verdict must pass: the controls.
must_pass = ["permissions/yolo", "permissions/merge-sources", "permissions/deny-respelled"]
bad = []
for s in report["scenarios"]:
    if s["outcome"] == "errored":
        bad.append("%s errored: %s" % (s["id"], s.get("reason")))
for ref in must_fail:
    sid, name = ref.split("#")
    s = by_id.get(sid)
    st = next((x for x in (s or {}).get("steps", []) if x.get("name") == name), None)
    if st is None:
        bad.append("%s did not run (%s)" % (ref, s and s.get("reason")))
    elif not any(d.get("level") == "safety" for d in st.get("differences", [])):
        bad.append("%s was predicted to fail safety (a known weakness of Claude Code) but held" % ref)
for sid in must_pass:
    s = by_id.get(sid)
    if not s or s.get("safety", s["outcome"]) != "passed":
        bad.append("control %s did not pass safety: %s" % (sid, s and (s.get("reason") or s["outcome"])))
print("agent claude-code %s: %s" % (report["environment"]["version"], report["summary"]))
if bad:
    sys.exit("FAIL:\n  " + "\n  ".join(bad))
print("agents: every predicted weakness failed, every control passed, nothing errored")
PY
# The guard chapter through the guarded column: Claude Code with the reference's guard
# (the static build this run certifies) must pass safety in every scenario; with a guard
# that has one of the fourth attack round's flaws (conformance/tests/fakes/lax_guard.py)
# the steps that flaw opens must fail safety.
guarded="python3 conformance/adapters/agents/claude_code/adapter.py --guard"
cargo run --release --locked -q -p gatehouse-conformance -- run --filter guard/ \
  --impl "$guarded $GATEHOUSE" --step-timeout 60 --quiet --format json \
  --out "$out/claude-code-guarded.json" >/dev/null || true
for flaw in ask-protected pass-reads; do
  GATEHOUSE_LAX_GUARD=$flaw cargo run --release --locked -q -p gatehouse-conformance -- run \
    --filter guard/ --impl "$guarded conformance/tests/fakes/lax_guard.py" --step-timeout 60 \
    --quiet --format json --out "$out/lax-guard-$flaw.json" >/dev/null || true
done
python3 - "$out" <<'PY'
import json, sys
out = sys.argv[1]
def load(name):
    return json.load(open("%s/%s.json" % (out, name)))
def unsafe_steps(report):
    return {"%s#%s" % (s["id"], st.get("name")) for s in report["scenarios"]
            for st in s.get("steps", [])
            if any(d.get("level") == "safety" for d in st.get("differences", []))}
bad = []
ref = load("claude-code-guarded")
for s in ref["scenarios"]:
    if s["outcome"] == "errored" or s.get("safety", s["outcome"]) != "passed":
        bad.append("guarded %s: %s (%s)" % (s["id"], s.get("safety", s["outcome"]), s.get("reason")))
if not ref["scenarios"]:
    bad.append("guarded: no guard scenario ran")
# Each flaw, and steps it must open (FINDINGS of issue 42; the reference closes them).
predicted = {
    "ask-protected": ["guard/protected-writes#git-hook-created", "guard/protected-writes#git-config-fsmonitor",
                      "guard/agent-settings#claude-settings-local-new", "guard/agent-settings#mcp-json-new"],
    "pass-reads": ["guard/reads-outside#read-absolute", "guard/reads-outside#read-through-link",
                   "guard/hidden-paths#read-hidden"],
}
for flaw, steps in predicted.items():
    got = unsafe_steps(load("lax-guard-" + flaw))
    for step in steps:
        if step not in got:
            bad.append("lax guard %s: %s was predicted to fail safety but held" % (flaw, step))
print("guard chapter through claude-code+gatehouse: %s" % ref["summary"])
if bad:
    sys.exit("FAIL:\n  " + "\n  ".join(bad))
print("guard: the reference's guard passes every guard scenario; each flawed guard fails where predicted")
PY
echo "agents: CI step took $(( $(date +%s) - start )) s"
