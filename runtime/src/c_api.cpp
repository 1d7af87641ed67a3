// SPDX-License-Identifier: Apache-2.0
// c_api.cpp: the C boundary. Validates every pointer and argument, maps C++ results to status
// codes, and guarantees that no exception leaves the library.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <new>
#include <string>
#include <type_traits>

#include "backend/weight_cache.h"
#include "edgebert/edgebert.h"
#include "model.h"
#include "program/program.h"
#include "session.h"
#include "tasks/question_answering.h"
#include "tasks/multi_vector.h"
#include "tasks/token_pooling.h"
#include "text_encoder.h"
#include "xnn_gemm.h"

// A loaded model and its Program (built once here, shared by every session of the model). The
// Program owns the model too, and every session owns the Program: eb_model_free while sessions
// live only drops this handle; the model, its mapping and packed weights go with the last session.
struct eb_model {
  std::shared_ptr<const edgebert::Model> impl;
  std::shared_ptr<const edgebert::Program> program;
};

struct eb_session {
  std::unique_ptr<edgebert::Session> impl;
};

namespace {

void write_error(char* buf, size_t size, const std::string& msg) {
  if (!buf || size == 0) return;
  std::snprintf(buf, size, "%s", msg.c_str());
}

// The guards: every extern "C" body runs inside one, so no exception leaves the library.
// Calls with an error buffer: the exception becomes a status and a message in the buffer.
template <class F>
eb_status guarded(char* err, size_t err_size, F&& f) {
  try {
    return f();
  } catch (const std::bad_alloc&) {
    write_error(err, err_size, "out of memory");
    return EB_ERROR_OUT_OF_MEMORY;
  } catch (...) {
    write_error(err, err_size, "internal error");
    return EB_ERROR_BACKEND;
  }
}

// Calls without an error channel (model getters): the status alone.
template <class F>
eb_status guarded(F&& f) {
  try {
    return f();
  } catch (const std::bad_alloc&) {
    return EB_ERROR_OUT_OF_MEMORY;
  } catch (...) {
    return EB_ERROR_BACKEND;
  }
}

// Functions that return no status (free, destroy, init, strings): nothing to report.
template <class T, class F>
T guarded_value(T fallback, F&& f) noexcept {
  try {
    return f();
  } catch (...) {
    return fallback;
  }
}
template <class F>
void guarded_void(F&& f) noexcept {
  try {
    f();
  } catch (...) {
  }
}

// The value of a C enum argument as an int, read from its bytes: a caller may pass any int, and
// loading an out-of-range value as the enum type is undefined behaviour (UBSan: -fsanitize=enum).
template <class E>
int32_t enum_value(const E& e) {
  static_assert(sizeof(E) == sizeof(int32_t), "C enums are int-sized");
  int32_t v;
  std::memcpy(&v, &e, sizeof v);
  return v;
}

enum class OnError { kResetRun, kKeepRun };

// Session calls: the exception becomes the session's status and message (eb_session_last_error).
// A run that throws is a failed run: kResetRun clears its state (through a run that fails at
// once: Session::run_ids resets the run state before checking its arguments), so no output of a
// half-done run stays readable. Texts that are not UTF-8 (InvalidTextError, text_encoder.h) are
// EB_ERROR_INVALID_ARGUMENT with the offset of the first invalid byte.
// The text inputs of a call, to name the one that is not UTF-8 ("texts[3] is not valid UTF-8:
// byte 0xFF at offset 5"): the first invalid one in order is the one the tokenizer met first.
struct TextArg {
  const char* name;
  const char* const* texts;  // `count` texts (entries may be NULL)
  size_t count;
  bool indexed;  // an array: named "name[k]"
};

// S is eb_session for run entry points (which may reset the run) and const eb_session for the
// getters (which only report: the error slot is the handle's error channel, Session::fail).
template <class S, class F>
eb_status guarded(S* session, OnError on_error, F&& f, std::initializer_list<TextArg> inputs = {}) {
  eb_status code = EB_ERROR_BACKEND;
  const char* message = "internal error";
  char what[160];
  try {
    return f();
  } catch (const edgebert::InvalidTextError& e) {
    code = EB_ERROR_INVALID_ARGUMENT;
    std::snprintf(what, sizeof what, "%s", e.what());
    message = what;
    try {
      size_t count = 0;
      for (const TextArg& in : inputs) count = std::max(count, in.texts ? in.count : 0);
      bool named = false;
      for (size_t k = 0; k < count && !named; ++k) {  // in the order they are tokenized: a[k], b[k]
        for (const TextArg& in : inputs) {
          if (named || in.texts == nullptr || k >= in.count || in.texts[k] == nullptr) continue;
          const std::string name = in.indexed ? std::string(in.name) + "[" + std::to_string(k) + "]" : in.name;
          const edgebert::Status st = edgebert::TextEncoder::check(in.texts[k], name.c_str());
          if (!st.is_ok()) {
            std::snprintf(what, sizeof what, "%s", st.message().c_str());
            named = true;
          }
        }
      }
    } catch (...) {  // keep the tokenizer's own message
    }
  } catch (const edgebert::UntokenizableTextError& e) {
    code = EB_ERROR_INVALID_ARGUMENT;
    std::snprintf(what, sizeof what, "%s", e.what());
    message = what;
  } catch (const std::bad_alloc&) {
    code = EB_ERROR_OUT_OF_MEMORY;
    message = "out of memory during the call";
  } catch (const std::exception& e) {
    std::snprintf(what, sizeof what, "internal error: %s", e.what());
    message = what;
  } catch (...) {
  }
  try {
    if constexpr (!std::is_const_v<S>) {
      if (on_error == OnError::kResetRun) session->impl->reset_run();
    }
    const edgebert::Session& s = *session->impl;
    return s.fail(code, "%s", message);
  } catch (...) {
    return code;
  }
}

bool options_valid(const eb_load_options* o, char* error, size_t error_size) {
  if (!o) return true;
  for (int32_t r : o->reserved)
    if (r != 0) {
      write_error(error, error_size, "eb_load_options.reserved must be 0 (use eb_load_options_init)");
      return false;
    }
  if (o->skip_weight_cache_payload_check != 0 && o->skip_weight_cache_payload_check != 1) {
    write_error(error, error_size, "eb_load_options.skip_weight_cache_payload_check must be 0 or 1");
    return false;
  }
  return true;
}

edgebert::WeightCacheOptions cache_options_of(const eb_load_options* o) {
  edgebert::WeightCacheOptions cache_options;
  cache_options.verify_payload = !(o && o->skip_weight_cache_payload_check == 1);
  return cache_options;
}
std::string cache_path_of(const eb_load_options* o) { return o && o->weight_cache_path ? o->weight_cache_path : ""; }

// The weight cache file named by the options, read ahead while the model loads.
std::shared_ptr<edgebert::weight_cache_file::Prefetch> read_cache_ahead(const eb_load_options* o) {
  return edgebert::prefetch_weight_cache(cache_path_of(o), cache_options_of(o));
}

// Builds the model's program (with its shared packed weights: mapped from or written to the
// weight cache file when the options name one, read ahead by `prefetch` where it was started) and
// wraps both (the model load's last step).
eb_status make_model(std::unique_ptr<edgebert::Model> m, const eb_load_options* o,
                     std::shared_ptr<edgebert::weight_cache_file::Prefetch> prefetch, eb_model** out_model, char* error,
                     size_t error_size) {
  std::string msg;
  if (const edgebert::Status ready = edgebert::xnn_ready(); !ready) {
    msg = ready.message();
    write_error(error, error_size, msg);
    return EB_ERROR_BACKEND;
  }
  const std::string cache_path = cache_path_of(o);
  std::shared_ptr<const edgebert::Model> model(std::move(m));
  edgebert::WeightCacheOptions cache_options = cache_options_of(o);
  cache_options.prefetch = std::move(prefetch);
  edgebert::Result<std::shared_ptr<const edgebert::Program>> program =
      edgebert::Program::build(model, edgebert::XnnGemm::int8_float_output_supported(), cache_path, cache_options);
  if (!program.is_ok()) {
    write_error(error, error_size, program.status().message());
    return program.status().code();
  }
  *out_model = new eb_model{std::move(model), program.take()};
  write_error(error, error_size, "");
  return EB_OK;
}

}  // namespace

