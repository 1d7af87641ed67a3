// SPDX-License-Identifier: Apache-2.0
// Output: the outputs a run produces, with the C eb_output codes.
package org.edgebert;

public enum Output {
  LAST_HIDDEN_STATE(0),   // [seqLen, hidden]
  POOLER_OUTPUT(1),       // [hidden], models with a pooler
  LOGITS(2),              // [numLabels], sequence classifiers
  SENTENCE_EMBEDDING(3),  // [hidden], sentence-embedding models
  START_LOGITS(4),        // [seqLen], extractive question answering
  END_LOGITS(5),          // [seqLen], extractive question answering
  TOKEN_LOGITS(6),        // [seqLen, numLabels], token classification
  SPARSE_EMBEDDING(7),    // [vocab], masked-LM (SPLADE) models
  TOKEN_VECTORS(8);       // [seqLen, dim], ColBERT models (rows L2-normalized)

  final int code;

  Output(int code) {
    this.code = code;
  }

  /** The C eb_output value. */
  public int code() {
    return code;
  }
}
