// SPDX-License-Identifier: Apache-2.0
// Support: test helper: expecting an EdgeBertException with a status and a message.
package org.edgebert;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

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
   * Runs call. The library under test comes from the same tree as these bindings, so a C function
   * it lacks (UNSUPPORTED "lacks ...") fails the test like any other error.
   */
  static void assumeImplemented(Executable call) throws Throwable {
    call.execute();
  }
}
