/* SPDX-License-Identifier: Apache-2.0 */
/* edgebert C API: load an int8 (or fp32) BERT encoder converted by edgebert-convert and run it.
 *
 * Life cycle (modelled on XNNPACK's create / setup / run):
 *   eb_model_load_file() or eb_model_load_memory()  -> eb_model*    (verified, read-only)
 *   eb_session_create(model, &options)              -> eb_session*  (all memory allocated here)
 *   eb_session_run_ids() / eb_session_run_text()    (any number of times; no heap allocation)
 *   eb_session_get_output()                         (pointers into the session's arena)
 *   eb_session_destroy(), eb_model_free()
 *
 * Thread safety:
 *   - An eb_model is immutable after loading: any number of sessions on any threads may share it.
 *     eb_model_free() may come before the sessions are destroyed: each session keeps what it needs
 *     of the model (weights, file mapping, tokenizer) alive until eb_session_destroy().
 *   - An eb_session is NOT thread-safe: use one session per calling thread (a session may itself
 *     use a pool of worker threads, see eb_session_options.num_threads).
 *   - eb_status_string() and eb_version() may be called from any thread at any time.
 *
 * Errors: every function returns an eb_status; EB_OK is 0. A readable message for the last
 * failing call is available from eb_session_last_error() (per session) or, for loading and session
 * creation, through the optional `error` buffer arguments. No function aborts on bad input.
 */
#ifndef EDGEBERT_EDGEBERT_H_
#define EDGEBERT_EDGEBERT_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(EDGEBERT_BUILDING_LIBRARY)
#define EB_API __attribute__((visibility("default")))
#else
#define EB_API
#endif
/* Every function returning eb_status is EB_NODISCARD: the compiler warns when a caller drops the
 * status (GCC / clang warn_unused_result; a cast to void does not silence it on GCC: keep it in a
 * variable). Define EB_NODISCARD empty before including this header to turn the warning off. */
#ifndef EB_NODISCARD
#if defined(__GNUC__) || defined(__clang__)
#define EB_NODISCARD __attribute__((warn_unused_result))
#else
#define EB_NODISCARD
#endif
#endif

#define EB_VERSION_MAJOR 0
#define EB_VERSION_MINOR 2
#define EB_VERSION_PATCH 0

typedef enum eb_status {
  EB_OK = 0,
  EB_ERROR_INVALID_ARGUMENT = 1, /* null pointer, bad size, out-of-range id, bad option */
  EB_ERROR_IO = 2,               /* file cannot be opened, read or mapped */
  EB_ERROR_INVALID_MODEL = 3,    /* not an edgebert model, corrupt, truncated, inconsistent */
  EB_ERROR_UNSUPPORTED = 4,      /* newer schema version, feature the model lacks */
  EB_ERROR_OUT_OF_MEMORY = 5,
  EB_ERROR_BACKEND = 6,          /* XNNPACK / thread pool failure */
  EB_ERROR_SEQUENCE_TOO_LONG = 7,/* input longer than the session's max_sequence_length */
  EB_ERROR_BAD_STATE = 8         /* call out of order, e.g. reading outputs before a run */
} eb_status;

typedef struct eb_model eb_model;
typedef struct eb_session eb_session;

/* Names of the outputs a run produces. A model has the outputs of its task (eb_task): every
 * model has EB_OUTPUT_LAST_HIDDEN_STATE; asking for one it lacks is EB_ERROR_UNSUPPORTED. */
typedef enum eb_output {
  EB_OUTPUT_LAST_HIDDEN_STATE = 0,  /* float32 [seq_len, hidden] */
  EB_OUTPUT_POOLER_OUTPUT = 1,      /* float32 [hidden]; models with a pooler */
  EB_OUTPUT_LOGITS = 2,             /* float32 [num_labels]; sequence classifiers */
  EB_OUTPUT_SENTENCE_EMBEDDING = 3, /* float32 [hidden]; sentence-embedding models (pooled over
                                       the real tokens, L2-normalized when the model says so) */
  EB_OUTPUT_START_LOGITS = 4,       /* float32 [seq_len]; extractive question answering */
  EB_OUTPUT_END_LOGITS = 5,         /* float32 [seq_len]; extractive question answering */
  EB_OUTPUT_TOKEN_LOGITS = 6,       /* float32 [seq_len, num_labels]; token classification */
  EB_OUTPUT_SPARSE_EMBEDDING = 7,   /* float32 [vocab_size]; masked-LM models: SPLADE's
                                       max over the real tokens of log(1 + relu(MLM logits));
                                       bge-m3: per token id the max of relu(sparse_linear(h))
                                       over the real tokens, 0 for cls / eos / pad / unk */
  EB_OUTPUT_TOKEN_VECTORS = 8       /* float32 [seq_len, dim]; ColBERT models (dim: eb_model_info
                                       num_labels): every token's projected vector, each row
                                       L2-normalized (eb_maxsim scores them), a mask-0 token's
                                       too (attended by no token: PyLate's query expansion);
                                       bge-m3: every token but each sequence's first ([CLS]),
                                       [seq_len - 1, dim]; after packed runs each sequence's
                                       tokens - 1 rows, sequence after sequence
                                       (eb_session_get_sequence); its padding tokens (mask 0)
                                       give zero rows, as FlagEmbedding masks them;
                                       eb_session_get_token_vectors copies one sequence's
                                       rows as its model scores them */
} eb_output;
#define EB_OUTPUT_COUNT 9

/* What the model's head computes (chosen by the converter from the checkpoint). */
typedef enum eb_task {
  EB_TASK_ENCODER = 0,                 /* last_hidden_state (+ pooler_output with a pooler) */
  EB_TASK_SEQUENCE_CLASSIFICATION = 1, /* + logits */
  EB_TASK_QUESTION_ANSWERING = 2,      /* + start_logits, end_logits */
  EB_TASK_TOKEN_CLASSIFICATION = 3,    /* + token_logits */
  EB_TASK_SENTENCE_EMBEDDING = 4,      /* + sentence_embedding */
  EB_TASK_MASKED_LM = 5,               /* + sparse_embedding (a masked-LM head: SPLADE) */
  EB_TASK_TOKEN_VECTORS = 6,           /* + token_vectors (ColBERT / PyLate multi-vector models) */
  EB_TASK_BGE_M3 = 7                   /* + sentence_embedding, sparse_embedding and token_vectors,
                                          all from one run (bge-m3: dense, sparse, ColBERT) */
} eb_task;

