#!/usr/bin/env bash
# Installs the third-party sandboxes and gates the adapters in conformance/adapters/ drive,
# from the package registries only (Debian, crates.io, npm), into a cache directory, and
# says what it installed. Nothing else is downloaded.
#
#   conformance/adapters/install.sh          everything (what `just peers` runs)
#   conformance/adapters/install.sh --ci     Debian's bubblewrap and the landlock crate's
#                                            example sandboxer only (what .ci/run needs)
#   conformance/adapters/install.sh --agents            the agents only (`just agents`)
#   conformance/adapters/install.sh --agent claude-code  that agent only (the agents' CI step);
#                                            repeatable
#
# The cache is $GATEHOUSE_PEERS_CACHE, by default target/peers in the repository.
#   - Debian (apt-get): bubblewrap; for sandbox-runtime also ripgrep and socat, which it
#     refuses to start without. Debian's versions are whatever the release ships; the
#     installed versions are printed.
#   - crates.io (cargo): landlock =0.4.8 and anyhow =1.0.105 into a throwaway project;
#     the crate's own examples/sandboxer.rs, copied from the fetched registry source, is
#     built as its binary: $CACHE/landlock-sandboxer/target/release/sandboxer.
#   - npm: @openai/codex@0.171.0 (its Linux sandbox and `codex execpolicy`) and
#     @anthropic-ai/sandbox-runtime@0.0.83 (the `srt` CLI) into $CACHE/npm.
#   - npm, the agents (conformance/adapters/agents/): each into $CACHE/agents/LABEL with
#     `npm install --prefix`, never globally. Claude Code's native program is in the
#     platform package @anthropic-ai/claude-code-linux-x64, which npm installs as an
#     optional dependency; npm 11 may skip the postinstall that links it into the wrapper,
#     so the adapter looks in both places and this script checks that one is there.
set -euo pipefail
cd "$(dirname "$0")/../.."

CODEX_VERSION=0.171.0
SRT_VERSION=0.0.83
LANDLOCK_VERSION=0.4.8
ANYHOW_VERSION=1.0.105

# LABEL|NPM PACKAGE@VERSION|PROGRAM (relative to node_modules) that prints the version
AGENTS=(
  "claude-code|@anthropic-ai/claude-code@2.1.332|.bin/claude"
  "codex-cli|@openai/codex@0.171.0|.bin/codex"
  "gemini-cli|@google/gemini-cli@0.61.0|.bin/gemini"
  "opencode|opencode-ai@1.18.33|.bin/opencode"
  "copilot-cli|@github/copilot@1.0.102|@github/copilot-linux-x64/copilot"
  "qwen-code|@qwen-code/qwen-code@0.24.4|.bin/qwen"
  "kilo-cli|@kilocode/cli@7.7.7|@kilocode/cli-linux-x64/bin/kilo"
  "cline|cline@3.0.65|@cline/cli-linux-x64/bin/cline"
)
# Kilo CLI is pinned at 7.7.7: 7.8.1's platform packages are not on the registry
# (agents/kilo_cli/README.md). Cline CLI's program is its platform package's Bun-compiled
# binary (`@cline/cli-linux-x64`, an optional dependency from the registry; 421 MB in all).
# Not here: Crush (`@charmland/crush`), whose npm package holds no program; its postinstall
# downloads one from the vendor's release page, which a host that reaches the registries
# only cannot (conformance/adapters/agents/crush/README.md).

ci=false agents_only=false want_agents=()
while [ $# -gt 0 ]; do
  case "$1" in
    --ci) ci=true ;;
    --agents) agents_only=true ;;
    --agent) agents_only=true; want_agents+=("$2"); shift ;;
    *) echo "install.sh: unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done
cache="${GATEHOUSE_PEERS_CACHE:-$PWD/target/peers}"
mkdir -p "$cache"
cache="$(cd "$cache" && pwd)"

say() { printf 'peers: %s\n' "$*"; }

