// SPDX-License-Identifier: Apache-2.0
// test_program.cpp: the immutable Program at the op-list level: the registry picks the family's
// builder; ops are self-contained (weights from the model's own views, constants built once,
// hidden-state marks on the residual ops, the embeddings op found by what it produces); buffer
// sizes follow (max_seq_len, threads) and not the program; sessions share one program; and the
// pre-norm blocks (x = x + f(LN(x)), for ModernBERT / nomic-bert) wire their buffers as a
// pre-norm layer must.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>

#include "model.h"
#include "program/arch/blocks.h"
#include "program/arch/registry.h"
#include "program/program.h"
#include "session.h"
#include "test_support.h"
#include "xnn_gemm.h"

using namespace edgebert;
using namespace edgebert::test;

namespace {

std::unique_ptr<Model> load(const std::string& name, const char* kind) {
  std::unique_ptr<Model> m;
  std::string err;
  REQUIRE(Model::load_file(ebm_path(name, kind).c_str()).move_to(&m, &err));
  return m;
}

std::shared_ptr<const Program> build(const Model& m) {
  Result<std::shared_ptr<const Program>> p = Program::build(m, XnnGemm::int8_float_output_supported());
  INFO(p.status().message());
  REQUIRE(p.is_ok());
  return p.take();
}

bool has(const std::vector<int>& v, int x) { return std::find(v.begin(), v.end(), x) != v.end(); }

std::string name_of(const Program& p, int b) { return p.buffers()[static_cast<size_t>(b)].name; }

}  // namespace

TEST_CASE("the registry picks the family's builder and the op list is self-contained", "[program]") {
  const std::pair<const char*, const char*> models[] = {
      {"base2_h12", "bert"}, {"task_bert_qa", "bert"}, {"task_distil_seqcls_relu", "distilbert"},
      {"task_distil_token", "distilbert"}, {"task_st_distil_mean", "distilbert"}};
  for (const auto& [name, family] : models) {
    for (const char* kind : {"int8", "fp32"}) {
      INFO(name << " " << kind);
      const std::unique_ptr<Model> m = load(name, kind);
      REQUIRE(find_architecture(*m) != nullptr);
      CHECK(std::string(find_architecture(*m)->name) == family);
      const std::shared_ptr<const Program> p = build(*m);
      CHECK(std::string(p->architecture()) == family);
      // the embeddings op is the producer of "hidden"
      const int e = p->embeddings_op();
      REQUIRE(e >= 0);
      CHECK(p->ops()[static_cast<size_t>(e)].type == OpType::kEmbeddings);
      CHECK(has(p->ops()[static_cast<size_t>(e)].outputs, p->find_buffer("hidden")));
      // hidden states announced: the embeddings and two residuals per layer, each labelled once
      int marks = 0;
      for (const Op& op : p->ops()) {
        if (!op.hidden_states.set) continue;
        ++marks;
        CHECK(op.hidden_states.layer == op.layer);
        CHECK(has(op.outputs, p->find_buffer("hidden")));
      }
      CHECK(marks == 1 + 2 * m->config.layers);
      for (const Op& op : p->ops()) {
        INFO(op_type_name(op.type) << " L" << op.layer);
        if (!op.is_gemm()) CHECK(op.width > 0);
        if (op.is_gemm()) REQUIRE(op.linear != nullptr);
        if (op.type == OpType::kAddNorm && op.linear->int8 && !op.float_output)
          CHECK(op.dequant_scales.size() == static_cast<size_t>(op.linear->out));  // built once, here
        if (op.type == OpType::kActivation && op.linear->int8) CHECK(op.lut_f32.size() == 256);
        if (op.quant_for && op.quant_for->input_factors && op.type == OpType::kAddNorm)
          CHECK(op.inv_factors.size() == static_cast<size_t>(op.quant_for->in));
      }
      // DistilBERT: no token types in its embeddings; BERT: its table
      CHECK((p->ops()[static_cast<size_t>(e)].embeddings.token_type == nullptr) == (std::string(family) == "distilbert"));
    }
  }
}

