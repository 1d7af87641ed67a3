// SPDX-License-Identifier: Apache-2.0
// Session: runs a model on text, a text pair or token ids and reads the outputs (copies).
package org.edgebert;

import java.nio.ByteOrder;
import java.nio.FloatBuffer;

/**
 * One planned arena; use one session per thread (calls on a session are synchronized, so sharing
 * one is safe but serial). Any call after {@link #close()} (or the model's close) throws
 * {@link EdgeBertException} with status {@link EdgeBertException#BAD_STATE}.
 */
public final class Session implements AutoCloseable {
  private long handle;          // native eb_session*
  private final Model model;    // keeps the model reachable while the session is open
  private final int hiddenSize;
  private byte[] context;       // UTF-8 of the last text pair's second text (for answer spans)
  private byte[][] texts = {};  // UTF-8 (NUL-terminated) of the last text run's segments (for words)

  Session(Model model, long handle, int hiddenSize) {
    this.model = model;
    this.handle = handle;
    this.hiddenSize = hiddenSize;
  }

  private long ptr() {
    if (handle == 0) {
      throw new EdgeBertException(EdgeBertException.BAD_STATE, "session is closed");
    }
    return handle;
  }

  public Model model() {
    return model;
  }

  /** Tokenizes "[CLS] text [SEP]" and runs. */
  public synchronized void runText(String text) {
    byte[] a = Strings.cString(text, "text");
    long p = ptr();
    context = null;
    texts = new byte[0][];
    nRunText(p, a);
    texts = new byte[][] {a};
  }

  /** Tokenizes "[CLS] a [SEP] b [SEP]" (token types 0 then 1) and runs; for QA, a = question, b = context. */
  public synchronized void runTextPair(String a, String b) {
    byte[] ca = Strings.cString(a, "first text");
    byte[] cb = Strings.cString(b, "second text");
    long p = ptr();
    context = null;
    texts = new byte[0][];
    nRunTextPair(p, ca, cb);
    context = cb;
    texts = new byte[][] {ca, cb};
  }

  /** Runs on token ids; types (all 0) and mask (all 1) may be null, else as long as ids. */
  public synchronized void runIds(int[] ids, int[] types, int[] mask) {
    if (ids == null) {
      throw new EdgeBertException(EdgeBertException.INVALID_ARGUMENT, "ids is null");
    }
    checkLength(types, ids.length, "types");
    checkLength(mask, ids.length, "mask");
    long p = ptr();
    context = null;
    texts = new byte[0][];
    nRunIds(p, ids, types, mask);
  }

  /** Runs from embedding-layer outputs [seqLen * hidden] (row-major); mask may be null. */
  public synchronized void runEmbeddings(float[] embeddings, int[] mask) {
    if (embeddings == null || embeddings.length % hiddenSize != 0) {
      throw new EdgeBertException(EdgeBertException.INVALID_ARGUMENT,
                                  "embeddings must hold seqLen * " + hiddenSize + " floats");
    }
    checkLength(mask, embeddings.length / hiddenSize, "mask");
    long p = ptr();
    context = null;
    texts = new byte[0][];
    nRunEmbeddings(p, embeddings, mask, hiddenSize);
  }

  private static void checkLength(int[] a, int n, String what) {
    if (a != null && a.length != n) {
      throw new EdgeBertException(EdgeBertException.INVALID_ARGUMENT,
                                  what + " has " + a.length + " values, expected " + n);
    }
  }

  /** A copy of one output of the last run. Outputs the model lacks: UNSUPPORTED. */
  public synchronized float[] output(Output which) {
    return nOutput(ptr(), code(which));
  }

  /** The output's shape: {seqLen, hidden} for LAST_HIDDEN_STATE, {n} for 1-D outputs. */
  public synchronized long[] outputShape(Output which) {
    return nShape(ptr(), code(which));
  }

  /** True when the model has this output (after a run). */
  public synchronized boolean hasOutput(Output which) {
    return nHasOutput(ptr(), code(which));
  }

