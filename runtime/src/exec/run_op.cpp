// SPDX-License-Identifier: Apache-2.0
// run_op.cpp: the dispatch from an op's type to its kernel (exec/op_kernels.h).
#include "exec/op_kernels.h"

namespace edgebert::exec {

Status run_op(const BoundOp& b, const RunContext& ctx) {
  switch (b.op->type) {
    case OpType::kEmbeddings: return run_embeddings(b, ctx);
    case OpType::kGemm: return run_gemm(b, ctx);
    case OpType::kAttention: return run_attention(b, ctx);
    case OpType::kConvertContext: return run_convert_context(b, ctx);
    case OpType::kAddNorm: return run_add_norm(b, ctx);
    case OpType::kLayerNorm: return run_layer_norm(b, ctx);
    case OpType::kAdd: return run_add(b, ctx);
    case OpType::kActivation: return run_activation(b, ctx);
    case OpType::kSpanLogits: return run_span_logits(b, ctx);
    case OpType::kSentencePooling: return run_sentence_pooling(b, ctx);
    case OpType::kRotary: return run_rotary(b, ctx);
    case OpType::kGatedActivation: return run_gated_activation(b, ctx);
    case OpType::kQuantize: return run_quantize(b, ctx);
    case OpType::kHeadNorm: return run_head_norm(b, ctx);
    case OpType::kSparseVocab: return run_sparse_vocab(b, ctx);
    case OpType::kL2Normalize: return run_l2_normalize(b, ctx);
    case OpType::kSparseTokenWeights: return run_sparse_token_weights(b, ctx);
    case OpType::kQkvToInt8: return run_qkv_to_int8(b, ctx);
    case OpType::kDropFirstRows: return run_drop_first_rows(b, ctx);
    case OpType::kCount: break;
  }
  return Status(EB_ERROR_BACKEND, "unknown op type");
}

}  // namespace edgebert::exec