typedef struct eb_session_options {
  int32_t num_threads;          /* worker threads incl. the caller; 0 or 1 = single-threaded */
  int32_t max_sequence_length;  /* 0 = the model's max_position_embeddings */
  int32_t split_special_tokens; /* 0 (default, as HuggingFace): special tokens written in the
                                   text ("[CLS]", "[SEP]", "[MASK]", "<s>", "</s>", ...) are
                                   single tokens; 1: they are plain text and tokenized as such */
  int32_t max_batch_tokens;     /* tokens of one packed run (eb_session_run_texts & co.): 0 =
                                   max_sequence_length, else at least max_sequence_length; the
                                   arena holds that many token rows (was `reserved`, 0 before) */
  uint64_t max_memory_bytes;    /* 0 = no limit; else session creation fails with
                                   EB_ERROR_OUT_OF_MEMORY (and allocates nothing) when the
                                   session's arena, packed weights and tables would exceed it */
} eb_session_options;

typedef struct eb_model_info {
  int32_t hidden_size;
  int32_t num_attention_heads;
  int32_t num_hidden_layers;
  int32_t intermediate_size;
  int32_t vocab_size;
  int32_t max_position_embeddings;
  int32_t type_vocab_size;
  int32_t num_labels;      /* 0: no classifier */
  int32_t has_pooler;      /* 0/1 */
  int32_t has_embeddings;  /* 0: encoder-only model, runs only on precomputed embeddings */
  int32_t has_vocab;       /* 0: cannot run on text */
  int32_t is_int8;         /* 0: fp32 reference model */
  int32_t task;            /* eb_task */
  int32_t is_distilbert;   /* 1: DistilBERT (no token types, no pooler) */
} eb_model_info;

/* Library version as "MAJOR.MINOR.PATCH". */
EB_API const char* eb_version(void);
/* Static description of a status code. Never NULL. */
EB_API const char* eb_status_string(eb_status status);

/* Maps `path` read-only and verifies it. On failure *out_model is NULL and, when `error` is not
 * NULL, a NUL-terminated message is written into error[0..error_size). */
EB_API EB_NODISCARD eb_status eb_model_load_file(const char* path, eb_model** out_model, char* error, size_t error_size);
/* Uses caller memory in place (zero copy). `data` must be 64-byte aligned and stay valid and
 * unchanged until eb_model_free() and until every session created from the model is destroyed. */
EB_API EB_NODISCARD eb_status eb_model_load_memory(const void* data, size_t size, eb_model** out_model, char* error,
                                      size_t error_size);
EB_API EB_NODISCARD eb_status eb_model_get_info(const eb_model* model, eb_model_info* out_info);
/* Name of label `index` (0 <= index < num_labels) from the checkpoint's id2label ("LABEL_<i>"
 * when it had none). The string lives as long as the model. */
EB_API EB_NODISCARD eb_status eb_model_get_label(const eb_model* model, int32_t index, const char** out_name);
/* Releases the model handle. NULL is ignored. Sessions created from it stay valid: the model's
 * memory is released with the last of them. No session can be created from a freed handle. */
EB_API void eb_model_free(eb_model* model);

/* ---- Loading with options: the packed-weight cache file ----
 * The GEMM weights of a model are packed once into the layout XNNPACK's kernels read, and every
 * session of the model shares that one copy (XNNPACK 2024+; on Debian 12's 2022 XNNPACK each
 * session packs its own). With `weight_cache_path`, the packed weights are also kept in a file:
 * the first load packs and writes it (atomically: a temporary file, then rename), later loads map
 * it read-only (clean, shared, reclaimable pages) and never read the model's GEMM weights. The file
 * is keyed by the model's content id, the XNNPACK build and its packing micro-kernels, and the
 * CPU; a file that does not match, is truncated or is corrupt is rebuilt; a file that cannot be
 * written leaves the model loaded without it (eb_model_get_weight_cache says why). Never an error
 * of the load itself, never different outputs: outputs with and without the cache are identical. */
typedef struct eb_load_options {
  const char* weight_cache_path; /* NULL or "": no cache file */
  int32_t reserved[3];           /* must be 0 */
  /* 1: skip the CRC32C check of the cache file's packed weights at load (for callers that verify
   * the file themselves, e.g. a signed download: the check reads every byte of the file, most of
   * a warm start's time). 0 (the default): verified; header, table, sizes and layout are always
   * checked. The environment variable EDGEBERT_WEIGHT_CACHE_VERIFY=0 does the same. */
  int32_t skip_weight_cache_payload_check;
} eb_load_options;

typedef enum eb_weight_cache_state {
  EB_WEIGHT_CACHE_NONE = 0,        /* no cache file was asked for */
  EB_WEIGHT_CACHE_LOADED = 1,      /* a valid cache file is mapped: nothing was packed */
  EB_WEIGHT_CACHE_CREATED = 2,     /* packed, and the cache file was written (new, or rebuilt
                                      because the old one did not match: the message says why) */
  EB_WEIGHT_CACHE_UNAVAILABLE = 3  /* asked for, but not used (this XNNPACK has no cache API, or
                                      the file cannot be written): the message says why */
} eb_weight_cache_state;

/* Fills defaults (no cache file). */
EB_API void eb_load_options_init(eb_load_options* options);
/* eb_model_load_file / eb_model_load_memory with options (NULL: the defaults). With a weight
 * cache the weights are packed (or the cache mapped) during the load, so the first session
 * starts at once. */
EB_API EB_NODISCARD eb_status eb_model_load_file_with_options(const char* path, const eb_load_options* options,
                                                 eb_model** out_model, char* error, size_t error_size);
EB_API EB_NODISCARD eb_status eb_model_load_memory_with_options(const void* data, size_t size, const eb_load_options* options,
                                                   eb_model** out_model, char* error, size_t error_size);
/* What happened to the weight cache of this model; `out_message` (may be NULL) is a readable
 * reason, "" when there is nothing to say; it lives as long as the model. */
EB_API EB_NODISCARD eb_status eb_model_get_weight_cache(const eb_model* model, eb_weight_cache_state* out_state,
                                           const char** out_message);