  /**
   * Copies an output into dst at its position without allocating, and advances the position.
   * dst is a direct buffer in native byte order or a heap buffer, with room for the output.
   * Returns the number of floats copied.
   */
  public synchronized int output(Output which, FloatBuffer dst) {
    if (dst == null) {
      throw new EdgeBertException(EdgeBertException.INVALID_ARGUMENT, "dst is null");
    }
    if (dst.isReadOnly()) {
      throw new EdgeBertException(EdgeBertException.INVALID_ARGUMENT, "dst is read-only");
    }
    if (dst.isDirect() && dst.order() != ByteOrder.nativeOrder()) {
      throw new EdgeBertException(EdgeBertException.INVALID_ARGUMENT,
                                  "direct dst must be in native byte order (ByteBuffer.order(ByteOrder.nativeOrder()))");
    }
    if (!dst.isDirect() && !dst.hasArray()) {
      throw new EdgeBertException(EdgeBertException.INVALID_ARGUMENT,
                                  "dst must be a direct FloatBuffer or one backed by a float[]");
    }
    float[] array = dst.isDirect() ? null : dst.array();
    int offset = dst.isDirect() ? dst.position() : dst.arrayOffset() + dst.position();
    int n = nOutputInto(ptr(), code(which), dst.isDirect() ? dst : null, array, offset, dst.remaining());
    dst.position(dst.position() + n);
    return n;
  }

  private static int code(Output which) {
    if (which == null) {
      throw new EdgeBertException(EdgeBertException.INVALID_ARGUMENT, "output is null");
    }
    return which.code;
  }

  /** Token ids of the last run (after tokenization for text). */
  public synchronized int[] inputIds() {
    return nInputIds(ptr());
  }

  /** After runText / runTextPair: each token's byte range in its text and its segment. */
  public synchronized TokenOffsets tokenOffsets() {
    int[][] o = nTokenOffsets(ptr());
    return new TokenOffsets(o[0], o[1], o[2]);
  }

  /** After a text run: each token's word index within its segment (HuggingFace's word_ids()), -1 for specials. */
  public synchronized int[] wordIds() {
    return nWordIds(ptr());
  }

  /**
   * After a text run: its words in token order, with their text and (token classifiers) the label
   * of their first token.
   */
  public synchronized Word[] words() {
    int[] v = nWords(ptr());
    Word[] out = new Word[v.length / 6];
    for (int i = 0; i < out.length; i++) {
      int first = v[6 * i], last = v[6 * i + 1], segment = v[6 * i + 2], begin = v[6 * i + 3], end = v[6 * i + 4];
      int label = v[6 * i + 5];
      String text = null;
      if (0 <= segment && segment < texts.length && 0 <= begin && begin <= end && end <= texts[segment].length - 1) {
        text = Strings.fromUtf8(texts[segment], begin, end);
      }
      out[i] = new Word(first, last, segment, begin, end, text, label >= 0 ? model.label(label) : null);
    }
    return out;
  }

  /** QA models after runTextPair(question, context): the best answer (at most 30 tokens). */
  public Span bestSpan() {
    return bestSpan(30);
  }

  /** QA models after runTextPair(question, context): the best answer of at most maxAnswerTokens. */
  public synchronized Span bestSpan(int maxAnswerTokens) {
    int[] ints = new int[4];
    float[] score = new float[1];
    nBestSpan(ptr(), maxAnswerTokens, ints, score);
    String text = null;
    if (context != null && 0 <= ints[2] && ints[2] <= ints[3] && ints[3] <= context.length - 1) {
      text = Strings.fromUtf8(context, ints[2], ints[3]);
    }
    return new Span(ints[0], ints[1], ints[2], ints[3], score[0], text);
  }

  // ---- task outputs one call away (compositions of the calls above)

  /** Sentence-embedding models: the embedding of text. */
  public synchronized float[] embed(String text) {
    runText(text);
    return taskOutput(Output.SENTENCE_EMBEDDING);
  }

  /** {@link #embed(String)} with prompt {@code prompt} for this call only (see {@link #setPrompt}). */
  public synchronized float[] embed(String text, String prompt) {
    String before = this.prompt;
    setPrompt(prompt);
    try {
      return embed(text);
    } finally {
      setPrompt(before);
    }
  }