extern "C" {

const char* eb_version(void) {
  return guarded_value(static_cast<const char*>(""), [] { return EDGEBERT_VERSION_STRING; });
}

const char* eb_status_string(eb_status status) {
  const int32_t s = enum_value(status);  // any int a caller passes
  return guarded_value(static_cast<const char*>("unknown status"), [s]() -> const char* {
    switch (s) {
      case EB_OK: return "ok";
      case EB_ERROR_INVALID_ARGUMENT: return "invalid argument";
      case EB_ERROR_IO: return "I/O error";
      case EB_ERROR_INVALID_MODEL: return "invalid model";
      case EB_ERROR_UNSUPPORTED: return "unsupported";
      case EB_ERROR_OUT_OF_MEMORY: return "out of memory";
      case EB_ERROR_BACKEND: return "backend error";
      case EB_ERROR_SEQUENCE_TOO_LONG: return "sequence too long";
      case EB_ERROR_BAD_STATE: return "bad state";
    }
    return "unknown status";
  });
}

void eb_load_options_init(eb_load_options* options) {
  guarded_void([&] {
    if (options) *options = eb_load_options{};
  });
}

eb_status eb_model_load_file(const char* path, eb_model** out_model, char* error, size_t error_size) {
  return eb_model_load_file_with_options(path, nullptr, out_model, error, error_size);
}

eb_status eb_model_load_file_with_options(const char* path, const eb_load_options* options, eb_model** out_model,
                                          char* error, size_t error_size) {
  return guarded(error, error_size, [&]() -> eb_status {
    if (out_model) *out_model = nullptr;
    if (!path || !out_model) {
      write_error(error, error_size, "path and out_model must not be NULL");
      return EB_ERROR_INVALID_ARGUMENT;
    }
    if (!options_valid(options, error, error_size)) return EB_ERROR_INVALID_ARGUMENT;
    auto prefetch = read_cache_ahead(options);
    edgebert::Result<std::unique_ptr<edgebert::Model>> m = edgebert::Model::load_file(path);
    if (!m) {
      write_error(error, error_size, m.status().message());
      return m.status().code();
    }
    return make_model(m.take(), options, std::move(prefetch), out_model, error, error_size);
  });
}

eb_status eb_model_load_memory(const void* data, size_t size, eb_model** out_model, char* error, size_t error_size) {
  return eb_model_load_memory_with_options(data, size, nullptr, out_model, error, error_size);
}

eb_status eb_model_load_memory_with_options(const void* data, size_t size, const eb_load_options* options,
                                            eb_model** out_model, char* error, size_t error_size) {
  return guarded(error, error_size, [&]() -> eb_status {
    if (out_model) *out_model = nullptr;
    if (!options_valid(options, error, error_size)) return EB_ERROR_INVALID_ARGUMENT;
    if (!data || !out_model) {
      write_error(error, error_size, "data and out_model must not be NULL");
      return EB_ERROR_INVALID_ARGUMENT;
    }
    if (reinterpret_cast<uintptr_t>(data) % 64 != 0) {
      write_error(error, error_size, "model memory must be 64-byte aligned");
      return EB_ERROR_INVALID_ARGUMENT;
    }
    auto prefetch = read_cache_ahead(options);
    edgebert::Result<std::unique_ptr<edgebert::Model>> m = edgebert::Model::create(data, size, nullptr, 0);
    if (!m) {
      write_error(error, error_size, m.status().message());
      return m.status().code();
    }
    return make_model(m.take(), options, std::move(prefetch), out_model, error, error_size);
  });
}

eb_status eb_model_get_weight_cache(const eb_model* model, eb_weight_cache_state* out_state, const char** out_message) {
  return guarded([&]() -> eb_status {
    if (out_state) *out_state = EB_WEIGHT_CACHE_NONE;
    if (out_message) *out_message = "";
    if (!model) return EB_ERROR_INVALID_ARGUMENT;
    if (out_state) *out_state = model->program->weights().state;
    if (out_message) *out_message = model->program->weights().message.c_str();
    return EB_OK;
  });
}

eb_status eb_model_get_memory(const eb_model* model, size_t* packed_weight_bytes, size_t* model_file_bytes) {
  return guarded([&]() -> eb_status {
    if (packed_weight_bytes) *packed_weight_bytes = 0;
    if (model_file_bytes) *model_file_bytes = 0;
    if (!model) return EB_ERROR_INVALID_ARGUMENT;
    if (packed_weight_bytes) *packed_weight_bytes = model->program->weights().packed_bytes();
    if (model_file_bytes) *model_file_bytes = model->impl->file_size;
    return EB_OK;
  });
}

eb_status eb_model_get_info(const eb_model* model, eb_model_info* info) {
  return guarded([&]() -> eb_status {
    if (!model || !info) return EB_ERROR_INVALID_ARGUMENT;
    const edgebert::Model& m = *model->impl;
    info->hidden_size = m.config.hidden;
    info->num_attention_heads = m.config.heads;
    info->num_hidden_layers = m.config.layers;
    info->intermediate_size = m.config.intermediate;
    info->vocab_size = m.config.vocab;
    info->max_position_embeddings = m.config.max_position;
    info->type_vocab_size = m.config.type_vocab;
    info->num_labels = m.has_classifier ? m.config.num_labels : 0;
    info->has_pooler = m.has_pooler;
    info->has_embeddings = m.has_embeddings;
    info->has_vocab = m.text_tokenizer != nullptr;  // a tokenizer of any kind
    info->is_int8 = m.int8;
    info->task = static_cast<int32_t>(m.task);
    info->is_distilbert = m.is_distilbert;
    return EB_OK;
  });
}

eb_status eb_model_get_label(const eb_model* model, int32_t index, const char** out_name) {
  return guarded([&]() -> eb_status {
    if (out_name) *out_name = nullptr;
    if (!model || !out_name) return EB_ERROR_INVALID_ARGUMENT;
    const edgebert::Model& m = *model->impl;
    if (index < 0 || static_cast<size_t>(index) >= m.labels.size()) return EB_ERROR_INVALID_ARGUMENT;
    *out_name = m.labels[static_cast<size_t>(index)].c_str();
    return EB_OK;
  });
}

void eb_model_free(eb_model* model) {
  guarded_void([&] { delete model; });
}

void eb_session_options_init(eb_session_options* o) {
  guarded_void([&] {
    if (!o) return;
    std::memset(o, 0, sizeof *o);
    o->num_threads = 1;
  });
}

eb_status eb_session_create(const eb_model* model, const eb_session_options* options, eb_session** out_session,
                            char* error, size_t error_size) {
  return guarded(error, error_size, [&]() -> eb_status {
    if (out_session) *out_session = nullptr;
    if (!model || !out_session) {
      write_error(error, error_size, "model and out_session must not be NULL");
      return EB_ERROR_INVALID_ARGUMENT;
    }
    edgebert::SessionOptions so;
    if (options) {
      if (options->split_special_tokens != 0 && options->split_special_tokens != 1) {
        write_error(error, error_size, "eb_session_options.split_special_tokens must be 0 or 1");
        return EB_ERROR_INVALID_ARGUMENT;
      }
      so.threads = options->num_threads;
      so.max_seq_len = options->max_sequence_length;
      so.split_special_tokens = options->split_special_tokens != 0;
      so.max_memory_bytes = options->max_memory_bytes;
      so.max_batch_tokens = options->max_batch_tokens;
    }
    edgebert::Result<std::unique_ptr<edgebert::Session>> s = edgebert::Session::create(model->program, so);
    if (!s.is_ok()) {
      write_error(error, error_size, s.status().message());
      return s.status().code();
    }
    *out_session = new eb_session{s.take()};
    write_error(error, error_size, "");
    return EB_OK;
  });
}

void eb_session_destroy(eb_session* session) {
  guarded_void([&] { delete session; });
}

eb_status eb_session_run_ids(eb_session* session, const int32_t* input_ids, const int32_t* token_type_ids,
                             const int32_t* attention_mask, size_t seq_len) {
  if (!session) return EB_ERROR_INVALID_ARGUMENT;
  return guarded(session, OnError::kResetRun,
                 [&] { return session->impl->run_ids(input_ids, token_type_ids, attention_mask, seq_len); });
}

eb_status eb_session_set_embedding_dims(eb_session* session, int32_t dims) {
  if (!session) return EB_ERROR_INVALID_ARGUMENT;
  return guarded(session, OnError::kResetRun, [&] { return session->impl->set_embedding_dims(dims); });
}

eb_status eb_session_set_num_threads(eb_session* session, int32_t num_threads) {
  if (!session) return EB_ERROR_INVALID_ARGUMENT;
  return guarded(session, OnError::kKeepRun, [&] { return session->impl->set_num_threads(num_threads); });
}

eb_status eb_session_set_prompt(eb_session* session, const char* name) {
  if (!session) return EB_ERROR_INVALID_ARGUMENT;
  return guarded(session, OnError::kResetRun, [&] { return session->impl->set_prompt(name); });
}

eb_status eb_session_run_text(eb_session* session, const char* text) {
  if (!session) return EB_ERROR_INVALID_ARGUMENT;
  return guarded(session, OnError::kResetRun, [&] { return session->impl->run_text(text); }, {{"text", &text, 1, false}});
}

eb_status eb_session_run_text_pair(eb_session* session, const char* text_a, const char* text_b) {
  if (!session) return EB_ERROR_INVALID_ARGUMENT;
  return guarded(session, OnError::kResetRun, [&] { return session->impl->run_text_pair(text_a, text_b); },
                 {{"text_a", &text_a, 1, false}, {"text_b", &text_b, 1, false}});
}

eb_status eb_session_run_embeddings(eb_session* session, const float* embeddings, const int32_t* attention_mask,
                                    size_t seq_len) {
  if (!session) return EB_ERROR_INVALID_ARGUMENT;
  return guarded(session, OnError::kResetRun,
                 [&] { return session->impl->run_embeddings(embeddings, attention_mask, seq_len); });
}

eb_status eb_session_run_texts(eb_session* session, const char* const* texts, size_t count, size_t* out_consumed) {
  if (!session) return EB_ERROR_INVALID_ARGUMENT;
  return guarded(session, OnError::kResetRun,
                 [&] { return session->impl->run_texts(texts, nullptr, count, out_consumed); },
                 {{"texts", texts, count, true}});
}

eb_status eb_session_run_text_pairs(eb_session* session, const char* const* texts_a, const char* const* texts_b,
                                    size_t count, size_t* out_consumed) {
  if (!session) return EB_ERROR_INVALID_ARGUMENT;
  return guarded(session, OnError::kResetRun, [&]() -> eb_status {
    if (!texts_b) {
      if (out_consumed) *out_consumed = 0;
      return session->impl->refuse_run(EB_ERROR_INVALID_ARGUMENT, "texts_b is NULL");
    }
    return session->impl->run_texts(texts_a, texts_b, count, out_consumed);
  }, {{"texts_a", texts_a, count, true}, {"texts_b", texts_b, count, true}});
}

eb_status eb_session_run_ids_batch(eb_session* session, const int32_t* input_ids, const int32_t* token_type_ids,
                                   const size_t* lengths, size_t count, size_t* out_consumed) {
  if (!session) return EB_ERROR_INVALID_ARGUMENT;
  return guarded(session, OnError::kResetRun, [&] {
    return session->impl->run_ids_batch(input_ids, token_type_ids, nullptr, lengths, count, out_consumed);
  });
}

eb_status eb_session_run_ids_batch_masked(eb_session* session, const int32_t* input_ids, const int32_t* token_type_ids,
                                          const int32_t* attention_mask, const size_t* lengths, size_t count,
                                          size_t* out_consumed) {
  if (!session) return EB_ERROR_INVALID_ARGUMENT;
  return guarded(session, OnError::kResetRun, [&] {
    return session->impl->run_ids_batch(input_ids, token_type_ids, attention_mask, lengths, count, out_consumed);
  });
}

eb_status eb_session_get_sequence_count(const eb_session* session, size_t* out_count) {
  if (!session || !out_count) return EB_ERROR_INVALID_ARGUMENT;
  return guarded(session, OnError::kKeepRun, [&]() -> eb_status {
    const edgebert::Session& s = *session->impl;
    if (!s.has_output()) return s.fail(EB_ERROR_BAD_STATE, "no successful run yet: sequences are not available");
    *out_count = s.sequence_count();
    return EB_OK;
  });
}

eb_status eb_session_get_sequence(const eb_session* session, size_t index, eb_sequence_info* out_info) {
  if (!session || !out_info) return EB_ERROR_INVALID_ARGUMENT;
  return guarded(session, OnError::kKeepRun, [&]() -> eb_status {
    const edgebert::Session& s = *session->impl;
    if (!s.has_output()) return s.fail(EB_ERROR_BAD_STATE, "no successful run yet: sequences are not available");
    if (index >= s.sequence_count())
      return s.fail(EB_ERROR_INVALID_ARGUMENT, "sequence %zu of %zu", index, s.sequence_count());
    const edgebert::SequenceInfo q = s.sequence(index);
    out_info->status = static_cast<int32_t>(q.status);
    out_info->first_token = static_cast<int32_t>(q.first_token);
    out_info->tokens = static_cast<int32_t>(q.tokens);
    out_info->first_word = static_cast<int32_t>(q.first_word);
    out_info->words = static_cast<int32_t>(q.words);
    return EB_OK;
  });
}

eb_status eb_session_get_output(const eb_session* session, eb_output which_arg, const float** out_data,
                                int64_t* out_shape, int32_t* out_rank) {
  if (!session) return EB_ERROR_INVALID_ARGUMENT;
  const int32_t which = enum_value(which_arg);  // any int a caller passes, never loaded as eb_output
  return guarded(session, OnError::kKeepRun, [&]() -> eb_status {
    const edgebert::Session& s = *session->impl;
    if (!s.has_output()) return s.fail(EB_ERROR_BAD_STATE, "no successful run yet: outputs are not available");
    const edgebert::Model& m = s.model();
    const float* data = nullptr;
    int64_t shape[2] = {0, 0};
    int32_t rank = 1;
    switch (which) {
      case EB_OUTPUT_LAST_HIDDEN_STATE:
        data = s.last_hidden_state();
        shape[0] = static_cast<int64_t>(s.seq_len());
        shape[1] = m.config.hidden;
        rank = 2;
        break;
      case EB_OUTPUT_POOLER_OUTPUT:
        if (!m.has_pooler) return s.fail(EB_ERROR_UNSUPPORTED, "this model has no pooler");
        data = s.pooler_output();
        shape[0] = m.config.hidden;
        break;
      case EB_OUTPUT_LOGITS:
        if (!s.logits()) return s.fail(EB_ERROR_UNSUPPORTED, "this model is not a sequence classifier");
        data = s.logits();
        shape[0] = m.config.num_labels;
        break;
      case EB_OUTPUT_SENTENCE_EMBEDDING:
        if (!s.sentence_embedding())
          return s.fail(EB_ERROR_UNSUPPORTED, "this model is not a sentence-embedding model");
        data = s.sentence_embedding();
        shape[0] = static_cast<int64_t>(s.sentence_embedding_width());
        break;
      case EB_OUTPUT_START_LOGITS:
      case EB_OUTPUT_END_LOGITS:
        if (!s.start_logits()) return s.fail(EB_ERROR_UNSUPPORTED, "this model is not a question-answering model");
        data = which == EB_OUTPUT_START_LOGITS ? s.start_logits() : s.end_logits();
        shape[0] = static_cast<int64_t>(s.seq_len());
        break;
      case EB_OUTPUT_TOKEN_LOGITS:
        if (!s.token_logits()) return s.fail(EB_ERROR_UNSUPPORTED, "this model is not a token classifier");
        data = s.token_logits();
        shape[0] = static_cast<int64_t>(s.seq_len());
        shape[1] = m.config.num_labels;
        rank = 2;
        break;
      case EB_OUTPUT_SPARSE_EMBEDDING:
        if (!s.sparse_embedding())
          return s.fail(EB_ERROR_UNSUPPORTED, "this model has no sparse embedding (not a masked-LM or bge-m3 model)");
        data = s.sparse_embedding();
        shape[0] = m.config.vocab;
        break;
      case EB_OUTPUT_TOKEN_VECTORS:
        if (!s.token_vectors())
          return s.fail(EB_ERROR_UNSUPPORTED, "this model has no token vectors (not a ColBERT or bge-m3 model)");
        data = s.token_vectors();
        shape[0] = static_cast<int64_t>(edgebert::tasks::token_vector_rows(s));
        shape[1] = m.config.num_labels;
        rank = 2;
        break;
      default:
        return s.fail(EB_ERROR_INVALID_ARGUMENT, "unknown output %d", static_cast<int>(which));
    }
    if (s.packed() && rank == 1 && which != EB_OUTPUT_START_LOGITS && which != EB_OUTPUT_END_LOGITS) {
      shape[1] = shape[0];  // pooled outputs: one row per sequence
      shape[0] = static_cast<int64_t>(s.sequence_count());
      rank = 2;
    }
    if (out_data) *out_data = data;
    if (out_shape) {
      out_shape[0] = shape[0];
      if (rank == 2) out_shape[1] = shape[1];
    }
    if (out_rank) *out_rank = rank;
    return EB_OK;
  });
}

eb_status eb_session_get_input_ids(const eb_session* session, const int32_t** out_ids, size_t* out_len) {
  if (!session || !out_ids || !out_len) return EB_ERROR_INVALID_ARGUMENT;
  return guarded(session, OnError::kKeepRun, [&]() -> eb_status {
    const edgebert::Session& s = *session->impl;
    if (!s.has_input_ids())
      return s.fail(EB_ERROR_BAD_STATE,
                    "input ids need a successful run_ids, run_text or run_text_pair as the last run");
    *out_ids = s.input_ids();
    *out_len = s.seq_len();
    return EB_OK;
  });
}

eb_status eb_session_get_token_offsets(const eb_session* session, const int32_t** out_begin, const int32_t** out_end,
                                       const int32_t** out_segment, size_t* out_len) {
  if (!session) return EB_ERROR_INVALID_ARGUMENT;
  return guarded(session, OnError::kKeepRun, [&]() -> eb_status {
    const edgebert::Session& s = *session->impl;
    if (!s.has_offsets())
      return s.fail(EB_ERROR_BAD_STATE, "token offsets need a successful run_text or run_text_pair as the last run");
    if (out_begin) *out_begin = s.token_begin();
    if (out_end) *out_end = s.token_end();
    if (out_segment) *out_segment = s.token_segment();
    if (out_len) *out_len = s.seq_len();
    return EB_OK;
  });
}

eb_status eb_session_best_span(const eb_session* session, int32_t max_answer_tokens, eb_span* out_span) {
  if (!session) return EB_ERROR_INVALID_ARGUMENT;
  return guarded(session, OnError::kKeepRun,
                 [&] { return edgebert::tasks::best_span(*session->impl, max_answer_tokens, out_span); });
}

eb_status eb_session_sequence_best_span(const eb_session* session, size_t index, int32_t max_answer_tokens,
                                        eb_span* out_span) {
  if (!session) return EB_ERROR_INVALID_ARGUMENT;
  return guarded(session, OnError::kKeepRun,
                 [&] { return edgebert::tasks::sequence_best_span(*session->impl, index, max_answer_tokens, out_span); });
}

eb_status eb_session_get_word_ids(const eb_session* session, const int32_t** out_word_ids, size_t* out_len) {
  if (!session) return EB_ERROR_INVALID_ARGUMENT;
  return guarded(session, OnError::kKeepRun, [&]() -> eb_status {
    const edgebert::Session& s = *session->impl;
    if (!s.has_offsets())
      return s.fail(EB_ERROR_BAD_STATE, "word ids need a successful run_text or run_text_pair as the last run");
    if (out_word_ids) *out_word_ids = s.word_ids();
    if (out_len) *out_len = s.seq_len();
    return EB_OK;
  });
}

eb_status eb_session_get_words(const eb_session* session, const eb_word** out_words, size_t* out_count) {
  if (!session) return EB_ERROR_INVALID_ARGUMENT;
  return guarded(session, OnError::kKeepRun, [&]() -> eb_status {
    const edgebert::Session& s = *session->impl;
    if (!s.has_offsets())
      return s.fail(EB_ERROR_BAD_STATE, "words need a successful run_text or run_text_pair as the last run");
    if (out_words) *out_words = s.words();
    if (out_count) *out_count = s.word_count();
    return EB_OK;
  });
}

eb_status eb_session_answer(eb_session* session, const char* question, const char* context, int32_t max_answer_tokens,
                            int32_t doc_stride, eb_span* out_span, int32_t* out_windows) {
  if (!session) return EB_ERROR_INVALID_ARGUMENT;
  return guarded(session, OnError::kResetRun, [&] {
    return edgebert::tasks::answer(*session->impl, question, context, max_answer_tokens, doc_stride, out_span,
                                   out_windows);
  }, {{"question", &question, 1, false}, {"context", &context, 1, false}});
}

eb_status eb_session_memory(const eb_session* session, size_t* arena_bytes, size_t* naive_bytes,
                            size_t* packed_weight_bytes) {
  if (!session) return EB_ERROR_INVALID_ARGUMENT;
  return guarded(session, OnError::kKeepRun, [&]() -> eb_status {
    const edgebert::Session& s = *session->impl;
    if (arena_bytes) *arena_bytes = s.arena_bytes();
    if (naive_bytes) *naive_bytes = s.naive_bytes();
    if (packed_weight_bytes) *packed_weight_bytes = s.packed_weight_bytes();
    return EB_OK;
  });
}

const char* eb_session_last_error(const eb_session* session) {
  return guarded_value(static_cast<const char*>("internal error"), [&]() -> const char* {
    if (!session) return "session is NULL";
    return session->impl->last_error();
  });
}

}  // extern "C"

