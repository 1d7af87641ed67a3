# SPDX-License-Identifier: Apache-2.0
# Cross-compiling edgebert for Android, arm64-v8a, with the Android NDK (r23 or later). A thin
# wrapper over the NDK's own toolchain file, following its documented CMake conventions. Not
# exercised in CI (no NDK can be installed there): see docs/cross-compiling.md.
#
#   cmake -S . -B build/android-arm64 -G Ninja -DCMAKE_BUILD_TYPE=Release \
#         -DCMAKE_TOOLCHAIN_FILE=toolchains/android-arm64.cmake -DANDROID_NDK=$HOME/Android/ndk/26.1.10909125 \
#         -DEDGEBERT_XNNPACK_ROOT=/path/to/android-arm64-prefix
#
# ANDROID_NDK (or the environment's ANDROID_NDK / ANDROID_NDK_HOME / ANDROID_NDK_ROOT): the NDK.
# ANDROID_PLATFORM: minimum API level (default android-24; the runtime needs getauxval, API 18+).
# ANDROID_STL: default c++_static (libedgebert.so then carries its own C++ runtime and exports
#   only the C API; use c++_shared if your app has several C++ libraries).
# EDGEBERT_XNNPACK_ROOT: an install prefix (include/, lib/) holding XNNPACK, pthreadpool and
#   cpuinfo built for arm64-v8a by you (e.g. XNNPACK's own CMake build with this NDK), and the
#   FlatBuffers headers (copy the host's /usr/include/flatbuffers to include/flatbuffers; never
#   point at the host's /usr/include itself). flatc and python3 run on the host.
# Tests are off by default (Catch2 is not part of the NDK); the tools build as Android executables.
set(ANDROID_ABI arm64-v8a CACHE STRING "Android ABI")
include("${CMAKE_CURRENT_LIST_DIR}/android-common.cmake")
