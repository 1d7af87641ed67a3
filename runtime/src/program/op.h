// SPDX-License-Identifier: Apache-2.0
// op.h: one self-contained op of a Program: what it computes (type), where its time is counted
// (profiling kind), every parameter and weight view it reads, the constants built once for it
// (per-channel dequantization scales, inverse SmoothQuant factors, activation tables) and its
// named input/output buffers. An op never refers back to the model's layer list, to a session or
// to its own position in the op list; `layer` is a label for tools and the op profile only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "model.h"
#include "program/rope_table.h"

namespace edgebert {

// Profiling categories (edgebert-bench --op-profile): several op types may share one.
enum class OpKind : int {
  kEmbeddings = 0,
  kQkvGemm,
  kAttention,
  kAttentionOutputGemm,
  kAddNorm1,
  kIntermediateGemm,
  kGelu,
  kOutputGemm,
  kAddNorm2,
  kPoolerClassifier,  // every task head (pooler, classifiers, QA, pooling)
  kCount
};
const char* op_kind_name(OpKind k);

// What an op does; the executor has one function per type.
enum class OpType : int {
  kEmbeddings,      // ids -> outputs[0] float rows (LayerNorm'd) [+ outputs[1]: int8 for `quant_for`]
  kGemm,            // XNNPACK GEMM: inputs[0] -> outputs[0] (`linear`), then `post`
  kAttention,       // attention core of one layer: every head over the QKV rows
  kConvertContext,  // attention context into the precision the output GEMM (`quant_for`) reads
  kAddNorm,         // post-norm: outputs[0] += dequant(inputs[1]); LayerNorm in place [+ quantize]
  kLayerNorm,       // pre-norm: outputs[0] = LayerNorm(inputs[0]) (RMSNorm with `rms_norm`; the stream is unchanged);
                    //   outputs[1] its int8 copy; outputs[2], when present, each row's scale (quantized per row)
  kAdd,             // pre-norm residual: outputs[0] += dequant(inputs[1]) (with `norm`: += RMSNorm of it)
  kActivation,      // FFN activation (GELU / ReLU / tanh-GELU), via a 256-entry table on int8
  kSpanLogits,      // QA: GEMM [n, 2] into outputs[0], split into start (outputs[1]), end (outputs[2])
  kSentencePooling, // pooling over the attention mask [+ L2 normalization]
  kRotary,          // rotary position embedding of Q and K in the QKV rows, in place
                    //   [+ outputs[1]: the cos/sin table of a dynamic-NTK length]
  kGatedActivation, // gated FFN: outputs[0] [n, I] = act(in[:, :I]) * in[:, I:] (GeGLU, SwiGLU)
  kQuantize,        // outputs[0] = int8 of the float rows inputs[0] for `quant_for` (after ELECTRA's
                    //   projection GEMM)
  kHeadNorm,        // per-head RMSNorm of Q (`q_norm`) and K (`k_norm`) in the QKV rows, in place
                    //   (int8: from the QKV GEMM's scales to `qk_norm_scales`)
  kSparseVocab,     // per sequence: the vocabulary GEMM (`linear`, a masked-LM decoder) over the
                    //   sequence's rows in blocks of `block_rows` into outputs[0] (one block), each
                    //   block's unmasked rows reduced into outputs[1] [width = vocab]:
                    //   max_t log(1 + relu(logit[t])) (SPLADE)
  kL2Normalize,     // per sequence: the `width` floats of outputs[0] (= inputs[0]) L2-normalized in
                    //   place (sentence-transformers' Normalize after Dense modules)
  kSparseTokenWeights,  // per sequence: outputs[0] [width = vocab] = per token id the max over the
                        //   sequence's unmasked rows of inputs[0] of relu(`linear` . h + b) (a [1, hidden]
                        //   fp32 head), 0 for `skip_ids` and ids not in the sequence (bge-m3's sparse output)
  kQkvToInt8,       // the float rows (inputs[0]) of an int8 QKV GEMM -> int8 (outputs[0]): Q's and K's
                    //   head norms (`q_norm`, `k_norm`; none when null), the rotary (`rotary`, when
                    //   its dims > 0), each head quantized at Op::qkv_scale [+ outputs[1]: as kRotary]
  kDropFirstRows,   // per run: the rows (`width` floats) of outputs[0] (= inputs[0]) rewritten in place as
                    //   each sequence's rows after its first, sequence after sequence; rows whose key
                    //   mask is 0 become zeros (bge-m3's ColBERT vectors leave out [CLS])
  kCount
};
const char* op_type_name(OpType t);

// Elementwise function applied to a head GEMM's output (kActivation: Op::activation).
// kL2Normalize: each row divided by max(||row||_2, 1e-12) (torch.nn.functional.normalize; ColBERT).
enum class PostOp : int { kNone, kTanh, kRelu, kActivation, kL2Normalize };

// The embedding tables an embeddings op reads (views into the model's mapped data).
struct EmbeddingTables {
  const int8_t* word_s8 = nullptr;      // int8 rows with one scale each, or
  const float* word_scales = nullptr;
  const float* word_f32 = nullptr;      // float rows, or
  const uint8_t* word_s4 = nullptr;     // int4 rows (backend/int4_weights.h) with bf16 block scales
  const uint16_t* word_block_scales = nullptr;
  int word_block = 0;
  const float* position = nullptr;      // [max_position, hidden]
  const float* token_type = nullptr;    // [type_vocab, hidden]; null: no token types (DistilBERT)
  PositionIds position_ids = PositionIds::kAbsolute;  // kNone: `position` is null
  int padding_idx = 0;                  // kPaddingOffset
};

// Rotary embedding of an attention layer (kRotary).
struct RotaryOp {
  int dims = 0;
  bool interleaved = false;
  double theta = 10000.0;       // this layer's base (ModernBERT: global or local)
  double ntk_factor = 0.0;      // > 0: dynamic NTK beyond ntk_max_trained positions
  int ntk_max_trained = 0;
  int table_positions = 0;      // rows of `table` (the model's longest sequence)
};

// An op "announces" the float hidden states [n, width] in outputs[0] after it ran, for the
// session's debug hook (layer -1: the embeddings; stage 0: after attention, 1: after the FFN).
struct HiddenStateMark {
  bool set = false;
  int layer = -1;
  int stage = 0;
};

struct Op {
  OpType type = OpType::kGemm;
  OpKind profile = OpKind::kEmbeddings;
  int layer = -1;  // label only: encoder layer, -1 for embeddings and heads
  HiddenStateMark hidden_states;

