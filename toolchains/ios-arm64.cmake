# SPDX-License-Identifier: Apache-2.0
# Cross-compiling edgebert for iOS devices (arm64) with Xcode's clang, using CMake's built-in iOS
# support (CMAKE_SYSTEM_NAME iOS). Not exercised in CI (no macOS/Xcode there): see
# docs/cross-compiling.md.
#
#   cmake -S . -B build/ios-arm64 -G Xcode -DCMAKE_TOOLCHAIN_FILE=toolchains/ios-arm64.cmake \
#         -DEDGEBERT_XNNPACK_ROOT=/path/to/ios-arm64-prefix
#   cmake --build build/ios-arm64 --config Release --target edgebert_static
#
# CMAKE_OSX_DEPLOYMENT_TARGET: minimum iOS version (default 13.0).
# EDGEBERT_XNNPACK_ROOT: an install prefix (include/, lib/) holding XNNPACK, pthreadpool, utf8proc and
#   cpuinfo built for iOS arm64 by you, and the FlatBuffers headers (include/flatbuffers, e.g. from
#   Homebrew's flatbuffers of the same version as the flatc on your PATH).
# The static library is what apps link (App Store apps embed code as static libraries or
# frameworks); the command-line tools and tests are not meant for iOS (tests default to OFF).
set(CMAKE_SYSTEM_NAME iOS)
set(CMAKE_SYSTEM_PROCESSOR arm64)
set(CMAKE_OSX_ARCHITECTURES arm64 CACHE STRING "iOS architectures")
set(CMAKE_OSX_DEPLOYMENT_TARGET 13.0 CACHE STRING "Minimum iOS version")
# Executables would need code signing: configure checks build static libraries instead.
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)
if(NOT EDGEBERT_XNNPACK_ROOT AND DEFINED ENV{EDGEBERT_XNNPACK_ROOT})
  set(EDGEBERT_XNNPACK_ROOT "$ENV{EDGEBERT_XNNPACK_ROOT}")
endif()
set(EDGEBERT_XNNPACK_ROOT "${EDGEBERT_XNNPACK_ROOT}" CACHE PATH "Prefix with XNNPACK/pthreadpool/cpuinfo/utf8proc for iOS arm64")
set(EDGEBERT_BUILD_TESTS OFF CACHE BOOL "Build the Catch2 test suite")
# Look for target libraries and headers in the user's prefix (and the iOS SDK), programs (flatc,
# python3) on the host.
if(EDGEBERT_XNNPACK_ROOT)
  list(APPEND CMAKE_FIND_ROOT_PATH "${EDGEBERT_XNNPACK_ROOT}")
endif()
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)
