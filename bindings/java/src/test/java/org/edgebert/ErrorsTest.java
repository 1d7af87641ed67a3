// SPDX-License-Identifier: Apache-2.0
// ErrorsTest: every error path throws EdgeBertException with the C status and message, and use
// after close throws instead of crashing the VM.
package org.edgebert;

import static org.edgebert.EdgeBertException.BAD_STATE;
import static org.edgebert.EdgeBertException.INVALID_ARGUMENT;
import static org.edgebert.EdgeBertException.INVALID_MODEL;
import static org.edgebert.EdgeBertException.IO;
import static org.edgebert.EdgeBertException.OUT_OF_MEMORY;
import static org.edgebert.EdgeBertException.SEQUENCE_TOO_LONG;
import static org.edgebert.EdgeBertException.UNSUPPORTED;
import static org.edgebert.Support.expect;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.FloatBuffer;
import java.nio.file.Paths;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

class ErrorsTest {
  static final String ENCODER = TestData.ebm("h192_3x64", "int8");  // no labels, no logits

  @Test
  void loadErrors() {
    assertTrue(expect(IO, () -> Model.load("/nonexistent/model.ebm")).getMessage().contains("model.ebm"));
    expect(INVALID_ARGUMENT, () -> Model.load((String) null));
    expect(INVALID_ARGUMENT, () -> Model.load("a\0b"));
    expect(INVALID_ARGUMENT, () -> Model.load((ByteBuffer) null));
    expect(INVALID_ARGUMENT, () -> Model.load(ByteBuffer.allocate(100)));  // not direct
    ByteBuffer garbage = ByteBuffer.allocateDirect(1000);
    expect(INVALID_MODEL, () -> Model.load(garbage));
    byte[] file = TestData.bytes(Paths.get(ENCODER));
    ByteBuffer half = ByteBuffer.allocateDirect(file.length / 2);
    half.put(file, 0, file.length / 2).flip();
    expect(INVALID_MODEL, () -> Model.load(half));
  }

  @Test
  void loneSurrogatesAreRefused() {  // no UTF-8 form: refused as the C API refuses invalid UTF-8
    try (Model m = Model.load(TestData.ebm("task_bert_seqcls_tanh", "int8")); Session s = m.newSession(1, 0)) {
      assertTrue(expect(INVALID_ARGUMENT, () -> s.runText("ab\uD800c")).getMessage().contains("char index 2"));
      assertTrue(expect(INVALID_ARGUMENT, () -> s.runText("\uDC00")).getMessage().contains("char index 0"));
      s.runText("ok \uD83D\uDE00");  // a surrogate pair (an emoji) is fine
    }
  }

  @Test
  void sessionOptionErrors() {
    try (Model m = Model.load(ENCODER)) {
      expect(INVALID_ARGUMENT, () -> m.newSession(-1, 0));
      expect(INVALID_ARGUMENT, () -> m.newSession(1, -1));
      expect(INVALID_ARGUMENT, () -> m.newSession(1, m.info().maxPositionEmbeddings + 1));
      expect(INVALID_ARGUMENT, () -> m.newSession(1, 0, false, -1));
    }
  }

  @Test
  void memoryCeiling() {
    try (Model m = Model.load(ENCODER)) {
      expect(OUT_OF_MEMORY, () -> m.newSession(1, 0, false, 1));
      m.newSession(1, 0, false, 1L << 40).close();
    }
  }

  @Test
  void runErrors() {
    try (Model m = Model.load(ENCODER); Session s = m.newSession(1, 16)) {
      int vocab = m.info().vocabSize;
      expect(INVALID_ARGUMENT, () -> s.runIds(null, null, null));
      expect(INVALID_ARGUMENT, () -> s.runIds(new int[] {101, 102}, new int[1], null));
      expect(INVALID_ARGUMENT, () -> s.runIds(new int[] {101, 102}, null, new int[3]));
      expect(INVALID_ARGUMENT, () -> s.runIds(new int[] {101, vocab, 102}, null, null));
      expect(INVALID_ARGUMENT, () -> s.runIds(new int[] {101, -1, 102}, null, null));
      expect(INVALID_ARGUMENT, () -> s.runIds(new int[] {101, 102}, new int[] {0, 9}, null));
      expect(INVALID_ARGUMENT, () -> s.runIds(new int[0], null, null));
      int[] tooLong = new int[17];
      Arrays.fill(tooLong, 101);
      expect(SEQUENCE_TOO_LONG, () -> s.runIds(tooLong, null, null));
      expect(INVALID_ARGUMENT, () -> s.runText(null));
      expect(INVALID_ARGUMENT, () -> s.runText("a\0b"));
      expect(INVALID_ARGUMENT, () -> s.runTextPair("a", null));
      expect(INVALID_ARGUMENT, () -> s.runEmbeddings(new float[m.info().hiddenSize + 1], null));
      expect(INVALID_ARGUMENT, () -> s.runEmbeddings(null, null));
      s.runIds(new int[] {101, 200, 102}, null, null);  // still usable
      assertEquals(3, s.inputIds().length);
    }
  }

