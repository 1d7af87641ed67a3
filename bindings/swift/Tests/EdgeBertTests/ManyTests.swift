// SPDX-License-Identifier: Apache-2.0
// ManyTests: Session.embedMany / classifyMany (packed runs): every row equals a single run of that
// input (run(text:) / run(text:pair:), then its output) within 1e-5, over texts that need several
// packed runs (an empty text, one of exactly the session maximum, one too long that fails alone:
// an error naming it, or a status and a zero row); the golden cases' rows match the numpy goldens;
// bad inputs and closed sessions throw EdgeBertError.
import EdgeBert
import Foundation
import XCTest

final class ManyTests: XCTestCase {
    let maxLen = 32, batchTokens = 64
    let models = ["task_st_mean_norm", "task_bert_seqcls_tanh", "task_distil_seqcls_relu", "task_bert_model_relu"]

    // 2 ("") to 32 tokens (30 one-token words + [CLS] + [SEP]) and one of 42 (too long).
    var texts: [String] {
        ["the movie was good , not bad !", "", "who", "the staff was rude and slow .",
         String(repeating: "the ", count: 30), String(repeating: "good ", count: 40), "a b"]
            + (0..<6).map { "the hotel was clean , but the staff was rude \($0)" }
    }

    func pairs(_ n: Int) -> [String] { (0..<n).map { ["yes", "no , it was not", "maybe so", ""][$0 % 4] } }

    func outputOf(_ m: Model) throws -> Output {
        let info = try m.info
        if info.task == .sentenceEmbedding { return .sentenceEmbedding }
        return info.task == .sequenceClassification ? .logits : .poolerOutput
    }

    func many(_ s: Session, _ which: Output, _ a: [String], _ b: [String]?) throws -> [[Float]] {
        which == .logits ? try s.classifyMany(a, pairs: b) : try s.embedMany(a, pairs: b)
    }

    func many(_ s: Session, _ which: Output, _ a: [String], _ b: [String]?, _ statuses: inout [Status]) throws -> [[Float]] {
        which == .logits ? try s.classifyMany(a, pairs: b, statuses: &statuses)
                         : try s.embedMany(a, pairs: b, statuses: &statuses)
    }

    func testManyEqualsSingleRuns() throws {
        let texts = self.texts
        for name in models {
            for kind in ["int8", "fp32"] {
                let m = try Model(path: TestData.ebm(name, kind))
                let packed = try m.session(maxSequenceLength: maxLen, maxBatchTokens: batchTokens)
                let alone = try m.session(maxSequenceLength: maxLen)
                let which = try outputOf(m)
                for paired in [false, true] {
                    let what = "\(name) \(kind) \(paired ? "pairs" : "texts")"
                    let b = paired ? pairs(texts.count) : nil
                    var statuses = [Status]()
                    let got = try many(packed, which, texts, b, &statuses)
                    XCTAssertEqual(got.count, texts.count, what)
                    XCTAssertEqual(statuses.count, texts.count, what)
                    var tokens = 0
                    var failed = [Int]()
                    for i in texts.indices {
                        var single = Status.ok
                        var want: [Float] = []
                        do {
                            let out = paired ? try alone.run(text: texts[i], pair: b![i]) : try alone.run(text: texts[i])
                            want = out[which]!.values
                            tokens += try alone.inputIds().count
                        } catch let e as EdgeBertError {
                            single = e.status
                        }
                        XCTAssertEqual(statuses[i], single, "\(what) input \(i)")
                        if single != .ok {
                            XCTAssertEqual(single, .sequenceTooLong, "\(what) input \(i)")
                            XCTAssertTrue(got[i].allSatisfy { $0 == 0 }, "\(what) input \(i): a zero row")
                            failed.append(i)
                            continue
                        }
                        XCTAssertEqual(got[i].count, want.count, what)
                        for (x, y) in zip(got[i], want) {
                            XCTAssertEqual(x, y, accuracy: 1e-5 * max(1, abs(y)), "\(what) input \(i)")
                        }
                    }
                    XCTAssertGreaterThan(tokens, 2 * batchTokens, "\(what): several packed runs")
                    XCTAssertEqual(failed, paired ? [4, 5] : [5], what)
                    // without statuses: the first too-long input throws, naming it
                    XCTAssertThrowsError(try many(packed, which, texts, b)) { error in
                        let e = error as! EdgeBertError
                        XCTAssertEqual(e.status, .sequenceTooLong, what)
                        XCTAssertTrue(e.message.hasPrefix("texts[\(failed.first ?? -1)]"), e.message)
                    }
                }
            }
        }
    }

    func caseText(_ model: String, _ c: String, _ file: String) throws -> String {
        try String(contentsOfFile: "\(TestData.dir)/\(model)/cases/\(c)/\(file)", encoding: .utf8)
    }