  /** Sequence classifiers: the name of the label with the largest logit. */
  public synchronized String classify(String text) {
    byte[] a = Strings.cString(text, "text");
    long p = ptr();
    context = null;
    texts = new byte[0][];
    int[] label = new int[1];
    nClassifyMany(p, a, new int[] {0}, null, null, null, label, null);  // a packed run of this one text
    texts = new byte[][] {a};
    return model.label(label[0]);
  }

  /**
   * Extractive QA models on a context of any length: one pair run when (question, context) fits
   * the session, else windows of the context's tokens overlapping by docStride tokens (< 0:
   * min(128, window / 2)), as HuggingFace's question-answering pipeline does; the best answer
   * over all windows (at most maxAnswerTokens tokens), {@link Span#windows} = windows run.
   * Afterwards the outputs and offsets are the last window's.
   */
  public synchronized Span answer(String question, String context, int maxAnswerTokens, int docStride) {
    byte[] q = Strings.cString(question, "question");
    byte[] c = Strings.cString(context, "context");
    long p = ptr();
    if (model.info().task != Task.QUESTION_ANSWERING) {
      throw new EdgeBertException(EdgeBertException.UNSUPPORTED, "answer needs a question-answering model");
    }
    this.context = null;
    texts = new byte[0][];
    int[] ints = new int[5];
    float[] score = new float[1];
    nAnswer(p, q, c, maxAnswerTokens, docStride, ints, score);
    this.context = c;
    texts = new byte[][] {q, c};
    String text = null;
    if (0 <= ints[2] && ints[2] <= ints[3] && ints[3] <= c.length - 1) {
      text = Strings.fromUtf8(c, ints[2], ints[3]);
    }
    return new Span(ints[0], ints[1], ints[2], ints[3], score[0], text, ints[4]);
  }

  /** Whether answer() runs windows over long contexts (false: a library older than eb_session_answer). */
  static boolean hasWindowedAnswer() {
    return nHasWindowedAnswer();
  }

  /** {@link #answer(String, String, int, int)} with the default stride. */
  public Span answer(String question, String context, int maxAnswerTokens) {
    return answer(question, context, maxAnswerTokens, -1);
  }

  public Span answer(String question, String context) {
    return answer(question, context, 30);
  }

  /** Token classifiers: each word piece of text (special tokens left out) with its best label. */
  public synchronized TokenLabel[] tokenLabels(String text) {
    runText(text);
    int[] labels = nTokenLabels(ptr());
    TokenOffsets o = tokenOffsets();
    byte[] utf8 = texts[0];
    java.util.List<TokenLabel> out = new java.util.ArrayList<>();
    for (int i = 0; i < o.size(); i++) {
      if (o.segment[i] >= 0) {
        out.add(new TokenLabel(o.begin[i], o.end[i], Strings.fromUtf8(utf8, o.begin[i], o.end[i]),
                               model.label(labels[i])));
      }
    }
    return out.toArray(new TokenLabel[0]);
  }

  // ---- many texts per call: packed runs (eb_session_run_texts / eb_session_run_text_pairs)

  /**
   * The embeddings of many texts, one row per text ({@code [texts.length][hidden]}), each equal to
   * a single run of that text: sentence-embedding models give their SENTENCE_EMBEDDING, other
   * models with a pooler their POOLER_OUTPUT; a model with neither: UNSUPPORTED. The texts run in
   * packed runs (as many whole texts per run as the session's maxBatchTokens holds, see
   * {@link Model#newSession(int, int, boolean, long, int)}) until all are done. A null array or
   * text, or a text with a NUL: INVALID_ARGUMENT before anything runs; no texts: an empty array.
   * A text that cannot run (longer than the session maximum: SEQUENCE_TOO_LONG) throws
   * EdgeBertException with its status and "texts[i]: " + the C message, for the first such text
   * (see {@link #embedMany(String[], String[], int[])} to get per-text statuses instead).
   * Afterwards the session's outputs are those of the last run.
   */
  public float[][] embedMany(String[] texts) {
    return embedMany(texts, null, null);
  }

  /** {@link #embedMany(String[])} of the pairs (a[i], b[i]) (a and b of the same length). */
  public float[][] embedMany(String[] a, String[] b) {
    return embedMany(a, b, null);
  }

