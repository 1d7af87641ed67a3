// Support: test helpers: expecting an EdgeBertException with a status, and skipping tests of the
// task API while the loaded library does not have it yet (reported as UNSUPPORTED by the glue).
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

  static void assumeTaskApi(Runnable call) {
    try {
      call.run();
    } catch (EdgeBertException e) {
      Assumptions.assumeFalse(e.getMessage().contains("lacks eb_"), "task API not merged yet: " + e.getMessage());
      throw e;
    }
  }
}
