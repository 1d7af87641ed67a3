// SPDX-License-Identifier: Apache-2.0
// ChunkedTest: Session.embedChunked (eb_session_embed_chunked) against chunk_numpy.py's float64
// goldens (chunk/, tests/reference/chunk_numpy.py): the windows (HuggingFace's overflowing tokens
// with a stride) and each window's vector, one row per window or their token-weighted mean, on
// fp32 (within 2e-3) and int8 (cosine >= 0.99) models; MEAN equals the token-weighted mean of the
// NONE rows; String and UTF-8 byte[] texts; bad arguments, a model without sentence embeddings and
// a closed session throw EdgeBertException with the C status.
package org.edgebert;

import static org.edgebert.EdgeBertException.BAD_STATE;
import static org.edgebert.EdgeBertException.INVALID_ARGUMENT;
import static org.edgebert.EdgeBertException.SEQUENCE_TOO_LONG;
import static org.edgebert.EdgeBertException.UNSUPPORTED;
import static org.edgebert.Support.expect;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

class ChunkedTest {
  static final int MAX_LEN = 32;
  static final int BATCH_TOKENS = 64;

  static Path dir() {
    return TestData.dir().resolve("chunk");
  }

  // MEAN from the NONE rows: weights the windows' token counts (1 for an empty window), then
  // L2-normalized when the model normalizes (its reference mean has norm 1)
  static double[] weightedMean(float[][] rows, ChunkedEmbedding.Chunk[] chunks, float[] reference) {
    double[] m = new double[rows[0].length];
    double total = 0;
    for (int w = 0; w < rows.length; w++) {
      double weight = Math.max(chunks[w].tokens, 1);
      total += weight;
      for (int i = 0; i < m.length; i++) {
        m[i] += weight * rows[w][i];
      }
    }
    double norm = 0, refNorm = 0;
    for (int i = 0; i < m.length; i++) {
      m[i] /= total;
      norm += m[i] * m[i];
      refNorm += (double) reference[i] * reference[i];
    }
    boolean normalizes = Math.abs(Math.sqrt(refNorm) - 1) < 1e-4;
    for (int i = 0; i < m.length && normalizes; i++) {
      m[i] /= Math.sqrt(norm);
    }
    return m;
  }

  @Test
  void matchesTheReference() {
    String table = new String(TestData.bytes(dir().resolve("cases.txt")), StandardCharsets.US_ASCII).trim();
    int checked = 0;
    for (String line : table.split("\n")) {
      String[] f = line.trim().split(" ");
      String model = f[0], doc = f[1];
      int window = Integer.parseInt(f[2]), stride = Integer.parseInt(f[3]), windows = Integer.parseInt(f[4]);
      if (doc.equals("long") && window != 24) {
        continue;  // as the Python test: one long case per model (the C++ test runs them all)
      }
      String stem = model + "." + doc + "." + window + "." + stride;
      byte[] utf8 = TestData.bytes(dir().resolve(doc + ".txt"));
      int[] want = TestData.ints(dir().resolve(stem + ".windows.txt"));
      float[] golden = TestData.floats(dir().resolve(stem + ".none.f32"));
      float[] goldenMean = TestData.floats(dir().resolve(stem + ".mean.f32"));
      for (String kind : new String[] {"fp32", "int8"}) {
        String what = stem + " " + kind;
        try (Model m = Model.load(TestData.ebm(model, kind));
             Session s = m.newSession(1, MAX_LEN, false, 0, BATCH_TOKENS)) {
          ChunkedEmbedding none = s.embedChunked(new String(utf8, StandardCharsets.UTF_8), window, stride,
                                                 ChunkPooling.NONE);
          assertEquals(windows, none.chunks.length, what);
          assertEquals(4 * windows, want.length, what);
          for (int w = 0; w < windows; w++) {
            ChunkedEmbedding.Chunk c = none.chunks[w];
            assertArrayEquals(new int[] {want[4 * w], want[4 * w + 1], want[4 * w + 2], want[4 * w + 3]},
                              new int[] {c.firstToken, c.tokens, c.beginByte, c.endByte}, what + " window " + w);
          }
          int width = golden.length / windows;
          assertEquals(windows, none.vectors.length, what);
          ChunkedEmbedding mean = s.embedChunked(utf8, window, stride, ChunkPooling.MEAN);  // bytes in
          assertEquals(1, mean.vectors.length, what);
          assertEquals(width, mean.vectors[0].length, what);
          assertEquals(none.chunks.length, mean.chunks.length, what);
          for (int w = 0; w < windows; w++) {
            assertEquals(none.chunks[w].toString(), mean.chunks[w].toString(), what);
            assertEquals(width, none.vectors[w].length, what);
            if (kind.equals("fp32")) {
              for (int i = 0; i < width; i++) {
                assertEquals(golden[w * width + i], none.vectors[w][i], 2e-3, what + " window " + w + " [" + i + "]");
              }
            } else {
              assertTrue(TestData.cosine(golden, w * width, none.vectors[w], 0, width) >= 0.99, what + " window " + w);
            }
          }
          if (kind.equals("fp32")) {
            for (int i = 0; i < width; i++) {
              assertEquals(goldenMean[i], mean.vectors[0][i], 2e-3, what + " mean [" + i + "]");
            }
          } else {
            assertTrue(TestData.cosine(goldenMean, 0, mean.vectors[0], 0, width) >= 0.99, what + " mean");
          }
          double[] fromRows = weightedMean(none.vectors, none.chunks, goldenMean);
          for (int i = 0; i < width; i++) {
            assertEquals(fromRows[i], mean.vectors[0][i], 1e-5, what + " mean of the rows [" + i + "]");
          }
          checked++;
        }
      }
    }
    assertEquals(2 * 2 * 4, checked);  // 2 models x (long, short x 2, empty) x fp32 / int8
  }

