// SPDX-License-Identifier: Apache-2.0
// edgebert-convert: HuggingFace BERT / DistilBERT checkpoint directory (or sentence-transformers
// folder) -> edgebert .ebm model; config.json's architectures decides the task head.
//   edgebert-convert --input HF_DIR --output MODEL.ebm [--fp32] [--calibration TEXT_FILE]
//                    [--max-seq-len N] [--keep-fp32 PATTERN]... [--scheme auto|minmax|per-tensor]
//                    [--weights int8|int4 [--int4-block N] [--int4-budget B] [--int4-min-cosine C] [--int4-rounding best|gptq|rtn]] [--quiet]
// Exit 0 on success; on bad input (checkpoint, calibration file, output path) one line
// "edgebert-convert: error: ..." and exit 1; on a usage error (unknown option, a malformed or
// missing option value) the same one line and exit 2, as getopt tools do; the output
// file is written atomically, so it either appears complete or not at all.
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>

#include "converter/converter.h"

namespace {

void usage(FILE* f) {
  std::fprintf(f,
               "usage: edgebert-convert --input HF_DIR --output MODEL.ebm [--fp32] [--calibration TEXT_FILE]\n"
               "                        [--max-seq-len N] [--keep-fp32 PATTERN]... [--scheme S]\n"
               "                        [--weights int8|int4 [--int4-block N] [--int4-budget B] [--int4-min-cosine C] [--int4-rounding best|gptq|rtn]] [--quiet]\n"
               "  HF_DIR            HuggingFace BERT / DistilBERT checkpoint or sentence-transformers folder;\n"
               "                    config.json 'architectures' picks the head (docs/converter.md)\n"
               "  --fp32            keep every weight float32 (reference model)\n"
               "  --calibration F   one sentence per line, or 'A<TAB>B' for a text pair (default: built-in\n"
               "                    set 'builtin-v1')\n"
               "  --max-seq-len N   longest sequence the model will run (keeps N position rows)\n"
               "  --keep-fp32 P     keep GEMMs whose name matches P in float32, e.g. 'layer.*.output'\n"
               "                    ('*' stops at '.', '**' matches anything); repeatable\n"
               "  --scheme S        int8 scheme: auto (default: SmoothQuant factors with a per-GEMM migration\n"
               "                    strength + MSE clipping search), minmax (edgebert 0.1), per-tensor (plain\n"
               "                    static per-tensor activation scales; a baseline for comparisons)\n");
}

// A checkpoint file truncated while it is mapped raises SIGBUS at the next access to the pages it
// lost: report it in one line and exit 1. Reading happens before the output is written, so there
// is no partial output to remove.
void on_sigbus(int) {
  static const char kMessage[] =
      "edgebert-convert: error: a checkpoint file was truncated or replaced while being read (SIGBUS)\n";
  ssize_t ignored = ::write(2, kMessage, sizeof kMessage - 1);
  (void)ignored;
  _exit(1);
}

bool parse_int(const char* s, int* out) {
  char* end = nullptr;
  const long v = std::strtol(s, &end, 10);
  if (!*s || *end || v < 1 || v > 1 << 20) return false;
  *out = static_cast<int>(v);
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  // A full disk or a file-size limit (RLIMIT_FSIZE) must end in the write error (EFBIG) and the
  // writer's cleanup, not in SIGXFSZ killing the process with a partial temporary file.
  std::signal(SIGXFSZ, SIG_IGN);
  std::signal(SIGBUS, on_sigbus);
  edgebert::convert::ConvertOptions o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&](const char* flag) -> const char* {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "edgebert-convert: error: %s needs a value\n", flag);
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--input") {
      o.input_dir = value("--input");
    } else if (a == "--output") {
      o.output_path = value("--output");
    } else if (a == "--fp32") {
      o.fp32 = true;
    } else if (a == "--calibration") {
      o.calibration_file = value("--calibration");
    } else if (a == "--max-seq-len") {
      if (!parse_int(value("--max-seq-len"), &o.max_seq_len)) {
        std::fprintf(stderr, "edgebert-convert: error: --max-seq-len needs a positive integer\n");
        return 2;
      }
    } else if (a == "--keep-fp32") {
      o.keep_fp32.push_back(value("--keep-fp32"));
    } else if (a == "--scheme") {
      if (!edgebert::convert::parse_scheme(value("--scheme"), &o.scheme)) {
        std::fprintf(stderr, "edgebert-convert: error: --scheme must be auto, minmax or per-tensor\n");
        return 2;
      }
    } else if (a == "--weights") {
      const std::string w = value("--weights");
      if (w != "int8" && w != "int4") {
        std::fprintf(stderr, "edgebert-convert: error: --weights must be int8 or int4\n");
        return 2;
      }
      o.int4 = w == "int4";
    } else if (a == "--int4-block") {
      const char* v = value("--int4-block");
      char* end = nullptr;
      const long n = std::strtol(v, &end, 10);
      if (!*v || *end || n < 0 || n > 1 << 20) {
        std::fprintf(stderr, "edgebert-convert: error: --int4-block needs 0 or a block size (32..256)\n");
        return 2;
      }
      o.int4_options.block = static_cast<int>(n);
    } else if (a == "--int4-budget") {
      const char* v = value("--int4-budget");
      char* end = nullptr;
      const double b = std::strtod(v, &end);
      if (!*v || *end || !(b >= 0) || b > 1e9) {
        std::fprintf(stderr, "edgebert-convert: error: --int4-budget needs a non-negative number\n");
        return 2;
      }
      o.int4_options.budget = b;
    } else if (a == "--int4-min-cosine") {
      const char* v = value("--int4-min-cosine");
      char* end = nullptr;
      const double c = std::strtod(v, &end);
      if (!*v || *end || !(c >= 0) || c > 1) {
        std::fprintf(stderr, "edgebert-convert: error: --int4-min-cosine needs a number in 0..1\n");
        return 2;
      }
      o.int4_options.min_cosine = c;
    } else if (a == "--int4-rounding") {
      const std::string r = value("--int4-rounding");
      if (r != "best" && r != "gptq" && r != "rtn") {
        std::fprintf(stderr, "edgebert-convert: error: --int4-rounding must be best, gptq or rtn\n");
        return 2;
      }
      o.int4_options.rounding = r == "best" ? edgebert::convert::Int4Rounding::kBest
                                : r == "gptq" ? edgebert::convert::Int4Rounding::kGptq
                                              : edgebert::convert::Int4Rounding::kNearest;
    } else if (a == "--quiet") {
      o.quiet = true;
    } else if (a == "--help" || a == "-h") {
      usage(stdout);
      return 0;
    } else {
      std::fprintf(stderr, "edgebert-convert: error: unknown argument '%s'\n", a.c_str());
      usage(stderr);
      return 2;
    }
  }
  if (o.input_dir.empty() || o.output_path.empty()) {
    std::fprintf(stderr, "edgebert-convert: error: --input and --output are required\n");
    usage(stderr);
    return 2;
  }
  try {
    edgebert::convert::ConvertResult r = edgebert::convert::convert_checkpoint(o);
    if (!o.quiet) {
      if (r.int4) std::fprintf(stderr, "%s", edgebert::convert::format_int4_report(r.int4_policy, o.int4_options).c_str());
      if (!r.report.empty()) {
        std::fprintf(stderr, "per-GEMM relative error of int8 vs float32 (calibration inputs: %s, %zu tokens)\n%s",
                     r.calibration_source.c_str(), r.calibration_tokens,
                     edgebert::convert::format_report(r.report).c_str());
      }
    }
    std::printf("wrote %s (%zu bytes, %s, %s) in %.2f s\n", o.output_path.c_str(), r.buffer.size(),
                o.fp32 ? "fp32" : o.int4 ? "int8 with int4 weights" : "int8", edgebert::convert::task_name(r.task),
                r.seconds);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "edgebert-convert: error: %s\n", e.what());
    return 1;
  }
}
