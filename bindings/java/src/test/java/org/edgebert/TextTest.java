// SPDX-License-Identifier: Apache-2.0
// TextTest: runText / runTextPair tokenize with the model's vocabulary and equal runIds on those
// tokens; token offsets point at the text each token came from (checked against vocab.txt).
package org.edgebert;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

class TextTest {
  static final String A = "The movie was really good, and the acting was great!";
  static final String B = "She said the food at the restaurant was fresh.";

  @Test
  void textEqualsItsIds() {
    try (Model m = Model.load(TestData.ebm("h128_4x32", "int8")); Session s = m.newSession(1, 0)) {
      s.runText(A);
      int[] ids = s.inputIds();
      float[] hidden = s.output(Output.LAST_HIDDEN_STATE);
      float[] logits = s.output(Output.LOGITS);
      assertEquals(101, ids[0]);
      assertEquals(102, ids[ids.length - 1]);
      List<String> vocab = TestData.vocab("h128_4x32");
      StringBuilder spelled = new StringBuilder();
      for (int i = 1; i < ids.length - 1; i++) {
        String p = vocab.get(ids[i]);
        spelled.append(p.startsWith("##") ? p.substring(2) : " " + p);
      }
      assertEquals("the movie was really good , and the acting was great !", spelled.toString().trim());
      s.runIds(ids, null, null);
      assertArrayEquals(hidden, s.output(Output.LAST_HIDDEN_STATE));
      assertArrayEquals(logits, s.output(Output.LOGITS));
    }
  }

  @Test
  void textPairEqualsItsIdsAndTypes() {
    try (Model m = Model.load(TestData.ebm("h128_4x32", "int8")); Session s = m.newSession(1, 0)) {
      s.runText(A);
      int[] a = s.inputIds();
      s.runText(B);
      int[] b = s.inputIds();
      s.runTextPair(A, B);
      int[] ids = s.inputIds();
      assertEquals(a.length + b.length - 1, ids.length);
      int[] types = new int[ids.length];
      for (int i = a.length; i < ids.length; i++) {
        types[i] = 1;
      }
      float[] hidden = s.output(Output.LAST_HIDDEN_STATE);
      s.runIds(ids, types, null);
      assertArrayEquals(hidden, s.output(Output.LAST_HIDDEN_STATE));
    }
  }

  @Test
  void tokenOffsetsPointIntoTheTexts() {
    List<String> vocab = TestData.vocab("h128_4x32");
    try (Model m = Model.load(TestData.ebm("h128_4x32", "int8")); Session s = m.newSession(1, 0)) {
      s.runTextPair(A, B);
      TokenOffsets o = s.tokenOffsets();
      int[] ids = s.inputIds();
      assertEquals(ids.length, o.size());
      byte[][] src = {A.getBytes(StandardCharsets.UTF_8), B.getBytes(StandardCharsets.UTF_8)};
      int specials = 0;
      for (int i = 0; i < ids.length; i++) {
        if (ids[i] == 101 || ids[i] == 102) {
          assertEquals(-1, o.segment[i]);
          specials++;
          continue;
        }
        String piece = vocab.get(ids[i]);
        String written = new String(src[o.segment[i]], o.begin[i], o.end[i] - o.begin[i], StandardCharsets.UTF_8);
        assertEquals(piece.startsWith("##") ? piece.substring(2) : piece, written.toLowerCase());
      }
      assertEquals(3, specials);
      s.runIds(new int[] {101, 102}, null, null);
      EdgeBertException e = assertThrows(EdgeBertException.class, s::tokenOffsets);
      assertEquals(EdgeBertException.BAD_STATE, e.status());
    }
  }

  @Test
  void tooLongTextIsAnError() {
    try (Model m = Model.load(TestData.ebm("tiny_f16", "int8")); Session s = m.newSession(1, 8)) {
      EdgeBertException e = assertThrows(EdgeBertException.class, () -> s.runText(A));
      assertEquals(EdgeBertException.SEQUENCE_TOO_LONG, e.status());
      assertTrue(!e.getMessage().isEmpty());
      s.runText("good");
      assertEquals(3, s.inputIds().length);
    }
  }
}
