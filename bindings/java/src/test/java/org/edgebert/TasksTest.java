// SPDX-License-Identifier: Apache-2.0
// TasksTest: task outputs one call away: for each converted test model with a task head, its
// outputs and shapes, its label names, and bestSpan() equal to a brute-force search over the
// start/end logits and token offsets.
package org.edgebert;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

class TasksTest {
  static final String QUESTION = "What was fresh?";
  static final String CONTEXT = "She said the food at the restaurant was fresh and delicious, and the staff was great.";

  static List<String> models(Task task) throws IOException {
    List<String> found = new ArrayList<>();
    try (Stream<Path> files = Files.list(TestData.dir().resolve("ebm"))) {
      for (Path p : (Iterable<Path>) files.sorted()::iterator) {
        try (Model m = Model.load(p.toString())) {
          if (m.info().task == task) {
            found.add(p.toString());
          }
        }
      }
    }
    assertFalse(found.isEmpty(), "no " + task + " model in the test data");
    return found;
  }

  @Test
  void labelsAreTheCheckpointsId2Label() {
    try (Model m = Model.load(TestData.ebm("task_bert_seqcls_tanh", "int8"))) {
      assertArrayEquals(new String[] {"negative", "neutral", "positive"}, m.labels());
    }
    try (Model m = Model.load(TestData.ebm("task_bert_token", "fp32"))) {
      assertArrayEquals(new String[] {"O", "B-PER", "I-PER", "B-LOC", "I-LOC"}, m.labels());
    }
  }

  @Test
  void answerMatchesTheGolden() {
    Path d = TestData.dir().resolve("task_bert_qa").resolve("cases").resolve("text_pair");
    String question = new String(TestData.bytes(d.resolve("text_a.txt")), StandardCharsets.UTF_8);
    String context = new String(TestData.bytes(d.resolve("text_b.txt")), StandardCharsets.UTF_8);
    String[] best = new String(TestData.bytes(d.resolve("best_span.txt")), StandardCharsets.US_ASCII).trim().split("\\s+");
    try (Model m = Model.load(TestData.ebm("task_bert_qa", "fp32")); Session s = m.newSession(1, 0)) {
      s.runTextPair(question, context);
      Span span = s.bestSpan(Integer.parseInt(best[6]));
      assertEquals(Integer.parseInt(best[0]), span.startToken);
      assertEquals(Integer.parseInt(best[1]), span.endToken);
      assertEquals(new String(TestData.bytes(d.resolve("answer.txt")), StandardCharsets.UTF_8), span.text);
      assertEquals(Float.parseFloat(best[4]), span.score, 1e-3);
      float[] start = TestData.floats(d.resolve("start_logits.f32"));
      assertEquals(0, TestData.maxAbsDiff(start, s.output(Output.START_LOGITS)), 1e-3);
    }
  }

  static String text(String model, String c, String file) {
    return new String(TestData.bytes(TestData.dir().resolve(model).resolve("cases").resolve(c).resolve(file)),
                      StandardCharsets.UTF_8);
  }

