// SPDX-License-Identifier: Apache-2.0
// blocks.cpp: the shared blocks of the architecture builders (see blocks.h).
#include "program/arch/blocks.h"

namespace edgebert::blocks {
namespace {

size_t element_bytes(const LinearView& g) { return g.int8 ? 1 : 4; }
std::string layer_prefix(int layer) { return "layer" + std::to_string(layer) + "."; }
// The buffers of applied layer `layer` are named after the stored layer it runs: the applied
// layers sharing one (ALBERT) share its buffers, so their GEMM operators (and packed weights) are
// one per session.
std::string storage_prefix(const ProgramBuilder& b, int layer) {
  const std::vector<int>& map = b.model().layer_map;
  return layer_prefix(static_cast<size_t>(layer) < map.size() ? map[static_cast<size_t>(layer)] : layer);
}
int hidden_size(const ProgramBuilder& b) { return b.model().config.hidden; }

// An int8 copy of the stream for `next` (when it is int8), named `name`.
int quantized_buffer(ProgramBuilder& b, const LinearView* next, const std::string& name) {
  return next && next->int8 ? b.buffer(name, BufferSize::rows(static_cast<size_t>(hidden_size(b)))) : -1;
}

int head_gemm(ProgramBuilder& b, const LinearView& g, int in, const char* name, size_t outputs, bool graph_output,
              bool per_token, PostOp post, Activation activation = Activation::kGelu) {
  // per token: a row per token; else once per sequence, into a row per sequence when the caller
  // reads it (a graph output), or into one reused row
  const BufferSize size = per_token      ? BufferSize::rows(outputs * 4)
                          : graph_output ? BufferSize::per_sequence(outputs * 4)
                                         : BufferSize::fixed(outputs * 4);
  const int y = b.buffer(name, size, graph_output);
  Op& o = b.op(OpType::kGemm, OpKind::kPoolerClassifier, -1, {in}, {y});
  o.linear = &g;
  o.per_sequence = !per_token;
  o.post = post;
  o.activation = activation;
  o.detail = post == PostOp::kActivation ? activation_name(activation) : nullptr;
  o.width = static_cast<int>(outputs);
  return y;
}

// LayerNorm of a head's rows in place (ModernBERT head.norm); one row unless per_token; rows of
// `width` features (0: the hidden size).
void head_layer_norm(ProgramBuilder& b, int buffer, const LayerNormView& norm, bool per_token, int width = 0) {
  Op& o = b.op(OpType::kLayerNorm, OpKind::kPoolerClassifier, -1, {buffer}, {buffer});
  o.norm = &norm;
  o.eps = b.model().config.eps;
  o.width = width > 0 ? width : hidden_size(b);
  o.per_sequence = !per_token;
}

// Rows per block of the streamed vocabulary GEMM: the block buffer is 16 x vocab logits (1.9 MB of
// floats for BERT's 30,522 entries, against 62 MB for 512 whole rows).
constexpr int kSparseBlockRows = 16;

// The masked-LM head on every token (transform GEMM + activation, norm, quantized for an int8
// decoder), then the decoder streamed in row blocks into the SPLADE vector "sparse_embedding".
// The decoder's input rows are a graph output: fill-mask decodes one of them after the run
// (Session::masked_lm_logits) into the same block buffer.
void masked_lm_head(ProgramBuilder& b, int hidden) {
  const Model& m = b.model();
  const LinearView& d = m.mlm_decoder;
  const size_t E = static_cast<size_t>(d.in), V = static_cast<size_t>(d.out);
  const int t = head_gemm(b, m.mlm_transform, hidden, "mlm_transform", E, !d.int8, true, PostOp::kActivation, m.mlm_act);
  head_layer_norm(b, t, m.mlm_norm, true, d.in);
  int in = t;
  if (d.int8) {  // the decoder reads int8 rows at its calibrated input scale
    in = b.buffer("mlm_transform_q", BufferSize::rows(E), true);
    Op& q = b.op(OpType::kQuantize, OpKind::kPoolerClassifier, -1, {t}, {in});
    q.quant_for = &d;
    q.width = d.in;
  }
  const bool float_output = d.int8 && b.float_output_gemms();
  const size_t logit_bytes = d.int8 && !float_output ? 1 : 4;
  const int block = b.buffer("mlm_logits_block", BufferSize::fixed(static_cast<size_t>(kSparseBlockRows) * V * logit_bytes));
  const int sparse = b.buffer("sparse_embedding", BufferSize::per_sequence(V * 4), true);
  Op& o = b.op(OpType::kSparseVocab, OpKind::kPoolerClassifier, -1, {in}, {block, sparse});
  o.linear = &d;
  o.float_output = float_output;
  o.per_sequence = true;
  o.width = d.out;
  o.block_rows = kSparseBlockRows;
}

// The last GEMM of a block, whose result is added to the residual: it writes float when the
// backend can (int8 in, float out), so the add needs no dequantization and the output no
// requantization. row_scales >= 0: the buffer of the input rows' dynamic scales (float output only).
Branch residual_gemm(ProgramBuilder& b, int layer, const std::string& name, OpKind profile, const LinearView& gemm,
                     int input, int row_scales = -1) {
  Branch r;
  r.gemm = &gemm;
  r.float_output = b.float_output_gemms() && gemm.int8;
  r.buffer = b.buffer(name, BufferSize::rows(static_cast<size_t>(hidden_size(b)) * (r.float_output ? 4 : element_bytes(gemm))));
  std::vector<int> inputs{input};
  if (row_scales >= 0) inputs.push_back(row_scales);
  Op& g = b.op(OpType::kGemm, profile, layer, inputs, {r.buffer});
  g.linear = &gemm;
  g.float_output = r.float_output;
  g.row_scaled_input = row_scales >= 0;
  return r;
}

// sentence-transformers' Dense modules on the pooled row (fp32 GEMMs, once per sequence; the last
// writes the sentence embedding), then its Normalize.
void sentence_dense(ProgramBuilder& b, int pooled, int embedding) {
  const Model& m = b.model();
  int in = pooled;
  for (size_t i = 0; i < m.sentence_dense.size(); ++i) {
    const LinearView& g = m.sentence_dense[i];
    const bool last = i + 1 == m.sentence_dense.size();
    const PostOp post = m.sentence_dense_tanh[i] ? PostOp::kTanh : PostOp::kNone;
    if (last) {
      Op& o = b.op(OpType::kGemm, OpKind::kPoolerClassifier, -1, {in}, {embedding});
      o.linear = &g;
      o.per_sequence = true;
      o.post = post;
      o.width = g.out;
    } else {
      in = head_gemm(b, g, in, ("sentence_dense" + std::to_string(i)).c_str(), static_cast<size_t>(g.out), false,
                     false, post);
    }
  }
  if (!m.normalize) return;
  Op& n = b.op(OpType::kL2Normalize, OpKind::kPoolerClassifier, -1, {embedding}, {embedding});
  n.per_sequence = true;
  n.width = m.config.hidden;
}

// The sentence embedding: pooling over the attention mask, the Dense modules, L2 normalization.
void sentence_embedding_head(ProgramBuilder& b, int hidden) {
  const Model& m = b.model();
  const size_t H = static_cast<size_t>(m.config.hidden);
  const bool dense = !m.sentence_dense.empty();
  const int embedding = b.buffer("sentence_embedding", BufferSize::per_sequence(H * 4), true);
  const int pooled = dense ? b.buffer("sentence_pooled", BufferSize::fixed(H * 4)) : embedding;
  Op& o = b.op(OpType::kSentencePooling, OpKind::kPoolerClassifier, -1, {hidden}, {pooled});
  o.per_sequence = true;
  o.detail = pooling_name(m.pooling);  // (+ L2 normalization when m.normalize)
  o.pooling = m.pooling;
  o.normalize = m.normalize && !dense;
  o.width = m.config.hidden;
  if (dense) sentence_dense(b, pooled, embedding);
}

// bge-m3's three outputs from one run: the sentence embedding (CLS, normalized), the sparse
// weights per token id (sparse_linear), and the ColBERT vectors (colbert_linear on every row, rows
// normalized, then each sequence's first row left out).
void bge_m3_head(ProgramBuilder& b, int hidden) {
  const Model& m = b.model();
  sentence_embedding_head(b, hidden);
  const int sparse = b.buffer("sparse_embedding", BufferSize::per_sequence(static_cast<size_t>(m.config.vocab) * 4), true);
  Op& s = b.op(OpType::kSparseTokenWeights, OpKind::kPoolerClassifier, -1, {hidden}, {sparse});
  s.linear = &m.sparse_linear;
  s.per_sequence = true;
  s.width = m.config.vocab;
  s.skip_ids = m.sparse_unused_ids;
  s.skip_count = m.sparse_unused_count;
  const int vectors = head_gemm(b, m.classifier, hidden, "token_vectors", static_cast<size_t>(m.config.num_labels),
                                true, true, PostOp::kL2Normalize);
  Op& d = b.op(OpType::kDropFirstRows, OpKind::kPoolerClassifier, -1, {vectors}, {vectors});
  d.width = m.config.num_labels;
}

}  // namespace

Stream embeddings(ProgramBuilder& b, const LayerNormView& norm, const LinearView* first_gemm) {
  const Model& m = b.model();
  const size_t H = static_cast<size_t>(m.config.hidden);
  const bool projected = m.has_embedding_projection;
  const int E = m.embedding_size > 0 ? m.embedding_size : m.config.hidden;
  Stream s;
  const int rows = projected ? b.buffer("embedding_output", BufferSize::rows(static_cast<size_t>(E) * 4)) : -1;
  s.hidden = b.buffer("hidden", BufferSize::rows(H * 4), true);
  s.quantized = quantized_buffer(b, first_gemm, "layer0.input_q");
  std::vector<int> outs{projected ? rows : s.hidden};
  if (s.quantized >= 0 && !projected) outs.push_back(s.quantized);
  Op& e = b.op(OpType::kEmbeddings, OpKind::kEmbeddings, -1, {}, outs);
  e.width = E;
  e.eps = m.config.eps;
  e.norm = norm.gamma ? &norm : nullptr;  // none: the word rows as they are (Qwen3)
  e.quant_for = s.quantized >= 0 && !projected ? first_gemm : nullptr;
  e.embeddings = {m.word_s8,           m.word_scales,
                  m.word_f32,          m.word_s4,
                  m.word_block_scales, m.word_block,
                  m.position,          m.has_token_types ? m.token_type : nullptr,
                  m.position_ids,      m.padding_idx};
  e.hidden_states = {!projected, -1, 0};
  if (projected) {  // factorized embeddings (ELECTRA, ALBERT): E -> hidden
    Op& p = b.op(OpType::kGemm, OpKind::kEmbeddings, -1, {rows}, {s.hidden});
    p.linear = &m.embedding_projection;  // fp32
    p.hidden_states = {true, -1, 0};
    if (s.quantized >= 0) {  // the first (int8) GEMM's input
      Op& q = b.op(OpType::kQuantize, OpKind::kEmbeddings, -1, {s.hidden}, {s.quantized});
      q.quant_for = first_gemm;
      q.width = m.config.hidden;
    }
  }
  return s;
}

bool float_qkv(const ProgramBuilder& b, const LayerView& stored, const LinearView& qkv) {
  return qkv.int8 && stored.q_norm.gamma && b.float_output_gemms();
}

Branch attention(ProgramBuilder& b, int layer, const LinearView& qkv, const LinearView& output, int input,
                 int row_scales) {
  const Model& m = b.model();
  const ModelConfig& c = m.config;
  const size_t QW = static_cast<size_t>(c.q_width());  // the context row (= hidden unless head_dim is set)
  const std::string p = storage_prefix(b, layer);
  const int window = static_cast<size_t>(layer) < m.local_window.size() ? m.local_window[static_cast<size_t>(layer)] : 0;
  const LayerView& stored = m.layers[static_cast<size_t>(m.layer_map[static_cast<size_t>(layer)])];
  const float* qk_scales = qkv.int8 ? stored.qk_norm_scales : nullptr;
  const size_t qkv_width = static_cast<size_t>(c.qkv_width());
  const int qkv_out = b.buffer(p + "qkv", BufferSize::rows(qkv_width * element_bytes(qkv)));
  // With q/k norms (Qwen3, Gemma 3) and int8 GEMMs that write float, the QKV GEMM writes float,
  // and one op normalizes Q's and K's heads, rotates them and quantizes each head once, at its
  // post-norm scale (kQkvToInt8): an int8 Q or K head before its norm has one calibrated scale, so
  // a token whose head is small keeps few levels and the norm scales that error up; an int8 rotary
  // rounds once more (docs/llm-encoders.md, "Q and K in float until the attention"). The GEMM's
  // input then comes quantized per row when the caller has the rows' scales (pre_norm).
  const bool to_float = float_qkv(b, stored, qkv);
  const int rows_out = to_float ? b.buffer(p + "qkv_f32", BufferSize::rows(qkv_width * 4)) : qkv_out;
  std::vector<int> gemm_in{input};
  if (to_float && row_scales >= 0) gemm_in.push_back(row_scales);
  Op& g = b.op(OpType::kGemm, OpKind::kQkvGemm, layer, gemm_in, {rows_out});
  g.linear = &qkv;
  g.float_output = to_float;
  g.row_scaled_input = gemm_in.size() > 1;
  auto heads_of = [&](Op& o) {
    o.linear = &qkv;
    o.qk_norm_scales = qk_scales;
    o.heads = c.heads;
    o.kv_heads = c.kv_heads();
    o.head_dim = c.head_dim();
  };
  auto norms_of = [&](Op& o) {
    o.q_norm = &stored.q_norm;
    o.k_norm = &stored.k_norm;
    o.eps = c.eps;
  };
  auto rotary_of = [&](Op& o) {
    o.width = c.q_width();
    o.rotary.dims = m.rotary.dims;
    o.rotary.interleaved = m.rotary.interleaved;
    o.rotary.theta = window > 0 ? m.rotary.local_theta : m.rotary.theta;
    o.rotary.ntk_factor = m.rotary.ntk_factor;
    o.rotary.ntk_max_trained = m.rotary.ntk_max_trained;
    o.rotary.table_positions = c.max_position;
  };
  std::vector<int> rotary_outs{qkv_out};
  if (m.rotary.dims > 0 && m.rotary.ntk_factor > 0)  // the table of a dynamic-NTK length
    rotary_outs.push_back(b.buffer(p + "rope_ntk_table", BufferSize::rows(static_cast<size_t>(m.rotary.dims) * 4)));
  if (to_float) {
    Op& o = b.op(OpType::kQkvToInt8, OpKind::kAttention, layer, {rows_out}, rotary_outs);
    heads_of(o);
    norms_of(o);
    if (m.rotary.dims > 0) rotary_of(o);
  } else {
    if (stored.q_norm.gamma) {  // per-head RMSNorm of Q and K (Qwen3, Gemma 3), in place
      Op& n = b.op(OpType::kHeadNorm, OpKind::kAttention, layer, {qkv_out}, {qkv_out});
      heads_of(n);
      norms_of(n);
    }
    if (m.rotary.dims > 0) {  // rotary Q and K in place (int8 QKV: at its per-head scales)
      Op& r = b.op(OpType::kRotary, OpKind::kAttention, layer, {qkv_out}, rotary_outs);
      heads_of(r);
      rotary_of(r);
    }
  }
  // attention core: K and V of every head packed once (int8), then the heads' query rows in row
  // tiles shared among the session's workers, each with its own scratch
  // With the float QKV, the int8 attention writes its context in float too, and each row (all its
  // heads) is quantized with its own scale for the output GEMM, which takes per-row input scales:
  // one calibrated context scale either clips short inputs (a context near one value row) or
  // wastes levels on long ones, whose contexts average many rows (docs/llm-encoders.md, "The
  // attention context per row").
  const bool float_context = to_float && output.int8;
  const int context = b.buffer(p + "context", BufferSize::rows(QW * (float_context ? 4 : element_bytes(qkv))));
  {
    std::vector<int> outs{context};
    if (qkv.int8) {
      BufferSize packed;
      packed.rule = BufferSize::Rule::kPackedKv;
      packed.heads = c.heads;
      packed.head_dim = c.head_dim();
      outs.push_back(b.buffer(p + "packed_kv", packed));
      outs.push_back(b.buffer(p + "scores", {BufferSize::Rule::kWorkerScores, 0, 0, 0, 0}));
      outs.push_back(b.buffer(p + "probs", {BufferSize::Rule::kWorkerProbs, 0, 0, 0, 0}));
    } else {
      outs.push_back(b.buffer(p + "scores", {BufferSize::Rule::kWorkerScores, 0, 0, 0, 0}));
    }
    Op& a = b.op(OpType::kAttention, OpKind::kAttention, layer, {qkv_out}, outs);
    a.linear = &qkv;
    a.quant_for = &output;  // its input quantization is the int8 context's
    a.qk_norm_scales = qk_scales;
    a.width = c.q_width();
    a.heads = c.heads;
    a.kv_heads = c.kv_heads();
    a.head_dim = c.head_dim();
    a.window = window;
    a.causal = m.causal;
    a.float_output = float_context;
  }
  int ao_in = context;
  if (float_context) {
    ao_in = b.buffer(p + "context_converted", BufferSize::rows(QW));
    const int scales = b.buffer(p + "context_row_scales", BufferSize::rows(sizeof(float)));
    Op& cv = b.op(OpType::kConvertContext, OpKind::kAttentionOutputGemm, layer, {context}, {ao_in, scales});
    cv.quant_for = &output;
    cv.width = c.q_width();
    cv.float_output = true;
    return residual_gemm(b, layer, p + "attention_output", OpKind::kAttentionOutputGemm, output, ao_in, scales);
  }
  if (element_bytes(qkv) != element_bytes(output)) {  // attention and its output GEMM disagree on precision
    ao_in = b.buffer(p + "context_converted", BufferSize::rows(QW * element_bytes(output)));
    Op& cv = b.op(OpType::kConvertContext, OpKind::kAttentionOutputGemm, layer, {context}, {ao_in});
    cv.quant_for = &output;
    cv.width = c.q_width();
  }
  return residual_gemm(b, layer, p + "attention_output", OpKind::kAttentionOutputGemm, output, ao_in);
}

Branch ffn(ProgramBuilder& b, int layer, const LinearView& up, const LinearView& down, Activation activation, int input) {
  const ModelConfig& c = b.model().config;
  const size_t I = static_cast<size_t>(c.intermediate);
  const std::string p = storage_prefix(b, layer);
  if (b.model().gated_ffn) {  // GeGLU / SwiGLU: up GEMM [n, 2I], act(first half) * second half
    // (int8: both GEMMs int8, the gated kernel reads the int8 halves and writes the down GEMM's
    // int8 input; fp32: float)
    const int inter = b.buffer(p + "intermediate", BufferSize::rows(2 * I * element_bytes(up)));
    b.op(OpType::kGemm, OpKind::kIntermediateGemm, layer, {input}, {inter}).linear = &up;
    const int gated = b.buffer(p + "ffn_activation", BufferSize::rows(I * element_bytes(down)));
    // Where int8 GEMMs write float (XNNPACK's qd8, which takes every input row's scale at run
    // time), the down GEMM's input is quantized per row with its own scale: the gated product
    // is heavy-tailed, and one calibrated scale either clips a token's large products or wastes
    // the resolution of all the others (docs/llm-encoders.md, "The down-projection's input").
    const bool row_scaled = down.int8 && b.float_output_gemms();
    const int scales = row_scaled ? b.buffer(p + "ffn_row_scales", BufferSize::rows(sizeof(float))) : -1;
    std::vector<int> outputs{gated};
    if (row_scaled) outputs.push_back(scales);
    Op& a = b.op(OpType::kGatedActivation, OpKind::kGelu, layer, {inter}, outputs);
    a.detail = activation_name(activation);
    a.activation = activation;
    a.linear = &up;
    a.quant_for = down.int8 ? &down : nullptr;
    a.width = c.intermediate;
    return residual_gemm(b, layer, p + "ffn_output", OpKind::kOutputGemm, down, gated, scales);
  }
  const int inter = b.buffer(p + "intermediate", BufferSize::rows(I * element_bytes(up)));
  b.op(OpType::kGemm, OpKind::kIntermediateGemm, layer, {input}, {inter}).linear = &up;
  const int act = element_bytes(up) == element_bytes(down)
                      ? inter
                      : b.buffer(p + "ffn_activation", BufferSize::rows(I * element_bytes(down)));
  Op& a = b.op(OpType::kActivation, OpKind::kGelu, layer, {inter}, {act});
  a.detail = activation_name(activation);
  a.activation = activation;
  a.linear = &up;
  a.quant_for = down.int8 ? &down : nullptr;
  a.width = c.intermediate;
  return residual_gemm(b, layer, p + "ffn_output", OpKind::kOutputGemm, down, act);
}

Stream residual_post_norm(ProgramBuilder& b, int layer, int stage, const Stream& x, const Branch& branch,
                          const LayerNormView& norm, const LinearView* next, const std::string& quantized_name) {
  const ModelConfig& c = b.model().config;
  Stream s;
  s.hidden = x.hidden;
  s.quantized = quantized_buffer(b, next, quantized_name);
  std::vector<int> outs{s.hidden};
  if (s.quantized >= 0) outs.push_back(s.quantized);
  Op& a = b.op(OpType::kAddNorm, stage == 0 ? OpKind::kAddNorm1 : OpKind::kAddNorm2, layer, {x.hidden, branch.buffer}, outs);
  a.linear = branch.gemm;
  a.float_output = branch.float_output;
  a.quant_for = s.quantized >= 0 ? next : nullptr;
  a.norm = &norm;
  a.eps = c.eps;
  a.width = c.hidden;
  a.hidden_states = {true, layer, stage};
  return s;
}

int pre_norm(ProgramBuilder& b, int layer, int stage, const Stream& x, const LayerNormView& norm,
             const LinearView& next, const std::string& normed_name, const std::string& quantized_name,
             int* row_scales) {
  const ModelConfig& c = b.model().config;
  if (!norm.gamma) return gemm_input(x, next);  // no norm (ModernBERT layer 0's attention): the stream itself
  const int normed = b.buffer(normed_name, BufferSize::rows(static_cast<size_t>(c.hidden) * 4));
  const int q = quantized_buffer(b, &next, quantized_name);
  std::vector<int> outs{normed};
  if (q >= 0) outs.push_back(q);
  if (q >= 0 && row_scales) {
    *row_scales = b.buffer(quantized_name + "_row_scales", BufferSize::rows(sizeof(float)));
    outs.push_back(*row_scales);
  }
  Op& o = b.op(OpType::kLayerNorm, stage == 0 ? OpKind::kAddNorm1 : OpKind::kAddNorm2, layer, {x.hidden}, outs);
  o.norm = &norm;
  o.rms_norm = b.model().rms_norm;
  o.eps = c.eps;
  o.width = c.hidden;
  o.quant_for = q >= 0 ? &next : nullptr;
  return q >= 0 ? q : normed;
}

void residual_add(ProgramBuilder& b, int layer, int stage, const Stream& x, const Branch& branch, bool assign,
                  const LayerNormView* branch_norm) {
  Op& a = b.op(OpType::kAdd, stage == 0 ? OpKind::kAddNorm1 : OpKind::kAddNorm2, layer, {x.hidden, branch.buffer},
               {x.hidden});
  a.linear = branch.gemm;
  a.float_output = branch.float_output;
  a.assign = assign;
  if (branch_norm && branch_norm->gamma) {  // x += RMSNorm(branch) (Gemma 3's post-norms)
    a.norm = branch_norm;
    a.rms_norm = true;
    a.eps = b.model().config.eps;
  }
  a.width = b.model().config.hidden;
  a.hidden_states = {true, layer, stage};
}

Stream post_norm_encoder(ProgramBuilder& b, const Stream& in) {
  const Model& m = b.model();
  Stream x = in;
  for (int l = 0; l < m.config.layers; ++l) {
    const LayerView& L = m.layers[static_cast<size_t>(m.layer_map[static_cast<size_t>(l)])];
    const std::string p = layer_prefix(l);
    const Branch att = attention(b, l, L.qkv, L.attention_output, gemm_input(x, L.qkv));
    x = residual_post_norm(b, l, 0, x, att, L.attention_norm, &L.intermediate, p + "ffn_input_q");
    const Branch f = ffn(b, l, L.intermediate, L.output, m.config.activation, gemm_input(x, L.intermediate));
    const LinearView* next =
        l + 1 < m.config.layers ? &m.layers[static_cast<size_t>(m.layer_map[static_cast<size_t>(l) + 1])].qkv : nullptr;
    x = residual_post_norm(b, l, 1, x, f, L.output_norm, next, layer_prefix(l + 1) + "input_q");
  }
  return x;
}

Stream pre_norm_layer(ProgramBuilder& b, int layer, const LayerView& L, Activation activation, const Stream& x,
                      bool ffn_output_only) {
  const std::string p = layer_prefix(layer);
  int row_scales = -1;  // the float-QKV path's GEMM takes its input quantized per row
  const int att_in = pre_norm(b, layer, 0, x, L.attention_norm, L.qkv, p + "attention_input", p + "input_q",
                              float_qkv(b, L, L.qkv) ? &row_scales : nullptr);
  residual_add(b, layer, 0, x, attention(b, layer, L.qkv, L.attention_output, att_in, row_scales), false,
               &L.attention_post_norm);
  const int ffn_in = pre_norm(b, layer, 1, x, L.output_norm, L.intermediate, p + "ffn_input", p + "ffn_input_q");
  residual_add(b, layer, 1, x, ffn(b, layer, L.intermediate, L.output, activation, ffn_in), ffn_output_only,
               &L.ffn_post_norm);
  return Stream{x.hidden, -1};
}

Stream final_norm(ProgramBuilder& b, const Stream& x, const LayerNormView& norm) {
  const ModelConfig& c = b.model().config;
  Op& o = b.op(OpType::kLayerNorm, OpKind::kAddNorm2, -1, {x.hidden}, {x.hidden});
  o.norm = &norm;
  o.rms_norm = b.model().rms_norm;
  o.eps = c.eps;
  o.width = c.hidden;
  return Stream{x.hidden, -1};
}

int pooler(ProgramBuilder& b, const LinearView& dense, int hidden) {
  return head_gemm(b, dense, hidden, "pooler_output", static_cast<size_t>(hidden_size(b)), true, false, PostOp::kTanh);
}

int pre_classifier(ProgramBuilder& b, const LinearView& dense, int hidden) {
  return head_gemm(b, dense, hidden, "pre_classifier", static_cast<size_t>(hidden_size(b)), false, false, PostOp::kRelu);
}

void family_head(ProgramBuilder& b, int hidden) {
  const Model& m = b.model();
  const size_t H = static_cast<size_t>(m.config.hidden);
  int sequence_features = hidden, token_features = hidden;  // h[CLS] / every row
  const bool per_token_task = m.task == Task::kTokenClassification || m.task == Task::kQuestionAnswering;
  if (m.has_pooler) sequence_features = pooler(b, m.pooler, hidden);
  if (m.task == Task::kSequenceClassification && m.has_pre_classifier) {
    int in = hidden;
    if (m.head_input == HeadInput::kMean) {  // ModernBERT classifier_pooling "mean"
      in = b.buffer("head_pooled", BufferSize::fixed(H * 4));
      Op& o = b.op(OpType::kSentencePooling, OpKind::kPoolerClassifier, -1, {hidden}, {in});
      o.per_sequence = true;
      o.detail = pooling_name(Pooling::kMean);
      o.pooling = Pooling::kMean;
      o.width = m.config.hidden;
    }
    sequence_features = head_gemm(b, m.pre_classifier, in, "pre_classifier", H, false, false, PostOp::kActivation,
                                  m.pre_classifier_act);
    if (m.has_head_norm) head_layer_norm(b, sequence_features, m.head_norm, false);
  } else if (per_token_task && m.has_pre_classifier && m.head_input == HeadInput::kPerToken) {
    token_features = head_gemm(b, m.pre_classifier, hidden, "head_features", H, false, true, PostOp::kActivation,
                               m.pre_classifier_act);
    if (m.has_head_norm) head_layer_norm(b, token_features, m.head_norm, true);
  }
  task_head(b, token_features, sequence_features);
}

void task_head(ProgramBuilder& b, int hidden, int sequence_features) {
  const Model& m = b.model();
  const size_t labels = static_cast<size_t>(m.config.num_labels);
  switch (m.task) {
    case Task::kEncoder: break;
    case Task::kSequenceClassification:
      head_gemm(b, m.classifier, sequence_features, "logits", labels, true, false, PostOp::kNone);
      break;
    case Task::kQuestionAnswering: {
      const int qa = b.buffer("span_logits", BufferSize::rows(2 * 4));
      const int start = b.buffer("start_logits", BufferSize::rows(4), true);
      const int end = b.buffer("end_logits", BufferSize::rows(4), true);
      Op& o = b.op(OpType::kSpanLogits, OpKind::kPoolerClassifier, -1, {hidden}, {qa, start, end});
      o.linear = &m.classifier;
      o.width = 2;
      break;
    }
    case Task::kTokenClassification:
      head_gemm(b, m.classifier, hidden, "token_logits", labels, true, true, PostOp::kNone);
      break;
    case Task::kMaskedLm: masked_lm_head(b, hidden); break;
    case Task::kTokenVectors:  // ColBERT: the Dense projection of every token, each row normalized
      head_gemm(b, m.classifier, hidden, "token_vectors", labels, true, true, PostOp::kL2Normalize);
      break;
    case Task::kSentenceEmbedding: sentence_embedding_head(b, hidden); break;
    case Task::kBgeM3: bge_m3_head(b, hidden); break;
  }
}

void pre_norm_family(ProgramBuilder& b, const LinearView* embeddings_quant_for) {
  const Model& m = b.model();
  Stream x = embeddings(b, m.embedding_norm, embeddings_quant_for);
  for (int l = 0; l < m.config.layers; ++l)
    x = pre_norm_layer(b, l, m.layers[static_cast<size_t>(m.layer_map[static_cast<size_t>(l)])], m.config.activation, x);
  if (m.has_final_norm) x = final_norm(b, x, m.final_norm);
  family_head(b, x.hidden);
}

void post_norm_family(ProgramBuilder& b) {
  const Model& m = b.model();
  Stream x = embeddings(b, m.embedding_norm, &m.layers[0].qkv);
  x = post_norm_encoder(b, x);
  family_head(b, x.hidden);
}

}  // namespace edgebert::blocks
