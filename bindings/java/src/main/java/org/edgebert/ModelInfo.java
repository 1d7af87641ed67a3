// SPDX-License-Identifier: Apache-2.0
// ModelInfo: the static description of a loaded model (the C eb_model_info).
package org.edgebert;

public final class ModelInfo {
  public final int hiddenSize;
  public final int numAttentionHeads;
  public final int numHiddenLayers;
  public final int intermediateSize;
  public final int vocabSize;
  public final int maxPositionEmbeddings;
  public final int typeVocabSize;
  public final int numLabels;
  public final boolean hasPooler;
  public final boolean hasEmbeddings;
  public final boolean hasVocab;
  public final boolean isInt8;
  public final Task task;
  public final boolean isDistilBert;

  // v: the 14 int32 fields of eb_model_info in declaration order.
  ModelInfo(int[] v) {
    hiddenSize = v[0];
    numAttentionHeads = v[1];
    numHiddenLayers = v[2];
    intermediateSize = v[3];
    vocabSize = v[4];
    maxPositionEmbeddings = v[5];
    typeVocabSize = v[6];
    numLabels = v[7];
    hasPooler = v[8] != 0;
    hasEmbeddings = v[9] != 0;
    hasVocab = v[10] != 0;
    isInt8 = v[11] != 0;
    task = Task.fromCode(v[12]);
    isDistilBert = v[13] != 0;
  }

  @Override
  public String toString() {
    return "ModelInfo{hidden=" + hiddenSize + ", heads=" + numAttentionHeads + ", layers=" + numHiddenLayers
        + ", intermediate=" + intermediateSize + ", vocab=" + vocabSize + ", maxPos=" + maxPositionEmbeddings
        + ", labels=" + numLabels + ", task=" + task + (isInt8 ? ", int8" : ", fp32") + "}";
  }
}