/* Memory shared by every session of the model: the bytes of packed GEMM weights the model holds
 * (in memory or mapped from the cache file; 0 on XNNPACK 2022, where sessions pack their own) and
 * the model file's size. Any pointer may be NULL. */
EB_API EB_NODISCARD eb_status eb_model_get_memory(const eb_model* model, size_t* packed_weight_bytes, size_t* model_file_bytes);

/* Fills defaults (single thread, the model's maximum length). */
EB_API void eb_session_options_init(eb_session_options* options);
/* Creates XNNPACK operators, the thread pool and one planned arena. `options` may be NULL. */
EB_API EB_NODISCARD eb_status eb_session_create(const eb_model* model, const eb_session_options* options, eb_session** out_session,
                                   char* error, size_t error_size);
EB_API void eb_session_destroy(eb_session* session);

/* Runs on `seq_len` token ids. token_type_ids and attention_mask (1 = real token, 0 = padding)
 * may be NULL (all 0 / all 1). Models without token types (DistilBERT: type_vocab_size 0) ignore
 * token_type_ids, as HuggingFace's DistilBERT takes none. Performs no heap allocation. */
EB_API EB_NODISCARD eb_status eb_session_run_ids(eb_session* session, const int32_t* input_ids, const int32_t* token_type_ids,
                                    const int32_t* attention_mask, size_t seq_len);
/* Tokenizes UTF-8 `text` with the model's own tokenizer and its template ([CLS] text [SEP] for
 * BERT, <s> text </s> for RoBERTa, text </s> for T5, ...) and runs.
 * Text longer than the session's maximum is an error (EB_ERROR_SEQUENCE_TOO_LONG), never
 * silently truncated. Performs no heap allocation. With tokenizers other than BERT's vocab.txt
 * WordPiece a text of more than 16 bytes per position (of max_sequence_length + 1025) is
 * EB_ERROR_SEQUENCE_TOO_LONG too: their buffers are sized at session creation. A text that gives
 * no token at all (only with a tokenizer that adds no special tokens, e.g. "" there) is
 * EB_ERROR_INVALID_ARGUMENT, as is such an input of a packed run (its own status). */
EB_API EB_NODISCARD eb_status eb_session_run_text(eb_session* session, const char* text);
/* Tokenizes a text pair with the model's template ("[CLS] a [SEP] b [SEP]" with token types 0
 * (first segment incl. its [SEP]) then 1 for BERT; "<s> a </s></s> b </s>" for RoBERTa) and runs.
 * Too long: EB_ERROR_SEQUENCE_TOO_LONG. Performs no heap allocation (as run_text). */
EB_API EB_NODISCARD eb_status eb_session_run_text_pair(eb_session* session, const char* text_a, const char* text_b);
/* Runs from precomputed embedding-layer outputs (float32 [seq_len, hidden], like inputs_embeds)
 * skipping the embedding layer. attention_mask may be NULL. */
EB_API EB_NODISCARD eb_status eb_session_run_embeddings(eb_session* session, const float* embeddings, const int32_t* attention_mask,
                                           size_t seq_len);

/* ---- Packed runs: many sequences per run, no padding ----
 * eb_session_run_texts / _run_text_pairs / _run_ids_batch take `count` inputs and run as many
 * whole ones as fit, in order: their tokens laid end to end (at most max_batch_tokens in all, at
 * most max_batch_tokens sequences), one GEMM over all rows, attention, position ids, pooling and
 * heads per sequence. *out_consumed receives how many inputs this call took (at least 1 when the
 * call returns EB_OK); the caller loops on the rest:
 *     for (size_t done = 0, n; done < count; done += n)
 *       if (eb_session_run_texts(s, texts + done, count - done, &n) != EB_OK) break; ... read ...
 * An input that cannot run alone (longer than max_sequence_length: EB_ERROR_SEQUENCE_TOO_LONG;
 * NULL text, length 0, id or token type out of range: EB_ERROR_INVALID_ARGUMENT) is consumed with
 * that status as its own (eb_session_get_sequence), not the call's: the others still run; its
 * pooled rows are 0 and it has no tokens. The call's own status is an error only for bad arguments
 * (NULL pointers, count 0, ids lengths that add up to more than an int32_t array can hold), a model
 * that cannot run the input kind, or a backend failure (then no outputs). Each sequence's outputs
 * equal a single run of it (int8: bit-identical).
 * Outputs (eb_session_get_output) after a packed run: pooled outputs (pooler_output, logits,
 * sentence_embedding) are [sequence_count, width] (rank 2), one row per consumed input in order;
 * token outputs (last_hidden_state, start/end_logits, token_logits), input ids, token offsets,
 * word ids and words cover all tokens of the run, sequence i's at [first_token, first_token +
 * tokens) (words at [first_word, first_word + words]; their token indices are the run's). A
 * packed run whose inputs all failed is still EB_OK: its getters succeed with 0 tokens and words,
 * and its pooled rows are 0. Text that is not UTF-8 refuses the whole call
 * (EB_ERROR_INVALID_ARGUMENT, the message naming the input and byte offset).
 * eb_session_best_span reads single runs only (EB_ERROR_BAD_STATE after a packed run); the answer
 * span of each pair of a packed eb_session_run_text_pairs is eb_session_sequence_best_span.
 * Performs no heap allocation. */
EB_API EB_NODISCARD eb_status eb_session_run_texts(eb_session* session, const char* const* texts, size_t count, size_t* out_consumed);
/* Pairs ("[CLS] a [SEP] b [SEP]" each, as eb_session_run_text_pair). */
EB_API EB_NODISCARD eb_status eb_session_run_text_pairs(eb_session* session, const char* const* texts_a, const char* const* texts_b,
                                           size_t count, size_t* out_consumed);
/* Sequence i has lengths[i] ids at input_ids + lengths[0] + ... + lengths[i - 1] (the same for
 * token_type_ids, which may be NULL: all 0); no attention mask (every token is real). */
EB_API EB_NODISCARD eb_status eb_session_run_ids_batch(eb_session* session, const int32_t* input_ids, const int32_t* token_type_ids,
                                          const size_t* lengths, size_t count, size_t* out_consumed);
