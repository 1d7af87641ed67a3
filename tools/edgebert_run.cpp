// SPDX-License-Identifier: Apache-2.0
// edgebert-run: runs one input through a model and prints a short summary and the task's result.
//   edgebert-run --model MODEL.ebm (--text "..." [--text-pair "..."] | --ids "101 7592 102" | --embeds PATH |
//                --question "..." --context "..." [--max-answer-len N] [--stride N])
//                [--types "0 0 1"] [--mask "1 1 0"] [--threads N] [--max-seq-len N] [--weight-cache PATH]
//                [--dump NAME=PATH]...
//   edgebert-run --model MODEL.ebm --texts FILE [--batch-tokens N] [--threads N] [--max-seq-len N] [--dump NAME=PATH]...
//   edgebert-run --model CROSS_ENCODER.ebm --rerank QUERY --texts FILE [--batch-tokens N] [--threads N]
//   edgebert-run --model EMBEDDING_MODEL.ebm --chunk WINDOW:STRIDE[:mean] (--text "..." | --document FILE)
//                [--batch-tokens N] [--threads N] [--max-seq-len N] [--dims N] [--dump sentence_embedding=PATH]
// --chunk: the text (or FILE's bytes, of any length) embedded as windows of WINDOW tokens overlapping
// by STRIDE (eb_session_embed_chunked); stdout has one "chunk K FIRST_TOKEN TOKENS BEGIN_BYTE
// END_BYTE" line per window; --dump sentence_embedding writes [windows, width] (with :mean the
// windows' token-weighted mean [width]).
// --rerank: every line of FILE is a passage scored against QUERY (eb_session_rerank_top_k); stdout
// has one "INDEX SCORE" line per passage (INDEX: its 0-based line in FILE), best first; a passage
// that cannot run is reported on stderr as FILE:LINE (no line on stdout) and the exit code is 1.
// --truncation longest_first|only_second (text runs, --texts, --rerank): texts longer than the
// session maximum are cut as HF tokenizers does (eb_session_set_truncation) instead of refused;
// what was cut is reported ("truncated: N tokens"; --texts: FILE:LINE: truncated: N tokens on
// stderr; --rerank reports only the ranking).
// --texts: one text per line, run in packed runs of up to N tokens (eb_session_run_texts; 0: the
// session maximum); each dump holds every text's output concatenated in file order (pooled
// outputs [texts, width], token outputs [all tokens, ...]). A text that cannot run (too long for
// the session, invalid) is reported as FILE:LINE with its status on stderr and the rest go on: its
// pooled rows are zeros, it has no token rows; everything is written, and the exit code is 1.
// NAME is last_hidden_state (float32 [seq, hidden]), pooler_output (float32 [hidden]), logits
// (float32 [labels]), sentence_embedding ([hidden]), start_logits / end_logits ([seq]) or
// token_logits ([seq, labels]), sparse_embedding ([vocab], masked-LM models: SPLADE) or
// token_vectors ([seq, dim], ColBERT models: each row L2-normalized; bge-m3: [seq - 1, dim],
// without [CLS]; with --colbert document without the skiplist's rows: eb_session_get_token_vectors;
// --pool-factor N pools each document's rows as PyLate: eb_pool_token_vectors); raw
// little-endian, written atomically. --sparse [--top-k K] (masked-LM and bge-m3 models, with --text or --ids):
// stdout has only "ID WEIGHT" lines, the sparse vector's nonzero entries largest first (at most K). --fill-mask
// [--top-k K] (masked-LM models, with --text or --ids): stdout has only "POSITION ID PROB TOKEN" lines, for each token
// that is the tokenizer's mask token the K (default 5) most probable entries (eb_session_fill_mask). Everything goes through
// the public C API (long QA contexts: eb_session_answer; word labels: eb_session_get_words).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "edgebert/edgebert.h"
#include "tool_common.h"

