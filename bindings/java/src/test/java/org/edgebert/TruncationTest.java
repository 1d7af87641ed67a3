// SPDX-License-Identifier: Apache-2.0
// TruncationTest: Session.setTruncation / truncatedTokens against the HuggingFace truncation
// goldens (tasks_numpy.truncate: longest_first and only_second, texts and pairs): the golden ids
// and cut counts, SEQUENCE_TOO_LONG where the library raises, the default refusing; bad values
// throw INVALID_ARGUMENT.
package org.edgebert;

import static org.edgebert.EdgeBertException.INVALID_ARGUMENT;
import static org.edgebert.EdgeBertException.SEQUENCE_TOO_LONG;
import static org.edgebert.Support.expect;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

class TruncationTest {
  @Test
  void cutsAsHuggingFace() {
    String golden = new String(TestData.bytes(TestData.dir().resolve("task_bert_rerank").resolve("rerank")
                                                  .resolve("truncation.txt")), StandardCharsets.UTF_8);
    Map<Integer, Session> sessions = new HashMap<>();
    int checked = 0;
    try (Model m = Model.load(TestData.ebm("task_bert_rerank", "fp32"))) {
      for (String line : golden.split("\n")) {
        String[] parts = line.split("\\|", -1);
        String[] head = parts[0].split(" ");
        int maxLen = Integer.parseInt(head[1]);
        int cut = Integer.parseInt(head[2]);
        String a = parts[1];
        String b = parts[2].isEmpty() ? null : parts[2];
        Session s = sessions.computeIfAbsent(maxLen, n -> m.newSession(1, n));
        String what = line;
        Runnable run = () -> {
          if (b == null) {
            s.runText(a);
          } else {
            s.runTextPair(a, b);
          }
        };
        s.setTruncation(Session.TRUNCATION_NONE);
        if (cut != 0) {
          expect(SEQUENCE_TOO_LONG, run::run);
        }
        s.setTruncation(head[0].equals("longest_first") ? Session.TRUNCATION_LONGEST_FIRST
                                                        : Session.TRUNCATION_ONLY_SECOND);
        if (cut < 0) {
          expect(SEQUENCE_TOO_LONG, run::run);
          continue;
        }
        run.run();
        String[] idText = parts[3].trim().split(" ");
        int[] ids = new int[idText.length];
        for (int i = 0; i < ids.length; i++) {
          ids[i] = Integer.parseInt(idText[i]);
        }
        assertArrayEquals(ids, s.inputIds(), what);
        assertEquals(cut, s.truncatedTokens(0), what);
        checked += cut > 0 ? 1 : 0;
      }
      assertTrue(checked >= 50);
      Session any = sessions.get(9);
      expect(INVALID_ARGUMENT, () -> any.setTruncation(7));
      expect(INVALID_ARGUMENT, () -> any.truncatedTokens(3));
      expect(INVALID_ARGUMENT, () -> any.truncatedTokens(-1));
    } finally {
      for (Session s : sessions.values()) {
        s.close();
      }
    }
  }
}
