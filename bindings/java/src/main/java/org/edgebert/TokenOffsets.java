// SPDX-License-Identifier: Apache-2.0
// TokenOffsets: for each token of the last text run, its byte range in its text and its segment.
package org.edgebert;

public final class TokenOffsets {
  public final int[] begin;    // byte offsets into the UTF-8 text the token came from
  public final int[] end;      // exclusive
  public final int[] segment;  // 0 = text (or first of a pair), 1 = second text, -1 = special token

  TokenOffsets(int[] begin, int[] end, int[] segment) {
    this.begin = begin;
    this.end = end;
    this.segment = segment;
  }

  public int size() {
    return begin.length;
  }
}
