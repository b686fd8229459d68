#!/usr/bin/env bash
# A spec release (`just release`; docs/submissions/README.md, "Releasing"): freezes the
# current spec version's checklist with the suite hash (`gatehouse-conform checklist
# --write`, PROTO-CERT-1) and writes the reference's submission for that version from a
# run of the whole suite in the fixed mode (`gatehouse-conform certify`, PROTO-CERT-4),
# into docs/submissions/VERSION/gatehouse/, then verifies it and checks the trace. It
# fails, in one line, when the tree has uncommitted changes (the submission names the
# revision that ran; --allow-dirty overrides), when that version's submission exists
# already (a release happens once; --force rewrites it), or when the submission does not
# verify. Commit what it wrote: from then on the checklist is frozen.
#
#   .ci/release.sh                 in the repository this script belongs to
#   .ci/release.sh --allow-dirty   with uncommitted changes (named `+dirty` in the product)
#
# GATEHOUSE_EXPECT_LANDLOCK_ABI and GATEHOUSE_EXPECT_FENCE_BACKEND (as .ci/run takes them,
# default 7 and native) are the host the reference's run must declare.
# GATEHOUSE_RELEASE_BIN names a directory holding `gatehouse` and `gatehouse-conform`
# already built from this revision (a test of this script on a copy); by default cargo
# builds them.
set -euo pipefail
cd "$(dirname "$0")/.."

allow_dirty=false force=false
for arg in "$@"; do
  case "$arg" in
    --allow-dirty) allow_dirty=true ;;
    --force) force=true ;;
    *) echo "release: unknown argument $arg (--allow-dirty, --force)" >&2; exit 2 ;;
  esac
done

version=$(sed -n 's/^Specification version: \*\*\([0-9][0-9.]*\)\*\*.*/\1/p' spec/README.md | head -n1)
[ -n "$version" ] || { echo "release: spec/README.md names no \"Specification version: **X.Y**\"" >&2; exit 2; }
out="docs/submissions/$version/gatehouse"
if [ -e "$out" ] && ! $force; then
  echo "release: $out exists: version $version was released already (--force rewrites it)" >&2
  exit 1
fi
rev=$(git rev-parse --short HEAD)
if [ -n "$(git status --porcelain)" ]; then
  $allow_dirty || { echo "release: the tree has uncommitted changes: commit them first (the submission names revision $rev), or --allow-dirty" >&2; exit 1; }
  rev="$rev+dirty"
fi
: "${GATEHOUSE_EXPECT_LANDLOCK_ABI:=7}"
: "${GATEHOUSE_EXPECT_FENCE_BACKEND:=native}"
crate_version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n1)

bin="${GATEHOUSE_RELEASE_BIN:-${CARGO_TARGET_DIR:-target}/release}"
if [ -n "${GATEHOUSE_RELEASE_BIN:-}" ]; then
  echo "release: Gatehouse $version at $rev: the binaries already built in $bin" >&2
else
  echo "release: Gatehouse $version at $rev: building the runner and the reference" >&2
  cargo build --release --locked -q -p gatehouse -p gatehouse-conformance
fi
conform="$bin/gatehouse-conform"

echo "release: freezing spec/checklists/$version.toml with the suite hash" >&2
"$conform" checklist --write

product=$(mktemp)
trap 'rm -f "$product"' EXIT
cat >"$product" <<EOF
name = "gatehouse"
vendor = "the Gatehouse project"
version = "$crate_version+$rev"
repository = "this repository (reference/, the crate \`gatehouse\`)"
reproduce = "At revision $rev of this repository, as root on Linux with Landlock ABI $GATEHOUSE_EXPECT_LANDLOCK_ABI: \`just release\` (.ci/release.sh), which runs \`cargo build --release --locked -p gatehouse -p gatehouse-conformance\`, \`gatehouse-conform checklist --write\`, then \`gatehouse-conform certify --impl 'target/release/gatehouse adapter' --expect-landlock-abi $GATEHOUSE_EXPECT_LANDLOCK_ABI --expect-fence-backend $GATEHOUSE_EXPECT_FENCE_BACKEND --product PRODUCT.toml --out $out\`."
EOF

echo "release: the whole suite against the reference, in the fixed mode, into $out" >&2
rm -rf "$out"
# certify verifies the folder it wrote; its exit status is verify's.
"$conform" certify --impl "$bin/gatehouse adapter" \
  --expect-landlock-abi "$GATEHOUSE_EXPECT_LANDLOCK_ABI" \
  --expect-fence-backend "$GATEHOUSE_EXPECT_FENCE_BACKEND" \
  --product "$product" --out "$out"
"$conform" trace >/dev/null
echo "release: wrote spec/checklists/$version.toml and $out; commit them" >&2
