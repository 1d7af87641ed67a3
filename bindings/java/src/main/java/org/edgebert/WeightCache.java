// SPDX-License-Identifier: Apache-2.0
// WeightCache: what happened to a model's packed-weight cache file (the C eb_weight_cache_state
// and its message).
package org.edgebert;

public final class WeightCache {
  /** No cache file was asked for. */
  public static final int NONE = 0;
  /** A valid cache file is mapped: nothing was packed. */
  public static final int LOADED = 1;
  /** Packed, and the cache file was written (new, or rebuilt: the message says why). */
  public static final int CREATED = 2;
  /** Asked for but not used (no cache API in this XNNPACK, or not writable): the message says why. */
  public static final int UNAVAILABLE = 3;

  public final int state;        // one of the constants above
  public final String message;   // a readable reason, "" when there is nothing to say

  WeightCache(int state, String message) {
    this.state = state;
    this.message = message;
  }

  @Override
  public String toString() {
    String[] names = {"NONE", "LOADED", "CREATED", "UNAVAILABLE"};
    String name = state >= 0 && state < names.length ? names[state] : Integer.toString(state);
    return message.isEmpty() ? name : name + ": " + message;
  }
}
