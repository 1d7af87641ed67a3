#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Prepares a cross-compilation sysroot for edgebert: Debian's ARM builds of XNNPACK, pthreadpool,
# cpuinfo, utf8proc, PCRE2 (8-bit) and Catch2 (tests) unpacked (not installed: the -dev packages cannot be co-installed
# with the amd64 ones) into SYSROOT_DIR, plus the host's FlatBuffers headers (header-only on the
# target; flatc runs on the host and must match them).
# The compiler and the C library it links against come from Debian's cross toolchain
# (crossbuild-essential-ARCH). With EDGEBERT_SYSROOT_LIBC=1 the target's own C/C++ runtime
# (libc6, libstdc++6, libgcc-s1 .debs) is unpacked too and scripts/arm/qemu-run.sh runs the
# programs with it (the Debian 13 stage: Debian 13's arm64 libc, not the cross toolchain's copy).
#
# usage: scripts/arm/prepare_sysroot.sh SYSROOT_DIR [arm64|armhf]
# Needs root (or sudo) for dpkg --add-architecture and apt-get update. Idempotent: an up-to-date
# sysroot (same package versions) is left alone.
set -euo pipefail
if [ $# -lt 1 ]; then
  echo "usage: $0 SYSROOT_DIR [arm64|armhf]" >&2
  exit 2
fi
SYSROOT=$1
ARCH=${2:-arm64}
PKGS=(libxnnpack-dev libxnnpack0 libpthreadpool-dev libpthreadpool0 libcpuinfo-dev libcpuinfo0 libutf8proc-dev libutf8proc2 libpcre2-dev libpcre2-8-0 catch2)
[ "${EDGEBERT_SYSROOT_LIBC:-0}" = 1 ] && PKGS+=(libc6 libstdc++6 libgcc-s1)
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO=sudo
export DEBIAN_FRONTEND=noninteractive

[ -f /usr/include/flatbuffers/flatbuffers.h ] ||
  { echo "[sysroot] /usr/include/flatbuffers missing: run scripts/install_deps.sh first" >&2; exit 1; }

candidate() { apt-cache policy "$1:$ARCH" 2>/dev/null | awk '/Candidate:/ {print $2}'; }

if ! dpkg --print-foreign-architectures | grep -qx "$ARCH"; then
  echo "[sysroot] dpkg --add-architecture $ARCH"
  $SUDO dpkg --add-architecture "$ARCH"
fi
if [ -z "$(candidate libxnnpack-dev)" ] || [ "$(candidate libxnnpack-dev)" = "(none)" ]; then
  # A mirror that is mid-sync can fail one index (apt-get update then exits non-zero) while
  # the packages we need are available: go on, and let apt-get download say if they are not.
  $SUDO apt-get update -q || echo "[sysroot] warning: apt-get update reported errors; continuing"
fi

# XNNPACK's runtime package is libxnnpack0 on Debian 12, libxnnpack0.20241108 on Debian 13: take
# the name from libxnnpack-dev's dependencies.
xnn_rt=$(apt-cache depends "libxnnpack-dev:$ARCH" 2>/dev/null | awk '/Depends: libxnnpack0/ {sub(":.*", "", $2); print $2; exit}')
PKGS=("${PKGS[@]/#libxnnpack0/${xnn_rt:-libxnnpack0}}")
# utf8proc's runtime package is libutf8proc2 on Debian 12, libutf8proc3 on Debian 13.
u8_rt=$(apt-cache depends "libutf8proc-dev:$ARCH" 2>/dev/null | awk '/Depends: libutf8proc[0-9]/ {sub(":.*", "", $2); print $2; exit}')
PKGS=("${PKGS[@]/#libutf8proc2/${u8_rt:-libutf8proc2}}")
# Catch2 v3 (Debian 13): `catch2` is an Architecture: all transitional package; the library is in
# libcatch2-dev.
v=$(candidate libcatch2-dev)
[ -n "$v" ] && [ "$v" != "(none)" ] && PKGS=("${PKGS[@]/#catch2/libcatch2-dev}")

# The version list of what we unpack: the sysroot is rebuilt when it changes.
want=""
for p in "${PKGS[@]}"; do
  v=$(candidate "$p")
  if [ -z "$v" ] || [ "$v" = "(none)" ]; then
    echo "[sysroot] no candidate for $p:$ARCH (apt-get update failed?)" >&2
    exit 1
  fi
  want+="$p:$ARCH=$v"$'\n'
done
STAMP=$SYSROOT/.edgebert-sysroot
if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$want" ]; then
  echo "[sysroot] $SYSROOT is up to date ($ARCH)"
else
  echo "[sysroot] unpacking ${PKGS[*]} ($ARCH) into $SYSROOT"
  rm -rf "$SYSROOT"
  mkdir -p "$SYSROOT"
  debs=$(mktemp -d)
  trap 'rm -rf "$debs"' EXIT
  # apt-get download runs as the _apt user when it can; the folder must be writable for it.
  chmod 777 "$debs"
  (cd "$debs" && apt-get download -q $(for p in "${PKGS[@]}"; do printf '%s:%s ' "$p" "$ARCH"; done))
  for deb in "$debs"/*.deb; do dpkg -x "$deb" "$SYSROOT"; done
  rm -rf "$SYSROOT/usr/share/doc" "$SYSROOT/usr/share/lintian"
  # merged /usr: the programs' interpreter is /lib/ld-linux-*.so.*, which the .debs put in usr/lib.
  if [ "${EDGEBERT_SYSROOT_LIBC:-0}" = 1 ] && [ ! -e "$SYSROOT/lib" ]; then ln -s usr/lib "$SYSROOT/lib"; fi
  printf '%s' "$want" > "$STAMP"
fi

# FlatBuffers headers, refreshed from the host every time (flatc must match them).
rm -rf "$SYSROOT/usr/include/flatbuffers"
cp -r /usr/include/flatbuffers "$SYSROOT/usr/include/"
echo "[sysroot] ready: $SYSROOT ($(ls "$SYSROOT"/usr/lib/*/lib*.so | wc -l) shared libraries)"