/* As eb_session_run_ids_batch with an attention mask laid out as the ids (NULL: every token 1):
 * 1 = a real token, 0 = a token no other token attends to, left out of mean pooling (as
 * eb_session_run_ids' attention_mask; its row is still computed: e.g. PyLate's unattended [MASK]
 * query expansion). A sequence with a mask entry other than 0 or 1 is consumed with
 * EB_ERROR_INVALID_ARGUMENT as its own status. Each sequence's outputs equal eb_session_run_ids of
 * its ids, types and mask (int8: bit-identical). Performs no heap allocation. */
EB_API EB_NODISCARD eb_status eb_session_run_ids_batch_masked(eb_session* session, const int32_t* input_ids,
                                                              const int32_t* token_type_ids, const int32_t* attention_mask,
                                                              const size_t* lengths, size_t count, size_t* out_consumed);
/* One sequence of the last run (packed: one per consumed input; a single run: 1 sequence). */
typedef struct eb_sequence_info {
  int32_t status;      /* eb_status: EB_OK, or why this input was not run */
  int32_t first_token; /* its tokens in the run's token outputs: [first_token, first_token + tokens) */
  int32_t tokens;      /* 0 when status != EB_OK */
  int32_t first_word;  /* text runs: its words [first_word, first_word + words) of eb_session_get_words */
  int32_t words;
} eb_sequence_info;
/* Sequences of the last successful run (EB_ERROR_BAD_STATE before any). */
EB_API EB_NODISCARD eb_status eb_session_get_sequence_count(const eb_session* session, size_t* out_count);
EB_API EB_NODISCARD eb_status eb_session_get_sequence(const eb_session* session, size_t index, eb_sequence_info* out_info);

/* After a successful run: pointer to an output inside the session (valid until the next run or
 * destroy) and its shape. shape receives up to 2 dims; *out_rank is 2 for last_hidden_state and
 * 1 otherwise (after a packed run pooled outputs are [sequence_count, width], rank 2). Any of
 * out_data/out_shape/out_rank may be NULL. */
EB_API EB_NODISCARD eb_status eb_session_get_output(const eb_session* session, eb_output which, const float** out_data,
                                       int64_t* out_shape, int32_t* out_rank);
/* Token ids of the last run (after tokenization for run_text / run_text_pair / answer).
 * EB_ERROR_BAD_STATE after run_embeddings (a run without token ids) or a failed run. */
EB_API EB_NODISCARD eb_status eb_session_get_input_ids(const eb_session* session, const int32_t** out_ids, size_t* out_len);

/* After run_text / run_text_pair: for each token of the last run, its byte range
 * [begin[i], end[i]) in the UTF-8 text it came from and the segment: 0 = text (or text_a), 1 =
 * text_b, -1 = a special token ([CLS], [SEP]: begin = end = 0). Arrays live in the session until
 * the next run. After run_ids / run_embeddings: EB_ERROR_BAD_STATE. Any pointer may be NULL. */
EB_API EB_NODISCARD eb_status eb_session_get_token_offsets(const eb_session* session, const int32_t** out_begin,
                                              const int32_t** out_end, const int32_t** out_segment, size_t* out_len);

/* Best answer span of an extractive-QA model after eb_session_run_text_pair(question, context):
 * the tokens start <= end of the context (segment 1), at most max_answer_tokens long (<= 0: 30),
 * maximizing start_logits[start] + end_logits[end]. begin_byte/end_byte index the context text.
 * A context with no tokens (empty, only whitespace) has no span: EB_ERROR_INVALID_ARGUMENT, here,
 * in eb_session_sequence_best_span and in eb_session_answer. */
typedef struct eb_span {
  int32_t start_token; /* index into the run's tokens */
  int32_t end_token;   /* inclusive */
  int32_t begin_byte;  /* [begin_byte, end_byte) in the context text */
  int32_t end_byte;
  float score;         /* start_logits[start_token] + end_logits[end_token] */
} eb_span;
EB_API EB_NODISCARD eb_status eb_session_best_span(const eb_session* session, int32_t max_answer_tokens, eb_span* out_span);
/* The same for sequence `index` of the last run (eb_session_get_sequence): after a packed
 * eb_session_run_text_pairs(questions, contexts), the best span of pair `index`'s context; after a
 * single run_text_pair, index 0 is eb_session_best_span. start_token / end_token index the run's
 * tokens (sequence `index` holds [first_token, first_token + tokens)); begin_byte / end_byte index
 * that pair's own context text. EB_ERROR_INVALID_ARGUMENT for an index out of range or a sequence
 * that did not run (its own status is in eb_session_get_sequence); EB_ERROR_BAD_STATE unless the
 * last run was of text pairs. Equal to a single run_text_pair of that pair and best_span (int8:
 * the same span and score). */
EB_API EB_NODISCARD eb_status eb_session_sequence_best_span(const eb_session* session, size_t index, int32_t max_answer_tokens,
                                               eb_span* out_span);

/* After run_text / run_text_pair: for each token of the last run, the index of the word it belongs
 * to within its segment (as HuggingFace's word_ids()), -1 for special tokens. Same validity as
 * eb_session_get_token_offsets (EB_ERROR_BAD_STATE after run_ids / run_embeddings). */
EB_API EB_NODISCARD eb_status eb_session_get_word_ids(const eb_session* session, const int32_t** out_word_ids, size_t* out_len);

/* A word of the last text run: its tokens [first_token, last_token], its segment and bytes
 * [begin_byte, end_byte) in that segment's text. For token-classification models `label` is the
 * label of the word's first token (argmax of its token_logits, as HuggingFace's "first"
 * aggregation), -1 otherwise. */
typedef struct eb_word {
  int32_t first_token, last_token;
  int32_t segment;
  int32_t begin_byte, end_byte;
  int32_t label;
} eb_word;
/* After run_text / run_text_pair: the words of the last run in token order (special tokens are
 * not words). The array lives in the session until the next run. */
EB_API EB_NODISCARD eb_status eb_session_get_words(const eb_session* session, const eb_word** out_words, size_t* out_count);

/* Extractive QA on a context of any length: runs (question, context) as one pair when it fits the
 * session, else over overlapping windows of the context's tokens (consecutive windows share
 * `doc_stride` tokens; < 0: min(128, window / 2)), as HuggingFace's question-answering pipeline
 * does, and returns the best span over all windows: begin_byte/end_byte index `context`,
 * start_token/end_token index the tokens of the window it was found in, `*out_windows` (may be
 * NULL) receives the number of windows run. Afterwards the session's outputs and offsets are those
 * of the last window's run. A question that leaves no room for context is
 * EB_ERROR_SEQUENCE_TOO_LONG. Performs no heap allocation. With BERT's vocab.txt WordPiece the
 * context may have any length (it is re-tokenized window by window); with the other tokenizers
 * it is tokenized once, whole, into buffers sized at session creation: a context of more than
 * about max_sequence_length + 1025 tokens (or 16 bytes per such token) is
 * EB_ERROR_SEQUENCE_TOO_LONG. */
