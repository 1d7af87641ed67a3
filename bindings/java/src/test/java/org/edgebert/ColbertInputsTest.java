// SPDX-License-Identifier: Apache-2.0
// ColbertInputsTest: ColBERT queries and documents as PyLate encodes them: Session.setColbertInput
// (eb_session_set_colbert_input) and Session.tokenVectors (eb_session_get_token_vectors) on the
// PyLate test model (tests/reference/colbert_numpy.py: query marker [unused0] = 1, document marker
// [unused1] = 2, query_length 12 with [MASK] expansion attended by no token, document_length 16,
// the ASCII punctuation as skiplist). A query's ids and its rows (all of them, bitwise
// Output.TOKEN_VECTORS', equal to a run of its ids with the expansion masked); a document's ids
// and its rows without the skiplist's; packed queries and documents (Session.runTexts) equal to
// single runs; PyLate's truncation; and the errors.
package org.edgebert;

import static org.edgebert.EdgeBertException.BAD_STATE;
import static org.edgebert.EdgeBertException.INVALID_ARGUMENT;
import static org.edgebert.EdgeBertException.SEQUENCE_TOO_LONG;
import static org.edgebert.EdgeBertException.UNSUPPORTED;
import static org.edgebert.Support.expect;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class ColbertInputsTest {
  static final int CLS = 101, SEP = 102, MASK = 103;
  static final int QUERY_MARKER = 1, DOCUMENT_MARKER = 2;  // [unused0], [unused1]
  static final int QUERY_LENGTH = 12, DOCUMENT_LENGTH = 16, DIM = 24;
  static final String QUERY = "the movie was good";
  static final String DOCUMENT = "the movie , was good !";
  static final String[] DOCUMENTS = {DOCUMENT, "a long film ( and boring ) ?", "the staff was rude ~ and slow"};  // "~": [UNK]
  static final String[] QUERIES = {QUERY, "is it a fun story ?"};
  static final String LONG =
      "the movie was good and the story was great but the ending was bad so i think it is fine and funny";
  static final String PUNCTUATION = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~";  // Python's string.punctuation

  static int[] plainIds(Session s, String text) {
    s.setColbertInput(ColbertInput.PLAIN);
    s.runText(text);
    return s.inputIds();
  }

  // The ids of PyLate's default skiplist, each character as the model's tokenizer gives it alone
  // (one outside the vocabulary: [UNK]).
  static Set<Integer> skipIds(Session s) {
    Set<Integer> ids = new HashSet<>();
    for (char p : PUNCTUATION.toCharArray()) {
      int[] got = plainIds(s, String.valueOf(p));
      assertTrue(got.length == 3 && got[0] == CLS && got[2] == SEP, p + ": " + Arrays.toString(got));
      ids.add(got[1]);
    }
    return ids;
  }

  static int[] concat(int[]... parts) {
    int n = 0;
    for (int[] p : parts) {
      n += p.length;
    }
    int[] out = new int[n];
    int at = 0;
    for (int[] p : parts) {
      System.arraycopy(p, 0, out, at, p.length);
      at += p.length;
    }
    return out;
  }

  static int[] repeat(int id, int n) {
    int[] out = new int[n];
    Arrays.fill(out, id);
    return out;
  }

  // int8: bitwise; fp32: within 1e-5
  static void assertRowsEqual(String kind, float[] want, float[] got, String what) {
    assertEquals(want.length, got.length, what);
    if (kind.equals("int8")) {
      assertArrayEquals(want, got, what);  // Float.equals: bitwise for these finite values
    } else {
      for (int i = 0; i < want.length; i++) {
        assertEquals(want[i], got[i], 1e-5 + 1e-5 * Math.abs(want[i]), what + " element " + i);
      }
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"int8", "fp32"})
  void queryIsMarkedAndExpanded(String kind) {
    try (Model m = Model.load(TestData.ebm("colbert", kind)); Session s = m.newSession(1, 0)) {
      assertEquals(DIM, m.info().numLabels);
      int[] plain = plainIds(s, QUERY);
      int[] words = Arrays.copyOfRange(plain, 1, plain.length - 1);
      assertTrue(plain[0] == CLS && plain[plain.length - 1] == SEP && words.length == 4);
      s.setColbertInput(ColbertInput.QUERY);
      s.runText(QUERY);
      int expansion = QUERY_LENGTH - words.length - 3;
      int[] ids = s.inputIds();
      assertArrayEquals(concat(new int[] {CLS, QUERY_MARKER}, words, new int[] {SEP}, repeat(MASK, expansion)), ids);
      float[] got = s.tokenVectors(0);
      float[] output = s.output(Output.TOKEN_VECTORS);
      assertEquals(QUERY_LENGTH * DIM, got.length);
      assertArrayEquals(new long[] {QUERY_LENGTH, DIM}, s.outputShape(Output.TOKEN_VECTORS));
      assertArrayEquals(output, got);
      s.setColbertInput(ColbertInput.PLAIN);  // keeps the last run's outputs
      assertArrayEquals(got, s.tokenVectors(0));
      // the expansion is attended by no token (attend_to_expansion_tokens false): a run of the
      // same ids with mask 0 there
      int[] mask = concat(repeat(1, QUERY_LENGTH - expansion), repeat(0, expansion));
      s.runIds(ids, null, mask);
      assertRowsEqual(kind, got, s.output(Output.TOKEN_VECTORS), "query by ids");
      s.runText(QUERY);
      assertArrayEquals(plain, s.inputIds());
      assertEquals(plain.length * DIM, s.tokenVectors(0).length);
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"int8", "fp32"})
  void documentLeavesOutTheSkiplist(String kind) {
    try (Model m = Model.load(TestData.ebm("colbert", kind)); Session s = m.newSession(1, 0)) {
      Set<Integer> skip = skipIds(s);
      assertFalse(skip.contains(CLS) || skip.contains(SEP) || skip.contains(DOCUMENT_MARKER));
      int[] plain = plainIds(s, DOCUMENT);
      int[] words = Arrays.copyOfRange(plain, 1, plain.length - 1);
      assertEquals(6, words.length);
      s.setColbertInput(ColbertInput.DOCUMENT);
      s.runText(DOCUMENT);
      int[] ids = s.inputIds();
      assertArrayEquals(concat(new int[] {CLS, DOCUMENT_MARKER}, words, new int[] {SEP}), ids);
      float[] all = s.output(Output.TOKEN_VECTORS);
      assertEquals(ids.length * DIM, all.length);  // the output keeps every row
      float[] want = new float[(ids.length - 2) * DIM];  // without "," and "!"
      int rows = 0;
      for (int t = 0; t < ids.length; t++) {
        if (!skip.contains(ids[t])) {
          assertTrue(rows < ids.length - 2, "more than 2 rows are in the skiplist");
          System.arraycopy(all, t * DIM, want, rows * DIM, DIM);
          rows++;
        }
      }
      assertEquals(ids.length - 2, rows);
      assertArrayEquals(want, s.tokenVectors(0));
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"int8", "fp32"})
  void packedRunsEqualSingleRuns(String kind) {
    try (Model m = Model.load(TestData.ebm("colbert", kind)); Session s = m.newSession(1, 0)) {
      Set<Integer> skip = skipIds(s);
      for (ColbertInput mode : new ColbertInput[] {ColbertInput.DOCUMENT, ColbertInput.QUERY}) {
        String[] texts = mode == ColbertInput.DOCUMENT ? DOCUMENTS : QUERIES;
        s.setColbertInput(mode);
        float[][] single = new float[texts.length][];
        for (int k = 0; k < texts.length; k++) {
          s.runText(texts[k]);
          int[] ids = s.inputIds();
          single[k] = s.tokenVectors(0);
          int rows = QUERY_LENGTH;
          if (mode == ColbertInput.DOCUMENT) {
            rows = 0;
            for (int id : ids) {
              rows += skip.contains(id) ? 0 : 1;
            }
          }
          assertEquals(rows * DIM, single[k].length, mode + " " + texts[k] + " " + Arrays.toString(ids));
        }
        assertArrayEquals(new int[texts.length], s.runTexts(texts));  // every text taken, each OK
        for (int k = 0; k < texts.length; k++) {
          assertRowsEqual(kind, single[k], s.tokenVectors(k), mode + " " + k);
        }
        int n = texts.length;
        expect(INVALID_ARGUMENT, () -> s.tokenVectors(n));
        if (mode == ColbertInput.DOCUMENT) {  // "~" is [UNK], in the skiplist
          assertEquals((DOCUMENTS[2].split(" ").length + 3 - 1) * DIM, single[2].length);
        }
      }
    }
  }

  @Test
  void truncationAsPylate() {
    try (Model m = Model.load(TestData.ebm("colbert", "int8")); Session s = m.newSession(1, 0)) {
      int[] plain = plainIds(s, LONG);
      int[] words = Arrays.copyOfRange(plain, 1, plain.length - 1);
      assertEquals(LONG.split(" ").length, words.length);
      for (ColbertInput mode : new ColbertInput[] {ColbertInput.QUERY, ColbertInput.DOCUMENT}) {
        int marker = mode == ColbertInput.QUERY ? QUERY_MARKER : DOCUMENT_MARKER;
        int limit = mode == ColbertInput.QUERY ? QUERY_LENGTH : DOCUMENT_LENGTH;
        s.setColbertInput(mode);
        s.setTruncation(Session.TRUNCATION_NONE);
        expect(SEQUENCE_TOO_LONG, () -> s.runText(LONG));
        s.setTruncation(Session.TRUNCATION_LONGEST_FIRST);
        s.runText(LONG);
        assertArrayEquals(concat(new int[] {CLS, marker}, Arrays.copyOf(words, limit - 3), new int[] {SEP}),
                          s.inputIds(), mode.toString());
        assertEquals(limit * DIM, s.tokenVectors(0).length, mode.toString());  // no punctuation, no expansion
      }
    }
  }

  @Test
  void errors() {
    try (Model m = Model.load(TestData.ebm("task_st_mean_norm", "int8")); Session s = m.newSession(1, 0)) {
      s.setColbertInput(ColbertInput.PLAIN);  // a model without PyLate conventions
      expect(UNSUPPORTED, () -> s.setColbertInput(ColbertInput.QUERY));
      expect(UNSUPPORTED, () -> s.setColbertInput(ColbertInput.DOCUMENT));
      s.runText(QUERY);
      expect(UNSUPPORTED, () -> s.tokenVectors(0));  // no token vectors
    }
    try (Model m = Model.load(TestData.ebm("colbert", "int8"))) {
      try (Session shorter = m.newSession(1, QUERY_LENGTH - 1)) {
        expect(INVALID_ARGUMENT, () -> shorter.setColbertInput(ColbertInput.QUERY));  // query_length > the maximum
        shorter.setColbertInput(ColbertInput.DOCUMENT);
      }
      Session s = m.newSession(1, 0);
      expect(BAD_STATE, () -> s.tokenVectors(0));  // no run yet
      expect(INVALID_ARGUMENT, () -> s.setColbertInput(null));
      for (ColbertInput mode : new ColbertInput[] {ColbertInput.QUERY, ColbertInput.DOCUMENT}) {
        s.setColbertInput(mode);
        expect(INVALID_ARGUMENT, () -> s.runTextPair(QUERY, DOCUMENT));
      }
      s.setColbertInput(ColbertInput.QUERY);
      s.runText(QUERY);
      for (int index : new int[] {1, -1, Integer.MAX_VALUE}) {
        expect(INVALID_ARGUMENT, () -> s.tokenVectors(index));
      }
      expect(INVALID_ARGUMENT, () -> s.runTexts(new String[0]));
      expect(INVALID_ARGUMENT, () -> s.runTexts(null));
      expect(INVALID_ARGUMENT, () -> s.runTexts(new String[] {"a", null}));
      expect(INVALID_ARGUMENT, () -> s.runTexts(new String[] {"a\0b"}));
      assertEquals(QUERY_LENGTH * DIM, s.tokenVectors(0).length);  // still the last run's
      s.close();
      expect(BAD_STATE, () -> s.setColbertInput(ColbertInput.PLAIN));
      expect(BAD_STATE, () -> s.setColbertInput(ColbertInput.QUERY));
      expect(BAD_STATE, () -> s.tokenVectors(0));
      expect(BAD_STATE, () -> s.runTexts(new String[] {QUERY}));
    }
    assertEquals(0, ColbertInput.PLAIN.code());
    assertEquals(1, ColbertInput.QUERY.code());
    assertEquals(2, ColbertInput.DOCUMENT.code());
  }

  /** MultiVector.poolTokenVectors against PyLate's hierarchical pooling run with scipy. */
  @ParameterizedTest
  @ValueSource(strings = {"centres_17_f2", "random_42_f4", "duplicates_f2", "text_doc_long_f2"})
  void poolTokenVectorsEqualsPylate(String name) {
    java.nio.file.Path cases = TestData.dir().resolve("colbert_cases");
    int factor = Integer.parseInt(name.substring(name.lastIndexOf("_f") + 2));
    float[] rows = TestData.floats(cases.resolve(name + ".pool_in.f32"));
    float[] want = TestData.floats(cases.resolve(name + ".pool_out.f32"));
    float[] got = MultiVector.poolTokenVectors(rows, 24, factor, 1);
    assertEquals(want.length, got.length);
    assertTrue(TestData.maxAbsDiff(want, got) < 1e-6, name);
    assertArrayEquals(Arrays.copyOfRange(rows, 0, 24), Arrays.copyOfRange(got, got.length - 24, got.length));
    assertArrayEquals(rows, MultiVector.poolTokenVectors(rows, 24, 1, 1));
    float[] bad = rows.clone();
    bad[7] = Float.NaN;
    expect(INVALID_ARGUMENT, () -> MultiVector.poolTokenVectors(bad, 24, factor, 1));
    expect(INVALID_ARGUMENT, () -> MultiVector.poolTokenVectors(rows, 24, 0, 1));
    expect(INVALID_ARGUMENT, () -> MultiVector.poolTokenVectors(rows, 25, factor, 1));
    expect(INVALID_ARGUMENT, () -> MultiVector.poolTokenVectors(null, 24, factor, 1));
  }
}
