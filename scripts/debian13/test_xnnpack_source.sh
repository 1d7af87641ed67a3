#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Exercises -DEDGEBERT_XNNPACK_SOURCE_DIR (how Android/iOS builds get XNNPACK) with the only
# XNNPACK source reachable here: Debian 13's, fetched with `apt-get source` inside the Debian 13
# root (a deb-src line in a private apt configuration). Its .dsc and .debian.tar.xz answer 404 on
# the mirror, but the upstream tarball (xnnpack_0.0~git20241108.4ea82e5.orig.tar.xz) downloads,
# and that is all a subproject build needs. XNNPACK would download pthreadpool, cpuinfo and FXdiv
# from GitHub (unreachable here), so this uses XNNPACK_USE_SYSTEM_LIBS with Debian 13's
# libpthreadpool/libcpuinfo and FXdiv headers from libfxdiv-dev's .deb. An Android/iOS build points
# PTHREADPOOL_SOURCE_DIR / CPUINFO_SOURCE_DIR / FXDIV_SOURCE_DIR at source trees instead.
# Builds XNNPACK (production kernels) + edgebert in build/xnnpack-source and runs the XNNPACK
# glue and no-allocation tests. Not part of scripts/test.sh: the XNNPACK build alone takes long.
# usage: scripts/debian13/test_xnnpack_source.sh   (needs root)
set -euo pipefail
cd "$(dirname "$0")/../.."
exec scripts/debian13/root.sh -- bash -ec '
  W=/src/build/xnnpack-source
  mkdir -p "$W/fetch/lists/partial"
  cd "$W/fetch"
  echo "deb-src http://deb.debian.org/debian trixie main" > sources.list
  APT="-o Dir::Etc::SourceList=$PWD/sources.list -o Dir::Etc::SourceParts=/dev/null -o Dir::State::Lists=$PWD/lists"
  if ! ls xnnpack_*.orig.tar.* > /dev/null 2>&1; then
    apt-get $APT update -q
    chmod 777 .
    apt-get $APT source --download-only -q xnnpack || echo "[xnnpack-source] apt-get source failed (see above); using what it fetched"
  fi
  if [ ! -d fxdiv ]; then
    apt-get download libfxdiv-dev
    dpkg -x libfxdiv-dev_*.deb fxdiv
  fi
  tarball=$(ls xnnpack_*.orig.tar.*)
  sha256sum "$tarball"
  if [ ! -f xnnpack/.unpacked ]; then
    rm -rf xnnpack
    mkdir xnnpack
    tar -xf "$tarball" -C xnnpack  # Debian'"'"'s orig tarball has no top-level folder
    touch xnnpack/.unpacked
  fi
  XSRC=$W/fetch/xnnpack
  [ -f "$XSRC/CMakeLists.txt" ] || XSRC=$(dirname "$(ls -d "$W"/fetch/xnnpack/*/CMakeLists.txt | head -1)")
  cmake -S /src -B "$W/build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DEDGEBERT_XNNPACK_SOURCE_DIR="$XSRC" -DXNNPACK_USE_SYSTEM_LIBS=ON \
    -DFXDIV_SOURCE_DIR="$W/fetch/fxdiv/usr" -DXNNPACK_ENABLE_KLEIDIAI=OFF \
    -DCPUINFO_SOURCE_DIR=/usr -DPTHREADPOOL_SOURCE_DIR=/usr
  t0=$(date +%s)
  cmake --build "$W/build" -j "$(nproc)" --target edgebert-convert test_xnn_gemm test_no_alloc edgebert-gemm-kinds
  echo "[xnnpack-source] build: $(( $(date +%s) - t0 )) s"
  ctest --test-dir "$W/build" --output-on-failure -R "^(make_testdata|convert_testdata|test_xnn_gemm|test_no_alloc)$"
'
