// SPDX-License-Identifier: Apache-2.0
// WordsTest: Session.wordIds and Session.words against BERT's basic tokenization (a word is a run
// of letters/digits or one punctuation character), word ids counted per segment as HuggingFace's
// word_ids(), -1 for specials, and a token classifier's word label = its first token's argmax.
package org.edgebert;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

class WordsTest {
  static final String TEXT = "the quick brown fox, jumped over 12 lazy dogs!";
  static final String PAIR = "what jumped?";

  static List<int[]> referenceWords(String text) {
    List<int[]> out = new ArrayList<>();
    Matcher m = Pattern.compile("[A-Za-z0-9]+|[^\\sA-Za-z0-9]").matcher(text);
    while (m.find()) {
      out.add(new int[] {m.start(), m.end()});
    }
    return out;
  }

  static void check(Session s, String... texts) {
    TokenOffsets o = s.tokenOffsets();
    int[] ids = s.wordIds();
    Word[] words = s.words();
    assertEquals(o.size(), ids.length);
    int k = 0;
    for (int seg = 0; seg < texts.length; seg++) {
      List<int[]> ref = referenceWords(texts[seg]);
      for (int index = 0; index < ref.size(); index++, k++) {
        Word w = words[k];
        assertEquals(seg, w.segment);
        assertEquals(ref.get(index)[0], w.beginByte);
        assertEquals(ref.get(index)[1], w.endByte);
        assertEquals(texts[seg].substring(w.beginByte, w.endByte), w.text);
        List<Integer> tokens = new ArrayList<>();
        for (int t = 0; t < o.size(); t++) {
          if (o.segment[t] == seg && w.beginByte <= o.begin[t] && o.end[t] <= w.endByte) {
            tokens.add(t);
            assertEquals(index, ids[t]);
          }
        }
        assertEquals(w.firstToken, (int) tokens.get(0));
        assertEquals(w.lastToken, (int) tokens.get(tokens.size() - 1));
        assertEquals(w.lastToken - w.firstToken + 1, tokens.size());
      }
    }
    assertEquals(k, words.length);
    for (int t = 0; t < o.size(); t++) {
      assertEquals(o.segment[t] == -1, ids[t] == -1);
    }
  }

  @Test
  void wordsOfATextAndAPair() throws Throwable {
    try (Model m = Model.load(TestData.ebm("task_bert_token", "int8")); Session s = m.newSession(1, 0)) {
      s.runText(TEXT);
      Support.assumeImplemented(s::wordIds);
      check(s, TEXT);
      s.runTextPair(PAIR, TEXT);
      check(s, PAIR, TEXT);
      s.runText(TEXT);
      float[] logits = s.output(Output.TOKEN_LOGITS);
      int labels = m.info().numLabels;
      for (Word w : s.words()) {
        int best = 0;
        for (int j = 1; j < labels; j++) {
          if (logits[w.firstToken * labels + j] > logits[w.firstToken * labels + best]) {
            best = j;
          }
        }
        assertEquals(m.label(best), w.label);
      }
    }
  }

  @Test
  void otherModelsWordsHaveNoLabelAndIdsRunsHaveNoWords() throws Throwable {
    try (Model m = Model.load(TestData.ebm("h128_4x32", "int8")); Session s = m.newSession(1, 0)) {
      s.runText(TEXT);
      Support.assumeImplemented(s::words);
      for (Word w : s.words()) {
        assertNull(w.label);
      }
      s.runIds(new int[] {101, 102}, null, null);
      Support.expect(EdgeBertException.BAD_STATE, s::wordIds);
      Support.expect(EdgeBertException.BAD_STATE, s::words);
    }
  }
}
