// SPDX-License-Identifier: Apache-2.0
// RerankTest: Session.rerank (eb_session_rerank_top_k) on the one-label reference cross-encoders:
// fp32 scores within 2e-3 of the float64 goldens, best first (ties by index), each equal to a
// single runTextPair's logit through the model's score function; topK keeps the best k; a
// too-long passage throws with its index, or with statuses is left out; other models throw
// UNSUPPORTED.
package org.edgebert;

import static org.edgebert.EdgeBertException.INVALID_ARGUMENT;
import static org.edgebert.EdgeBertException.SEQUENCE_TOO_LONG;
import static org.edgebert.EdgeBertException.UNSUPPORTED;
import static org.edgebert.Support.expect;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

class RerankTest {
  static final String[] MODELS = {"task_bert_rerank", "task_bert_rerank_logit", "task_distil_rerank"};

  static String text(Path p) {
    return new String(TestData.bytes(p), StandardCharsets.UTF_8);
  }

  @Test
  void rankingMatchesReference() {
    for (String name : MODELS) {
      Path dir = TestData.dir().resolve(name).resolve("rerank");
      String query = text(dir.resolve("query.txt"));
      String[] passages = text(dir.resolve("passages.txt")).split("\n");
      String[] lines = text(dir.resolve("scores.txt")).trim().split("\n");
      double[] want = new double[lines.length];
      for (int i = 0; i < lines.length; i++) {
        want[i] = Double.parseDouble(lines[i].split(" ")[1]);
      }
      assertEquals(passages.length, want.length);
      boolean sigmoid = !name.equals("task_bert_rerank_logit");
      for (String kind : new String[] {"fp32", "int8"}) {
        String what = name + " " + kind;
        try (Model m = Model.load(TestData.ebm(name, kind)); Session s = m.newSession(1, 48, false, 0, 96)) {
          Ranked[] ranking = s.rerank(query, passages);
          assertEquals(passages.length, ranking.length, what);
          boolean[] seen = new boolean[passages.length];
          for (int r = 0; r < ranking.length; r++) {
            seen[ranking[r].index] = true;
            if (r > 0) {
              assertTrue(ranking[r - 1].score > ranking[r].score
                         || (ranking[r - 1].score == ranking[r].score && ranking[r - 1].index < ranking[r].index), what);
            }
            int i = ranking[r].index;
            s.runTextPair(query, passages[i]);
            double logit = s.output(Output.LOGITS)[0];
            double single = sigmoid ? 1 / (1 + Math.exp(-logit)) : logit;
            assertEquals(single, ranking[r].score, 1e-5, what + " passage " + i);
            if (kind.equals("fp32")) {
              assertEquals(want[i], ranking[r].score, 2e-3, what + " passage " + i);
            }
          }
          for (boolean b : seen) {
            assertTrue(b, what);
          }
          Ranked[] top = s.rerank(query, passages, 3, null);
          assertEquals(3, top.length);
          for (int r = 0; r < 3; r++) {
            assertEquals(ranking[r].index, top[r].index, what);
            assertEquals(ranking[r].score, top[r].score, 0.0, what);
          }
        }
      }
    }
  }

  @Test
  void failuresAndRefusals() {
    Path dir = TestData.dir().resolve("task_bert_rerank").resolve("rerank");
    String query = text(dir.resolve("query.txt"));
    List<String> p = new ArrayList<>(Arrays.asList(text(dir.resolve("passages.txt")).split("\n")).subList(0, 4));
    p.add(1, ManyTest.repeat("good ", 60));
    String[] passages = p.toArray(new String[0]);
    try (Model m = Model.load(TestData.ebm("task_bert_rerank", "int8")); Session s = m.newSession(1, 48)) {
      EdgeBertException e = expect(SEQUENCE_TOO_LONG, () -> s.rerank(query, passages));
      assertTrue(e.getMessage().contains("passages[1]"), e.getMessage());
      int[] statuses = new int[passages.length];
      Ranked[] ranking = s.rerank(query, passages, passages.length, statuses);
      assertEquals(SEQUENCE_TOO_LONG, statuses[1]);
      assertEquals(passages.length - 1, ranking.length);
      for (Ranked r : ranking) {
        assertTrue(r.index != 1);
      }
      expect(INVALID_ARGUMENT, () -> s.rerank(null, passages));
      expect(INVALID_ARGUMENT, () -> s.rerank(query, null));
      expect(INVALID_ARGUMENT, () -> s.rerank(query, new String[] {"a", null}));
      expect(INVALID_ARGUMENT, () -> s.rerank(query, passages, -1, null));
      assertEquals(0, s.rerank(query, new String[0]).length);
    }
    try (Model m = Model.load(TestData.ebm("task_bert_seqcls_tanh", "fp32")); Session s = m.newSession(1, 48)) {
      EdgeBertException e = expect(UNSUPPORTED, () -> s.rerank("q", new String[] {"p"}));
      assertTrue(e.getMessage().contains("cross-encoder"), e.getMessage());
    }
  }
}