TEST_CASE("buffer sizes are functions of the session's length and threads", "[program]") {
  const std::unique_ptr<Model> m = load("base2_h12", "int8");
  const std::shared_ptr<const Program> p = build(*m);
  const std::vector<BufferRequest> a = p->requests(16, 1), b = p->requests(32, 1), c = p->requests(32, 3);
  REQUIRE(a.size() == p->buffers().size());
  for (size_t i = 0; i < a.size(); ++i) {
    INFO(a[i].name);
    CHECK(a[i].first_op == p->buffers()[i].first_op);
    CHECK(a[i].last_op == p->buffers()[i].last_op);
    const BufferSize& s = p->buffers()[i].size;
    if (s.rule == BufferSize::Rule::kRows) {
      CHECK(b[i].bytes == 2 * a[i].bytes - s.fixed_bytes);  // per row
      CHECK(c[i].bytes == b[i].bytes);                      // no thread dependence
    } else if (s.rule == BufferSize::Rule::kPerSequence) {  // a row per sequence (at most one per token)
      CHECK(b[i].bytes == 2 * a[i].bytes);
      CHECK(c[i].bytes == b[i].bytes);
    } else if (s.rule == BufferSize::Rule::kWorkerScores || s.rule == BufferSize::Rule::kWorkerProbs) {
      CHECK(c[i].bytes == 3 * b[i].bytes);  // one scratch per thread
    } else {
      CHECK(c[i].bytes == static_cast<size_t>(m->config.heads) * b[i].bytes);  // one packed slot per head
    }
  }
  // the program's listing shows the session's attention workers and row tile
  CHECK(p->format(32, 3).find("attention(3 workers, tiles of 32 rows)") != std::string::npos);
  CHECK(p->format(7, 1).find("attention(1 worker, tiles of 8 rows)") != std::string::npos);
}

TEST_CASE("sessions share one program and plan their own arenas", "[program][session]") {
  const std::unique_ptr<Model> m = load("task_bert_qa", "int8");
  const std::shared_ptr<const Program> p = build(*m);
  SessionOptions small, large;
  small.max_seq_len = 16;
  large.max_seq_len = 64;
  large.threads = 2;
  Result<std::unique_ptr<Session>> s1 = Session::create(p, small), s2 = Session::create(p, large);
  REQUIRE(s1.is_ok());
  REQUIRE(s2.is_ok());
  CHECK(&s1.value()->program() == p.get());
  CHECK(&s2.value()->program() == p.get());
  CHECK(s1.value()->arena_bytes() < s2.value()->arena_bytes());
  CHECK(p.use_count() == 3);
  // a session outlives the caller's handle of the program
  Program const* raw = p.get();
  std::shared_ptr<const Program> q = p;
  q.reset();
  CHECK(&s1.value()->program() == raw);
}

