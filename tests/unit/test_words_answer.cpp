// SPDX-License-Identifier: Apache-2.0
// test_words_answer.cpp: word ids, words and long-context QA through the C API.
// - Word ids and words of text runs against the golden offsets and an independent word rule on
//   the text's bytes (BERT's pre-tokenizer on ASCII: words are split at whitespace and around
//   every punctuation character), word labels against the numpy goldens' token logits.
// - eb_session_answer on a pair that fits equals the numpy golden best span; on a long context it
//   equals the best span over windows computed here independently: the whole context tokenized
//   once (by a session long enough for it), windows of its tokens as HuggingFace's overflowing
//   tokens (starts 0, W - stride, ...), each window run with run_ids and searched over the same
//   logits; and on the numpy reference's own windows and logits (make_testdata.py long_context).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "test_support.h"

using namespace edgebert::test;

namespace {

std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

struct Loaded {
  ModelHandle m;
  SessionHandle s;
  eb_model_info info{};
  Loaded(const std::string& model, const char* kind, int max_len = 0) {
    char err[512];
    REQUIRE(eb_model_load_file(ebm_path(model, kind).c_str(), &m.m, err, sizeof err) == EB_OK);
    REQUIRE(eb_model_get_info(m.m, &info) == EB_OK);
    eb_session_options o;
    eb_session_options_init(&o);
    o.max_sequence_length = max_len;
    REQUIRE(eb_session_create(m.m, &o, &s.s, err, sizeof err) == EB_OK);
  }
};

struct Offsets {
  std::vector<int32_t> begin, end, segment;
};

Offsets read_offsets(const std::string& path) {
  const std::vector<int32_t> v = read_ints(path);
  Offsets o;
  for (size_t i = 0; i + 2 < v.size(); i += 3) {
    o.begin.push_back(v[i]);
    o.end.push_back(v[i + 1]);
    o.segment.push_back(v[i + 2]);
  }
  return o;
}

bool is_punct(char c) { return std::ispunct(static_cast<unsigned char>(c)) != 0; }

// Expected word ids from the texts alone: within a segment, a token starts a new word when
// whitespace separates it from the previous token or either of them is punctuation.
std::vector<int32_t> expected_word_ids(const Offsets& o, const std::string& a, const std::string& b) {
  std::vector<int32_t> w(o.begin.size(), -1);
  int32_t word = -1;
  for (size_t t = 0; t < w.size(); ++t) {
    if (o.segment[t] < 0) continue;
    const std::string& text = o.segment[t] == 0 ? a : b;
    const bool first = t == 0 || o.segment[t - 1] != o.segment[t];
    if (first) word = -1;
    const bool starts = first || o.begin[t] != o.end[t - 1] || is_punct(text[static_cast<size_t>(o.begin[t])]) ||
                        is_punct(text[static_cast<size_t>(o.end[t - 1]) - 1]);
    if (starts) ++word;
    w[t] = word;
  }
  return w;
}

Offsets session_offsets(eb_session* s) {
  const int32_t *b = nullptr, *e = nullptr, *seg = nullptr;
  size_t n = 0;
  REQUIRE(eb_session_get_token_offsets(s, &b, &e, &seg, &n) == EB_OK);
  return {std::vector<int32_t>(b, b + n), std::vector<int32_t>(e, e + n), std::vector<int32_t>(seg, seg + n)};
}

// Word ids and words of the session's last text run against the texts.
// logits: the token logits to check the word labels against (null: not checked); labels 0: the
// model is not a token classifier (every label is -1).
void check_words(eb_session* s, const std::string& a, const std::string& b, int labels, const std::vector<float>* logits) {
  const Offsets o = session_offsets(s);
  const int32_t* wid = nullptr;
  size_t n = 0;
  REQUIRE(eb_session_get_word_ids(s, &wid, &n) == EB_OK);
  REQUIRE(n == o.begin.size());
  const std::vector<int32_t> want = expected_word_ids(o, a, b);
  CHECK(std::vector<int32_t>(wid, wid + n) == want);
  const eb_word* words = nullptr;
  size_t count = 0;
  REQUIRE(eb_session_get_words(s, &words, &count) == EB_OK);
  size_t expect_count = 0;
  for (size_t t = 0; t < n; ++t) expect_count += want[t] >= 0 && (t == 0 || want[t - 1] != want[t] || o.segment[t - 1] != o.segment[t]);
  REQUIRE(count == expect_count);
  for (size_t i = 0; i < count; ++i) {
    const eb_word& w = words[i];
    INFO("word " << i);
    REQUIRE(w.first_token >= 1);
    REQUIRE(w.last_token < static_cast<int32_t>(n) - 1);
    CHECK(w.segment == o.segment[static_cast<size_t>(w.first_token)]);
    CHECK(w.begin_byte == o.begin[static_cast<size_t>(w.first_token)]);
    CHECK(w.end_byte == o.end[static_cast<size_t>(w.last_token)]);
    for (int32_t t = w.first_token; t <= w.last_token; ++t) CHECK(want[static_cast<size_t>(t)] == want[static_cast<size_t>(w.first_token)]);
    if (i + 1 < count) CHECK(words[i + 1].first_token == w.last_token + 1 + (words[i + 1].segment != w.segment));
    if (labels == 0) CHECK(w.label == -1);
    if (!logits) continue;
    const float* row = logits->data() + static_cast<size_t>(w.first_token) * static_cast<size_t>(labels);
    std::vector<float> sorted(row, row + labels);
    std::sort(sorted.rbegin(), sorted.rend());
    if (sorted[0] - sorted[1] > 1e-3f) CHECK(w.label == std::max_element(row, row + labels) - row);
  }
}

}  // namespace

