// SPDX-License-Identifier: Apache-2.0
// OutputsTests: every output against the numpy float64 goldens (fp32 within 1e-3, int8 per-token
// cosine >= 0.99), text runs equal to their ids, loading from Data, two sessions on two threads.
import EdgeBert
import Foundation
import XCTest

final class OutputsTests: XCTestCase {
    let cases = ["len1", "len7", "lenmax", "len7_pad", "len20_types"]

    func check(_ modelName: String, _ kind: String) throws {
        let model = try Model(path: TestData.ebm(modelName, kind))
        let info = try model.info
        XCTAssertEqual(info.isInt8, kind == "int8")
        let s = try model.session(threads: 2)
        let h = info.hiddenSize
        for name in cases {
            let c = TestData.Case(modelName, name)
            let out = try s.run(ids: c.ids, types: c.types, mask: c.mask)
            var expected: Set<Output> = [.lastHiddenState]
            if info.hasPooler { expected.insert(.poolerOutput) }
            if c.logits != nil { expected.insert(.logits) }
            XCTAssertEqual(Set(out.keys), expected, name)
            let hidden = out[.lastHiddenState]!
            XCTAssertEqual(hidden.shape, [c.ids.count, h])
            XCTAssertEqual(try s.inputIds(), c.ids)
            for t in 0..<c.ids.count where c.mask[t] == 1 {
                let got = hidden.values[t * h..<(t + 1) * h], want = c.hidden[t * h..<(t + 1) * h]
                if kind == "fp32" {
                    XCTAssertLessThanOrEqual(zip(got, want).map { abs($0 - $1) }.max()!, 1e-3, "\(name) token \(t)")
                } else {
                    XCTAssertGreaterThanOrEqual(TestData.cosine(got, want), 0.99, "\(name) token \(t)")
                }
            }
            if let pooled = out[.poolerOutput] {
                XCTAssertEqual(pooled.shape, [h])
                XCTAssertGreaterThanOrEqual(TestData.cosine(pooled.values[...], c.pooled[...]), kind == "fp32" ? 0.99999 : 0.99)
            }
            if let logits = out[.logits], let want = c.logits, kind == "fp32" {
                XCTAssertEqual(logits.shape, [info.numLabels])
                XCTAssertLessThanOrEqual(zip(logits.values, want).map { abs($0 - $1) }.max()!, 1e-3)
            }
            for (which, tensor) in out { XCTAssertEqual(try s.output(which), tensor) }
        }
    }

    func testFp32MatchesReference() throws {
        for m in ["h128_4x32", "h192_3x64", "tiny_f16"] { try check(m, "fp32") }
    }

    func testInt8StaysCloseToReference() throws {
        for m in ["h128_4x32", "h192_3x64", "tiny_f16", "base2_h12"] { try check(m, "int8") }
    }

    func testModelFromDataEqualsModelFromPath() throws {
        let path = TestData.ebm("h128_4x32", "int8")
        let a = try Model(path: path)
        let b = try Model(data: try Data(contentsOf: URL(fileURLWithPath: path)))
        XCTAssertEqual(try a.info, try b.info)
        let c = TestData.Case("h128_4x32", "len20_types")
        XCTAssertEqual(try a.session().run(ids: c.ids, types: c.types), try b.session().run(ids: c.ids, types: c.types))
    }

    func testTextEqualsItsIds() throws {
        let s = try Model(path: TestData.ebm("h128_4x32", "int8")).session()
        let out = try s.run(text: "The movie was really good, and the acting was great!")
        let ids = try s.inputIds()
        XCTAssertEqual(ids.first, 101)
        XCTAssertEqual(ids.last, 102)
        XCTAssertEqual(out[.lastHiddenState]!.shape[0], ids.count)
        XCTAssertEqual(try s.run(ids: ids), out)
    }

    func testTextPairEqualsItsIdsAndTypes() throws {
        let s = try Model(path: TestData.ebm("h128_4x32", "int8")).session()
        try s.run(text: "the movie was good")
        let a = try s.inputIds()
        try s.run(text: "the food was fresh")
        let b = try s.inputIds()
        let out = try s.run(text: "the movie was good", pair: "the food was fresh")
        let ids = try s.inputIds()
        XCTAssertEqual(ids, a + b.dropFirst())
        let types = [Int32](repeating: 0, count: a.count) + [Int32](repeating: 1, count: b.count - 1)
        XCTAssertEqual(try s.run(ids: ids, types: types), out)
    }

    func testTokenOffsetsPointIntoTheTexts() throws {
        let vocab = try String(contentsOfFile: "\(TestData.dir)/h128_4x32/vocab.txt", encoding: .utf8)
            .split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let a = "The movie was really good, and the acting was great!", b = "She said the food was fresh."
        let s = try Model(path: TestData.ebm("h128_4x32", "int8")).session()
        try s.run(text: a, pair: b)
        let ids = try s.inputIds(), o = try s.tokenOffsets()
        XCTAssertEqual(o.begin.count, ids.count)
        let texts = [Array(a.utf8), Array(b.utf8)]
        for (i, id) in ids.enumerated() {
            if id == 101 || id == 102 {
                XCTAssertEqual(o.segment[i], -1)
                continue
            }
            let piece = vocab[Int(id)]
            let written = String(decoding: texts[Int(o.segment[i])][Int(o.begin[i])..<Int(o.end[i])], as: UTF8.self)
            XCTAssertEqual(written.lowercased(), piece.hasPrefix("##") ? String(piece.dropFirst(2)) : piece)
        }
        XCTAssertEqual(o.segment.filter { $0 == -1 }.count, 3)
        try s.run(ids: [101, 102])
        expect(.badState, try s.tokenOffsets())
    }

    func testTwoSessionsOnTwoThreadsShareAModel() throws {
        let model = try Model(path: TestData.ebm("base2_h12", "int8"))
        let cases = [TestData.Case("base2_h12", "len20_types"), TestData.Case("base2_h12", "len7_pad")]
        let alone = try model.session()
        let expected = try cases.map { try alone.run(ids: $0.ids, types: $0.types, mask: $0.mask)[.lastHiddenState]! }
        alone.close()
        var results = [[Tensor]](repeating: [], count: 2)
        var failures = [String]()
        let lock = NSLock()
        DispatchQueue.concurrentPerform(iterations: 2) { k in
            do {
                let s = try model.session()
                var runs = [Tensor]()
                for _ in 0..<6 {
                    runs.append(try s.run(ids: cases[k].ids, types: cases[k].types, mask: cases[k].mask)[.lastHiddenState]!)
                }
                lock.lock(); results[k] = runs; lock.unlock()
            } catch {
                lock.lock(); failures.append("\(error)"); lock.unlock()
            }
        }
        XCTAssertEqual(failures, [])
        for k in 0..<2 {
            XCTAssertEqual(results[k].count, 6)
            for r in results[k] { XCTAssertEqual(r, expected[k]) }
            for t in 0..<cases[k].ids.count where cases[k].mask[t] == 1 {
                XCTAssertGreaterThanOrEqual(TestData.cosine(results[k][0].values[t * 768..<(t + 1) * 768],
                                                            cases[k].hidden[t * 768..<(t + 1) * 768]), 0.99)
            }
        }
    }
}
