// SPDX-License-Identifier: Apache-2.0
// Support: test helper: expecting an EdgeBertException with a status and a message.
package org.edgebert;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.function.Executable;

final class Support {
  private Support() {}

  static EdgeBertException expect(int status, Executable call) {
    EdgeBertException e = assertThrows(EdgeBertException.class, call);
    assertEquals(status, e.status(), e.getMessage());
    assertFalse(e.getMessage().isEmpty());
    return e;
  }

  /**
   * Runs call; when the loaded libedgebert lacks the C function behind it (declared in edgebert.h
   * before its implementation lands: UNSUPPORTED "lacks ..."), aborts the test as skipped.
   */
  static void assumeImplemented(Executable call) throws Throwable {
    try {
      call.execute();
    } catch (EdgeBertException e) {
      if (e.status() == EdgeBertException.UNSUPPORTED && e.getMessage().contains("lacks")) {
        Assumptions.abort(e.getMessage());
      }
      throw e;
    }
  }
}