// ---- Many texts per call (embed / classify many, token labels): tasks/many.h ----
#include "tasks/many.h"

extern "C" {

eb_status eb_session_embed_many(eb_session* session, const char* const* texts, const char* const* pairs, size_t count,
                                eb_output which_arg, float* out, size_t out_size, int32_t* out_statuses) {
  const int32_t which = enum_value(which_arg);  // any int a caller passes, never loaded as eb_output
  if (!session) return EB_ERROR_INVALID_ARGUMENT;
  return guarded(session, OnError::kResetRun, [&] {
    return edgebert::tasks::embed_many(*session->impl, texts, pairs, count, which, out, out_size, out_statuses);
  }, {{"texts", texts, count, true}, {"pairs", pairs, count, true}});
}

eb_status eb_session_classify_many(eb_session* session, const char* const* texts, const char* const* pairs,
                                   size_t count, float* out_logits, size_t logits_size, int32_t* out_labels,
                                   int32_t* out_statuses) {
  if (!session) return EB_ERROR_INVALID_ARGUMENT;
  return guarded(session, OnError::kResetRun, [&] {
    return edgebert::tasks::classify_many(*session->impl, texts, pairs, count, out_logits, logits_size, out_labels,
                                          out_statuses);
  }, {{"texts", texts, count, true}, {"pairs", pairs, count, true}});
}

eb_status eb_session_get_token_labels(const eb_session* session, int32_t* out_labels, size_t labels_size,
                                      size_t* out_len) {
  if (out_len) *out_len = 0;
  if (!session) return EB_ERROR_INVALID_ARGUMENT;
  return guarded(session, OnError::kKeepRun,
                 [&] { return edgebert::tasks::token_labels(*session->impl, out_labels, labels_size, out_len); });
}

}  // extern "C"

