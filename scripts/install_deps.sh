#!/usr/bin/env bash
# Installs every Debian 12 package edgebert needs to build, test and run its demo.
# Idempotent: packages already installed are not fetched again. Needs root (or sudo).
set -euo pipefail
PKGS=(build-essential cmake ninja-build pkg-config
      libxnnpack-dev libpthreadpool-dev libcpuinfo-dev
      libflatbuffers-dev flatbuffers-compiler catch2
      python3 python3-numpy)
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "[install_deps] all packages present"
  exit 0
fi
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO=sudo
echo "[install_deps] installing: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
