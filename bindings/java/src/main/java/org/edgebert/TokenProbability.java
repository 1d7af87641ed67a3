// SPDX-License-Identifier: Apache-2.0
// TokenProbability: one candidate of fill-mask (Session.fillMask): a vocabulary id and its
// probability at the token.
package org.edgebert;

public final class TokenProbability {
  /** Token id (row of the model's vocabulary). */
  public final int tokenId;
  /** Its probability: the softmax over the vocabulary of the masked-LM logits at the token. */
  public final float probability;

  TokenProbability(int tokenId, float probability) {
    this.tokenId = tokenId;
    this.probability = probability;
  }

  @Override
  public String toString() {
    return tokenId + " " + probability;
  }
}
