// SPDX-License-Identifier: Apache-2.0
// OutputsTest: every output of runIds against the numpy float64 goldens (fp32 within 1e-3, int8
// per-token cosine >= 0.99), shapes, the FloatBuffer copy (direct and heap, no allocation), and
// loading from direct ByteBuffers (aligned: zero copy; unaligned: copied).
package org.edgebert;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.FloatBuffer;
import java.nio.file.Paths;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.Test;

class OutputsTest {
  static final String[] CASES = {"len1", "len7", "lenmax", "len7_pad", "len20_types"};

  @ParameterizedTest
  @CsvSource({"h128_4x32,fp32", "h128_4x32,int8", "h192_3x64,fp32", "h192_3x64,int8", "tiny_f16,fp32",
              "tiny_f16,int8", "base2_h12,int8"})
  void runIdsMatchesTheReference(String modelName, String kind) {
    try (Model model = Model.load(TestData.ebm(modelName, kind)); Session s = model.newSession(2, 0)) {
      ModelInfo info = model.info();
      assertEquals(kind.equals("int8"), info.isInt8);
      int h = info.hiddenSize;
      for (String name : CASES) {
        TestData.Case c = new TestData.Case(modelName, name);
        s.runIds(c.ids, c.types, c.mask);
        float[] hidden = s.output(Output.LAST_HIDDEN_STATE);
        assertArrayEquals(new long[] {c.ids.length, h}, s.outputShape(Output.LAST_HIDDEN_STATE));
        assertArrayEquals(c.ids, s.inputIds());
        assertEquals(info.hasPooler, s.hasOutput(Output.POOLER_OUTPUT));
        assertEquals(c.logits != null, s.hasOutput(Output.LOGITS));
        for (int t = 0; t < c.ids.length; t++) {
          if (c.mask[t] == 0) {
            continue;
          }
          if (kind.equals("fp32")) {
            for (int i = 0; i < h; i++) {
              assertEquals(c.hidden[t * h + i], hidden[t * h + i], 1e-3, name + " token " + t);
            }
          } else {
            assertTrue(TestData.cosine(hidden, t * h, c.hidden, t * h, h) >= 0.99, name + " token " + t);
          }
        }
        if (info.hasPooler) {
          float[] pooled = s.output(Output.POOLER_OUTPUT);
          assertArrayEquals(new long[] {h}, s.outputShape(Output.POOLER_OUTPUT));
          assertTrue(kind.equals("fp32") ? TestData.maxAbsDiff(pooled, c.pooled) <= 1e-3
                                         : TestData.cosine(pooled, 0, c.pooled, 0, h) >= 0.99);
        }
        if (c.logits != null && kind.equals("fp32")) {
          assertEquals(0, TestData.maxAbsDiff(s.output(Output.LOGITS), c.logits), 1e-3);
          assertArrayEquals(new long[] {info.numLabels}, s.outputShape(Output.LOGITS));
        }
      }
    }
  }

  @Test
  void floatBufferCopiesEqualTheArrayCopy() {
    TestData.Case c = new TestData.Case("h128_4x32", "len20_types");
    try (Model model = Model.load(TestData.ebm("h128_4x32", "int8")); Session s = model.newSession(1, 0)) {
      s.runIds(c.ids, c.types, null);
      float[] expected = s.output(Output.LAST_HIDDEN_STATE);
      FloatBuffer direct = ByteBuffer.allocateDirect((expected.length + 3) * 4).order(ByteOrder.nativeOrder())
                               .asFloatBuffer();
      direct.position(3);
      assertEquals(expected.length, s.output(Output.LAST_HIDDEN_STATE, direct));
      assertEquals(expected.length + 3, direct.position());
      float[] back = new float[expected.length];
      direct.position(3);
      direct.get(back);
      assertArrayEquals(expected, back);

      FloatBuffer heap = FloatBuffer.wrap(new float[expected.length + 10], 5, expected.length + 5).slice();
      assertEquals(expected.length, s.output(Output.LAST_HIDDEN_STATE, heap));
      heap.flip();
      heap.get(back);
      assertArrayEquals(expected, back);

      FloatBuffer logits = FloatBuffer.allocate(3);
      assertEquals(3, s.output(Output.LOGITS, logits));
      assertArrayEquals(s.output(Output.LOGITS), logits.array());
    }
  }

  @Test
  void floatBufferCopyDoesNotAllocate() {
    TestData.Case c = new TestData.Case("base2_h12", "lenmax");
    com.sun.management.ThreadMXBean bean = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
    try (Model model = Model.load(TestData.ebm("base2_h12", "int8")); Session s = model.newSession(1, 0)) {
      s.runIds(c.ids, null, null);
      FloatBuffer dst = ByteBuffer.allocateDirect(c.ids.length * 768 * 4).order(ByteOrder.nativeOrder())
                            .asFloatBuffer();
      for (int i = 0; i < 50; i++) {  // warm up (class loading, JIT)
        dst.clear();
        s.output(Output.LAST_HIDDEN_STATE, dst);
      }
      long tid = Thread.currentThread().getId();
      long before = bean.getThreadAllocatedBytes(tid);
      for (int i = 0; i < 200; i++) {
        dst.clear();
        s.output(Output.LAST_HIDDEN_STATE, dst);
      }
      long allocated = bean.getThreadAllocatedBytes(tid) - before;
      // One float[] copy would be 393 KB; 200 copies allocate nothing (a little slack for the VM).
      assertTrue(allocated < 16 * 1024, "allocated " + allocated + " bytes");
    }
  }

  @Test
  void loadFromDirectBuffersAlignedOrNot() {
    byte[] file = TestData.bytes(Paths.get(TestData.ebm("tiny_f16", "int8")));
    TestData.Case c = new TestData.Case("tiny_f16", "len7");
    float[] expected;
    try (Model m = Model.load(TestData.ebm("tiny_f16", "int8")); Session s = m.newSession(1, 0)) {
      s.runIds(c.ids, c.types, c.mask);
      expected = s.output(Output.LAST_HIDDEN_STATE);
    }
    ByteBuffer big = ByteBuffer.allocateDirect(file.length + 128);
    for (int shift = 0; shift < 3; shift++) {  // some of these start at a 64-byte boundary, some not
      big.clear();
      big.position(shift * 17);
      ByteBuffer view = big.slice();
      view.put(file);
      view.flip();
      try (Model m = Model.load(view); Session s = m.newSession(1, 0)) {
        assertEquals(64, m.info().hiddenSize);
        s.runIds(c.ids, c.types, c.mask);
        assertArrayEquals(expected, s.output(Output.LAST_HIDDEN_STATE));
      }
    }
  }

  @Test
  void memoryAndVersion() {
    try (Model m = Model.load(TestData.ebm("base2_h12", "int8")); Session s = m.newSession(1, 32)) {
      long[] mem = s.memory();
      assertTrue(mem[0] > 0 && mem[0] <= mem[1] && mem[2] > 0);
      assertNotNull(m.info().toString());
      assertTrue(Model.version().matches("\\d+\\.\\d+\\.\\d+"));
      assertFalse(s.isClosed());
    }
  }
}