TEST_CASE("word ids and words of text runs follow the words of the text", "[c_api][words]") {
  for (const char* model : {"task_bert_token", "task_distil_token", "task_bert_qa"}) {
    INFO(model);
    Loaded l(model, "fp32");
    const bool token = l.info.task == EB_TASK_TOKEN_CLASSIFICATION;
    const std::string dir = testdata_dir() + "/" + model + "/cases/";
    {  // the golden text case: offsets and word labels against the numpy reference
      const std::string text = slurp(dir + "text/text.txt");
      REQUIRE(eb_session_run_text(l.s.s, text.c_str()) == EB_OK);
      const Offsets golden = read_offsets(dir + "text/offsets.txt");
      const Offsets got = session_offsets(l.s.s);
      CHECK(got.begin == golden.begin);
      CHECK(got.end == golden.end);
      CHECK(got.segment == golden.segment);
      const std::vector<float> logits = read_f32(dir + "text/token_logits.f32");
      if (token) REQUIRE(logits.size() == golden.begin.size() * static_cast<size_t>(l.info.num_labels));
      check_words(l.s.s, text, "", token ? l.info.num_labels : 0, token ? &logits : nullptr);
    }
    {  // the golden pair: word ids restart in the second segment
      const std::string a = slurp(dir + "text_pair/text_a.txt"), b = slurp(dir + "text_pair/text_b.txt");
      REQUIRE(eb_session_run_text_pair(l.s.s, a.c_str(), b.c_str()) == EB_OK);
      const Offsets golden = read_offsets(dir + "text_pair/offsets.txt");
      CHECK(session_offsets(l.s.s).begin == golden.begin);
      check_words(l.s.s, a, b, token ? l.info.num_labels : 0, nullptr);
    }
    {  // words of several "##" pieces, punctuation inside words, spaces and case
      const std::string a = "The hotelxyz was unclean,and  the staffs' moviez were goodish!";
      REQUIRE(eb_session_run_text_pair(l.s.s, a.c_str(), "who was RUDEST ?") == EB_OK);
      const Offsets o = session_offsets(l.s.s);
      const int32_t* wid = nullptr;
      size_t n = 0;
      REQUIRE(eb_session_get_word_ids(l.s.s, &wid, &n) == EB_OK);
      size_t continuing = 0;
      for (size_t t = 2; t < n; ++t) continuing += wid[t] >= 0 && wid[t] == wid[t - 1];
      CHECK(continuing >= 4);  // the text really has words of several pieces
      std::vector<float> logits;
      if (token) {
        const float* p = nullptr;
        REQUIRE(eb_session_get_output(l.s.s, EB_OUTPUT_TOKEN_LOGITS, &p, nullptr, nullptr) == EB_OK);
        logits.assign(p, p + n * static_cast<size_t>(l.info.num_labels));
      }
      check_words(l.s.s, a, "who was RUDEST ?", token ? l.info.num_labels : 0, token ? &logits : nullptr);
    }
  }
}

