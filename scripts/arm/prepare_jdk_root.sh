#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Prepares a root for running Java under qemu-aarch64: Debian's arm64 openjdk-17-jre-headless, the
# C/C++ runtime it needs (libc6, libgcc-s1, libstdc++6, zlib1g) and the XNNPACK, pthreadpool and
# cpuinfo libraries libedgebert.so loads, unpacked (dpkg -x, not installed) into ROOT_DIR. Run with
#   QEMU_LD_PREFIX=ROOT_DIR qemu-aarch64 ROOT_DIR/usr/lib/jvm/java-17-openjdk-arm64/bin/java ...
# and WITHOUT LD_LIBRARY_PATH (the java launcher would re-execute itself outside the emulator).
# The JRE's AWT/printing dependencies (cups, fontconfig, ...) are left out: a headless JVM that
# does no graphics never loads them.
# usage: scripts/arm/prepare_jdk_root.sh ROOT_DIR
# Needs the arm64 architecture in dpkg (scripts/arm/prepare_sysroot.sh adds it). Idempotent: an
# up-to-date root (same package versions) is left alone.
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: $0 ROOT_DIR" >&2; exit 2; }
DIR=$1
PKGS=(openjdk-17-jre-headless libc6 libgcc-s1 libstdc++6 zlib1g libxnnpack0 libpthreadpool0 libcpuinfo0)
want=""
for p in "${PKGS[@]}"; do
  v=$(apt-cache policy "$p:arm64" 2>/dev/null | awk '/Candidate:/ {print $2}')
  if [ -z "$v" ] || [ "$v" = "(none)" ]; then
    echo "[jdk-root] no candidate for $p:arm64 (run scripts/arm/prepare_sysroot.sh first)" >&2
    exit 1
  fi
  want+="$p:arm64=$v"$'\n'
done
STAMP=$DIR/.edgebert-jdk-root
if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$want" ]; then
  echo "[jdk-root] $DIR is up to date"
  exit 0
fi
echo "[jdk-root] unpacking ${PKGS[*]} (arm64) into $DIR"
rm -rf "$DIR"
mkdir -p "$DIR"
debs=$(mktemp -d)
trap 'rm -rf "$debs"' EXIT
chmod 777 "$debs"  # apt-get download runs as _apt when it can
(cd "$debs" && apt-get download -q $(for p in "${PKGS[@]}"; do printf '%s:arm64 ' "$p"; done))
for deb in "$debs"/*.deb; do dpkg -x "$deb" "$DIR"; done
rm -rf "$DIR/usr/share/doc" "$DIR/usr/share/man"
JVM=$DIR/usr/lib/jvm/java-17-openjdk-arm64
[ -x "$JVM/bin/java" ] || { echo "[jdk-root] $JVM/bin/java missing after unpacking" >&2; exit 1; }
printf '%s' "$want" > "$STAMP"
echo "[jdk-root] ready: $JVM/bin/java"
