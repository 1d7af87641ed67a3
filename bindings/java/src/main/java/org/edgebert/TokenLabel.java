// SPDX-License-Identifier: Apache-2.0
// TokenLabel: one word piece of a token-classification run, its bytes in the text and its label.
package org.edgebert;

public final class TokenLabel {
  public final int begin;      // [begin, end) in the text's UTF-8 bytes
  public final int end;
  public final String text;    // those bytes
  public final String label;   // the name of the largest of its token logits

  TokenLabel(int begin, int end, String text, String label) {
    this.begin = begin;
    this.end = end;
    this.text = text;
    this.label = label;
  }

  @Override
  public String toString() {
    return text + "/" + label;
  }
}
