// SPDX-License-Identifier: Apache-2.0
// The source of the test programs' shared precompiled header (tests/CMakeLists.txt,
// eb_catch_pch): CMake compiles the header from that target's list; this program has no tests.