    func testManyMatchesTheNumpyGoldens() throws {
        for name in models {
            for kind in ["fp32", "int8"] {
                let m = try Model(path: TestData.ebm(name, kind))
                let s = try m.session(maxBatchTokens: 256)
                let which = try outputOf(m)
                var checked = 0
                for c in ["text", "text_pair"] {
                    guard let want = TestData.floats("\(TestData.dir)/\(name)/cases/\(c)/\(which.key).f32") else { continue }
                    let got = c == "text"
                        ? try many(s, which, ["who", try caseText(name, c, "text.txt"), "a b"], nil)
                        : try many(s, which, ["who", try caseText(name, c, "text_a.txt"), "a b"],
                                   ["c", try caseText(name, c, "text_b.txt"), "d"])
                    XCTAssertEqual(got.count, 3)
                    if kind == "fp32" {
                        XCTAssertLessThanOrEqual(zip(got[1], want).map { abs($0 - $1) }.max() ?? 1, 1e-3, "\(name) \(c)")
                    } else {
                        XCTAssertGreaterThanOrEqual(TestData.cosine(got[1][...], want[...]), 0.99, "\(name) \(c)")
                    }
                    checked += 1
                }
                XCTAssertGreaterThanOrEqual(checked, 1, "no golden \(which.key) for \(name)")
            }
        }
    }

    func expect(_ status: Status, _ body: () throws -> Void, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertThrowsError(try body(), file: file, line: line) { error in
            XCTAssertEqual((error as? EdgeBertError)?.status, status, "\(error)", file: file, line: line)
        }
    }

    func testBadInputsAndClosedSessionsThrow() throws {
        let m = try Model(path: TestData.ebm("task_bert_seqcls_tanh", "int8"))
        let s = try m.session(maxBatchTokens: 256)
        expect(.invalidArgument) { _ = try s.classifyMany(["ok", "nul\0inside"]) }
        expect(.invalidArgument) { _ = try s.classifyMany(["a", "b"], pairs: ["c"]) }
        XCTAssertThrowsError(try s.classifyMany(["a"], pairs: ["x\0"])) { error in
            XCTAssertTrue((error as! EdgeBertError).message.contains("pairs[0]"))
        }
        XCTAssertEqual(try s.classifyMany([]).count, 0)
        XCTAssertEqual(try s.embedMany([], pairs: []).count, 0)  // BERT classifiers have a pooler
        XCTAssertEqual(try s.classifyMany(["a"])[0].count, try m.info.numLabels)
        s.close()
        expect(.badState) { _ = try s.classifyMany(["a"]) }
        expect(.badState) { _ = try s.classifyMany([]) }
        expect(.badState) { _ = try s.embedMany(["a"]) }
        let st = try Model(path: TestData.ebm("task_st_mean_norm", "int8")).session()
        expect(.unsupported) { _ = try st.classifyMany(["a"]) }
        let distil = try Model(path: TestData.ebm("task_distil_seqcls_relu", "int8")).session()
        expect(.unsupported) { _ = try distil.embedMany(["a"]) }
        let enc = try Model(path: TestData.ebm("task_bert_model_relu", "int8"))
        expect(.invalidArgument) { _ = try enc.session(maxSequenceLength: self.maxLen, maxBatchTokens: self.maxLen - 1) }
        expect(.invalidArgument) { _ = try enc.session(maxBatchTokens: -1) }
    }

    // classify is eb_session_classify_many of one text (its label index), tokenLabels
    // eb_session_get_token_labels: both the argmax of a single run's logits.
    func testClassifyAndTokenLabelsComeFromTheLibrary() throws {
        func argmax(_ v: ArraySlice<Float>) -> Int {
            var best = v.startIndex
            for i in v.indices where v[i] > v[best] { best = i }
            return best - v.startIndex
        }
        let texts = self.texts
        for kind in ["int8", "fp32"] {
            let m = try Model(path: TestData.ebm("task_bert_seqcls_tanh", kind))
            let s = try m.session(maxSequenceLength: maxLen, maxBatchTokens: batchTokens)
            var statuses = [Status]()
            let logits = try s.classifyMany(texts, statuses: &statuses)
            for i in texts.indices {
                if statuses[i] != .ok {
                    XCTAssertThrowsError(try s.classify(texts[i])) { error in
                        let e = error as! EdgeBertError
                        XCTAssertEqual(e.status, .sequenceTooLong)
                        XCTAssertTrue(e.message.contains("the session maximum is \(self.maxLen)"), e.message)
                    }
                    continue
                }
                XCTAssertEqual(try s.classify(texts[i]), try m.label(argmax(logits[i][...])), "\(kind) \(i)")
            }
            XCTAssertThrowsError(try s.classifyMany(texts, pairs: pairs(texts.count))) { error in
                XCTAssertTrue((error as! EdgeBertError).message.hasPrefix("texts[4], pairs[4]: "), "\(error)")
            }
            let tm = try Model(path: TestData.ebm("task_bert_token", kind))
            let t = try tm.session()
            let text = "the staff was rude and slow ."
            let got = try t.tokenLabels(text)
            let out = try t.run(text: text)[.tokenLogits]!
            let n = out.shape[1]
            let o = try t.tokenOffsets()
            let want = try o.segment.indices.filter { o.segment[$0] >= 0 }.map { try tm.label(argmax(out.values[$0 * n..<($0 + 1) * n])) }
            XCTAssertGreaterThan(want.count, 3)
            XCTAssertEqual(got.map { $0.label }, want, kind)
            expect(.unsupported) { _ = try s.tokenLabels(text) }
        }
    }
}
