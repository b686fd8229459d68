#!/usr/bin/env bash
# What the Linux checks need on the host: Debian's or Ubuntu's packages (through sudo
# when not root) and the rustup components and target. `.ci/run` and the workflow's Linux
# jobs both run this script, so the two cannot drift apart.
set -euo pipefail
need_apt=()
command -v python3 >/dev/null || need_apt+=(python3)
# lint-workflows.sh and action.sh make a virtual environment (Debian splits venv off).
python3 -c 'import ensurepip' 2>/dev/null || need_apt+=(python3-venv)
# The fence's bwrap backend drives the real bubblewrap; its tests and scenarios need it.
[ -x /usr/bin/bwrap ] || need_apt+=(bubblewrap)
# The agent adapters read a scenario's agent file (YAML) with PyYAML, Debian's python3-yaml.
python3 -c 'import yaml' 2>/dev/null || need_apt+=(python3-yaml)
# The toolchains' test (.ci/steps/toolchains.sh) builds with Debian's node, npm and go.
[ -x /usr/bin/npm ] || need_apt+=(npm)
[ -x /usr/bin/go ] || need_apt+=(golang-go)
if [ ${#need_apt[@]} -gt 0 ]; then
  sudo=()
  [ "$(id -u)" -eq 0 ] || sudo=(sudo)
  "${sudo[@]}" apt-get update -qq
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}"
fi
rustup component add clippy rustfmt >/dev/null 2>&1 || true
# The Seatbelt backend is compile-checked for macOS; the std of that target is all it needs.
rustup target add aarch64-apple-darwin >/dev/null
