// SPDX-License-Identifier: Apache-2.0
// ManyTexts: Session.embedMany / classifyMany: many texts (or text pairs) through one call of the
// C API (eb_session_embed_many / eb_session_classify_many), which loops over the packed runs and
// reports each input's status and its row of one pooled output; Session.runTexts: one packed run
// (eb_session_run_texts), its outputs read per sequence afterwards.
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CEdgeBert

extension Session {
    /// The embeddings of many texts (or pairs: texts[i] with pairs[i]), one row per input, each
    /// equal to a single run of it: sentence-embedding models give their sentence embedding, other
    /// models with a pooler their pooler output; a model with neither throws `.unsupported`.
    /// The inputs run in packed runs (as many whole ones per run as the session's maxBatchTokens
    /// holds, see `Model.session`) until all are done. A text with a NUL, or pairs of another
    /// length, throw `.invalidArgument` before anything runs; no texts give []. An input that
    /// cannot run (longer than the session maximum: `.sequenceTooLong`) throws its status with
    /// "texts[i]: " + the C message, for the first such input (`statuses:` gets per-input statuses
    /// instead). Afterwards the session's outputs are those of the last run.
    public func embedMany(_ texts: [String], pairs: [String]? = nil) throws -> [[Float]] {
        try many(texts, pairs, try embeddingOutput(), nil, nil)
    }

    /// `embedMany(_:pairs:)` that throws nothing for an input that cannot run: statuses[i] gets its
    /// status (.ok, or why it did not run) and its row is all 0.
    public func embedMany(_ texts: [String], pairs: [String]? = nil, statuses: inout [Status]) throws -> [[Float]] {
        var codes = [Status]()
        defer { statuses = codes }
        return try many(texts, pairs, try embeddingOutput(), &codes, nil)
    }

    /// Sequence classifiers: the logits of many texts (or pairs), one row of numLabels per input,
    /// each equal to a single run of it (other models: `.unsupported`). Runs, inputs and failures
    /// as `embedMany(_:pairs:)`.
    public func classifyMany(_ texts: [String], pairs: [String]? = nil) throws -> [[Float]] {
        try many(texts, pairs, (nil, try model.info.numLabels), nil, nil)
    }

    /// `classifyMany(_:pairs:)` with per-input statuses, as `embedMany(_:pairs:statuses:)`.
    public func classifyMany(_ texts: [String], pairs: [String]? = nil, statuses: inout [Status]) throws -> [[Float]] {
        var codes = [Status]()
        defer { statuses = codes }
        return try many(texts, pairs, (nil, try model.info.numLabels), &codes, nil)
    }

    /// One packed run (eb_session_run_texts): as many whole texts from the start of `texts` as the
    /// session's maxBatchTokens holds, their tokens end to end, each sequence's outputs equal to a
    /// single run of its text (int8: bitwise). Returns the status of each text it took (.ok, or why
    /// that text alone did not run, e.g. `.sequenceTooLong`); their count is how many it took (at
    /// least 1: run the rest with another call). Sequence k of the run is text k
    /// (`tokenVectors(index: k)`); the outputs are the run's. No texts, or a text with a NUL,
    /// throw `.invalidArgument` before anything runs.
    @discardableResult
    public func runTexts(_ texts: [String]) throws -> [Status] {
        for (i, t) in texts.enumerated() { _ = try Session.cText(t, "texts[\(i)]") }
        guard !texts.isEmpty else { throw EdgeBertError(.invalidArgument, "runTexts needs at least one text") }
        let run = try TaskAPI.function("eb_session_run_texts", as: TaskAPI.RunTexts.self)
        let sequence = try TaskAPI.function("eb_session_get_sequence", as: TaskAPI.GetSequence.self)
        let a = texts.map { UnsafePointer<CChar>(strdup($0)) }
        defer { a.forEach { free(UnsafeMutablePointer(mutating: $0)) } }
        if a.contains(where: { $0 == nil }) { throw EdgeBertError(.outOfMemory, "no memory for the texts") }
        return try withHandle { h -> [Status] in
            self.context = nil
            self.texts = []
            var consumed = 0
            try Session.check(h, a.withUnsafeBufferPointer { run(h, $0.baseAddress, a.count, &consumed) })
            var statuses: [Status] = []
            for k in 0..<consumed {
                var info = eb_sequence_info()
                try Session.check(h, sequence(h, k, &info))
                statuses.append(Status(rawValue: info.status) ?? .backend)
            }
            if consumed == 1 { self.texts = [Array(texts[0].utf8)] }  // a packed run of one: its words index that text
            return statuses
        }
    }

