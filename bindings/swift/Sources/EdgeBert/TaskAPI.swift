// SPDX-License-Identifier: Apache-2.0
// TaskAPI: the C functions added after the first C API (task heads; load options, weight cache,
// model memory, words, long-context QA, packed runs and many texts per call), looked up at run time so these bindings also work
// (reporting .unsupported) with a libedgebert that predates them.
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CEdgeBert

enum TaskAPI {
    typealias RunTextPair = @convention(c) (OpaquePointer?, UnsafePointer<CChar>?, UnsafePointer<CChar>?) -> eb_status
    typealias TokenOffsetsFn = @convention(c) (OpaquePointer?, UnsafeMutablePointer<UnsafePointer<Int32>?>?,
                                               UnsafeMutablePointer<UnsafePointer<Int32>?>?,
                                               UnsafeMutablePointer<UnsafePointer<Int32>?>?,
                                               UnsafeMutablePointer<Int>?) -> eb_status
    typealias BestSpan = @convention(c) (OpaquePointer?, Int32, UnsafeMutablePointer<eb_span>?) -> eb_status
    typealias GetLabel = @convention(c) (OpaquePointer?, Int32, UnsafeMutablePointer<UnsafePointer<CChar>?>?) -> eb_status

    typealias LoadOptionsInit = @convention(c) (UnsafeMutablePointer<eb_load_options>?) -> Void
    typealias LoadFileWithOptions = @convention(c) (UnsafePointer<CChar>?, UnsafePointer<eb_load_options>?,
                                                    UnsafeMutablePointer<OpaquePointer?>?, UnsafeMutablePointer<CChar>?,
                                                    Int) -> eb_status
    typealias LoadMemoryWithOptions = @convention(c) (UnsafeRawPointer?, Int, UnsafePointer<eb_load_options>?,
                                                      UnsafeMutablePointer<OpaquePointer?>?, UnsafeMutablePointer<CChar>?,
                                                      Int) -> eb_status
    typealias GetWeightCache = @convention(c) (OpaquePointer?, UnsafeMutablePointer<eb_weight_cache_state>?,
                                               UnsafeMutablePointer<UnsafePointer<CChar>?>?) -> eb_status
    typealias GetModelMemory = @convention(c) (OpaquePointer?, UnsafeMutablePointer<Int>?, UnsafeMutablePointer<Int>?) -> eb_status
    typealias GetWordIds = @convention(c) (OpaquePointer?, UnsafeMutablePointer<UnsafePointer<Int32>?>?,
                                           UnsafeMutablePointer<Int>?) -> eb_status
    typealias GetWords = @convention(c) (OpaquePointer?, UnsafeMutablePointer<UnsafePointer<eb_word>?>?,
                                         UnsafeMutablePointer<Int>?) -> eb_status
    typealias Answer = @convention(c) (OpaquePointer?, UnsafePointer<CChar>?, UnsafePointer<CChar>?, Int32, Int32,
                                       UnsafeMutablePointer<eb_span>?, UnsafeMutablePointer<Int32>?) -> eb_status

    // Packed runs (issue 19).
    typealias RunTexts = @convention(c) (OpaquePointer?, UnsafePointer<UnsafePointer<CChar>?>?, Int,
                                         UnsafeMutablePointer<Int>?) -> eb_status
    typealias RunTextPairs = @convention(c) (OpaquePointer?, UnsafePointer<UnsafePointer<CChar>?>?,
                                             UnsafePointer<UnsafePointer<CChar>?>?, Int, UnsafeMutablePointer<Int>?) -> eb_status
    typealias GetSequence = @convention(c) (OpaquePointer?, Int, UnsafeMutablePointer<eb_sequence_info>?) -> eb_status

    // Reranking with a cross-encoder (issue 25).
    typealias RerankTopK = @convention(c) (OpaquePointer?, UnsafePointer<CChar>?, UnsafePointer<UnsafePointer<CChar>?>?,
                                           Int, Int, UnsafeMutablePointer<Int32>?, UnsafeMutablePointer<Float>?,
                                           UnsafeMutablePointer<Int>?, UnsafeMutablePointer<Int32>?) -> eb_status