  /**
   * {@link #embedMany(String[], String[])} (b may be null: single texts). With a non-null
   * statuses (as long as a), nothing is thrown for an input that cannot run: statuses[i]
   * receives its eb_status (0 = ok, else e.g. {@link EdgeBertException#SEQUENCE_TOO_LONG}) and
   * its row is all 0.
   */
  public synchronized float[][] embedMany(String[] a, String[] b, int[] statuses) {
    ModelInfo info = model.info();
    Output which;
    if (info.task == Task.SENTENCE_EMBEDDING) {
      which = Output.SENTENCE_EMBEDDING;
    } else if (info.hasPooler) {
      which = Output.POOLER_OUTPUT;
    } else {
      throw new EdgeBertException(EdgeBertException.UNSUPPORTED,
                                  "embedMany: this model has neither a sentence embedding nor a pooler output (task "
                                  + info.task + ")");
    }
    return runMany(a, b, statuses, which,
                   which == Output.SENTENCE_EMBEDDING && dims > 0 ? dims : info.hiddenSize);
  }

  /**
   * Sequence classifiers: the logits of many texts, {@code [texts.length][numLabels]}, each row
   * equal to a single run of that text (other models: UNSUPPORTED). Runs, inputs and failures as
   * {@link #embedMany(String[])}.
   */
  public float[][] classifyMany(String[] texts) {
    return classifyMany(texts, null, null);
  }

  /** {@link #classifyMany(String[])} of the pairs (a[i], b[i]). */
  public float[][] classifyMany(String[] a, String[] b) {
    return classifyMany(a, b, null);
  }

  /** {@link #classifyMany(String[], String[])} with per-input statuses, as {@link #embedMany(String[], String[], int[])}. */
  public synchronized float[][] classifyMany(String[] a, String[] b, int[] statuses) {
    return runMany(a, b, statuses, null, model.info().numLabels);
  }

  /**
   * One packed run (eb_session_run_texts): as many whole texts from the start of {@code inputs} as
   * the session's maxBatchTokens holds, their tokens end to end, each sequence's outputs equal to a
   * single run of its text (int8: bitwise). Returns the eb_status of each text it took (0 = ok,
   * else why that text alone did not run, e.g. {@link EdgeBertException#SEQUENCE_TOO_LONG}); the
   * array's length is how many it took (at least 1: run the rest with another call). Sequence k of
   * the run is text k ({@link #tokenVectors(int)}); the outputs are the run's. A null or empty
   * array, a null text or a text with a NUL: INVALID_ARGUMENT before anything runs.
   */
  public synchronized int[] runTexts(String[] inputs) {
    TextBatch batch = TextBatch.of(inputs, "texts");
    if (batch.size() == 0) {
      throw new EdgeBertException(EdgeBertException.INVALID_ARGUMENT, "runTexts needs at least one text");
    }
    long p = ptr();
    context = null;
    texts = new byte[0][];
    int[] statuses = new int[batch.size()];
    int consumed = nRunTexts(p, batch.bytes, batch.starts, statuses);
    if (consumed == 1) {  // a packed run of one: its words index that text
      texts = new byte[][] {java.util.Arrays.copyOfRange(batch.bytes, 0, batch.size() > 1 ? batch.starts[1]
                                                                                          : batch.bytes.length)};
    }
    return java.util.Arrays.copyOf(statuses, consumed);
  }

  // embedMany (which: its output) or classifyMany (which null): one native call, which loops over
  // the packed runs in the library; a failed input (statuses null) is thrown with its index.
  private float[][] runMany(String[] a, String[] b, int[] statuses, Output which, int width) {
    TextBatch ta = TextBatch.of(a, "texts");
    TextBatch tb = b == null ? null : TextBatch.of(b, "pairs");
    int n = ta.size();
    if (tb != null && tb.size() != n) {
      throw new EdgeBertException(EdgeBertException.INVALID_ARGUMENT, n + " texts but " + tb.size() + " pairs");
    }
    if (statuses != null && statuses.length != n) {
      throw new EdgeBertException(EdgeBertException.INVALID_ARGUMENT,
                                  "statuses has " + statuses.length + " entries, expected " + n);
    }
    long p = ptr();
    if ((long) n * width > Integer.MAX_VALUE) {
      throw new EdgeBertException(EdgeBertException.INVALID_ARGUMENT, n + " rows of " + width + " floats are too many");
    }
    float[] flat = new float[n * width];
    context = null;
    texts = new byte[0][];
    byte[] bytesB = tb == null ? null : tb.bytes;
    int[] startsB = tb == null ? null : tb.starts;
    if (which != null) {
      nEmbedMany(p, ta.bytes, ta.starts, bytesB, startsB, which.code, flat, statuses);
    } else {
      nClassifyMany(p, ta.bytes, ta.starts, bytesB, startsB, flat, null, statuses);
    }
    float[][] rows = new float[n][];
    for (int i = 0; i < n; i++) {
      rows[i] = java.util.Arrays.copyOfRange(flat, i * width, (i + 1) * width);
    }
    return rows;
  }

