// SPDX-License-Identifier: Apache-2.0
// Types: Swift views of the C API's enums and structs: Output, Task, ModelInfo, Tensor, Span,
// TokenOffsets.
import CEdgeBert

/// The outputs a run produces (eb_output); `key` is the name used by the other bindings.
public enum Output: Int32, CaseIterable, Sendable {
    case lastHiddenState = 0     // [seqLen, hidden]
    case poolerOutput = 1        // [hidden]
    case logits = 2              // [numLabels]
    case sentenceEmbedding = 3   // [hidden]
    case startLogits = 4         // [seqLen]
    case endLogits = 5           // [seqLen]
    case tokenLogits = 6         // [seqLen, numLabels]
    case sparseEmbedding = 7     // [vocab], masked-LM (SPLADE) models
    case tokenVectors = 8        // [seqLen, dim], ColBERT models (rows L2-normalized)

    public var key: String {
        ["last_hidden_state", "pooler_output", "logits", "sentence_embedding", "start_logits",
         "end_logits", "token_logits", "sparse_embedding", "token_vectors"][Int(rawValue)]
    }
}

/// What the model's head computes (eb_task).
public enum Task: Int32, Sendable {
    case encoder = 0, sequenceClassification, questionAnswering, tokenClassification, sentenceEmbedding, maskedLm,
         tokenVectors, bgeM3
}

public struct ModelInfo: Equatable, Sendable {
    public let hiddenSize, numAttentionHeads, numHiddenLayers, intermediateSize: Int
    public let vocabSize, maxPositionEmbeddings, typeVocabSize, numLabels: Int
    public let hasPooler, hasEmbeddings, hasVocab, isInt8, isDistilBert: Bool
    public let task: Task?  // nil: a task code newer than these bindings

    init(_ i: eb_model_info) {
        hiddenSize = Int(i.hidden_size)
        numAttentionHeads = Int(i.num_attention_heads)
        numHiddenLayers = Int(i.num_hidden_layers)
        intermediateSize = Int(i.intermediate_size)
        vocabSize = Int(i.vocab_size)
        maxPositionEmbeddings = Int(i.max_position_embeddings)
        typeVocabSize = Int(i.type_vocab_size)
        numLabels = Int(i.num_labels)
        hasPooler = i.has_pooler != 0
        hasEmbeddings = i.has_embeddings != 0
        hasVocab = i.has_vocab != 0
        isInt8 = i.is_int8 != 0
        isDistilBert = i.is_distilbert != 0
        task = Task(rawValue: i.task)
    }
}

/// A copied output: row-major float32 values and their shape.
public struct Tensor: Equatable, Sendable {
    public let shape: [Int]
    public let values: [Float]
}

/// The best answer of a QA model (eb_span) and its text in the context.
public struct Span: Equatable, Sendable {
    public let startToken, endToken: Int  // token indices, end inclusive
    public let beginByte, endByte: Int    // [beginByte, endByte) in the context's UTF-8
    public let score: Float
    public let text: String?              // the answer as written in the context
    public var windows: Int? = nil        // context windows answer() ran (nil from bestSpan())
}

/// What happened to a model's weight cache file (eb_weight_cache_state).
public enum WeightCacheState: UInt32, Sendable {
    case none = 0         // no cache file was asked for
    case loaded = 1       // a valid cache file is mapped: nothing was packed
    case created = 2      // packed, and the file was written (new, or rebuilt: the message says why)
    case unavailable = 3  // asked for but not used (no cache API in this XNNPACK, or not writable)
}

/// A word of the last text run (eb_word): its tokens, segment, bytes in that segment's text, the
/// text itself, and for token classifiers the label of its first token.
public struct Word: Equatable, Sendable {
    public let firstToken, lastToken: Int  // inclusive
    public let segment: Int                // 0 = text, 1 = pair
    public let beginByte, endByte: Int     // [beginByte, endByte) in that segment's UTF-8
    public let text: String?
    public let label: String?
}

/// For each token of the last text run: its byte range in its text and segment (-1: special).
public struct TokenOffsets: Equatable, Sendable {
    public let begin, end, segment: [Int32]
}

/// One word piece of a token-classification run: its bytes in the text and its best label.
public struct TokenLabel: Equatable, Sendable {
    public let begin, end: Int  // [begin, end) in the text's UTF-8
    public let text: String
    public let label: String
}
