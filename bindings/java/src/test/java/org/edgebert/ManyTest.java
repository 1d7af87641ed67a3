// SPDX-License-Identifier: Apache-2.0
// ManyTest: Session.embedMany / classifyMany (packed runs): every row equals a single run of that
// input (runText / runTextPair, then output) within 1e-5, over texts that need several packed runs
// (an empty text, one of exactly the session maximum, one too long that fails alone: an exception
// naming it, or a status and a zero row); the golden cases' rows match the numpy goldens; bad
// inputs and closed sessions throw EdgeBertException.
package org.edgebert;

import static org.edgebert.EdgeBertException.BAD_STATE;
import static org.edgebert.EdgeBertException.INVALID_ARGUMENT;
import static org.edgebert.EdgeBertException.SEQUENCE_TOO_LONG;
import static org.edgebert.EdgeBertException.UNSUPPORTED;
import static org.edgebert.Support.expect;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

class ManyTest {
  static final int MAX_LEN = 32;
  static final int BATCH_TOKENS = 64;
  static final String[] MODELS = {"task_st_mean_norm", "task_bert_seqcls_tanh", "task_distil_seqcls_relu",
                                  "task_bert_model_relu"};

  // 2 ("") to 32 tokens (30 one-token words + [CLS] + [SEP]) and one of 42 (too long).
  static String[] texts() {
    List<String> t = new ArrayList<>(Arrays.asList("the movie was good , not bad !", "", "who",
                                                   "the staff was rude and slow .", repeat("the ", 30),
                                                   repeat("good ", 40), "a b"));
    for (int i = 0; i < 6; i++) {
      t.add("the hotel was clean , but the staff was rude " + i);
    }
    return t.toArray(new String[0]);
  }

  static String[] pairs(int n) {
    String[] p = new String[n];
    String[] choices = {"yes", "no , it was not", "maybe so", ""};
    for (int i = 0; i < n; i++) {
      p[i] = choices[i % 4];
    }
    return p;
  }

  static String repeat(String s, int n) {
    StringBuilder b = new StringBuilder();
    for (int i = 0; i < n; i++) {
      b.append(s);
    }
    return b.toString();
  }

  static Output outputOf(Model m) {
    ModelInfo info = m.info();
    if (info.task == Task.SENTENCE_EMBEDDING) {
      return Output.SENTENCE_EMBEDDING;
    }
    return info.task == Task.SEQUENCE_CLASSIFICATION ? Output.LOGITS : Output.POOLER_OUTPUT;
  }

  static float[][] many(Session s, Output which, String[] a, String[] b, int[] statuses) {
    return which == Output.LOGITS ? s.classifyMany(a, b, statuses) : s.embedMany(a, b, statuses);
  }

  @Test
  void manyEqualsSingleRuns() {
    String[] texts = texts();
    for (String name : MODELS) {
      for (String kind : new String[] {"int8", "fp32"}) {
        try (Model m = Model.load(TestData.ebm(name, kind));
             Session packed = m.newSession(1, MAX_LEN, false, 0, BATCH_TOKENS);
             Session alone = m.newSession(1, MAX_LEN)) {
          Output which = outputOf(m);
          for (boolean paired : new boolean[] {false, true}) {
            String what = name + " " + kind + (paired ? " pairs" : " texts");
            String[] b = paired ? pairs(texts.length) : null;
            int[] statuses = new int[texts.length];
            float[][] got = many(packed, which, texts, b, statuses);
            assertEquals(texts.length, got.length, what);
            int tokens = 0;
            List<Integer> failed = new ArrayList<>();
            for (int i = 0; i < texts.length; i++) {
              int single = 0;
              try {
                if (paired) {
                  alone.runTextPair(texts[i], b[i]);
                } else {
                  alone.runText(texts[i]);
                }
              } catch (EdgeBertException e) {
                single = e.status();
              }
              assertEquals(single, statuses[i], what + " input " + i);
              if (single != 0) {
                assertEquals(SEQUENCE_TOO_LONG, single, what + " input " + i);
                assertArrayEquals(new float[got[i].length], got[i], what + " input " + i);  // a zero row
                failed.add(i);
                continue;
              }
              tokens += alone.inputIds().length;
              float[] want = alone.output(which);
              assertEquals(want.length, got[i].length, what);
              for (int k = 0; k < want.length; k++) {
                assertEquals(want[k], got[i][k], 1e-5 * Math.max(1, Math.abs(want[k])), what + " input " + i);
              }
            }
            assertTrue(tokens > 2 * BATCH_TOKENS, what + ": several packed runs");
            assertEquals(paired ? Arrays.asList(4, 5) : Arrays.asList(5), failed, what);
            // without statuses: the first too-long input throws, naming it
            EdgeBertException e = expect(SEQUENCE_TOO_LONG, () -> many(packed, which, texts, b, null));
            assertTrue(e.getMessage().startsWith("texts[" + failed.get(0) + "]"), e.getMessage());
          }
        }
      }
    }
  }