  @Test
  void outputErrors() {
    try (Model m = Model.load(ENCODER); Session s = m.newSession(1, 0)) {
      expect(BAD_STATE, () -> s.output(Output.LAST_HIDDEN_STATE));
      expect(BAD_STATE, () -> s.outputShape(Output.LAST_HIDDEN_STATE));
      expect(BAD_STATE, s::inputIds);
      s.runIds(new int[] {101, 200, 102}, null, null);
      expect(UNSUPPORTED, () -> s.output(Output.LOGITS));
      expect(INVALID_ARGUMENT, () -> s.output(null));
      FloatBuffer small = FloatBuffer.allocate(10);
      expect(INVALID_ARGUMENT, () -> s.output(Output.LAST_HIDDEN_STATE, small));
      assertEquals(0, small.position());
      expect(INVALID_ARGUMENT, () -> s.output(Output.LAST_HIDDEN_STATE, (FloatBuffer) null));
      expect(INVALID_ARGUMENT, () -> s.output(Output.POOLER_OUTPUT, FloatBuffer.allocate(1000).asReadOnlyBuffer()));
      ByteOrder other = ByteOrder.nativeOrder() == ByteOrder.LITTLE_ENDIAN ? ByteOrder.BIG_ENDIAN
                                                                           : ByteOrder.LITTLE_ENDIAN;
      FloatBuffer swapped = ByteBuffer.allocateDirect(4000).order(other).asFloatBuffer();
      expect(INVALID_ARGUMENT, () -> s.output(Output.POOLER_OUTPUT, swapped));
      FloatBuffer view = ByteBuffer.allocate(4000).asFloatBuffer();  // heap, but no float[] behind it
      expect(INVALID_ARGUMENT, () -> s.output(Output.POOLER_OUTPUT, view));
    }
  }

  @Test
  void labelErrors() {
    try (Model m = Model.load(ENCODER)) {
      assertEquals(0, m.labels().length);
      expect(INVALID_ARGUMENT, () -> m.label(0));
      expect(INVALID_ARGUMENT, () -> m.label(-1));
    }
  }

  @Test
  void useAfterClose() {
    Model m = Model.load(TestData.ebm("tiny_f16", "int8"));
    Session s1 = m.newSession(1, 0);
    s1.runIds(new int[] {101, 102}, null, null);
    s1.close();
    s1.close();  // idempotent
    FloatBuffer dst = FloatBuffer.allocate(1000);
    expect(BAD_STATE, () -> s1.runIds(new int[] {101, 102}, null, null));
    expect(BAD_STATE, () -> s1.runText("a"));
    expect(BAD_STATE, () -> s1.runTextPair("a", "b"));
    expect(BAD_STATE, () -> s1.runEmbeddings(new float[64], null));
    expect(BAD_STATE, () -> s1.output(Output.LAST_HIDDEN_STATE));
    expect(BAD_STATE, () -> s1.output(Output.LAST_HIDDEN_STATE, dst));
    expect(BAD_STATE, () -> s1.outputShape(Output.LAST_HIDDEN_STATE));
    expect(BAD_STATE, () -> s1.hasOutput(Output.LAST_HIDDEN_STATE));
    expect(BAD_STATE, s1::inputIds);
    expect(BAD_STATE, s1::tokenOffsets);
    expect(BAD_STATE, () -> s1.bestSpan());
    expect(BAD_STATE, s1::memory);
    Session s2 = m.newSession(1, 0);
    m.close();  // closes s2 first
    assertTrue(s2.isClosed() && m.isClosed());
    expect(BAD_STATE, () -> s2.runIds(new int[] {101, 102}, null, null));
    expect(BAD_STATE, m::info);
    expect(BAD_STATE, () -> m.newSession(1, 0));
    expect(BAD_STATE, () -> m.label(0));
    m.close();
  }
}
