// SPDX-License-Identifier: Apache-2.0
// program.cpp: buffer sizes, lifetime derivation, the per-op constants (built once per model)
// and the printable op list of a Program.
#include "program/program.h"

#include <algorithm>
#include <cstdio>
#include <new>

#include "kernels/activation.h"
#include "kernels/attention.h"
#include "kernels/gated.h"
#include "kernels/rope.h"
#include "program/arch/registry.h"

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
    case OpType::kLayerNorm: return "layernorm";
    case OpType::kAdd: return "add";
    case OpType::kActivation: return "activation";
    case OpType::kSpanLogits: return "span_logits";
    case OpType::kSentencePooling: return "sentence_pooling";
    case OpType::kRotary: return "rotary";
    case OpType::kGatedActivation: return "gated_activation";
    case OpType::kQuantize: return "quantize";
    case OpType::kHeadNorm: return "head_rmsnorm";
    case OpType::kSparseVocab: return "sparse_vocab";
    case OpType::kL2Normalize: return "l2_normalize";
    case OpType::kSparseTokenWeights: return "sparse_token_weights";
    case OpType::kQkvToInt8: return "qkv_to_int8";
    case OpType::kDropFirstRows: return "drop_first_rows";
    case OpType::kCount: break;
  }
  return "?";
}

size_t attention_packed_stride(size_t n, size_t head_dim) {
  return attention_scratch_stride(kernels::attention_s8_packed_bytes(n, head_dim));
}

size_t BufferSize::bytes(int max_seq_len, int threads, int max_rows) const {
  const size_t n = static_cast<size_t>(max_seq_len > 0 ? max_seq_len : 1);
  const size_t rows = static_cast<size_t>(max_rows > max_seq_len ? max_rows : n);
  const size_t t = static_cast<size_t>(threads > 0 ? threads : 1);
  switch (rule) {
    case Rule::kRows: return row_bytes * rows + fixed_bytes;
    case Rule::kPerSequence: return row_bytes * rows;
    case Rule::kWorkerScores: return t * attention_scratch_stride(attention_row_tile(max_seq_len) * n * 4);
    case Rule::kWorkerProbs: return t * attention_scratch_stride(attention_row_tile(max_seq_len) * n);
    case Rule::kPackedKv: {
      // one thread packs a head and finishes its rows before the next: one slot is enough
      const size_t slots = t > 1 ? static_cast<size_t>(heads) : 1;
      return slots * attention_packed_stride(n, static_cast<size_t>(head_dim));
    }
  }
  return 0;
}

int Program::find_buffer(const std::string& name) const {
  for (size_t i = 0; i < buffers_.size(); ++i)
    if (buffers_[i].name == name) return static_cast<int>(i);
  return -1;
}

int Program::producer(int buffer) const {
  return buffer >= 0 && static_cast<size_t>(buffer) < buffers_.size() ? buffers_[static_cast<size_t>(buffer)].first_op : -1;
}

std::vector<BufferRequest> Program::requests(int max_seq_len, int threads, int max_rows) const {
  std::vector<BufferRequest> r;
  r.reserve(buffers_.size());
  for (const ProgramBuffer& b : buffers_)
    r.push_back({b.name, b.size.bytes(max_seq_len, threads, max_rows), b.first_op, b.last_op});
  return r;
}