  static String caseText(String model, String c, String file) {
    return TasksTest.text(model, c, file);
  }

  @Test
  void manyMatchesTheNumpyGoldens() {
    for (String name : MODELS) {
      for (String kind : new String[] {"fp32", "int8"}) {
        try (Model m = Model.load(TestData.ebm(name, kind)); Session s = m.newSession(1, 0, false, 0, 256)) {
          Output which = outputOf(m);
          String file = which.name().toLowerCase(java.util.Locale.ROOT) + ".f32";
          int checked = 0;
          for (String c : new String[] {"text", "text_pair"}) {
            Path golden = TestData.dir().resolve(name).resolve("cases").resolve(c).resolve(file);
            if (!Files.exists(golden)) {
              continue;
            }
            float[] want = TestData.floats(golden);
            float[][] got = c.equals("text")
                ? many(s, which, new String[] {"who", caseText(name, c, "text.txt"), "a b"}, null, null)
                : many(s, which, new String[] {"who", caseText(name, c, "text_a.txt"), "a b"},
                       new String[] {"c", caseText(name, c, "text_b.txt"), "d"}, null);
            assertEquals(3, got.length);
            if (kind.equals("fp32")) {
              assertTrue(TestData.maxAbsDiff(want, got[1]) <= 1e-3, name + " " + c);
            } else {
              assertTrue(TestData.cosine(want, 0, got[1], 0, want.length) >= 0.99, name + " " + c);
            }
            checked++;
          }
          assertTrue(checked >= 1, "no golden " + file + " for " + name);
        }
      }
    }
  }

