#!/usr/bin/env bash
# Runs the suite's chapters against every agent adapter (the whole agents, each driven by a
# scripted model on 127.0.0.1), keeps each canonical JSON report in reports/agents/, and
# rewrites the agents section of docs/implementations.md, between its own two marker lines
# (the peers' table below the peers' marker is conformance/adapters/peers.sh's). `just
# agents` runs it after install.sh. The list of agents is the one below, in one place.
#
#   conformance/adapters/agents/run.sh                 every agent, every chapter it can take
#   conformance/adapters/agents/run.sh --only claude-code --filter hooks/
#   conformance/adapters/agents/run.sh --table-only    re-render from the reports already there
#
# An agent run takes 1-9 s, so a chapter takes minutes and the whole suite an hour or more
# per agent; `--filter` (repeatable, passed to the runner) narrows it. The runner's step
# timeout is set above the adapters' own deadline (GATEHOUSE_AGENT_DEADLINE, 45 s).
set -euo pipefail
cd "$(dirname "$0")/../../.."

# LABEL|IMPLEMENTATION[|CHAPTERS]: CHAPTERS (space-separated folders) narrows an agent whose
# runs are slow; absent, every chapter. opencode boots a server for every run (5-20 s), so
# its whole suite would take many hours: it runs the permissions chapter. Codex's app-server
# turn takes 0.5-1 s (the whole suite about an hour); Gemini CLI's run 5-10 s (hooks 12 min,
# permissions 20 min, its gate and fence chapters hours), so it runs three chapters. The
# `-guarded` labels are the same agents with `gatehouse guard` as their pre-tool hook
# (`--guard`, README.md "Put Gatehouse in front of your agent"); guarded, Gemini offers its
# shell tool to the hook in every mode (yolo), so a run takes 2-4 s and it runs four chapters.
agents=(
  "claude-code|python3 conformance/adapters/agents/claude_code/adapter.py"
  "claude-code-guarded|python3 conformance/adapters/agents/claude_code/adapter.py --guard|guard/ hooks/ permissions/ decision/ fence/"
  "opencode|python3 conformance/adapters/agents/opencode/adapter.py|permissions/"
  "codex-cli|python3 conformance/adapters/agents/codex_cli/adapter.py"
  "gemini-cli|python3 conformance/adapters/agents/gemini_cli/adapter.py|permissions/ hooks/ decision/"
  "codex-cli-guarded|python3 conformance/adapters/agents/codex_cli/adapter.py --guard|guard/ gate/ hooks/ fence/ decision/ permissions/"
  "gemini-cli-guarded|python3 conformance/adapters/agents/gemini_cli/adapter.py --guard|guard/ hooks/ fence/ permissions/ decision/"
)
chapters=(--filter gate/ --filter permissions/ --filter hooks/ --filter trust/ --filter decision/ --filter fence/)

runner="${GATEHOUSE_CONFORM:-}"
if [ -z "$runner" ] && ! printf '%s\n' "$@" | grep -qx -- --table-only; then
  # gatehouse itself: the guarded columns' hook (adapter.py --guard)
  cargo build --release --locked -q -p gatehouse-conformance -p gatehouse
  runner="${CARGO_TARGET_DIR:-target}/release/gatehouse-conform"
fi
out=reports/agents
mkdir -p "$out"
table_only=false only=() filters=()
while [ $# -gt 0 ]; do
  case "$1" in
    --table-only) table_only=true ;;
    --only) only+=("$2"); shift ;;
    --filter) filters+=(--filter "$2"); shift ;;
    *) echo "agents: unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done

args=()
for entry in "${agents[@]}"; do
  IFS='|' read -r label impl own <<<"$entry"
  if [ ${#only[@]} -gt 0 ] && ! printf '%s\n' "${only[@]}" | grep -qx "$label"; then
    [ -f "$out/$label.json" ] && args+=("$label=$out/$label.json")
    continue
  fi
  if $table_only; then
    [ -f "$out/$label.json" ] && args+=("$label=$out/$label.json")
    continue
  fi
  args+=("$label=$out/$label.json")
  adapter="${impl#python3 }" adapter="${adapter%% *}"
  [ -f "$adapter" ] || { echo "agents: $label: no adapter yet ($adapter)" >&2; args=("${args[@]:0:${#args[@]}-1}"); continue; }
  run_filters=("${filters[@]}")
  if [ ${#run_filters[@]} -eq 0 ]; then
    if [ -n "${own:-}" ]; then for c in $own; do run_filters+=(--filter "$c"); done
    else run_filters=("${chapters[@]}"); fi
  fi
  start=$(date +%s)
  # An agent is expected to fail scenarios: the exit status is the table's, not ours.
  "$runner" run --impl "$impl" "${run_filters[@]}" --step-timeout 60 --quiet --format json \
    --out "$out/$label.json" >/dev/null || true
  python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(sys.argv[2], r["summary"], sys.argv[3] + " s")' \
    "$out/$label.json" "$label" "$(( $(date +%s) - start ))"
done
[ ${#args[@]} -gt 0 ] || { echo "agents: no report to render" >&2; exit 1; }

doc=docs/implementations.md
begin='<!-- agents table: begin (written by `just agents`) -->'
end='<!-- agents table: end -->'
grep -qF "$begin" "$doc" && grep -qF "$end" "$doc" || { echo "agents: $doc lacks the agents marker lines" >&2; exit 1; }
python3 conformance/adapters/table.py --command "just agents" "${args[@]}" \
  | sed 's/^## The table/### The agents table/' > "$out/table.md"
python3 - "$doc" "$begin" "$end" "$out/table.md" <<'PY'
import sys
doc, begin, end, table = sys.argv[1:]
table = open(table).read()
text = open(doc).read()
head, _, rest = text.partition(begin)
_, _, tail = rest.partition(end)
open(doc, "w").write(head + begin + "\n\n" + table.rstrip("\n") + "\n\n" + end + tail)
PY
echo "agents: wrote the agents section of $doc"
