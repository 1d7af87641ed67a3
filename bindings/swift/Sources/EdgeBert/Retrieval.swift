// SPDX-License-Identifier: Apache-2.0
// Retrieval: the helpers over the sparse and multi-vector outputs: Session.sparseTopK (a
// masked-LM / SPLADE model's sparse vector as its largest entries, eb_session_sparse_top_k),
// Session.fillMask (a masked-LM model's most probable entries at a token, eb_session_fill_mask) and
// maxSim (ColBERT's late-interaction score of two sets of token vectors, eb_maxsim).
import CEdgeBert

/// One entry of a sparse (SPLADE) vector: a vocabulary id and its weight.
public struct SparseEntry: Equatable, Sendable {
    public let tokenId: Int32
    public let weight: Float
}

extension Session {
    /// Masked-LM (SPLADE) models, after a run: the entries of sequence `index`'s sparse vector
    /// (`.sparseEmbedding`) above `threshold`, largest first, at most `topK` of them (nil: all).
    /// Other models throw `.unsupported`; before any run, `.badState`.
    public func sparseTopK(index: Int = 0, topK: Int? = nil, threshold: Float = 0) throws -> [SparseEntry] {
        guard index >= 0, (topK ?? 0) >= 0 else {
            throw EdgeBertError(.invalidArgument, "index and topK must be >= 0, got \(index) and \(topK ?? 0)")
        }
        let call = try TaskAPI.function("eb_session_sparse_top_k", as: TaskAPI.SparseTopK.self)
        let vocab = try model.info.vocabSize
        let room = max(topK ?? vocab, 1)
        var ids = [Int32](repeating: 0, count: room)
        var weights = [Float](repeating: 0, count: room)
        var found = 0
        try withHandle { h in
            let st = ids.withUnsafeMutableBufferPointer { pi in
                weights.withUnsafeMutableBufferPointer { pw in
                    call(h, index, topK ?? room, threshold, pi.baseAddress, pw.baseAddress, &found)
                }
            }
            try Session.check(h, st)
        }
        return (0..<found).map { SparseEntry(tokenId: ids[$0], weight: weights[$0]) }
    }
}

/// One candidate of fill-mask: a vocabulary id and its probability at the token.
public struct TokenProbability: Equatable, Sendable {
    public let tokenId: Int32
    public let probability: Float
}

extension Session {
    /// Masked-LM models, after a run: the `k` most probable vocabulary entries at run-wide token
    /// `token` (a row of `.lastHiddenState`), largest first, with their probabilities (the softmax
    /// of the masked-LM logits there, as HF's fill-mask pipeline). Other models throw
    /// `.unsupported`; before any run, `.badState`; a token out of range or k < 1, `.invalidArgument`.
    public func fillMask(token: Int, k: Int = 5) throws -> [TokenProbability] {
        guard token >= 0, k >= 1 else {
            throw EdgeBertError(.invalidArgument, "token must be >= 0 and k >= 1, got \(token) and \(k)")
        }
        let call = try TaskAPI.function("eb_session_fill_mask", as: TaskAPI.FillMask.self)
        let vocab = try model.info.vocabSize
        let room = min(k, max(vocab, 1))
        var ids = [Int32](repeating: 0, count: room)
        var probs = [Float](repeating: 0, count: room)
        var found = 0
        try withHandle { h in
            let st = ids.withUnsafeMutableBufferPointer { pi in
                probs.withUnsafeMutableBufferPointer { pp in call(h, token, room, pi.baseAddress, pp.baseAddress, &found) }
            }
            try Session.check(h, st)
        }
        return (0..<found).map { TokenProbability(tokenId: ids[$0], probability: probs[$0]) }
    }
}

/// ColBERT's MaxSim (eb_maxsim): the sum over the query's rows of the largest dot product with
/// any row of the document. `query` [queryTokens * dim] and `document` [documentTokens * dim] are
/// row-major, as `.tokenVectors` gives them; which rows to pass is the caller's choice. Throws
/// `.invalidArgument` for an empty array, `dim` <= 0 or a count that is not a multiple of `dim`.
public func maxSim(_ query: [Float], _ document: [Float], dim: Int) throws -> Float {
    guard dim > 0, query.count % dim == 0, document.count % dim == 0 else {
        throw EdgeBertError(.invalidArgument, "maxSim: counts \(query.count) and \(document.count) are not multiples of dim \(dim)")
    }
    let call = try TaskAPI.function("eb_maxsim", as: TaskAPI.MaxSim.self)
    var score: Float = 0
    let st = query.withUnsafeBufferPointer { q in
        document.withUnsafeBufferPointer { d in
            call(q.baseAddress, query.count / dim, d.baseAddress, document.count / dim, dim, &score)
        }
    }
    guard st == EB_OK else {
        throw EdgeBertError(.invalidArgument, "maxSim: empty query or document (\(query.count), \(document.count) values)")
    }
    return score
}

/// PyLate's hierarchical pooling of one document's token vectors (eb_pool_token_vectors, as
/// ColBERT.encode(..., pool_factor:) pools documents): the first `protectedTokens` rows are kept,
/// the others are clustered (Ward) into max(rows / poolFactor, 1) clusters and replaced by their
/// means; returns the means, then the protected rows, row-major. `vectors` [tokens * dim] as
/// `tokenVectors` gives them; poolFactor 1 returns them unchanged. Throws `.invalidArgument` for
/// an empty array, `dim` <= 0, a count that is not a multiple of `dim`, poolFactor < 1,
/// protectedTokens < 0 or a value that is not finite.
public func poolTokenVectors(_ vectors: [Float], dim: Int, poolFactor: Int, protectedTokens: Int = 1) throws -> [Float] {
    guard dim > 0, !vectors.isEmpty, vectors.count % dim == 0, poolFactor >= 1, protectedTokens >= 0 else {
        throw EdgeBertError(.invalidArgument, "poolTokenVectors: \(vectors.count) values, dim \(dim), factor \(poolFactor), protected \(protectedTokens)")
    }
    let call = try TaskAPI.function("eb_pool_token_vectors", as: TaskAPI.PoolTokenVectors.self)
    var out = [Float](repeating: 0, count: vectors.count)
    var rows = 0
    let st = vectors.withUnsafeBufferPointer { v in
        out.withUnsafeMutableBufferPointer { o in
            call(v.baseAddress, vectors.count / dim, dim, poolFactor, protectedTokens, o.baseAddress, &rows)
        }
    }
    guard st == EB_OK else {
        throw EdgeBertError(st == EB_ERROR_OUT_OF_MEMORY ? .outOfMemory : .invalidArgument,
                            "poolTokenVectors: \(st == EB_ERROR_OUT_OF_MEMORY ? "out of memory" : "a value that is not finite")")
    }
    return Array(out[0..<(rows * dim)])
}
