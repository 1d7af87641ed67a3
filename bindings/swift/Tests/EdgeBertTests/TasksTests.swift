// TasksTests: task outputs one call away: for each test model with a task head, its outputs and
// shapes, label names, and bestSpan() equal to a brute-force search over the start/end logits.
// Skipped while no task model exists in the test data.
import EdgeBert
import Foundation
import XCTest

final class TasksTests: XCTestCase {
    func models(_ task: Task) throws -> [String] {
        let files = (try? FileManager.default.contentsOfDirectory(atPath: "\(TestData.dir)/ebm")) ?? []
        let found = try files.sorted().map { "\(TestData.dir)/ebm/\($0)" }.filter { try Model(path: $0).info.task == task }
        if found.isEmpty { throw XCTSkip("no \(task) model in the test data (comes with branch tasks)") }
        return found
    }

    func testOutputsOfEachTask() throws {
        let extra: [Task: Set<Output>] = [.sequenceClassification: [.logits], .questionAnswering: [.startLogits, .endLogits],
                                          .tokenClassification: [.tokenLogits], .sentenceEmbedding: [.sentenceEmbedding]]
        var seen = 0
        for (task, outputs) in extra {
            for path in (try? models(task)) ?? [] {
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
        if seen == 0 { throw XCTSkip("no task models in the test data (comes with branch tasks)") }
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
