// SPDX-License-Identifier: Apache-2.0
// Word: a word of the last text run (the C eb_word) with its text and, for token classifiers, its label.
package org.edgebert;

public final class Word {
  public final int firstToken;  // the word's tokens: [firstToken, lastToken]
  public final int lastToken;
  public final int segment;     // 0 = text (or first of a pair), 1 = second text
  public final int beginByte;   // [beginByte, endByte) in that segment's UTF-8 bytes
  public final int endByte;
  public final String text;     // those bytes
  public final String label;    // token classifiers: the label of its first token; else null

  Word(int firstToken, int lastToken, int segment, int beginByte, int endByte, String text, String label) {
    this.firstToken = firstToken;
    this.lastToken = lastToken;
    this.segment = segment;
    this.beginByte = beginByte;
    this.endByte = endByte;
    this.text = text;
    this.label = label;
  }

  @Override
  public String toString() {
    return label == null ? text : text + "/" + label;
  }
}
