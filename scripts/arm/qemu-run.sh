#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs an ARM Linux program on an x86-64 host under QEMU user-mode emulation, with the cross
# toolchain's C library or the sysroot's own (QEMU_LD_PREFIX) and the sysroot's XNNPACK/pthreadpool/cpuinfo
# (LD_LIBRARY_PATH, appended to any caller-supplied entries). The toolchain files use it as
# CMAKE_CROSSCOMPILING_EMULATOR, so CTest runs the cross-built tests through it.
#
# usage: scripts/arm/qemu-run.sh aarch64|arm SYSROOT PROGRAM [ARGS...]
# QEMU_CPU picks the emulated CPU (default "max": every feature QEMU has, dot product included;
# e.g. QEMU_CPU=cortex-a53 for a core without it). Emulated timings mean nothing.
set -euo pipefail
if [ $# -lt 3 ]; then
  echo "usage: $0 aarch64|arm SYSROOT PROGRAM [ARGS...]" >&2
  exit 2
fi
arch=$1 sysroot=$2
shift 2
case "$arch" in
  aarch64) triple=aarch64-linux-gnu ;;
  arm) triple=arm-linux-gnueabihf ;;
  *) echo "qemu-run.sh: unknown architecture '$arch'" >&2; exit 2 ;;
esac
# A sysroot with its own C library (prepare_sysroot.sh with EDGEBERT_SYSROOT_LIBC=1) provides
# the dynamic loader and libc; otherwise the cross toolchain's copy does.
if compgen -G "$sysroot/lib/ld-linux*.so.*" > /dev/null; then
  export QEMU_LD_PREFIX=$sysroot
else
  export QEMU_LD_PREFIX=/usr/$triple
fi
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$sysroot/usr/lib/$triple
exec "qemu-$arch" "$@"
