#!/usr/bin/env bash
# Prints the matrix of vm-images/kernels.toml as a JSON array of {kernel, variant}, for
# the workflow's job matrix (the same list `gatehouse-conform vm --all` runs).
set -euo pipefail
cd "$(dirname "$0")/../.."
python3 vm-images/build.py matrix
