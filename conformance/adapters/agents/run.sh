#!/usr/bin/env bash
# Runs the suite's chapters against every agent adapter (the whole agents, each driven by a
# scripted model on 127.0.0.1), writes each canonical JSON report to reports/agents/, keeps
# it in docs/reports/ (LABEL-BACKEND-REVISION-DATE[.N].json, with a row in its README's
# table), and rewrites the agents section of docs/implementations.md, between its own two
# marker lines, from every agent report kept there (conformance/adapters/table.py --kept:
# a column per label, its reports merged per scenario, the newest giving each result), so
# a narrowed run (--only, --filter) adds to the table and never removes from it. The peers'
# table below the peers' marker is conformance/adapters/peers.sh's. `just agents` runs it
# after install.sh. The list of agents is the one below, in one place.
#
#   conformance/adapters/agents/run.sh                 every agent, every chapter it can take
#   conformance/adapters/agents/run.sh --only claude-code --filter hooks/
#   conformance/adapters/agents/run.sh --table-only    re-render from the kept reports
#   conformance/adapters/agents/run.sh --no-keep ...   a trial: the report stays in
#                                                      reports/agents/, nothing else changes
#
# An agent run takes 1-9 s, so a chapter takes minutes and the whole suite an hour or more
# per agent (README.md, "How long a column takes"); `--filter` (repeatable, passed to the
# runner) narrows it. The runner's step
# timeout is set above the adapters' own deadline (GATEHOUSE_AGENT_DEADLINE, 45 s; an
# agent's line may set a longer one).
set -euo pipefail
cd "$(dirname "$0")/../../.."

# LABEL|IMPLEMENTATION[|CHAPTERS[|STEP TIMEOUT]]: CHAPTERS (space-separated folders) narrows
# an agent whose runs are slow; absent, every chapter. STEP TIMEOUT (seconds, default 60) is
# the runner's wait for one answer: above the adapter's deadline for one run, times two for a
# call asked about and then approved (two runs). opencode boots a server for every run (5-20 s), so
# its whole suite would take many hours: it runs the permissions chapter. Codex's app-server
# turn takes 0.5-1 s (its whole column, six chapters, 41 min on 2026-12-07); Gemini CLI's run 5-10 s (hooks 12 min,
# permissions 20 min, its gate and fence chapters hours), so it runs three chapters. The
# `-guarded` labels are the same agents with `gatehouse guard` as their pre-tool hook
# (`--guard`, README.md "Put Gatehouse in front of your agent"); guarded, Gemini offers its
# shell tool to the hook in every mode (yolo), so a run takes 2-4 s and it runs four chapters.
# Copilot CLI's run takes 3-6 s (no sandbox here: no fence/, no trusted folders: no trust/);
# Guarded, Copilot CLI has the guard's `gatehouse exec` as its fence, so it takes fence/ too.
# Qwen Code's 3-5 s (its sandboxes are not mapped: no fence/); Kilo CLI's 15-50 s
# (opencode's lineage, no hooks), so it runs permissions/ only, in 2-3 hours, and its
# adapter's deadline is 120 s a run, so its step timeout is 250 s. Cline CLI's run takes
# 7-9 s (no sandbox: no fence/; no trust map: no trust/).
agents=(
  "claude-code|python3 conformance/adapters/agents/claude_code/adapter.py"
  "claude-code-guarded|python3 conformance/adapters/agents/claude_code/adapter.py --guard|guard/ hooks/ permissions/ decision/ fence/"
  "opencode|python3 conformance/adapters/agents/opencode/adapter.py|permissions/"
  "codex-cli|python3 conformance/adapters/agents/codex_cli/adapter.py"
  "gemini-cli|python3 conformance/adapters/agents/gemini_cli/adapter.py|permissions/ hooks/ decision/"
  "codex-cli-guarded|python3 conformance/adapters/agents/codex_cli/adapter.py --guard|guard/ gate/ hooks/ fence/ decision/ permissions/"
  "gemini-cli-guarded|python3 conformance/adapters/agents/gemini_cli/adapter.py --guard|guard/ hooks/ fence/ permissions/ decision/"
  "copilot-cli|python3 conformance/adapters/agents/copilot_cli/adapter.py|permissions/ hooks/ decision/ gate/"
  "copilot-cli-guarded|python3 conformance/adapters/agents/copilot_cli/adapter.py --guard|guard/ hooks/ permissions/ decision/ fence/"
  "qwen-code|python3 conformance/adapters/agents/qwen_code/adapter.py|permissions/ hooks/ decision/"
  "kilo-cli|python3 conformance/adapters/agents/kilo_cli/adapter.py|permissions/|250"
  "cline|python3 conformance/adapters/agents/cline/adapter.py|permissions/ hooks/ decision/ gate/"
)
chapters=(--filter gate/ --filter permissions/ --filter hooks/ --filter trust/ --filter decision/ --filter fence/)

out=reports/agents
mkdir -p "$out"
table_only=false build=false keep=true only=() filters=()
while [ $# -gt 0 ]; do
  case "$1" in
    --table-only) table_only=true ;;
    --build) build=true ;;
    --no-keep) keep=false ;;
    --only) only+=("$2"); shift ;;
    --filter) filters+=(--filter "$2"); shift ;;
    *) echo "agents: unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done

