// edgebert-run: runs one input through a model and prints a short summary.
//   edgebert-run --model MODEL.ebm (--text "..." | --ids "101 7592 102" | --embeds PATH)
//                [--types "0 0 1"] [--mask "1 1 0"] [--threads N] [--max-seq-len N] [--dump NAME=PATH]...
// NAME is last_hidden_state (float32 [seq, hidden]), pooler_output (float32 [hidden]) or
// logits (float32 [labels]); raw little-endian, written atomically. Uses only the public C API.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "edgebert/edgebert.h"
#include "tool_common.h"

namespace {

void usage(FILE* f) {
  std::fprintf(f,
               "usage: edgebert-run --model MODEL.ebm (--text \"...\" | --ids \"101 7592 102\" | --embeds PATH)\n"
               "                    [--types \"0 0 1\"] [--mask \"1 1 0\"] [--threads N] [--max-seq-len N]\n"
               "                    [--dump NAME=PATH]...\n"
               "  --types, --mask: token type ids and attention mask (1 = token, 0 = padding) for --ids\n"
               "  NAME: last_hidden_state | pooler_output | logits (raw little-endian float32)\n"
               "  --embeds PATH: float32 [seq, hidden] precomputed embedding outputs (skips the embedding layer)\n");
}

int die(const std::string& msg) {
  std::fprintf(stderr, "edgebert-run: error: %s\n", msg.c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace edgebert::tools;
  std::string model_path, text, ids_arg, embeds_path, types_arg, mask_arg;
  bool have_text = false, have_ids = false, have_embeds = false;
  long threads = 1, max_len = 0;
  std::vector<std::pair<std::string, std::string>> dumps;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> const char* { return i + 1 < argc ? argv[++i] : nullptr; };
    const char* v = nullptr;
    if (a == "--help" || a == "-h") {
      usage(stdout);
      return 0;
    }
    if (a != "--model" && a != "--text" && a != "--ids" && a != "--embeds" && a != "--threads" &&
        a != "--max-seq-len" && a != "--dump" && a != "--types" && a != "--mask") {
      usage(stderr);
      return die("unknown argument '" + a + "'") + 1;
    }
    if (!(v = value())) return die(a + " needs a value") + 1;
    if (a == "--model") model_path = v;
    if (a == "--text") text = v, have_text = true;
    if (a == "--ids") ids_arg = v, have_ids = true;
    if (a == "--embeds") embeds_path = v, have_embeds = true;
    if (a == "--types") types_arg = v;
    if (a == "--mask") mask_arg = v;
    if (a == "--threads" && !parse_int(v, 1, 256, &threads)) return die("--threads needs an integer in 1..256") + 1;
    if (a == "--max-seq-len" && !parse_int(v, 1, 1 << 16, &max_len)) return die("--max-seq-len needs a positive integer") + 1;
    if (a == "--dump") {
      const std::string d = v;
      const size_t eq = d.find('=');
      if (eq == std::string::npos || eq == 0 || eq + 1 == d.size()) return die("--dump needs NAME=PATH") + 1;
      const std::string name = d.substr(0, eq);
      if (name != "last_hidden_state" && name != "pooler_output" && name != "logits")
        return die("--dump: unknown output '" + name + "' (last_hidden_state, pooler_output, logits)") + 1;
      dumps.emplace_back(name, d.substr(eq + 1));
    }
  }
  if (model_path.empty() || (have_text + have_ids + have_embeds) != 1) {
    usage(stderr);
    return die("--model and exactly one of --text, --ids, --embeds are required") + 1;
  }

  char err[1024];
  eb_model* model = nullptr;
  auto t0 = std::chrono::steady_clock::now();
  eb_status s = eb_model_load_file(model_path.c_str(), &model, err, sizeof err);
  if (s != EB_OK) return die(std::string(eb_status_string(s)) + ": " + err);
  eb_model_info info;
  eb_model_get_info(model, &info);
  eb_session_options opt;
  eb_session_options_init(&opt);
  opt.num_threads = static_cast<int32_t>(threads);
  opt.max_sequence_length = static_cast<int32_t>(max_len);
  eb_session* session = nullptr;
  s = eb_session_create(model, &opt, &session, err, sizeof err);
  if (s != EB_OK) {
    eb_model_free(model);
    return die(std::string(eb_status_string(s)) + ": " + err);
  }
  const double init_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();

  int rc = 0;
  auto finish = [&](int code) {
    eb_session_destroy(session);
    eb_model_free(model);
    return code;
  };
  std::vector<int32_t> ids;
  std::vector<float> embeds;
  t0 = std::chrono::steady_clock::now();
  if (have_text) {
    s = eb_session_run_text(session, text.c_str());
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

  const int32_t* used_ids = nullptr;
  size_t n = 0;
  eb_session_get_input_ids(session, &used_ids, &n);
  std::printf("model: %s (%s, %d layers, hidden %d, %d heads)\n", model_path.c_str(), info.is_int8 ? "int8" : "fp32",
              info.num_hidden_layers, info.hidden_size, info.num_attention_heads);
  if (!have_embeds) {
    std::printf("tokens (%zu):", n);
    for (size_t i = 0; i < n && i < 64; ++i) std::printf(" %d", used_ids[i]);
    std::printf("%s\n", n > 64 ? " ..." : "");
  }
  const float* h = nullptr;
  int64_t shape[2];
  int32_t rank;
  eb_session_get_output(session, EB_OUTPUT_LAST_HIDDEN_STATE, &h, shape, &rank);
  double norm = 0;
  for (int64_t i = 0; i < shape[1]; ++i) norm += double(h[i]) * h[i];
  std::printf("last_hidden_state: [%lld, %lld], [CLS] norm %.4f, first values %.4f %.4f %.4f %.4f\n",
              static_cast<long long>(shape[0]), static_cast<long long>(shape[1]), std::sqrt(norm), h[0],
              shape[1] > 1 ? h[1] : 0.f, shape[1] > 2 ? h[2] : 0.f, shape[1] > 3 ? h[3] : 0.f);
  if (info.has_pooler) std::printf("pooler_output: [%d]\n", info.hidden_size);
  if (info.num_labels > 0) {
    const float* lg = nullptr;
    eb_session_get_output(session, EB_OUTPUT_LOGITS, &lg, shape, &rank);
    int best = 0;
    std::printf("logits: [");
    for (int i = 0; i < info.num_labels; ++i) {
      std::printf("%s%.4f", i ? ", " : "", lg[i]);
      if (lg[i] > lg[best]) best = i;
    }
    std::printf("]  argmax %d\n", best);
  }
  std::printf("time: init %.1f ms, run %.2f ms (%ld thread%s)\n", init_ms, run_ms, threads, threads == 1 ? "" : "s");

  for (const auto& [name, path] : dumps) {
    const eb_output which = name == "last_hidden_state" ? EB_OUTPUT_LAST_HIDDEN_STATE
                            : name == "pooler_output"   ? EB_OUTPUT_POOLER_OUTPUT
                                                        : EB_OUTPUT_LOGITS;
    const float* data = nullptr;
    s = eb_session_get_output(session, which, &data, shape, &rank);
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
