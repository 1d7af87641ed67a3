// schedule.cpp: the plan builder (model -> op list with named buffers) and lifetime derivation.
#include "schedule.h"

#include <algorithm>
#include <cstdio>

namespace edgebert {

const char* op_kind_name(OpKind k) {
  switch (k) {
    case OpKind::kEmbeddings: return "embeddings";
    case OpKind::kQkvGemm: return "qkv_gemm";
    case OpKind::kAttention: return "attention_core";
    case OpKind::kAttentionOutputGemm: return "attention_output_gemm";
    case OpKind::kAddNorm1: return "add_layernorm_1";
    case OpKind::kIntermediateGemm: return "ffn_up_gemm";
    case OpKind::kGelu: return "gelu";
    case OpKind::kOutputGemm: return "ffn_down_gemm";
    case OpKind::kAddNorm2: return "add_layernorm_2";
    case OpKind::kPoolerClassifier: return "task_head";
    case OpKind::kCount: break;
  }
  return "?";
}

const char* op_type_name(OpType t) {
  switch (t) {
    case OpType::kEmbeddings: return "embeddings";
    case OpType::kGemm: return "gemm";
    case OpType::kAttention: return "attention";
    case OpType::kConvertContext: return "convert_context";
    case OpType::kAddNorm: return "add_layernorm";
    case OpType::kActivation: return "activation";
    case OpType::kSpanLogits: return "span_logits";
    case OpType::kSentencePooling: return "sentence_pooling";
    case OpType::kCount: break;
  }
  return "?";
}

int Schedule::find(const std::string& name) const {
  for (size_t i = 0; i < buffers.size(); ++i)
    if (buffers[i].name == name) return static_cast<int>(i);
  return -1;
}

namespace {

// Collects buffers and ops while the builder walks the model.
class Builder {
 public:
  explicit Builder(Schedule* s) : s_(s) {}
  int buffer(const std::string& name, size_t bytes, bool graph_output = false) {
    s_->buffers.push_back({name, bytes, -1, -1});
    s_->graph_output.push_back(graph_output);
    return static_cast<int>(s_->buffers.size()) - 1;
  }
  ScheduledOp& op(OpType type, OpKind profile, int layer, std::vector<int> in, std::vector<int> out) {
    s_->ops.emplace_back();
    ScheduledOp& o = s_->ops.back();
    o.type = type;
    o.profile = profile;
    o.layer = layer;
    o.inputs = std::move(in);
    o.outputs = std::move(out);
    return o;
  }

