// SPDX-License-Identifier: Apache-2.0
// catch2/catch.hpp for Catch2 v3 (Debian 13 ships v3, Debian 12 v2): the test sources are
// written against v2's single header; this maps the few v2 names they use onto v3. It is on the
// include path only when CMake finds Catch2 3.x (tests/CMakeLists.txt).
#pragma once

#include <catch2/catch_all.hpp>

using Catch::Approx;

namespace Catch {
inline Matchers::StringContainsMatcher Contains(const std::string& s) { return Matchers::ContainsSubstring(s); }
}  // namespace Catch

#ifdef CATCH_CONFIG_MAIN
int main(int argc, char* argv[]) { return Catch::Session().run(argc, argv); }
#endif