EB_API EB_NODISCARD eb_status eb_session_answer(eb_session* session, const char* question, const char* context,
                                   int32_t max_answer_tokens, int32_t doc_stride, eb_span* out_span,
                                   int32_t* out_windows);

/* The runs after this call use 1 thread (the caller's) or all of the session's num_threads (the
 * only two values: the session's pool has that many threads; the workers sleep while it runs on
 * 1). For cores that other work keeps busy (a phone with background work, a busy server): there
 * every parallel loop waits for a descheduled worker and 2 threads can be several times slower
 * than 1 (docs/batches.md, "Threads on loaded cores"); an app that knows its load switches here
 * without making a new session. A session on N threads also moves its runs to the caller alone
 * by itself while it sees its threads preempted at such a rate, and tries N again after a hold
 * (1 s, doubling to 16 s); this call resets that, and EDGEBERT_ADAPTIVE_THREADS=0 in the
 * environment turns it off. Outputs are the same on 1 and N threads. No allocation; the last
 * run's outputs stay readable. EB_ERROR_INVALID_ARGUMENT for any other value. */
EB_API EB_NODISCARD eb_status eb_session_set_num_threads(eb_session* session, int32_t num_threads);

/* Matryoshka embeddings: the sentence embedding of the runs after this call truncated to its first
 * `dims` values and L2-normalized again (EB_OUTPUT_SENTENCE_EMBEDDING then has `dims` values per
 * sequence, in eb_session_get_output and eb_session_embed_many). Meaningful only for models
 * trained for it (their model card lists the sizes, e.g. Qwen3-Embedding 32..1024,
 * EmbeddingGemma 768/512/256/128); any other model's truncated vectors are just worse. 0 (the
 * default) = the full embedding. EB_ERROR_UNSUPPORTED on a model without sentence embeddings,
 * EB_ERROR_INVALID_ARGUMENT outside 0..hidden_size. The last run's outputs are dropped. */
EB_API EB_NODISCARD eb_status eb_session_set_embedding_dims(eb_session* session, int32_t dims);

/* Prompts (sentence-transformers' config_sentence_transformers.json "prompts", stored by the
 * converter; e.g. EmbeddingGemma "query" = "task: search result | query: "): the text runs after
 * this call (eb_session_run_text, the first text of eb_session_run_text_pair, packed runs and
 * eb_session_embed_many / classify_many) tokenize `prompt text + text` as one string, as
 * SentenceTransformer.encode(prompt_name=NAME) does; its tokens count toward the length limits,
 * and the prompt's own tokens get byte offsets {0, 0}. Token-id runs and QA are unchanged. NULL or
 * "" = no prompt; sessions start with the model's default_prompt_name (none for most models).
 * EB_ERROR_INVALID_ARGUMENT with a message naming the model's prompts for an unknown name (then
 * nothing changes). On success the last run's outputs are dropped. */
EB_API EB_NODISCARD eb_status eb_session_set_prompt(eb_session* session, const char* name);

/* ---- Many texts per call: embed, classify, token labels ----
 * eb_session_embed_many and eb_session_classify_many run `count` texts (pairs NULL) or text pairs
 * (texts[i] with pairs[i], as eb_session_run_text_pair) and write one row per input into the
 * caller's buffers, row i equal to a single run of input i (int8: bit-identical). They loop over
 * packed runs inside the library (eb_session_run_texts / eb_session_run_text_pairs: as many whole
 * inputs per run as max_batch_tokens holds, until every input is consumed).
 * Per-input statuses: with out_statuses (int32 [count], eb_status values) every input gets its
 * own (EB_OK, or why it did not run: EB_ERROR_SEQUENCE_TOO_LONG, EB_ERROR_INVALID_ARGUMENT for a
 * NULL text, ...), a failed input's row is all 0 (label -1), and the call returns EB_OK. With
 * out_statuses NULL the call stops at the first input that fails and returns its status; the
 * message (eb_session_last_error) names it, "texts[i]: " ("texts[i], pairs[i]: " for pairs)
 * followed by the message a single run of it gives; rows before it are written, the later ones
 * are unspecified, and the session has no outputs.
 * The call's own errors (nothing is written, the session has no outputs): NULL texts or output
 * buffer, a buffer smaller than count rows, an unknown `which`, a text that is not UTF-8 (refused
 * before anything runs, the message naming it: "texts[i] is not valid UTF-8: ..."):
 * EB_ERROR_INVALID_ARGUMENT; a model without the output: EB_ERROR_UNSUPPORTED (even for count 0);
 * a backend failure (the session's message). count 0 runs nothing and returns EB_OK (texts and
 * buffers may then be NULL). Afterwards the session's outputs are those of the last packed run
 * (eb_session_get_output & co.). Performs no heap allocation. */
/* Embeddings: `which` is EB_OUTPUT_SENTENCE_EMBEDDING (sentence-embedding models) or
 * EB_OUTPUT_POOLER_OUTPUT (models with a pooler); out is float32 [count, hidden_size] and holds
 * out_size floats (at least count * hidden_size). */
EB_API EB_NODISCARD eb_status eb_session_embed_many(eb_session* session, const char* const* texts, const char* const* pairs,
                                       size_t count, eb_output which, float* out, size_t out_size,
                                       int32_t* out_statuses);
/* Sequence classifiers: out_logits float32 [count, num_labels] (logits_size floats, at least
 * count * num_labels) and/or out_labels int32 [count], the index of each input's largest logit
 * (the first of equal maxima: its name is eb_model_get_label). Either may be NULL, not both. */
EB_API EB_NODISCARD eb_status eb_session_classify_many(eb_session* session, const char* const* texts, const char* const* pairs,
                                          size_t count, float* out_logits, size_t logits_size, int32_t* out_labels,
                                          int32_t* out_statuses);