  // Geometry.
  int width = 0;      // float row width the op works on (hidden size; intermediate for kActivation)
  int heads = 0;      // kAttention
  int head_dim = 0;   // kAttention
  float eps = 1e-12f; // LayerNorm ops
  int block_rows = 0; // kSparseVocab: rows per GEMM block
  int window = 0;     // kAttention: 0 global; w > 0: keys with |i - j| <= w / 2 only
  bool causal = false; // kAttention: keys j <= i only (with `window`: and within it)
  int kv_heads = 0;   // kAttention / kRotary / kHeadNorm: K and V heads (0: heads); the QKV row is
                      //   Q of `heads` heads, then K and V of kv_heads heads, head_dim each
  bool rms_norm = false;  // kLayerNorm / kEmbeddings: the norm is an RMSNorm (no mean, no beta)
  RotaryOp rotary;    // kRotary, kQkvToInt8

  // Weights and quantization (views into the model; the Model outlives the Program).
  const LinearView* linear = nullptr;     // kGemm / kSpanLogits: the weights; kAddNorm / kAdd: the
                                          // GEMM whose output is added; kAttention: the QKV GEMM
                                          // (its output scales); kActivation: the GEMM it follows
  const LinearView* quant_for = nullptr;  // int8 GEMM whose input this op's output feeds (kEmbeddings,
                                          // kAddNorm, kLayerNorm: quantized into outputs[1];
                                          // kAttention, kConvertContext, kActivation: the precision
                                          // and quantization of outputs[0]); null: stays float
  const LayerNormView* norm = nullptr;    // kEmbeddings / kAddNorm / kLayerNorm (null on kEmbeddings: none);
                                          // kAdd: the RMSNorm of the added branch (null: none)
  const LayerNormView* q_norm = nullptr;  // kHeadNorm: gamma [head_dim] of Q's heads
  const LayerNormView* k_norm = nullptr;  // kHeadNorm: gamma [head_dim] of K's heads
  // kHeadNorm / kRotary / kAttention of an int8 layer with q/k norms: the scales of Q and K after
  // the norms (per channel over the Q then K sections); null: the QKV GEMM's output scales.
  const float* qk_norm_scales = nullptr;
  EmbeddingTables embeddings;             // kEmbeddings
  bool per_sequence = false;              // runs once per sequence of the run (the executor hands it that
                                          // sequence): one row (h[CLS], a head's one-row buffers) for
                                          // GEMMs and kLayerNorm, the sequence's rows for kSentencePooling
  bool float_output = false;              // kGemm: int8 GEMM writing float; kAddNorm / kAdd: the
                                          // added input is that float output; kAttention (int8):
                                          // the context rows are written as floats; kConvertContext:
                                          // they are quantized per row (outputs[1]: each row's scale)
  bool row_scaled_input = false;          // kGemm with float_output: inputs[1] holds each input row's
                                          // scale (dynamic per-row quantization, xnn_gemm.h), written
                                          // by the op that quantizes the input (kGatedActivation,
                                          // kLayerNorm)
  bool assign = false;                    // kAdd: the stream becomes the branch (its old value is
                                          // dropped: nomic-bert prenorm's last layer)
  PostOp post = PostOp::kNone;            // kGemm
  Activation activation = Activation::kGelu;  // kActivation
  Pooling pooling = Pooling::kCls;        // kSentencePooling
  bool normalize = false;                 // kSentencePooling: L2-normalize
  const char* detail = nullptr;           // shown by Program::format (activation, pooling)
  const int32_t* skip_ids = nullptr;      // kSparseTokenWeights: ids whose weight stays 0
  size_t skip_count = 0;

