// SPDX-License-Identifier: Apache-2.0
// ColbertInputs: ColBERT queries and documents as PyLate encodes them: Session.setColbertInput
// (eb_session_set_colbert_input: the query / document marker, the query's [MASK] expansion, the
// document's skiplist) and Session.tokenVectors (eb_session_get_token_vectors: a sequence's rows
// as the model scores them).
import CEdgeBert

/// How text runs lay out a ColBERT model's tokens (eb_colbert_input), as PyLate encodes them.
public enum ColbertInput: Int32, Sendable {
    case plain = 0     // the model's template alone (the default)
    case query = 1     // [CLS] query marker text [SEP], then [MASK] up to the model's query_length
    case document = 2  // [CLS] document marker text [SEP]; tokenVectors leaves out the skiplist's rows
}

extension Session {
    /// ColBERT models converted from a PyLate folder: how later text runs (`run(text:)`,
    /// `runTexts(_:)`) lay out their tokens, as PyLate encodes them: `.query` (the query marker,
    /// then [MASK] up to query_length, attended by no token unless attend_to_expansion_tokens),
    /// `.document` (the document marker; `tokenVectors` leaves out the skiplist's rows) or
    /// `.plain` (the default). Text pairs are refused in the query and document modes. Other
    /// models throw `.unsupported` except for `.plain`. The last run's outputs stay readable.
    public func setColbertInput(_ input: ColbertInput) throws {
        let set = try TaskAPI.function("eb_session_set_colbert_input", as: TaskAPI.SetColbertInput.self)
        try withHandle { h in try Session.check(h, set(h, eb_colbert_input(rawValue: numericCast(input.rawValue)))) }
    }

    /// ColBERT models, after a run: the token vectors of sequence `index` of the last run (0 after
    /// a single run; after `runTexts`, text `index` of the texts it took) as the model scores them,
    /// shape [rows, dim] (dim: `ModelInfo.numLabels`), row-major values for `maxSim`: the
    /// sequence's rows of `.tokenVectors`, without the skiplist's rows after a `.document` run. An
    /// index out of range throws `.invalidArgument`; a model without token vectors,
    /// `.unsupported`; before any run, `.badState`.
    public func tokenVectors(index: Int = 0) throws -> Tensor {
        guard index >= 0 else { throw EdgeBertError(.invalidArgument, "index must be >= 0, got \(index)") }
        let get = try TaskAPI.function("eb_session_get_token_vectors", as: TaskAPI.GetTokenVectors.self)
        let dim = try model.info.numLabels  // (before the session's lock, as Model.close takes them)
        return try withHandle { h in
            var rows = 0
            try Session.check(h, get(h, index, nil, 0, &rows))
            let (room, overflow) = rows.multipliedReportingOverflow(by: dim)
            guard !overflow else { throw EdgeBertError(.invalidArgument, "tokenVectors: \(rows) rows are too many") }
            var values = [Float](repeating: 0, count: room)
            if rows > 0 {
                let capacity = rows
                var written = 0
                try Session.check(h, values.withUnsafeMutableBufferPointer { get(h, index, $0.baseAddress, capacity, &written) })
            }
            return Tensor(shape: [rows, dim], values: values)
        }
    }
}