/* Token classifiers, after any successful run (single or packed): for each token of the run, the
 * index of its largest token_logits entry (the first of equal maxima), special tokens included
 * (eb_session_get_token_offsets tells them by segment -1; eb_word.label is the label of a word's
 * first token). *out_len (may be NULL) receives the run's token count; out_labels may be NULL
 * (only the count), else it must hold labels_size >= that many (EB_ERROR_INVALID_ARGUMENT).
 * Other models: EB_ERROR_UNSUPPORTED; no run yet: EB_ERROR_BAD_STATE. Performs no heap
 * allocation. */
EB_API EB_NODISCARD eb_status eb_session_get_token_labels(const eb_session* session, int32_t* out_labels, size_t labels_size,
                                             size_t* out_len);

/* ---- Chunked embedding of long documents ----
 * eb_session_embed_chunked embeds a text of any length (text_size bytes, UTF-8, need not end in
 * NUL) on a sentence-embedding model as overlapping windows of its tokens, the windows
 * HuggingFace tokenizers gives with return_overflowing_tokens=True and stride=`stride`
 * (max_length = window + the model's special tokens): the text's tokens (no special tokens) are
 * cut into windows of `window` tokens starting at tokens 0, step, 2 step, ... (step = window -
 * stride) until one reaches the end (a text of at most `window` tokens, an empty one included, is
 * one window); each window runs as a text of its own ([CLS] window [SEP], <s> window </s>, ...)
 * and gets the session's sentence embedding. With a prompt set (eb_session_set_prompt) every
 * window carries it: [CLS] prompt window [SEP], the prompt's tokens those of its text without
 * trailing spaces (the tokens a prompt run gives it with offsets {0, 0}: a space that joins the
 * next word stays out); the windows cut the tokens of prompt + text tokenized as one string
 * without those prompt tokens, so the text's first word is tokenized as in a prompt run (EmbeddingGemma:
 * "▁The", not "The") and a text of one window gives the prompt run's embedding exactly. They count
 * toward max_sequence_length and into the mean's pooling as sentence-transformers' prompts do (the
 * model's pooling, normalization and Matryoshka dims: `width` = eb_session_set_embedding_dims's
 * dims, else hidden_size). The windows go through
 * packed runs (as many per run as max_batch_tokens holds).
 *   EB_CHUNK_POOLING_NONE: out is float32 [windows, width], one row per window (out_size floats,
 *     at least windows * width);
 *   EB_CHUNK_POOLING_MEAN: out is float32 [width], the windows' vectors averaged with weights
 *     their token counts (eb_chunk.tokens; 1 for an empty text's window), then L2-normalized when
 *     the model normalizes its embeddings (or dims are set).
 * out NULL: nothing runs; *out_windows receives the number of windows (then out_windows must not
 * be NULL). Otherwise out_windows may be NULL, and chunks (may be NULL) receives each window's
 * place, chunks_size entries (at least the windows). When out is NULL, pooling is NONE or chunks
 * is given, the whole text is tokenized once first to count the windows, so buffers too small
 * are refused before any run; MEAN without chunks tokenizes it once (its one row is written only
 * after every window ran: on an error out is left as it was).
 * Bounded memory: the text is read in pieces of at most 16 * (max_batch_tokens + 1025) bytes (the
 * session's text workspace), cut only at a single ASCII space (a ' ' whose neighbouring bytes are
 * not ASCII whitespace; every tokenizer kind starts a word there), into buffers sized at session
 * creation: a stretch longer than that without such a space is EB_ERROR_SEQUENCE_TOO_LONG (the
 * message names its byte), as is a text of 2 GiB or more. Errors: EB_ERROR_INVALID_ARGUMENT for
 * NULL text, window <= 0, stride < 0 or stride >= window, an unknown pooling, buffers too small,
 * text that is not UTF-8; EB_ERROR_SEQUENCE_TOO_LONG when window + the special tokens exceed
 * max_sequence_length (with the prompt's tokens); EB_ERROR_UNSUPPORTED on a model without
 * sentence embeddings or vocabulary. Afterwards the
 * session's outputs are those of the last packed run. Performs no heap allocation. */
typedef enum eb_chunk_pooling {
  EB_CHUNK_POOLING_NONE = 0, /* one vector per window */
  EB_CHUNK_POOLING_MEAN = 1  /* one vector: token-weighted mean of the windows' vectors */
} eb_chunk_pooling;
typedef struct eb_chunk {
  size_t begin_byte;  /* [begin_byte, end_byte) in the text: first token's begin to last's end */
  size_t end_byte;    /* (both 0 for a window without tokens) */
  size_t first_token; /* index of the window's first token among the text's tokens */
  size_t tokens;      /* the window's tokens (special tokens not counted) */
} eb_chunk;
EB_API EB_NODISCARD eb_status eb_session_embed_chunked(eb_session* session, const char* text, size_t text_size,
                                          int32_t window, int32_t stride, eb_chunk_pooling pooling, float* out,
                                          size_t out_size, eb_chunk* chunks, size_t chunks_size,
                                          size_t* out_windows);

/* ---- Truncation of long texts ----
 * By default a text (pair) longer than the session's max_sequence_length is refused
 * (EB_ERROR_SEQUENCE_TOO_LONG), never cut silently. With a truncation strategy set on the session
 * (it applies to every later text call: run_text, run_text_pair, the packed runs, embed / classify
 * many and rerank; not to eb_session_answer, which runs long contexts in windows) such a text is
 * cut to fit, from its end, as HuggingFace tokenizers' truncation (max_length = the session
 * maximum, direction right, the template's special tokens kept) does:
 *   EB_TRUNCATION_LONGEST_FIRST: a single text keeps its first (maximum - specials) tokens; of a
 *     pair, the shorter text is kept whole and the longer one cut to the rest, unless both are
 *     longer than half of the room: then the shorter keeps floor(room / 2) tokens and the longer
 *     ceil(room / 2) (the first text counts as the shorter when both are equally long);
 *   EB_TRUNCATION_ONLY_SECOND: only the second text of a pair is cut (the query of a reranker or a
 *     QA question stays whole); a pair whose second text would keep no token, and a single text,
 *     stay EB_ERROR_SEQUENCE_TOO_LONG (HF raises an error there).
 * How many text tokens were cut is eb_session_get_truncated_tokens (0: nothing was cut). Texts
 * beyond what the tokenizer takes at all (see eb_session_run_text: byte limits of tokenizers other
 * than vocab.txt WordPiece) stay EB_ERROR_SEQUENCE_TOO_LONG. No heap allocation. */
