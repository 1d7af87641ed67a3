#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs a built edgebert into OUT_DIR/prefix (cmake --install) and checks what a user gets:
# the header, the static and shared libraries, the CMake package and edgebert.pc; that the
# shared library exports only the C API; and that examples/c_api builds against the installed
# package three ways (find_package with the shared library, find_package with
# EDGEBERT_USE_STATIC=ON, pkg-config) and runs on MODEL.
# For a cross build, pass its toolchain file and sysroot: the example is cross-compiled with the
# same toolchain and run under qemu (scripts/arm/qemu-run.sh).
#
# usage: scripts/check_install.sh BUILD_DIR OUT_DIR MODEL.ebm [TOOLCHAIN_FILE SYSROOT]
set -euo pipefail
if [ $# -ne 3 ] && [ $# -ne 5 ]; then
  echo "usage: $0 BUILD_DIR OUT_DIR MODEL.ebm [TOOLCHAIN_FILE SYSROOT]" >&2
  exit 2
fi
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$1 OUT=$2 MODEL=$3
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
PREFIX=$OUT/prefix
CMAKE_ARGS=(-G Ninja -DCMAKE_BUILD_TYPE=Release "-DCMAKE_PREFIX_PATH=$PREFIX")
RUN=()
CC_=cc NM=nm
if [ $# -eq 5 ]; then
  TOOLCHAIN=$(cd "$(dirname "$4")" && pwd)/$(basename "$4")
  SYSROOT=$(cd "$5" && pwd)
  CMAKE_ARGS+=("-DCMAKE_TOOLCHAIN_FILE=$TOOLCHAIN" "-DEDGEBERT_SYSROOT=$SYSROOT")
  case "$TOOLCHAIN" in
    *aarch64-linux-gnu*) triple=aarch64-linux-gnu qarch=aarch64 ;;
    *arm-linux-gnueabihf*) triple=arm-linux-gnueabihf qarch=arm ;;
    *) echo "check_install.sh: unknown toolchain $TOOLCHAIN" >&2; exit 2 ;;
  esac
  CC_=$triple-gcc NM=$triple-nm
  RUN=("$ROOT/scripts/arm/qemu-run.sh" "$qarch" "$SYSROOT")
  PC_LINK=("-Wl,-rpath-link,$SYSROOT/usr/lib/$triple")
  DEP_LIBDIR=("-L$SYSROOT/usr/lib/$triple")
else
  PC_LINK=()
  DEP_LIBDIR=()
fi

rm -rf "$PREFIX"
cmake --install "$BUILD" --prefix "$PREFIX" > /dev/null
libdir=$(dirname "$(find "$PREFIX" -name edgebert.pc)")/..
libdir=$(cd "$libdir" && pwd)
fail=0
for f in "$PREFIX/include/edgebert/edgebert.h" "$libdir/libedgebert.a" "$libdir/libedgebert.so" \
         "$libdir/cmake/edgebert/edgebertConfig.cmake" "$libdir/cmake/edgebert/edgebertConfigVersion.cmake" \
         "$libdir/pkgconfig/edgebert.pc" "$PREFIX/bin/edgebert-run"; do
  [ -e "$f" ] || { echo "missing after install: $f" >&2; fail=1; }
done
[ $fail -eq 0 ] || exit 1
echo "installed: ${PREFIX#$ROOT/}: $(cd "$PREFIX" && find . -type f -o -type l | sort | tr '\n' ' ')"
bash "$ROOT/scripts/check_exports.sh" "$NM" "$libdir/libedgebert.so"

export LD_LIBRARY_PATH=$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
for variant in shared static; do
  dir=$OUT/example-cmake-$variant
  rm -rf "$dir"
  flag=OFF
  [ $variant = static ] && flag=ON
  cmake -S "$ROOT/examples/c_api" -B "$dir" "${CMAKE_ARGS[@]}" -DEDGEBERT_USE_STATIC=$flag > /dev/null
  cmake --build "$dir" > /dev/null
  echo "example (find_package, $variant): $("${RUN[@]}" "$dir/edgebert_example" "$MODEL" | tr '\n' ' ')"
done
# pkg-config: shared by default; --static adds Libs.private (XNNPACK & co., libstdc++)
dir=$OUT/example-pkgconfig
mkdir -p "$dir"
pcflags=$(PKG_CONFIG_PATH= PKG_CONFIG_LIBDIR=$libdir/pkgconfig pkg-config --cflags --libs edgebert)
"$CC_" -o "$dir/edgebert_example" "$ROOT/examples/c_api/main.c" $pcflags "${PC_LINK[@]}"
echo "example (pkg-config): $("${RUN[@]}" "$dir/edgebert_example" "$MODEL" | tr '\n' ' ')"
# static by hand: the archive plus what `pkg-config --static` adds (Libs.private)
pcpriv=$(PKG_CONFIG_PATH= PKG_CONFIG_LIBDIR=$libdir/pkgconfig pkg-config --static --libs edgebert | sed 's/ *-ledgebert\b//')
"$CC_" -o "$dir/edgebert_example_static" "$ROOT/examples/c_api/main.c" "-I$PREFIX/include" "$libdir/libedgebert.a" \
  $pcpriv "${DEP_LIBDIR[@]}" "${PC_LINK[@]}"
echo "example (libedgebert.a + pkg-config --static): $("${RUN[@]}" "$dir/edgebert_example_static" "$MODEL" | tr '\n' ' ')"
echo "install check passed"
