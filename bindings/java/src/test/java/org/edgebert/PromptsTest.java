// SPDX-License-Identifier: Apache-2.0
// PromptsTest: Session.setPrompt / embed(text, prompt) / setEmbeddingDims on the EmbeddingGemma-
// shaped test model (gemma3_st_dense: prompts "query" and "document"): a prompt run has the ids and
// the embedding of the run on prompt + text (one string, as sentence-transformers tokenizes it),
// differs from the plain run, is per call with embed(text, prompt), holds in embedMany; dims
// truncate and re-normalize the full vector; unknown prompts and dims throw INVALID_ARGUMENT.
package org.edgebert;

import static org.edgebert.EdgeBertException.INVALID_ARGUMENT;
import static org.edgebert.Support.expect;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import org.junit.jupiter.api.Test;

class PromptsTest {
  static final String QUERY = "task: search result | query: ";
  static final String TEXT = "Which planet is known as the Red Planet?";

  @Test
  void promptsAndDims() {
    try (Model m = Model.load(TestData.ebm("gemma3_st_dense", "fp32")); Session s = m.newSession(1, 96)) {
      float[] plain = s.embed(TEXT);
      s.setPrompt("query");
      float[] prompted = s.embed(TEXT);
      int[] ids = s.inputIds();
      s.setPrompt(null);
      float[] joined = s.embed(QUERY + TEXT);
      assertArrayEquals(ids, s.inputIds());
      assertArrayEquals(joined, prompted, 1e-6f);
      assertFalse(Arrays.equals(plain, prompted));
      assertArrayEquals(prompted, s.embed(TEXT, "query"), 0f);
      assertArrayEquals(plain, s.embed(TEXT), 0f);  // embed(text, prompt) is for that call only
      s.setPrompt("query");
      float[][] many = s.embedMany(new String[] {TEXT, "Mars is red."});
      assertArrayEquals(prompted, many[0], 1e-5f);
      s.setEmbeddingDims(16);
      float[] shortVec = s.embed(TEXT);
      assertEquals(16, shortVec.length);
      double norm = 0;
      for (int i = 0; i < 16; ++i) norm += (double) prompted[i] * prompted[i];
      for (int i = 0; i < 16; ++i) assertEquals(prompted[i] / Math.sqrt(norm), shortVec[i], 1e-5);
      assertEquals(16, s.embedMany(new String[] {TEXT})[0].length);
      EdgeBertException e = expect(INVALID_ARGUMENT, () -> s.setPrompt("passage"));
      assertTrue(e.getMessage().contains("query") && e.getMessage().contains("document"), e.getMessage());
      expect(INVALID_ARGUMENT, () -> s.setEmbeddingDims(65));
    }
  }
}
