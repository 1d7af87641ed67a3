// SPDX-License-Identifier: Apache-2.0
// fuzz_c_api.cpp: libFuzzer target for the C API. The input is decoded into a sequence of C API
// calls (up to 64) on up to 3 session slots over one tiny valid model (tiny_model.h, int8 or
// fp32 as the first byte says): session create/destroy with arbitrary options, runs on ids,
// text, text pairs and embeddings with arbitrary lengths, masks, token types and null pointers,
// output reads (every element of a returned output is read), token offsets, the QA span helper,
// label names, and model-level calls with bad arguments.
// Every call must return a status; a failed one must leave a message; after a successful run
// the output shapes must match the input.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#include "edgebert/edgebert.h"
#include "tiny_model.h"

namespace {

using edgebert::fuzz::AlignedCopy;

struct Model {
  std::vector<uint8_t> bytes;
  AlignedCopy* copy = nullptr;
  eb_model* model = nullptr;
  eb_model_info info{};
  explicit Model(bool int8) : bytes(edgebert::fuzz::make_tiny_model(int8)) {
    copy = new AlignedCopy(bytes.data(), bytes.size());
    char err[256];
    if (eb_model_load_memory(copy->data(), copy->size(), &model, err, sizeof err) != EB_OK) __builtin_trap();
    if (eb_model_get_info(model, &info) != EB_OK) __builtin_trap();
  }
};

const Model& tiny(bool int8) {
  static const Model int8_model(true), fp32_model(false);  // built once, kept for the process
  return int8 ? int8_model : fp32_model;
}

// Reads the input front to back; past the end every read gives 0.
class Reader {
 public:
  Reader(const uint8_t* d, size_t n) : d_(d), n_(n) {}
  bool done() const { return i_ >= n_; }
  uint8_t byte() { return i_ < n_ ? d_[i_++] : 0; }
  int32_t i32() {
    uint32_t v = 0;
    for (int k = 0; k < 4; ++k) v = (v << 8) | byte();
    return static_cast<int32_t>(v);
  }
  // A small int that is usually in range, sometimes at or past the edges.
  int32_t small(int32_t limit) {
    const uint8_t b = byte();
    if (b < 200) return static_cast<int32_t>(b % (limit + 2));
    if (b < 230) return -static_cast<int32_t>(b - 199);
    return i32();
  }
  // A NUL-terminated string of up to 48 bytes taken from the input.
  const char* text(char* buf) {
    const size_t len = byte() % 49;
    size_t k = 0;
    for (; k < len && !done(); ++k) buf[k] = static_cast<char>(byte());
    buf[k] = '\0';
    return buf;
  }

