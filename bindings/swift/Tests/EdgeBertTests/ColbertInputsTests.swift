// SPDX-License-Identifier: Apache-2.0
// ColbertInputsTests: ColBERT queries and documents as PyLate encodes them: Session.setColbertInput
// (eb_session_set_colbert_input) and Session.tokenVectors (eb_session_get_token_vectors) on the
// PyLate test model (tests/reference/colbert_numpy.py: query marker [unused0] = 1, document marker
// [unused1] = 2, query_length 12 with [MASK] expansion attended by no token, document_length 16,
// the ASCII punctuation as skiplist). A query's ids and its rows (all of them, bitwise
// `.tokenVectors`', equal to a run of its ids with the expansion masked); a document's ids and its
// rows without the skiplist's; packed queries and documents (Session.runTexts) equal to single
// runs; PyLate's truncation; and the errors (an invalid mode cannot be written in Swift).
import EdgeBert
import Foundation
import XCTest

final class ColbertInputsTests: XCTestCase {
    let cls: Int32 = 101, sep: Int32 = 102, mask: Int32 = 103
    let queryMarker: Int32 = 1, documentMarker: Int32 = 2  // [unused0], [unused1]
    let queryLength = 12, documentLength = 16, dim = 24
    let query = "the movie was good"
    let document = "the movie , was good !"
    var documents: [String] { [document, "a long film ( and boring ) ?", "the staff was rude ~ and slow"] }  // "~": [UNK]
    var queries: [String] { [query, "is it a fun story ?"] }
    let long = "the movie was good and the story was great but the ending was bad so i think it is fine and funny"
    let punctuation = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"  // Python's string.punctuation

    func plainIds(_ s: Session, _ text: String) throws -> [Int32] {
        try s.setColbertInput(.plain)
        try s.run(text: text)
        return try s.inputIds()
    }

    // The ids of PyLate's default skiplist, each character as the model's tokenizer gives it alone
    // (one outside the vocabulary: [UNK]).
    func skipIds(_ s: Session) throws -> Set<Int32> {
        var ids = Set<Int32>()
        for p in punctuation {
            let got = try plainIds(s, String(p))
            XCTAssertTrue(got.count == 3 && got[0] == cls && got[2] == sep, "\(p): \(got)")
            if got.count == 3 { ids.insert(got[1]) }
        }
        return ids
    }

    func bits(_ v: [Float]) -> [UInt32] { v.map(\.bitPattern) }

    // int8: bitwise; fp32: within 1e-5
    func assertRowsEqual(_ kind: String, _ want: [Float], _ got: [Float], _ what: String,
                         file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(want.count, got.count, what, file: file, line: line)
        if kind == "int8" {
            XCTAssertEqual(bits(want), bits(got), what, file: file, line: line)
        } else {
            for (i, (w, g)) in zip(want, got).enumerated() {
                XCTAssertEqual(w, g, accuracy: 1e-5 + 1e-5 * abs(w), "\(what) element \(i)", file: file, line: line)
            }
        }
    }