  @Test
  void badInputsAndClosedSessionsThrow() {
    try (Model m = Model.load(TestData.ebm("task_bert_seqcls_tanh", "int8"))) {
      Session s = m.newSession(1, 0, false, 0, 256);
      int labels = m.info().numLabels;
      expect(INVALID_ARGUMENT, () -> s.classifyMany(null));
      expect(INVALID_ARGUMENT, () -> s.classifyMany(new String[] {"ok", null}));
      expect(INVALID_ARGUMENT, () -> s.classifyMany(new String[] {"nul\0inside"}));
      expect(INVALID_ARGUMENT, () -> s.classifyMany(new String[] {"a", "b"}, new String[] {"c"}));
      EdgeBertException e = expect(INVALID_ARGUMENT, () -> s.classifyMany(new String[] {"a"}, new String[] {null}));
      assertTrue(e.getMessage().contains("pairs[0]"), e.getMessage());
      expect(INVALID_ARGUMENT, () -> s.classifyMany(new String[] {"a"}, null, new int[2]));
      assertEquals(0, s.classifyMany(new String[0]).length);
      assertEquals(0, s.embedMany(new String[0], new String[0]).length);  // BERT classifiers have a pooler
      assertEquals(labels, s.classifyMany(new String[] {"a"})[0].length);
      s.close();
      expect(BAD_STATE, () -> s.classifyMany(new String[] {"a"}));
      expect(BAD_STATE, () -> s.classifyMany(new String[0]));
      expect(BAD_STATE, () -> s.embedMany(new String[] {"a"}));
    }
    try (Model m = Model.load(TestData.ebm("task_st_mean_norm", "int8")); Session s = m.newSession(1, 0)) {
      expect(UNSUPPORTED, () -> s.classifyMany(new String[] {"a"}));
    }
    try (Model m = Model.load(TestData.ebm("task_distil_seqcls_relu", "int8")); Session s = m.newSession(1, 0)) {
      expect(UNSUPPORTED, () -> s.embedMany(new String[] {"a"}));
    }
    try (Model m = Model.load(TestData.ebm("task_bert_model_relu", "int8"))) {
      expect(INVALID_ARGUMENT, () -> m.newSession(1, MAX_LEN, false, 0, MAX_LEN - 1));
      expect(INVALID_ARGUMENT, () -> m.newSession(1, MAX_LEN, false, 0, -1));
    }
  }

  // classify is eb_session_classify_many of one text (its label index), tokenLabels
  // eb_session_get_token_labels: both the argmax of a single run's logits.
  @Test
  void classifyAndTokenLabelsComeFromTheLibrary() {
    String[] texts = texts();
    for (String kind : new String[] {"int8", "fp32"}) {
      try (Model m = Model.load(TestData.ebm("task_bert_seqcls_tanh", kind));
           Session s = m.newSession(1, MAX_LEN, false, 0, BATCH_TOKENS)) {
        int[] statuses = new int[texts.length];
        float[][] logits = s.classifyMany(texts, null, statuses);
        for (int i = 0; i < texts.length; i++) {
          if (statuses[i] != 0) {
            final String t = texts[i];
            EdgeBertException e = expect(SEQUENCE_TOO_LONG, () -> s.classify(t));
            assertTrue(e.getMessage().contains("the session maximum is " + MAX_LEN), e.getMessage());
            continue;
          }
          assertEquals(m.label(argmax(logits[i], 0, logits[i].length)), s.classify(texts[i]), kind + " " + i);
        }
        EdgeBertException e = expect(SEQUENCE_TOO_LONG, () -> s.classifyMany(texts, pairs(texts.length)));
        assertTrue(e.getMessage().startsWith("texts[4], pairs[4]: "), e.getMessage());
      }
      try (Model m = Model.load(TestData.ebm("task_bert_token", kind)); Session s = m.newSession(1, 0)) {
        String text = "the staff was rude and slow .";
        TokenLabel[] got = s.tokenLabels(text);
        s.runText(text);
        float[] logits = s.output(Output.TOKEN_LOGITS);
        int labels = m.info().numLabels;
        TokenOffsets o = s.tokenOffsets();
        List<String> want = new ArrayList<>();
        for (int i = 0; i < o.size(); i++) {
          if (o.segment[i] >= 0) {
            want.add(m.label(argmax(logits, i * labels, labels)));
          }
        }
        assertTrue(want.size() > 3);
        assertEquals(want.size(), got.length);
        for (int i = 0; i < got.length; i++) {
          assertEquals(want.get(i), got[i].label, kind + " token " + i);
        }
      }
      try (Model m = Model.load(TestData.ebm("task_bert_seqcls_tanh", kind)); Session s = m.newSession(1, 0)) {
        expect(UNSUPPORTED, () -> s.tokenLabels("the staff"));
      }
    }
  }

  static int argmax(float[] v, int offset, int n) {
    int best = 0;
    for (int i = 1; i < n; i++) {
      if (v[offset + i] > v[offset + best]) {
        best = i;
      }
    }
    return best;
  }
}