namespace {

void usage(FILE* f) {
  std::fprintf(f,
               "usage: edgebert-run --model MODEL.ebm (--text \"...\" [--text-pair \"...\"] | --ids \"101 7592 102\" |\n"
               "                    --embeds PATH | --question \"...\" --context \"...\" [--max-answer-len N] [--stride N])\n"
               "                    [--types \"0 0 1\"] [--mask \"1 1 0\"] [--threads N] [--max-seq-len N]\n"
               "                    [--weight-cache PATH] [--dims N] [--prompt NAME] [--colbert plain|query|document]\n"
               "                    [--pool-factor N] [--dump NAME=PATH]...\n"
               "       edgebert-run --model MODEL.ebm --texts FILE [--batch-tokens N] [--threads N] [--max-seq-len N]\n"
               "                    [--dims N] [--prompt NAME] [--colbert plain|query|document] [--pool-factor N]\n"
               "                    [--dump NAME=PATH]...\n"
               "       edgebert-run --model CROSS_ENCODER.ebm --rerank QUERY --texts FILE [--batch-tokens N] [--threads N]\n"
               "       edgebert-run --model EMBEDDING_MODEL.ebm --chunk WINDOW:STRIDE[:mean] (--text \"...\" | --document FILE)\n"
               "                    [--batch-tokens N] [--threads N] [--max-seq-len N] [--dims N] [--dump sentence_embedding=PATH]\n"
               "  --chunk WINDOW:STRIDE[:mean]: windows of WINDOW tokens overlapping by STRIDE (HF's overflowing\n"
               "    tokens), each window's sentence embedding ([windows, width]; :mean: their token-weighted\n"
               "    mean [width]); prints 'chunk K FIRST_TOKEN TOKENS BEGIN_BYTE END_BYTE' per window\n"
               "  --document FILE: with --chunk, the text is FILE's bytes (any length)\n"
               "  --dims N: Matryoshka: the sentence embedding truncated to its first N values and L2-normalized\n"
               "    again (meaningful only for models trained for it, as their model card says)\n"
               "  --prompt NAME: a prompt of the model's config_sentence_transformers.json put before the text\n"
               "    (--text, the first of --text-pair, every line of --texts), e.g. EmbeddingGemma's 'query'\n"
               "  --colbert plain|query|document: ColBERT models from PyLate folders lay out --text / --texts as\n"
               "    PyLate's queries ([CLS] marker text [SEP] [MASK]...) or documents (token_vectors dumps leave\n"
               "    out the skiplist's rows), eb_session_set_colbert_input\n"
               "  --pool-factor N: with --colbert document, token_vectors dumps pool each document's rows as\n"
               "    PyLate's pool_factor (about rows / N, [CLS] kept last), eb_pool_token_vectors\n"
               "  --rerank QUERY: scores every line of --texts against QUERY; prints 'INDEX SCORE' per line, best first\n"
               "  --truncation none|longest_first|only_second: cut texts longer than the session maximum (as HF\n"
               "    tokenizers) instead of refusing them; the cut tokens are reported\n"
               "  --texts FILE: one text per line, packed runs of up to --batch-tokens tokens (0: the session maximum);\n"
               "    dumps concatenate every text's output in file order (pooled outputs [texts, width])\n"
               "  --weight-cache PATH: packed weights kept in PATH (written by the first run, mapped by the next)\n"
               "  --types, --mask: token type ids and attention mask (1 = token, 0 = padding) for --ids\n"
               "  --text-pair: second segment ([CLS] text [SEP] pair [SEP], token types 0 then 1)\n"
               "  --question/--context: extractive QA (prints 'answer: TEXT'); a context longer than the\n"
               "    session maximum is run in windows of its tokens overlapping by --stride tokens\n"
               "    (default min(128, half a window)); --max-answer-len: longest answer in tokens (default 30)\n"
               "  NAME: last_hidden_state | pooler_output | logits | sentence_embedding | start_logits |\n"
               "    end_logits | token_logits | sparse_embedding | token_vectors (raw little-endian float32)\n"
               "  --sparse [--top-k K]: masked-LM (SPLADE) and bge-m3 models: prints only 'ID WEIGHT' lines, the nonzero\n"
               "    entries of the sparse vector, largest first (at most K)\n"
               "  --fill-mask [--top-k K]: masked-LM models: for each mask token ([MASK] / <mask>) of the input, prints\n"
               "    'POSITION ID PROB TOKEN' lines, the K (default 5) most probable vocabulary entries, largest first\n"
               "  --embeds PATH: float32 [seq, hidden] precomputed embedding outputs (skips the embedding layer)\n");
}

int die(const std::string& msg) {
  std::fprintf(stderr, "edgebert-run: error: %s\n", msg.c_str());
  return 1;
}

struct Output {
  const char* name;
  eb_output which;
};
constexpr Output kOutputs[] = {{"last_hidden_state", EB_OUTPUT_LAST_HIDDEN_STATE},
                               {"pooler_output", EB_OUTPUT_POOLER_OUTPUT},
                               {"logits", EB_OUTPUT_LOGITS},
                               {"sentence_embedding", EB_OUTPUT_SENTENCE_EMBEDDING},
                               {"start_logits", EB_OUTPUT_START_LOGITS},
                               {"end_logits", EB_OUTPUT_END_LOGITS},
                               {"token_logits", EB_OUTPUT_TOKEN_LOGITS},
                               {"sparse_embedding", EB_OUTPUT_SPARSE_EMBEDDING},
                               {"token_vectors", EB_OUTPUT_TOKEN_VECTORS}};

const char* label_name(const eb_model* m, int i) {
  const char* name = "?";
  return eb_model_get_label(m, i, &name) == EB_OK ? name : "?";
}

// Labels with softmax probabilities (sequence classifiers). A single output (regression) has no
// distribution: its raw score is printed.
void print_classes(const eb_model* m, const float* logits, int labels) {
  if (labels == 1) {
    std::printf("  %-20s score %.4f\n", label_name(m, 0), logits[0]);
    return;
  }
  double mx = logits[0], sum = 0;
  for (int i = 1; i < labels; ++i) mx = std::max<double>(mx, logits[i]);
  for (int i = 0; i < labels; ++i) sum += std::exp(logits[i] - mx);
  int best = 0;
  for (int i = 0; i < labels; ++i) {
    if (logits[i] > logits[best]) best = i;
    std::printf("  %-20s %.4f  (logit %.4f)\n", label_name(m, i), std::exp(logits[i] - mx) / sum, logits[i]);
  }
  std::printf("label: %s\n", label_name(m, best));
}

// Each word of the text with the label of its first sub-token (token classifiers after a text
// run), or each token when the run has no words (--ids).
void print_token_labels(const eb_model* m, eb_session* s, const float* logits, size_t n, int labels,
                        const std::string& text_a, const std::string& text_b) {
  const eb_word* words = nullptr;
  size_t count = 0;
  if (eb_session_get_words(s, &words, &count) != EB_OK) {
    const int32_t* ids = nullptr;
    size_t len = 0;
    if (eb_session_get_input_ids(s, &ids, &len) != EB_OK) len = 0;
    for (size_t t = 0; t < n && t < len; ++t) {
      const float* row = logits + t * static_cast<size_t>(labels);
      std::printf("  %6d  %s\n", ids[t], label_name(m, static_cast<int>(std::max_element(row, row + labels) - row)));
    }
    return;
  }
  for (size_t i = 0; i < count; ++i) {
    const eb_word& w = words[i];
    const std::string& text = w.segment == 0 ? text_a : text_b;
    std::printf("  %-24s %s\n", text.substr(w.begin_byte, w.end_byte - w.begin_byte).c_str(), label_name(m, w.label));
  }
}

// Extractive QA: the best span over one pair run or over overlapping windows of the context.
int answer_question(eb_session* s, const std::string& question, const std::string& context, long max_answer,
                    long stride) {
  eb_span best{};
  int32_t windows = 0;
  const eb_status st = eb_session_answer(s, question.c_str(), context.c_str(), static_cast<int32_t>(max_answer),
                                         static_cast<int32_t>(stride), &best, &windows);
  if (st == EB_ERROR_INVALID_ARGUMENT && stride >= 0) return die(std::string("--stride: ") + eb_session_last_error(s));
  if (st != EB_OK) return die(std::string(eb_status_string(st)) + ": " + eb_session_last_error(s));
  const size_t b = static_cast<size_t>(best.begin_byte), e = static_cast<size_t>(best.end_byte);
  std::printf("answer: %s\n", context.substr(b, e - b).c_str());
  std::printf("score: %.4f (start logit + end logit)\n", best.score);
  std::printf("offsets: %zu %zu (bytes in the context)\n", b, e);
  if (windows > 1) std::printf("window: best span of %d windows of the context\n", windows);
  return 0;
}

// The sequences of the last run that were cut (--truncation): a single run on stdout; with
// `path`, sequence i of a packed run as FILE:LINE (first_line + i + 1) on stderr.
void report_truncation(eb_session* session, const std::string& path, size_t first_line = 0) {
  size_t count = 0;
  if (eb_session_get_sequence_count(session, &count) != EB_OK) return;
  for (size_t i = 0; i < count; ++i) {
    int32_t cut = 0;
    if (eb_session_get_truncated_tokens(session, i, &cut) != EB_OK || cut == 0) continue;
    if (path.empty())
      std::printf("truncated: %d tokens\n", cut);
    else
      std::fprintf(stderr, "edgebert-run: %s:%zu: truncated: %d tokens\n", path.c_str(), first_line + i + 1, cut);
  }
}

// The width of the model's token vectors (eb_model_info num_labels of the session's model).
size_t vector_dim(eb_session* session) {
  const float* p = nullptr;
  int64_t shape[2] = {0, 0};
  int32_t rank = 0;
  return eb_session_get_output(session, EB_OUTPUT_TOKEN_VECTORS, &p, shape, &rank) == EB_OK && rank == 2
             ? static_cast<size_t>(shape[1])
             : 0;
}

// The token vectors of the last run's sequences [0, count) end to end, as their model scores them
// (eb_session_get_token_vectors: a ColBERT document run leaves its skiplist rows out), appended to *data;
// pool_factor > 1: each sequence's rows pooled as PyLate pools documents (eb_pool_token_vectors, [CLS] kept).
bool append_token_vectors(eb_session* session, size_t count, size_t dim, size_t pool_factor, std::string* data) {
  std::vector<float> rows, pooled;
  for (size_t k = 0; k < count; ++k) {
    size_t n = 0;
    if (eb_session_get_token_vectors(session, k, nullptr, 0, &n) != EB_OK) return false;
    rows.resize(n * dim);
    if (n > 0 && eb_session_get_token_vectors(session, k, rows.data(), n, &n) != EB_OK) return false;
    if (n > 0 && pool_factor > 1) {
      pooled.resize(rows.size());
      if (eb_pool_token_vectors(rows.data(), n, dim, pool_factor, 1, pooled.data(), &n) != EB_OK) return false;
      rows.swap(pooled);
    }
    data->append(reinterpret_cast<const char*>(rows.data()), n * dim * sizeof(float));
  }
  return true;
}

// --texts: every line of `path` in packed runs; appends each dumped output per run, in order.
int run_texts_file(eb_session* session, const std::string& path, const std::vector<std::pair<std::string, std::string>>& dumps,
                   size_t pool_factor) {
  std::vector<std::string> lines;
  if (!edgebert::tools::read_lines(path, &lines)) return die("cannot read --texts " + path);
  std::vector<const char*> texts;
  for (const std::string& l : lines) texts.push_back(l.c_str());
  std::vector<std::string> data(dumps.size());
  size_t runs = 0, tokens = 0, failed = 0;
  const auto t0 = std::chrono::steady_clock::now();
  for (size_t done = 0, n = 0; done < texts.size(); done += n) {
    const eb_status s = eb_session_run_texts(session, texts.data() + done, texts.size() - done, &n);
    if (s != EB_OK) return die(std::string(eb_status_string(s)) + ": " + eb_session_last_error(session));
    ++runs;
    report_truncation(session, path, done);
    for (size_t i = 0; i < n; ++i) {
      eb_sequence_info q;
      if (eb_session_get_sequence(session, i, &q) != EB_OK) return die(eb_session_last_error(session));
      if (q.status != EB_OK) {  // that line alone: reported, the others go on
        std::fprintf(stderr, "edgebert-run: %s:%zu: %s\n", path.c_str(), done + i + 1,
                     eb_status_string(static_cast<eb_status>(q.status)));
        ++failed;
      }
      tokens += static_cast<size_t>(q.tokens);
    }
    for (size_t d = 0; d < dumps.size(); ++d) {
      const auto o =
          std::find_if(std::begin(kOutputs), std::end(kOutputs), [&](const Output& x) { return dumps[d].first == x.name; });
      if (o->which == EB_OUTPUT_TOKEN_VECTORS) {  // per sequence, as the model scores them
        if (!append_token_vectors(session, n, vector_dim(session), pool_factor, &data[d]))
          return die("--dump " + dumps[d].first + ": " + eb_session_last_error(session));
        continue;
      }
      const float* p = nullptr;
      int64_t shape[2];
      int32_t rank;
      if (eb_session_get_output(session, o->which, &p, shape, &rank) != EB_OK)
        return die("--dump " + dumps[d].first + ": " + eb_session_last_error(session));
      const size_t count = static_cast<size_t>(shape[0]) * (rank == 2 ? static_cast<size_t>(shape[1]) : 1);
      data[d].append(reinterpret_cast<const char*>(p), count * sizeof(float));
    }
  }
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  std::printf("texts: %zu, tokens: %zu, packed runs: %zu, time %.1f ms (%.1f texts/s)\n", texts.size(), tokens, runs, ms,
              texts.size() / (ms / 1000.0));
  if (failed) std::printf("failed: %zu of %zu texts (their pooled rows are zeros)\n", failed, texts.size());
  for (size_t d = 0; d < dumps.size(); ++d) {
    std::string why;
    if (!edgebert::tools::write_file_atomically(dumps[d].second, data[d].data(), data[d].size(), &why)) return die(why);
    std::printf("dumped %s -> %s (%zu float32)\n", dumps[d].first.c_str(), dumps[d].second.c_str(),
                data[d].size() / sizeof(float));
  }
  return failed ? 1 : 0;
}

// The summary lines of the sentence embedding, the token vectors and the sparse vector (false:
// the output is missing; eb_session_last_error says why).
bool print_sentence_embedding(eb_session* session) {
  const float* out = nullptr;
  int64_t shape[2];
  int32_t rank;
  if (eb_session_get_output(session, EB_OUTPUT_SENTENCE_EMBEDDING, &out, shape, &rank) != EB_OK) return false;
  const int width = static_cast<int>(shape[0]);  // hidden_size, or --dims
  double sn = 0;
  for (int i = 0; i < width; ++i) sn += double(out[i]) * out[i];
  std::printf("sentence_embedding: [%d], norm %.4f, first values %.4f %.4f %.4f %.4f\n", width, std::sqrt(sn),
              out[0], width > 1 ? out[1] : 0.f, width > 2 ? out[2] : 0.f, width > 3 ? out[3] : 0.f);
  return true;
}

bool print_token_vectors(eb_session* session) {
  const float* out = nullptr;
  int64_t shape[2];
  int32_t rank;
  if (eb_session_get_output(session, EB_OUTPUT_TOKEN_VECTORS, &out, shape, &rank) != EB_OK) return false;
  std::printf("token_vectors: [%lld, %lld], rows L2-normalized (eb_maxsim scores them)\n", static_cast<long long>(shape[0]),
              static_cast<long long>(shape[1]));
  return true;
}

bool print_sparse_summary(eb_session* session) {
  const float* out = nullptr;
  int64_t shape[2];
  int32_t rank;
  if (eb_session_get_output(session, EB_OUTPUT_SPARSE_EMBEDDING, &out, shape, &rank) != EB_OK) return false;
  size_t nonzero = 0;
  for (int64_t i = 0; i < shape[0]; ++i) nonzero += out[i] > 0.f;
  std::printf("sparse_embedding: [%lld], %zu nonzero (--sparse lists them)\n", static_cast<long long>(shape[0]), nonzero);
  return true;
}

// --sparse: "ID WEIGHT" lines of the run's sparse vector, largest first (at most k; 0: all nonzero).
int print_sparse(eb_session* session, const eb_model_info& info, long k) {
  const size_t room = k > 0 ? static_cast<size_t>(k) : static_cast<size_t>(info.vocab_size);
  std::vector<int32_t> ids(room);
  std::vector<float> weights(room);
  size_t found = 0;
  if (eb_session_sparse_top_k(session, 0, static_cast<size_t>(k), 0.f, ids.data(), weights.data(), &found) != EB_OK)
    return die(std::string("--sparse: ") + eb_session_last_error(session));
  for (size_t i = 0; i < found; ++i) std::printf("%d %.9g\n", ids[i], static_cast<double>(weights[i]));
  return 0;
}

// --fill-mask: "POSITION ID PROB TOKEN" lines for each mask token of the run's input, the k most
// probable entries first (PROB with 6 significant digits).
int print_fill_mask(eb_session* session, const eb_model* model, int32_t mask_id, long k) {
  const int32_t* ids = nullptr;
  size_t n = 0;
  if (eb_session_get_input_ids(session, &ids, &n) != EB_OK) return die(std::string("--fill-mask: ") + eb_session_last_error(session));
  std::vector<int32_t> top(static_cast<size_t>(k));
  std::vector<float> probs(static_cast<size_t>(k));
  size_t masks = 0;
  for (size_t t = 0; t < n; ++t) {
    if (ids[t] != mask_id) continue;
    ++masks;
    size_t found = 0;
    if (eb_session_fill_mask(session, t, top.size(), top.data(), probs.data(), &found) != EB_OK)
      return die(std::string("--fill-mask: ") + eb_session_last_error(session));
    for (size_t i = 0; i < found; ++i) {
      const char* tok = "";
      size_t len = 0;
      if (eb_model_get_token(model, top[i], &tok, &len) != EB_OK) tok = "", len = 0;
      std::printf("%zu %d %.6g %.*s\n", t, top[i], static_cast<double>(probs[i]), static_cast<int>(len), tok);
    }
  }
  if (masks == 0) {
    const char* tok = "";
    size_t len = 0;
    if (eb_model_get_token(model, mask_id, &tok, &len) != EB_OK) tok = "", len = 0;
    return die("--fill-mask: the input has no mask token " + std::string(tok, len) + " (id " + std::to_string(mask_id) + ")");
  }
  return 0;
}

// --chunk WINDOW:STRIDE[:mean]: the text's windows (one line each) and their vectors (dumped).
int chunk_text(eb_session* session, const std::string& doc, long window, long stride, bool mean, long width_arg,
               const std::vector<std::pair<std::string, std::string>>& dumps) {
  size_t windows = 0;
  eb_status s = eb_session_embed_chunked(session, doc.data(), doc.size(), static_cast<int32_t>(window),
                                         static_cast<int32_t>(stride), EB_CHUNK_POOLING_NONE, nullptr, 0, nullptr, 0,
                                         &windows);
  if (s != EB_OK) return die(std::string("--chunk: ") + eb_status_string(s) + ": " + eb_session_last_error(session));
  const size_t width = static_cast<size_t>(width_arg);  // hidden_size, or --dims
  std::vector<float> out((mean ? 1 : windows) * width);
  std::vector<eb_chunk> chunks(windows);
  const auto t0 = std::chrono::steady_clock::now();
  s = eb_session_embed_chunked(session, doc.data(), doc.size(), static_cast<int32_t>(window), static_cast<int32_t>(stride),
                               mean ? EB_CHUNK_POOLING_MEAN : EB_CHUNK_POOLING_NONE, out.data(), out.size(),
                               mean ? nullptr : chunks.data(), chunks.size(), &windows);
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  if (s != EB_OK) return die(std::string("--chunk: ") + eb_status_string(s) + ": " + eb_session_last_error(session));
  if (mean) {  // the windows' places: a second call without the vectors' pooling (cheap next to the run)
    std::vector<float> rows(windows * width);
    s = eb_session_embed_chunked(session, doc.data(), doc.size(), static_cast<int32_t>(window),
                                 static_cast<int32_t>(stride), EB_CHUNK_POOLING_NONE, rows.data(), rows.size(),
                                 chunks.data(), chunks.size(), &windows);
    if (s != EB_OK) return die(std::string("--chunk: ") + eb_status_string(s) + ": " + eb_session_last_error(session));
  }
  for (size_t k = 0; k < windows; ++k)
    std::printf("chunk %zu %zu %zu %zu %zu\n", k, chunks[k].first_token, chunks[k].tokens, chunks[k].begin_byte,
                chunks[k].end_byte);
  std::printf("windows: %zu, bytes: %zu, time %.1f ms%s\n", windows, doc.size(), ms, mean ? " (pooled: mean)" : "");
  for (const auto& dump : dumps) {
    if (dump.first != "sentence_embedding") return die("--chunk dumps only sentence_embedding, not " + dump.first);
    std::string why;
    if (!edgebert::tools::write_file_atomically(dump.second, out.data(), out.size() * sizeof(float), &why)) return die(why);
    std::printf("dumped %s -> %s (%zu float32)\n", dump.first.c_str(), dump.second.c_str(), out.size());
  }
  return 0;
}

// --rerank QUERY --texts FILE: "INDEX SCORE" lines, best first (failed lines on stderr).
int rerank_file(eb_session* session, const std::string& query, const std::string& path) {
  std::vector<std::string> lines;
  if (!edgebert::tools::read_lines(path, &lines)) return die("cannot read --texts " + path);
  std::vector<const char*> passages;
  for (const std::string& l : lines) passages.push_back(l.c_str());
  const size_t n = passages.size();
  std::vector<int32_t> order(n), statuses(n);
  std::vector<float> scores(n);
  size_t found = 0;
  const eb_status s = eb_session_rerank_top_k(session, query.c_str(), passages.data(), n, n, order.data(),
                                              scores.data(), &found, statuses.data());
  if (s != EB_OK) return die(std::string(eb_status_string(s)) + ": " + eb_session_last_error(session));
  for (size_t i = 0; i < n; ++i)
    if (statuses[i] != EB_OK)
      std::fprintf(stderr, "edgebert-run: %s:%zu: %s\n", path.c_str(), i + 1,
                   eb_status_string(static_cast<eb_status>(statuses[i])));
  for (size_t r = 0; r < found; ++r) std::printf("%d %.9g\n", order[r], static_cast<double>(scores[r]));
  return found == n ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace edgebert::tools;
  std::string model_path, text, text_pair, ids_arg, embeds_path, types_arg, mask_arg, question, context, cache_path,
      texts_path, rerank_query, truncation, chunk_arg, document_path;
  const char* prompt = nullptr;  // --prompt NAME
  std::string colbert;           // --colbert plain|query|document
  long batch_tokens = 0;
  bool have_rerank = false, sparse = false, fill_mask = false;
  long top_k = 0;
  bool have_texts = false;
  bool have_text = false, have_pair = false, have_ids = false, have_embeds = false, have_q = false, have_c = false;
  long threads = 1, max_len = 0, max_answer = 30, stride = -1, dims = 0, pool_factor = 1;
  std::vector<std::pair<std::string, std::string>> dumps;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> const char* { return i + 1 < argc ? argv[++i] : nullptr; };
    const char* v = nullptr;
    if (a == "--help" || a == "-h") {
      usage(stdout);
      return 0;
    }
    if (a == "--sparse" || a == "--fill-mask") {  // the flags without a value
      (a == "--sparse" ? sparse : fill_mask) = true;
      continue;
    }
    static const char* const kFlags[] = {"--model", "--text", "--text-pair", "--ids", "--embeds", "--threads",
                                         "--max-seq-len", "--dump", "--types", "--mask", "--question", "--context",
                                         "--max-answer-len", "--stride", "--weight-cache", "--texts", "--batch-tokens",
                                         "--dims", "--rerank", "--truncation", "--top-k", "--prompt",
                                         "--chunk", "--document", "--colbert", "--pool-factor"};
    if (std::find_if(std::begin(kFlags), std::end(kFlags), [&](const char* f) { return a == f; }) == std::end(kFlags)) {
      usage(stderr);
      return die("unknown argument '" + a + "'") + 1;
    }
    if (!(v = value())) return die(a + " needs a value") + 1;
    if (a == "--model") model_path = v;
    if (a == "--weight-cache") cache_path = v;
    if (a == "--text") text = v, have_text = true;
    if (a == "--text-pair") text_pair = v, have_pair = true;
    if (a == "--question") question = v, have_q = true;
    if (a == "--context") context = v, have_c = true;
    if (a == "--ids") ids_arg = v, have_ids = true;
    if (a == "--embeds") embeds_path = v, have_embeds = true;
    if (a == "--texts") texts_path = v, have_texts = true;
    if (a == "--rerank") rerank_query = v, have_rerank = true;
    if (a == "--prompt") prompt = v;
    if (a == "--colbert") {
      colbert = v;
      if (colbert != "plain" && colbert != "query" && colbert != "document")
        return die("--colbert needs plain, query or document") + 1;
    }
    if (a == "--pool-factor" && !parse_int(v, 1, 1 << 20, &pool_factor))
      return die("--pool-factor needs a positive integer") + 1;
    if (a == "--chunk") chunk_arg = v;
    if (a == "--document") document_path = v;
    if (a == "--truncation") {
      truncation = v;
      if (truncation != "none" && truncation != "longest_first" && truncation != "only_second")
        return die("--truncation needs none, longest_first or only_second") + 1;
    }
    if (a == "--batch-tokens" && !parse_int(v, 0, 1 << 20, &batch_tokens))
      return die("--batch-tokens needs a non-negative integer") + 1;
    if (a == "--types") types_arg = v;
    if (a == "--mask") mask_arg = v;
    if (a == "--threads" && !parse_int(v, 1, 256, &threads)) return die("--threads needs an integer in 1..256") + 1;
    if (a == "--max-seq-len" && !parse_int(v, 1, 1 << 16, &max_len)) return die("--max-seq-len needs a positive integer") + 1;
    if (a == "--max-answer-len" && !parse_int(v, 1, 1 << 16, &max_answer))
      return die("--max-answer-len needs a positive integer") + 1;
    if (a == "--stride" && !parse_int(v, 0, 1 << 16, &stride)) return die("--stride needs a non-negative integer") + 1;
    if (a == "--top-k" && !parse_int(v, 1, 1 << 30, &top_k)) return die("--top-k needs a positive integer") + 1;
    if (a == "--dims" && !parse_int(v, 1, 1 << 20, &dims)) return die("--dims needs a positive integer (the embedding's first N values; leave it out for all)") + 1;
    if (a == "--dump") {
      const std::string d = v;
      const size_t eq = d.find('=');
      if (eq == std::string::npos || eq == 0 || eq + 1 == d.size()) return die("--dump needs NAME=PATH") + 1;
      const std::string name = d.substr(0, eq);
      if (std::none_of(std::begin(kOutputs), std::end(kOutputs), [&](const Output& o) { return name == o.name; }))
        return die("--dump: unknown output '" + name +
                   "' (last_hidden_state, pooler_output, logits, sentence_embedding, start_logits, end_logits, "
                   "token_logits, sparse_embedding, token_vectors)") + 1;
      dumps.emplace_back(name, d.substr(eq + 1));
    }
  }
  const bool qa = have_q || have_c;
  const bool chunked = !chunk_arg.empty();
  long chunk_window = 0, chunk_stride = 0;
  bool chunk_mean = false;
  if (chunked) {  // WINDOW:STRIDE[:mean]
    const size_t c1 = chunk_arg.find(':'), c2 = c1 == std::string::npos ? c1 : chunk_arg.find(':', c1 + 1);
    const std::string tail = c2 == std::string::npos ? "" : chunk_arg.substr(c2 + 1);
    if (c1 == std::string::npos || !parse_int(chunk_arg.substr(0, c1).c_str(), 1, 1 << 20, &chunk_window) ||
        !parse_int(chunk_arg.substr(c1 + 1, c2 == std::string::npos ? std::string::npos : c2 - c1 - 1).c_str(), 0,
                   1 << 20, &chunk_stride) ||
        (c2 != std::string::npos && tail != "mean"))
      return die("--chunk needs WINDOW:STRIDE or WINDOW:STRIDE:mean (WINDOW > 0, STRIDE >= 0)") + 1;
    chunk_mean = tail == "mean";
    if (have_pair || have_ids || have_embeds || qa || have_texts || have_rerank || sparse || fill_mask ||
        have_text == !document_path.empty())
      return die("--chunk goes with exactly one of --text or --document (no other input)") + 1;
    have_text = true;  // the document is the text input
  } else if (!document_path.empty()) {
    return die("--document goes with --chunk") + 1;
  }
  if (model_path.empty() || (have_text + have_ids + have_embeds + qa + have_texts) != 1 || (qa && !(have_q && have_c)) ||
      (have_pair && !have_text) || (have_rerank && (!have_texts || !dumps.empty())) || (sparse && !(have_text || have_ids)) ||
      (fill_mask && (sparse || !(have_text || have_ids)))) {
    usage(stderr);
    return die("--model and exactly one of --text [--text-pair], --ids, --embeds, --question with --context, --texts are "
               "required (--rerank goes with --texts, without --dump; --sparse or --fill-mask with --text or --ids)") + 1;
  }
  if (prompt && (have_ids || have_embeds))  // the prompt is text put before the text
    return die("--prompt goes with text inputs (--text, --texts, --document), not with --ids or --embeds: put the "
               "prompt's token ids before yours") + 1;