// ---- Reranking (cross-encoders): tasks/rerank.h ----
#include "tasks/rerank.h"

extern "C" {

eb_status eb_session_rerank(eb_session* session, const char* query, const char* const* passages, size_t count,
                            float* out_scores, int32_t* out_statuses) {
  if (!session) return EB_ERROR_INVALID_ARGUMENT;
  return guarded(session, OnError::kResetRun, [&] {
    return edgebert::tasks::rerank(*session->impl, query, passages, count, out_scores, out_statuses);
  }, {{"query", &query, 1, false}, {"passages", passages, count, true}});
}

eb_status eb_session_rerank_top_k(eb_session* session, const char* query, const char* const* passages, size_t count,
                                  size_t k, int32_t* out_indices, float* out_scores, size_t* out_found,
                                  int32_t* out_statuses) {
  if (out_found) *out_found = 0;
  if (!session) return EB_ERROR_INVALID_ARGUMENT;
  return guarded(session, OnError::kResetRun, [&] {
    return edgebert::tasks::rerank_top_k(*session->impl, query, passages, count, k, out_indices, out_scores, out_found,
                                         out_statuses);
  }, {{"query", &query, 1, false}, {"passages", passages, count, true}});
}

}  // extern "C"

// ---- Sparse vectors: tasks/sparse.h ----
#include "tasks/sparse.h"

