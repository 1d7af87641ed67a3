// SPDX-License-Identifier: Apache-2.0
// ThreadsTest: two sessions on two threads sharing one model give, on every run, exactly the
// outputs of the same input run alone, which match the numpy reference. setNumThreads switches a
// 2-thread session to 1 thread and back with the same outputs.
package org.edgebert;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.edgebert.EdgeBertException.INVALID_ARGUMENT;
import static org.edgebert.Support.expect;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;

class ThreadsTest {
  @Test
  void twoSessionsOnTwoThreadsShareAModel() throws Exception {
    TestData.Case[] cases = {new TestData.Case("base2_h12", "len20_types"), new TestData.Case("base2_h12", "len7_pad")};
    try (Model model = Model.load(TestData.ebm("base2_h12", "int8"))) {
      float[][] expected = new float[2][];
      try (Session alone = model.newSession(1, 0)) {
        for (int k = 0; k < 2; k++) {
          alone.runIds(cases[k].ids, cases[k].types, cases[k].mask);
          expected[k] = alone.output(Output.LAST_HIDDEN_STATE);
        }
      }
      CyclicBarrier start = new CyclicBarrier(2);
      ExecutorService pool = Executors.newFixedThreadPool(2);
      try {
        List<Future<float[][]>> results = new ArrayList<>();
        for (int k = 0; k < 2; k++) {
          final TestData.Case c = cases[k];
          results.add(pool.submit(() -> {
            try (Session s = model.newSession(1, 0)) {
              start.await();
              float[][] runs = new float[6][];
              for (int r = 0; r < runs.length; r++) {
                s.runIds(c.ids, c.types, c.mask);
                runs[r] = s.output(Output.LAST_HIDDEN_STATE);
              }
              return runs;
            }
          }));
        }
        for (int k = 0; k < 2; k++) {
          float[][] runs = results.get(k).get();
          for (float[] run : runs) {
            assertArrayEquals(expected[k], run);
          }
          int h = 768;
          for (int t = 0; t < cases[k].ids.length; t++) {
            if (cases[k].mask[t] == 1) {
              assertTrue(TestData.cosine(runs[0], t * h, cases[k].hidden, t * h, h) >= 0.99);
            }
          }
        }
      } finally {
        pool.shutdown();
      }
    }
  }

  @Test
  void setNumThreadsKeepsTheOutputs() {
    TestData.Case c = new TestData.Case("base2_h12", "len20_types");
    try (Model model = Model.load(TestData.ebm("base2_h12", "int8"))) {
      Session s = model.newSession(2, 0);
      s.runIds(c.ids, c.types, c.mask);
      float[] two = s.output(Output.LAST_HIDDEN_STATE);
      s.setNumThreads(1);
      s.runIds(c.ids, c.types, c.mask);
      assertArrayEquals(two, s.output(Output.LAST_HIDDEN_STATE));
      s.setNumThreads(2);
      s.runIds(c.ids, c.types, c.mask);
      assertArrayEquals(two, s.output(Output.LAST_HIDDEN_STATE));
      for (int bad : new int[] {0, 3, -1}) {
        assertTrue(expect(INVALID_ARGUMENT, () -> s.setNumThreads(bad)).getMessage().contains("runs on 1 or 2"));
      }
      s.close();
      expect(EdgeBertException.BAD_STATE, () -> s.setNumThreads(1));
    }
  }
}
