# SPDX-License-Identifier: Apache-2.0
# Cross-compiling edgebert for 64-bit ARM Linux (aarch64) with Debian's cross compiler
# (apt-get install crossbuild-essential-arm64). See docs/cross-compiling.md.
#
#   scripts/arm/prepare_sysroot.sh build/arm-sysroot-arm64 arm64
#   cmake -S . -B build/arm-aarch64 -G Ninja -DCMAKE_BUILD_TYPE=Release \
#         -DCMAKE_TOOLCHAIN_FILE=toolchains/aarch64-linux-gnu.cmake \
#         -DEDGEBERT_SYSROOT=$PWD/build/arm-sysroot-arm64
#
# EDGEBERT_SYSROOT (or the environment variable of that name) is a folder laid out like / that
# holds the target's XNNPACK, pthreadpool and cpuinfo (usr/include, usr/lib/aarch64-linux-gnu)
# and the header-only FlatBuffers and Catch2; the C/C++ runtime comes from the cross toolchain
# (/usr/aarch64-linux-gnu). flatc and Python run on the host. When qemu-aarch64 (package
# qemu-user) is installed, it becomes CMAKE_CROSSCOMPILING_EMULATOR, so `ctest` runs the tests
# under emulation.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(EB_TRIPLE aarch64-linux-gnu)
set(EB_QEMU_ARCH aarch64)
include(${CMAKE_CURRENT_LIST_DIR}/debian-cross-common.cmake)
