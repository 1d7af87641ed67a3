// SPDX-License-Identifier: Apache-2.0
// ChunkedEmbedding: the result of Session.embedChunked: the windows' vectors (one row per window,
// or one pooled row) and each window's place in the text (eb_chunk).
package org.edgebert;

public final class ChunkedEmbedding {
  /**
   * One window: its tokens [firstToken, firstToken + tokens) among the text's tokens (special
   * tokens not counted) and the bytes [beginByte, endByte) of the UTF-8 text they cover (its first
   * token's begin to its last token's end; both 0 for an empty text's window).
   */
  public static final class Chunk {
    public final int firstToken;
    public final int tokens;
    public final int beginByte;
    public final int endByte;

    Chunk(int firstToken, int tokens, int beginByte, int endByte) {
      this.firstToken = firstToken;
      this.tokens = tokens;
      this.beginByte = beginByte;
      this.endByte = endByte;
    }

    @Override
    public String toString() {
      return firstToken + " " + tokens + " " + beginByte + " " + endByte;
    }
  }

  /** {@link ChunkPooling#NONE}: [windows][width], one row per window; {@link ChunkPooling#MEAN}: [1][width]. */
  public final float[][] vectors;
  /** Each window's place, in text order. */
  public final Chunk[] chunks;

  ChunkedEmbedding(float[][] vectors, Chunk[] chunks) {
    this.vectors = vectors;
    this.chunks = chunks;
  }
}
