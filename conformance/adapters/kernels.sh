#!/usr/bin/env bash
# The peers across kernels: runs each third-party fence adapter of conformance/adapters/
# inside the kernel matrix's QEMU guests (`gatehouse-conform vm`, its tool put in the guest
# with --guest-package and --guest-copy, as root and unprivileged), keeps every guest's
# reports under reports/peers-vm/LABEL/, and writes the kernel x implementation table to
# docs/implementations-kernels.md (`just peers-kernels`).
#
#   conformance/adapters/kernels.sh                       bwrap, bwrap --hardened, the landlock
#                                                         sandboxer, on 5.10, 6.1 and 7.3
#   conformance/adapters/kernels.sh --kernels all         every kernel and variant (vm --all)
#   conformance/adapters/kernels.sh --kernels ci          the part .ci/run boots (vm --ci)
#   conformance/adapters/kernels.sh --kernels '6.1 7.3' --impls 'codex'
#   conformance/adapters/kernels.sh --table-only          re-render from the reports there
#
# Scenarios: fence/ (GATEHOUSE_PEER_FILTER), the chapter the fences answer. The sandboxer
# is built static (musl) so that it needs nothing of the guest; Codex's sandbox is the
# static binary of its npm package (315 MB: its guests need 2.3 GB of memory each). The
# adapters read the setup's fields from spec/protocol.schema.json, copied beside them.
set -euo pipefail
cd "$(dirname "$0")/../.."

kernels="5.10 6.1 7.3"
impls="bwrap bwrap-hardened landlock-sandboxer"
table_only=false
while [ $# -gt 0 ]; do
  case "$1" in
    --kernels) kernels="$2"; shift 2 ;;
    --impls) impls="$2"; shift 2 ;;
    --table-only) table_only=true; shift ;;
    *) echo "kernels.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
filter="${GATEHOUSE_PEER_FILTER:-fence/}"
cache="${GATEHOUSE_PEERS_CACHE:-$PWD/target/peers}"
out=reports/peers-vm
conform="${CARGO_TARGET_DIR:-target}/release/gatehouse-conform"

case "$kernels" in
  all) select=(--all) ;;
  ci) select=(--ci) ;;
  *) select=(); for k in $kernels; do select+=(--kernel "$k"); done ;;
esac

codex_bin() { # the static binary inside the npm package
  find "$cache/npm/node_modules/@openai" -path '*x86_64-unknown-linux-musl/bin/codex' -type f 2>/dev/null | head -1
}

args=()
for label in $impls; do
  args+=("$label=$out/$label")
  $table_only && continue
  extra=()
  case "$label" in
    bwrap)
      impl="python3 conformance/adapters/bwrap/adapter.py"
      extra=(--guest-package bubblewrap) ;;
    bwrap-hardened)
      impl="python3 conformance/adapters/bwrap/adapter.py --hardened"
      extra=(--guest-package bubblewrap) ;;
    landlock-sandboxer)
      sandboxer="$cache/landlock-sandboxer/target/x86_64-unknown-linux-musl/release/sandboxer"
      if [ ! -x "$sandboxer" ]; then
        conformance/adapters/install.sh --ci
        (cd "$cache/landlock-sandboxer" && nice -n 10 cargo build --release --quiet --target x86_64-unknown-linux-musl)
      fi
      impl="env LANDLOCK_SANDBOXER=/impl/peers/sandboxer python3 conformance/adapters/landlock_sandboxer/adapter.py"
      extra=(--guest-copy "$sandboxer:peers/sandboxer") ;;
    codex)
      bin="$(codex_bin)"
      [ -n "$bin" ] || { conformance/adapters/install.sh; bin="$(codex_bin)"; }
      # Each user writes its own CODEX_HOME: $HOME differs between the two runs. Codex's
      # launcher runs bubblewrap, the system's on PATH or else the static one its package
      # bundles beside the binary (codex-resources/bwrap): the guest gets the bundled one,
      # what Codex ships; without it every run panics before any jail (exit 101).
      impl='env CODEX=/impl/peers/codex GATEHOUSE_PEERS_CACHE=$HOME/peers python3 conformance/adapters/codex/adapter.py'
      extra=(--guest-copy "$bin:peers/codex"
             --guest-copy "$(realpath "$(dirname "$bin")/../codex-resources/bwrap"):peers/codex-resources/bwrap") ;;
    *) echo "kernels.sh: no adapter named $label" >&2; exit 2 ;;
  esac
  cargo build --release --locked -q -p gatehouse-conformance
  mkdir -p "$out/$label"
  echo "peers-kernels: $label on ${kernels} ($(date -u +%T), load $(cut -d' ' -f1-3 /proc/loadavg))"
  # A third party is expected to fail scenarios: the exit status is the table's, not ours.
  "$conform" vm "${select[@]}" "${extra[@]}" --guest-copy conformance/adapters \
    --guest-copy spec/protocol.schema.json \
    --out-dir "$out/$label" -- --impl "$impl" --filter "$filter" >/dev/null || true
  python3 -c 'import json,sys; m=json.load(open(sys.argv[1])); print(sys.argv[2], "%.0f s" % m["wall_secs"], [(g["kernel"], g["variant"], g["error"] or [u["summary"] for u in g["users"]]) for g in m["guests"]])' \
    "$out/$label/matrix.json" "$label"
done

doc=docs/implementations-kernels.md
{
  cat <<'EOF'
# The peers across kernels

What each third-party fence of [`conformance/adapters/`](../conformance/adapters/README.md)
does on each kernel of the matrix ([`kernel-matrix.md`](kernel-matrix.md)), as root and
as an unprivileged user: the same `fence/` scenarios as
[`implementations.md`](implementations.md), inside QEMU guests, with the tool put in the
guest by `vm --guest-package` / `--guest-copy`. Everything below is written by
`just peers-kernels` (`conformance/adapters/kernels.sh`).

EOF
  python3 conformance/adapters/kernel_table.py --command "just peers-kernels" "${args[@]}"
} > "$doc.new"
mv "$doc.new" "$doc"
echo "peers-kernels: wrote $doc"
