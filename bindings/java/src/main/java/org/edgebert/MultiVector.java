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

  /**
   * PyLate's hierarchical pooling of one document's token vectors (eb_pool_token_vectors, as
   * ColBERT.encode(..., pool_factor) pools documents): the first protectedTokens rows are kept, the
   * others are clustered (Ward) into max(rows / poolFactor, 1) clusters and replaced by their means;
   * returns the means, then the protected rows, row-major [pooled * dim]. vectors [tokens * dim]
   * as {@link Session#tokenVectors(int)} gives them. poolFactor 1 returns a copy. Throws
   * INVALID_ARGUMENT for a null or empty array, dim <= 0, a length that is not a multiple of dim,
   * poolFactor < 1, protectedTokens < 0 or a value that is not finite.
   */
  public static float[] poolTokenVectors(float[] vectors, int dim, int poolFactor, int protectedTokens) {
    if (vectors == null || vectors.length == 0 || dim <= 0 || vectors.length % dim != 0) {
      throw new EdgeBertException(EdgeBertException.INVALID_ARGUMENT, "poolTokenVectors: needs rows of dim "
                                  + dim + " values, got " + (vectors == null ? "null" : vectors.length + " values"));
    }
    if (poolFactor < 1 || protectedTokens < 0) {
      throw new EdgeBertException(EdgeBertException.INVALID_ARGUMENT, "poolTokenVectors: poolFactor must be >= 1 and "
                                  + "protectedTokens >= 0, got " + poolFactor + ", " + protectedTokens);
    }
    NativeLibrary.load();
    return nPoolTokenVectors(vectors, vectors.length / dim, dim, poolFactor, protectedTokens);
  }

  private static native float nMaxSim(float[] q, int qTokens, float[] d, int dTokens, int dim);

  private static native float[] nPoolTokenVectors(float[] v, int rows, int dim, int poolFactor, int protectedTokens);
}
