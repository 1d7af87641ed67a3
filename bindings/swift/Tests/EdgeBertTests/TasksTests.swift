// SPDX-License-Identifier: Apache-2.0
// TasksTests: task outputs one call away: for each test model with a task head, its outputs and
// shapes, label names, and bestSpan() equal to a brute-force search over the start/end logits.
import EdgeBert
import Foundation
import XCTest

final class TasksTests: XCTestCase {
    func models(_ task: Task) throws -> [String] {
        let files = (try? FileManager.default.contentsOfDirectory(atPath: "\(TestData.dir)/ebm")) ?? []
        let found = try files.sorted().map { "\(TestData.dir)/ebm/\($0)" }.filter { try Model(path: $0).info.task == task }
        XCTAssertFalse(found.isEmpty, "no \(task) model in the test data")
        return found
    }

    func testOutputsOfEachTask() throws {
        let extra: [Task: Set<Output>] = [.sequenceClassification: [.logits], .questionAnswering: [.startLogits, .endLogits],
                                          .tokenClassification: [.tokenLogits], .sentenceEmbedding: [.sentenceEmbedding],
                                          .maskedLm: [.sparseEmbedding]]
        var seen = 0
        for (task, outputs) in extra {
            for path in try models(task) {
                let m = try Model(path: path)
                let info = try m.info
                let out = try m.session().run(text: "the food was fresh", pair: "and the staff was great")
                var expected = outputs.union([.lastHiddenState])
                if info.hasPooler { expected.insert(.poolerOutput) }
                XCTAssertEqual(Set(out.keys), expected, path)
                let n = out[.lastHiddenState]!.shape[0]
                if let t = out[.tokenLogits] { XCTAssertEqual(t.shape, [n, info.numLabels]) }
                if let t = out[.startLogits] { XCTAssertEqual(t.shape, [n]) }
                if let t = out[.sentenceEmbedding] { XCTAssertEqual(t.shape, [info.hiddenSize]) }
                XCTAssertEqual(try m.labels().count, info.numLabels)
                seen += 1
            }
        }
        XCTAssertGreaterThan(seen, 0)
    }

    func testLabelsAreTheCheckpointsId2Label() throws {
        XCTAssertEqual(try Model(path: TestData.ebm("task_bert_seqcls_tanh", "int8")).labels(), ["negative", "neutral", "positive"])
        XCTAssertEqual(try Model(path: TestData.ebm("task_bert_token", "fp32")).labels(), ["O", "B-PER", "I-PER", "B-LOC", "I-LOC"])
    }

    func caseText(_ model: String, _ c: String, _ file: String) throws -> String {
        try String(contentsOfFile: "\(TestData.dir)/\(model)/cases/\(c)/\(file)", encoding: .utf8)
    }

    func testOneCallHelpersMatchTheGoldens() throws {
        let text = try caseText("task_bert_token", "text", "text.txt")
        let tokens = try Model(path: TestData.ebm("task_bert_token", "fp32")).session().tokenLabels(text)
        let off = TestData.ints("\(TestData.dir)/task_bert_token/cases/text/offsets.txt")
        let logits = TestData.floats("\(TestData.dir)/task_bert_token/cases/text/token_logits.f32")!
        let names = ["O", "B-PER", "I-PER", "B-LOC", "I-LOC"]
        var want = [String]()
        for i in 0..<off.count / 3 where off[3 * i + 2] >= 0 {
            let row = logits[i * 5..<(i + 1) * 5]
            let best = row.indices.max { row[$0] < row[$1] }! - i * 5
            let b = Int(off[3 * i]), e = Int(off[3 * i + 1])
            want.append("\(b) \(e) \(String(decoding: Array(text.utf8)[b..<e], as: UTF8.self)) \(names[best])")
        }
        XCTAssertEqual(tokens.map { "\($0.begin) \($0.end) \($0.text) \($0.label)" }, want)
        let g = TestData.floats("\(TestData.dir)/task_bert_seqcls_tanh/cases/text/logits.f32")!
        let best = g.indices.max { g[$0] < g[$1] }!
        XCTAssertEqual(try Model(path: TestData.ebm("task_bert_seqcls_tanh", "fp32")).session()
                           .classify(try caseText("task_bert_seqcls_tanh", "text", "text.txt")), ["negative", "neutral", "positive"][best])
        let emb = try Model(path: TestData.ebm("task_st_mean_norm", "fp32")).session()
            .embed(try caseText("task_st_mean_norm", "text", "text.txt"))
        let want2 = TestData.floats("\(TestData.dir)/task_st_mean_norm/cases/text/sentence_embedding.f32")!
        XCTAssertLessThanOrEqual(zip(emb, want2).map { abs($0 - $1) }.max()!, 1e-3)
        let qa = try Model(path: TestData.ebm("task_bert_qa", "fp32")).session()
        let span = try qa.answer(question: try caseText("task_bert_qa", "text_pair", "text_a.txt"),
                                 context: try caseText("task_bert_qa", "text_pair", "text_b.txt"), maxAnswerTokens: 5)
        XCTAssertEqual(span.text, try caseText("task_bert_qa", "text_pair", "answer.txt"))
        expect(.unsupported, try qa.embed("x"))
    }

    func testBestSpanIsTheBruteForceBest() throws {
        let context = "She said the food at the restaurant was fresh and delicious, and the staff was great."
        for path in try models(.questionAnswering) {
            let s = try Model(path: path).session()
            let out = try s.run(text: "What was fresh?", pair: context)
            let start = out[.startLogits]!.values, end = out[.endLogits]!.values
            let o = try s.tokenOffsets()
            for limit in [30, 3, 1] {
                var best = (-Double.infinity, -1, -1)
                for i in 0..<start.count where o.segment[i] == 1 {
                    for j in i..<min(start.count, i + limit) where o.segment[j] == 1 && Double(start[i]) + Double(end[j]) > best.0 {
                        best = (Double(start[i]) + Double(end[j]), i, j)
                    }
                }
                let span = try s.bestSpan(maxAnswerTokens: limit)
                XCTAssertEqual(span.startToken, best.1)
                XCTAssertEqual(span.endToken, best.2)
                XCTAssertEqual(Double(span.score), best.0, accuracy: 1e-5)
                XCTAssertEqual(span.beginByte, Int(o.begin[best.1]))
                XCTAssertEqual(span.endByte, Int(o.end[best.2]))
                let bytes = Array(context.utf8)[span.beginByte..<span.endByte]
                XCTAssertEqual(span.text, String(decoding: bytes, as: UTF8.self))
            }
        }
    }
}
