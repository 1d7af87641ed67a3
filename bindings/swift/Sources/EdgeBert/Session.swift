// SPDX-License-Identifier: Apache-2.0
// Session: runs a model on text, a text pair, token ids or embeddings and returns copies of the
// outputs. One session per thread (calls on one session are serialized by a lock).
import CEdgeBert
import Foundation

public final class Session: @unchecked Sendable {
    private var handle: OpaquePointer?
    public let model: Model  // kept alive while the session exists
    private let hiddenSize: Int
    var context: [UInt8]?  // UTF-8 of the last pair's second text, for answer spans
    var texts: [[UInt8]] = []  // UTF-8 of the last text run's segments, for words
    var embeddingDims = 0  // setEmbeddingDims (0: the full embedding)
    var prompt: String?  // setPrompt
    private let lock = NSRecursiveLock()  // recursive: a composed call (embed with a prompt) holds it throughout

    init(model: Model, handle: OpaquePointer, hiddenSize: Int) {
        self.model = model
        self.handle = handle
        self.hiddenSize = hiddenSize
    }

    deinit { close() }

    /// Runs body under the session's lock: calls of other threads wait until it returns.
    func locked<T>(_ body: () throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body()
    }

    func withHandle<T>(_ body: (OpaquePointer) throws -> T) throws -> T {
        lock.lock()
        defer { lock.unlock() }
        guard let h = handle else { throw EdgeBertError(.badState, "session is closed") }
        return try body(h)
    }

    static func check(_ h: OpaquePointer, _ st: eb_status) throws {
        guard st == EB_OK else { throw EdgeBertError(code: st, message: String(cString: eb_session_last_error(h))) }
    }

    static func cText(_ s: String, _ what: String) throws -> [CChar] {
        guard !s.utf8.contains(0) else { throw EdgeBertError(.invalidArgument, "\(what) contains a NUL character") }
        return Array(s.utf8CString)
    }

    /// Tokenizes "[CLS] text [SEP]", runs, and returns every output the model has.
    @discardableResult
    public func run(text: String) throws -> [Output: Tensor] {
        let t = try Session.cText(text, "text")
        return try withHandle { h in
            context = nil
            texts = []
            try Session.check(h, eb_session_run_text(h, t))
            texts = [Array(text.utf8)]
            return try outputs(h)
        }
    }

    /// Tokenizes "[CLS] text [SEP] pair [SEP]" (for QA: question, context) and runs.
    @discardableResult
    public func run(text: String, pair: String) throws -> [Output: Tensor] {
        let runPair = try TaskAPI.function("eb_session_run_text_pair", as: TaskAPI.RunTextPair.self)
        let a = try Session.cText(text, "text"), b = try Session.cText(pair, "pair")
        return try withHandle { h in
            context = nil
            texts = []
            try Session.check(h, runPair(h, a, b))
            context = Array(pair.utf8)
            texts = [Array(text.utf8), Array(pair.utf8)]
            return try outputs(h)
        }
    }

    /// Runs on token ids; types (all 0) and mask (all 1) may be nil, else as long as ids.
    @discardableResult
    public func run(ids: [Int32], types: [Int32]? = nil, mask: [Int32]? = nil) throws -> [Output: Tensor] {
        for (name, a) in [("types", types), ("mask", mask)] where a != nil && a!.count != ids.count {
            throw EdgeBertError(.invalidArgument, "\(name) has \(a!.count) values, ids has \(ids.count)")
        }
        return try withHandle { h in
            context = nil
            texts = []
            let st = ids.withUnsafeBufferPointer { i in
                Session.optionalPointer(types) { t in
                    Session.optionalPointer(mask) { m in eb_session_run_ids(h, i.baseAddress, t, m, ids.count) }
                }
            }
            try Session.check(h, st)
            return try outputs(h)
        }
    }

