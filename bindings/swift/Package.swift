// swift-tools-version:5.9
// SPDX-License-Identifier: Apache-2.0
// EdgeBert: Swift bindings over edgebert's C API (edgebert.h), for iOS/macOS apps and Linux.
// The C library is found through EDGEBERT_BUILD_DIR (a CMake build folder holding libedgebert.so;
// the header then comes from this checkout) or else through pkg-config (edgebert.pc of an
// installed edgebert). For iOS apps use the XCFramework of scripts/ios/build_xcframework.sh.
import PackageDescription

let buildDir = Context.environment["EDGEBERT_BUILD_DIR"]
var linker: [LinkerSetting] = []
if let dir = buildDir {
    // Unsafe flags are fine for this root package (tests, local use); dependents use pkg-config.
    linker = [.unsafeFlags(["-L\(dir)", "-Xlinker", "-rpath", "-Xlinker", dir])]
}

let package = Package(
    name: "EdgeBert",
    products: [.library(name: "EdgeBert", targets: ["EdgeBert"])],
    targets: [
        .systemLibrary(name: "CEdgeBert", path: "Sources/CEdgeBert",
                       pkgConfig: buildDir == nil ? "edgebert" : nil),
        .target(name: "EdgeBert", dependencies: ["CEdgeBert"], linkerSettings: linker),
        .testTarget(name: "EdgeBertTests", dependencies: ["EdgeBert"], linkerSettings: linker),
    ]
)
