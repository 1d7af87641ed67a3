// SPDX-License-Identifier: Apache-2.0
// Span: the best answer of an extractive-QA model (the C eb_span) and its text in the context.
package org.edgebert;

public final class Span {
  public final int startToken;  // index into the run's tokens
  public final int endToken;    // inclusive
  public final int beginByte;   // [beginByte, endByte) in the context's UTF-8 bytes
  public final int endByte;
  public final float score;     // startLogits[startToken] + endLogits[endToken]
  public final String text;     // the answer exactly as written in the context
  public final int windows;     // context windows Session.answer ran (1: one pair run; 0 from bestSpan)

  Span(int startToken, int endToken, int beginByte, int endByte, float score, String text) {
    this(startToken, endToken, beginByte, endByte, score, text, 0);
  }

  Span(int startToken, int endToken, int beginByte, int endByte, float score, String text, int windows) {
    this.startToken = startToken;
    this.endToken = endToken;
    this.beginByte = beginByte;
    this.endByte = endByte;
    this.score = score;
    this.text = text;
    this.windows = windows;
  }

  @Override
  public String toString() {
    return "Span{tokens " + startToken + ".." + endToken + ", bytes " + beginByte + ".." + endByte + ", score "
        + score + ", \"" + text + "\"}";
  }
}
