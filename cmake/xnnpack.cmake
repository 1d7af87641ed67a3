# SPDX-License-Identifier: Apache-2.0
# cmake/xnnpack.cmake: where XNNPACK (with pthreadpool and cpuinfo) comes from, and which of its
# two API generations the header offers. Sets XNNPACK_INCLUDE_DIR, XNNPACK_LIBRARY,
# PTHREADPOOL_LIBRARY, CPUINFO_LIBRARY (paths or targets) and EDGEBERT_XNN_API (2022 or 2024,
# also a compile definition), and what the weight cache needs: EDGEBERT_XNN_HAS_WEIGHTS_CACHE (our
# own xnn_weights_cache_provider can be passed to operators), EDGEBERT_XNN_HAS_BUILD_IDENTIFIER
# and the provider/key fields later XNNPACK versions added.
#   2022: Debian 12's 0.0~git20220216: xnn_create_* + xnn_setup_*, per-channel int8 GEMMs as
#         qc8 1x1 convolutions.
#   2024: Debian 13's 0.0~git20241108 and upstream: xnn_create_* + xnn_reshape_* + xnn_setup_*,
#         fully-connected qs8_qc8w (and qd8_f32_qc8w; qd8_f32_qc4w / qb4w for int4 weights).
# The generation is detected by compiling against xnnpack.h, never guessed from a version.

set(EDGEBERT_XNNPACK_SOURCE_DIR "" CACHE PATH
    "Build XNNPACK from this source tree as a subproject (Android/iOS) instead of using the system's")
if(EDGEBERT_XNNPACK_SOURCE_DIR)
  # Upstream XNNPACK builds its own pthreadpool and cpuinfo (and fp16, fxdiv, ...): it downloads
  # them unless PTHREADPOOL_SOURCE_DIR, CPUINFO_SOURCE_DIR, FP16_SOURCE_DIR, FXDIV_SOURCE_DIR
  # (XNNPACK's own variables) name local copies. See docs/cross-compiling.md.
  set(XNNPACK_BUILD_TESTS OFF CACHE BOOL "" FORCE)
  set(XNNPACK_BUILD_BENCHMARKS OFF CACHE BOOL "" FORCE)
  set(XNNPACK_BUILD_ALL_MICROKERNELS OFF CACHE BOOL "" FORCE)  # production kernels only
  set(XNNPACK_LIBRARY_TYPE static CACHE STRING "" FORCE)
  set(EB_SAVED_PIC ${CMAKE_POSITION_INDEPENDENT_CODE})
  # XNNPACK is not -Wextra clean: do not pass edgebert's warning flags down to it.
  get_directory_property(eb_saved_options COMPILE_OPTIONS)
  set(eb_options ${eb_saved_options})
  list(REMOVE_ITEM eb_options -Wall -Wextra)
  set_directory_properties(PROPERTIES COMPILE_OPTIONS "${eb_options}")
  add_subdirectory(${EDGEBERT_XNNPACK_SOURCE_DIR} ${CMAKE_BINARY_DIR}/xnnpack EXCLUDE_FROM_ALL)
  set_directory_properties(PROPERTIES COMPILE_OPTIONS "${eb_saved_options}")
  set(CMAKE_POSITION_INDEPENDENT_CODE ${EB_SAVED_PIC})
  set(XNNPACK_INCLUDE_DIR ${EDGEBERT_XNNPACK_SOURCE_DIR}/include)
  set(XNNPACK_LIBRARY XNNPACK)
  set(PTHREADPOOL_LIBRARY pthreadpool)
  set(CPUINFO_LIBRARY cpuinfo)
  set(EB_XNN_CHECK_INCLUDES ${XNNPACK_INCLUDE_DIR})
  if(TARGET pthreadpool)
    get_target_property(eb_pp_inc pthreadpool INTERFACE_INCLUDE_DIRECTORIES)
    list(APPEND EB_XNN_CHECK_INCLUDES ${eb_pp_inc})
  endif()
else()
  find_path(XNNPACK_INCLUDE_DIR xnnpack.h REQUIRED)
  find_library(XNNPACK_LIBRARY XNNPACK REQUIRED)
  find_library(PTHREADPOOL_LIBRARY pthreadpool REQUIRED)
  find_library(CPUINFO_LIBRARY cpuinfo REQUIRED)
  set(EB_XNN_CHECK_INCLUDES ${XNNPACK_INCLUDE_DIR})
endif()