  // Constants built once with the program.
  std::vector<float> dequant_scales;  // kAddNorm / kAdd with an int8 input: per-channel scales
  std::vector<float> inv_factors;     // 1 / SmoothQuant factors of quant_for (empty: none)
  std::vector<int8_t> lut_s8;         // kActivation int8 -> int8: 256 entries (index q + 128)
  std::vector<float> lut_f32;         // kActivation int8 -> float: 256 entries; kGatedActivation
                                      // int8: act of the gate (kernels::build_gate_table_f32)
  // kRotary, kQkvToInt8: cos/sin of up to rotary.table_positions positions (shared by the ops of
  // one base; filled as far as the longest session, Program::prepare_positions)
  std::shared_ptr<const RopeTable> rope_table;

  std::vector<int> inputs, outputs;   // indices into Program::buffers()
  int gemm_key = -1;                  // GEMM ops: its weights' entry in the program's packed-weight
                                      // store (ops with the same weights and float output share one)
  int gemm_slabs = 1;                 // GEMM ops: column slabs (XnnGemm::column_slab_width), keys
                                      // gemm_key .. gemm_key + gemm_slabs - 1
  const LinearView* slabs = nullptr;  // their views (the program's), when gemm_slabs > 1
  int operator_of = -1;               // GEMM ops: the op whose XNNPACK operator this op uses: itself,
                                      // or the first op with the same gemm_key, type and per_sequence
                                      // (ALBERT's shared layers; the executor sets the operator up
                                      // on each op's buffers). ProgramBuilder::finish sets both keys

  bool is_gemm() const { return type == OpType::kGemm || type == OpType::kSpanLogits || type == OpType::kSparseVocab; }
  // The int8 scale of QKV channel c as the rotary and attention ops read it.
  float qkv_scale(int c) const {
    const int kv = kv_heads > 0 ? kv_heads : heads;
    if (qk_norm_scales && c < (heads + kv) * head_dim) return qk_norm_scales[c];
    return linear->output_channel_scale(c);
  }
  const float* inv_factors_or_null() const { return inv_factors.empty() ? nullptr : inv_factors.data(); }
};

}  // namespace edgebert
