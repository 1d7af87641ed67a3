// SPDX-License-Identifier: Apache-2.0
// TestData: the reference cases of tests/reference/make_testdata.py (EDGEBERT_TESTDATA): inputs,
// numpy float64 golden outputs and converted models, plus the cosine metric.
import Foundation

enum TestData {
    static var dir: String { ProcessInfo.processInfo.environment["EDGEBERT_TESTDATA"] ?? "build/testdata" }

    static func ebm(_ model: String, _ kind: String) -> String { "\(dir)/ebm/\(model).\(kind).ebm" }

    static func ints(_ path: String) -> [Int32] {
        let text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
        return text.split(whereSeparator: { $0 == " " || $0 == "\n" }).compactMap { Int32($0) }
    }

    static func floats(_ path: String) -> [Float]? {
        guard let d = FileManager.default.contents(atPath: path) else { return nil }
        return d.withUnsafeBytes { raw in
            (0..<d.count / 4).map { Float(bitPattern: UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: $0 * 4, as: UInt32.self))) }
        }
    }

    struct Case {
        let ids, mask, types: [Int32]
        let hidden: [Float], pooled: [Float], logits: [Float]?

        init(_ model: String, _ name: String) {
            let d = "\(TestData.dir)/\(model)/cases/\(name)/"
            ids = TestData.ints(d + "ids.txt")
            mask = TestData.ints(d + "mask.txt")
            types = TestData.ints(d + "types.txt")
            hidden = TestData.floats(d + "last_hidden_state.f32") ?? []
            pooled = TestData.floats(d + "pooler_output.f32") ?? []
            logits = TestData.floats(d + "logits.f32")
        }
    }

    static func cosine(_ a: ArraySlice<Float>, _ b: ArraySlice<Float>) -> Double {
        var ab = 0.0, aa = 0.0, bb = 0.0
        for (x, y) in zip(a, b) {
            ab += Double(x) * Double(y)
            aa += Double(x) * Double(x)
            bb += Double(y) * Double(y)
        }
        return ab / (aa * bb).squareRoot()
    }
}