extern "C" {

eb_status eb_session_sparse_top_k(const eb_session* session, size_t index, size_t k, float threshold, int32_t* out_ids,
                                  float* out_weights, size_t* out_count) {
  if (out_count) *out_count = 0;
  if (!session || !out_ids || !out_weights || !out_count) return EB_ERROR_INVALID_ARGUMENT;
  return guarded(session, OnError::kKeepRun, [&]() -> eb_status {
    const edgebert::Session& s = *session->impl;
    if (!s.sparse_embedding())
      return s.fail(EB_ERROR_UNSUPPORTED, "this model has no sparse embedding (not a masked-LM or bge-m3 model)");
    if (!s.has_output()) return s.fail(EB_ERROR_BAD_STATE, "no successful run yet: outputs are not available");
    if (index >= s.sequence_count())
      return s.fail(EB_ERROR_INVALID_ARGUMENT, "sequence %zu of %zu", index, s.sequence_count());
    const size_t V = static_cast<size_t>(s.model().config.vocab);
    *out_count = edgebert::tasks::sparse_top_k(s.sparse_embedding() + index * V, V, k, threshold,
                                               out_ids, out_weights);
    return EB_OK;
  });
}

}  // extern "C"

// ---- Fill-mask: tasks/fill_mask.h ----
#include "tasks/fill_mask.h"
#include "text/tokenizer.h"

