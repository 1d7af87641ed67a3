// SPDX-License-Identifier: Apache-2.0
// ManyTexts: Session.embedMany / classifyMany: many texts (or text pairs) through the packed runs
// of the C API (eb_session_run_texts / eb_session_run_text_pairs), one run at a time until every
// input is consumed, reading each input's status and its row of one pooled output.
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
        try many(texts, pairs, try embeddingOutput(), nil)
    }

    /// `embedMany(_:pairs:)` that throws nothing for an input that cannot run: statuses[i] gets its
    /// status (.ok, or why it did not run) and its row is all 0.
    public func embedMany(_ texts: [String], pairs: [String]? = nil, statuses: inout [Status]) throws -> [[Float]] {
        var codes = [Status]()
        defer { statuses = codes }
        return try many(texts, pairs, try embeddingOutput(), &codes)
    }

    /// Sequence classifiers: the logits of many texts (or pairs), one row of numLabels per input,
    /// each equal to a single run of it (other models: `.unsupported`). Runs, inputs and failures
    /// as `embedMany(_:pairs:)`.
    public func classifyMany(_ texts: [String], pairs: [String]? = nil) throws -> [[Float]] {
        try many(texts, pairs, try logitsOutput(), nil)
    }

    /// `classifyMany(_:pairs:)` with per-input statuses, as `embedMany(_:pairs:statuses:)`.
    public func classifyMany(_ texts: [String], pairs: [String]? = nil, statuses: inout [Status]) throws -> [[Float]] {
        var codes = [Status]()
        defer { statuses = codes }
        return try many(texts, pairs, try logitsOutput(), &codes)
    }

    private func embeddingOutput() throws -> (Output, Int) {
        let info = try model.info
        if info.task == .sentenceEmbedding { return (.sentenceEmbedding, info.hiddenSize) }
        if info.hasPooler { return (.poolerOutput, info.hiddenSize) }
        throw EdgeBertError(.unsupported, "embedMany: this model has neither a sentence embedding nor a pooler output "
                                          + "(task \(info.task.map { "\($0)" } ?? "unknown"))")
    }

    private func logitsOutput() throws -> (Output, Int) {
        let info = try model.info
        guard info.task == .sequenceClassification else {
            throw EdgeBertError(.unsupported, "classifyMany: this model is not a sequence classifier "
                                              + "(task \(info.task.map { "\($0)" } ?? "unknown"))")
        }
        return (.logits, info.numLabels)
    }

    // Runs every input; with `statuses` nil the first input that failed is thrown.
    private func many(_ texts: [String], _ pairs: [String]?, _ output: (Output, Int),
                      _ statuses: UnsafeMutablePointer<[Status]>?) throws -> [[Float]] {
        let (which, width) = output
        let runTexts = try TaskAPI.function("eb_session_run_texts", as: TaskAPI.RunTexts.self)
        let runPairs = try TaskAPI.function("eb_session_run_text_pairs", as: TaskAPI.RunTextPairs.self)
        let getSequence = try TaskAPI.function("eb_session_get_sequence", as: TaskAPI.GetSequence.self)
        for (i, t) in texts.enumerated() { _ = try Session.cText(t, "texts[\(i)]") }
        if let p = pairs {
            guard p.count == texts.count else {
                throw EdgeBertError(.invalidArgument, "\(texts.count) texts but \(p.count) pairs")
            }
            for (i, t) in p.enumerated() { _ = try Session.cText(t, "pairs[\(i)]") }
        }
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
        var rows = [[Float]](repeating: [Float](repeating: 0, count: width), count: n)
        var codes = [Status](repeating: .ok, count: n)
        let failed: Int? = try withHandle { h -> Int? in
            self.context = nil
            self.texts = []
            var firstFailed: Int?
            var done = 0
            while done < n {
                var consumed = 0
                let st = a.withUnsafeBufferPointer { pa -> eb_status in
                    guard let bs = b else { return runTexts(h, pa.baseAddress! + done, n - done, &consumed) }
                    return bs.withUnsafeBufferPointer { pb in
                        runPairs(h, pa.baseAddress! + done, pb.baseAddress! + done, n - done, &consumed)
                    }
                }
                try Session.check(h, st)
                guard consumed >= 1, consumed <= n - done else {
                    throw EdgeBertError(.backend, "the library consumed \(consumed) of \(n - done) inputs")
                }
                for i in 0..<consumed {
                    var q = eb_sequence_info()
                    try Session.check(h, getSequence(h, i, &q))
                    codes[done + i] = Status(rawValue: q.status) ?? .backend
                    if q.status != 0 && firstFailed == nil { firstFailed = done + i }
                }
                var data: UnsafePointer<Float>?
                var shape: [Int64] = [0, 0]
                var rank: Int32 = 0
                try Session.check(h, eb_session_get_output(h, eb_output(rawValue: numericCast(which.rawValue)), &data,
                                                           &shape, &rank))
                guard rank == 2, shape[0] == Int64(consumed), shape[1] == Int64(width), let p = data else {
                    throw EdgeBertError(.backend, "\(which.key) has shape \(shape.prefix(Int(rank))) after a packed run of \(consumed)")
                }
                for i in 0..<consumed { rows[done + i] = Array(UnsafeBufferPointer(start: p + i * width, count: width)) }
                if firstFailed != nil && statuses == nil { return firstFailed }
                done += consumed
            }
            return firstFailed
        }
        if let s = statuses {
            s.pointee = codes
        } else if let i = failed {
            throw sequenceError(i, texts, pairs, codes[i])
        }
        return rows
    }

    // The error of input i of a packed run: the C message of a single run of it (which fails the same way).
    private func sequenceError(_ i: Int, _ texts: [String], _ pairs: [String]?, _ status: Status) -> EdgeBertError {
        let name = pairs == nil ? "texts[\(i)]" : "texts[\(i)], pairs[\(i)]"
        do {
            if let p = pairs { try run(text: texts[i], pair: p[i]) } else { try run(text: texts[i]) }
        } catch let e as EdgeBertError where e.status == status {
            return EdgeBertError(status, "\(name): \(e.message)")
        } catch {}
        return EdgeBertError(status, "\(name): \(String(cString: eb_status_string(eb_status(rawValue: numericCast(status.rawValue)))))")
    }
}
