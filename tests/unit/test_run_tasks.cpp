// SPDX-License-Identifier: Apache-2.0
// test_run_tasks.cpp: edgebert-run on the task models: --question/--context prints the reference
// answer (`answer: TEXT` on its own line), long contexts are split into overlapping windows and
// the answer is still exactly a piece of the context at the printed offsets, --dump writes the
// new outputs (compared with the numpy goldens), classifiers print label names with softmax
// probabilities, token classifiers one word per line, --rerank prints "INDEX SCORE" lines best
// first with the reference scores, and misuse is a clear error.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "test_support.h"

using namespace edgebert::test;

namespace {

std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

std::string quote(const std::string& s) {
  std::string r = "'";
  for (char c : s) r += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return r + "'";
}

// Runs edgebert-run with `args`; returns the exit code, stdout and stderr in *out / *err.
int run_tool(const std::string& args, std::string* out, std::string* err = nullptr) {
  const char* bin = std::getenv("EDGEBERT_BIN");
  REQUIRE(bin);
  const std::string o = testdata_dir() + "/run_tasks.out", e = testdata_dir() + "/run_tasks.err";
  const int rc = std::system((std::string(bin) + "/edgebert-run " + args + " > " + o + " 2> " + e).c_str());
  *out = slurp(o);
  if (err) *err = slurp(e);
  return rc;
}

struct Dump2 {
  const char* model;
  const char* name;
};

std::string line_after(const std::string& text, const std::string& prefix) {
  std::istringstream s(text);
  std::string line;
  while (std::getline(s, line))
    if (line.rfind(prefix, 0) == 0) return line.substr(prefix.size());
  return "<missing " + prefix + ">";
}

}  // namespace

TEST_CASE("edgebert-run --question --context prints the reference answer", "[run][qa]") {
  for (const char* model : {"task_bert_qa", "task_distil_qa"}) {
    INFO(model);
    const std::string dir = testdata_dir() + "/" + model + "/cases/text_pair/";
    std::istringstream bs(slurp(dir + "best_span.txt"));
    int start, end, begin_byte, end_byte, max_tokens;
    REQUIRE(static_cast<bool>(bs >> start >> end >> begin_byte >> end_byte));
    double score, gap;
    REQUIRE(static_cast<bool>(bs >> score >> gap >> max_tokens));
    std::string out;
    REQUIRE(run_tool("--model " + ebm_path(model, "fp32") + " --question " + quote(slurp(dir + "text_a.txt")) +
                         " --context " + quote(slurp(dir + "text_b.txt")) + " --max-answer-len " + std::to_string(max_tokens),
                     &out) == 0);
    CHECK(line_after(out, "answer: ") == slurp(dir + "answer.txt"));
    CHECK(line_after(out, "offsets: ").rfind(std::to_string(begin_byte) + " " + std::to_string(end_byte), 0) == 0);
  }
}

TEST_CASE("edgebert-run splits a long context into windows and answers from the context", "[run][qa]") {
  const std::string question = "who was rude?";
  std::string context;
  for (int i = 0; i < 6; ++i) context += "The Hotel was clean, but the staff was RUDE. The movie was great and the acting was good! ";
  context.pop_back();
  for (int stride : {0, 2, 5}) {
    INFO("stride " << stride);
    std::string out, err;
    const int rc = run_tool("--model " + ebm_path("task_bert_qa", "int8") + " --max-seq-len 24 --stride " +
                                std::to_string(stride) + " --question " + quote(question) + " --context " + quote(context),
                            &out, &err);
    REQUIRE(rc == 0);
    const std::string answer = line_after(out, "answer: ");
    std::istringstream off(line_after(out, "offsets: "));
    size_t b = 0, e = 0;
    REQUIRE(static_cast<bool>(off >> b >> e));
    REQUIRE(b < e);
    REQUIRE(e <= context.size());
    CHECK(context.substr(b, e - b) == answer);
    CHECK(line_after(out, "window: ").find(" of ") != std::string::npos);
  }
  // a stride as large as the window cannot advance
  std::string out, err;
  CHECK(run_tool("--model " + ebm_path("task_bert_qa", "int8") + " --max-seq-len 24 --stride 100 --question " +
                     quote(question) + " --context " + quote(context),
                 &out, &err) != 0);
  CHECK(err.find("--stride") != std::string::npos);
  // QA flags on a model without a QA head
  CHECK(run_tool("--model " + ebm_path("task_bert_token", "fp32") + " --question a --context b", &out, &err) != 0);
  CHECK(err.find("question-answering") != std::string::npos);
}