extern "C" {

eb_status eb_session_fill_mask(eb_session* session, size_t token, size_t k, int32_t* out_ids, float* out_probs,
                               size_t* out_count) {
  if (out_count) *out_count = 0;
  if (!session) return EB_ERROR_INVALID_ARGUMENT;
  return guarded(session, OnError::kKeepRun, [&]() -> eb_status {
    edgebert::Session& s = *session->impl;
    if (!out_ids || !out_probs || !out_count)
      return s.fail(EB_ERROR_INVALID_ARGUMENT, "fill_mask: out_ids, out_probs and out_count must not be NULL");
    if (k == 0) return s.fail(EB_ERROR_INVALID_ARGUMENT, "fill_mask: k is 0");
    return edgebert::tasks::fill_mask(s, token, k, out_ids, out_probs, out_count);
  });
}

eb_status eb_model_get_mask_token_id(const eb_model* model, int32_t* out_id) {
  return guarded([&]() -> eb_status {
    if (out_id) *out_id = -1;
    if (!model || !out_id) return EB_ERROR_INVALID_ARGUMENT;
    const edgebert::text::Tokenizer* t = model->impl->text_tokenizer.get();
    if (!t || t->mask_id() < 0) return EB_ERROR_UNSUPPORTED;
    *out_id = t->mask_id();
    return EB_OK;
  });
}

eb_status eb_model_get_token(const eb_model* model, int32_t id, const char** out_text, size_t* out_len) {
  return guarded([&]() -> eb_status {
    if (out_text) *out_text = nullptr;
    if (out_len) *out_len = 0;
    if (!model || !out_text || !out_len) return EB_ERROR_INVALID_ARGUMENT;
    const edgebert::text::Tokenizer* t = model->impl->text_tokenizer.get();
    if (!t || !t->initialized()) return EB_ERROR_UNSUPPORTED;
    if (id < 0 || static_cast<size_t>(id) >= t->vocab_size()) return EB_ERROR_INVALID_ARGUMENT;
    const std::string_view v = t->token_text(id);
    *out_text = v.data();
    *out_len = v.size();
    return EB_OK;
  });
}

}  // extern "C"

