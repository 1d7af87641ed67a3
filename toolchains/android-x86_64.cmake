# SPDX-License-Identifier: Apache-2.0
# Cross-compiling edgebert for Android x86_64 (emulators, Chromebooks) with the Android NDK (r23 or
# later): the twin of toolchains/android-arm64.cmake (same variables; EDGEBERT_XNNPACK_ROOT holds
# x86_64 builds). Not exercised in CI (no NDK can be installed there).
#
#   cmake -S . -B build/android-x86_64 -G Ninja -DCMAKE_BUILD_TYPE=Release \
#         -DCMAKE_TOOLCHAIN_FILE=toolchains/android-x86_64.cmake -DANDROID_NDK=$HOME/Android/ndk/26.1.10909125 \
#         -DEDGEBERT_XNNPACK_ROOT=/path/to/android-x86_64-prefix
set(ANDROID_ABI x86_64 CACHE STRING "Android ABI")
include("${CMAKE_CURRENT_LIST_DIR}/android-common.cmake")
