// SPDX-License-Identifier: Apache-2.0
// ModelMemory: memory a model shares with all its sessions (the C eb_model_get_memory).
package org.edgebert;

public final class ModelMemory {
  public final long packedWeightBytes;  // packed GEMM weights held by the model (0 on XNNPACK 2022)
  public final long modelFileBytes;     // size of the model file (or buffer)

  ModelMemory(long packedWeightBytes, long modelFileBytes) {
    this.packedWeightBytes = packedWeightBytes;
    this.modelFileBytes = modelFileBytes;
  }
}
