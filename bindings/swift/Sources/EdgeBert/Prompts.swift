// SPDX-License-Identifier: Apache-2.0
// Prompts: the session's sentence-transformers prompt (eb_session_set_prompt: "prompt text + text"
// tokenized as one string, as SentenceTransformer.encode(prompt_name:) does) and its Matryoshka
// dimensions (eb_session_set_embedding_dims: truncated, then L2-normalized again).
import CEdgeBert

extension Session {
    /// The prompt (config_sentence_transformers.json "prompts", e.g. EmbeddingGemma's "query") put
    /// before the text of later text calls; nil or "": none. Unknown names throw `.invalidArgument`.
    public func setPrompt(_ name: String?) throws {
        let set = try TaskAPI.function("eb_session_set_prompt", as: TaskAPI.SetPrompt.self)
        let value = name?.isEmpty == true ? nil : name
        let text = try value.map { try Session.cText($0, "prompt") }  // NUL refused, as every text argument
        try withHandle { h in
            if let text {
                try Session.check(h, set(h, text))
            } else {
                try Session.check(h, set(h, nil))
            }
        }
        prompt = value
    }

    /// `embed(_:)` with `prompt` for this call only (one call: another thread's calls on this
    /// session run before or after it, never with its prompt).
    public func embed(_ text: String, prompt name: String) throws -> [Float] {
        try locked {
            let before = prompt
            try setPrompt(name)
            defer { try? setPrompt(before) }
            return try embed(text)
        }
    }

    /// Matryoshka: later sentence embeddings truncated to their first `dims` values and
    /// L2-normalized again; 0: the full embedding. Meaningful only for models trained for it.
    public func setEmbeddingDims(_ dims: Int) throws {
        let set = try TaskAPI.function("eb_session_set_embedding_dims", as: TaskAPI.SetEmbeddingDims.self)
        guard let d = Int32(exactly: dims) else { throw EdgeBertError(.invalidArgument, "dims \(dims) is out of range") }
        try withHandle { h in try Session.check(h, set(h, d)) }
        embeddingDims = dims == (try model.info.hiddenSize) ? 0 : dims
    }
}