  @Test
  void oneCallHelpersMatchTheGoldens() {
    String t = text("task_bert_token", "text", "text.txt");
    try (Model m = Model.load(TestData.ebm("task_bert_token", "fp32")); Session s = m.newSession(1, 0)) {
      TokenLabel[] got = s.tokenLabels(t);
      Path d = TestData.dir().resolve("task_bert_token").resolve("cases").resolve("text");
      int[] off = TestData.ints(d.resolve("offsets.txt"));
      float[] logits = TestData.floats(d.resolve("token_logits.f32"));
      String[] names = {"O", "B-PER", "I-PER", "B-LOC", "I-LOC"};
      int k = 0;
      for (int i = 0; i < off.length / 3; i++) {
        if (off[3 * i + 2] < 0) {
          continue;
        }
        int best = 0;
        for (int j = 1; j < 5; j++) {
          best = logits[i * 5 + j] > logits[i * 5 + best] ? j : best;
        }
        assertEquals(off[3 * i], got[k].begin);
        assertEquals(off[3 * i + 1], got[k].end);
        assertEquals(names[best], got[k].label);
        k++;
      }
      assertEquals(k, got.length);
      EdgeBertException e = assertThrows(EdgeBertException.class, () -> s.embed("x"));
      assertEquals(EdgeBertException.UNSUPPORTED, e.status());
    }
    try (Model m = Model.load(TestData.ebm("task_bert_seqcls_tanh", "fp32")); Session s = m.newSession(1, 0)) {
      float[] g = TestData.floats(TestData.dir().resolve("task_bert_seqcls_tanh/cases/text/logits.f32"));
      int best = g[0] >= g[1] && g[0] >= g[2] ? 0 : (g[1] >= g[2] ? 1 : 2);
      assertEquals(new String[] {"negative", "neutral", "positive"}[best], s.classify(text("task_bert_seqcls_tanh", "text", "text.txt")));
    }
    try (Model m = Model.load(TestData.ebm("task_st_mean_norm", "fp32")); Session s = m.newSession(1, 0)) {
      float[] g = TestData.floats(TestData.dir().resolve("task_st_mean_norm/cases/text/sentence_embedding.f32"));
      assertEquals(0, TestData.maxAbsDiff(g, s.embed(text("task_st_mean_norm", "text", "text.txt"))), 1e-3);
    }
    try (Model m = Model.load(TestData.ebm("task_bert_qa", "fp32")); Session s = m.newSession(1, 0)) {
      Span a = s.answer(text("task_bert_qa", "text_pair", "text_a.txt"), text("task_bert_qa", "text_pair", "text_b.txt"), 5);
      assertEquals(text("task_bert_qa", "text_pair", "answer.txt"), a.text);
    }
  }

  @Test
  void sentenceEmbeddings() throws IOException {
    for (String path : models(Task.SENTENCE_EMBEDDING)) {
      try (Model m = Model.load(path); Session s = m.newSession(1, 0)) {
        s.runText("the food was fresh");
        assertArrayEquals(new long[] {m.info().hiddenSize}, s.outputShape(Output.SENTENCE_EMBEDDING));
        assertEquals(m.info().hiddenSize, s.output(Output.SENTENCE_EMBEDDING).length);
      }
    }
  }

  @Test
  void tokenClassification() throws IOException {
    for (String path : models(Task.TOKEN_CLASSIFICATION)) {
      try (Model m = Model.load(path); Session s = m.newSession(1, 0)) {
        s.runText("the food was fresh");
        int n = s.inputIds().length;
        int labels = m.info().numLabels;
        assertArrayEquals(new long[] {n, labels}, s.outputShape(Output.TOKEN_LOGITS));
        assertEquals(labels, m.labels().length);
        for (String name : m.labels()) {
          assertTrue(name != null && !name.isEmpty());
        }
      }
    }
  }

  @Test
  void bestSpanIsTheBruteForceBest() throws IOException {
    for (String path : models(Task.QUESTION_ANSWERING)) {
      try (Model m = Model.load(path); Session s = m.newSession(1, 0)) {
        s.runTextPair(QUESTION, CONTEXT);
        float[] start = s.output(Output.START_LOGITS);
        float[] end = s.output(Output.END_LOGITS);
        TokenOffsets o = s.tokenOffsets();
        for (int maxTokens : new int[] {30, 3, 1}) {
          int bi = -1, bj = -1;
          double best = Double.NEGATIVE_INFINITY;
          for (int i = 0; i < start.length; i++) {
            for (int j = i; j < Math.min(start.length, i + maxTokens); j++) {
              if (o.segment[i] == 1 && o.segment[j] == 1 && (double) start[i] + end[j] > best) {
                best = (double) start[i] + end[j];
                bi = i;
                bj = j;
              }
            }
          }
          Span span = s.bestSpan(maxTokens);
          assertEquals(bi, span.startToken);
          assertEquals(bj, span.endToken);
          assertEquals(best, span.score, 1e-5);
          assertEquals(o.begin[bi], span.beginByte);
          assertEquals(o.end[bj], span.endByte);
          byte[] ctx = CONTEXT.getBytes(StandardCharsets.UTF_8);
          assertNotNull(span.text);
          assertEquals(new String(ctx, span.beginByte, span.endByte - span.beginByte, StandardCharsets.UTF_8), span.text);
        }
      }
    }
  }
}
