#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs every Debian 12 package edgebert needs to build, test and run its demo; with --aarch64
# or --armv7 also that target's cross compiler and qemu-user (the target's XNNPACK & co. go into
# a sysroot folder: scripts/arm/prepare_sysroot.sh).
# Idempotent: packages already installed are not fetched again. Needs root (or sudo).
# With --reliability: clang with libFuzzer and the sanitizer runtimes, and llvm-symbolizer (the
# fuzzing and ThreadSanitizer stages, scripts/reliability/). With --debian13: mmdebstrap (the
# Debian 13 root, scripts/debian13/root.sh). With --peers: what the peer benchmarks need
# (bench/peers/: torch and onnx to write the ONNX models; node and npm for onnxruntime-node, from
# Debian unless a node is already on PATH). The options combine.
# usage: scripts/install_deps.sh [--aarch64] [--armv7] [--reliability] [--debian13] [--peers]
set -euo pipefail
PKGS=(build-essential cmake ninja-build pkg-config
      libxnnpack-dev libpthreadpool-dev libcpuinfo-dev libutf8proc-dev libpcre2-dev
      libflatbuffers-dev flatbuffers-compiler catch2
      python3 python3-numpy python3-pytest
      python3-scipy  # PyLate's token pooling reference (tests/reference/colbert_numpy.py)
      python3-venv python3-setuptools python3-wheel  # the Python wheel and its venv test
      python3-torch)  # the torch cross-check of the family reference (tests/reference)
# The Java/Kotlin bindings' tools (JDK 17, JUnit 5, Kotlin) are Debian 12's: the Debian 12 stages
# build and test the bindings; inside the Debian 13 root (its own list: scripts/debian13/
# packages.txt) this script is only asked for the aarch64 cross tools.
if grep -qs '^VERSION_CODENAME=bookworm' /etc/os-release; then
  PKGS+=(openjdk-17-jdk-headless junit5 kotlin)
fi
for arg in "$@"; do
  case "$arg" in
    --aarch64) PKGS+=(crossbuild-essential-arm64 qemu-user) ;;
    --armv7) PKGS+=(crossbuild-essential-armhf qemu-user) ;;
    --reliability) PKGS+=(clang libclang-rt-14-dev llvm) ;;
    --debian13) PKGS+=(mmdebstrap) ;;
    --peers)
      PKGS+=(python3-onnx)
      command -v node >/dev/null && command -v npm >/dev/null || PKGS+=(nodejs npm) ;;
    *) echo "usage: $0 [--aarch64] [--armv7] [--reliability] [--debian13] [--peers]" >&2; exit 2 ;;
  esac
done
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
# A mirror that is mid-sync can fail one index file (apt-get update then exits non-zero) while
# everything we need is there: go on, and let apt-get install report what is really missing.
$SUDO apt-get update -q || echo "[install_deps] warning: apt-get update reported errors; continuing"
$SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
