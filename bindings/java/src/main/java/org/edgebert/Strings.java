// SPDX-License-Identifier: Apache-2.0
// Strings: Java strings to and from the NUL-terminated UTF-8 the C API takes and returns.
package org.edgebert;

import java.nio.charset.StandardCharsets;

final class Strings {
  private Strings() {}

  // UTF-8 bytes of s followed by a NUL; a NUL inside s is an error (C would cut the text there).
  static byte[] cString(String s, String what) {
    if (s == null) {
      throw new EdgeBertException(EdgeBertException.INVALID_ARGUMENT, what + " is null");
    }
    if (s.indexOf('\0') >= 0) {
      throw new EdgeBertException(EdgeBertException.INVALID_ARGUMENT, what + " contains a NUL character");
    }
    byte[] utf8 = s.getBytes(StandardCharsets.UTF_8);
    byte[] c = new byte[utf8.length + 1];
    System.arraycopy(utf8, 0, c, 0, utf8.length);
    return c;
  }

  static String fromUtf8(byte[] bytes) {
    return new String(bytes, StandardCharsets.UTF_8);
  }

  static String fromUtf8(byte[] bytes, int begin, int end) {
    return new String(bytes, begin, end - begin, StandardCharsets.UTF_8);
  }
}
