// SPDX-License-Identifier: Apache-2.0
// MultiVector: scoring of ColBERT token vectors (Output.TOKEN_VECTORS) over eb_maxsim.
package org.edgebert;

public final class MultiVector {
  private MultiVector() {}

  /**
   * ColBERT's MaxSim (eb_maxsim): the sum over the query's rows of the largest dot product with
   * any row of the document. query [queryTokens * dim] and document [documentTokens * dim] are
   * row-major, as {@link Session#output(Output)} returns Output.TOKEN_VECTORS; which rows to
   * pass is the caller's choice. Throws INVALID_ARGUMENT for a null or empty array, dim <= 0 or
   * a length that is not a multiple of dim.
   */
  public static float maxSim(float[] query, float[] document, int dim) {
    if (query == null || document == null) {
      throw new EdgeBertException(EdgeBertException.INVALID_ARGUMENT, "maxSim: query and document must not be null");
    }
    if (dim <= 0 || query.length % dim != 0 || document.length % dim != 0) {
      throw new EdgeBertException(EdgeBertException.INVALID_ARGUMENT, "maxSim: lengths " + query.length + " and "
                                  + document.length + " are not multiples of dim " + dim);
    }
    NativeLibrary.load();
    return nMaxSim(query, query.length / dim, document, document.length / dim, dim);
  }

  private static native float nMaxSim(float[] q, int qTokens, float[] d, int dTokens, int dim);
}
