#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds the Android library (AAR) of edgebert's Java bindings: libedgebert.so + libedgebert_jni.so
# for arm64-v8a and x86_64 with the Android NDK (toolchains/android-arm64.cmake and
# toolchains/android-x86_64.cmake), classes.jar (Java 8 bytecode from bindings/java), the
# AndroidManifest.xml and the consumer ProGuard rules that keep the JNI entry points.
#
# UNTESTED: no Android NDK, SDK or emulator can be installed where edgebert's CI runs, so this
# script has never been run. It follows the NDK's CMake conventions and the AAR layout documented
# at developer.android.com/studio/projects/android-library#aar-contents. It refuses to package
# anything that is not an Android ELF of the right ABI (it checks the NDK's .note.android.ident
# section and the machine type), so a Linux build can never end up in the AAR.
#
# usage: ANDROID_NDK=/path/to/ndk EDGEBERT_ANDROID_PREFIXES=/path/to/prefixes \
#          scripts/android/build_aar.sh [OUT.aar]
#   ANDROID_NDK                (or ANDROID_NDK_HOME / ANDROID_NDK_ROOT) an NDK r23 or later
#   EDGEBERT_ANDROID_PREFIXES  a folder with one install prefix per ABI (arm64-v8a/, x86_64/),
#                              each holding XNNPACK, pthreadpool, cpuinfo and utf8proc (the
#                              tokenizer's Unicode library, https://juliastrings.github.io/utf8proc/,
#                              built with its CMakeLists) built with that NDK
#                              for that ABI, and the FlatBuffers headers (include/flatbuffers)
#   ANDROID_PLATFORM           minimum API level (default android-24)
#   OUT.aar                    default build/android/edgebert-VERSION.aar
# Needs on the host: cmake, ninja, flatc, python3, a JDK (javac --release 8, jar), readelf.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
NDK=${ANDROID_NDK:-${ANDROID_NDK_HOME:-${ANDROID_NDK_ROOT:-}}}
PREFIXES=${EDGEBERT_ANDROID_PREFIXES:-}
PLATFORM=${ANDROID_PLATFORM:-android-24}
VERSION=$(sed -n 's/^project(edgebert VERSION \([0-9.]*\).*/\1/p' "$ROOT/CMakeLists.txt")
OUT=${1:-$ROOT/build/android/edgebert-$VERSION.aar}
WORK=$ROOT/build/android
[ -n "$NDK" ] && [ -f "$NDK/build/cmake/android.toolchain.cmake" ] ||
  { echo "build_aar: set ANDROID_NDK to an Android NDK (r23+); none is available on edgebert's CI" >&2; exit 2; }
[ -n "$PREFIXES" ] || { echo "build_aar: set EDGEBERT_ANDROID_PREFIXES (see the header of $0)" >&2; exit 2; }

declare -A TOOLCHAIN=([arm64-v8a]=android-arm64.cmake [x86_64]=android-x86_64.cmake)
declare -A MACHINE=([arm64-v8a]=AArch64 [x86_64]="X86-64")
STAGE=$WORK/aar
rm -rf "$STAGE"
mkdir -p "$STAGE"

for abi in arm64-v8a x86_64; do
  prefix=$PREFIXES/$abi
  [ -d "$prefix" ] || { echo "build_aar: $prefix missing (XNNPACK & co. for $abi)" >&2; exit 2; }
  build=$WORK/build-$abi
  echo "== $abi"
  cmake -S "$ROOT" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_TOOLCHAIN_FILE="$ROOT/toolchains/${TOOLCHAIN[$abi]}" -DANDROID_NDK="$NDK" \
    -DANDROID_PLATFORM="$PLATFORM" -DEDGEBERT_XNNPACK_ROOT="$prefix" \
    -DEDGEBERT_BUILD_JAVA=ON -DEDGEBERT_BUILD_TESTS=OFF -DEDGEBERT_BUILD_CONVERTER=OFF
  cmake --build "$build" --target edgebert_shared edgebert_jni
  mkdir -p "$STAGE/jni/$abi"
  for lib in libedgebert.so libedgebert_jni.so; do
    f=$build/$lib
    # Only NDK-built ELF files of this ABI go into the AAR.
    readelf -S "$f" | grep -q '\.note\.android\.ident' ||
      { echo "build_aar: $f is not an Android (NDK) library" >&2; exit 1; }
    readelf -h "$f" | grep -q "Machine:.*${MACHINE[$abi]}" ||
      { echo "build_aar: $f is not a ${MACHINE[$abi]} library" >&2; exit 1; }
    cp -L "$f" "$STAGE/jni/$abi/$lib"
  done
done

echo "== classes.jar (Java 8 bytecode)"
rm -rf "$WORK/classes"
mkdir -p "$WORK/classes"
javac --release 8 -Xlint:all,-options -Werror -d "$WORK/classes" "$ROOT"/bindings/java/src/main/java/org/edgebert/*.java
jar cf "$STAGE/classes.jar" -C "$WORK/classes" .
min_sdk=${PLATFORM#android-}
cat > "$STAGE/AndroidManifest.xml" <<XML
<?xml version="1.0" encoding="utf-8"?>
<manifest xmlns:android="http://schemas.android.com/apk/res/android" package="org.edgebert">
    <uses-sdk android:minSdkVersion="$min_sdk" />
</manifest>
XML
# R8/ProGuard in the app must keep what JNI looks up by name.
cat > "$STAGE/proguard.txt" <<'PRO'
-keepclasseswithmembernames class org.edgebert.** { native <methods>; }
-keep class org.edgebert.EdgeBertException { static org.edgebert.EdgeBertException fromNative(int, byte[]); }
PRO
: > "$STAGE/R.txt"
mkdir -p "$(dirname "$OUT")"
rm -f "$OUT"
(cd "$STAGE" && jar cfM "$OUT" .)
echo "== $OUT"
(cd "$STAGE" && find . -type f | sort)