  /**
   * Cross-encoders (a sequence classifier with one label; other models: UNSUPPORTED): the
   * passages ranked by relevance to the query, best first (equal scores: the lower index first).
   * The score is the model's: the raw logit, or its sigmoid when the checkpoint's
   * sentence-transformers config says Sigmoid (or nothing: CrossEncoder's one-label default).
   * The (query, passage) pairs run in packed runs as {@link #classifyMany(String[])}'s inputs; a
   * passage that cannot run throws EdgeBertException with its status and "passages[i]: ...".
   */
  public Ranked[] rerank(String query, String[] passages) {
    return rerank(query, passages, passages == null ? 0 : passages.length, null);
  }

  /**
   * The best topK passages of {@link #rerank(String, String[])} (eb_session_rerank_top_k). With a
   * non-null statuses (as long as passages), a passage that cannot run throws nothing: statuses[i]
   * receives its eb_status and it is left out of the ranking.
   */
  public synchronized Ranked[] rerank(String query, String[] passages, int topK, int[] statuses) {
    byte[] q = Strings.cString(query, "query");
    TextBatch tp = TextBatch.of(passages, "passages");
    int n = tp.size();
    if (topK < 0) {
      throw new EdgeBertException(EdgeBertException.INVALID_ARGUMENT, "topK must be >= 0, got " + topK);
    }
    if (statuses != null && statuses.length != n) {
      throw new EdgeBertException(EdgeBertException.INVALID_ARGUMENT,
                                  "statuses has " + statuses.length + " entries, expected " + n);
    }
    int k = Math.min(topK, n);
    int[] indices = new int[k];
    float[] scores = new float[k];
    context = null;
    texts = new byte[0][];
    int found = nRerankTopK(ptr(), q, tp.bytes, tp.starts, k, indices, scores, statuses);
    Ranked[] out = new Ranked[found];
    for (int r = 0; r < found; r++) {
      out[r] = new Ranked(indices[r], scores[r]);
    }
    return out;
  }

  /**
   * Masked-LM (SPLADE) models, after a run: the entries of sequence index's sparse vector
   * (Output.SPARSE_EMBEDDING) above threshold, largest first, at most topK of them (0: all), by
   * eb_session_sparse_top_k. Other models throw UNSUPPORTED; no run yet, BAD_STATE.
   */
  public synchronized SparseEntry[] sparseTopK(int index, int topK, float threshold) {
    if (index < 0 || topK < 0) {
      throw new EdgeBertException(EdgeBertException.INVALID_ARGUMENT,
                                  "sparseTopK: index and topK must be >= 0, got " + index + " and " + topK);
    }
    int room = Math.max(topK > 0 ? topK : model.info().vocabSize, 1);
    int[] ids = new int[room];
    float[] weights = new float[room];
    int found = nSparseTopK(ptr(), index, topK, threshold, ids, weights);
    SparseEntry[] out = new SparseEntry[found];
    for (int r = 0; r < found; r++) {
      out[r] = new SparseEntry(ids[r], weights[r]);
    }
    return out;
  }

