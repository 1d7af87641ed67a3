// SPDX-License-Identifier: Apache-2.0
// edgebert-tokenize: runs a model's tokenizer (from a .ebm file, or from a tokenizer.json /
// checkpoint folder read with the converter's reader) and prints one JSON object per input:
//   {"ids": [...], "type_ids": [...], "offsets": [[b, e], ...], "word_ids": [...], "sequence_ids": [...]}
// (byte offsets into that input's own text; null word / sequence ids for special tokens).
// --bench tokenizes the inputs on one thread and reports MB/s and tokens/s instead.
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "converter/checkpoint/checkpoint_error.h"
#include "converter/checkpoint/hf_checkpoint.h"
#include "converter/checkpoint/json.h"
#include "converter/tokenizer/tokenizer_json.h"
#include "model.h"
#include "text/tokenizer.h"
#include "tool_common.h"

namespace {

int usage() {
  std::fprintf(stderr,
               "usage: edgebert-tokenize (--tokenizer PATH | --model M.ebm)\n"
               "         (--text T [--text-pair U] | --texts FILE | --pairs FILE | --jsonl FILE)\n"
               "         [--max-length N] [--bench]\n"
               "  PATH: a tokenizer.json, or a checkpoint folder (tokenizer.json, else vocab.txt)\n"
               "  --texts: one text per line; --pairs: TEXT<TAB>PAIR per line;\n"
               "  --jsonl: one {\"text\": ..., \"pair\": ...} object per line (any characters)\n");
  return 2;
}

struct Input {
  std::string text, pair;
  bool has_pair = false;
};

bool read_file(const std::string& path, std::string* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream ss;
  ss << in.rdbuf();
  *out = ss.str();
  return !in.bad();
}

std::vector<std::string> lines_of(const std::string& s) {
  std::vector<std::string> lines;
  size_t i = 0;
  while (i < s.size()) {
    size_t j = s.find('\n', i);
    if (j == std::string::npos) j = s.size();
    std::string line = s.substr(i, j - i);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    lines.push_back(std::move(line));
    i = j + 1;
  }
  return lines;
}

void print_encoding(const std::vector<edgebert::text::TextToken>& t, std::string& out) {
  char buf[64];
  out += "{\"ids\": [";
  for (size_t i = 0; i < t.size(); ++i) out += (i ? ", " : "") + std::to_string(t[i].id);
  out += "], \"type_ids\": [";
  for (size_t i = 0; i < t.size(); ++i) out += (i ? ", " : "") + std::to_string(t[i].type_id);
  out += "], \"offsets\": [";
  for (size_t i = 0; i < t.size(); ++i) {
    std::snprintf(buf, sizeof(buf), "%s[%d, %d]", i ? ", " : "", t[i].begin, t[i].end);
    out += buf;
  }
  out += "], \"word_ids\": [";
  for (size_t i = 0; i < t.size(); ++i) out += (i ? ", " : "") + (t[i].word < 0 ? std::string("null") : std::to_string(t[i].word));
  out += "], \"sequence_ids\": [";
  for (size_t i = 0; i < t.size(); ++i)
    out += (i ? ", " : "") + (t[i].sequence < 0 ? std::string("null") : std::to_string(t[i].sequence));
  out += "]}\n";
}

}  // namespace