  char err[1024];
  eb_model* model = nullptr;
  auto t0 = std::chrono::steady_clock::now();
  eb_load_options load_options;
  eb_load_options_init(&load_options);
  load_options.weight_cache_path = cache_path.c_str();
  eb_status s = eb_model_load_file_with_options(model_path.c_str(), &load_options, &model, err, sizeof err);
  if (s != EB_OK) return die(std::string(eb_status_string(s)) + ": " + err);
  if (!cache_path.empty()) {
    eb_weight_cache_state cache_state = EB_WEIGHT_CACHE_NONE;
    const char* cache_message = "";
    if (eb_model_get_weight_cache(model, &cache_state, &cache_message) != EB_OK) return die("weight cache state unavailable");
    static const char* const kStates[] = {"none", "loaded", "created", "unavailable"};
    std::fprintf(stderr, "weight cache: %s%s%s\n", kStates[cache_state], *cache_message ? ": " : "", cache_message);
  }
  eb_model_info info;
  if (eb_model_get_info(model, &info) != EB_OK) return die("model information unavailable");
  int32_t mask_id = -1;
  if (fill_mask && info.task != EB_TASK_MASKED_LM) {
    eb_model_free(model);
    return die("--fill-mask needs a masked-LM model (this model's task is " + std::to_string(info.task) + ")");
  }
  if (fill_mask && eb_model_get_mask_token_id(model, &mask_id) != EB_OK) {
    eb_model_free(model);
    return die("--fill-mask: this model's tokenizer has no mask token ([MASK] or <mask>)");
  }
  eb_session_options opt;
  eb_session_options_init(&opt);
  opt.num_threads = static_cast<int32_t>(threads);
  opt.max_sequence_length = static_cast<int32_t>(max_len);
  if ((have_texts || chunked) && batch_tokens > 0) {  // at least the session's maximum length
    const long max_seq = max_len > 0 ? max_len : info.max_position_embeddings;
    opt.max_batch_tokens = static_cast<int32_t>(std::max(batch_tokens, max_seq));
  }
  eb_session* session = nullptr;
  s = eb_session_create(model, &opt, &session, err, sizeof err);
  if (s != EB_OK) {
    eb_model_free(model);
    return die(std::string(eb_status_string(s)) + ": " + err);
  }
  const double init_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  if (!truncation.empty()) {
    const eb_truncation t = truncation == "longest_first" ? EB_TRUNCATION_LONGEST_FIRST
                            : truncation == "only_second" ? EB_TRUNCATION_ONLY_SECOND
                                                          : EB_TRUNCATION_NONE;
    if (eb_session_set_truncation(session, t) != EB_OK) {
      const std::string why = eb_session_last_error(session);
      eb_session_destroy(session);
      eb_model_free(model);
      return die("--truncation: " + why);
    }
  }

