// SPDX-License-Identifier: Apache-2.0
// RerankTests: Session.rerank (eb_session_rerank_top_k) on the one-label reference cross-encoders:
// fp32 scores within 2e-3 of the float64 goldens, best first (ties by index), each equal to a
// single run(text:pair:) logit through the model's score function; topK keeps the best k; a
// too-long passage throws with its index, or with statuses is left out; other models throw
// .unsupported; setTruncation / truncatedTokens give the HuggingFace truncation goldens.
import EdgeBert
import Foundation
import XCTest

final class RerankTests: XCTestCase {
    func golden(_ name: String) throws -> (String, [String], [Double]) {
        let d = "\(TestData.dir)/\(name)/rerank/"
        let query = try String(contentsOfFile: d + "query.txt", encoding: .utf8)
        let passages = try String(contentsOfFile: d + "passages.txt", encoding: .utf8)
            .split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
        let scores = try String(contentsOfFile: d + "scores.txt", encoding: .utf8).split(separator: "\n")
            .map { Double($0.split(separator: " ")[1])! }
        return (query, passages, scores)
    }

    func testRankingMatchesReference() throws {
        for name in ["task_bert_rerank", "task_bert_rerank_logit", "task_distil_rerank"] {
            let (query, passages, want) = try golden(name)
            XCTAssertEqual(passages.count, want.count)
            let sigmoid = name != "task_bert_rerank_logit"
            for kind in ["fp32", "int8"] {
                let what = "\(name) \(kind)"
                let m = try Model(path: TestData.ebm(name, kind))
                let s = try m.session(maxSequenceLength: 48, maxBatchTokens: 96)
                let ranking = try s.rerank(query, passages)
                XCTAssertEqual(ranking.map { $0.index }.sorted(), Array(0..<passages.count), what)
                for (a, b) in zip(ranking, ranking.dropFirst()) {
                    XCTAssertTrue(a.score > b.score || (a.score == b.score && a.index < b.index), what)
                }
                for r in ranking {
                    let logit = Double(try s.run(text: query, pair: passages[r.index])[.logits]!.values[0])
                    let single = sigmoid ? 1 / (1 + exp(-logit)) : logit
                    XCTAssertEqual(Double(r.score), single, accuracy: 1e-5, what)
                    if kind == "fp32" { XCTAssertEqual(Double(r.score), want[r.index], accuracy: 2e-3, what) }
                }
                XCTAssertEqual(try s.rerank(query, passages, topK: 3), Array(ranking.prefix(3)), what)
                XCTAssertEqual(try s.rerank(query, [], topK: 3), [], what)
            }
        }
    }

    func testFailuresAndRefusals() throws {
        let (query, all, _) = try golden("task_bert_rerank")
        var passages = Array(all.prefix(4))
        passages.insert(String(repeating: "good ", count: 60), at: 1)
        let s = try Model(path: TestData.ebm("task_bert_rerank", "int8")).session(maxSequenceLength: 48)
        XCTAssertThrowsError(try s.rerank(query, passages)) { e in
            XCTAssertEqual((e as? EdgeBertError)?.status, .sequenceTooLong)
            XCTAssertTrue("\(e)".contains("passages[1]"), "\(e)")
        }
        var statuses = [Status]()
        let ranking = try s.rerank(query, passages, statuses: &statuses)
        XCTAssertEqual(statuses, [.ok, .sequenceTooLong, .ok, .ok, .ok])
        XCTAssertEqual(ranking.map { $0.index }.sorted(), [0, 2, 3, 4])
        XCTAssertThrowsError(try s.rerank(query, passages, topK: -1))
        XCTAssertThrowsError(try s.rerank("nul\0", passages))
        let other = try Model(path: TestData.ebm("task_bert_seqcls_tanh", "fp32")).session()
        XCTAssertThrowsError(try other.rerank("q", ["p"])) { e in
            XCTAssertEqual((e as? EdgeBertError)?.status, .unsupported)
        }
    }

    func testTruncationMatchesGoldens() throws {
        let golden = try String(contentsOfFile: "\(TestData.dir)/task_bert_rerank/rerank/truncation.txt", encoding: .utf8)
        let m = try Model(path: TestData.ebm("task_bert_rerank", "fp32"))
        var sessions = [Int: Session]()
        var checked = 0
        for line in golden.split(separator: "\n") {
            let parts = line.split(separator: "|", omittingEmptySubsequences: false).map(String.init)
            let head = parts[0].split(separator: " ")
            let maxLen = Int(head[1])!, cut = Int(head[2])!
            let a = parts[1], b = parts[2]
            if sessions[maxLen] == nil { sessions[maxLen] = try m.session(maxSequenceLength: maxLen) }
            let s = sessions[maxLen]!
            try s.setTruncation(head[0] == "longest_first" ? .longestFirst : .onlySecond)
            let run = { () throws -> Void in
                if b.isEmpty { try s.run(text: a) } else { try s.run(text: a, pair: b) }
            }
            if cut < 0 {
                XCTAssertThrowsError(try run(), line.description)
                continue
            }
            try run()
            XCTAssertEqual(try s.inputIds(), parts[3].split(separator: " ").map { Int32($0)! }, line.description)
            XCTAssertEqual(try s.truncatedTokens(), cut, line.description)
            if cut > 0 { checked += 1 }
        }
        XCTAssertGreaterThanOrEqual(checked, 50)
        XCTAssertThrowsError(try sessions[9]!.truncatedTokens(4))
    }
}
