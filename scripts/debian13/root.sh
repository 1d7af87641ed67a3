#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A cached Debian 13 (trixie) root for building and testing edgebert against Debian 13's XNNPACK,
# and a way to run commands in it with the source tree mounted at /src.
#
# usage: scripts/debian13/root.sh [--src DIR] [--] [COMMAND [ARGS...]]
#   Creates the root if it is missing or its package list (scripts/debian13/packages.txt) changed
#   (mmdebstrap, installed with apt-get if needed; about 2-4 min), then runs COMMAND (default: an
#   interactive shell) in it as root, in /src, where DIR (default: this checkout) is bind-mounted.
# The root lives OUTSIDE the repository: /var/cache/edgebert/debian13-root, or
# $EDGEBERT_DEBIAN13_ROOT. Its stamp file holds the hash of the package list; creation is
# serialized with flock, so parallel callers share one root.
# /proc, /sys, /dev and the source tree are bind-mounted in a private mount namespace (unshare),
# so the mounts exist only for this command and vanish when it ends, even if it is killed; a trap
# unmounts them explicitly as well. SOURCE/../shared (test assets), if present, appears as /shared.
# Needs root.
set -euo pipefail
# Everything runs inside main(), which bash parses completely before running: editing this file
# while a long command runs in the root cannot change what the running copy does next.
main() {
  HERE=$(cd "$(dirname "$0")" && pwd)
  SRC=$(cd "$HERE/../.." && pwd)
  if [ "${1:-}" = "--src" ]; then SRC=$(cd "$2" && pwd); shift 2; fi
  [ "${1:-}" = "--" ] && shift
  DIR=${EDGEBERT_DEBIAN13_ROOT:-/var/cache/edgebert/debian13-root}
  LIST=$HERE/packages.txt
  MIRROR=${EDGEBERT_DEBIAN13_MIRROR:-http://deb.debian.org/debian}
  [ "$(id -u)" -eq 0 ] || { echo "[debian13] needs root (mmdebstrap, chroot, mounts)" >&2; exit 1; }

  pkgs=$(grep -v '^\s*#' "$LIST" | tr -s ' \n' '\n' | sed '/^$/d' | sort -u | paste -sd, -)
  want=$(printf 'trixie %s %s\n' "$MIRROR" "$pkgs" | sha256sum | cut -d' ' -f1)
  STAMP=$DIR.stamp

  mkdir -p "$(dirname "$DIR")"
  exec 9> "$DIR.lock"
  flock 9
  if [ ! -f "$STAMP" ] || [ "$(cat "$STAMP")" != "$want" ] || [ ! -x "$DIR/usr/bin/cmake" ]; then
    if ! command -v mmdebstrap > /dev/null; then
      echo "[debian13] installing mmdebstrap"
      export DEBIAN_FRONTEND=noninteractive
      apt-get update -q || echo "[debian13] warning: apt-get update reported errors; continuing"
      apt-get -o DPkg::Lock::Timeout=900 install -y -q --no-install-recommends mmdebstrap
    fi
    echo "[debian13] creating $DIR (trixie: $pkgs)"
    t0=$SECONDS
    rm -rf "$DIR" "$STAMP" "$DIR.new"
    mmdebstrap --variant=apt --include="$pkgs" --architectures=amd64,arm64 \
      trixie "$DIR.new" "$MIRROR"
    mv "$DIR.new" "$DIR"
    printf '%s\n' "$want" > "$STAMP"
    echo "[debian13] root ready in $((SECONDS - t0)) s"
  fi
  flock -u 9

  [ $# -gt 0 ] || set -- bash -l
  # The rest runs in a private mount namespace: the bind mounts below are invisible to other
  # processes (and to parallel callers using the same root) and die with this command.
  if [ -z "${EB_DEBIAN13_NS:-}" ]; then
    EB_DEBIAN13_NS=1 exec unshare --mount --propagation private "$0" --src "$SRC" -- "$@"
  fi
  mounted=()
  cleanup() {
    local i
    for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do umount -l "${mounted[$i]}" 2> /dev/null || true; done
  }
  trap cleanup EXIT INT TERM
  bind() {  # host-dir root-relative-dir
    mkdir -p "$DIR$2"
    mount --rbind "$1" "$DIR$2"
    mount --make-rslave "$DIR$2"
    mounted+=("$DIR$2")
  }
  bind /proc /proc
  bind /sys /sys
  bind /dev /dev
  bind "$SRC" /src
  # The tests read shared assets next to the checkout (EDGEBERT_SHARED = SOURCE/../shared).
  [ -d "$SRC/../shared" ] && bind "$(cd "$SRC/../shared" && pwd)" /shared
  cp -L /etc/resolv.conf "$DIR/etc/resolv.conf" 2> /dev/null || true
  chroot "$DIR" /usr/bin/env -i HOME=/root TERM="${TERM:-dumb}" LANG=C.UTF-8 \
    PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    ${QEMU_CPU:+QEMU_CPU=$QEMU_CPU} /bin/sh -c 'cd /src && exec "$@"' sh "$@"
}
main "$@"
exit $?