typedef enum eb_truncation {
  EB_TRUNCATION_NONE = 0,          /* default: too long is EB_ERROR_SEQUENCE_TOO_LONG */
  EB_TRUNCATION_LONGEST_FIRST = 1, /* HF "longest_first" */
  EB_TRUNCATION_ONLY_SECOND = 2    /* HF "only_second" (pairs) */
} eb_truncation;
/* Sets the session's strategy (any other value: EB_ERROR_INVALID_ARGUMENT). Keeps the last run. */
EB_API EB_NODISCARD eb_status eb_session_set_truncation(eb_session* session, eb_truncation truncation);
/* Text tokens cut from sequence `index` of the last run (eb_session_get_sequence; 0 after a single
 * run). EB_ERROR_BAD_STATE before a successful run, EB_ERROR_INVALID_ARGUMENT for an index out
 * of range. */
EB_API EB_NODISCARD eb_status eb_session_get_truncated_tokens(const eb_session* session, size_t index,
                                                              int32_t* out_tokens);

/* ---- Reranking with a cross-encoder ----
 * A cross-encoder is a sequence classifier with one label (ms-marco-MiniLM, bge-reranker: their
 * HF checkpoints convert as such): it reads "query [SEP] passage" as a text pair (the template of
 * eb_session_run_text_pair) and its logit says how relevant the passage is. The score is the one
 * sentence-transformers' CrossEncoder.predict gives: the raw logit, or sigmoid(logit) when the
 * checkpoint's config.json names Sigmoid ("sentence_transformers": {"activation_fn": ...}, or
 * the older "sbert_ce_default_activation_function") or names neither (CrossEncoder's default for
 * one label); the converter records which. Both keep the order of the logits.
 * The pairs run through packed runs as eb_session_classify_many does (each pair's score equals a
 * single run_text_pair of it: int8 bit-identical), with the same per-input statuses: with
 * out_statuses (int32 [count]) every passage gets its own and a failed one scores -INFINITY
 * (rerank_top_k leaves it out); with out_statuses NULL the first passage that fails stops the
 * call with its status, the message naming it ("passages[i]: ..."). A model that is not a
 * one-label sequence classifier: EB_ERROR_UNSUPPORTED (even for count 0); NULL query, passages or
 * output buffers (count > 0), text that is not UTF-8: EB_ERROR_INVALID_ARGUMENT. count 0 runs
 * nothing and returns EB_OK. Afterwards the session's outputs are those of the last packed run.
 * Performs no heap allocation. */
/* Scores in passage order: out_scores float32 [count]. */
EB_API EB_NODISCARD eb_status eb_session_rerank(eb_session* session, const char* query, const char* const* passages,
                                                size_t count, float* out_scores, int32_t* out_statuses);
/* The best k passages, best first (equal scores: the lower index first): their indices into
 * out_indices[k] and scores into out_scores[k] (both needed when k > 0); *out_found (may be NULL)
 * receives how many were written: min(k, passages that ran). k >= count ranks every passage. */
EB_API EB_NODISCARD eb_status eb_session_rerank_top_k(eb_session* session, const char* query,
                                                      const char* const* passages, size_t count, size_t k,
                                                      int32_t* out_indices, float* out_scores, size_t* out_found,
                                                      int32_t* out_statuses);

/* ---- Sparse vectors (masked-LM models: SPLADE; bge-m3) ----
 * The entries of sequence `index`'s EB_OUTPUT_SPARSE_EMBEDDING (after a single run: index 0)
 * whose weight is above `threshold`, largest first (equal weights: the lower id first), at most k
 * (k 0: every such entry; the arrays then need vocab_size room): ids into out_ids, weights into
 * out_weights, how many into *out_count. EB_ERROR_UNSUPPORTED for a model without one,
 * EB_ERROR_BAD_STATE before a run, EB_ERROR_INVALID_ARGUMENT for an index out of range or NULL
 * arrays. Performs no heap allocation. */
EB_API EB_NODISCARD eb_status eb_session_sparse_top_k(const eb_session* session, size_t index, size_t k, float threshold,
                                                      int32_t* out_ids, float* out_weights, size_t* out_count);

/* ---- Fill-mask (masked-LM models: EB_TASK_MASKED_LM) ----
 * After a successful run (single or packed, text or ids): the k most probable vocabulary entries
 * at run-wide token `token` (a row of last_hidden_state; in a packed run sequence q's tokens are
 * [first_token, first_token + tokens); a sequence that failed has none), largest first (equal
 * probabilities: the lower id first): ids into out_ids[k], probabilities into out_probs[k]
 * (softmax over the whole vocabulary of the masked-LM decoder's logits at that token, as
 * HuggingFace's FillMaskPipeline), how many into *out_count: min(k, vocab_size). int8 models use
 * the same int8 decoder as the sparse embedding. EB_ERROR_UNSUPPORTED for another model,
 * EB_ERROR_BAD_STATE before a successful run, EB_ERROR_INVALID_ARGUMENT for a token out of range,
 * k 0 or NULL arrays. The run's outputs stay readable. Performs no heap allocation. */
EB_API EB_NODISCARD eb_status eb_session_fill_mask(eb_session* session, size_t token, size_t k, int32_t* out_ids,
                                                   float* out_probs, size_t* out_count);
/* The tokenizer's mask token id (the special token "[MASK]" or "<mask>") into *out_id;
 * EB_ERROR_UNSUPPORTED when the model's tokenizer has none (or the model has no vocabulary). */
EB_API EB_NODISCARD eb_status eb_model_get_mask_token_id(const eb_model* model, int32_t* out_id);
/* The vocabulary string of token `id` (0 <= id < the tokenizer's vocabulary): its bytes into
 * *out_text, their count into *out_len (not NUL-terminated; the bytes live as long as the model).
 * EB_ERROR_UNSUPPORTED for a model without a vocabulary, EB_ERROR_INVALID_ARGUMENT for an id out
 * of range. */
EB_API EB_NODISCARD eb_status eb_model_get_token(const eb_model* model, int32_t id, const char** out_text,
                                                 size_t* out_len);