  int rc = 0;
  auto finish = [&](int code) {
    eb_session_destroy(session);
    eb_model_free(model);
    return code;
  };
  if (pool_factor > 1 && colbert != "document")  // PyLate pools documents only
    return finish(die("--pool-factor pools ColBERT documents' token vectors: it needs --colbert document") + 1);
  if (prompt && eb_session_set_prompt(session, prompt) != EB_OK)
    return finish(die(std::string("--prompt: ") + eb_session_last_error(session)));
  if (!colbert.empty() &&
      eb_session_set_colbert_input(session, colbert == "query"      ? EB_COLBERT_INPUT_QUERY
                                            : colbert == "document" ? EB_COLBERT_INPUT_DOCUMENT
                                                                    : EB_COLBERT_INPUT_PLAIN) != EB_OK)
    return finish(die("--colbert: " + std::string(eb_session_last_error(session))));
  if (dims > 0 && eb_session_set_embedding_dims(session, static_cast<int32_t>(dims)) != EB_OK)
    return finish(die(std::string("--dims: ") + eb_session_last_error(session)));
  if (qa) {
    if (info.task != EB_TASK_QUESTION_ANSWERING)
      return finish(die("--question/--context need a question-answering model (this model's task is " +
                        std::to_string(info.task) + ")"));
    std::printf("model: %s (%s, question answering)\n", model_path.c_str(), info.is_int8 ? "int8" : "fp32");
    return finish(answer_question(session, question, context, max_answer, stride));
  }
  if (have_rerank) return finish(rerank_file(session, rerank_query, texts_path));
  if (chunked) {
    std::string doc = text;
    if (!document_path.empty()) {
      std::vector<uint8_t> bytes;
      std::string why;
      if (!read_file(document_path, &bytes, &why)) return finish(die(why));
      doc.assign(bytes.begin(), bytes.end());
    }
    return finish(chunk_text(session, doc, chunk_window, chunk_stride, chunk_mean,
                                 dims > 0 ? dims : static_cast<long>(info.hidden_size), dumps));
  }
  if (have_texts) return finish(run_texts_file(session, texts_path, dumps, static_cast<size_t>(pool_factor)));
  std::vector<int32_t> ids;
  std::vector<float> embeds;
  t0 = std::chrono::steady_clock::now();
  if (have_text) {
    s = have_pair ? eb_session_run_text_pair(session, text.c_str(), text_pair.c_str()) : eb_session_run_text(session, text.c_str());
  } else if (have_ids) {
    if (!parse_int_list(ids_arg, &ids) || ids.empty()) return finish(die("--ids: expected space-separated token ids"));
    std::vector<int32_t> types, mask;
    if (!types_arg.empty() && (!parse_int_list(types_arg, &types) || types.size() != ids.size()))
      return finish(die("--types: expected one token type id per token"));
    if (!mask_arg.empty() && (!parse_int_list(mask_arg, &mask) || mask.size() != ids.size()))
      return finish(die("--mask: expected one 0/1 value per token"));
    s = eb_session_run_ids(session, ids.data(), types.empty() ? nullptr : types.data(), mask.empty() ? nullptr : mask.data(),
                           ids.size());
  } else {
    std::vector<uint8_t> bytes;
    std::string why;
    if (!read_file(embeds_path, &bytes, &why)) return finish(die(why));
    const size_t row = static_cast<size_t>(info.hidden_size) * sizeof(float);
    if (bytes.empty() || bytes.size() % row != 0)
      return finish(die(embeds_path + ": size " + std::to_string(bytes.size()) + " is not a multiple of hidden_size (" +
                        std::to_string(info.hidden_size) + ") float32 values"));
    embeds.resize(bytes.size() / sizeof(float));
    std::memcpy(embeds.data(), bytes.data(), bytes.size());
    s = eb_session_run_embeddings(session, embeds.data(), nullptr, bytes.size() / row);
  }
  const double run_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  if (s != EB_OK) return finish(die(std::string(eb_status_string(s)) + ": " + eb_session_last_error(session)));
  if (sparse) return finish(print_sparse(session, info, top_k));
  if (fill_mask) return finish(print_fill_mask(session, model, mask_id, top_k > 0 ? top_k : 5));

