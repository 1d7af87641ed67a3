# SPDX-License-Identifier: Apache-2.0
# Cross-compiling edgebert for 32-bit ARM Linux (ARMv7-A with NEON, hard-float: Cortex-A7/A9/A15
# boards, Raspberry Pi 2 and later in 32-bit mode) with Debian's cross compiler
# (apt-get install crossbuild-essential-armhf). See docs/cross-compiling.md.
#
#   scripts/arm/prepare_sysroot.sh build/arm-sysroot-armhf armhf
#   cmake -S . -B build/arm-armv7 -G Ninja -DCMAKE_BUILD_TYPE=Release \
#         -DCMAKE_TOOLCHAIN_FILE=toolchains/arm-linux-gnueabihf.cmake \
#         -DEDGEBERT_SYSROOT=$PWD/build/arm-sysroot-armhf
#
# Debian's armhf baseline is ARMv7 with VFPv3-D16 and no NEON; this file adds -mfpu=neon (our
# code may then use NEON everywhere; XNNPACK picks its own NEON kernels at run time either way).
# The int8 attention/LUT kernels have NEON versions for aarch64 only: on armv7 the portable C++
# kernels run (auto-vectorized for NEON where GCC can). With qemu-arm installed, ctest runs the
# tests under emulation (scripts/arm/qemu-run.sh).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR armv7-a)
set(EB_TRIPLE arm-linux-gnueabihf)
set(EB_QEMU_ARCH arm)
set(CMAKE_C_FLAGS_INIT "-march=armv7-a -mfpu=neon -mfloat-abi=hard")
set(CMAKE_CXX_FLAGS_INIT "-march=armv7-a -mfpu=neon -mfloat-abi=hard -Wno-psabi")  # no notes about a GCC 7.1 ABI change
include(${CMAKE_CURRENT_LIST_DIR}/debian-cross-common.cmake)
