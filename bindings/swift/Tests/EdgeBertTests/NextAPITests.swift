// SPDX-License-Identifier: Apache-2.0
// NextAPITests: the C functions of edgebert.h's 9bf212a contracts through the Swift API, against
// their documented behaviour: the weight cache file (written, then mapped, a damaged one rebuilt,
// an unwritable path harmless, outputs identical; UNAVAILABLE with a reason on XNNPACK 2022, where
// the model holds no packed weights), model memory, words and word ids against BERT's basic
// tokenization, and answer() over windows of a long context. Each test is skipped while the
// loaded libedgebert lacks the function (declared before its implementation lands).
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import EdgeBert
import Foundation
import XCTest

struct MissingFunction: Error { let name: String }

final class NextAPITests: XCTestCase {
    static let model = TestData.ebm("h128_4x32", "int8")
    static let ids: [Int32] = [101, 160, 140, 487, 476, 470, 102]
    static let text = "the quick brown fox, jumped over 12 lazy dogs!"
    static let question = "What was fresh?"
    static let sentence = "She said the food at the restaurant was fresh and delicious, and the staff was great. "

    func require(_ names: String...) throws {
        let process = dlopen(nil, RTLD_NOW)
        for name in names where dlsym(process, name) == nil {
            XCTFail("libedgebert lacks \(name)")
            throw MissingFunction(name: name)
        }
    }

    func hidden(_ m: Model) throws -> [Float] {
        try m.session().run(ids: NextAPITests.ids)[.lastHiddenState]!.values
    }

    func testWeightCacheFile() throws {
        try require("eb_model_load_file_with_options", "eb_model_get_weight_cache", "eb_model_get_memory")
        let dir = NSTemporaryDirectory() + "edgebert-swift-\(getpid())"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let cache = dir + "/h128.ebwc"
        let plain = try Model(path: NextAPITests.model)
        let want = try hidden(plain)
        XCTAssertEqual(try plain.weightCache.state, .none)
        XCTAssertEqual(try plain.memory().modelFile,
                       (try FileManager.default.attributesOfItem(atPath: NextAPITests.model)[.size] as! NSNumber).intValue)
        let api = try plain.memory().packedWeights > 0
        let first = try Model(path: NextAPITests.model, weightCachePath: cache)
        let created = try first.weightCache
        XCTAssertEqual(created.state, api ? .created : .unavailable, created.message)
        XCTAssertEqual(try hidden(first), want)
        first.close()
        guard api else { return }
        let second = try Model(path: NextAPITests.model, weightCachePath: cache)
        let loaded = try second.weightCache
        XCTAssertEqual(loaded.state, .loaded, loaded.message)
        XCTAssertEqual(try hidden(second), want)
        second.close()
        let data = try Data(contentsOf: URL(fileURLWithPath: cache))
        try data.prefix(data.count / 2).write(to: URL(fileURLWithPath: cache))  // truncated
        let rebuilt = try Model(data: try Data(contentsOf: URL(fileURLWithPath: NextAPITests.model)), weightCachePath: cache)
        XCTAssertEqual(try rebuilt.weightCache.state, .created)
        XCTAssertFalse(try rebuilt.weightCache.message.isEmpty)
        XCTAssertEqual(try hidden(rebuilt), want)
        let blocker = dir + "/a_file"
        FileManager.default.createFile(atPath: blocker, contents: Data([1]))
        let unwritable = try Model(path: NextAPITests.model, weightCachePath: blocker + "/c.ebwc")
        XCTAssertEqual(try unwritable.weightCache.state, .unavailable)
        XCTAssertEqual(try hidden(unwritable), want)
    }

    func testWordsFollowBasicTokenization() throws {
        try require("eb_session_get_word_ids", "eb_session_get_words")
        let m = try Model(path: TestData.ebm("task_bert_token", "int8"))
        let s = try m.session()
        let text = NextAPITests.text
        let logits = try s.run(text: text)[.tokenLogits]!
        let regex = try NSRegularExpression(pattern: "[A-Za-z0-9]+|[^\\sA-Za-z0-9]")
        let ref = regex.matches(in: text, range: NSRange(text.startIndex..., in: text)).map { $0.range }
        let words = try s.words(), wordIds = try s.wordIds(), offsets = try s.tokenOffsets()
        XCTAssertEqual(words.count, ref.count)
        XCTAssertEqual(wordIds.count, offsets.begin.count)
        let labels = logits.shape[1]
        for (index, (w, r)) in zip(words, ref).enumerated() {
            XCTAssertEqual(w.segment, 0)
            XCTAssertEqual(w.beginByte, r.location)  // ASCII: bytes = UTF-16 units
            XCTAssertEqual(w.endByte, r.location + r.length)
            XCTAssertEqual(w.text, (text as NSString).substring(with: r))
            let tokens = (0..<offsets.begin.count).filter {
                offsets.segment[$0] == 0 && w.beginByte <= Int(offsets.begin[$0]) && Int(offsets.end[$0]) <= w.endByte
            }
            XCTAssertEqual(tokens, Array(w.firstToken...w.lastToken))
            XCTAssertTrue(tokens.allSatisfy { wordIds[$0] == Int32(index) })
            let row = logits.values[(w.firstToken * labels)..<((w.firstToken + 1) * labels)]
            XCTAssertEqual(w.label, try m.label(row.firstIndex(of: row.max()!)! - w.firstToken * labels))
        }
        for t in 0..<offsets.begin.count {
            XCTAssertEqual(offsets.segment[t] == -1, wordIds[t] == -1)
        }
        try s.run(ids: [101, 102])
        XCTAssertThrowsError(try s.words()) { XCTAssertEqual(($0 as? EdgeBertError)?.status, .badState) }
    }

    func testAnswerOverWindowsOfALongContext() throws {
        try require("eb_session_answer")
        let m = try Model(path: TestData.ebm("task_bert_qa", "int8"))
        let q = NextAPITests.question, one = NextAPITests.sentence
        let full = try m.session()
        let fits = try full.answer(question: q, context: one, maxAnswerTokens: 15)
        try full.run(text: q, pair: one)
        let pair = try full.bestSpan(maxAnswerTokens: 15)
        XCTAssertEqual(fits.windows, 1)
        XCTAssertEqual([fits.startToken, fits.endToken, fits.beginByte, fits.endByte],
                       [pair.startToken, pair.endToken, pair.beginByte, pair.endByte])
        let context = String(repeating: one, count: 6)
        let count = { (t: String) -> Int in try full.run(text: t); return try full.inputIds().count - 2 }
        let nq = try count(q), nc = try count(context)
        let maxLen = 48
        let s = try m.session(maxSequenceLength: maxLen)
        XCTAssertThrowsError(try s.run(text: q, pair: context)) {
            XCTAssertEqual(($0 as? EdgeBertError)?.status, .sequenceTooLong)
        }
        for stride in [-1, 4, 8] {
            let span = try s.answer(question: q, context: context, maxAnswerTokens: 10, docStride: stride)
            let window = maxLen - nq - 3
            let overlap = stride < 0 ? min(128, window / 2) : stride
            let expected = 1 + (nc - window + (window - overlap) - 1) / (window - overlap)
            XCTAssertEqual(span.windows, expected, "stride \(stride)")
            let bytes = Array(context.utf8)
            XCTAssertTrue(0 <= span.beginByte && span.beginByte < span.endByte && span.endByte <= bytes.count)
            XCTAssertEqual(span.text, String(decoding: bytes[span.beginByte..<span.endByte], as: UTF8.self))
            XCTAssertLessThan(span.endToken - span.startToken, 10)
        }
    }
}