    func testQueryIsMarkedAndExpanded() throws {
        for kind in ["int8", "fp32"] {
            let m = try Model(path: TestData.ebm("colbert", kind))
            let s = try m.session()
            XCTAssertEqual(try m.info.numLabels, dim)
            let plain = try plainIds(s, query)
            let words = Array(plain.dropFirst().dropLast())
            XCTAssertTrue(plain.first == cls && plain.last == sep && words.count == 4, "\(plain)")
            try s.setColbertInput(.query)
            let out = try s.run(text: query)
            let ids = try s.inputIds()
            let expansion = queryLength - words.count - 3
            XCTAssertEqual(ids, [cls, queryMarker] + words + [sep] + [Int32](repeating: mask, count: expansion), kind)
            let got = try s.tokenVectors(index: 0)
            XCTAssertEqual(got.shape, [queryLength, dim], kind)
            XCTAssertEqual(out[.tokenVectors]?.shape, [queryLength, dim], kind)
            XCTAssertEqual(bits(got.values), bits(out[.tokenVectors]?.values ?? []), kind)
            XCTAssertEqual(bits(try s.tokenVectors().values), bits(got.values), kind)
            try s.setColbertInput(.plain)  // keeps the last run's outputs
            XCTAssertEqual(bits(try s.tokenVectors(index: 0).values), bits(got.values), kind)
            // the expansion is attended by no token (attend_to_expansion_tokens false): a run of
            // the same ids with mask 0 there
            let masked = [Int32](repeating: 1, count: queryLength - expansion) + [Int32](repeating: 0, count: expansion)
            let byIds = try s.run(ids: ids, mask: masked)[.tokenVectors]?.values ?? []
            assertRowsEqual(kind, got.values, byIds, "\(kind) query by ids")
            try s.run(text: query)
            XCTAssertEqual(try s.inputIds(), plain, kind)
            XCTAssertEqual(try s.tokenVectors().shape, [plain.count, dim], kind)
        }
    }

    func testDocumentLeavesOutTheSkiplist() throws {
        for kind in ["int8", "fp32"] {
            let m = try Model(path: TestData.ebm("colbert", kind))
            let s = try m.session()
            let skip = try skipIds(s)
            XCTAssertTrue(skip.isDisjoint(with: [cls, sep, documentMarker]), "\(skip)")
            let plain = try plainIds(s, document)
            let words = Array(plain.dropFirst().dropLast())
            XCTAssertEqual(words.count, 6, kind)
            try s.setColbertInput(.document)
            let out = try s.run(text: document)
            let ids = try s.inputIds()
            XCTAssertEqual(ids, [cls, documentMarker] + words + [sep], kind)
            let all = try XCTUnwrap(out[.tokenVectors])
            XCTAssertEqual(all.shape, [ids.count, dim], kind)  // the output keeps every row
            let kept = ids.indices.filter { !skip.contains(ids[$0]) }
            XCTAssertEqual(kept.count, ids.count - 2, kind)  // without "," and "!"
            let want = kept.flatMap { all.values[($0 * dim)..<(($0 + 1) * dim)] }
            let got = try s.tokenVectors(index: 0)
            XCTAssertEqual(got.shape, [ids.count - 2, dim], kind)
            XCTAssertEqual(bits(got.values), bits(want), kind)
        }
    }

    func testPackedRunsEqualSingleRuns() throws {
        for kind in ["int8", "fp32"] {
            let m = try Model(path: TestData.ebm("colbert", kind))
            let s = try m.session()
            let skip = try skipIds(s)
            for (mode, texts) in [(ColbertInput.document, documents), (.query, queries)] {
                try s.setColbertInput(mode)
                var single: [Tensor] = []
                for t in texts {
                    try s.run(text: t)
                    let ids = try s.inputIds()
                    single.append(try s.tokenVectors(index: 0))
                    let rows = mode == .document ? ids.filter { !skip.contains($0) }.count : queryLength
                    XCTAssertEqual(single.last?.shape, [rows, dim], "\(kind) \(mode) \(t) \(ids)")
                }
                XCTAssertEqual(try s.runTexts(texts), [Status](repeating: .ok, count: texts.count), "\(kind) \(mode)")
                for (k, want) in single.enumerated() {
                    let got = try s.tokenVectors(index: k)
                    XCTAssertEqual(got.shape, want.shape, "\(kind) \(mode) \(k)")
                    assertRowsEqual(kind, want.values, got.values, "\(kind) \(mode) \(k)")
                }
                expect(.invalidArgument, try s.tokenVectors(index: texts.count))
                if mode == .document {  // "~" is [UNK], in the skiplist
                    XCTAssertEqual(single[2].shape.first, documents[2].split(separator: " ").count + 3 - 1, kind)
                }
            }
        }
    }

