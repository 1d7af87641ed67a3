// SPDX-License-Identifier: Apache-2.0
// Chunked: Session.embedChunked: a long document embedded in overlapping windows of its tokens
// (eb_session_embed_chunked), one vector per window or their token-weighted mean, with each
// window's place in the text.
import CEdgeBert

/// How `embedChunked` pools the windows' vectors (eb_chunk_pooling).
public enum ChunkPooling: Int32, Sendable {
    case none = 0  // one vector per window
    case mean = 1  // the windows' vectors averaged with weights their token counts
}

/// One window of `embedChunked`: its tokens [firstToken, firstToken + tokens) among the text's
/// tokens (special tokens not counted) and the bytes [beginByte, endByte) of the UTF-8 text they
/// cover (its first token's begin to its last token's end; both 0 for an empty text's window).
public struct Chunk: Equatable, Sendable {
    public let firstToken: Int
    public let tokens: Int
    public let beginByte: Int
    public let endByte: Int
}

/// What `embedChunked` returns: `.none`: one row per window; `.mean`: one row. Each row is
/// `setEmbeddingDims`'s dims wide (else the hidden size).
public struct ChunkedEmbedding: Equatable, Sendable {
    public let vectors: [[Float]]
    public let chunks: [Chunk]
}

extension Session {
    /// A long text (any length) embedded in overlapping windows of its tokens, as HuggingFace
    /// tokenizers' overflowing tokens: windows of `window` tokens, consecutive ones sharing
    /// `stride` tokens, each run as a text of its own through the model's sentence embedding
    /// (sentence-embedding models; others throw `.unsupported`). `.mean` averages the windows'
    /// vectors with weights their token counts, L2-normalized when the model normalizes. A text
    /// with a NUL, stride >= window: `.invalidArgument`; a window longer than the session allows,
    /// or a stretch without a single space longer than the session reads at a time:
    /// `.sequenceTooLong`. Afterwards the session's outputs are those of the last packed run.
    public func embedChunked(_ text: String, window: Int, stride: Int,
                             pooling: ChunkPooling = .none) throws -> ChunkedEmbedding {
        let c = try Session.cText(text, "text")
        return try embedChunked(c, c.count - 1, window, stride, pooling)
    }

    /// `embedChunked(_:window:stride:pooling:)` of UTF-8 bytes (checked by the library: bytes that
    /// are not UTF-8 throw `.invalidArgument`).
    public func embedChunked(utf8: [UInt8], window: Int, stride: Int,
                             pooling: ChunkPooling = .none) throws -> ChunkedEmbedding {
        // one byte more than the text, so that an empty text still has an address
        return try embedChunked(utf8.map { CChar(bitPattern: $0) } + [0], utf8.count, window, stride, pooling)
    }

    // The two calls of the C API: the window count (out nil), then the vectors and chunks.
    private func embedChunked(_ text: [CChar], _ size: Int, _ window: Int, _ stride: Int,
                              _ pooling: ChunkPooling) throws -> ChunkedEmbedding {
        guard let w = Int32(exactly: window), let s = Int32(exactly: stride) else {
            throw EdgeBertError(.invalidArgument, "window and stride must be int32, got \(window) and \(stride)")
        }
        let call = try TaskAPI.function("eb_session_embed_chunked", as: TaskAPI.EmbedChunked.self)
        let hidden = try model.info.hiddenSize
        let mode = eb_chunk_pooling(rawValue: numericCast(pooling.rawValue))
        return try withHandle { h -> ChunkedEmbedding in
            self.context = nil
            self.texts = []
            var n = 0
            try Session.check(h, text.withUnsafeBufferPointer { t in
                call(h, t.baseAddress, size, w, s, mode, nil, 0, nil, 0, &n)
            })
            let width = self.embeddingDims > 0 ? self.embeddingDims : hidden
            let rows = pooling == .none ? n : 1
            var out = [Float](repeating: 0, count: max(rows * width, 1))
            var places = [eb_chunk](repeating: eb_chunk(), count: max(n, 1))
            var written = 0
            let st = text.withUnsafeBufferPointer { t in
                out.withUnsafeMutableBufferPointer { po in
                    places.withUnsafeMutableBufferPointer { pc in
                        call(h, t.baseAddress, size, w, s, mode, po.baseAddress, rows * width, pc.baseAddress, n, &written)
                    }
                }
            }
            try Session.check(h, st)
            return ChunkedEmbedding(
                vectors: (0..<rows).map { Array(out[$0 * width..<($0 + 1) * width]) },
                chunks: places.prefix(n).map {
                    Chunk(firstToken: $0.first_token, tokens: $0.tokens, beginByte: $0.begin_byte, endByte: $0.end_byte)
                })
        }
    }
}