# Compile-only probes (a static library, nothing linked), so they also work before a subproject
# XNNPACK is built and in cross builds.
include(CheckCXXSourceCompiles)
set(CMAKE_REQUIRED_INCLUDES ${EB_XNN_CHECK_INCLUDES})
set(CMAKE_REQUIRED_QUIET ON)
set(EB_SAVED_TRY_TYPE ${CMAKE_TRY_COMPILE_TARGET_TYPE})
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)
check_cxx_source_compiles([[
#include <xnnpack.h>
int probe() {
  auto create = &xnn_create_fully_connected_nc_qs8_qc8w;
  auto reshape = &xnn_reshape_fully_connected_nc_qs8_qc8w;
  auto setup = &xnn_setup_fully_connected_nc_qs8_qc8w;
  return create != nullptr && reshape != nullptr && setup != nullptr;
}
int main() { return probe(); }
]] EDGEBERT_XNN_HAS_RESHAPE_QS8_QC8W)
check_cxx_source_compiles([[
#include <xnnpack.h>
int probe() {
  auto create = &xnn_create_convolution2d_nhwc_qc8;
  auto setup = &xnn_setup_convolution2d_nhwc_qc8;
  return create != nullptr && setup != nullptr;
}
int main() { return probe(); }
]] EDGEBERT_XNN_HAS_CONV_QC8)
check_cxx_source_compiles([[
#include <xnnpack.h>
int probe() {
  auto create = &xnn_create_fully_connected_nc_qd8_f32_qc8w;
  auto quantize = &xnn_create_convert_nc_f32_qd8;
  return create != nullptr && quantize != nullptr;
}
int main() { return probe(); }
]] EDGEBERT_XNN_HAS_QD8_F32_QC8W)
# int4 weights with dynamically quantized int8 input and float output, channel-wise (qc4w,
# 2023-09+) and block-wise with bf16 block scales (qb4w, 2024-06+): reshape + setup taking
# per-row quantization parameters, as qd8_f32_qc8w.
check_cxx_source_compiles([[
#include <xnnpack.h>
#include <cstdint>
int probe() {
  auto c4 = &xnn_create_fully_connected_nc_qd8_f32_qc4w;
  auto r4 = &xnn_reshape_fully_connected_nc_qd8_f32_qc4w;
  auto s4 = &xnn_setup_fully_connected_nc_qd8_f32_qc4w;
  enum xnn_status (*cb)(size_t, size_t, size_t, size_t, size_t, uint8_t, const uint16_t*, const void*, const float*,
                        float, float, uint32_t, xnn_code_cache_t, xnn_weights_cache_t, xnn_operator_t*) =
      &xnn_create_fully_connected_nc_qd8_f32_qb4w;
  auto rb = &xnn_reshape_fully_connected_nc_qd8_f32_qb4w;
  auto sb = &xnn_setup_fully_connected_nc_qd8_f32_qb4w;
  return c4 != nullptr && r4 != nullptr && s4 != nullptr && cb != nullptr && rb != nullptr && sb != nullptr;
}
int main() { return probe(); }
]] EDGEBERT_XNN_HAS_QD8_F32_QB4W)
# The weights-cache provider (2024-01+): operators ask it for packed weights (look_up,
# reserve_space, look_up_or_insert, is_finalized, offset_to_addr, delete_cache), so packed weights
# can be shared and mapped from a file (runtime/src/backend/packed_weights.h).
check_cxx_source_compiles([[
#include <xnnpack.h>
static size_t look_up(void*, const xnn_weights_cache_look_up_key* k) { return k->seed + (k->kernel != k->bias); }
int probe() {
  xnn_weights_cache_provider p{};
  p.look_up = look_up;
  xnn_weights_cache_t cache = &p;
  auto create = &xnn_create_fully_connected_nc_qs8_qc8w;
  return cache->reserve_space != nullptr || cache->look_up_or_insert != nullptr || cache->is_finalized != nullptr ||
         cache->offset_to_addr != nullptr || cache->delete_cache != nullptr || create == nullptr;
}
int main() { return probe(); }
]] EDGEBERT_XNN_HAS_WEIGHTS_CACHE_PROVIDER)
check_cxx_source_compiles([[
#include <xnnpack.h>
int probe() {
  const void* data = xnn_experimental_get_build_identifier_data();
  return data != nullptr && xnn_experimental_get_build_identifier_size() > 0;
}
int main() { return probe(); }
]] EDGEBERT_XNN_HAS_BUILD_IDENTIFIER)
# Fields upstream added later (the structs are zero-initialised, so they only need to be known).
check_cxx_source_compiles([[
#include <xnnpack.h>
#include <cstdint>
// an integer we can compare next to the seed (anything else is left alone)
int main() { xnn_weights_cache_look_up_key k{}; return static_cast<int>(static_cast<uint64_t>(k.fingerprint_id)); }
]] EDGEBERT_XNN_CACHE_KEY_HAS_FINGERPRINT)
check_cxx_source_compiles([[
#include <xnnpack.h>
int main() { xnn_weights_cache_provider p{}; return static_cast<int>(sizeof(p.alias_data)); }
]] EDGEBERT_XNN_CACHE_PROVIDER_HAS_ALIAS_DATA)
set(CMAKE_TRY_COMPILE_TARGET_TYPE ${EB_SAVED_TRY_TYPE})
unset(CMAKE_REQUIRED_INCLUDES)
unset(CMAKE_REQUIRED_QUIET)