    private func embeddingOutput() throws -> (Output?, Int) {
        let info = try model.info
        if info.task == .sentenceEmbedding { return (.sentenceEmbedding, embeddingDims > 0 ? embeddingDims : info.hiddenSize) }
        if info.hasPooler { return (.poolerOutput, info.hiddenSize) }
        throw EdgeBertError(.unsupported, "embedMany: this model has neither a sentence embedding nor a pooler output "
                                          + "(task \(info.task.map { "\($0)" } ?? "unknown"))")
    }

    // One call of eb_session_embed_many (output.0: its output) or eb_session_classify_many
    // (output.0 nil: the logits; `labels` may receive each input's label index). With `statuses`
    // nil the first input that failed is thrown (the C message names it).
    func many(_ texts: [String], _ pairs: [String]?, _ output: (Output?, Int),
              _ statuses: UnsafeMutablePointer<[Status]>?, _ labels: UnsafeMutablePointer<[Int32]>?) throws -> [[Float]] {
        let (which, width) = output
        for (i, t) in texts.enumerated() { _ = try Session.cText(t, "texts[\(i)]") }
        if let p = pairs {
            guard p.count == texts.count else {
                throw EdgeBertError(.invalidArgument, "\(texts.count) texts but \(p.count) pairs")
            }
            for (i, t) in p.enumerated() { _ = try Session.cText(t, "pairs[\(i)]") }
        }
        let embed = try TaskAPI.function("eb_session_embed_many", as: TaskAPI.EmbedMany.self)
        let classify = try TaskAPI.function("eb_session_classify_many", as: TaskAPI.ClassifyMany.self)
        let n = texts.count
        let a = texts.map { UnsafePointer<CChar>(strdup($0)) }
        let b = pairs?.map { UnsafePointer<CChar>(strdup($0)) }
        defer {
            a.forEach { free(UnsafeMutablePointer(mutating: $0)) }
            b?.forEach { free(UnsafeMutablePointer(mutating: $0)) }
        }
        if a.contains(where: { $0 == nil }) || (b?.contains(where: { $0 == nil }) ?? false) {
            throw EdgeBertError(.outOfMemory, "no memory for the texts")
        }
        var flat = [Float](repeating: 0, count: labels == nil ? n * width : 0)
        var codes = [Int32](repeating: 0, count: n)
        var indices = [Int32](repeating: -1, count: n)
        try withHandle { h -> Void in
            self.context = nil
            self.texts = []
            let st = a.withUnsafeBufferPointer { pa -> eb_status in
                (b ?? []).withUnsafeBufferPointer { pb -> eb_status in
                    flat.withUnsafeMutableBufferPointer { out -> eb_status in
                        codes.withUnsafeMutableBufferPointer { c -> eb_status in
                            indices.withUnsafeMutableBufferPointer { l -> eb_status in
                                let pp = b == nil ? nil : pb.baseAddress
                                let cs = statuses == nil ? nil : c.baseAddress
                                guard let w = which else {
                                    return classify(h, pa.baseAddress, pp, n, labels == nil ? out.baseAddress : nil,
                                                    out.count, labels == nil ? nil : l.baseAddress, cs)
                                }
                                return embed(h, pa.baseAddress, pp, n, eb_output(rawValue: numericCast(w.rawValue)),
                                             out.baseAddress, out.count, cs)
                            }
                        }
                    }
                }
            }
            try Session.check(h, st)
            if n == 1 {  // a packed run of one: its words index that text (pair)
                self.texts = pairs.map { [Array(texts[0].utf8), Array($0[0].utf8)] } ?? [Array(texts[0].utf8)]
            }
        }
        statuses?.pointee = codes.map { Status(rawValue: $0) ?? .backend }
        labels?.pointee = indices
        return (0..<(labels == nil ? n : 0)).map { Array(flat[$0 * width..<($0 + 1) * width]) }
    }
}