    /// Runs from embedding-layer outputs (seqLen * hidden floats, row-major); mask may be nil.
    @discardableResult
    public func run(embeddings: [Float], mask: [Int32]? = nil) throws -> [Output: Tensor] {
        guard hiddenSize > 0, embeddings.count % hiddenSize == 0 else {
            throw EdgeBertError(.invalidArgument, "embeddings must hold seqLen * \(hiddenSize) floats")
        }
        let n = embeddings.count / hiddenSize
        if let m = mask, m.count != n { throw EdgeBertError(.invalidArgument, "mask has \(m.count) values, expected \(n)") }
        return try withHandle { h in
            context = nil
            texts = []
            let st = embeddings.withUnsafeBufferPointer { e in
                Session.optionalPointer(mask) { m in eb_session_run_embeddings(h, e.baseAddress, m, n) }
            }
            try Session.check(h, st)
            return try outputs(h)
        }
    }

    private static func optionalPointer<R>(_ a: [Int32]?, _ body: (UnsafePointer<Int32>?) -> R) -> R {
        guard let a = a else { return body(nil) }
        return a.withUnsafeBufferPointer { body($0.baseAddress) }
    }

    private func output(_ h: OpaquePointer, _ which: Output) -> (eb_status, Tensor?) {
        var data: UnsafePointer<Float>?
        var shape: [Int64] = [0, 0]
        var rank: Int32 = 0
        let st = eb_session_get_output(h, eb_output(rawValue: numericCast(which.rawValue)), &data, &shape, &rank)
        guard st == EB_OK else { return (st, nil) }
        let dims = shape.prefix(Int(rank)).map { Int($0) }
        let count = dims.reduce(1, *)
        let values = count > 0 && data != nil ? Array(UnsafeBufferPointer(start: data, count: count)) : []
        return (st, Tensor(shape: dims, values: values))
    }

    private func outputs(_ h: OpaquePointer) throws -> [Output: Tensor] {
        var result: [Output: Tensor] = [:]
        let hasTaskAPI = (try? TaskAPI.function("eb_session_run_text_pair", as: TaskAPI.RunTextPair.self)) != nil
        for which in Output.allCases {
            let (st, tensor) = output(h, which)
            if let t = tensor {
                result[which] = t
            } else if st == EB_ERROR_UNSUPPORTED || (st == EB_ERROR_INVALID_ARGUMENT && which.rawValue >= 3 && !hasTaskAPI) {
                continue  // the model lacks it (libraries before the task outputs do not know 3...6)
            } else {
                try Session.check(h, st)
            }
        }
        return result
    }

    /// One output of the last run (a copy). Outputs the model lacks: .unsupported.
    public func output(_ which: Output) throws -> Tensor {
        try withHandle { h in
            let (st, tensor) = output(h, which)
            try Session.check(h, st)
            return tensor!
        }
    }

    /// Token ids of the last run (after tokenization for text).
    public func inputIds() throws -> [Int32] {
        try withHandle { h in
            var ids: UnsafePointer<Int32>?
            var n = 0
            try Session.check(h, eb_session_get_input_ids(h, &ids, &n))
            return n > 0 ? Array(UnsafeBufferPointer(start: ids, count: n)) : []
        }
    }

    /// After a text run: each token's byte range in its text and its segment.
    public func tokenOffsets() throws -> TokenOffsets {
        let get = try TaskAPI.function("eb_session_get_token_offsets", as: TaskAPI.TokenOffsetsFn.self)
        return try withHandle { h in
            var b: UnsafePointer<Int32>?, e: UnsafePointer<Int32>?, s: UnsafePointer<Int32>?
            var n = 0
            try Session.check(h, get(h, &b, &e, &s, &n))
            let copy = { (p: UnsafePointer<Int32>?) in n > 0 ? Array(UnsafeBufferPointer(start: p, count: n)) : [] }
            return TokenOffsets(begin: copy(b), end: copy(e), segment: copy(s))
        }
    }