TEST_CASE("edgebert-run --dump writes the task outputs; labels and words are printed", "[run]") {
  struct Dump {
    const char* model;
    const char* name;
  };
  for (const Dump& d : {Dump{"task_bert_qa", "start_logits"}, Dump{"task_distil_qa", "end_logits"},
                        Dump{"task_bert_token", "token_logits"}, Dump{"task_st_max", "sentence_embedding"},
                        Dump{"task_distil_seqcls_relu", "logits"}}) {
    INFO(d.model << " " << d.name);
    const std::string dir = testdata_dir() + "/" + d.model + "/cases/text_pair/";
    const std::string path = testdata_dir() + "/run_tasks_dump.f32";
    std::string out;
    REQUIRE(run_tool("--model " + ebm_path(d.model, "fp32") + " --text " + quote(slurp(dir + "text_a.txt")) +
                         " --text-pair " + quote(slurp(dir + "text_b.txt")) + " --dump " + d.name + "=" + path,
                     &out) == 0);
    const std::vector<float> got = read_f32(path), want = read_f32(dir + d.name + ".f32");
    REQUIRE(got.size() == want.size());
    double m = 0;
    for (size_t i = 0; i < got.size(); ++i) m = std::max(m, std::fabs(double(got[i]) - want[i]));
    CHECK(m <= 1e-3);
  }
  std::string out, err;
  REQUIRE(run_tool("--model " + ebm_path("task_bert_seqcls_tanh", "fp32") + " --text 'the movie was good'", &out) == 0);
  CHECK(out.find("negative") != std::string::npos);
  CHECK(out.find("positive") != std::string::npos);
  CHECK(line_after(out, "label: ").size() > 0);
  REQUIRE(run_tool("--model " + ebm_path("task_distil_token", "fp32") + " --text 'The movie was REALLY good!'", &out) == 0);
  CHECK(out.find("  REALLY ") != std::string::npos);
  CHECK(out.find("  ! ") != std::string::npos);
  CHECK(run_tool("--model " + ebm_path("task_st_max", "fp32") + " --text x --dump logits=/dev/null", &out, &err) != 0);
  CHECK(err.find("not a sequence classifier") != std::string::npos);
  CHECK(run_tool("--model " + ebm_path("task_st_max", "fp32") + " --text-pair x", &out, &err) != 0);
}

TEST_CASE("edgebert-run --texts dumps every text's pooled output in file order", "[run][packed]") {
  // the golden case text twice around another text, in packed runs of 16 tokens
  for (const Dump2 d : {Dump2{"task_st_mean_norm", "sentence_embedding"}, Dump2{"task_distil_seqcls_relu", "logits"},
                        Dump2{"task_bert_seqcls_tanh", "logits"}}) {
    INFO(d.model);
    const std::string dir = testdata_dir() + "/" + d.model + "/cases/text/";
    std::string text = slurp(dir + "text.txt");
    while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
    const std::string list = testdata_dir() + "/run_tasks_texts.txt", path = testdata_dir() + "/run_tasks_dump.f32";
    {
      std::ofstream f(list, std::ios::binary);
      f << text << "\nthe movie was good\n" << text << "\n";
    }
    std::string out;
    REQUIRE(run_tool("--model " + ebm_path(d.model, "fp32") + " --texts " + list + " --batch-tokens 16 --dump " + d.name +
                         "=" + path,
                     &out) == 0);
    CHECK(out.find("texts: 3") != std::string::npos);
    const std::vector<float> got = read_f32(path), want = read_f32(dir + d.name + ".f32");
    REQUIRE(got.size() == 3 * want.size());
    double m = 0;
    for (size_t i = 0; i < want.size(); ++i)
      m = std::max({m, std::fabs(double(got[i]) - want[i]), std::fabs(double(got[2 * want.size() + i]) - want[i])});
    CHECK(m <= 1e-3);
  }
  // a text longer than the session: that line is reported and the others go on; its row is zeros,
  // the exit code 1
  std::string out, err;
  const std::string list = testdata_dir() + "/run_tasks_texts.txt", path = testdata_dir() + "/run_tasks_none.f32";
  {
    std::ofstream f(list, std::ios::binary);
    f << "good\n";
    for (int i = 0; i < 40; ++i) f << "good ";
    f << "\ngood\n";
  }
  std::remove(path.c_str());
  CHECK(run_tool("--model " + ebm_path("task_st_max", "fp32") + " --max-seq-len 16 --texts " + list +
                     " --dump sentence_embedding=" + path,
                 &out, &err) != 0);
  CHECK(err.find(":2: ") != std::string::npos);
  CHECK(out.find("failed: 1 of 3 texts") != std::string::npos);
  const std::vector<float> rows = read_f32(path);
  REQUIRE(rows.size() % 3 == 0);
  const size_t w = rows.size() / 3;
  REQUIRE(w > 0);
  CHECK(std::all_of(rows.begin() + static_cast<std::ptrdiff_t>(w), rows.begin() + static_cast<std::ptrdiff_t>(2 * w),
                    [](float x) { return x == 0.f; }));
  CHECK(std::equal(rows.begin(), rows.begin() + static_cast<std::ptrdiff_t>(w), rows.begin() + static_cast<std::ptrdiff_t>(2 * w)));
}