std::string Program::format(int max_seq_len, int threads) const {
  std::string r;
  char line[128];
  auto names = [&](const std::vector<int>& v) {
    std::string t;
    for (size_t i = 0; i < v.size(); ++i) t += (i ? ", " : "") + buffers_[static_cast<size_t>(v[i])].name;
    return t.empty() ? std::string("-") : t;
  };
  const int workers = threads > 0 ? threads : 1;
  for (size_t i = 0; i < ops_.size(); ++i) {
    const Op& o = ops_[i];
    std::string what = op_type_name(o.type);
    if (o.linear && o.is_gemm())
      what += std::string("(") + o.linear->name + (o.float_output ? ", int8 -> float" : "") +
              (o.gemm_slabs > 1 ? ", " + std::to_string(o.gemm_slabs) + " column slabs" : std::string()) +
              (o.post == PostOp::kTanh ? ", tanh)" : o.post == PostOp::kRelu ? ", relu)"
               : o.post == PostOp::kL2Normalize ? ", l2 normalize)" : ")");
    if (o.detail) what += std::string("(") + o.detail + ")";
    if (o.type == OpType::kAttention)
      what += "(" + std::to_string(workers) + (workers == 1 ? " worker" : " workers") + ", tiles of " +
              std::to_string(attention_row_tile(max_seq_len)) + " rows)";
    if (o.type == OpType::kAttention && o.window > 0) what += "(sliding window " + std::to_string(o.window) + ")";
    if (o.type == OpType::kAdd && o.assign) what += "(assign: the stream becomes the branch)";
    if ((o.type == OpType::kRotary || o.type == OpType::kQkvToInt8) && o.rotary.dims > 0)
      what += "(" + std::to_string(o.rotary.dims) + " dims, theta " + std::to_string(static_cast<long long>(o.rotary.theta)) +
              (o.rotary.interleaved ? ", interleaved" : "") + (o.rotary.ntk_factor > 0 ? ", dynamic NTK)" : ")");
    std::snprintf(line, sizeof line, "%4zu  %-6s ", i, o.layer >= 0 ? ("L" + std::to_string(o.layer)).c_str() : "-");
    r += line + what + "  in: " + names(o.inputs) + "  out: " + names(o.outputs) + "\n";
  }
  return r;
}

namespace {

// Per-op constants: everything an op needs that is derived from the weights, built once here
// instead of in every session.
void build_constants(Op& op, std::vector<std::shared_ptr<RopeTable>>& rope_tables) {
  if (op.type == OpType::kGatedActivation && op.linear->int8) {  // act of the 256 int8 gate values
    const kernels::GateKind kind = op.activation == Activation::kSilu       ? kernels::GateKind::kSwiglu
                                   : op.activation == Activation::kGeluTanh ? kernels::GateKind::kGegluTanh
                                   : op.activation == Activation::kSigmoid  ? kernels::GateKind::kGlu
                                                                            : kernels::GateKind::kGeglu;
    op.lut_f32.resize(256);
    kernels::build_gate_table_f32(kind, op.linear->output_scale, op.linear->output_zero_point, op.lut_f32.data());
    return;
  }
  if ((op.type == OpType::kRotary || op.type == OpType::kQkvToInt8) && op.rotary.dims > 0) {
    for (const std::shared_ptr<RopeTable>& t : rope_tables)  // one table per base
      if (t->base() == op.rotary.theta && t->rotary_dim() == op.rotary.dims &&
          t->max_positions() == op.rotary.table_positions) {
        op.rope_table = t;
        return;
      }
    // reserved now, filled by the sessions (prepare_positions)
    rope_tables.push_back(std::make_shared<RopeTable>(op.rotary.theta, op.rotary.dims, op.rotary.table_positions));
    op.rope_table = rope_tables.back();
    return;
  }
  if (op.quant_for && op.quant_for->input_factors &&
      (op.type == OpType::kEmbeddings || op.type == OpType::kAddNorm || op.type == OpType::kLayerNorm ||
       op.type == OpType::kQuantize)) {
    op.inv_factors.resize(static_cast<size_t>(op.quant_for->in));
    for (size_t i = 0; i < op.inv_factors.size(); ++i) op.inv_factors[i] = 1.f / op.quant_for->input_factors[i];
  }
  if ((op.type == OpType::kAddNorm || op.type == OpType::kAdd) && op.linear->int8 && !op.float_output) {
    op.dequant_scales.resize(static_cast<size_t>(op.linear->out));  // dequantizes an int8 output
    for (size_t k = 0; k < op.dequant_scales.size(); ++k)
      op.dequant_scales[k] = op.linear->output_channel_scale(static_cast<int>(k));
  }
  if (op.type == OpType::kActivation && op.linear->int8) {
    const LinearView& in = *op.linear;  // the GEMM whose int8 output the activation reads
    const auto kind = static_cast<kernels::ActivationKind>(op.activation);
    if (op.quant_for) {
      op.lut_s8.resize(256);
      kernels::build_activation_lut_s8(kind, in.output_scale, in.output_zero_point, op.quant_for->input_scale,
                                       op.quant_for->input_zero_point, op.lut_s8.data());
    }
    op.lut_f32.resize(256);  // the 256 values in one call (one per value took 0.14 ms of BERT-base's load)
    for (int q = -128; q < 128; ++q) op.lut_f32[static_cast<size_t>(q + 128)] = (q - in.output_zero_point) * in.output_scale;
    kernels::activation_f32(kind, op.lut_f32.data(), op.lut_f32.size());
  }
}

}  // namespace