// ---- Multi-vector scoring: tasks/multi_vector.h ----

extern "C" {

eb_status eb_maxsim(const float* q, size_t q_tokens, const float* d, size_t d_tokens, size_t dim, float* out_score) {
  if (out_score) *out_score = 0.f;
  if (!q || !d || !out_score || q_tokens == 0 || d_tokens == 0 || dim == 0) return EB_ERROR_INVALID_ARGUMENT;
  *out_score = edgebert::tasks::maxsim(q, q_tokens, d, d_tokens, dim);
  return EB_OK;
}

eb_status eb_pool_token_vectors(const float* vectors, size_t rows, size_t dim, size_t pool_factor, size_t protected_rows,
                                float* out, size_t* out_rows) {
  if (out_rows) *out_rows = 0;
  if (!vectors || !out || !out_rows || rows == 0 || dim == 0 || pool_factor == 0) return EB_ERROR_INVALID_ARGUMENT;
  if (rows > SIZE_MAX / dim) return EB_ERROR_INVALID_ARGUMENT;
  for (size_t i = 0; i < rows * dim; ++i)
    if (!std::isfinite(vectors[i])) return EB_ERROR_INVALID_ARGUMENT;
  return guarded([&] {
    *out_rows = edgebert::tasks::pool_token_vectors(vectors, rows, dim, pool_factor, protected_rows, out);
    return EB_OK;
  });
}

eb_status eb_session_set_colbert_input(eb_session* session, eb_colbert_input input_arg) {
  const int32_t input = enum_value(input_arg);  // any int a caller passes
  if (!session) return EB_ERROR_INVALID_ARGUMENT;
  return guarded(session, OnError::kKeepRun, [&] { return session->impl->set_colbert_input(input); });
}

eb_status eb_session_get_token_vectors(const eb_session* session, size_t index, float* out, size_t capacity_rows,
                                       size_t* out_rows) {
  if (out_rows) *out_rows = 0;
  if (!session) return EB_ERROR_INVALID_ARGUMENT;
  return guarded(session, OnError::kKeepRun, [&] {
    return edgebert::tasks::copy_token_vectors(*session->impl, index, out, capacity_rows, out_rows);
  });
}

}  // extern "C"

