// SPDX-License-Identifier: Apache-2.0
// edgebert-inspect: describes an .ebm model (config, every tensor, size breakdown) and, with
// --plan, the memory plan a session would use.
//   edgebert-inspect MODEL.ebm [--plan [--threads N] [--max-seq-len N] [--timeline]]
#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>

#include "edgebert_generated.h"
#include "model.h"
#include "program/memory_planner.h"
#include "session.h"
#include "tool_common.h"

namespace {

namespace fb = edgebert::fb;

struct Totals {
  size_t weights = 0, embeddings = 0, vocab = 0, tokenizer_tables = 0;
};

std::string shape_of(const fb::Tensor* t) {
  std::string s = "[";
  for (size_t i = 0; i < t->shape()->size(); ++i) s += (i ? ", " : "") + std::to_string(t->shape()->Get(i));
  return s + "]";
}

void print_tensor(const fb::Tensor* t, size_t* bucket) {
  if (!t) return;
  const char* dt = t->dtype() == fb::DType::I8    ? "int8"
                   : t->dtype() == fb::DType::I4  ? "int4"
                   : t->dtype() == fb::DType::I32 ? "int32"
                                                  : "float32";
  std::string scales = "-";
  if (t->block_scales() && t->block_scales()->size() > 0) {  // int4: bf16 block scales
    char b[96];
    std::snprintf(b, sizeof b, "%u bf16 scales, block %d", t->block_scales()->size(), t->block_size());
    scales = b;
  } else if (t->scales() && t->scales()->size() > 0) {
    float lo = t->scales()->Get(0), hi = lo;
    for (float v : *t->scales()) lo = std::min(lo, v), hi = std::max(hi, v);
    char b[96];
    std::snprintf(b, sizeof b, "%u per-row scales in [%.3g, %.3g]", t->scales()->size(), lo, hi);
    scales = b;
  }
  // schema_version 7: a payload after the FlatBuffer (the loader has checked its bounds)
  const uint64_t payload = t->external_size() != 0 ? t->external_size() : t->data()->size();
  std::printf("  %-40s %-8s %-14s %12llu  %s%s\n", t->name()->c_str(), dt, shape_of(t).c_str(),
              static_cast<unsigned long long>(payload), scales.c_str(), t->external_size() != 0 ? " (external)" : "");
  *bucket += payload + (t->scales() ? t->scales()->size() * 4 : 0) +
             (t->block_scales() ? t->block_scales()->size() * 2 : 0);
}

const char* range_method(const fb::ActQuant* q) {
  switch (q->range_method()) {
    case fb::RangeMethod::MINMAX: return "min/max";
    case fb::RangeMethod::MSE: return "MSE clipping";
    case fb::RangeMethod::HEADROOM: return "min/max + weight-bound headroom";
  }
  return "?";
}

void print_act(const char* what, const fb::ActQuant* q) {
  if (!q) return;
  if (q->scales() && q->scales()->size()) {
    float lo = q->scales()->Get(0), hi = lo;
    for (float v : *q->scales()) lo = std::min(lo, v), hi = std::max(hi, v);
    std::printf("      %s: per-channel symmetric, %u scales in [%.3g, %.3g] (observed [%.3g, %.3g], %s)\n", what,
                q->scales()->size(), lo, hi, q->observed_min(), q->observed_max(), range_method(q));
  } else {
    const float lo = (-128 - q->zero_point()) * q->scale(), hi = (127 - q->zero_point()) * q->scale();
    std::printf("      %s: scale %.4g zero point %d, range [%.3g, %.3g] (observed [%.3g, %.3g], %s)\n", what, q->scale(),
                q->zero_point(), lo, hi, q->observed_min(), q->observed_max(), range_method(q));
  }
}

// A LayerNorm / RMSNorm's tensors (gamma, beta when it has one); nothing when the file has no such norm.
void print_norm(const fb::LayerNorm* n, size_t* bucket) {
  if (!n) return;
  print_tensor(n->gamma(), bucket);
  print_tensor(n->beta(), bucket);
}

void print_linear(const fb::Linear* l, Totals* t) {
  if (!l) return;
  print_tensor(l->weight(), &t->weights);
  print_tensor(l->bias(), &t->weights);
  std::printf("      %s GEMM %d -> %d\n", l->precision() == fb::Precision::INT8 ? "int8" : "fp32", l->in_features(),
              l->out_features());
  print_act("input", l->input_quant());
  if (const auto* f = l->input_channel_factors()) {
    float lo = f->size() ? f->Get(0) : 1.f, hi = lo;
    for (float v : *f) lo = std::min(lo, v), hi = std::max(hi, v);
    std::printf("      input smoothing (SmoothQuant): alpha %.2f, %u factors in [%.3g, %.3g] folded into the weight columns\n",
                l->smoothing_alpha(), f->size(), lo, hi);
  }
  print_act("output", l->output_quant());
}

int usage() {
  std::fprintf(stderr,
               "usage: edgebert-inspect MODEL.ebm [--plan [--threads N] [--max-seq-len N] [--timeline]]\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::string path;
  bool plan = false, timeline = false;
  long threads = 1, max_len = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--plan") {
      plan = true;
    } else if (a == "--timeline") {
      timeline = true;
    } else if (a == "--threads" && i + 1 < argc) {
      if (!edgebert::tools::parse_int(argv[++i], 1, 256, &threads)) return usage();
    } else if (a == "--max-seq-len" && i + 1 < argc) {
      if (!edgebert::tools::parse_int(argv[++i], 1, 1 << 16, &max_len)) return usage();
    } else if (a == "--help" || a == "-h") {
      return usage() - 2;
    } else if (path.empty() && a[0] != '-') {
      path = a;
    } else {
      return usage();
    }
  }
  if (path.empty()) return usage();
  std::unique_ptr<edgebert::Model> model;
  std::string err;
  if (!edgebert::Model::load_file(path.c_str()).move_to(&model, &err)) {
    std::fprintf(stderr, "edgebert-inspect: error: %s\n", err.c_str());
    return 1;
  }
  const fb::Model* m = fb::GetModel(model->buffer);
  const edgebert::ModelConfig& c = model->config;
  std::printf("%s: edgebert model, schema version %u, produced by %s\n", path.c_str(), m->schema_version(),
              m->producer() ? m->producer()->c_str() : "?");
  std::printf("precision: %s\n", model->int8 ? "int8 (static, per-channel weights)" : "fp32");
  std::printf("config: hidden %d, heads %d (head dim %d), layers %d, intermediate %d, vocab %d, max positions %d, "
              "token types %d, layer_norm_eps %g, labels %d\n",
              c.hidden, c.heads, c.head_dim(), c.layers, c.intermediate, c.vocab, c.max_position, c.type_vocab, c.eps,
              c.num_labels);
  std::printf("model type: %s, FFN activation %s%s, task %s", edgebert::family_name(model->family),
              edgebert::activation_name(c.activation), model->gated_ffn ? " (gated)" : "", edgebert::task_name(model->task));
  if (model->task == edgebert::Task::kSentenceEmbedding)
    std::printf(" (pooling %s%s)", edgebert::pooling_name(model->pooling), model->normalize ? " + L2 normalize" : "");
  std::printf("\n");
  if (model->schema_version >= 4) {  // the family fields
    const char* pos[] = {"absolute", "padding offset", "none"};
    std::printf("family: positions %s, embedding size %d, %s, %zu stored layers", pos[static_cast<int>(model->position_ids)],
                model->embedding_size, model->pre_norm ? "pre-norm" : "post-norm", model->layers.size());
    if (model->rotary.dims > 0)
      std::printf(", rotary %d dims theta %g (local %g)%s", model->rotary.dims, model->rotary.theta,
                  model->rotary.local_theta, model->rotary.ntk_factor > 0 ? " + dynamic NTK" : "");
    int local = 0;
    for (int w : model->local_window) local += w > 0;
    if (local > 0) std::printf(", %d sliding-window layers", local);
    std::printf("\n");
  }
  if (!model->labels.empty()) {
    std::printf("labels:");
    for (size_t i = 0; i < model->labels.size(); ++i) std::printf(" %zu=%s", i, model->labels[i].c_str());
    std::printf("\n");
  }
  // the tokenizer: tokenizer.json's pipeline (WordPiece, BPE or Unigram) or BERT's vocab.txt
  const fb::TokenizerSpec* spec = m->tokenizer();
  const char* kind = !spec ? "WordPiece vocabulary (vocab.txt)"
                     : spec->model()->kind() == fb::TokenModelKind::BPE     ? "BPE tokenizer (tokenizer.json)"
                     : spec->model()->kind() == fb::TokenModelKind::UNIGRAM ? "Unigram tokenizer (tokenizer.json)"
                                                                           : "WordPiece tokenizer (tokenizer.json)";
  const bool text = model->has_vocab || spec;
  std::printf("inputs: %s%s%s%s\n", model->has_embeddings ? "token ids" : "precomputed embeddings only (encoder-only model)",
              text ? ", text (" : "", text ? kind : "", text ? " included)" : "");
  if (m->calibration())
    std::printf("calibration: %s, %d sequences, %d tokens, range method %s\n",
                m->calibration()->source() ? m->calibration()->source()->c_str() : "?",
                m->calibration()->num_sequences(), m->calibration()->num_tokens(),
                m->calibration()->method() ? m->calibration()->method()->c_str() : "?");
  Totals t;
  if (const auto& c = model->colbert; c.present)
    std::printf("colbert inputs (PyLate): query marker %d, document marker %d, query_length %d, document_length %d, "
                "expansion %d (%s), %zu skiplist ids\n",
                c.query_prefix_id, c.document_prefix_id, c.query_length, c.document_length, c.expansion_id,
                c.expansion_id < 0 ? "none" : c.attend_to_expansion ? "attended" : "unattended", c.skiplist_count);
  std::printf("\ntensors:\n  %-40s %-8s %-14s %12s  %s\n", "name", "dtype", "shape", "bytes", "scales");
  // every optional part may be absent (no embedding norm in Qwen3, pre-norm layer 0 of ModernBERT,
  // the LLM blocks' q/k and branch norms, the heads of other tasks)
  if (const auto* e = m->embeddings()) {
    print_tensor(e->word(), &t.embeddings);
    print_tensor(e->position(), &t.embeddings);
    print_tensor(e->token_type(), &t.embeddings);
    print_norm(e->norm(), &t.embeddings);
  }
  for (const auto* L : *m->layers()) {
    print_linear(L->qkv(), &t);
    print_norm(L->q_norm(), &t.weights);
    print_norm(L->k_norm(), &t.weights);
    print_linear(L->attention_output(), &t);
    print_norm(L->attention_post_norm(), &t.weights);
    print_norm(L->attention_norm(), &t.weights);
    print_linear(L->intermediate(), &t);
    print_linear(L->output(), &t);
    print_norm(L->ffn_post_norm(), &t.weights);
    print_norm(L->output_norm(), &t.weights);
  }
  print_norm(m->final_norm(), &t.weights);
  print_linear(m->embedding_projection(), &t);
  print_linear(m->pooler(), &t);
  print_linear(m->pre_classifier(), &t);
  print_norm(m->head_norm(), &t.weights);
  print_linear(m->classifier(), &t);
  print_linear(m->mlm_transform(), &t);
  print_norm(m->mlm_norm(), &t.weights);
  if (m->mlm_decoder() && m->mlm_decoder()->bias()) print_tensor(m->mlm_decoder()->bias(), &t.weights);  // weight: the word table
  print_linear(m->sparse_linear(), &t);
  if (const auto* sp = m->sentence_pooling(); sp && sp->dense())
    for (const auto* d : *sp->dense()) print_linear(d->linear(), &t);
  // a vocabulary's bytes (as strings, or as one text and its ends) and its lookup tables (schema_version 8)
  auto count_vocab = [&t](const flatbuffers::Vector<flatbuffers::Offset<flatbuffers::String>>* strings,
                          const flatbuffers::Vector<uint8_t>* text, const flatbuffers::Vector<uint32_t>* ends,
                          const fb::TokenizerTables* tables) {
    if (strings)
      for (const auto* s : *strings) t.vocab += s->size() + 1;
    if (text && ends) t.vocab += text->size() + 4 * ends->size();
    if (tables) {
      for (const auto* x : *tables->indexes()) t.tokenizer_tables += x->slots()->size() * sizeof(fb::TokenIndexSlot);
      if (tables->bpe_pairs()) t.tokenizer_tables += tables->bpe_pairs()->size() * sizeof(fb::BpePairSlot);
      if (tables->byte_ids()) t.tokenizer_tables += tables->byte_ids()->size() * 4;
    }
  };
  if (const fb::Vocabulary* v = m->vocab()) count_vocab(v->tokens(), v->text(), v->ends(), v->tables());
  if (spec) {  // the pipeline's vocabulary and BPE merges (3 ids each)
    const fb::TokenModelSpec* tm = spec->model();
    count_vocab(tm->vocab(), tm->vocab_text(), tm->vocab_ends(), tm->tables());
    if (tm->merges()) t.vocab += tm->merges()->size() * 12;
  }
  const size_t other =
      model->file_size - std::min(model->file_size, t.weights + t.embeddings + t.vocab + t.tokenizer_tables);
  std::printf("\nfile size: %zu bytes\n  encoder/pooler/classifier weights: %zu\n  embeddings: %zu\n  vocabulary: %zu\n"
              "  tokenizer lookup tables: %zu\n  FlatBuffer metadata, labels, alignment padding: %zu\n",
              model->file_size, t.weights, t.embeddings, t.vocab, t.tokenizer_tables, other);

  if (plan) {
    edgebert::SessionOptions so;
    so.threads = static_cast<int>(threads);
    so.max_seq_len = static_cast<int>(max_len);
    std::unique_ptr<edgebert::Session> s;
    if (!edgebert::Session::create(*model, so).move_to(&s, &err)) {
      std::fprintf(stderr, "edgebert-inspect: error: %s\n", err.c_str());
      return 1;
    }
    std::printf("\nop schedule (%zu ops, %s program):\n%s", s->program().ops().size(), s->program().architecture(),
                s->program().format(s->max_seq_len(), s->threads()).c_str());
    std::printf("\nmemory plan (max sequence %d, %ld thread%s):\n%s", s->max_seq_len(), threads,
                threads == 1 ? "" : "s", edgebert::format_plan(s->buffers(), s->plan(), timeline).c_str());
    std::printf("XNNPACK packed weights: %zu bytes\n", s->packed_weight_bytes());
  }
  return 0;
}
