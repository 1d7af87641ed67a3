// SPDX-License-Identifier: Apache-2.0
// TextBatch: many Java strings as one block of NUL-terminated UTF-8 texts (and where each starts),
// the input of a packed run (Session.embedMany / classifyMany), passed to JNI in one array.
package org.edgebert;

final class TextBatch {
  final byte[] bytes;  // the texts' UTF-8, each followed by a NUL
  final int[] starts;  // text i begins at bytes[starts[i]]

  private TextBatch(byte[] bytes, int[] starts) {
    this.bytes = bytes;
    this.starts = starts;
  }

  /** The texts of `what` (named what[i] in errors: null and NUL inside are INVALID_ARGUMENT). */
  static TextBatch of(String[] texts, String what) {
    if (texts == null) {
      throw new EdgeBertException(EdgeBertException.INVALID_ARGUMENT, what + " is null");
    }
    byte[][] parts = new byte[texts.length][];
    long total = 0;
    for (int i = 0; i < texts.length; i++) {
      parts[i] = Strings.cString(texts[i], what + "[" + i + "]");
      total += parts[i].length;
    }
    if (total > Integer.MAX_VALUE) {
      throw new EdgeBertException(EdgeBertException.INVALID_ARGUMENT, what + " hold more than 2 GiB of text");
    }
    byte[] bytes = new byte[(int) total];
    int[] starts = new int[texts.length];
    int at = 0;
    for (int i = 0; i < parts.length; i++) {
      starts[i] = at;
      System.arraycopy(parts[i], 0, bytes, at, parts[i].length);
      at += parts[i].length;
    }
    return new TextBatch(bytes, starts);
  }

  int size() {
    return starts.length;
  }
}