TEST_CASE("edgebert-run --rerank prints INDEX SCORE per passage, best first", "[run][rerank]") {
  const std::string dir = testdata_dir() + "/task_bert_rerank_logit/rerank/";
  std::vector<double> want;
  {
    std::ifstream f(dir + "scores.txt");
    for (std::string line; std::getline(f, line);) {
      std::istringstream in(line);
      size_t index;
      double score;
      in >> index >> score;
      want.push_back(score);
    }
  }
  REQUIRE(want.size() >= 10);
  std::string out, err;
  REQUIRE(run_tool("--model " + ebm_path("task_bert_rerank_logit", "fp32") + " --rerank " +
                       quote(slurp(dir + "query.txt")) + " --texts " + dir + "passages.txt --batch-tokens 64",
                   &out) == 0);
  std::istringstream lines(out);
  std::vector<bool> seen(want.size(), false);
  double previous = INFINITY;
  size_t count = 0;
  for (std::string line; std::getline(lines, line); ++count) {
    std::istringstream in(line);
    size_t index = 0;
    double score = 0;
    REQUIRE(static_cast<bool>(in >> index >> score));
    REQUIRE(index < want.size());
    CHECK(!seen[index]);
    seen[index] = true;
    CHECK(std::fabs(score - want[index]) <= 2e-3);
    CHECK(score <= previous);
    previous = score;
  }
  CHECK(count == want.size());
  // the reference's best passage first
  CHECK(out.substr(0, out.find(' ')) ==
        std::to_string(std::max_element(want.begin(), want.end()) - want.begin()));
  // misuse: not a cross-encoder; --rerank without --texts
  CHECK(run_tool("--model " + ebm_path("task_bert_seqcls_tanh", "fp32") + " --rerank q --texts " + dir + "passages.txt",
                 &out, &err) != 0);
  CHECK(err.find("cross-encoder") != std::string::npos);
  CHECK(run_tool("--model " + ebm_path("task_bert_rerank", "fp32") + " --rerank q", &out, &err) != 0);
}

TEST_CASE("edgebert-run --truncation cuts as the HuggingFace goldens and reports it", "[run][truncation]") {
  std::ifstream f(testdata_dir() + "/task_bert_rerank/rerank/truncation.txt");
  size_t checked = 0;
  for (std::string line; std::getline(f, line) && checked < 6;) {
    std::vector<std::string> parts;
    std::istringstream in(line);
    for (std::string p; std::getline(in, p, '|');) parts.push_back(p);
    std::istringstream head(parts[0]);
    std::string strategy;
    int max_len = 0, cut = 0;
    head >> strategy >> max_len >> cut;
    if (cut <= 0 || parts.size() < 4 || parts[2].empty()) continue;  // pairs that are cut
    INFO(line);
    std::string out;
    REQUIRE(run_tool("--model " + ebm_path("task_bert_rerank", "fp32") + " --text " + quote(parts[1]) + " --text-pair " +
                         quote(parts[2]) + " --max-seq-len " + std::to_string(max_len) + " --truncation " + strategy,
                     &out) == 0);
    CHECK(line_after(out, "truncated: ") == std::to_string(cut) + " tokens");
    CHECK(out.find("): " + parts[3] + "\n") != std::string::npos);
    ++checked;
  }
  CHECK(checked == 6);
  std::string out, err;
  CHECK(run_tool("--model " + ebm_path("task_bert_rerank", "fp32") + " --text x --truncation only_first", &out, &err) != 0);
}
