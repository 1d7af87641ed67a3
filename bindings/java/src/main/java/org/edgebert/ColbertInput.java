// SPDX-License-Identifier: Apache-2.0
// ColbertInput: how Session.setColbertInput lays out a ColBERT model's text runs, as PyLate encodes
// queries and documents (the C eb_colbert_input codes).
package org.edgebert;

public enum ColbertInput {
  /** The model's template alone (the default). */
  PLAIN(0),
  /** [CLS] query marker text [SEP], then [MASK] up to the model's query_length (query expansion). */
  QUERY(1),
  /** [CLS] document marker text [SEP]; {@link Session#tokenVectors(int)} leaves out the skiplist's rows. */
  DOCUMENT(2);

  final int code;

  ColbertInput(int code) {
    this.code = code;
  }

  /** The C eb_colbert_input value. */
  public int code() {
    return code;
  }
}