TEST_CASE("pre-norm blocks: the stream is normalized into a copy, the branch is added back", "[program][prenorm]") {
  for (const char* kind : {"int8", "fp32"}) {
    INFO(kind);
    const std::unique_ptr<Model> m = load("task_bert_model_relu", kind);
    ProgramBuilder b(*m, XnnGemm::int8_float_output_supported());
    blocks::Stream x = blocks::embeddings(b, m->embedding_norm, nullptr);  // pre-norm: the LayerNorm quantizes
    CHECK(x.quantized < 0);
    for (int l = 0; l < m->config.layers; ++l)
      x = blocks::pre_norm_layer(b, l, m->layers[static_cast<size_t>(l)], m->config.activation, x);
    x = blocks::final_norm(b, x, m->layers.back().output_norm);
    Result<std::shared_ptr<const Program>> built = b.finish();
    INFO(built.status().message());
    REQUIRE(built.is_ok());
    const Program& p = *built.value();
    const int hidden = p.find_buffer("hidden");
    const std::vector<Op>& ops = p.ops();
    // per layer: layernorm, qkv gemm, attention, [convert], output gemm, add, layernorm, up gemm,
    // activation, down gemm, add; then the final layernorm in place
    std::vector<OpType> want_layer = {OpType::kLayerNorm, OpType::kGemm, OpType::kAttention, OpType::kGemm,
                                      OpType::kAdd,       OpType::kLayerNorm, OpType::kGemm, OpType::kActivation,
                                      OpType::kGemm,      OpType::kAdd};
    std::vector<OpType> got;
    for (const Op& op : ops)
      if (op.type != OpType::kConvertContext) got.push_back(op.type);
    std::vector<OpType> want = {OpType::kEmbeddings};
    for (int l = 0; l < m->config.layers; ++l) want.insert(want.end(), want_layer.begin(), want_layer.end());
    want.push_back(OpType::kLayerNorm);
    CHECK(got == want);
    int adds = 0;
    for (size_t i = 0; i < ops.size(); ++i) {
      const Op& op = ops[i];
      INFO("op " << i << " " << op_type_name(op.type));
      if (op.type == OpType::kLayerNorm && i + 1 < ops.size()) {
        // reads the stream, leaves it alone, writes the copy the next GEMM reads
        CHECK(op.inputs == std::vector<int>{hidden});
        CHECK(!has(op.outputs, hidden));
        const Op& next = ops[i + 1];
        REQUIRE(next.type == OpType::kGemm);
        CHECK(has(op.outputs, next.inputs[0]));
        CHECK((op.quant_for == next.linear) == next.linear->int8);
        CHECK(name_of(p, next.inputs[0]) ==
              "layer" + std::to_string(op.layer) + "." + (next.linear->int8 ? (next.profile == OpKind::kQkvGemm ? "input_q" : "ffn_input_q")
                                                                         : (next.profile == OpKind::kQkvGemm ? "attention_input" : "ffn_input")));
        if (next.linear->int8) CHECK(op.inv_factors.size() == (next.linear->input_factors ? static_cast<size_t>(next.linear->in) : 0u));
      }
      if (op.type == OpType::kAdd) {
        ++adds;
        CHECK(op.inputs[0] == hidden);
        CHECK(op.outputs == std::vector<int>{hidden});
        const Op& gemm = ops[i - 1];  // the branch's last GEMM writes what is added
        CHECK(gemm.type == OpType::kGemm);
        CHECK(op.inputs[1] == gemm.outputs[0]);
        CHECK(op.linear == gemm.linear);
        CHECK(op.float_output == gemm.float_output);
        CHECK(op.hidden_states.set);
        CHECK(op.hidden_states.stage == (adds - 1) % 2);
        if (op.linear->int8 && !op.float_output) CHECK(op.dequant_scales.size() == static_cast<size_t>(op.linear->out));
      }
      // nothing but the embeddings, the residual adds and the final LayerNorm writes the stream
      if (has(op.outputs, hidden))
        CHECK((op.type == OpType::kEmbeddings || op.type == OpType::kAdd || i + 1 == ops.size()));
    }
    CHECK(adds == 2 * m->config.layers);
    CHECK(ops.back().inputs == std::vector<int>{hidden});
    CHECK(ops.back().outputs == std::vector<int>{hidden});
    // lifetimes of the copies end at the GEMM that reads them
    for (const Op& op : ops)
      if (op.type == OpType::kLayerNorm && op.outputs[0] != hidden)
        CHECK(p.buffers()[static_cast<size_t>(op.outputs.back())].last_op == p.buffers()[static_cast<size_t>(op.outputs.back())].first_op + 1);
  }
}