// ---- Truncation of long texts: tasks/text_layout.h ----
extern "C" {

eb_status eb_session_set_truncation(eb_session* session, eb_truncation truncation_arg) {
  const int32_t truncation = enum_value(truncation_arg);  // any int a caller passes
  if (!session) return EB_ERROR_INVALID_ARGUMENT;
  return guarded(session, OnError::kKeepRun, [&]() -> eb_status {
    edgebert::Session& s = *session->impl;
    if (truncation < EB_TRUNCATION_NONE || truncation > EB_TRUNCATION_ONLY_SECOND)
      return s.fail(EB_ERROR_INVALID_ARGUMENT, "truncation %d is not EB_TRUNCATION_NONE, _LONGEST_FIRST or _ONLY_SECOND",
                    static_cast<int>(truncation));
    s.set_truncation(static_cast<edgebert::tasks::Truncation>(truncation));
    s.clear_error();
    return EB_OK;
  });
}

eb_status eb_session_get_truncated_tokens(const eb_session* session, size_t index, int32_t* out_tokens) {
  if (out_tokens) *out_tokens = 0;
  if (!session || !out_tokens) return EB_ERROR_INVALID_ARGUMENT;
  return guarded(session, OnError::kKeepRun, [&]() -> eb_status {
    edgebert::Session& s = *session->impl;
    if (!s.has_output()) return s.fail(EB_ERROR_BAD_STATE, "no successful run yet: truncation is not available");
    if (index >= s.sequence_count())
      return s.fail(EB_ERROR_INVALID_ARGUMENT, "sequence %zu of %zu", index, s.sequence_count());
    *out_tokens = static_cast<int32_t>(s.sequence(index).truncated);
    return EB_OK;
  });
}

}  // extern "C"

// ---- Chunked embedding of long documents: tasks/chunked_embedding.h ----
#include "tasks/chunked_embedding.h"

extern "C" {

eb_status eb_session_embed_chunked(eb_session* session, const char* text, size_t text_size, int32_t window,
                                   int32_t stride, eb_chunk_pooling pooling_arg, float* out, size_t out_size,
                                   eb_chunk* chunks, size_t chunks_size, size_t* out_windows) {
  const int32_t pooling = enum_value(pooling_arg);  // any int a caller passes, never loaded as the enum
  if (out_windows) *out_windows = 0;
  if (!session) return EB_ERROR_INVALID_ARGUMENT;
  return guarded(session, OnError::kResetRun, [&] {
    return edgebert::tasks::embed_chunked(*session->impl, text, text_size, window, stride, pooling, out, out_size,
                                          chunks, chunks_size, out_windows);
  });
}

}  // extern "C"