  /**
   * A long text (any length) embedded in overlapping windows of its tokens
   * (eb_session_embed_chunked), as HuggingFace tokenizers' overflowing tokens: windows of
   * {@code window} tokens, consecutive ones sharing {@code stride} tokens, each run as a text of
   * its own through the model's sentence embedding (sentence-embedding models; others:
   * UNSUPPORTED). {@link ChunkPooling#NONE} gives one row per window, {@link ChunkPooling#MEAN} one
   * row: the windows' vectors averaged with weights their token counts, L2-normalized when the
   * model normalizes; each row is {@link #setEmbeddingDims(int)}'s dims wide (else hidden size).
   * The chunks' byte offsets are into the text's UTF-8. A null text or pooling, a text with a NUL
   * or a lone surrogate, stride >= window: INVALID_ARGUMENT; a window longer than the session
   * allows, or a stretch without a single space longer than the session reads at a time:
   * SEQUENCE_TOO_LONG. Afterwards the session's outputs are those of the last packed run.
   */
  public ChunkedEmbedding embedChunked(String text, int window, int stride, ChunkPooling pooling) {
    byte[] c = Strings.cString(text, "text");
    return embedChunked(c, c.length - 1, window, stride, pooling);
  }

  /** {@link #embedChunked(String, int, int, ChunkPooling)} of UTF-8 bytes (checked by the library: not UTF-8 is INVALID_ARGUMENT). */
  public ChunkedEmbedding embedChunked(byte[] utf8, int window, int stride, ChunkPooling pooling) {
    if (utf8 == null) {
      throw new EdgeBertException(EdgeBertException.INVALID_ARGUMENT, "text is null");
    }
    // an empty array gets one byte of room: the JNI pins a non-empty array
    return embedChunked(utf8.length == 0 ? new byte[1] : utf8, utf8.length, window, stride, pooling);
  }

  // The two calls of the C API: the window count (out null), then the vectors and chunks.
  private synchronized ChunkedEmbedding embedChunked(byte[] utf8, int size, int window, int stride,
                                                     ChunkPooling pooling) {
    if (pooling == null) {
      throw new EdgeBertException(EdgeBertException.INVALID_ARGUMENT, "pooling is null");
    }
    long p = ptr();
    context = null;
    texts = new byte[0][];
    int n = nEmbedChunked(p, utf8, size, window, stride, pooling.code, null, null);
    int width = dims > 0 ? dims : hiddenSize;
    int rows = pooling == ChunkPooling.NONE ? n : 1;
    if ((long) rows * width > Integer.MAX_VALUE || 4L * n > Integer.MAX_VALUE) {
      throw new EdgeBertException(EdgeBertException.INVALID_ARGUMENT, n + " windows of " + width + " floats are too many");
    }
    float[] flat = new float[rows * width];
    int[] places = new int[4 * n];  // first_token, tokens, begin_byte, end_byte per window
    nEmbedChunked(p, utf8, size, window, stride, pooling.code, flat, places);
    float[][] vectors = new float[rows][];
    for (int r = 0; r < rows; r++) {
      vectors[r] = java.util.Arrays.copyOfRange(flat, r * width, (r + 1) * width);
    }
    ChunkedEmbedding.Chunk[] chunks = new ChunkedEmbedding.Chunk[n];
    for (int i = 0; i < n; i++) {
      chunks[i] = new ChunkedEmbedding.Chunk(places[4 * i], places[4 * i + 1], places[4 * i + 2], places[4 * i + 3]);
    }
    return new ChunkedEmbedding(vectors, chunks);
  }

  /**
   * Masked-LM models, after a run: the k most probable vocabulary entries at run-wide token
   * `token` (a row of Output.LAST_HIDDEN_STATE), largest first, with their probabilities (the
   * softmax of the masked-LM logits there, as HF's fill-mask pipeline), by eb_session_fill_mask.
   * Other models throw UNSUPPORTED; no run yet, BAD_STATE; a token out of range or k < 1,
   * INVALID_ARGUMENT.
   */
  public synchronized TokenProbability[] fillMask(int token, int k) {
    if (token < 0 || k < 1) {
      throw new EdgeBertException(EdgeBertException.INVALID_ARGUMENT,
                                  "fillMask: token must be >= 0 and k >= 1, got " + token + " and " + k);
    }
    int room = Math.min(k, Math.max(model.info().vocabSize, 1));
    int[] ids = new int[room];
    float[] probs = new float[room];
    int found = nFillMask(ptr(), token, ids, probs);
    TokenProbability[] out = new TokenProbability[found];
    for (int r = 0; r < found; r++) {
      out[r] = new TokenProbability(ids[r], probs[r]);
    }
    return out;
  }