// first_op: the first op that touches the buffer, which must write it; last_op: the last op
// that touches it, or the last op of all for graph outputs.
Status Program::finish() {
  const int last = static_cast<int>(ops_.size()) - 1;
  for (int i = 0; i <= last; ++i) {
    const Op& o = ops_[static_cast<size_t>(i)];
    for (int b : o.outputs)
      if (buffers_[static_cast<size_t>(b)].first_op < 0) buffers_[static_cast<size_t>(b)].first_op = i;
    for (int b : o.inputs)
      if (buffers_[static_cast<size_t>(b)].first_op < 0)
        return Status(EB_ERROR_BACKEND, "op " + std::to_string(i) + " reads '" + buffers_[static_cast<size_t>(b)].name +
                                            "' before any op writes it");
    for (int b : o.inputs) buffers_[static_cast<size_t>(b)].last_op = i;
    for (int b : o.outputs)
      buffers_[static_cast<size_t>(b)].last_op = std::max(buffers_[static_cast<size_t>(b)].last_op, i);
  }
  for (ProgramBuffer& b : buffers_) {
    if (b.first_op < 0) return Status(EB_ERROR_BACKEND, "buffer '" + b.name + "' is never written");
    if (b.graph_output) b.last_op = last;
  }
  // A stretch of per-sequence ops runs once per sequence (exec/executor.h): every buffer it
  // touches lives over the whole stretch, so that no sequence's pass overwrites what an earlier
  // pass left (a per-sequence output row) in memory the planner gave to a buffer dead by then.
  for (int i = 0; i <= last;) {
    if (!ops_[static_cast<size_t>(i)].per_sequence) {
      ++i;
      continue;
    }
    int end = i;
    while (end < last && ops_[static_cast<size_t>(end + 1)].per_sequence) ++end;
    for (int k = i; k <= end; ++k) {
      const Op& o = ops_[static_cast<size_t>(k)];
      for (const std::vector<int>* list : {&o.inputs, &o.outputs})
        for (int x : *list) {
          ProgramBuffer& b = buffers_[static_cast<size_t>(x)];
          b.first_op = std::min(b.first_op, i);
          b.last_op = std::max(b.last_op, end);
        }
    }
    i = end + 1;
  }
  // The op writing the first hidden states: the embeddings, or the projection GEMM after them
  // (ELECTRA, ALBERT); run_embeddings replaces everything up to it.
  embeddings_op_ = producer(find_buffer("hidden"));
  const bool embeddings = embeddings_op_ >= 0 && (ops_[static_cast<size_t>(embeddings_op_)].type == OpType::kEmbeddings ||
                                                  (ops_[static_cast<size_t>(embeddings_op_)].type == OpType::kGemm &&
                                                   ops_[0].type == OpType::kEmbeddings));
  if (!embeddings) return Status(EB_ERROR_BACKEND, "the program has no embeddings op producing 'hidden'");
  for (Op& op : ops_) build_constants(op, rope_tables_);
  return Status::ok();
}

