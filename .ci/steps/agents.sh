#!/usr/bin/env bash
# CI step: two real agents end to end. Claude Code (npm @anthropic-ai/claude-code) and
# GitHub Copilot CLI (npm @github/copilot), each pinned in conformance/adapters/install.sh,
# are installed from the npm registry into the peers' cache (target/peers on a fresh
# clone), driven headless by the scripted model on 127.0.0.1 for a few permissions and
# hooks scenarios, and must fail the steps their known weaknesses predict and pass the
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
#
# Why Copilot CLI beside it: its hooks are another shape (`preToolUse` hooks in a hooks
# file, with Copilot's own input and `permissionDecision` answer, where a failing hook
# denies, not Claude Code's settings hooks, where exit 2 blocks and other failures let the
# call run), its rules another syntax (`--deny-tool 'shell(rm:*)'`), and its
# weaknesses other ones: a hook that exits 1 denies (Claude Code's lets the call run), but
# a hook's allow outranks a deny rule, and one that prints nothing readable lets the call
# run (FINDINGS-copilot-cli.md). Seven scenarios, 54 runs. Its time, measured twice on
# 2026-12-07 on the 2-core CI machine with other builds and a Kilo CLI column running (load
# 4 to 9; no idle run was possible): install from the registry into an empty cache 5 s and
# 6 s (423 MB), the judged run 118 s and 169 s, so 123 s and 175 s added to .ci/run, under
# the 5 minutes it may add at idle. The whole step took 531 s and 588 s at that load
# (182 s at idle before Copilot CLI was added).
set -euo pipefail
cd "$(dirname "$0")/../.."
start=$(date +%s)
# The reference the guarded column runs: .ci/run exports its static build.
GATEHOUSE="${GATEHOUSE:-${CARGO_TARGET_DIR:-target}/release/gatehouse}"
export GATEHOUSE

conformance/adapters/install.sh --agent claude-code --agent copilot-cli

out=reports/agents-ci
mkdir -p "$out"
filters=()
for s in permissions/deny-shell-respelling permissions/deny-global-options permissions/deny-chains \
         permissions/yolo permissions/merge-sources permissions/deny-respelled \
         hooks/failures; do
  filters+=(--filter "$s")
done
# Each run is judged by the runner against an expectations file
# (conformance/expectations/, PROTO-VERDICT-16): the steps a known weakness predicts must
# fail safety, the controls must pass it, nothing may error; the run's exit status says.
. .ci/steps/judged.sh
judged claude-code claude-code "${filters[@]}" --step-timeout 60 \
  --impl "python3 conformance/adapters/agents/claude_code/adapter.py"
echo "agents: every predicted weakness of Claude Code failed, every control passed, nothing errored"

# Copilot CLI, judged the same way against its own file: the hook answering allow over a
# deny rule, a hook failing in each of its two ways (exit 1: denied; empty output: run),
# a shell respelling; the controls: its preToolUse answers, yolo, merged rule sources, and
# a hook that denies the shell and code tools.
copilot_start=$(date +%s)
judged copilot-cli copilot-cli \
  --filter hooks/default-lane --filter hooks/failures --filter hooks/answers \
  --filter hooks/every-mutating-tool --filter permissions/deny-shell-respelling \
  --filter permissions/yolo --filter permissions/merge-sources --step-timeout 60 \
  --impl "python3 conformance/adapters/agents/copilot_cli/adapter.py"
echo "agents: every predicted weakness of Copilot CLI failed, every control passed, nothing errored ($(( $(date +%s) - copilot_start )) s)"

# The guard chapter through the guarded column: Claude Code with the reference's guard
# (the static build this run certifies) must pass safety in every scenario; with a guard
# that has one of the fourth attack round's flaws (conformance/tests/fakes/lax_guard.py)
# the steps that flaw opens must fail safety.
guarded="python3 conformance/adapters/agents/claude_code/adapter.py --guard"
if ! cargo run --release --locked -q -p gatehouse-conformance -- run --filter guard/ \
    --impl "$guarded $GATEHOUSE" --step-timeout 60 --quiet --level safety --format json \
    --out "$out/claude-code-guarded.json" >/dev/null; then
  echo "FAIL: the guarded column (claude-code + gatehouse guard) failed safety in the guard chapter" >&2
  exit 1
fi
for flaw in ask-protected pass-reads; do
  GATEHOUSE_LAX_GUARD=$flaw judged "lax-guard-$flaw" "lax-guard-$flaw" --filter guard/ --step-timeout 60 \
    --impl "$guarded conformance/tests/fakes/lax_guard.py"
done
echo "guard: the reference's guard passes every guard scenario; each flawed guard fails where predicted"
echo "agents: CI step took $(( $(date +%s) - start )) s"