 private:
  Schedule* s_;
};

// first_op: the first op that touches the buffer, which must write it; last_op: the last op
// that touches it, or the last op of all for graph outputs.
bool derive_lifetimes(Schedule* s, std::string* error) {
  const int last = static_cast<int>(s->ops.size()) - 1;
  for (int i = 0; i <= last; ++i) {
    const ScheduledOp& o = s->ops[i];
    for (int b : o.outputs)
      if (s->buffers[b].first_op < 0) s->buffers[b].first_op = i;
    for (int b : o.inputs) {
      if (s->buffers[b].first_op < 0) {
        if (error) *error = "op " + std::to_string(i) + " reads '" + s->buffers[b].name + "' before any op writes it";
        return false;
      }
    }
    for (int b : o.inputs) s->buffers[b].last_op = i;
    for (int b : o.outputs) s->buffers[b].last_op = std::max(s->buffers[b].last_op, i);
  }
  for (size_t b = 0; b < s->buffers.size(); ++b) {
    BufferRequest& r = s->buffers[b];
    if (r.first_op < 0) {
      if (error) *error = "buffer '" + r.name + "' is never written";
      return false;
    }
    if (s->graph_output[b]) r.last_op = last;
  }
  return true;
}

}  // namespace

bool build_schedule(const Model& m, int max_seq_len, int threads, bool float_residual, Schedule* out,
                    std::string* error) {
  *out = Schedule();
  Builder b(out);
  const ModelConfig& c = m.config;
  const size_t n = static_cast<size_t>(max_seq_len), H = c.hidden, I = c.intermediate, d = c.head_dim();
  auto es = [](const LinearView& g) -> size_t { return g.int8 ? 1 : 4; };

  const int hidden = b.buffer("hidden", n * H * 4, true);
  // The int8 input of the next GEMM, written by the op that produces the float hidden states.
  int next_q = -1;
  const LinearView* next_quant = nullptr;
  {
    const LinearView& q0 = m.layers[0].qkv;
    if (q0.int8) next_q = b.buffer("layer0.input_q", n * H);
    next_quant = q0.int8 ? &q0 : nullptr;
    std::vector<int> outs{hidden};
    if (next_q >= 0) outs.push_back(next_q);
    ScheduledOp& e = b.op(OpType::kEmbeddings, OpKind::kEmbeddings, -1, {}, outs);
    e.quant_for = next_quant;
    e.norm = &m.embedding_norm;
  }
  for (int l = 0; l < c.layers; ++l) {
    const LayerView& L = m.layers[l];
    const std::string p = "layer" + std::to_string(l) + ".";
    // QKV GEMM
    const int qkv = b.buffer(p + "qkv", n * 3 * H * es(L.qkv));
    b.op(OpType::kGemm, OpKind::kQkvGemm, l, {L.qkv.int8 ? next_q : hidden}, {qkv}).linear = &L.qkv;
    // attention core: K and V of every head packed once (int8), then the heads' query rows in
    // tiles of at most `row_tile` rows, shared among `threads` workers, each with its own scratch
    const int context = b.buffer(p + "context", n * H * es(L.qkv));
    {
      const size_t tile = attention_row_tile(max_seq_len);
      const size_t slots = static_cast<size_t>(threads);
      std::vector<int> outs{context};
      if (L.qkv.int8) {
        // one thread packs a head and finishes its rows before the next: one packed slot is enough
        const size_t packed_slots = threads > 1 ? static_cast<size_t>(c.heads) : 1;
        outs.push_back(b.buffer(p + "packed_kv", packed_slots * attention_packed_stride(n, d)));
        outs.push_back(b.buffer(p + "scores", slots * attention_scratch_stride(tile * n * 4)));
        outs.push_back(b.buffer(p + "probs", slots * attention_scratch_stride(tile * n)));
      } else {
        outs.push_back(b.buffer(p + "scores", slots * attention_scratch_stride(tile * n * 4)));
      }
      ScheduledOp& a = b.op(OpType::kAttention, OpKind::kAttention, l, {qkv}, outs);
      a.workers = threads;
      a.row_tile = static_cast<int>(tile);
    }
    int ao_in = context;
    if (es(L.qkv) != es(L.attention_output)) {  // attention and attention_output disagree on precision
      ao_in = b.buffer(p + "context_converted", n * H * es(L.attention_output));
      b.op(OpType::kConvertContext, OpKind::kAttentionOutputGemm, l, {context}, {ao_in}).linear = &L.attention_output;
    }
    // The GEMMs whose result is added to the residual write float when the backend can (int8 in,
    // float out): the add then needs no dequantization and the output no requantization.
    const bool ao_f32 = float_residual && L.attention_output.int8;
    const int attn_out = b.buffer(p + "attention_output", n * H * (ao_f32 ? 4 : es(L.attention_output)));
    {
      ScheduledOp& g = b.op(OpType::kGemm, OpKind::kAttentionOutputGemm, l, {ao_in}, {attn_out});
      g.linear = &L.attention_output;
      g.float_residual = ao_f32;
    }
    // add & norm 1 (quantizes for the FFN up GEMM when it is int8)
    const int ffn_q = L.intermediate.int8 ? b.buffer(p + "ffn_input_q", n * H) : -1;
    {
      std::vector<int> outs{hidden};
      if (ffn_q >= 0) outs.push_back(ffn_q);
      ScheduledOp& a = b.op(OpType::kAddNorm, OpKind::kAddNorm1, l, {hidden, attn_out}, outs);
      a.stage = 0;
      a.linear = &L.attention_output;
      a.float_residual = ao_f32;
      a.quant_for = L.intermediate.int8 ? &L.intermediate : nullptr;
      a.norm = &L.attention_norm;
    }
    // FFN
    const int inter = b.buffer(p + "intermediate", n * I * es(L.intermediate));
    b.op(OpType::kGemm, OpKind::kIntermediateGemm, l, {ffn_q >= 0 ? ffn_q : hidden}, {inter}).linear = &L.intermediate;
    const int act = es(L.intermediate) == es(L.output) ? inter : b.buffer(p + "ffn_activation", n * I * es(L.output));
    b.op(OpType::kActivation, OpKind::kGelu, l, {inter}, {act}).detail = activation_name(c.activation);
    const bool out_f32 = float_residual && L.output.int8;
    const int ffn_out = b.buffer(p + "ffn_output", n * H * (out_f32 ? 4 : es(L.output)));
    {
      ScheduledOp& g = b.op(OpType::kGemm, OpKind::kOutputGemm, l, {act}, {ffn_out});
      g.linear = &L.output;
      g.float_residual = out_f32;
    }
    // add & norm 2 (quantizes for the next layer's QKV GEMM when it is int8)
    const LayerView* next = l + 1 < c.layers ? &m.layers[l + 1] : nullptr;
    next_q = next && next->qkv.int8 ? b.buffer("layer" + std::to_string(l + 1) + ".input_q", n * H) : -1;
    {
      std::vector<int> outs{hidden};
      if (next_q >= 0) outs.push_back(next_q);
      ScheduledOp& a = b.op(OpType::kAddNorm, OpKind::kAddNorm2, l, {hidden, ffn_out}, outs);
      a.stage = 1;
      a.linear = &L.output;
      a.float_residual = out_f32;
      a.quant_for = next_q >= 0 ? &next->qkv : nullptr;
      a.norm = &L.output_norm;
    }
  }
  // task head: entries of the list like the encoder ops
  const auto head_gemm = [&](const LinearView& g, int in, const char* name, size_t outputs, bool graph_output,
                             bool per_token, PostOp post) {
    const int y = b.buffer(name, (per_token ? n : 1) * outputs * 4, graph_output);
    ScheduledOp& o = b.op(OpType::kGemm, OpKind::kPoolerClassifier, -1, {in}, {y});
    o.linear = &g;
    o.per_token = per_token;
    o.post = post;
    return y;
  };
  const size_t labels = static_cast<size_t>(c.num_labels);
  const int pooled = m.has_pooler ? head_gemm(m.pooler, hidden, "pooler_output", H, true, false, PostOp::kTanh) : -1;
  switch (m.task) {
    case Task::kEncoder: break;
    case Task::kSequenceClassification: {
      int in = pooled >= 0 ? pooled : hidden;  // BERT: the pooler output; else h[CLS]
      if (m.has_pre_classifier) in = head_gemm(m.pre_classifier, hidden, "pre_classifier", H, false, false, PostOp::kRelu);
      head_gemm(m.classifier, in, "logits", labels, true, false, PostOp::kNone);
      break;
    }
    case Task::kQuestionAnswering: {
      const int qa = b.buffer("span_logits", n * 2 * 4);
      const int start = b.buffer("start_logits", n * 4, true), end = b.buffer("end_logits", n * 4, true);
      b.op(OpType::kSpanLogits, OpKind::kPoolerClassifier, -1, {hidden}, {qa, start, end}).linear = &m.classifier;
      break;
    }
    case Task::kTokenClassification:
      head_gemm(m.classifier, hidden, "token_logits", labels, true, true, PostOp::kNone);
      break;
    case Task::kSentenceEmbedding:
      b.op(OpType::kSentencePooling, OpKind::kPoolerClassifier, -1, {hidden}, {b.buffer("sentence_embedding", H * 4, true)})
          .detail = pooling_name(m.pooling);  // (+ L2 normalization when m.normalize)
      break;
  }
  return derive_lifetimes(out, error);
}

std::string format_schedule(const Schedule& s) {
  std::string r;
  char line[128];
  auto names = [&](const std::vector<int>& v) {
    std::string t;
    for (size_t i = 0; i < v.size(); ++i) t += (i ? ", " : "") + s.buffers[v[i]].name;
    return t.empty() ? std::string("-") : t;
  };
  for (size_t i = 0; i < s.ops.size(); ++i) {
    const ScheduledOp& o = s.ops[i];
    std::string what = op_type_name(o.type);
    if (o.linear && (o.type == OpType::kGemm || o.type == OpType::kSpanLogits))
      what += std::string("(") + o.linear->name + (o.float_residual ? ", int8 -> float" : "") +
              (o.post == PostOp::kTanh ? ", tanh)" : o.post == PostOp::kRelu ? ", relu)" : ")");
    if (o.detail) what += std::string("(") + o.detail + ")";
    if (o.type == OpType::kAttention)
      what += "(" + std::to_string(o.workers) + (o.workers == 1 ? " worker" : " workers") + ", tiles of " +
              std::to_string(o.row_tile) + " rows)";
    std::snprintf(line, sizeof line, "%4zu  %-6s ", i, o.layer >= 0 ? ("L" + std::to_string(o.layer)).c_str() : "-");
    r += line + what + "  in: " + names(o.inputs) + "  out: " + names(o.outputs) + "\n";
  }
  return r;
}

}  // namespace edgebert
