// SPDX-License-Identifier: Apache-2.0
// ChunkPooling: how Session.embedChunked pools the windows' vectors (the C eb_chunk_pooling codes).
package org.edgebert;

public enum ChunkPooling {
  /** One vector per window. */
  NONE(0),
  /** One vector: the windows' vectors averaged with weights their token counts (L2-normalized when the model normalizes). */
  MEAN(1);

  final int code;

  ChunkPooling(int code) {
    this.code = code;
  }

  /** The C eb_chunk_pooling value. */
  public int code() {
    return code;
  }
}
