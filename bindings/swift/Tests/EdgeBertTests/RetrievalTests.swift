// SPDX-License-Identifier: Apache-2.0
// RetrievalTests: maxSim (eb_maxsim) against numpy's float64 MaxSim of the reference token vectors
// (colbert_cases/maxsim.txt, tests/reference/colbert_numpy.py), the fp32 ColBERT model's token
// vectors against them, and Session.sparseTopK (eb_session_sparse_top_k) against the float64
// SPLADE goldens of the masked-LM models (same ids in order where entries are clearly apart,
// weights within 2e-3); bad arguments and models without the output throw.
import EdgeBert
import Foundation
import XCTest

final class RetrievalTests: XCTestCase {
    let dim = 24  // colbert_numpy.py's projection width
    var cases: String { "\(TestData.dir)/colbert_cases/" }

    func testMaxSimEqualsNumpy() throws {
        let table = try String(contentsOfFile: cases + "maxsim.txt", encoding: .utf8).split(separator: "\n")
        XCTAssertEqual(table.count, 16)
        for line in table {
            let f = line.split(separator: " ").map(String.init)
            let q = try XCTUnwrap(TestData.floats(cases + f[0] + ".f32"))
            let d = try XCTUnwrap(TestData.floats(cases + f[1] + ".f32"))
            let want = try XCTUnwrap(Double(f[2]))
            XCTAssertEqual(Double(try maxSim(q, d, dim: dim)), want, accuracy: 1e-6 * abs(want), String(line))
        }
    }

    func testTokenVectorsMatchTheReference() throws {
        let s = try Model(path: TestData.ebm("colbert", "fp32")).session()
        let want = try XCTUnwrap(TestData.floats(cases + "query.f32"))
        let got = try XCTUnwrap(try s.run(ids: TestData.ints(cases + "query.ids.txt"))[.tokenVectors]).values
        XCTAssertEqual(got.count, want.count)
        for (g, w) in zip(got, want) { XCTAssertEqual(g, w, accuracy: 2e-3) }
        XCTAssertEqual(try maxSim(got, got, dim: dim), Float(got.count / dim), accuracy: 1e-3)
        XCTAssertThrowsError(try s.sparseTopK(topK: 5)) { e in XCTAssertEqual((e as? EdgeBertError)?.status, .unsupported) }
    }

    func testMaxSimBadArguments() {
        let a = [Float](repeating: 0, count: 8)
        for (q, d, n) in [(a, [Float](repeating: 0, count: 6), 4), (a, [], 4), (a, a, 0), ([], a, 4)] {
            XCTAssertThrowsError(try maxSim(q, d, dim: n)) { e in XCTAssertEqual((e as? EdgeBertError)?.status, .invalidArgument) }
        }
    }

    func testSparseTopKMatchesTheGoldens() throws {
        for model in ["task_bert_mlm", "task_distil_mlm"] {
            for name in ["len7", "len20_types"] {
                let d = "\(TestData.dir)/\(model)/cases/\(name)/"
                let want = try XCTUnwrap(TestData.floats(d + "sparse_embedding.f32"))
                let order = want.indices.sorted { want[$0] > want[$1] }
                let what = "\(model) \(name)"
                let s = try Model(path: TestData.ebm(model, "fp32")).session()
                XCTAssertThrowsError(try s.sparseTopK(topK: 5)) { e in XCTAssertEqual((e as? EdgeBertError)?.status, .badState) }
                _ = try s.run(ids: TestData.ints(d + "ids.txt"), types: TestData.ints(d + "types.txt"),
                              mask: TestData.ints(d + "mask.txt"))
                let top = try s.sparseTopK(topK: 10)
                XCTAssertEqual(top.count, 10, what)
                for (r, e) in top.enumerated() {
                    XCTAssertEqual(e.weight, want[Int(e.tokenId)], accuracy: 2e-3, "\(what) rank \(r)")
                    let clear = want[order[r]] - want[order[r + 1]] > 4e-3 && (r == 0 || want[order[r - 1]] - want[order[r]] > 4e-3)
                    if clear { XCTAssertEqual(Int(e.tokenId), order[r], "\(what) rank \(r)") }
                    if r > 0 { XCTAssertGreaterThanOrEqual(top[r - 1].weight, e.weight, what) }
                }
                let threshold = want[order[3]] - 1e-2
                for e in try s.sparseTopK(threshold: threshold) { XCTAssertGreaterThan(e.weight, threshold, what) }
                XCTAssertThrowsError(try s.sparseTopK(index: -1)) { e in XCTAssertEqual((e as? EdgeBertError)?.status, .invalidArgument) }
            }
        }
    }

    func testFillMaskMatchesTheGoldens() throws {
        for model in ["task_bert_mlm", "task_distil_mlm"] {
            let d = "\(TestData.dir)/\(model)/cases/len7/"
            let ids = TestData.ints(d + "ids.txt")
            let want = try XCTUnwrap(TestData.floats(d + "fill_mask_probs.f32"))
            let vocab = want.count / ids.count
            let s = try Model(path: TestData.ebm(model, "fp32")).session()
            XCTAssertThrowsError(try s.fillMask(token: 0)) { e in XCTAssertEqual((e as? EdgeBertError)?.status, .badState) }
            _ = try s.run(ids: ids, types: TestData.ints(d + "types.txt"), mask: TestData.ints(d + "mask.txt"))
            for t in 0..<ids.count {
                let row = Array(want[(t * vocab)..<((t + 1) * vocab)])
                let order = row.indices.sorted { row[$0] > row[$1] || (row[$0] == row[$1] && $0 < $1) }
                let top = try s.fillMask(token: t, k: 5)
                XCTAssertEqual(top.count, 5, model)
                for (r, e) in top.enumerated() {
                    XCTAssertEqual(Int(e.tokenId), order[r], "\(model) token \(t) rank \(r)")
                    XCTAssertEqual(e.probability, row[Int(e.tokenId)], accuracy: 2e-3, "\(model) token \(t)")
                }
            }
            XCTAssertThrowsError(try s.fillMask(token: ids.count)) { e in XCTAssertEqual((e as? EdgeBertError)?.status, .invalidArgument) }
            XCTAssertThrowsError(try s.fillMask(token: 0, k: 0)) { e in XCTAssertEqual((e as? EdgeBertError)?.status, .invalidArgument) }
        }
    }
}
