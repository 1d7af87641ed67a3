# SPDX-License-Identifier: Apache-2.0
# Shared body of toolchains/android-ABI.cmake (which set ANDROID_ABI first, then include this):
# finds the NDK, sets edgebert's Android defaults and includes the NDK's own toolchain file. See
# toolchains/android-arm64.cmake for the variables.
if(NOT ANDROID_NDK)
  foreach(var ANDROID_NDK ANDROID_NDK_HOME ANDROID_NDK_ROOT)
    if(DEFINED ENV{${var}})
      set(ANDROID_NDK "$ENV{${var}}")
      break()
    endif()
  endforeach()
endif()
if(NOT ANDROID_NDK OR NOT EXISTS "${ANDROID_NDK}/build/cmake/android.toolchain.cmake")
  message(FATAL_ERROR "Set ANDROID_NDK (-DANDROID_NDK=... or the environment) to an Android NDK (r23+)")
endif()
set(ANDROID_NDK "${ANDROID_NDK}" CACHE PATH "Android NDK")
set(ANDROID_PLATFORM android-24 CACHE STRING "Minimum Android API level")
set(ANDROID_STL c++_static CACHE STRING "C++ runtime")
if(NOT EDGEBERT_XNNPACK_ROOT AND DEFINED ENV{EDGEBERT_XNNPACK_ROOT})
  set(EDGEBERT_XNNPACK_ROOT "$ENV{EDGEBERT_XNNPACK_ROOT}")
endif()
set(EDGEBERT_XNNPACK_ROOT "${EDGEBERT_XNNPACK_ROOT}" CACHE PATH "Prefix with XNNPACK/pthreadpool/cpuinfo/utf8proc for ${ANDROID_ABI}")
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES ANDROID_NDK EDGEBERT_XNNPACK_ROOT)
set(EDGEBERT_BUILD_TESTS OFF CACHE BOOL "Build the Catch2 test suite")

include("${ANDROID_NDK}/build/cmake/android.toolchain.cmake")

# The NDK searches libraries and headers only inside its sysroot and CMAKE_FIND_ROOT_PATH: add the
# user's prefix there (CMAKE_PREFIX_PATH alone would not be searched).
if(EDGEBERT_XNNPACK_ROOT)
  list(APPEND CMAKE_FIND_ROOT_PATH "${EDGEBERT_XNNPACK_ROOT}")
endif()
