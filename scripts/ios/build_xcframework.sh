#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds EdgeBert.xcframework on macOS: libedgebert.a (with XNNPACK, pthreadpool, cpuinfo and utf8proc merged
# in) for iOS devices (arm64) and the iOS simulator (arm64 + x86_64), built with
# toolchains/ios-arm64.cmake, plus the C header and a module map (module CEdgeBert), so Swift
# code can `import CEdgeBert` and the EdgeBert Swift sources (bindings/swift/Sources/EdgeBert)
# work unchanged. Prints the SwiftPM binaryTarget stanza to use it.
#
# UNTESTED: edgebert's CI has no macOS or Xcode, so this script has never been run. It follows
# CMake's documented iOS conventions and `xcodebuild -create-xcframework`.
#
# usage: EDGEBERT_IOS_PREFIXES=/path/to/prefixes scripts/ios/build_xcframework.sh [OUT_DIR]
#   EDGEBERT_IOS_PREFIXES  a folder with one install prefix per platform, iphoneos/ and
#                          iphonesimulator/, each holding static XNNPACK, pthreadpool,
#                          cpuinfo and utf8proc (libutf8proc.a, the tokenizer's Unicode library) built for it (simulator: arm64 + x86_64 fat libraries) and
#                          the FlatBuffers headers (include/flatbuffers, the version of your flatc)
#   OUT_DIR                default build/ios; gets EdgeBert.xcframework and EdgeBert.xcframework.zip
#
# In Package.swift (after uploading the zip; the checksum is printed below):
#   .binaryTarget(name: "CEdgeBert", url: "https://.../EdgeBert.xcframework.zip", checksum: "..."),
#   .target(name: "EdgeBert", dependencies: ["CEdgeBert"], path: "Sources/EdgeBert",
#           linkerSettings: [.linkedLibrary("c++")]),
# or, for a local copy:  .binaryTarget(name: "CEdgeBert", path: "EdgeBert.xcframework")
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${1:-$ROOT/build/ios}
PREFIXES=${EDGEBERT_IOS_PREFIXES:-}
[ "$(uname -s)" = Darwin ] && command -v xcodebuild > /dev/null ||
  { echo "build_xcframework: needs macOS with Xcode (not available on edgebert's CI)" >&2; exit 2; }
[ -n "$PREFIXES" ] || { echo "build_xcframework: set EDGEBERT_IOS_PREFIXES (see the header of $0)" >&2; exit 2; }

HEADERS=$OUT/headers
rm -rf "$OUT/EdgeBert.xcframework" "$HEADERS"
mkdir -p "$HEADERS/edgebert"
cp "$ROOT/runtime/include/edgebert/edgebert.h" "$HEADERS/edgebert/"
cat > "$HEADERS/module.modulemap" <<'MAP'
module CEdgeBert [system] {
    header "edgebert/edgebert.h"
    link "c++"
    export *
}
MAP

libs=()
for platform in iphoneos iphonesimulator; do
  prefix=$PREFIXES/$platform
  build=$OUT/build-$platform
  archs="arm64"
  [ $platform = iphonesimulator ] && archs="arm64;x86_64"
  echo "== $platform ($archs)"
  cmake -S "$ROOT" -B "$build" -G Xcode -DCMAKE_TOOLCHAIN_FILE="$ROOT/toolchains/ios-arm64.cmake" \
    -DCMAKE_OSX_SYSROOT=$platform -DCMAKE_OSX_ARCHITECTURES="$archs" \
    -DEDGEBERT_XNNPACK_ROOT="$prefix" -DEDGEBERT_BUILD_TESTS=OFF -DEDGEBERT_BUILD_CONVERTER=OFF
  cmake --build "$build" --config Release --target edgebert_static
  # One static library an app links: edgebert and the four dependencies it calls.
  merged=$build/libedgebert-all.a
  libtool -static -o "$merged" "$build/Release-$platform/libedgebert.a" \
    "$prefix/lib/libXNNPACK.a" "$prefix/lib/libpthreadpool.a" "$prefix/lib/libcpuinfo.a" \
    "$prefix/lib/libutf8proc.a"
  libs+=(-library "$merged" -headers "$HEADERS")
done
xcodebuild -create-xcframework "${libs[@]}" -output "$OUT/EdgeBert.xcframework"
(cd "$OUT" && rm -f EdgeBert.xcframework.zip && zip -qry EdgeBert.xcframework.zip EdgeBert.xcframework)
echo "== $OUT/EdgeBert.xcframework"
echo "SwiftPM: .binaryTarget(name: \"CEdgeBert\", url: \"<where you host EdgeBert.xcframework.zip>\","
echo "                       checksum: \"$(swift package compute-checksum "$OUT/EdgeBert.xcframework.zip")\")"