/* ---- Multi-vector scoring (ColBERT models: EB_OUTPUT_TOKEN_VECTORS) ----
 * ColBERT's late interaction: *out_score = sum over the q_tokens query rows of the largest dot
 * product with any of the d_tokens document rows (q [q_tokens, dim], d [d_tokens, dim], float32
 * row-major; normalized rows make it a sum of cosines). Which rows to pass is the caller's choice
 * (e.g. PyLate leaves the document's padding and punctuation out: eb_session_get_token_vectors
 * gives those rows). Accumulates in double.
 * EB_ERROR_INVALID_ARGUMENT for a NULL pointer or a zero count / dim. Performs no allocation. */
EB_API EB_NODISCARD eb_status eb_maxsim(const float* q, size_t q_tokens, const float* d, size_t d_tokens, size_t dim,
                                        float* out_score);

/* PyLate's hierarchical token pooling of one document's token vectors (ColBERT.encode(...,
 * pool_factor=F) for documents; pass the rows eb_session_get_token_vectors gives): the first
 * protected_rows rows (PyLate's protected_tokens, 1 there: [CLS]) are kept; the other m rows are
 * clustered by Ward linkage on the rows of their distance matrix 1 - E E^T (as PyLate's
 * scipy.cluster.hierarchy.linkage call reads it), cut into max(m / F, 1) clusters as scipy's
 * fcluster "maxclust" cuts, and each cluster becomes the mean of its rows (not re-normalized).
 * out (room for `rows` rows of dim floats) receives the cluster means in fcluster's label order,
 * then the protected rows, *out_rows rows in all (about rows / F). pool_factor 1 copies the rows
 * unchanged (PyLate does not pool). Where PyLate fails (m of 1: scipy refuses one observation)
 * the rows are kept, the protected ones last; for m = 2 both rows become one cluster (scipy reads
 * an unset value there). Works in double; allocates O(m^2) doubles of scratch, freed before it
 * returns (a helper for indexing, not part of a run): EB_ERROR_OUT_OF_MEMORY when that fails.
 * EB_ERROR_INVALID_ARGUMENT for a NULL pointer, a zero rows / dim / pool_factor or a value that
 * is not finite. */
EB_API EB_NODISCARD eb_status eb_pool_token_vectors(const float* vectors, size_t rows, size_t dim, size_t pool_factor,
                                                    size_t protected_rows, float* out, size_t* out_rows);

/* ---- ColBERT queries and documents (PyLate's input conventions) ----
 * A PyLate folder says how its model encodes queries and documents (config_sentence_transformers
 * .json: query_prefix / document_prefix, query_length / document_length, do_query_expansion,
 * attend_to_expansion_tokens, skiplist_words); the converter stores them (edgebert-inspect shows
 * them). Text runs (eb_session_run_text and the packed eb_session_run_texts) then lay out, after
 *   EB_COLBERT_INPUT_QUERY:    [CLS] marker text [SEP], then the expansion token ([MASK]) up to
 *                              query_length tokens in all (with do_query_expansion), attended by
 *                              no token unless attend_to_expansion_tokens (their rows are still
 *                              computed: PyLate keeps every query row);
 *   EB_COLBERT_INPUT_DOCUMENT: [CLS] marker text [SEP], and eb_session_get_token_vectors leaves
 *                              out the rows of the skiplist's tokens (PyLate's skiplist_words,
 *                              by default the ASCII punctuation, each as the id its tokenizer
 *                              gives the word: a word not in the vocabulary stands for [UNK]);
 *   EB_COLBERT_INPUT_PLAIN:    the model's template alone (the default: a session serves both
 *                              kinds, and neither is a safe guess).
 * The marker is the prefix's token id (none when the prefix is ""), inserted after the template's
 * first token as PyLate does. A query or document has at most query_length / document_length
 * tokens (and at most the session maximum); a longer one is cut as the session's truncation says
 * (eb_session_set_truncation: EB_TRUNCATION_LONGEST_FIRST gives PyLate's tokens, which it always
 * truncates) and is EB_ERROR_SEQUENCE_TOO_LONG by default. Pairs, token-id runs and the other
 * tasks are unchanged (pairs are refused in the QUERY and DOCUMENT modes). Setting a mode keeps
 * the last run's outputs. EB_ERROR_UNSUPPORTED for a model without PyLate conventions (every
 * model but a converted PyLate folder) unless PLAIN; EB_ERROR_INVALID_ARGUMENT for another value,
 * or a query_length beyond the session maximum. No heap allocation. */
typedef enum eb_colbert_input {
  EB_COLBERT_INPUT_PLAIN = 0,
  EB_COLBERT_INPUT_QUERY = 1,
  EB_COLBERT_INPUT_DOCUMENT = 2
} eb_colbert_input;
EB_API EB_NODISCARD eb_status eb_session_set_colbert_input(eb_session* session, eb_colbert_input input);

/* The token vectors of sequence `index` of the last run (eb_session_get_sequence; 0 after a
 * single run) as its model scores them, copied into out [capacity_rows, dim] (dim: eb_model_info
 * num_labels): the sequence's rows of EB_OUTPUT_TOKEN_VECTORS, without the skiplist's rows for
 * a document run (EB_COLBERT_INPUT_DOCUMENT). *out_rows receives their count; out may be NULL
 * with capacity_rows 0 to ask for it. EB_ERROR_INVALID_ARGUMENT for an index out of range, a NULL
 * out_rows, or a capacity below the count (nothing is copied); EB_ERROR_UNSUPPORTED for a model
 * without token vectors; EB_ERROR_BAD_STATE before a successful run. No heap allocation. */
EB_API EB_NODISCARD eb_status eb_session_get_token_vectors(const eb_session* session, size_t index, float* out,
                                                           size_t capacity_rows, size_t* out_rows);

/* Memory facts: planned arena bytes, the naive sum of all intermediate buffers, and the bytes
 * XNNPACK holds in packed weights. Any pointer may be NULL. */
EB_API EB_NODISCARD eb_status eb_session_memory(const eb_session* session, size_t* arena_bytes, size_t* naive_bytes,
                                   size_t* packed_weight_bytes);

/* Message of the last failed call on this session ("" if none). Never NULL for a non-NULL session. */
EB_API const char* eb_session_last_error(const eb_session* session);

#ifdef __cplusplus
}
#endif

#endif /* EDGEBERT_EDGEBERT_H_ */