namespace {

// float64 reference of a pre-norm encoder (x = x + Attn(LN1(x)); x = x + FFN(LN2(x)); then a final
// LN2 of the last layer) on an fp32 model's weights, written here from the formulas.
std::vector<double> layer_norm(const std::vector<double>& x, size_t H, const LayerNormView& n, double eps) {
  std::vector<double> y(x.size());
  for (size_t r = 0; r < x.size() / H; ++r) {
    double mean = 0, var = 0;
    for (size_t i = 0; i < H; ++i) mean += x[r * H + i];
    mean /= static_cast<double>(H);
    for (size_t i = 0; i < H; ++i) var += (x[r * H + i] - mean) * (x[r * H + i] - mean);
    var /= static_cast<double>(H);
    for (size_t i = 0; i < H; ++i) y[r * H + i] = (x[r * H + i] - mean) / std::sqrt(var + eps) * n.gamma[i] + n.beta[i];
  }
  return y;
}

std::vector<double> linear(const std::vector<double>& x, const LinearView& g) {
  const size_t in = static_cast<size_t>(g.in), out = static_cast<size_t>(g.out), rows = x.size() / in;
  std::vector<double> y(rows * out);
  for (size_t r = 0; r < rows; ++r)
    for (size_t o = 0; o < out; ++o) {
      double s = g.bias[o];
      for (size_t i = 0; i < in; ++i) s += x[r * in + i] * g.weight_f32[o * in + i];
      y[r * out + o] = s;
    }
  return y;
}

std::vector<double> pre_norm_reference(const Model& m, const std::vector<int32_t>& ids) {
  const ModelConfig& c = m.config;
  const size_t n = ids.size(), H = static_cast<size_t>(c.hidden), d = static_cast<size_t>(c.head_dim());
  std::vector<double> x(n * H);
  for (size_t t = 0; t < n; ++t)
    for (size_t i = 0; i < H; ++i) {
      const size_t w = static_cast<size_t>(ids[t]) * H + i;
      x[t * H + i] = (m.word_s8 ? m.word_s8[w] * double(m.word_scales[ids[t]]) : m.word_f32[w]) + m.position[t * H + i] +
                     (m.token_type ? m.token_type[i] : 0.0);
    }
  x = layer_norm(x, H, m.embedding_norm, c.eps);
  for (const LayerView& L : m.layers) {
    const std::vector<double> qkv = linear(layer_norm(x, H, L.attention_norm, c.eps), L.qkv);
    std::vector<double> ctx(n * H);
    for (size_t h = 0; h < static_cast<size_t>(c.heads); ++h)
      for (size_t i = 0; i < n; ++i) {
        std::vector<double> p(n);
        double mx = -1e300, sum = 0;
        for (size_t j = 0; j < n; ++j) {
          double s = 0;
          for (size_t k = 0; k < d; ++k) s += qkv[i * 3 * H + h * d + k] * qkv[j * 3 * H + H + h * d + k];
          p[j] = s / std::sqrt(static_cast<double>(d));
          mx = std::max(mx, p[j]);
        }
        for (size_t j = 0; j < n; ++j) sum += p[j] = std::exp(p[j] - mx);
        for (size_t k = 0; k < d; ++k) {
          double v = 0;
          for (size_t j = 0; j < n; ++j) v += p[j] / sum * qkv[j * 3 * H + 2 * H + h * d + k];
          ctx[i * H + h * d + k] = v;
        }
      }
    const std::vector<double> att = linear(ctx, L.attention_output);
    for (size_t i = 0; i < x.size(); ++i) x[i] += att[i];
    std::vector<double> up = linear(layer_norm(x, H, L.output_norm, c.eps), L.intermediate);
    for (double& v : up)
      v = c.activation == Activation::kRelu ? std::max(v, 0.0) : 0.5 * v * (1 + std::erf(v / std::sqrt(2.0)));
    const std::vector<double> down = linear(up, L.output);
    for (size_t i = 0; i < x.size(); ++i) x[i] += down[i];
  }
  return layer_norm(x, H, m.layers.back().output_norm, c.eps);
}

}  // namespace

TEST_CASE("a pre-norm program runs in a session and matches a float64 pre-norm reference", "[program][prenorm]") {
  for (const char* name : {"task_bert_model_relu", "task_bert_qa"}) {  // ReLU and GELU FFNs
    INFO(name);
    const std::unique_ptr<Model> m = load(name, "fp32");
    ProgramBuilder b(*m, XnnGemm::int8_float_output_supported());
    blocks::Stream x = blocks::embeddings(b, m->embedding_norm, nullptr);
    for (int l = 0; l < m->config.layers; ++l)
      x = blocks::pre_norm_layer(b, l, m->layers[static_cast<size_t>(l)], m->config.activation, x);
    x = blocks::final_norm(b, x, m->layers.back().output_norm);
    Result<std::shared_ptr<const Program>> p = b.finish();
    REQUIRE(p.is_ok());
    for (int threads : {1, 2}) {
      SessionOptions o;
      o.threads = threads;
      o.max_seq_len = 16;
      Result<std::unique_ptr<Session>> s = Session::create(p.value(), o);
      INFO(s.status().message());
      REQUIRE(s.is_ok());
      const std::vector<int32_t> ids = {101, 216, 181, 434, 107, 102, 160, 421, 102};
      REQUIRE(s.value()->run_ids(ids.data(), nullptr, nullptr, ids.size()) == EB_OK);
      const std::vector<double> want = pre_norm_reference(*m, ids);
      const float* got = s.value()->last_hidden_state();
      double err = 0;
      for (size_t i = 0; i < want.size(); ++i) err = std::max(err, std::fabs(got[i] - want[i]));
      CHECK(err < 2e-4);
    }
  }
}
