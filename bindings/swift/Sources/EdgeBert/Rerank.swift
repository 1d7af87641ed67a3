// SPDX-License-Identifier: Apache-2.0
// Rerank: Session.rerank: a cross-encoder's ranking of passages for a query through one call of
// the C API (eb_session_rerank_top_k), which runs the (query, passage) pairs in packed runs and
// keeps the best ones in order; and the session's truncation of long texts
// (eb_session_set_truncation), which reranking of long passages uses.
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CEdgeBert

/// One passage of a ranking: its index in the passages and the model's relevance score.
public struct Ranked: Equatable, Sendable {
    public let index: Int
    public let score: Float
}

/// How text calls cut a text (pair) longer than the session maximum (eb_truncation), as
/// HuggingFace tokenizers' truncation strategies.
public enum Truncation: Int32, Sendable {
    case none = 0          // the default: .sequenceTooLong
    case longestFirst = 1
    case onlySecond = 2
}

extension Session {
    /// Sets how later text calls cut texts longer than the session maximum.
    public func setTruncation(_ strategy: Truncation) throws {
        let set = try TaskAPI.function("eb_session_set_truncation", as: TaskAPI.SetTruncation.self)
        try withHandle { h in try Session.check(h, set(h, eb_truncation(rawValue: numericCast(strategy.rawValue)))) }
    }

    /// Text tokens cut from sequence `index` of the last run (0: nothing was cut).
    public func truncatedTokens(_ index: Int = 0) throws -> Int {
        let get = try TaskAPI.function("eb_session_get_truncated_tokens", as: TaskAPI.GetTruncatedTokens.self)
        guard index >= 0 else { throw EdgeBertError(.invalidArgument, "index must be >= 0") }
        var cut: Int32 = 0
        try withHandle { h in try Session.check(h, get(h, index, &cut)) }
        return Int(cut)
    }

    /// Cross-encoders (a sequence classifier with one label; other models throw `.unsupported`):
    /// the passages ranked by relevance to `query`, best first (equal scores: the lower index
    /// first), only the best `topK` when given. The score is the model's: the raw logit, or its
    /// sigmoid when the checkpoint's sentence-transformers config says Sigmoid (or nothing:
    /// CrossEncoder's one-label default). The pairs run in packed runs as classifyMany's inputs;
    /// a passage that cannot run throws its status with "passages[i]: ..." (`statuses:` gets a
    /// status per passage instead, and the failed ones are left out of the ranking).
    public func rerank(_ query: String, _ passages: [String], topK: Int? = nil) throws -> [Ranked] {
        try rerank(query, passages, topK, nil)
    }

    /// `rerank(_:_:topK:)` with a status per passage.
    public func rerank(_ query: String, _ passages: [String], topK: Int? = nil, statuses: inout [Status]) throws -> [Ranked] {
        var codes = [Status]()
        defer { statuses = codes }
        return try rerank(query, passages, topK, &codes)
    }

    private func rerank(_ query: String, _ passages: [String], _ topK: Int?,
                        _ statuses: UnsafeMutablePointer<[Status]>?) throws -> [Ranked] {
        let q = try Session.cText(query, "query")
        for (i, t) in passages.enumerated() { _ = try Session.cText(t, "passages[\(i)]") }
        let k = min(topK ?? passages.count, passages.count)
        guard k >= 0 else { throw EdgeBertError(.invalidArgument, "topK must be >= 0, got \(topK ?? 0)") }
        let call = try TaskAPI.function("eb_session_rerank_top_k", as: TaskAPI.RerankTopK.self)
        let n = passages.count
        let a = passages.map { UnsafePointer<CChar>(strdup($0)) }
        defer { a.forEach { free(UnsafeMutablePointer(mutating: $0)) } }
        if a.contains(where: { $0 == nil }) { throw EdgeBertError(.outOfMemory, "no memory for the passages") }
        var indices = [Int32](repeating: -1, count: max(k, 1))
        var scores = [Float](repeating: 0, count: max(k, 1))
        var codes = [Int32](repeating: 0, count: max(n, 1))
        var found = 0
        try withHandle { h -> Void in
            self.context = nil
            self.texts = []
            let st = a.withUnsafeBufferPointer { pa -> eb_status in
                indices.withUnsafeMutableBufferPointer { pi -> eb_status in
                    scores.withUnsafeMutableBufferPointer { ps -> eb_status in
                        codes.withUnsafeMutableBufferPointer { pc -> eb_status in
                            call(h, q, pa.baseAddress, n, k, pi.baseAddress, ps.baseAddress, &found,
                                 statuses == nil ? nil : pc.baseAddress)
                        }
                    }
                }
            }
            try Session.check(h, st)
        }
        statuses?.pointee = codes.prefix(n).map { Status(rawValue: $0) ?? .backend }
        return (0..<found).map { Ranked(index: Int(indices[$0]), score: scores[$0]) }
    }
}