  const int32_t* used_ids = nullptr;
  size_t n = 0;
  if (eb_session_get_input_ids(session, &used_ids, &n) != EB_OK) n = 0;  // --embeds: no token ids
  static const char* const kTasks[] = {"encoder", "sequence classification", "question answering",
                                       "token classification", "sentence embedding", "masked LM (SPLADE)",
                                       "token vectors (ColBERT)", "bge-m3 (dense, sparse, ColBERT)"};
  const bool known_task = info.task >= 0 && info.task < static_cast<int32_t>(sizeof kTasks / sizeof kTasks[0]);
  std::printf("model: %s (%s%s, %s, %d layers, hidden %d, %d heads)\n", model_path.c_str(), info.is_int8 ? "int8" : "fp32",
              info.is_distilbert ? " DistilBERT" : "", known_task ? kTasks[info.task] : "?", info.num_hidden_layers, info.hidden_size,
              info.num_attention_heads);
  if (have_text) report_truncation(session, "");
  if (!have_embeds) {
    std::printf("tokens (%zu):", n);
    for (size_t i = 0; i < n && i < 64; ++i) std::printf(" %d", used_ids[i]);
    std::printf("%s\n", n > 64 ? " ..." : "");
  }
  const float* h = nullptr;
  int64_t shape[2];
  int32_t rank;
  if (eb_session_get_output(session, EB_OUTPUT_LAST_HIDDEN_STATE, &h, shape, &rank) != EB_OK)
    return die(eb_session_last_error(session));
  const size_t seq = static_cast<size_t>(shape[0]);
  double norm = 0;
  for (int64_t i = 0; i < shape[1]; ++i) norm += double(h[i]) * h[i];
  std::printf("last_hidden_state: [%lld, %lld], [CLS] norm %.4f, first values %.4f %.4f %.4f %.4f\n",
              static_cast<long long>(shape[0]), static_cast<long long>(shape[1]), std::sqrt(norm), h[0],
              shape[1] > 1 ? h[1] : 0.f, shape[1] > 2 ? h[2] : 0.f, shape[1] > 3 ? h[3] : 0.f);
  if (info.has_pooler) std::printf("pooler_output: [%d]\n", info.hidden_size);
  const float* out = nullptr;
  switch (info.task) {
    case EB_TASK_SEQUENCE_CLASSIFICATION:
      if (eb_session_get_output(session, EB_OUTPUT_LOGITS, &out, shape, &rank) != EB_OK) return die(eb_session_last_error(session));
      std::printf("logits: [%d]\n", info.num_labels);
      print_classes(model, out, info.num_labels);
      break;
    case EB_TASK_TOKEN_CLASSIFICATION:
      if (eb_session_get_output(session, EB_OUTPUT_TOKEN_LOGITS, &out, shape, &rank) != EB_OK) return die(eb_session_last_error(session));
      std::printf("token_logits: [%zu, %d]\n", seq, info.num_labels);
      print_token_labels(model, session, out, seq, info.num_labels, text, text_pair);
      break;
    case EB_TASK_QUESTION_ANSWERING:
      std::printf("start_logits, end_logits: [%zu] (use --question/--context for the answer)\n", seq);
      break;
    case EB_TASK_SENTENCE_EMBEDDING:
      if (!print_sentence_embedding(session)) return die(eb_session_last_error(session));
      break;
    case EB_TASK_TOKEN_VECTORS:
      if (!print_token_vectors(session)) return die(eb_session_last_error(session));
      break;
    case EB_TASK_MASKED_LM:
      if (!print_sparse_summary(session)) return die(eb_session_last_error(session));
      break;
    case EB_TASK_BGE_M3:  // all three from the one run
      if (!print_sentence_embedding(session) || !print_sparse_summary(session) || !print_token_vectors(session))
        return die(eb_session_last_error(session));
      break;
    default: break;
  }
  std::printf("time: init %.1f ms, run %.2f ms (%ld thread%s)\n", init_ms, run_ms, threads, threads == 1 ? "" : "s");