# The runner, and gatehouse itself (the guarded columns' hook, adapter.py --guard): the
# binaries already built in $CARGO_TARGET_DIR/release (or target/release) are taken as they
# are; cargo builds them only when one is missing or with --build. GATEHOUSE_CONFORM names
# another runner.
release="${CARGO_TARGET_DIR:-target}/release"
runner="${GATEHOUSE_CONFORM:-}"
if [ -z "$runner" ] && ! $table_only; then
  if $build || [ ! -x "$release/gatehouse-conform" ] || [ ! -x "$release/gatehouse" ]; then
    echo "agents: cargo build --release -p gatehouse-conformance -p gatehouse (into $release)" >&2
    cargo build --release --locked -q -p gatehouse-conformance -p gatehouse
  else
    echo "agents: using the binaries already built in $release (--build rebuilds them)" >&2
  fi
  runner="$release/gatehouse-conform"
fi

# Before the first scenario: bubblewrap, which confines every run whose agent has no
# sandbox of its own on (agent_adapter.confine), and a word on /tmp. The confinement mounts
# a fresh /tmp; the agents' cache, these adapters and the python running them are bound
# back into it read-only when they live under /tmp, and the scenario's directory is bound
# writable, so a checkout or cache under /tmp works. The runner's own fixtures follow
# TMPDIR as they always do.
cache="${GATEHOUSE_PEERS_CACHE:-$PWD/target/peers}"
if ! $table_only && [ "${GATEHOUSE_AGENT_CONFINE:-1}" != 0 ] && ! command -v bwrap >/dev/null; then
  echo "agents: bubblewrap (bwrap) is missing: every agent run is confined by it; install it (conformance/adapters/install.sh --agents does) or set GATEHOUSE_AGENT_CONFINE=0 to run the agents unconfined" >&2
  exit 1
fi

args=()
for entry in "${agents[@]}"; do
  IFS='|' read -r label impl own step_timeout <<<"$entry"
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
  # Refused before its first scenario, in one line, when the agent is not installed (every
  # scenario would error otherwise), unless its adapter is given the program
  # (GATEHOUSE_CLAUDE_CODE, GATEHOUSE_CODEX, GATEHOUSE_GEMINI, GATEHOUSE_OPENCODE,
  # GATEHOUSE_COPILOT, GATEHOUSE_QWEN_CODE, GATEHOUSE_KILO, GATEHOUSE_CLINE). A guarded label's agent is the unguarded one's.
  agent="${label%-guarded}"
  given="GATEHOUSE_$(printf '%s' "${agent%-cli}" | tr 'a-z-' 'A-Z_')"
  installed="$cache/agents/$agent/node_modules"
  if [ ! -d "$installed" ] && [ -z "${!given:-}" ]; then
    echo "agents: $label: not installed ($installed is missing): run conformance/adapters/install.sh --agent ${label%-guarded}" >&2
    args=("${args[@]:0:${#args[@]}-1}"); continue
  fi
  run_filters=("${filters[@]}")
  if [ ${#run_filters[@]} -eq 0 ]; then
    if [ -n "${own:-}" ]; then for c in $own; do run_filters+=(--filter "$c"); done
    else run_filters=("${chapters[@]}"); fi
  fi
  start=$(date +%s)
  # An agent is expected to fail scenarios: the exit status is the table's, not ours.
  "$runner" run --impl "$impl" "${run_filters[@]}" --step-timeout "${step_timeout:-60}" --quiet --format json \
    --out "$out/$label.json" >/dev/null || true
  took=$(( $(date +%s) - start ))
  python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(sys.argv[2], r["summary"], sys.argv[3] + " s")' \
    "$out/$label.json" "$label" "$took"
  # Kept beside the column's earlier reports, under a name of its own, with a row in
  # docs/reports/README.md's table (the report's `mode` lists the filters it ran).
  made_by="\`conformance/adapters/agents/run.sh --only $label\`"
  [ ${#filters[@]} -gt 0 ] && made_by+=" with $(( ${#filters[@]} / 2 )) \`--filter\`s (the report's \`mode\` lists them)"
  if $keep; then
    python3 conformance/adapters/table.py --kept docs/reports \
      --keep "$label=$out/$label.json" "$(git rev-parse --short HEAD)" "$(date -u +%F)" "$made_by, $took s"
  fi
done
doc=docs/implementations.md
begin='<!-- agents table: begin (written by `just agents`) -->'
end='<!-- agents table: end -->'
grep -qF "$begin" "$doc" && grep -qF "$end" "$doc" || { echo "agents: $doc lacks the agents marker lines" >&2; exit 1; }
# A trial (--no-keep) renders this run's reports beside them and changes nothing else.
if ! $keep; then
  [ ${#args[@]} -gt 0 ] || { echo "agents: no report to render" >&2; exit 1; }
  python3 conformance/adapters/table.py --command "conformance/adapters/agents/run.sh --no-keep" "${args[@]}" \
    | sed 's/^## The table/### The agents table/' > "$out/table.md"
  echo "agents: a trial run (--no-keep): its table is $out/table.md; $doc and docs/reports/ are left as they are"
  exit 0
fi
python3 conformance/adapters/table.py --command "just agents" --kept docs/reports --agents \
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
echo "agents: wrote the agents section of $doc from the agent reports kept in docs/reports/"