    // Sparse and multi-vector outputs (issue 25).
    typealias SparseTopK = @convention(c) (OpaquePointer?, Int, Int, Float, UnsafeMutablePointer<Int32>?,
                                           UnsafeMutablePointer<Float>?, UnsafeMutablePointer<Int>?) -> eb_status
    typealias FillMask = @convention(c) (OpaquePointer?, Int, Int, UnsafeMutablePointer<Int32>?,
                                         UnsafeMutablePointer<Float>?, UnsafeMutablePointer<Int>?) -> eb_status
    typealias MaxSim = @convention(c) (UnsafePointer<Float>?, Int, UnsafePointer<Float>?, Int, Int,
                                       UnsafeMutablePointer<Float>?) -> eb_status
    typealias PoolTokenVectors = @convention(c) (UnsafePointer<Float>?, Int, Int, Int, Int, UnsafeMutablePointer<Float>?,
                                                 UnsafeMutablePointer<Int>?) -> eb_status
    // Chunked embedding of long documents (issue 25).
    typealias EmbedChunked = @convention(c) (OpaquePointer?, UnsafePointer<CChar>?, Int, Int32, Int32, eb_chunk_pooling,
                                             UnsafeMutablePointer<Float>?, Int, UnsafeMutablePointer<eb_chunk>?, Int,
                                             UnsafeMutablePointer<Int>?) -> eb_status

    typealias SetTruncation = @convention(c) (OpaquePointer?, eb_truncation) -> eb_status
    typealias GetTruncatedTokens = @convention(c) (OpaquePointer?, Int, UnsafeMutablePointer<Int32>?) -> eb_status
    // Prompts and Matryoshka dims (issue 24).
    typealias SetPrompt = @convention(c) (OpaquePointer?, UnsafePointer<CChar>?) -> eb_status
    typealias SetEmbeddingDims = @convention(c) (OpaquePointer?, Int32) -> eb_status
    // 1 thread or all of them on a live session.
    typealias SetNumThreads = @convention(c) (OpaquePointer?, Int32) -> eb_status
    // ColBERT queries and documents (PyLate's input conventions).
    typealias SetColbertInput = @convention(c) (OpaquePointer?, eb_colbert_input) -> eb_status
    typealias GetTokenVectors = @convention(c) (OpaquePointer?, Int, UnsafeMutablePointer<Float>?, Int,
                                                UnsafeMutablePointer<Int>?) -> eb_status

    // Many texts per call and token labels (issue 22).
    typealias EmbedMany = @convention(c) (OpaquePointer?, UnsafePointer<UnsafePointer<CChar>?>?,
                                          UnsafePointer<UnsafePointer<CChar>?>?, Int, eb_output,
                                          UnsafeMutablePointer<Float>?, Int, UnsafeMutablePointer<Int32>?) -> eb_status
    typealias ClassifyMany = @convention(c) (OpaquePointer?, UnsafePointer<UnsafePointer<CChar>?>?,
                                             UnsafePointer<UnsafePointer<CChar>?>?, Int, UnsafeMutablePointer<Float>?, Int,
                                             UnsafeMutablePointer<Int32>?, UnsafeMutablePointer<Int32>?) -> eb_status
    typealias GetTokenLabels = @convention(c) (OpaquePointer?, UnsafeMutablePointer<Int32>?, Int,
                                               UnsafeMutablePointer<Int>?) -> eb_status

    private static let process = dlopen(nil, RTLD_NOW)

    /// Whether the loaded libedgebert has the C function `name`.
    static func has(_ name: String) -> Bool { dlsym(process, name) != nil }

    static func function<T>(_ name: String, as type: T.Type) throws -> T {
        guard let symbol = dlsym(process, name) else {
            throw EdgeBertError(.unsupported, "the loaded libedgebert lacks \(name) (older than these bindings)")
        }
        return unsafeBitCast(symbol, to: type)
    }
}
