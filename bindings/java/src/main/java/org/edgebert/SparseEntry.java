// SPDX-License-Identifier: Apache-2.0
// SparseEntry: one entry of a sparse (SPLADE) vector (Session.sparseTopK): a vocabulary id and
// its weight.
package org.edgebert;

public final class SparseEntry {
  /** Token id (row of the model's vocabulary). */
  public final int tokenId;
  /** Its weight in the sparse vector (log(1 + relu(logit)), maximised over the sequence's tokens). */
  public final float weight;

  SparseEntry(int tokenId, float weight) {
    this.tokenId = tokenId;
    this.weight = weight;
  }

  @Override
  public String toString() {
    return tokenId + " " + weight;
  }
}