TEST_CASE("eb_session_answer on a pair that fits is the golden best span", "[c_api][qa][answer]") {
  for (const char* model : {"task_bert_qa", "task_distil_qa"}) {
    INFO(model);
    Loaded l(model, "fp32");
    const std::string dir = testdata_dir() + "/" + model + "/cases/text_pair/";
    const std::string q = slurp(dir + "text_a.txt"), c = slurp(dir + "text_b.txt");
    std::istringstream g(slurp(dir + "best_span.txt"));
    int start = 0, end = 0, bb = 0, be = 0, max_tokens = 0;
    double score = 0, margin = 0;
    REQUIRE(g >> start >> end >> bb >> be >> score >> margin >> max_tokens);
    REQUIRE(margin > 1e-3);
    eb_span span;
    int32_t windows = 0;
    REQUIRE(eb_session_answer(l.s.s, q.c_str(), c.c_str(), max_tokens, -1, &span, &windows) == EB_OK);
    CHECK(windows == 1);
    CHECK(span.start_token == start);
    CHECK(span.end_token == end);
    CHECK(span.begin_byte == bb);
    CHECK(span.end_byte == be);
    CHECK(span.score == Approx(score).margin(1e-3));
    CHECK(c.substr(static_cast<size_t>(bb), static_cast<size_t>(be - bb)) == slurp(dir + "answer.txt"));
  }
}