ProgramBuilder::ProgramBuilder(const Model& model, bool float_output_gemms)
    : program_(new Program()), float_output_gemms_(float_output_gemms) {
  program_->model_ = &model;
}

int ProgramBuilder::buffer(const std::string& name, BufferSize size, bool graph_output) {
  ProgramBuffer b;
  b.name = name;
  b.size = size;
  b.graph_output = graph_output;
  program_->buffers_.push_back(std::move(b));
  return static_cast<int>(program_->buffers_.size()) - 1;
}

Op& ProgramBuilder::op(OpType type, OpKind profile, int layer, std::vector<int> inputs, std::vector<int> outputs) {
  program_->ops_.emplace_back();
  Op& o = program_->ops_.back();
  o.type = type;
  o.profile = profile;
  o.layer = layer;
  o.inputs = std::move(inputs);
  o.outputs = std::move(outputs);
  return o;
}

Result<std::shared_ptr<const Program>> ProgramBuilder::finish(const std::string& weight_cache_path,
                                                              const WeightCacheOptions& cache_options) {
  EB_RETURN_IF_ERROR(program_->finish());
  // One store entry per distinct weights (ALBERT's shared layers reuse theirs): its index is the
  // op's gemm_key, which every session passes when it creates the op's operator.
  // A GEMM cut into column slabs (XnnGemm::column_slab_width) has one entry per slab, with
  // consecutive keys; its slab views live in the program.
  std::vector<GemmToPack> gemms;
  struct Distinct {
    GemmToPack gemm;
    int first_key, slabs;
    const LinearView* views;
  };
  std::vector<Distinct> distinct;
  for (Op& op : program_->ops_) {
    if (!op.is_gemm()) continue;
    size_t k = 0;
    while (k < distinct.size() && !(distinct[k].gemm.linear == op.linear && distinct[k].gemm.float_output == op.float_output)) ++k;
    if (k == distinct.size()) {
      const LinearView& l = *op.linear;
      const int width = static_cast<int>(XnnGemm::column_slab_width(l));
      const int count = width > 0 && width < l.out ? (l.out + width - 1) / width : 1;
      const LinearView* views = nullptr;
      const int first = static_cast<int>(gemms.size());
      if (count > 1) {
        std::unique_ptr<LinearView[]> v(new LinearView[static_cast<size_t>(count)]);
        for (int i = 0; i < count; ++i) {
          const int col0 = i * width;
          v[i] = linear_columns(l, col0, std::min(width, l.out - col0));
          gemms.push_back({&v[i], op.float_output});
        }
        views = v.get();
        program_->slab_views_.push_back(std::move(v));
      } else {
        gemms.push_back({op.linear, op.float_output});
      }
      distinct.push_back({{op.linear, op.float_output}, first, count, views});
    }
    op.gemm_key = distinct[k].first_key;
    op.gemm_slabs = distinct[k].slabs;
    op.slabs = distinct[k].views;
  }
  // One XNNPACK operator per (weights, op type, once-per-sequence or not): the rule every session
  // follows when it makes its operators.
  std::vector<Op>& ops = program_->ops_;
  for (size_t i = 0; i < ops.size(); ++i) {
    if (!ops[i].is_gemm()) continue;
    ops[i].operator_of = static_cast<int>(i);
    for (size_t j = 0; j < i; ++j)
      if (ops[j].is_gemm() && ops[j].operator_of == static_cast<int>(j) && ops[j].gemm_key == ops[i].gemm_key &&
          ops[j].type == ops[i].type && ops[j].per_sequence == ops[i].per_sequence) {
        ops[i].operator_of = static_cast<int>(j);
        break;
      }
  }
  Result<ModelWeights> w = prepare_model_weights(*program_->model_, gemms, weight_cache_path, cache_options);
  if (!w) return w.status();
  program_->weights_ = w.take();
  return std::shared_ptr<const Program>(std::move(program_));
}