  private float[] taskOutput(Output which) {
    if (!hasOutput(which)) {
      throw new EdgeBertException(EdgeBertException.UNSUPPORTED,
                                  "this model has no " + which + " output (task " + model.info().task + ")");
    }
    return output(which);
  }

  /** Truncation strategies of {@link #setTruncation(int)} (eb_truncation). */
  public static final int TRUNCATION_NONE = 0;
  public static final int TRUNCATION_LONGEST_FIRST = 1;
  public static final int TRUNCATION_ONLY_SECOND = 2;

  /**
   * How later text calls cut a text (pair) longer than the session maximum: TRUNCATION_NONE (the
   * default: SEQUENCE_TOO_LONG), TRUNCATION_LONGEST_FIRST or TRUNCATION_ONLY_SECOND, as
   * HuggingFace tokenizers' truncation strategies (eb_session_set_truncation).
   */
  public synchronized void setTruncation(int strategy) {
    nSetTruncation(ptr(), strategy);
  }

  /**
   * ColBERT models converted from a PyLate folder: how later text runs ({@link #runText(String)},
   * {@link #runTexts(String[])}) lay out their tokens, as PyLate encodes them
   * (eb_session_set_colbert_input): {@link ColbertInput#QUERY} ([CLS] query marker text [SEP], then
   * [MASK] up to the model's query_length, attended by no token unless attend_to_expansion_tokens),
   * {@link ColbertInput#DOCUMENT} ([CLS] document marker text [SEP]; {@link #tokenVectors(int)}
   * leaves out the skiplist's rows) or {@link ColbertInput#PLAIN} (the default: the model's template
   * alone). Text pairs are refused in the query and document modes. Other models: UNSUPPORTED
   * except for PLAIN; null: INVALID_ARGUMENT. The last run's outputs stay readable.
   */
  public synchronized void setColbertInput(ColbertInput input) {
    if (input == null) {
      throw new EdgeBertException(EdgeBertException.INVALID_ARGUMENT, "setColbertInput: input is null");
    }
    nSetColbertInput(ptr(), input.code);
  }

  /**
   * ColBERT models, after a run: the token vectors of sequence {@code index} of the last run (0
   * after a single run; after {@link #runTexts(String[])}, text {@code index} of the texts it took)
   * as the model scores them, row-major {@code [rows * dim]} (dim: {@link ModelInfo#numLabels}, so
   * rows = length / dim), by eb_session_get_token_vectors: the sequence's rows of
   * Output.TOKEN_VECTORS, without the skiplist's rows after a {@link ColbertInput#DOCUMENT} run.
   * {@link MultiVector#maxSim(float[], float[], int)} scores them. An index out of range:
   * INVALID_ARGUMENT; a model without token vectors: UNSUPPORTED; no run yet: BAD_STATE.
   */
  public synchronized float[] tokenVectors(int index) {
    if (index < 0) {
      throw new EdgeBertException(EdgeBertException.INVALID_ARGUMENT, "tokenVectors: index must be >= 0, got " + index);
    }
    long p = ptr();
    return nTokenVectors(p, index, model.info().numLabels);
  }

  /**
   * The prompt (config_sentence_transformers.json "prompts", e.g. EmbeddingGemma's "query") put
   * before the text of later text calls, as SentenceTransformer.encode(prompt_name=...) does
   * (eb_session_set_prompt); null or "": none. Unknown names: INVALID_ARGUMENT.
   */
  public synchronized void setPrompt(String name) {
    nSetPrompt(ptr(), name == null || name.isEmpty() ? null : Strings.cString(name, "prompt"));
    prompt = name == null || name.isEmpty() ? null : name;
  }

  /**
   * Later runs on 1 thread (the caller's) or on all the threads the session was made with
   * (eb_session_set_num_threads): for cores that other work keeps busy, where 2 threads can be
   * slower than 1. A session also leaves its pool by itself while its threads are preempted at
   * such a rate and tries it again after a hold (1 s, doubling to 16 s); this call resets that.
   * Outputs are the same; any other count: INVALID_ARGUMENT.
   */
  public synchronized void setNumThreads(int threads) {
    nSetNumThreads(ptr(), threads);
  }