TEST_CASE("eb_session_answer over windows equals the best span of independently built windows", "[c_api][qa][answer]") {
  const std::string question = "who was rude?";
  std::string plain, spaced;  // single spaces; tabs, newlines, runs of spaces and accents
  for (int i = 0; i < 4; ++i) {
    plain += "The Hotelxyz was clean, but the staff was RUDEST. The movie was great and the acting was goodish! ";
    spaced += "The H\xc3\xb4telxyz\twas clean,\n\nbut the   staff was RUD\xc3\x89ST.\r\nThe movie was great and the "
              "acting was goodish!  ";
  }
  plain.pop_back();
  for (const std::string* cp : {&plain, &spaced})
  for (const char* kind : {"fp32", "int8"}) {
    const std::string& context = *cp;
    Loaded whole("task_bert_qa", kind, 128);  // tokenizes the whole context at once
    REQUIRE(eb_session_run_text(whole.s.s, question.c_str()) == EB_OK);
    const int32_t* p = nullptr;
    size_t n = 0;
    REQUIRE(eb_session_get_input_ids(whole.s.s, &p, &n) == EB_OK);
    const std::vector<int32_t> q_ids(p + 1, p + n - 1);
    REQUIRE(eb_session_run_text(whole.s.s, context.c_str()) == EB_OK);
    REQUIRE(eb_session_get_input_ids(whole.s.s, &p, &n) == EB_OK);
    const std::vector<int32_t> c_ids(p + 1, p + n - 1);
    const Offsets co = session_offsets(whole.s.s);
    const size_t total = c_ids.size();
    const int max_len = 24;
    const size_t window = static_cast<size_t>(max_len) - q_ids.size() - 3;
    REQUIRE(total > 3 * window);
    Loaded l("task_bert_qa", kind, max_len);
    bool any_mid_word_start = false;
    for (int stride : {0, 2, 5, -1}) {
      INFO(kind << " stride " << stride << (cp == &plain ? "" : ", spaced context"));
      const size_t overlap = stride < 0 ? std::min<size_t>(128, window / 2) : static_cast<size_t>(stride);
      // independent: windows of the whole context's tokens, each run on its ids
      eb_span best{};
      bool found = false;
      int32_t windows = 0;
      bool mid_word_start = false;
      for (size_t start = 0;; start += window - overlap) {
        const size_t len = std::min(window, total - start);
        std::vector<int32_t> ids{101}, types{0};
        for (int32_t id : q_ids) ids.push_back(id), types.push_back(0);
        ids.push_back(102), types.push_back(0);
        for (size_t i = 0; i < len; ++i) ids.push_back(c_ids[start + i]), types.push_back(1);
        ids.push_back(102), types.push_back(1);
        REQUIRE(eb_session_run_ids(l.s.s, ids.data(), types.data(), nullptr, ids.size()) == EB_OK);
        const float *sl = nullptr, *el = nullptr;
        REQUIRE(eb_session_get_output(l.s.s, EB_OUTPUT_START_LOGITS, &sl, nullptr, nullptr) == EB_OK);
        REQUIRE(eb_session_get_output(l.s.s, EB_OUTPUT_END_LOGITS, &el, nullptr, nullptr) == EB_OK);
        ++windows;
        mid_word_start |= start > 0 && co.begin[start + 1] == co.end[start] && !is_punct(context[static_cast<size_t>(co.begin[start + 1])]) &&
                          !is_punct(context[static_cast<size_t>(co.end[start]) - 1]);
        const size_t first = q_ids.size() + 2;
        for (size_t i = first; i < first + len; ++i)
          for (size_t j = i; j < first + len && j - i < 30; ++j) {
            const float sc = sl[i] + el[j];
            if (found && !(sc > best.score)) continue;
            found = true;
            best.start_token = static_cast<int32_t>(i);
            best.end_token = static_cast<int32_t>(j);
            best.begin_byte = co.begin[start + (i - first) + 1];  // co has [CLS] first
            best.end_byte = co.end[start + (j - first) + 1];
            best.score = sc;
          }
        if (start + window >= total) break;
      }
      REQUIRE(found);
      eb_span span;
      int32_t got_windows = 0;
      const eb_status st = eb_session_answer(l.s.s, question.c_str(), context.c_str(), 30, stride, &span, &got_windows);
      INFO(eb_session_last_error(l.s.s));
      REQUIRE(st == EB_OK);
      CHECK(got_windows == windows);
      CHECK(span.start_token == best.start_token);
      CHECK(span.end_token == best.end_token);
      CHECK(span.begin_byte == best.begin_byte);
      CHECK(span.end_byte == best.end_byte);
      CHECK(span.score == best.score);
      any_mid_word_start |= mid_word_start;
      // afterwards the offsets are the last window's, in context bytes
      const Offsets last = session_offsets(l.s.s);
      CHECK(last.segment[q_ids.size() + 2] == 1);
      CHECK(last.end[last.end.size() - 2] == co.end[co.end.size() - 2]);
    }
    CHECK(any_mid_word_start);  // some window starts inside a word of several pieces
    // a stride as large as a window cannot advance
    eb_span span;
    CHECK(eb_session_answer(l.s.s, question.c_str(), context.c_str(), 30, static_cast<int>(window), &span, nullptr) ==
          EB_ERROR_INVALID_ARGUMENT);
  }
}

TEST_CASE("eb_session_answer over windows equals the numpy reference's best span over its windows", "[c_api][qa][answer]") {
  for (const char* model : {"task_bert_qa", "task_distil_qa"}) {
    const std::string dir = testdata_dir() + "/" + model + "/long_context/";
    const std::string question = slurp(dir + "question.txt"), context = slurp(dir + "context.txt");
    std::istringstream lines(slurp(dir + "windows.txt"));
    int max_len = 0, stride = 0, windows = 0, start = 0, end = 0, begin_byte = 0, end_byte = 0, max_tokens = 0;
    double score = 0, margin = 0;
    int checked = 0;
    while (lines >> max_len >> stride >> windows >> start >> end >> begin_byte >> end_byte >> score >> margin >> max_tokens) {
      INFO(model << " stride " << stride);
      REQUIRE(margin > 1e-3);  // far above the fp32 model's logit error
      Loaded l(model, "fp32", max_len);
      eb_span span;
      int32_t got_windows = 0;
      REQUIRE(eb_session_answer(l.s.s, question.c_str(), context.c_str(), max_tokens, stride, &span, &got_windows) == EB_OK);
      CHECK(got_windows == windows);
      CHECK(span.start_token == start);
      CHECK(span.end_token == end);
      CHECK(span.begin_byte == begin_byte);
      CHECK(span.end_byte == end_byte);
      CHECK(span.score == Approx(score).margin(1e-3));
      ++checked;
    }
    CHECK(checked == 4);
  }
}
