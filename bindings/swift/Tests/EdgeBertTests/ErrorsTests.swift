// SPDX-License-Identifier: Apache-2.0
// ErrorsTests: every error path throws EdgeBertError with the C status and a message; use after
// close throws .badState instead of crashing.
import EdgeBert
import Foundation
import XCTest

func expect<T>(_ status: Status, _ call: @autoclosure () throws -> T, file: StaticString = #filePath, line: UInt = #line) {
    do {
        _ = try call()
        XCTFail("no error, expected \(status)", file: file, line: line)
    } catch let e as EdgeBertError {
        XCTAssertEqual(e.status, status, e.message, file: file, line: line)
        XCTAssertFalse(e.message.isEmpty, file: file, line: line)
    } catch {
        XCTFail("unexpected error \(error)", file: file, line: line)
    }
}

final class ErrorsTests: XCTestCase {
    let encoder = TestData.ebm("h192_3x64", "int8")  // no labels, no logits

    func testLoadErrors() throws {
        expect(.io, try Model(path: "/nonexistent/model.ebm"))
        expect(.invalidArgument, try Model(path: "a\0b"))
        expect(.invalidModel, try Model(data: Data(repeating: 7, count: 1000)))
        let file = try Data(contentsOf: URL(fileURLWithPath: encoder))
        expect(.invalidModel, try Model(data: file.prefix(file.count / 2)))
    }

    func testSessionOptionErrors() throws {
        let m = try Model(path: encoder)
        expect(.invalidArgument, try m.session(threads: -1))
        expect(.invalidArgument, try m.session(maxSequenceLength: -1))
        expect(.invalidArgument, try m.session(maxSequenceLength: try m.info.maxPositionEmbeddings + 1))
        expect(.invalidArgument, try m.session(threads: 1 << 40))
    }

    func testRunErrors() throws {
        let m = try Model(path: encoder)
        let s = try m.session(maxSequenceLength: 16)
        let vocab = Int32(try m.info.vocabSize)
        expect(.invalidArgument, try s.run(ids: [101, 102], types: [0]))
        expect(.invalidArgument, try s.run(ids: [101, 102], mask: [1, 1, 1]))
        expect(.invalidArgument, try s.run(ids: [101, vocab, 102]))
        expect(.invalidArgument, try s.run(ids: [101, -1, 102]))
        expect(.invalidArgument, try s.run(ids: [101, 102], types: [0, 9]))
        expect(.invalidArgument, try s.run(ids: []))
        expect(.sequenceTooLong, try s.run(ids: [Int32](repeating: 101, count: 17)))
        expect(.invalidArgument, try s.run(text: "a\0b"))
        expect(.invalidArgument, try s.run(embeddings: [Float](repeating: 0, count: try m.info.hiddenSize + 1)))
        XCTAssertEqual(try s.run(ids: [101, 200, 102])[.lastHiddenState]!.shape, [3, try m.info.hiddenSize])
    }

    func testOutputErrors() throws {
        let s = try Model(path: encoder).session()
        expect(.badState, try s.output(.lastHiddenState))
        expect(.badState, try s.inputIds())
        try s.run(ids: [101, 200, 102])
        expect(.unsupported, try s.output(.logits))
        XCTAssertEqual(try s.model.labels(), [])
    }

    func testUseAfterClose() throws {
        let m = try Model(path: TestData.ebm("tiny_f16", "int8"))
        let s1 = try m.session()
        try s1.run(ids: [101, 102])
        s1.close()
        s1.close()
        expect(.badState, try s1.run(ids: [101, 102]))
        expect(.badState, try s1.run(text: "a"))
        expect(.badState, try s1.output(.lastHiddenState))
        expect(.badState, try s1.inputIds())
        expect(.badState, try s1.memory())
        let s2 = try m.session()
        m.close()
        XCTAssertTrue(s2.isClosed && m.isClosed)
        expect(.badState, try s2.run(ids: [101, 102]))
        expect(.badState, try m.info)
        expect(.badState, try m.session())
        m.close()
    }

    func testSetNumThreadsKeepsTheOutputs() throws {
        let c = TestData.Case("base2_h12", "len20_types")
        let s = try Model(path: TestData.ebm("base2_h12", "int8")).session(threads: 2)
        let two = try s.run(ids: c.ids, types: c.types, mask: c.mask)[.lastHiddenState]
        try s.setNumThreads(1)
        XCTAssertEqual(try s.run(ids: c.ids, types: c.types, mask: c.mask)[.lastHiddenState], two)
        try s.setNumThreads(2)
        XCTAssertEqual(try s.run(ids: c.ids, types: c.types, mask: c.mask)[.lastHiddenState], two)
        for bad in [0, 3, -1] {
            XCTAssertThrowsError(try s.setNumThreads(bad)) { e in
                XCTAssertEqual((e as? EdgeBertError)?.status, .invalidArgument)
                XCTAssertTrue("\(e)".contains("runs on 1 or 2"), "\(e)")
            }
        }
        s.close()
        expect(.badState, try s.setNumThreads(1))
    }

    func testMemoryFacts() throws {
        let mem = try Model(path: TestData.ebm("base2_h12", "int8")).session(maxSequenceLength: 32).memory()
        XCTAssertTrue(mem.arena > 0 && mem.arena <= mem.naive && mem.packedWeights > 0)
    }
}
