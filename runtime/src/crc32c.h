// SPDX-License-Identifier: Apache-2.0
// crc32c.h: CRC32C (Castagnoli, reflected, as in iSCSI / ext4), the weight cache file's per-entry
// payload checksum, on the fastest path the CPU has (chosen once, at run time): on x86-64 with
// AVX-512 and VPCLMULQDQ, carry-less multiplication folds 256 bytes per step; with SSE4.2, the
// crc32 instruction on three independent streams (so its latency is hidden); the ARMv8 CRC
// extension when compiled for it; elsewhere a portable table (slicing by 8). All give the same
// value (tests/unit/test_weight_cache.cpp checks each path the CPU has against a bitwise one).
#pragma once

#include <cstddef>
#include <cstdint>

namespace edgebert {

// CRC32C of [data, data + size), continuing from `crc` (0 for a new range; crc32c(b, crc32c(a))
// is the CRC of a followed by b). Chooses the fastest path this CPU has (checked once, at run time).
uint32_t crc32c(const void* data, size_t size, uint32_t crc = 0);
// Whether crc32c uses a CPU instruction here (for messages and measurements).
bool crc32c_hardware();
// Which path crc32c takes here (for ranges of 256 bytes or more): "vpclmulqdq folding (AVX-512)",
// "crc32 instruction (SSE4.2)", "crc32 instruction (ARMv8)" or "table".
const char* crc32c_path();

// Each path by itself, for tests: false (and *out untouched) when this CPU or build lacks it.
enum class Crc32cPath { kTable, kInstruction, kFold512 };
bool crc32c_with(Crc32cPath path, const void* data, size_t size, uint32_t crc, uint32_t* out);

}  // namespace edgebert