  /**
   * Matryoshka: later sentence embeddings truncated to their first {@code dims} values and
   * L2-normalized again (eb_session_set_embedding_dims); 0: the full embedding. Meaningful only for
   * models trained for it.
   */
  public synchronized void setEmbeddingDims(int dims) {
    nSetEmbeddingDims(ptr(), dims);
    this.dims = dims == model.info().hiddenSize ? 0 : dims;
  }

  /** Text tokens cut from sequence {@code index} of the last run (0: nothing was cut). */
  public synchronized int truncatedTokens(int index) {
    return nTruncatedTokens(ptr(), index);
  }

  /** {arena bytes, naive sum of buffers, packed weight bytes}. */
  public synchronized long[] memory() {
    long[] m = new long[3];
    nMemory(ptr(), m);
    return m;
  }

  public synchronized boolean isClosed() {
    return handle == 0;
  }

  /** Destroys the session (waits for a run on another thread to finish). Idempotent. */
  @Override
  public void close() {
    synchronized (this) {
      if (handle == 0) {
        return;
      }
      nDestroy(handle);
      handle = 0;
    }
    model.forget(this);
  }

  private static native int nRerankTopK(long s, byte[] query, byte[] passages, int[] starts, int k, int[] indices,
                                        float[] scores, int[] statuses);
  private static native int nEmbedChunked(long s, byte[] text, int size, int window, int stride, int pooling,
                                          float[] out, int[] chunks);
  private static native int nSparseTopK(long s, int index, int k, float threshold, int[] ids, float[] weights);
  private static native int nFillMask(long s, int token, int[] ids, float[] probs);
  private static native void nRunText(long s, byte[] text);
  private static native void nRunTextPair(long s, byte[] a, byte[] b);
  private static native void nRunIds(long s, int[] ids, int[] types, int[] mask);
  private static native void nRunEmbeddings(long s, float[] embeddings, int[] mask, int hidden);
  private static native float[] nOutput(long s, int which);
  private static native long[] nShape(long s, int which);
  private static native boolean nHasOutput(long s, int which);
  private static native int nOutputInto(long s, int which, FloatBuffer direct, float[] array, int offset, int room);
  private static native int[] nInputIds(long s);
  private static native int[][] nTokenOffsets(long s);
  private static native void nBestSpan(long s, int maxAnswerTokens, int[] ints, float[] score);
  private static native boolean nHasWindowedAnswer();
  private static native int[] nWordIds(long s);
  private static native int[] nWords(long s);
  private static native void nAnswer(long s, byte[] question, byte[] context, int maxAnswerTokens, int docStride,
                                     int[] ints, float[] score);
  // Many texts (TextBatch blocks; b null: single texts) through eb_session_embed_many (out [n *
  // width]: rows of output `which`) or eb_session_classify_many (logits [n * numLabels], labels
  // [n]: either may be null); statuses [n] each input's eb_status, or null: the first failed
  // input is thrown.
  private static native void nEmbedMany(long s, byte[] a, int[] startsA, byte[] b, int[] startsB, int which,
                                        float[] out, int[] statuses);
  private static native void nClassifyMany(long s, byte[] a, int[] startsA, byte[] b, int[] startsB, float[] logits,
                                           int[] labels, int[] statuses);
  private static native int[] nTokenLabels(long s);
  private static native void nMemory(long s, long[] out);
  private static native void nSetTruncation(long s, int strategy);
  private static native void nSetPrompt(long s, byte[] name);
  private static native void nSetEmbeddingDims(long s, int dims);
  private static native void nSetNumThreads(long s, int threads);
  private static native void nSetColbertInput(long s, int input);
  // The rows of sequence index (row-major, dim floats each) of eb_session_get_token_vectors.
  private static native float[] nTokenVectors(long s, int index, int dim);
  // One eb_session_run_texts of a TextBatch; statuses [n] receives the taken texts' eb_status
  // (eb_session_get_sequence); returns how many it took.
  private static native int nRunTexts(long s, byte[] texts, int[] starts, int[] statuses);
  private String prompt;  // setPrompt
  private int dims;       // setEmbeddingDims (0: the full embedding)
  private static native int nTruncatedTokens(long s, int index);
  private static native void nDestroy(long s);
}
