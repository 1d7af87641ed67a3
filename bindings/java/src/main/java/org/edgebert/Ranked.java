// SPDX-License-Identifier: Apache-2.0
// Ranked: one passage of a cross-encoder's ranking (Session.rerank): its index in the passages
// and its relevance score.
package org.edgebert;

public final class Ranked {
  /** Index of the passage in the array passed to {@link Session#rerank(String, String[])}. */
  public final int index;
  /** The model's score: the raw logit or its sigmoid (see {@link Session#rerank(String, String[])}). */
  public final float score;

  Ranked(int index, float score) {
    this.index = index;
    this.score = score;
  }

  @Override
  public String toString() {
    return index + " " + score;
  }
}
