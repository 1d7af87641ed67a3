# SPDX-License-Identifier: Apache-2.0
# Shared part of the Debian cross toolchain files (aarch64-linux-gnu.cmake,
# arm-linux-gnueabihf.cmake). Expects EB_TRIPLE (GNU triple of the cross compiler) and
# EB_QEMU_ARCH (suffix of the qemu-user binary) to be set by the including file.

if(NOT EDGEBERT_SYSROOT AND DEFINED ENV{EDGEBERT_SYSROOT})
  set(EDGEBERT_SYSROOT "$ENV{EDGEBERT_SYSROOT}")
endif()
if(NOT EDGEBERT_SYSROOT)
  message(FATAL_ERROR "Set -DEDGEBERT_SYSROOT=DIR (made by scripts/arm/prepare_sysroot.sh) for ${EB_TRIPLE}")
endif()
get_filename_component(EDGEBERT_SYSROOT "${EDGEBERT_SYSROOT}" ABSOLUTE)
set(EDGEBERT_SYSROOT "${EDGEBERT_SYSROOT}" CACHE PATH "Folder with the target's XNNPACK/pthreadpool/cpuinfo")
# try_compile() projects re-read this file: pass the sysroot on to them.
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES EDGEBERT_SYSROOT)

set(CMAKE_C_COMPILER ${EB_TRIPLE}-gcc)
set(CMAKE_CXX_COMPILER ${EB_TRIPLE}-g++)

# Libraries and headers come only from the sysroot and the cross toolchain's own folder; programs
# (flatc, python3) only from the host. Packages are looked up in the sysroot first, then on the
# host (so -DCMAKE_PREFIX_PATH=INSTALL_DIR finds a cross-built edgebert installed anywhere).
set(CMAKE_FIND_ROOT_PATH "${EDGEBERT_SYSROOT};/usr/${EB_TRIPLE}")
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)

# pkg-config (PCRE2's libpcre2-8.pc) reads the sysroot's .pc files only, and prefixes their paths
# with the sysroot.
set(ENV{PKG_CONFIG_LIBDIR} "${EDGEBERT_SYSROOT}/usr/lib/${EB_TRIPLE}/pkgconfig:${EDGEBERT_SYSROOT}/usr/share/pkgconfig")
set(ENV{PKG_CONFIG_SYSROOT_DIR} "${EDGEBERT_SYSROOT}")

# The sysroot's shared libraries depend on each other (libXNNPACK.so.0 -> libcpuinfo.so.0): let the
# linker resolve those through the sysroot.
set(CMAKE_EXE_LINKER_FLAGS_INIT "-Wl,-rpath-link,${EDGEBERT_SYSROOT}/usr/lib/${EB_TRIPLE}")
set(CMAKE_SHARED_LINKER_FLAGS_INIT "-Wl,-rpath-link,${EDGEBERT_SYSROOT}/usr/lib/${EB_TRIPLE}")

find_program(EB_QEMU qemu-${EB_QEMU_ARCH})
if(EB_QEMU AND NOT CMAKE_CROSSCOMPILING_EMULATOR)
  set(CMAKE_CROSSCOMPILING_EMULATOR
      "${CMAKE_CURRENT_LIST_DIR}/../scripts/arm/qemu-run.sh;${EB_QEMU_ARCH};${EDGEBERT_SYSROOT}")
endif()
