// SPDX-License-Identifier: Apache-2.0
// blocks.h: the shared building blocks of the architecture builders: embeddings, the attention
// block, the FFN block, the residual connection with post-norm (BERT: x = LN(x + f(x))) or
// pre-norm (x = x + f(LN(x)), as ModernBERT and nomic-bert), the encoder stacks and the task
// heads. Each block appends ops and buffers to a ProgramBuilder; buffer names are
// "layer<l>.<what>" so that plans stay readable.
#pragma once

#include <string>

#include "model.h"
#include "program/program.h"

namespace edgebert::blocks {

// The residual stream between blocks: the float hidden states ("hidden", [n, H]) and, when the
// next GEMM reads int8, its quantized copy written by the op that produced the stream (-1: none).
struct Stream {
  int hidden = -1;
  int quantized = -1;
};

// A block's branch output before the residual connection: the buffer its last GEMM wrote.
struct Branch {
  int buffer = -1;
  const LinearView* gemm = nullptr;
  bool float_output = false;  // an int8 GEMM writing float (the add needs no dequantization)
};

// The buffer a GEMM reads: the quantized copy when it is int8 (and there is one), else the floats.
inline int gemm_input(const Stream& s, const LinearView& g) { return g.int8 && s.quantized >= 0 ? s.quantized : s.hidden; }

// Word + position (+ token type) embeddings and their LayerNorm into "hidden" (a graph output),
// quantized for `first_gemm` (into "layer0.input_q") when it is int8.
Stream embeddings(ProgramBuilder& b, const LayerNormView& norm, const LinearView* first_gemm);

// Whether the layer's int8 QKV GEMM writes float for its head norm to quantize (q/k norms, and
// int8 GEMMs that can write float): its input may then be quantized per row.
bool float_qkv(const ProgramBuilder& b, const LayerView& stored, const LinearView& qkv);
// Fused QKV GEMM, the attention core over every head, and the output GEMM reading `input`
// (row_scales >= 0: the buffer of the input rows' dynamic scales, for a float_qkv layer).
Branch attention(ProgramBuilder& b, int layer, const LinearView& qkv, const LinearView& output, int input,
                 int row_scales = -1);
// Up GEMM, activation, down GEMM reading `input`.
Branch ffn(ProgramBuilder& b, int layer, const LinearView& up, const LinearView& down, Activation activation, int input);

// Post-norm residual: hidden += branch; LayerNorm in place; quantized for `next` (nullable) into
// a new buffer `quantized_name`. Announces the hidden states (layer, stage) for the debug hook.
Stream residual_post_norm(ProgramBuilder& b, int layer, int stage, const Stream& x, const Branch& branch,
                          const LayerNormView& norm, const LinearView* next, const std::string& quantized_name);
// Pre-norm: the input of the next block, LayerNorm(hidden) into a new float buffer `normed_name`
// (the stream stays as it is) and, for an int8 `next`, its quantized copy `quantized_name`.
// Returns the buffer `next` reads. With `row_scales`, the copy is quantized per row, and the
// buffer of the rows' scales is written there (unchanged when there is no int8 copy).
int pre_norm(ProgramBuilder& b, int layer, int stage, const Stream& x, const LayerNormView& norm,
             const LinearView& next, const std::string& normed_name, const std::string& quantized_name,
             int* row_scales = nullptr);
// Pre-norm residual: hidden += branch (announces the hidden states (layer, stage)); with `assign`,
// hidden = branch (nomic-bert prenorm: the encoder returns its last FFN's output); with a
// `branch_norm` (gamma set), hidden += RMSNorm(branch) (Gemma 3's post-attention / post-FFN norms).
void residual_add(ProgramBuilder& b, int layer, int stage, const Stream& x, const Branch& branch, bool assign = false,
                  const LayerNormView* branch_norm = nullptr);

// Every encoder layer of the model, post-norm (BERT, DistilBERT, RoBERTa, ELECTRA, nomic-bert;
// ALBERT: applied layer l runs the stored layer layer_map[l]). The attention block adds the rotary
// op and the sliding window of the model; the FFN block is gated when the model's FFN is.
Stream post_norm_encoder(ProgramBuilder& b, const Stream& x);
// One pre-norm layer (attention then FFN, each x = x + f(LN(x)), or x + PN(f(LN(x))) where the
// layer has branch post-norms PN) with the layer's weights; the
// stream it returns has no quantized copy (the next pre-norm LayerNorm makes one). With
// `ffn_output_only` the FFN's output replaces the stream (x = f(LN(x)); nomic-bert prenorm's last layer).
Stream pre_norm_layer(ProgramBuilder& b, int layer, const LayerView& weights, Activation activation, const Stream& x,
                      bool ffn_output_only = false);
// A final LayerNorm of the stream in place (pre-norm models end with one).
Stream final_norm(ProgramBuilder& b, const Stream& x, const LayerNormView& norm);

// Task heads. pooler: tanh(dense(h[CLS])) into "pooler_output" (graph output); returns it.
int pooler(ProgramBuilder& b, const LinearView& dense, int hidden);
// relu(dense(h[CLS])) (DistilBERT's pre_classifier); returns its buffer.
int pre_classifier(ProgramBuilder& b, const LinearView& dense, int hidden);
// The head of the model's task: sequence classification reads `sequence_features` (one row),
// QA and token classification read every row of `hidden`, sentence embedding pools `hidden`.
void task_head(ProgramBuilder& b, int hidden, int sequence_features);
// The heads of the issue-18 families over the encoder output `hidden`: the pooler when the model
// has one (feeding sequence classification), or pre_classifier + its activation (+ head_norm) on
// h[CLS], the mask mean (HeadInput MEAN) or every token (PER_TOKEN), then task_head.
void family_head(ProgramBuilder& b, int hidden);
// The post-norm families' whole op list (RoBERTa, ELECTRA, ALBERT, nomic-bert): embeddings (with
// the family's positions and projection), the post-norm encoder, the family's head. What differs
// between them lives in the model's fields, which these blocks read.
void post_norm_family(ProgramBuilder& b);
// The pre-norm families' whole op list (ModernBERT, Qwen3, Gemma 3): embeddings (quantized for
// `embeddings_quant_for` when the first layer reads them unnormalized; null when its norm does),
// every pre-norm layer, the final norm when the model has one, the family's head.
void pre_norm_family(ProgramBuilder& b, const LinearView* embeddings_quant_for);

}  // namespace edgebert::blocks
