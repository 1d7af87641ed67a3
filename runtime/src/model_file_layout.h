// SPDX-License-Identifier: Apache-2.0
// model_file_layout.h: the byte-layout limits of an .ebm file, shared by the converter that writes
// it and the loader that checks it: payloads are 64-byte aligned, and a FlatBuffer holds at most
// FlatBuffers' 2 GiB (32-bit offsets), rounded down to that alignment; a bigger model keeps its
// payloads after the FlatBuffer (schema_version 7, docs/converter.md).
#pragma once

#include <flatbuffers/base.h>

#include <cstddef>

namespace edgebert {

constexpr size_t kPayloadAlignment = 64;
constexpr size_t kMaxFlatBuffer =
    (static_cast<size_t>(FLATBUFFERS_MAX_BUFFER_SIZE) - 1) / kPayloadAlignment * kPayloadAlignment;

}  // namespace edgebert