if(EDGEBERT_XNN_HAS_RESHAPE_QS8_QC8W)
  set(EDGEBERT_XNN_API 2024)
elseif(EDGEBERT_XNN_HAS_CONV_QC8)
  set(EDGEBERT_XNN_API 2022)
else()
  message(FATAL_ERROR "xnnpack.h in ${XNNPACK_INCLUDE_DIR} offers neither fully_connected_nc_qs8_qc8w with "
                      "reshape (XNNPACK 2023+) nor convolution2d_nhwc_qc8 (2022): unsupported XNNPACK API")
endif()
add_compile_definitions(EDGEBERT_XNN_API=${EDGEBERT_XNN_API})
if(EDGEBERT_XNN_HAS_QD8_F32_QC8W)
  add_compile_definitions(EDGEBERT_XNN_HAS_QD8=1)
endif()
if(EDGEBERT_XNN_HAS_QD8_F32_QC8W AND EDGEBERT_XNN_HAS_QD8_F32_QB4W)
  add_compile_definitions(EDGEBERT_XNN_HAS_QD8_INT4=1)
endif()
# Block-wise int4 files: their float-output GEMMs as qd8_f32_qb4w (int4 packed weights: BERT-base's
# 88.0 -> 72.5 MB) instead of requantized to int8 (0.63x the tokens/s on 1 thread on AVX512-VNNI
# with Debian 13's XNNPACK; docs/int4.md). Off: speed first. Only where XNNPACK has qb4w.
option(EDGEBERT_XNN_QB4W "Run block-wise int4 GEMMs with float output as qd8_f32_qb4w (less memory, slower on x86)" OFF)
if(EDGEBERT_XNN_QB4W)
  add_compile_definitions(EDGEBERT_XNN_USE_QB4W=1)
endif()
if(EDGEBERT_XNN_API EQUAL 2024 AND EDGEBERT_XNN_HAS_WEIGHTS_CACHE_PROVIDER)
  add_compile_definitions(EDGEBERT_XNN_HAS_WEIGHTS_CACHE=1)
  set(eb_cache_note "weights-cache provider: yes")
else()
  set(eb_cache_note "weights-cache provider: no (sessions pack their own weights)")
endif()
if(EDGEBERT_XNN_HAS_BUILD_IDENTIFIER)
  add_compile_definitions(EDGEBERT_XNN_HAS_BUILD_IDENTIFIER=1)
  string(APPEND eb_cache_note ", build identifier: yes")
endif()
if(EDGEBERT_XNN_CACHE_KEY_HAS_FINGERPRINT)
  add_compile_definitions(EDGEBERT_XNN_CACHE_KEY_HAS_FINGERPRINT=1)
  string(APPEND eb_cache_note ", key fingerprint_id")
endif()
if(EDGEBERT_XNN_CACHE_PROVIDER_HAS_ALIAS_DATA)
  add_compile_definitions(EDGEBERT_XNN_CACHE_PROVIDER_HAS_ALIAS_DATA=1)
  string(APPEND eb_cache_note ", provider alias_data")
endif()
if(EDGEBERT_XNN_HAS_QD8_F32_QC8W AND EDGEBERT_XNN_HAS_QD8_F32_QB4W)
  string(APPEND eb_cache_note ", int4 GEMMs (qd8_f32_qc4w / qb4w): yes")
else()
  string(APPEND eb_cache_note ", int4 GEMMs: no (int4 weights become int8 at load)")
endif()
message(STATUS "XNNPACK API generation: ${EDGEBERT_XNN_API} (${XNNPACK_INCLUDE_DIR}); ${eb_cache_note}")