install_agents() {
  command -v npm >/dev/null || {
    say "apt-get install npm"; apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq npm >/dev/null; }
  for entry in "${AGENTS[@]}"; do
    IFS='|' read -r label spec prog <<<"$entry"
    if [ ${#want_agents[@]} -gt 0 ] && ! printf '%s\n' "${want_agents[@]}" | grep -qx "$label"; then
      continue
    fi
    dir="$cache/agents/$label"
    mkdir -p "$dir"
    start=$(date +%s)
    say "npm install $spec into $dir"
    npm install --prefix "$dir" --no-audit --no-fund --loglevel=error "$spec" >/dev/null
    if [ "$label" = claude-code ]; then
      native="$dir/node_modules/@anthropic-ai/claude-code-linux-x64/claude"
      wrapped="$dir/node_modules/@anthropic-ai/claude-code/bin/claude.exe"
      [ -s "$native" ] && [ "$(stat -c %s "$native")" -gt 1000000 ] \
        || [ "$(stat -c %s "$wrapped" 2>/dev/null || echo 0)" -gt 1000000 ] \
        || { say "claude-code: no native program in $native nor $wrapped" >&2; exit 1; }
    fi
    if [ "$label" = copilot-cli ]; then
      # The native program unpacks its package (235 MB) into $XDG_CACHE_HOME at its first
      # start: once here, where the adapter names it (COPILOT_CLI_DIST_DIR) for every run.
      HOME="$dir/unpacked" XDG_CACHE_HOME="$dir/unpacked" "$dir/node_modules/$prog" --version >/dev/null
    fi
    say "npm $label $("$dir/node_modules/$prog" --version 2>/dev/null | head -1) ($(du -sh "$dir" | cut -f1), $(( $(date +%s) - start )) s)"
  done
}

if $agents_only; then
  # bubblewrap confines every agent run; socat is what Claude Code's own sandbox needs
  # (without it each sandboxed run exits before its first call: "sandbox required but
  # unavailable"), as sandbox-runtime below does.
  need_apt=()
  command -v bwrap >/dev/null || need_apt+=(bubblewrap)
  $ci || command -v socat >/dev/null || need_apt+=(socat)
  if [ ${#need_apt[@]} -gt 0 ]; then
    say "apt-get install ${need_apt[*]}"; apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}" >/dev/null
  fi
  install_agents
  exit 0
fi

# Debian
need_apt=()
[ -x /usr/bin/bwrap ] || need_apt+=(bubblewrap)
command -v python3 >/dev/null || need_apt+=(python3)
if ! $ci; then
  command -v rg >/dev/null || need_apt+=(ripgrep)
  command -v socat >/dev/null || need_apt+=(socat)
  command -v npm >/dev/null || need_apt+=(npm)
fi
if [ ${#need_apt[@]} -gt 0 ]; then
  say "apt-get install ${need_apt[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi
for pkg in bubblewrap $($ci || echo ripgrep socat); do
  say "debian $pkg $(dpkg-query -W -f='${Version}' "$pkg" 2>/dev/null || echo '(not from a package)')"
done

# crates.io: the landlock crate's example sandboxer, built from the registry source.
proj="$cache/landlock-sandboxer"
mkdir -p "$proj/src"
cat > "$proj/Cargo.toml" <<EOF
[package]
name = "landlock-sandboxer"
version = "0.0.0"
edition = "2021"
publish = false

[[bin]]
name = "sandboxer"
path = "src/main.rs"

[dependencies]
landlock = "=$LANDLOCK_VERSION"
anyhow = "=$ANYHOW_VERSION"

[workspace]
EOF
[ -f "$proj/src/main.rs" ] || echo 'fn main() {}' > "$proj/src/main.rs"
manifest="$(cd "$proj" && cargo metadata --format-version 1 --quiet \
  | python3 -c 'import json,sys; print(next(p["manifest_path"] for p in json.load(sys.stdin)["packages"] if p["name"] == "landlock"))')"
cp "$(dirname "$manifest")/examples/sandboxer.rs" "$proj/src/main.rs"
say "crates.io landlock $LANDLOCK_VERSION: examples/sandboxer.rs from $(dirname "$manifest")"
# Its own target directory, whatever CARGO_TARGET_DIR the caller exported: the adapter
# looks for the binary there.
(cd "$proj" && CARGO_TARGET_DIR="$proj/target" nice -n 10 cargo build --release --quiet)
say "built $proj/target/release/sandboxer"

$ci && exit 0

# npm
mkdir -p "$cache/npm"
say "npm install @openai/codex@$CODEX_VERSION @anthropic-ai/sandbox-runtime@$SRT_VERSION"
npm install --prefix "$cache/npm" --no-audit --no-fund --loglevel=error \
  "@openai/codex@$CODEX_VERSION" "@anthropic-ai/sandbox-runtime@$SRT_VERSION" >/dev/null
say "npm $("$cache/npm/node_modules/.bin/codex" --version)"
say "npm sandbox-runtime $("$cache/npm/node_modules/.bin/srt" --version)"

install_agents