  @Test
  void badArguments() {
    String text = new String(new char[20]).replace("\0", "the movie was good , not bad ! ");
    try (Model m = Model.load(TestData.ebm("task_st_mean_norm", "int8"))) {
      Session s = m.newSession(1, MAX_LEN);
      expect(INVALID_ARGUMENT, () -> s.embedChunked(text, 8, 8, ChunkPooling.NONE));  // stride >= window
      expect(INVALID_ARGUMENT, () -> s.embedChunked(text, 8, 9, ChunkPooling.MEAN));
      expect(INVALID_ARGUMENT, () -> s.embedChunked(text, 0, 0, ChunkPooling.NONE));
      expect(INVALID_ARGUMENT, () -> s.embedChunked(text, 8, -1, ChunkPooling.NONE));
      expect(SEQUENCE_TOO_LONG, () -> s.embedChunked(text, 31, 2, ChunkPooling.NONE));  // 31 + [CLS] [SEP] > 32
      expect(INVALID_ARGUMENT, () -> s.embedChunked(text, 8, 2, null));
      expect(INVALID_ARGUMENT, () -> s.embedChunked((String) null, 8, 2, ChunkPooling.NONE));
      expect(INVALID_ARGUMENT, () -> s.embedChunked((byte[]) null, 8, 2, ChunkPooling.NONE));
      expect(INVALID_ARGUMENT, () -> s.embedChunked("the \0 movie", 8, 2, ChunkPooling.NONE));
      expect(INVALID_ARGUMENT, () -> s.embedChunked("the \uD800 movie", 8, 2, ChunkPooling.NONE));
      byte[] notUtf8 = "\u00ff the movie".getBytes(StandardCharsets.ISO_8859_1);
      expect(INVALID_ARGUMENT, () -> s.embedChunked(notUtf8, 8, 2, ChunkPooling.NONE));
      // the session still works, and an empty text is one window without tokens
      ChunkedEmbedding empty = s.embedChunked(new byte[0], 8, 2, ChunkPooling.NONE);
      assertEquals(1, empty.chunks.length);
      assertEquals("0 0 0 0", empty.chunks[0].toString());
      s.close();
      expect(BAD_STATE, () -> s.embedChunked(text, 8, 2, ChunkPooling.NONE));
    }
    try (Model m = Model.load(TestData.ebm("task_bert_qa", "int8")); Session qa = m.newSession(1, MAX_LEN)) {
      expect(UNSUPPORTED, () -> qa.embedChunked(text, 8, 2, ChunkPooling.NONE));
    }
  }
}
