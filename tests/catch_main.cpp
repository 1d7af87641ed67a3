// SPDX-License-Identifier: Apache-2.0
// Catch2 main for every test executable (compiled once, linked into each).
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