  for (const auto& dump : dumps) {
    const std::string& name = dump.first;
    const std::string& path = dump.second;  // (clang < 16 cannot capture structured bindings)
    const auto o = std::find_if(std::begin(kOutputs), std::end(kOutputs), [&](const Output& x) { return name == x.name; });
    if (o->which == EB_OUTPUT_TOKEN_VECTORS) {  // as the model scores them (ColBERT documents: no skiplist rows)
      std::string rows, why;
      if (!append_token_vectors(session, 1, vector_dim(session), static_cast<size_t>(pool_factor), &rows)) {
        rc = die("--dump " + name + ": " + eb_session_last_error(session));
        continue;
      }
      if (!write_file_atomically(path, rows.data(), rows.size(), &why)) {
        rc = die(why);
        continue;
      }
      std::printf("dumped %s -> %s (%zu float32)\n", name.c_str(), path.c_str(), rows.size() / sizeof(float));
      continue;
    }
    const float* data = nullptr;
    s = eb_session_get_output(session, o->which, &data, shape, &rank);
    if (s != EB_OK) {
      rc = die("--dump " + name + ": " + eb_session_last_error(session));
      continue;
    }
    const size_t count = static_cast<size_t>(shape[0]) * (rank == 2 ? static_cast<size_t>(shape[1]) : 1);
    std::string why;
    if (!write_file_atomically(path, data, count * sizeof(float), &why)) {
      rc = die(why);
      continue;
    }
    std::printf("dumped %s -> %s (%zu float32)\n", name.c_str(), path.c_str(), count);
  }
  return finish(rc);
}