 private:
  const uint8_t* d_;
  size_t n_, i_ = 0;
};

constexpr int kSlots = 3;
constexpr size_t kMaxLen = 40;

struct State {
  eb_session* sessions[kSlots] = {};
  size_t last_len[kSlots] = {};  // sequence length of the last successful run, 0: none
  ~State() {
    for (eb_session* s : sessions) eb_session_destroy(s);
  }
};

void must_have_message(eb_status s, const eb_session* session) {
  if (s == EB_OK || !session) return;
  if (eb_session_last_error(session)[0] == '\0') __builtin_trap();
}

// After a text run: the sequence length is the tokenized length.
void after_text_run(State& st, int slot, eb_status rs) {
  eb_session* s = st.sessions[slot];
  must_have_message(rs, s);
  if (!s) return;
  const int32_t* got = nullptr;
  size_t n = 0;
  st.last_len[slot] = rs == EB_OK && eb_session_get_input_ids(s, &got, &n) == EB_OK ? n : 0;
}

void read_output(eb_session* s, Reader& r, size_t last_len, const eb_model_info& info) {
  const int which = r.byte() % 8;  // 7 is not an output
  const float* out = nullptr;
  int64_t shape[2] = {-1, -1};
  int32_t rank = 0;
  const bool null_args = r.byte() & 1;
  const eb_status st = null_args ? eb_session_get_output(s, static_cast<eb_output>(which), nullptr, nullptr, nullptr)
                                 : eb_session_get_output(s, static_cast<eb_output>(which), &out, shape, &rank);
  if (which == 7 && st == EB_OK) __builtin_trap();
  if (st != EB_OK || null_args) return;
  if (last_len == 0) __builtin_trap();  // an output before any successful run
  if (which == EB_OUTPUT_LAST_HIDDEN_STATE &&
      (rank != 2 || shape[0] != static_cast<int64_t>(last_len) || shape[1] != info.hidden_size))
    __builtin_trap();
  const int64_t count = rank == 2 ? shape[0] * shape[1] : shape[0];
  volatile float sink = 0.f;
  for (int64_t i = 0; i < count; ++i) sink = sink + out[i];
}

void step(State& st, Reader& r, const Model& m) {
  const uint8_t op = r.byte();
  const int slot = (op >> 4) % kSlots;
  eb_session*& s = st.sessions[slot];
  char err[128];
  char text_a[64], text_b[64];
  int32_t ids[kMaxLen], types[kMaxLen], mask[kMaxLen];
  float embeddings[kMaxLen * 32];
  switch (op % 10) {
    case 0: {  // create (replacing the slot)
      eb_session_destroy(s);
      s = nullptr;
      st.last_len[slot] = 0;
      eb_session_options o;
      eb_session_options_init(&o);
      const int32_t threads = r.small(2);  // pools are slow to start: 2 threads only when asked twice
      o.num_threads = threads == 2 && (r.byte() & 1) ? 2 : threads == 2 ? 1 : threads;
      o.max_sequence_length = r.small(20);
      o.split_special_tokens = r.small(1);
      o.max_batch_tokens = (r.byte() & 7) == 0 ? 1 : 0;
      o.max_memory_bytes = (r.byte() & 3) == 0 ? static_cast<uint64_t>(r.i32() & 0xffffff) : 0;
      const uint8_t how = r.byte() % 8;
      const eb_model* model = how == 7 ? nullptr : m.model;
      const eb_status c = eb_session_create(model, how == 6 ? nullptr : &o, how == 5 ? nullptr : &s,
                                            how == 4 ? nullptr : err, how == 4 ? 0 : sizeof err);
      if (c != EB_OK && s != nullptr) __builtin_trap();
      if (c != EB_OK && how != 4 && err[0] == '\0') __builtin_trap();
      break;
    }
    case 1:
      eb_session_destroy(s);
      s = nullptr;
      st.last_len[slot] = 0;
      break;
    case 2: {  // run on ids
      const size_t len = static_cast<size_t>(r.byte()) % (kMaxLen + 1);
      const uint8_t flags = r.byte();
      for (size_t i = 0; i < len; ++i) {
        ids[i] = (flags & 8) ? r.small(m.info.vocab_size) : static_cast<int32_t>(r.byte() % m.info.vocab_size);
        types[i] = (flags & 16) ? r.small(2) : 0;
        mask[i] = (flags & 32) ? r.small(1) : 1;
      }
      const eb_status rs = eb_session_run_ids(s, (flags & 1) ? nullptr : ids, (flags & 2) ? types : nullptr,
                                              (flags & 4) ? mask : nullptr, len);
      must_have_message(rs, s);
      if (s) st.last_len[slot] = rs == EB_OK ? len : 0;
      break;
    }
    case 3: {  // run on text, or on a text pair
      const char* a = r.text(text_a);
      const uint8_t f = r.byte();
      if (f & 8) {
        const char* b = r.text(text_b);
        after_text_run(st, slot, eb_session_run_text_pair(s, (f & 1) ? nullptr : a, (f & 2) ? nullptr : b));
      } else {
        after_text_run(st, slot, eb_session_run_text(s, (f & 7) == 0 ? nullptr : a));
      }
      break;
    }
    case 4: {  // run on embeddings (NaN and infinities included)
      const size_t len = static_cast<size_t>(r.byte()) % (kMaxLen + 1);
      const uint8_t flags = r.byte();
      const size_t count = len * static_cast<size_t>(m.info.hidden_size);
      for (size_t i = 0; i < count && i < sizeof embeddings / sizeof embeddings[0]; ++i) {
        const uint8_t b = (flags & 2) ? r.byte() : static_cast<uint8_t>(i * 37);
        embeddings[i] = b == 255 ? NAN : b == 254 ? INFINITY : (static_cast<int>(b) - 128) / 32.f;
      }
      for (size_t i = 0; i < len; ++i) mask[i] = (flags & 4) ? r.small(1) : 1;
      const eb_status rs = eb_session_run_embeddings(s, (flags & 1) ? nullptr : embeddings,
                                                     (flags & 8) ? mask : nullptr, len);
      must_have_message(rs, s);
      if (s) st.last_len[slot] = rs == EB_OK ? len : 0;
      break;
    }
    case 5:
      read_output(s, r, s ? st.last_len[slot] : 0, m.info);
      break;
    case 6: {  // input ids and memory facts
      const int32_t* got = nullptr;
      size_t n = 0;
      if (eb_session_get_input_ids(s, (r.byte() & 1) ? nullptr : &got, &n) == EB_OK && got) {
        volatile int32_t sink = 0;
        for (size_t i = 0; i < n; ++i) sink = sink + got[i];
      }
      size_t arena = 0, naive = 0, packed = 0;
      [[maybe_unused]] const eb_status memory = eb_session_memory(s, &arena, (r.byte() & 1) ? nullptr : &naive, &packed);
      if (s && std::strlen(eb_session_last_error(s)) > 100000) __builtin_trap();
      // Token byte offsets of the last text run, and the QA span helper (on any model).
      const int32_t *begin = nullptr, *end = nullptr, *segment = nullptr;
      size_t tokens = 0;
      const uint8_t f = r.byte();
      if (eb_session_get_token_offsets(s, (f & 1) ? nullptr : &begin, (f & 2) ? nullptr : &end,
                                       (f & 4) ? nullptr : &segment, &tokens) == EB_OK) {
        if (tokens != st.last_len[slot]) __builtin_trap();
        for (size_t i = 0; i < tokens; ++i) {
          if (begin && end && (begin[i] < 0 || begin[i] > end[i])) __builtin_trap();
          if (segment && (segment[i] < -1 || segment[i] > 1)) __builtin_trap();
        }
      }
      eb_span span;
      if (eb_session_best_span(s, r.small(40), (f & 8) ? nullptr : &span) == EB_OK &&
          (span.start_token > span.end_token || span.begin_byte > span.end_byte))
        __builtin_trap();
      // Word ids and words: the same validity as the offsets, words in token order.
      const int32_t* word_ids = nullptr;
      size_t n_ids = 0;
      const eb_status ws = eb_session_get_word_ids(s, (f & 16) ? nullptr : &word_ids, &n_ids);
      if ((ws == EB_OK) != (s && eb_session_get_token_offsets(s, nullptr, nullptr, nullptr, nullptr) == EB_OK))
        __builtin_trap();
      if (ws == EB_OK && n_ids != st.last_len[slot]) __builtin_trap();
      const eb_word* words = nullptr;
      size_t n_words = 0;
      if (eb_session_get_words(s, &words, &n_words) == EB_OK) {
        if (n_words > n_ids) __builtin_trap();
        for (size_t i = 0; i < n_words; ++i)
          if (words[i].first_token > words[i].last_token || words[i].begin_byte > words[i].end_byte ||
              (i > 0 && words[i].first_token <= words[i - 1].last_token))
            __builtin_trap();
      }
      break;
    }
    case 7: {  // model-level calls with bad arguments
      eb_model* other = nullptr;
      const uint8_t how = r.byte() % 4;
      const size_t size = how == 0 ? 0 : how == 1 ? m.copy->size() - 64 : m.copy->size();
      const uint8_t* data = how == 2 ? m.copy->data() + 1 : how == 3 ? nullptr : m.copy->data();
      if (eb_model_load_memory(data, size, &other, err, sizeof err) == EB_OK) __builtin_trap();
      if (other != nullptr || err[0] == '\0') __builtin_trap();
      eb_model_info info;
      if (eb_model_get_info(nullptr, &info) == EB_OK || eb_model_get_info(m.model, nullptr) == EB_OK) __builtin_trap();
      eb_model_free(nullptr);
      const char* name = nullptr;
      const int32_t index = r.small(m.info.num_labels);
      const eb_status ls = eb_model_get_label(m.model, index, &name);
      if ((ls == EB_OK) != (index >= 0 && index < m.info.num_labels) || (ls == EB_OK && !name)) __builtin_trap();
      if (eb_model_get_label(nullptr, 0, &name) == EB_OK || eb_model_get_label(m.model, 0, nullptr) == EB_OK)
        __builtin_trap();
      break;
    }
    case 8: {  // status strings for any code
      const eb_status code = static_cast<eb_status>(r.byte() % 16);
      if (!eb_status_string(code)) __builtin_trap();
      break;
    }
    default: {  // run on text with a long tail (longer than the session allows)
      char longer[4 * 64 + 4];
      const char* a = r.text(text_a);
      const char* b = r.text(text_b);
      std::snprintf(longer, sizeof longer, "%s %s %s %s", a, b, a, b);
      if (std::strlen(b) % 2 == 0) {
        after_text_run(st, slot, eb_session_run_text(s, longer));
        break;
      }
      // long-context QA (windows when the context does not fit; refused on other models)
      eb_span span;
      int32_t windows = 0;
      const eb_status as = eb_session_answer(s, a, longer, static_cast<int32_t>(std::strlen(a) % 8),
                                             static_cast<int32_t>(std::strlen(b) % 7) - 1, &span, &windows);
      after_text_run(st, slot, as);
      if (as == EB_OK && (windows < 1 || span.begin_byte > span.end_byte ||
                          static_cast<size_t>(span.end_byte) > std::strlen(longer)))
        __builtin_trap();
      break;
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const Model& m = tiny(data[0] & 1);
  Reader r(data + 1, size - 1);
  State st;
  for (int calls = 0; calls < 64 && !r.done(); ++calls) step(st, r, m);
  return 0;
}