namespace {

Result<std::shared_ptr<const Program>> build_program(const Model& model, std::shared_ptr<const Model> owner,
                                                     bool float_output_gemms, const std::string& weight_cache_path,
                                                     const WeightCacheOptions& cache_options) {
  try {
    const ArchitectureBuilder* arch = find_architecture(model);
    if (!arch) return Status(EB_ERROR_UNSUPPORTED, "no architecture builder for this model");
    ProgramBuilder b(model, float_output_gemms);
    b.set_architecture(arch->name);
    b.keep_model_alive(std::move(owner));
    EB_RETURN_IF_ERROR(arch->build(b).with_context(std::string(arch->name) + " builder"));
    return b.finish(weight_cache_path, cache_options);
  } catch (const std::bad_alloc&) {
    return Status(EB_ERROR_OUT_OF_MEMORY, "out of memory while building the program");
  }
}

}  // namespace

Status Program::create_gemm(const Op& op, size_t max_rows, XnnGemm* gemm) const {
  if (!op.is_gemm() || op.gemm_key < 0) return Status(EB_ERROR_BACKEND, "create_gemm: not a GEMM op of the program");
  if (op.gemm_slabs > 1 && op.slabs)
    return gemm->create_slabs(op.slabs, static_cast<size_t>(op.gemm_slabs), op.float_output, max_rows, weights_.store.get(),
                              static_cast<size_t>(op.gemm_key));
  return gemm->create(*op.linear, op.float_output, max_rows, weights_.store.get(), static_cast<size_t>(op.gemm_key));
}

void Program::prepare_positions(int max_seq_len) const {
  for (const std::shared_ptr<RopeTable>& t : rope_tables_) t->fill_to(max_seq_len);
}

size_t Program::session_packed_bytes_estimate() const {
  if (weights_.store && weights_.store->packed_bytes() > 0) return 0;  // packed once, shared
  size_t bytes = 0;
  for (size_t i = 0; i < ops_.size(); ++i) {
    const Op& op = ops_[i];
    if (!op.is_gemm() || op.operator_of != static_cast<int>(i)) continue;
    const size_t w = static_cast<size_t>(op.linear->in) * static_cast<size_t>(op.linear->out);
    const size_t o = static_cast<size_t>(op.linear->out);
    // int8: weights + int32 (or float) bias + float scale per channel; f32: weights + bias
    bytes += op.linear->int8 ? w + o * 8 : (w + o) * 4;
  }
  return bytes;
}

size_t Program::int4_gemms(size_t* requantized) const {
  size_t total = 0, int8 = 0;
  for (size_t i = 0; i < ops_.size(); ++i) {
    const Op& op = ops_[i];
    if (!op.is_gemm() || op.operator_of != static_cast<int>(i) || !op.linear->int4) continue;
    ++total;
    if (!XnnGemm::runs_as_int4(*op.linear, op.float_output)) ++int8;
  }
  if (requantized) *requantized = int8;
  return total;
}

Result<std::shared_ptr<const Program>> Program::build(const Model& model, bool float_output_gemms,
                                                      const std::string& weight_cache_path,
                                                      const WeightCacheOptions& cache_options) {
  return build_program(model, nullptr, float_output_gemms, weight_cache_path, cache_options);
}

Result<std::shared_ptr<const Program>> Program::build(std::shared_ptr<const Model> model, bool float_output_gemms,
                                                      const std::string& weight_cache_path,
                                                      const WeightCacheOptions& cache_options) {
  if (!model) return Status(EB_ERROR_INVALID_ARGUMENT, "no model");
  const Model& m = *model;
  return build_program(m, std::move(model), float_output_gemms, weight_cache_path, cache_options);
}

}  // namespace edgebert
