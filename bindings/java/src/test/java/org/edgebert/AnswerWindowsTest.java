// SPDX-License-Identifier: Apache-2.0
// AnswerWindowsTest: Session.answer on a context of any length, as edgebert.h documents
// eb_session_answer: a pair that fits is one run equal to runTextPair + bestSpan; a longer context
// runs windows overlapping by docStride tokens (< 0: min(128, window / 2)), so their number follows
// from the token counts; the span is a byte range of the context.
package org.edgebert;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class AnswerWindowsTest {
  static final String QUESTION = "What was fresh?";
  static final String SENTENCE = "She said the food at the restaurant was fresh and delicious, and the staff was great. ";

  static int tokens(Model m, String text) {
    try (Session s = m.newSession(1, 0)) {
      s.runText(text);
      return s.inputIds().length - 2;
    }
  }

  @Test
  void aContextThatFitsIsOnePairRun() {
    assertTrue(Session.hasWindowedAnswer(), "libedgebert lacks eb_session_answer");
    try (Model m = Model.load(TestData.ebm("task_bert_qa", "int8")); Session s = m.newSession(1, 0)) {
      Span a = s.answer(QUESTION, SENTENCE, 15, -1);
      assertEquals(1, a.windows);
      s.runTextPair(QUESTION, SENTENCE);
      Span b = s.bestSpan(15);
      assertEquals(b.startToken, a.startToken);
      assertEquals(b.endToken, a.endToken);
      assertEquals(b.beginByte, a.beginByte);
      assertEquals(b.endByte, a.endByte);
      assertEquals(b.score, a.score);
      assertEquals(b.text, a.text);
    }
  }

  @Test
  void aLongContextRunsOverlappingWindows() {
    StringBuilder sb = new StringBuilder();
    for (int i = 0; i < 6; i++) {
      sb.append(SENTENCE);
    }
    String context = sb.toString();
    byte[] utf8 = context.getBytes(StandardCharsets.UTF_8);
    int maxLen = 48;
    assertTrue(Session.hasWindowedAnswer(), "libedgebert lacks eb_session_answer");
    try (Model m = Model.load(TestData.ebm("task_bert_qa", "int8")); Session s = m.newSession(1, maxLen)) {
      Support.expect(EdgeBertException.SEQUENCE_TOO_LONG, () -> s.runTextPair(QUESTION, context));
      int nq = tokens(m, QUESTION), nc = tokens(m, context);
      for (int stride : new int[] {-1, 4, 8}) {
        Span[] span = {s.answer(QUESTION, context, 10, stride)};
        int window = maxLen - nq - 3;
        int overlap = stride < 0 ? Math.min(128, window / 2) : stride;
        int expected = 1 + (nc - window + (window - overlap) - 1) / (window - overlap);
        assertEquals(expected, span[0].windows, "stride " + stride);
        assertTrue(0 <= span[0].beginByte && span[0].beginByte < span[0].endByte && span[0].endByte <= utf8.length);
        assertEquals(new String(utf8, span[0].beginByte, span[0].endByte - span[0].beginByte, StandardCharsets.UTF_8),
                     span[0].text);
        assertTrue(span[0].endToken - span[0].startToken < 10);
      }
    }
  }

  @Test
  void aQuestionWithoutRoomForContext() {
    try (Model m = Model.load(TestData.ebm("task_bert_qa", "int8")); Session s = m.newSession(1, 8)) {
      Support.expect(EdgeBertException.SEQUENCE_TOO_LONG,
                     () -> s.answer("what was fresh and delicious in the restaurant today", SENTENCE, 30, -1));
    }
  }
}