    /// After a text run: each token's word index within its segment (HuggingFace's word_ids()), -1 for specials.
    public func wordIds() throws -> [Int32] {
        let get = try TaskAPI.function("eb_session_get_word_ids", as: TaskAPI.GetWordIds.self)
        return try withHandle { h in
            var ids: UnsafePointer<Int32>?
            var n = 0
            try Session.check(h, get(h, &ids, &n))
            return n > 0 ? Array(UnsafeBufferPointer(start: ids, count: n)) : []
        }
    }

    /// After a text run: its words in token order, with their text and (token classifiers) the
    /// label of their first token.
    public func words() throws -> [Word] {
        let get = try TaskAPI.function("eb_session_get_words", as: TaskAPI.GetWords.self)
        let (raw, segments) = try withHandle { h -> ([eb_word], [[UInt8]]) in
            var words: UnsafePointer<eb_word>?
            var n = 0
            try Session.check(h, get(h, &words, &n))
            return (n > 0 ? Array(UnsafeBufferPointer(start: words, count: n)) : [], texts)
        }
        return try raw.map { w in
            var text: String?
            let seg = Int(w.segment), b = Int(w.begin_byte), e = Int(w.end_byte)
            if seg >= 0, seg < segments.count, 0 <= b, b <= e, e <= segments[seg].count {
                text = String(decoding: segments[seg][b..<e], as: UTF8.self)
            }
            var label: String?
            if w.label >= 0 { label = try model.label(Int(w.label)) }
            return Word(firstToken: Int(w.first_token), lastToken: Int(w.last_token), segment: seg, beginByte: b,
                        endByte: e, text: text, label: label)
        }
    }

    /// QA models after run(text: question, pair: context): the best answer span.
    public func bestSpan(maxAnswerTokens: Int = 30) throws -> Span {
        let best = try TaskAPI.function("eb_session_best_span", as: TaskAPI.BestSpan.self)
        guard let limit = Int32(exactly: maxAnswerTokens) else {
            throw EdgeBertError(.invalidArgument, "maxAnswerTokens must fit in 32 bits")
        }
        return try withHandle { h in
            var span = eb_span()
            try Session.check(h, best(h, limit, &span))
            var text: String?
            if let c = context, 0 <= span.begin_byte, span.begin_byte <= span.end_byte, Int(span.end_byte) <= c.count {
                text = String(decoding: c[Int(span.begin_byte)..<Int(span.end_byte)], as: UTF8.self)
            }
            return Span(startToken: Int(span.start_token), endToken: Int(span.end_token), beginByte: Int(span.begin_byte),
                        endByte: Int(span.end_byte), score: span.score, text: text)
        }
    }

    // ---- task outputs one call away (compositions of the calls above)

    /// Sentence-embedding models: the embedding of text.
    public func embed(_ text: String) throws -> [Float] {
        try taskOutput(try run(text: text), .sentenceEmbedding).values
    }

    /// Sequence classifiers: the name of the label with the largest logit (eb_session_classify_many
    /// of this one text: afterwards the session's outputs are those of a packed run of it).
    public func classify(_ text: String) throws -> String {
        var label: [Int32] = []
        _ = try many([text], nil, (nil, 0), nil, &label)
        return try model.label(Int(label[0]))
    }

