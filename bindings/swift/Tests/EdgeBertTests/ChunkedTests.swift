// SPDX-License-Identifier: Apache-2.0
// ChunkedTests: Session.embedChunked (eb_session_embed_chunked) against chunk_numpy.py's float64
// goldens (chunk/, tests/reference/chunk_numpy.py): the windows (HuggingFace's overflowing tokens
// with a stride) and each window's vector, one row per window or their token-weighted mean, on
// fp32 (within 2e-3) and int8 (cosine >= 0.99) models; .mean equals the token-weighted mean of the
// .none rows; String and UTF-8 byte texts; bad arguments, a model without sentence embeddings and
// a closed session throw EdgeBertError with the C status.
import EdgeBert
import Foundation
import XCTest

final class ChunkedTests: XCTestCase {
    let maxLen = 32, batchTokens = 64
    var dir: String { "\(TestData.dir)/chunk/" }

    // .mean from the .none rows: weights the windows' token counts (1 for an empty window), then
    // L2-normalized when the model normalizes (its reference mean has norm 1)
    func weightedMean(_ e: ChunkedEmbedding, reference: [Float]) -> [Double] {
        var m = [Double](repeating: 0, count: e.vectors[0].count)
        var total = 0.0
        for (row, chunk) in zip(e.vectors, e.chunks) {
            let weight = Double(max(chunk.tokens, 1))
            total += weight
            for i in m.indices { m[i] += weight * Double(row[i]) }
        }
        m = m.map { $0 / total }
        let norm = m.reduce(0) { $0 + $1 * $1 }.squareRoot()
        let refNorm = reference.reduce(0.0) { $0 + Double($1) * Double($1) }.squareRoot()
        return abs(refNorm - 1) < 1e-4 ? m.map { $0 / norm } : m
    }

    func testMatchesTheReference() throws {
        let table = try String(contentsOfFile: dir + "cases.txt", encoding: .utf8).split(separator: "\n")
        var checked = 0
        for line in table {
            let f = line.split(separator: " ").map(String.init)
            let (model, doc) = (f[0], f[1])
            let window = try XCTUnwrap(Int(f[2])), stride = try XCTUnwrap(Int(f[3])), windows = try XCTUnwrap(Int(f[4]))
            if doc == "long" && window != 24 { continue }  // as the Python test: one long case per model
            let stem = dir + "\(model).\(doc).\(window).\(stride)"
            let utf8 = [UInt8](try XCTUnwrap(FileManager.default.contents(atPath: dir + doc + ".txt")))
            let want = TestData.ints(stem + ".windows.txt").map { Int($0) }
            let golden = try XCTUnwrap(TestData.floats(stem + ".none.f32"))
            let goldenMean = try XCTUnwrap(TestData.floats(stem + ".mean.f32"))
            for kind in ["fp32", "int8"] {
                let what = "\(model) \(doc) \(window) \(stride) \(kind)"
                let s = try Model(path: TestData.ebm(model, kind)).session(maxSequenceLength: maxLen, maxBatchTokens: batchTokens)
                let none = try s.embedChunked(String(decoding: utf8, as: UTF8.self), window: window, stride: stride)
                XCTAssertEqual(none.chunks.count, windows, what)
                XCTAssertEqual(want.count, 4 * windows, what)
                for (w, c) in none.chunks.enumerated() {
                    XCTAssertEqual([c.firstToken, c.tokens, c.beginByte, c.endByte], Array(want[4 * w..<4 * w + 4]), "\(what) window \(w)")
                }
                let width = golden.count / windows
                XCTAssertEqual(none.vectors.count, windows, what)
                let mean = try s.embedChunked(utf8: utf8, window: window, stride: stride, pooling: .mean)  // bytes in
                XCTAssertEqual(mean.vectors.count, 1, what)
                XCTAssertEqual(mean.vectors[0].count, width, what)
                XCTAssertEqual(mean.chunks, none.chunks, what)
                for (w, row) in none.vectors.enumerated() {
                    XCTAssertEqual(row.count, width, what)
                    let ref = golden[w * width..<(w + 1) * width]
                    if kind == "fp32" {
                        for (g, r) in zip(row, ref) { XCTAssertEqual(g, r, accuracy: 2e-3, "\(what) window \(w)") }
                    } else {
                        XCTAssertGreaterThanOrEqual(TestData.cosine(row[...], ref), 0.99, "\(what) window \(w)")
                    }
                }
                if kind == "fp32" {
                    for (g, r) in zip(mean.vectors[0], goldenMean) { XCTAssertEqual(g, r, accuracy: 2e-3, "\(what) mean") }
                } else {
                    XCTAssertGreaterThanOrEqual(TestData.cosine(mean.vectors[0][...], goldenMean[...]), 0.99, "\(what) mean")
                }
                for (g, r) in zip(mean.vectors[0], weightedMean(none, reference: goldenMean)) {
                    XCTAssertEqual(Double(g), r, accuracy: 1e-5, "\(what) mean of the rows")
                }
                checked += 1
            }
        }
        XCTAssertEqual(checked, 2 * 2 * 4)  // 2 models x (long, short x 2, empty) x fp32 / int8
    }

    func testBadArguments() throws {
        let text = String(repeating: "the movie was good , not bad ! ", count: 20)
        let s = try Model(path: TestData.ebm("task_st_mean_norm", "int8")).session(maxSequenceLength: maxLen)
        expect(.invalidArgument, try s.embedChunked(text, window: 8, stride: 8))  // stride >= window
        expect(.invalidArgument, try s.embedChunked(text, window: 8, stride: 9, pooling: .mean))
        expect(.invalidArgument, try s.embedChunked(text, window: 0, stride: 0))
        expect(.invalidArgument, try s.embedChunked(text, window: 8, stride: -1))
        expect(.invalidArgument, try s.embedChunked(text, window: 1 << 40, stride: 2))
        expect(.sequenceTooLong, try s.embedChunked(text, window: 31, stride: 2))  // 31 + [CLS] [SEP] > 32
        expect(.invalidArgument, try s.embedChunked("the \0 movie", window: 8, stride: 2))
        expect(.invalidArgument, try s.embedChunked(utf8: [0xff] + Array(" the movie".utf8), window: 8, stride: 2))
        // the session still works, and an empty text is one window without tokens
        let empty = try s.embedChunked(utf8: [], window: 8, stride: 2)
        XCTAssertEqual(empty.chunks.map { [$0.firstToken, $0.tokens, $0.beginByte, $0.endByte] }, [[0, 0, 0, 0]])
        s.close()
        expect(.badState, try s.embedChunked(text, window: 8, stride: 2))
        let qa = try Model(path: TestData.ebm("task_bert_qa", "int8")).session(maxSequenceLength: maxLen)
        expect(.unsupported, try qa.embedChunked(text, window: 8, stride: 2))
    }
}
