// SPDX-License-Identifier: Apache-2.0
// Model: a loaded .ebm model (file or direct ByteBuffer, optionally with a packed-weight cache
// file), its info, label names, weight cache state and shared memory; makes Sessions.
package org.edgebert;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

/**
 * An immutable model: any number of sessions on any threads may share it. {@link #close()} closes
 * the model's open sessions first; any call after close throws {@link EdgeBertException} with
 * status {@link EdgeBertException#BAD_STATE}. Models and sessions hold native memory that only
 * {@code close()} frees (use try-with-resources): the garbage collector does not free an unclosed
 * one, as with ONNX Runtime's Java API (Java 8 and older Android have no {@code Cleaner}, and
 * finalizers run late or never).
 */
public final class Model implements AutoCloseable {
  static {
    NativeLibrary.load();
  }

  private long handle;           // native JniModel*
  private boolean closing;
  private final ByteBuffer data; // zero-copy loads use this memory until close
  private final List<Session> sessions = new ArrayList<>();

  private Model(long handle, ByteBuffer data) {
    this.handle = handle;
    this.data = data;
  }

  /** Maps the model file read-only and verifies it. */
  public static Model load(String path) {
    if (path == null) {
      throw new EdgeBertException(EdgeBertException.INVALID_ARGUMENT, "path is null");
    }
    return new Model(nLoadFile(Strings.cString(path, "path")), null);
  }

  /**
   * Maps the model file with a packed-weight cache file at weightCachePath (null or "": none):
   * the first load packs and writes it, later loads map it. Never a load error of its own and
   * never other outputs: {@link #weightCache()} says what happened.
   */
  public static Model load(String path, String weightCachePath) {
    if (weightCachePath == null) {
      return load(path);
    }
    if (path == null) {
      throw new EdgeBertException(EdgeBertException.INVALID_ARGUMENT, "path is null");
    }
    return new Model(nLoadFileCached(Strings.cString(path, "path"), Strings.cString(weightCachePath, "weightCachePath")),
                     null);
  }

  /**
   * Loads a model from a direct ByteBuffer (its bytes from position to limit). A 64-byte aligned
   * buffer is used in place (zero copy; it must stay unchanged until close); otherwise the bytes
   * are copied once into aligned memory the model owns.
   */
  public static Model load(ByteBuffer direct) {
    return load(direct, null);
  }

  /** {@link #load(ByteBuffer)} with a packed-weight cache file (null: none), as {@link #load(String, String)}. */
  public static Model load(ByteBuffer direct, String weightCachePath) {
    if (direct == null || !direct.isDirect()) {
      throw new EdgeBertException(EdgeBertException.INVALID_ARGUMENT, "Model.load needs a direct ByteBuffer");
    }
    byte[] cache = weightCachePath == null ? null : Strings.cString(weightCachePath, "weightCachePath");
    return new Model(nLoadBuffer(direct, direct.position(), direct.remaining(), cache), direct);
  }

  /** Version of the native library ("MAJOR.MINOR.PATCH"). */
  public static String version() {
    return NativeLibrary.version();
  }

  private long ptr() {
    if (handle == 0 || closing) {
      throw new EdgeBertException(EdgeBertException.BAD_STATE, "model is closed");
    }
    return handle;
  }

  public synchronized ModelInfo info() {
    int[] v = new int[14];
    nInfo(ptr(), v);
    return new ModelInfo(v);
  }

  /** Name of label {@code index} (the checkpoint's id2label, else "LABEL_i"). */
  public synchronized String label(int index) {
    return Strings.fromUtf8(nLabel(ptr(), index));
  }

  /** What happened to this model's weight cache file. */
  public synchronized WeightCache weightCache() {
    int[] state = new int[1];
    byte[] message = nWeightCache(ptr(), state);
    return new WeightCache(state[0], Strings.fromUtf8(message));
  }

  /** Memory shared by every session of this model. */
  public synchronized ModelMemory memory() {
    long[] v = new long[2];
    nMemory(ptr(), v);
    return new ModelMemory(v[0], v[1]);
  }

  /** All label names in index order (empty without labels). */
  public String[] labels() {
    String[] names = new String[info().numLabels];
    for (int i = 0; i < names.length; i++) {
      names[i] = label(i);
    }
    return names;
  }

  /** A new session: threads (0 or 1 = single-threaded), maxSequenceLength (0 = the model's maximum). */
  public Session newSession(int threads, int maxSequenceLength) {
    return newSession(threads, maxSequenceLength, false, 0);
  }

  /**
   * A new session with every option of eb_session_options: splitSpecialTokens treats "[CLS]" etc.
   * in text as plain text; maxMemoryBytes (0 = no limit) makes creation fail with OUT_OF_MEMORY
   * when the session would need more.
   */
  public Session newSession(int threads, int maxSequenceLength, boolean splitSpecialTokens, long maxMemoryBytes) {
    return newSession(threads, maxSequenceLength, splitSpecialTokens, maxMemoryBytes, 0);
  }

  /**
   * {@link #newSession(int, int, boolean, long)} with maxBatchTokens: the tokens one packed run of
   * {@link Session#embedMany(String[])} / {@link Session#classifyMany(String[])} holds (0 =
   * maxSequenceLength; else at least maxSequenceLength, or creation fails with INVALID_ARGUMENT).
   */
  public synchronized Session newSession(int threads, int maxSequenceLength, boolean splitSpecialTokens,
                                         long maxMemoryBytes, int maxBatchTokens) {
    if (maxMemoryBytes < 0) {
      throw new EdgeBertException(EdgeBertException.INVALID_ARGUMENT, "maxMemoryBytes must not be negative");
    }
    long p = ptr();
    int hidden = info().hiddenSize;
    Session s = new Session(this, nCreateSession(p, threads, maxSequenceLength, splitSpecialTokens ? 1 : 0,
                                                 maxMemoryBytes, maxBatchTokens), hidden);
    sessions.add(s);
    return s;
  }

  synchronized void forget(Session s) {
    sessions.remove(s);
  }

  /** Closes the open sessions, then frees the model. Idempotent. */
  @Override
  public void close() {
    List<Session> open;
    synchronized (this) {
      if (handle == 0 || closing) {
        return;
      }
      closing = true;  // no new sessions from here on
      open = new ArrayList<>(sessions);
    }
    for (Session s : open) {
      s.close();  // waits for a run in progress on another thread
    }
    synchronized (this) {
      nFree(handle);
      handle = 0;
    }
  }

  public synchronized boolean isClosed() {
    return handle == 0 || closing;
  }

  private static native long nLoadFile(byte[] path);
  private static native long nLoadFileCached(byte[] path, byte[] weightCachePath);
  private static native long nLoadBuffer(ByteBuffer direct, int offset, int size, byte[] weightCachePath);
  private static native byte[] nWeightCache(long model, int[] state);
  private static native void nMemory(long model, long[] out);
  private static native void nInfo(long model, int[] out);
  private static native byte[] nLabel(long model, int index);
  private static native long nCreateSession(long model, int threads, int maxSeq, int splitSpecial, long maxMemory,
                                            int maxBatchTokens);
  private static native void nFree(long model);
}