    /// Extractive QA models on a context of any length: one pair run when it fits the session,
    /// else windows of the context's tokens overlapping by `docStride` tokens (< 0: min(128,
    /// window / 2)), as HuggingFace's question-answering pipeline does; the best span over all
    /// windows (`windows` = how many ran). Afterwards the outputs and offsets are the last
    /// window's. With a library older than eb_session_answer: one pair run.
    public func answer(question: String, context: String, maxAnswerTokens: Int = 30, docStride: Int = -1) throws -> Span {
        guard TaskAPI.has("eb_session_answer") else {
            _ = try taskOutput(try run(text: question, pair: context), .startLogits)
            var span = try bestSpan(maxAnswerTokens: maxAnswerTokens)
            span.windows = 1
            return span
        }
        let answer = try TaskAPI.function("eb_session_answer", as: TaskAPI.Answer.self)
        guard let limit = Int32(exactly: maxAnswerTokens), let stride = Int32(exactly: docStride) else {
            throw EdgeBertError(.invalidArgument, "maxAnswerTokens and docStride must fit in 32 bits")
        }
        let q = try Session.cText(question, "question"), c = try Session.cText(context, "context")
        return try withHandle { h in
            self.context = nil
            texts = []
            var span = eb_span()
            var windows: Int32 = 0
            try Session.check(h, answer(h, q, c, limit, stride, &span, &windows))
            let bytes = Array(context.utf8)
            self.context = bytes
            texts = [Array(question.utf8), bytes]
            var text: String?
            if 0 <= span.begin_byte, span.begin_byte <= span.end_byte, Int(span.end_byte) <= bytes.count {
                text = String(decoding: bytes[Int(span.begin_byte)..<Int(span.end_byte)], as: UTF8.self)
            }
            return Span(startToken: Int(span.start_token), endToken: Int(span.end_token), beginByte: Int(span.begin_byte),
                        endByte: Int(span.end_byte), score: span.score, text: text, windows: Int(windows))
        }
    }

    /// Token classifiers: each word piece of text (special tokens left out) with its best label.
    public func tokenLabels(_ text: String) throws -> [TokenLabel] {
        let get = try TaskAPI.function("eb_session_get_token_labels", as: TaskAPI.GetTokenLabels.self)
        try run(text: text)
        let o = try tokenOffsets()
        let labels = try withHandle { h -> [Int32] in
            var labels = [Int32](repeating: -1, count: o.segment.count)
            try Session.check(h, labels.withUnsafeMutableBufferPointer { get(h, $0.baseAddress, $0.count, nil) })
            return labels
        }
        let bytes = Array(text.utf8)
        return try o.segment.indices.filter { o.segment[$0] >= 0 }.map { i in
            let b = Int(o.begin[i]), e = Int(o.end[i])
            return TokenLabel(begin: b, end: e, text: String(decoding: bytes[b..<e], as: UTF8.self),
                              label: try model.label(Int(labels[i])))
        }
    }

    private func taskOutput(_ out: [Output: Tensor], _ which: Output) throws -> Tensor {
        guard let t = out[which] else {
            throw EdgeBertError(.unsupported, "this model has no \(which.key) output")
        }
        return t
    }

    /// Later runs on 1 thread (the caller's) or on all the threads the session was made with
    /// (eb_session_set_num_threads): for cores that other work keeps busy, where 2 threads can be
    /// slower than 1. A session also leaves its pool by itself while its threads are preempted at
    /// such a rate and tries it again after a hold (1 s, doubling to 16 s); this call resets that.
    /// Outputs are the same; any other count throws `.invalidArgument`.
    public func setNumThreads(_ threads: Int) throws {
        let set = try TaskAPI.function("eb_session_set_num_threads", as: TaskAPI.SetNumThreads.self)
        guard let t = Int32(exactly: threads) else { throw EdgeBertError(.invalidArgument, "threads \(threads) is out of range") }
        try withHandle { h in try Session.check(h, set(h, t)) }
    }

    /// (arena bytes, naive sum of buffers, packed weight bytes).
    public func memory() throws -> (arena: Int, naive: Int, packedWeights: Int) {
        try withHandle { h in
            var a = 0, n = 0, p = 0
            try Session.check(h, eb_session_memory(h, &a, &n, &p))
            return (a, n, p)
        }
    }

    public var isClosed: Bool {
        lock.lock()
        defer { lock.unlock() }
        return handle == nil
    }

    /// Destroys the session (waits for a run on another thread). Idempotent.
    public func close() {
        lock.lock()
        let h = handle
        handle = nil
        if let h = h { eb_session_destroy(h) }
        lock.unlock()
        if h != nil { model.forget(self) }
    }
}