int main(int argc, char** argv) {
  using namespace edgebert;
  std::string tokenizer_path, model_path, text, pair, texts_file, pairs_file, jsonl_file;
  bool has_text = false, has_pair = false, bench = false;
  long max_length = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&](std::string* v) {
      if (i + 1 >= argc) return false;
      *v = argv[++i];
      return true;
    };
    if (a == "--tokenizer") {
      if (!next(&tokenizer_path)) return usage();
    } else if (a == "--model") {
      if (!next(&model_path)) return usage();
    } else if (a == "--text") {
      if (!next(&text)) return usage();
      has_text = true;
    } else if (a == "--text-pair") {
      if (!next(&pair)) return usage();
      has_pair = true;
    } else if (a == "--texts") {
      if (!next(&texts_file)) return usage();
    } else if (a == "--pairs") {
      if (!next(&pairs_file)) return usage();
    } else if (a == "--jsonl") {
      if (!next(&jsonl_file)) return usage();
    } else if (a == "--max-length") {
      if (i + 1 >= argc || !tools::parse_int(argv[++i], 0, 1 << 30, &max_length)) return usage();
    } else if (a == "--bench") {
      bench = true;
    } else {
      return usage();
    }
  }
  const int sources = has_text + !texts_file.empty() + !pairs_file.empty() + !jsonl_file.empty();
  if ((tokenizer_path.empty() == model_path.empty()) || sources != 1 || (has_pair && !has_text)) return usage();

  // inputs
  std::vector<Input> inputs;
  try {
    if (has_text) {
      inputs.push_back(Input{text, pair, has_pair});
    } else {
      const std::string& f = !texts_file.empty() ? texts_file : !pairs_file.empty() ? pairs_file : jsonl_file;
      std::string data;
      if (!read_file(f, &data)) {
        std::fprintf(stderr, "edgebert-tokenize: %s: cannot read\n", f.c_str());
        return 1;
      }
      std::vector<std::string> lines = lines_of(data);
      for (size_t n = 0; n < lines.size(); ++n) {
        const std::string& line = lines[n];
        if (!texts_file.empty()) {
          inputs.push_back(Input{line, "", false});
        } else if (!pairs_file.empty()) {
          const size_t tab = line.find('\t');
          if (tab == std::string::npos) {
            std::fprintf(stderr, "edgebert-tokenize: %s:%zu: no TAB between text and pair\n", f.c_str(), n + 1);
            return 1;
          }
          inputs.push_back(Input{line.substr(0, tab), line.substr(tab + 1), true});
        } else {
          if (line.empty()) continue;
          const convert::JsonValue v = convert::parse_json(line, f + ":" + std::to_string(n + 1));
          const convert::JsonValue* t = v.find("text");
          if (!t || !t->is_string()) {
            std::fprintf(stderr, "edgebert-tokenize: %s:%zu: no \"text\" string\n", f.c_str(), n + 1);
            return 1;
          }
          Input in{t->as_string(), "", false};
          if (const convert::JsonValue* p = v.find("pair"); p && p->is_string()) {
            in.pair = p->as_string();
            in.has_pair = true;
          }
          inputs.push_back(std::move(in));
        }
      }
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "edgebert-tokenize: %s\n", e.what());
    return 1;
  }

  // tokenizer
  std::unique_ptr<Model> model;
  text::Tokenizer own;
  std::vector<std::string> vocab_tokens;
  const text::Tokenizer* tok = &own;
  try {
    if (!model_path.empty()) {
      std::string err;
      if (!Model::load_file(model_path.c_str()).move_to(&model, &err)) {
        std::fprintf(stderr, "edgebert-tokenize: %s: %s\n", model_path.c_str(), err.c_str());
        return 1;
      }
      if (!model->text_tokenizer) {
        std::fprintf(stderr, "edgebert-tokenize: %s: the model has no tokenizer (it takes token ids)\n", model_path.c_str());
        return 1;
      }
      tok = model->text_tokenizer.get();
    } else {
      struct stat st;
      if (stat(tokenizer_path.c_str(), &st) != 0) {
        std::fprintf(stderr, "edgebert-tokenize: %s: not found\n", tokenizer_path.c_str());
        return 1;
      }
      std::string json = tokenizer_path;
      if (S_ISDIR(st.st_mode)) {
        json = tokenizer_path + "/tokenizer.json";
        if (stat(json.c_str(), &st) != 0) json.clear();
      }
      if (!json.empty()) {
        const convert::TokenizerJson tj = convert::read_tokenizer_json(json);
        const Status s = own.init_from_buffer(convert::tokenizer_spec_buffer(tj));
        if (!s.is_ok()) {
          std::fprintf(stderr, "edgebert-tokenize: %s: %s\n", json.c_str(), s.message().c_str());
          return 1;
        }
      } else {
        const convert::Vocab v = convert::read_vocab(tokenizer_path);
        vocab_tokens = v.tokens;
        text::BertVocabOptions opt;
        opt.lowercase = v.do_lower_case;
        opt.handle_chinese_chars = v.tokenize_chinese_chars;
        const Status s = own.init_bert_vocab(std::vector<std::string_view>(vocab_tokens.begin(), vocab_tokens.end()), opt);
        if (!s.is_ok()) {
          std::fprintf(stderr, "edgebert-tokenize: %s/vocab.txt: %s\n", tokenizer_path.c_str(), s.message().c_str());
          return 1;
        }
      }
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "edgebert-tokenize: %s\n", e.what());
    return 1;
  }

  size_t longest = 0;
  for (const Input& in : inputs) longest = std::max(longest, in.text.size() + in.pair.size());
  text::TextWorkspace ws;
  ws.reserve(longest);
  std::vector<text::TextToken> tokens(4 * longest + 16);
  auto encode = [&](const Input& in) {
    const std::string_view p(in.pair);
    size_t n = tok->encode(in.text, in.has_pair ? &p : nullptr, static_cast<size_t>(max_length), ws, tokens.data(),
                           tokens.size());
    if (n > tokens.size()) {
      tokens.resize(n);
      n = tok->encode(in.text, in.has_pair ? &p : nullptr, static_cast<size_t>(max_length), ws, tokens.data(), tokens.size());
    }
    return n;
  };

  if (bench) {
    size_t bytes = 0;
    for (const Input& in : inputs) bytes += in.text.size() + in.pair.size();
    size_t count = 0;
    for (const Input& in : inputs) count += encode(in);  // warm-up (sizes every buffer)
    double best = 1e30;
    for (int r = 0; r < 5; ++r) {
      const auto t0 = std::chrono::steady_clock::now();
      count = 0;
      for (const Input& in : inputs) count += encode(in);
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      best = std::min(best, s);
    }
    std::printf("{\"texts\": %zu, \"bytes\": %zu, \"tokens\": %zu, \"seconds\": %.6f, \"mb_per_s\": %.3f, \"tokens_per_s\": %.0f}\n",
                inputs.size(), bytes, count, best, bytes / 1e6 / best, count / best);
    return 0;
  }
  std::string out;
  std::vector<text::TextToken> view;
  for (size_t k = 0; k < inputs.size(); ++k) {
    const Input& in = inputs[k];
    const size_t n = encode(in);
    if (ws.error) {
      std::fwrite(out.data(), 1, out.size(), stdout);
      std::fprintf(stderr, "edgebert-tokenize: input %zu: %s\n", k + 1, ws.error);
      return 1;
    }
    view.assign(tokens.begin(), tokens.begin() + static_cast<std::ptrdiff_t>(n));
    print_encoding(view, out);
    if (out.size() > (1u << 20)) {
      std::fwrite(out.data(), 1, out.size(), stdout);
      out.clear();
    }
  }
  std::fwrite(out.data(), 1, out.size(), stdout);
  return std::fflush(stdout) == 0 ? 0 : 1;
}
