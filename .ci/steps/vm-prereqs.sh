#!/usr/bin/env bash
# Installs what the kernel matrix needs: QEMU, Debian's archive keyring (the private apt
# configuration of vm-images/build.py verifies the archive with it) and the musl target
# (static gatehouse and gatehouse-conform for the initramfs). Called by .ci/run and by
# .github/workflows/conformance.yml.
set -euo pipefail
need=()
command -v qemu-system-x86_64 >/dev/null || need+=(qemu-system-x86)
command -v python3 >/dev/null || need+=(python3)
command -v dpkg-deb >/dev/null || need+=(dpkg)
[ -f /usr/share/keyrings/debian-archive-keyring.gpg ] || need+=(debian-archive-keyring)
if [ ${#need[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo=sudo
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need[@]}"
fi
rustup target add x86_64-unknown-linux-musl >/dev/null
