// SPDX-License-Identifier: Apache-2.0
// Task: what the model's head computes, with the C eb_task codes.
package org.edgebert;

public enum Task {
  ENCODER,
  SEQUENCE_CLASSIFICATION,
  QUESTION_ANSWERING,
  TOKEN_CLASSIFICATION,
  SENTENCE_EMBEDDING,
  MASKED_LM,  // sparse_embedding (SPLADE)
  TOKEN_VECTORS,  // token_vectors (ColBERT)
  BGE_M3;  // sentence_embedding, sparse_embedding and token_vectors (bge-m3)

  static Task fromCode(int code) {
    Task[] all = values();
    if (code < 0 || code >= all.length) {
      throw new EdgeBertException(EdgeBertException.UNSUPPORTED, "unknown task code " + code);
    }
    return all[code];
  }
}