    func testTruncationAsPylate() throws {
        let s = try Model(path: TestData.ebm("colbert", "int8")).session()
        let words = Array(try plainIds(s, long).dropFirst().dropLast())
        XCTAssertEqual(words.count, long.split(separator: " ").count)
        for (mode, marker, limit) in [(ColbertInput.query, queryMarker, queryLength), (.document, documentMarker, documentLength)] {
            try s.setColbertInput(mode)
            try s.setTruncation(.none)
            expect(.sequenceTooLong, try s.run(text: long))
            try s.setTruncation(.longestFirst)
            try s.run(text: long)
            XCTAssertEqual(try s.inputIds(), [cls, marker] + words.prefix(limit - 3) + [sep], "\(mode)")
            XCTAssertEqual(try s.tokenVectors().shape, [limit, dim], "\(mode)")  // no punctuation, no expansion
        }
    }

    func testErrors() throws {
        let other = try Model(path: TestData.ebm("task_st_mean_norm", "int8")).session()  // no PyLate conventions
        expect(.unsupported, try other.setColbertInput(.query))
        expect(.unsupported, try other.setColbertInput(.document))
        try other.setColbertInput(.plain)
        try other.run(text: query)
        expect(.unsupported, try other.tokenVectors())  // no token vectors

        let m = try Model(path: TestData.ebm("colbert", "int8"))
        let shorter = try m.session(maxSequenceLength: queryLength - 1)
        expect(.invalidArgument, try shorter.setColbertInput(.query))  // query_length beyond the maximum
        try shorter.setColbertInput(.document)
        let s = try m.session()
        expect(.badState, try s.tokenVectors())  // no run yet
        XCTAssertNil(ColbertInput(rawValue: 3))  // no other value can be passed
        XCTAssertEqual([ColbertInput.plain, .query, .document].map(\.rawValue), [0, 1, 2])
        for mode in [ColbertInput.query, .document] {
            try s.setColbertInput(mode)
            expect(.invalidArgument, try s.run(text: query, pair: document))
        }
        try s.setColbertInput(.query)
        try s.run(text: query)
        for index in [1, -1, Int.max] { expect(.invalidArgument, try s.tokenVectors(index: index)) }
        expect(.invalidArgument, try s.runTexts([]))
        expect(.invalidArgument, try s.runTexts(["a\0b"]))
        XCTAssertEqual(try s.tokenVectors().shape, [queryLength, dim])  // still the last run's
        s.close()
        expect(.badState, try s.setColbertInput(.plain))
        expect(.badState, try s.setColbertInput(.query))
        expect(.badState, try s.tokenVectors())
        expect(.badState, try s.runTexts([query]))
    }

    /// poolTokenVectors against PyLate's hierarchical pooling run with scipy.
    func testPoolTokenVectorsEqualsPylate() throws {
        for (name, factor) in [("centres_17_f2", 2), ("random_42_f4", 4), ("duplicates_f2", 2), ("text_doc_long_f2", 2)] {
            let base = "\(TestData.dir)/colbert_cases/\(name)"
            let rows = try XCTUnwrap(TestData.floats(base + ".pool_in.f32"))
            let want = try XCTUnwrap(TestData.floats(base + ".pool_out.f32"))
            let got = try poolTokenVectors(rows, dim: dim, poolFactor: factor)
            XCTAssertEqual(got.count, want.count, name)
            XCTAssertLessThan(zip(got, want).map { abs(Double($0) - Double($1)) }.max() ?? 1, 1e-6, name)
            XCTAssertEqual(Array(got.suffix(dim)), Array(rows.prefix(dim)), name)
            XCTAssertEqual(try poolTokenVectors(rows, dim: dim, poolFactor: 1), rows)
            var bad = rows
            bad[7] = .nan
            expect(.invalidArgument, try poolTokenVectors(bad, dim: dim, poolFactor: factor))
            expect(.invalidArgument, try poolTokenVectors(rows, dim: dim, poolFactor: 0))
            expect(.invalidArgument, try poolTokenVectors(rows, dim: dim + 1, poolFactor: factor))
        }
    }
}
