// SPDX-License-Identifier: Apache-2.0
// Strings: Java strings to and from the NUL-terminated UTF-8 the C API takes and returns.
package org.edgebert;

import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CharsetEncoder;
import java.nio.charset.CodingErrorAction;
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
    // a lone surrogate has no UTF-8 form: refused (String.getBytes would write '?' silently), as
    // the C API refuses text that is not UTF-8 (docs/tokenizers.md)
    CharsetEncoder encoder = StandardCharsets.UTF_8.newEncoder()
        .onMalformedInput(CodingErrorAction.REPORT)
        .onUnmappableCharacter(CodingErrorAction.REPORT);
    ByteBuffer utf8;
    try {
      utf8 = encoder.encode(CharBuffer.wrap(s));
    } catch (CharacterCodingException e) {
      int at = 0;
      while (at < s.length() && !(Character.isSurrogate(s.charAt(at))
          && !(Character.isHighSurrogate(s.charAt(at)) && at + 1 < s.length() && Character.isLowSurrogate(s.charAt(at + 1))))) {
        at += Character.isHighSurrogate(s.charAt(at)) ? 2 : 1;
      }
      throw new EdgeBertException(EdgeBertException.INVALID_ARGUMENT,
          what + " is not valid Unicode: a lone surrogate at char index " + at);
    }
    byte[] c = new byte[utf8.remaining() + 1];
    utf8.get(c, 0, utf8.remaining());
    return c;
  }

  static String fromUtf8(byte[] bytes) {
    return new String(bytes, StandardCharsets.UTF_8);
  }

  static String fromUtf8(byte[] bytes, int begin, int end) {
    return new String(bytes, begin, end - begin, StandardCharsets.UTF_8);
  }
}
