// SPDX-License-Identifier: Apache-2.0
// RetrievalOutputsTest: MultiVector.maxSim (eb_maxsim) against numpy's float64 MaxSim of the
// reference token vectors (colbert_cases/maxsim.txt, tests/reference/colbert_numpy.py), the fp32
// ColBERT model's token vectors against those vectors, and Session.sparseTopK (eb_session_sparse_top_k)
// against the float64 SPLADE goldens of the masked-LM models (the same ids in the same order for
// entries clearly apart, weights within 2e-3); bad arguments and models without the output throw.
package org.edgebert;

import static org.edgebert.EdgeBertException.INVALID_ARGUMENT;
import static org.edgebert.EdgeBertException.UNSUPPORTED;
import static org.edgebert.Support.expect;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Comparator;
import org.junit.jupiter.api.Test;

class RetrievalOutputsTest {
  static final int DIM = 24;  // colbert_numpy.py's projection width

  static Path cases() {
    return TestData.dir().resolve("colbert_cases");
  }

  @Test
  void maxSimEqualsNumpy() {
    String table = new String(TestData.bytes(cases().resolve("maxsim.txt")), StandardCharsets.UTF_8).trim();
    int pairs = 0;
    for (String line : table.split("\n")) {
      String[] f = line.trim().split(" ");
      float[] q = TestData.floats(cases().resolve(f[0] + ".f32"));
      float[] d = TestData.floats(cases().resolve(f[1] + ".f32"));
      double want = Double.parseDouble(f[2]);
      assertEquals(want, MultiVector.maxSim(q, d, DIM), 1e-6 * Math.abs(want), line);
      pairs++;
    }
    assertEquals(16, pairs);
  }

  @Test
  void tokenVectorsMatchTheReference() {
    try (Model m = Model.load(TestData.ebm("colbert", "fp32")); Session s = m.newSession(1, 0)) {
      assertEquals(Task.TOKEN_VECTORS, m.info().task);
      float[] want = TestData.floats(cases().resolve("query.f32"));
      s.runIds(TestData.ints(cases().resolve("query.ids.txt")), null, null);
      float[] got = s.output(Output.TOKEN_VECTORS);
      assertEquals(want.length, got.length);
      for (int i = 0; i < got.length; i++) {
        assertEquals(want[i], got[i], 2e-3, "element " + i);
      }
      // the query against itself: every row's best match is itself (normalized rows)
      assertEquals(got.length / DIM, MultiVector.maxSim(got, got, DIM), 1e-3);
      expect(UNSUPPORTED, () -> s.sparseTopK(0, 5, 0f));
    }
  }

  @Test
  void maxSimBadArguments() {
    float[] a = new float[8];
    expect(INVALID_ARGUMENT, () -> MultiVector.maxSim(a, new float[6], 4));
    expect(INVALID_ARGUMENT, () -> MultiVector.maxSim(a, new float[0], 4));
    expect(INVALID_ARGUMENT, () -> MultiVector.maxSim(null, a, 4));
    expect(INVALID_ARGUMENT, () -> MultiVector.maxSim(a, a, 0));
  }

  @Test
  void sparseTopKMatchesTheGoldens() {
    for (String model : new String[] {"task_bert_mlm", "task_distil_mlm"}) {
      for (String name : new String[] {"len7", "len20_types"}) {
        Path dir = TestData.dir().resolve(model).resolve("cases").resolve(name);
        if (!dir.toFile().isDirectory()) {
          continue;
        }
        float[] want = TestData.floats(dir.resolve("sparse_embedding.f32"));
        Integer[] order = new Integer[want.length];
        for (int i = 0; i < order.length; i++) {
          order[i] = i;
        }
        Arrays.sort(order, Comparator.comparingDouble((Integer i) -> -want[i]));
        String what = model + " " + name;
        try (Model m = Model.load(TestData.ebm(model, "fp32")); Session s = m.newSession(1, 0)) {
          expect(EdgeBertException.BAD_STATE, () -> s.sparseTopK(0, 5, 0f));
          s.runIds(TestData.ints(dir.resolve("ids.txt")), TestData.ints(dir.resolve("types.txt")),
                   TestData.ints(dir.resolve("mask.txt")));
          SparseEntry[] top = s.sparseTopK(0, 10, 0f);
          assertEquals(10, top.length, what);
          for (int r = 0; r < top.length; r++) {
            assertEquals(want[top[r].tokenId], top[r].weight, 2e-3, what + " rank " + r);
            // the golden's own rank r entry, unless it is within the tolerance of its neighbour
            boolean clear = r + 1 < want.length && want[order[r]] - want[order[r + 1]] > 4e-3
                            && (r == 0 || want[order[r - 1]] - want[order[r]] > 4e-3);
            if (clear) {
              assertEquals((int) order[r], top[r].tokenId, what + " rank " + r);
            }
            if (r > 0) {
              assertTrue(top[r - 1].weight >= top[r].weight, what);
            }
          }
          // threshold: every entry above it, none below
          float threshold = want[order[3]] - 1e-2f;
          for (SparseEntry e : s.sparseTopK(0, 0, threshold)) {
            assertTrue(e.weight > threshold, what);
          }
          expect(INVALID_ARGUMENT, () -> s.sparseTopK(-1, 5, 0f));
          expect(INVALID_ARGUMENT, () -> s.sparseTopK(0, -1, 0f));
        }
      }
    }
  }

  @Test
  void fillMaskMatchesTheGoldens() {
    for (String model : new String[] {"task_bert_mlm", "task_distil_mlm"}) {
      Path dir = TestData.dir().resolve(model).resolve("cases").resolve("len7");
      int[] ids = TestData.ints(dir.resolve("ids.txt"));
      float[] want = TestData.floats(dir.resolve("fill_mask_probs.f32"));
      int vocab = want.length / ids.length;
      try (Model m = Model.load(TestData.ebm(model, "fp32")); Session s = m.newSession(1, 0)) {
        expect(EdgeBertException.BAD_STATE, () -> s.fillMask(0, 5));
        s.runIds(ids, TestData.ints(dir.resolve("types.txt")), TestData.ints(dir.resolve("mask.txt")));
        for (int t = 0; t < ids.length; t++) {
          final int row = t * vocab;
          Integer[] order = new Integer[vocab];
          for (int i = 0; i < vocab; i++) {
            order[i] = i;
          }
          Arrays.sort(order, Comparator.comparingDouble((Integer i) -> -want[row + i]));  // stable: ties by id
          TokenProbability[] top = s.fillMask(t, 5);
          assertEquals(5, top.length, model);
          for (int r = 0; r < 5; r++) {
            assertEquals((int) order[r], top[r].tokenId, model + " token " + t + " rank " + r);
            assertEquals(want[row + top[r].tokenId], top[r].probability, 2e-3, model + " token " + t);
          }
        }
        assertEquals(vocab, s.fillMask(0, vocab + 5).length, model);
        expect(INVALID_ARGUMENT, () -> s.fillMask(ids.length, 5));
        expect(INVALID_ARGUMENT, () -> s.fillMask(0, 0));
      }
    }
    try (Model m = Model.load(TestData.ebm("task_bert_qa", "fp32")); Session s = m.newSession(1, 0)) {
      s.runText("the movie was good");
      expect(UNSUPPORTED, () -> s.fillMask(0, 5));
    }
  }
}
