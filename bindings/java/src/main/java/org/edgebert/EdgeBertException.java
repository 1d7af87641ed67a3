// SPDX-License-Identifier: Apache-2.0
// EdgeBertException: a failed edgebert call, with the C eb_status code and the C message.
package org.edgebert;

import java.nio.charset.StandardCharsets;

public class EdgeBertException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public static final int INVALID_ARGUMENT = 1;
  public static final int IO = 2;
  public static final int INVALID_MODEL = 3;
  public static final int UNSUPPORTED = 4;
  public static final int OUT_OF_MEMORY = 5;
  public static final int BACKEND = 6;
  public static final int SEQUENCE_TOO_LONG = 7;
  public static final int BAD_STATE = 8;

  private final int status;

  public EdgeBertException(int status, String message) {
    super(message);
    this.status = status;
  }

  /** The C eb_status code (EB_ERROR_*), e.g. {@link #IO}. */
  public int status() {
    return status;
  }

  // Called from JNI with the C message as UTF-8 bytes (not modified UTF-8).
  static EdgeBertException fromNative(int status, byte[] message) {
    return new EdgeBertException(status, new String(message, StandardCharsets.UTF_8));
  }
}
