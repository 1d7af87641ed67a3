// SPDX-License-Identifier: Apache-2.0
// PromptsTests: Session.setPrompt / embed(_:prompt:) / setEmbeddingDims on the EmbeddingGemma-
// shaped test model (gemma3_st_dense: prompts "query", "document"): a prompt run has the ids and
// the embedding of the run on prompt + text, differs from the plain run, is per call with
// embed(_:prompt:), holds in embedMany; dims truncate and re-normalize; unknown prompts and dims
// throw .invalidArgument.
import EdgeBert
import Foundation
import XCTest

final class PromptsTests: XCTestCase {
    let query = "task: search result | query: "
    let text = "Which planet is known as the Red Planet?"

    func testPromptsAndDims() throws {
        let s = try Model(path: TestData.ebm("gemma3_st_dense", "fp32")).session(maxSequenceLength: 96)
        let plain = try s.embed(text)
        try s.setPrompt("query")
        let prompted = try s.embed(text)
        let ids = try s.inputIds()
        try s.setPrompt(nil)
        let joined = try s.embed(query + text)
        XCTAssertEqual(try s.inputIds(), ids)
        for (a, b) in zip(joined, prompted) { XCTAssertEqual(a, b, accuracy: 1e-6) }
        XCTAssertNotEqual(plain, prompted)
        XCTAssertEqual(try s.embed(text, prompt: "query"), prompted)
        XCTAssertEqual(try s.embed(text), plain)  // embed(_:prompt:) is for that call only
        try s.setPrompt("query")
        let many = try s.embedMany([text, "Mars is red."])
        for (a, b) in zip(many[0], prompted) { XCTAssertEqual(a, b, accuracy: 1e-5) }
        try s.setEmbeddingDims(16)
        let short = try s.embed(text)
        XCTAssertEqual(short.count, 16)
        let norm = sqrt(prompted.prefix(16).reduce(0.0) { $0 + Double($1) * Double($1) })
        for i in 0..<16 { XCTAssertEqual(Double(short[i]), Double(prompted[i]) / norm, accuracy: 1e-5) }
        XCTAssertEqual(try s.embedMany([text])[0].count, 16)
        XCTAssertThrowsError(try s.setPrompt("passage")) { e in
            XCTAssertEqual((e as? EdgeBertError)?.status, .invalidArgument)
            XCTAssertTrue("\(e)".contains("query") && "\(e)".contains("document"), "\(e)")
        }
        XCTAssertThrowsError(try s.setEmbeddingDims(65))
        XCTAssertThrowsError(try s.setPrompt("query\u{0}junk")) { e in  // not a silent "query"
            XCTAssertEqual((e as? EdgeBertError)?.status, .invalidArgument)
        }
    }

    // embed(_:prompt:) is one call: a plain embed on another thread never sees its prompt
    func testPerCallPromptAcrossThreads() throws {
        let s = try Model(path: TestData.ebm("gemma3_st_dense", "int8")).session(maxSequenceLength: 96)
        let plain = try s.embed(text), prompted = try s.embed(text, prompt: "query")
        XCTAssertNotEqual(plain, prompted)
        let wrong = NSLock()
        var mismatches = 0
        DispatchQueue.concurrentPerform(iterations: 2) { worker in
            for _ in 0..<40 {
                let got = worker == 0 ? try? s.embed(text) : try? s.embed(text, prompt: "query")
                if got != (worker == 0 ? plain : prompted) {
                    wrong.lock()
                    mismatches += 1
                    wrong.unlock()
                }
            }
        }
        XCTAssertEqual(mismatches, 0)
    }
}
