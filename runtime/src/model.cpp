// SPDX-License-Identifier: Apache-2.0
// model.cpp: loading (mmap or caller memory) and full verification of an .ebm model.
#include "model.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <algorithm>
#include <cstring>
#include <new>
#include <utility>

#include "backend/int4_weights.h"
#include "edgebert_generated.h"
#include "model_file_layout.h"

namespace edgebert {
namespace {

namespace fb = edgebert::fb;

struct Checker {
  std::string* error;
  eb_status status = EB_OK;
  bool optional_bias = false;  // schema_version 4: biases and LayerNorm betas may be absent
  bool rms_norm = false;       // schema_version 5 RMS_NORM: norms have a gamma only
  uint32_t schema_version = 1;
  // The file (schema_version 7 external payloads): its bytes, size and where external payloads start.
  const uint8_t* base = nullptr;
  uint64_t file_size = 0;
  uint64_t external_start = 0;
  bool fail(const std::string& msg, eb_status s = EB_ERROR_INVALID_MODEL) {
    if (status == EB_OK) {
      status = s;
      if (error) *error = msg;
    }
    return false;
  }
};

size_t dtype_size(fb::DType d) {
  switch (d) {
    case fb::DType::F32: return 4;
    case fb::DType::I8: return 1;
    case fb::DType::I32: return 4;
    case fb::DType::I4: return 0;  // packed: check_int4_tensor
  }
  return 0;
}

const char* dtype_name(fb::DType d) {
  switch (d) {
    case fb::DType::F32: return "float32";
    case fb::DType::I8: return "int8";
    case fb::DType::I32: return "int32";
    case fb::DType::I4: return "int4";
  }
  return "unknown";
}

std::string shape_str(const std::vector<int64_t>& s) {
  std::string r = "[";
  for (size_t i = 0; i < s.size(); ++i) r += (i ? ", " : "") + std::to_string(s[i]);
  return r + "]";
}

bool finite_positive(float v) { return std::isfinite(v) && v > 0.f; }

// finite_positive of every element, without a branch per element so that the compiler vectorizes
// it: a float is positive, finite and not zero exactly when its bits, as an unsigned integer, lie
// in [1, 0x7F7FFFFF] (sign clear, exponent not all ones). EmbeddingGemma's embedding table has
// 262,144 row scales: the loop with a branch per scale took about 0.8 ms of every load.
bool all_finite_positive(const flatbuffers::Vector<float>& v) {
  const uint8_t* bytes = reinterpret_cast<const uint8_t*>(v.data());
  uint32_t outside = 0;
  for (size_t i = 0, n = v.size(); i < n; ++i) {
    uint32_t bits;
    std::memcpy(&bits, bytes + 4 * i, 4);
    outside |= static_cast<uint32_t>(bits - 1u >= 0x7F7FFFFFu);
  }
  return outside == 0;
}

// A tensor's payload: its `data` vector, or (schema_version 7) the bytes after the FlatBuffer that
// external_offset / external_size name, checked to lie inside the file without overflow.
bool tensor_payload(Checker& c, const fb::Tensor* t, const std::string& what, const uint8_t** data, uint64_t* size) {
  if (t->external_offset() == 0 && t->external_size() == 0) {
    *data = t->data()->data();
    *size = t->data()->size();
    return true;
  }
  const uint64_t offset = t->external_offset(), bytes = t->external_size();
  if (c.schema_version < 7 || c.external_start == 0)
    return c.fail(what + ": external payload in a file without external data (schema_version 7)");
  if (t->data()->size() != 0) return c.fail(what + ": both an inline and an external payload");
  if (offset % 64 != 0) return c.fail(what + ": external payload offset " + std::to_string(offset) + " is not 64-byte aligned");
  const uint64_t region = c.file_size - c.external_start;  // external_start <= file_size was checked
  if (offset > region || bytes > region - offset)
    return c.fail(what + ": external payload [" + std::to_string(offset) + ", +" + std::to_string(bytes) +
                  ") lies beyond the end of the file (truncated or corrupt)");
  *data = c.base + c.external_start + offset;
  *size = bytes;
  return true;
}

// Checks dtype, exact shape, payload size and alignment; returns the payload pointer.
const void* check_tensor(Checker& c, const fb::Tensor* t, const std::string& what, fb::DType dtype,
                         const std::vector<int64_t>& shape) {
  if (!t) return c.fail(what + ": tensor missing"), nullptr;
  const std::string name = t->name()->str();
  if (t->dtype() != dtype)
    return c.fail(what + " ('" + name + "'): dtype " + dtype_name(t->dtype()) + ", expected " + dtype_name(dtype)),
           nullptr;
  // The verifier checks a vector's 4-byte length prefix, not its 8-byte elements' alignment
  // (fuzz_model found a misaligned shape: tests/fuzz/regressions/fuzz_model).
  if (reinterpret_cast<uintptr_t>(t->shape()->data()) % alignof(int64_t) != 0)
    return c.fail(what + " ('" + name + "'): shape vector is not 8-byte aligned"), nullptr;
  std::vector<int64_t> got(t->shape()->begin(), t->shape()->end());
  if (got != shape)
    return c.fail(what + " ('" + name + "'): shape " + shape_str(got) + ", expected " + shape_str(shape)), nullptr;
  uint64_t count = 1;
  for (int64_t d : shape) count *= static_cast<uint64_t>(d);  // dims already bounded by config checks
  const uint8_t* p = nullptr;
  uint64_t payload = 0;
  if (!tensor_payload(c, t, what + " ('" + name + "')", &p, &payload)) return nullptr;
  if (payload != count * dtype_size(dtype))
    return c.fail(what + " ('" + name + "'): payload has " + std::to_string(payload) + " bytes, expected " +
                  std::to_string(count * dtype_size(dtype))),
           nullptr;
  if (reinterpret_cast<uintptr_t>(p) % 4 != 0)
    return c.fail(what + " ('" + name + "'): payload is not aligned"), nullptr;
  if (dtype == fb::DType::I8) {
    const auto* s = t->scales();
    if (!s || s->size() != static_cast<size_t>(shape[0]))
      return c.fail(what + " ('" + name + "'): int8 tensor needs one scale per row"), nullptr;
    if (!all_finite_positive(*s))
      return c.fail(what + " ('" + name + "'): scale is not a positive finite number"), nullptr;
  }
  return p;
}

// An I4 tensor [rows, cols] (schema_version 5): payload of rows * ceil(cols / 2) bytes, a valid
// block size, one positive finite bfloat16 scale per block. Returns the payload pointer.
const uint8_t* check_int4_tensor(Checker& c, const fb::Tensor* t, const std::string& what, int rows, int cols,
                                 uint32_t schema_version) {
  if (!t) return c.fail(what + ": tensor missing"), nullptr;
  const std::string name = what + " ('" + t->name()->str() + "')";
  if (schema_version < 5) return c.fail(name + ": int4 weights need schema_version 5"), nullptr;
  if (reinterpret_cast<uintptr_t>(t->shape()->data()) % alignof(int64_t) != 0)
    return c.fail(name + ": shape vector is not 8-byte aligned"), nullptr;
  std::vector<int64_t> got(t->shape()->begin(), t->shape()->end());
  if (got != std::vector<int64_t>{rows, cols})
    return c.fail(name + ": shape " + shape_str(got) + ", expected " + shape_str({rows, cols})), nullptr;
  const size_t bytes = static_cast<size_t>(rows) * int4::row_bytes(cols);
  const uint8_t* p = nullptr;
  uint64_t payload = 0;
  if (!tensor_payload(c, t, name, &p, &payload)) return nullptr;
  if (payload != bytes)
    return c.fail(name + ": int4 payload has " + std::to_string(payload) + " bytes, expected " +
                  std::to_string(bytes) + " (truncated or corrupt)"),
           nullptr;
  const int block = t->block_size();
  if (!int4::valid_block(cols, block))
    return c.fail(name + ": int4 block size " + std::to_string(block) + " is not 0 or a multiple of " +
                  std::to_string(int4::kMinBlock) + " in " + std::to_string(int4::kMinBlock) + ".." +
                  std::to_string(int4::kMaxBlock) + " dividing " + std::to_string(cols) + " columns"),
           nullptr;
  const size_t blocks = static_cast<size_t>(rows) * static_cast<size_t>(int4::blocks_per_row(cols, block));
  const auto* s = t->block_scales();
  if (!s || s->size() != blocks)
    return c.fail(name + ": int4 tensor needs " + std::to_string(blocks) + " block scales, has " +
                  std::to_string(s ? s->size() : 0)),
           nullptr;
  for (uint16_t v : *s)
    if (!finite_positive(int4::float_from_bf16(v)))
      return c.fail(name + ": int4 block scale is not a positive finite number"), nullptr;
  if (t->scales()) return c.fail(name + ": int4 tensor has per-row float scales (block_scales only)"), nullptr;
  return p;
}

bool check_act(Checker& c, const fb::ActQuant* q, const std::string& what, int channels, bool symmetric_required) {
  if (!q) return c.fail(what + ": quantization parameters missing");
  if (!finite_positive(q->scale())) return c.fail(what + ": scale is not a positive finite number");
  if (q->zero_point() < -128 || q->zero_point() > 127) return c.fail(what + ": zero point outside int8");
  if (q->scales()) {
    if (q->scales()->size() != static_cast<size_t>(channels)) return c.fail(what + ": per-channel scales have wrong length");
    if (!all_finite_positive(*q->scales())) return c.fail(what + ": per-channel scale is not a positive finite number");
    if (q->zero_point() != 0) return c.fail(what + ": per-channel scales need zero point 0");
  }
  if (symmetric_required && q->zero_point() != 0) return c.fail(what + ": must be symmetric (zero point 0)");
  return true;
}

bool check_linear(Checker& c, const fb::Linear* l, const std::string& what, int in, int out, bool int8_model,
                  LinearView* v) {
  if (!l) return c.fail(what + ": missing");
  v->name = l->name()->c_str();
  if (l->in_features() != in || l->out_features() != out)
    return c.fail(what + ": features " + std::to_string(l->in_features()) + "->" + std::to_string(l->out_features()) +
                  ", expected " + std::to_string(in) + "->" + std::to_string(out));
  v->in = in;
  v->out = out;
  v->int8 = l->precision() == fb::Precision::INT8;
  if (v->int8 && !int8_model) return c.fail(what + ": int8 GEMM in a model marked fp32");
  if (v->int8 && l->weight() && l->weight()->dtype() == fb::DType::I4) {
    v->int4 = true;
    v->weight_s4 = check_int4_tensor(c, l->weight(), what + ".weight", out, in, c.schema_version);
    if (!v->weight_s4) return false;
    v->weight_block_scales = l->weight()->block_scales()->data();
    v->block_size = l->weight()->block_size();
  } else if (v->int8) {
    v->weight_s8 = static_cast<const int8_t*>(check_tensor(c, l->weight(), what + ".weight", fb::DType::I8, {out, in}));
    if (!v->weight_s8) return false;
    v->weight_scales = l->weight()->scales()->data();
  } else {
    v->weight_f32 = static_cast<const float*>(check_tensor(c, l->weight(), what + ".weight", fb::DType::F32, {out, in}));
    if (!v->weight_f32) return false;
  }
  if (l->bias() || !c.optional_bias) {
    v->bias = static_cast<const float*>(check_tensor(c, l->bias(), what + ".bias", fb::DType::F32, {out}));
    if (!v->bias) return false;
  }
  if (int8_model && (l->input_quant() || l->output_quant() || v->int8)) {
    if (!check_act(c, l->input_quant(), what + ".input_quant", in, false)) return false;
    if (l->input_quant()->scales()) return c.fail(what + ".input_quant: per-channel input scales are not supported");
    if (!check_act(c, l->output_quant(), what + ".output_quant", out, false)) return false;
    v->has_quant = true;
    v->input_scale = l->input_quant()->scale();
    v->input_zero_point = l->input_quant()->zero_point();
    v->output_scale = l->output_quant()->scale();
    v->output_zero_point = l->output_quant()->zero_point();
    if (l->output_quant()->scales()) v->output_scales = l->output_quant()->scales()->data();
    if (const auto* f = l->input_channel_factors()) {
      if (f->size() != static_cast<size_t>(in)) return c.fail(what + ": input_channel_factors has wrong length");
      for (float x : *f)
        if (!finite_positive(x)) return c.fail(what + ": input_channel_factors must be positive");
      v->input_factors = f->data();
    }
  }
  return true;
}

bool check_norm(Checker& c, const fb::LayerNorm* n, const std::string& what, int hidden, LayerNormView* v) {
  if (!n) return c.fail(what + ": missing");
  v->gamma = static_cast<const float*>(check_tensor(c, n->gamma(), what + ".gamma", fb::DType::F32, {hidden}));
  if (!v->gamma) return false;
  if (c.rms_norm) {
    if (n->beta()) return c.fail(what + ".beta: an RMSNorm has no bias");
    return true;
  }
  if (!n->beta() && c.optional_bias) return true;  // bias-free LayerNorm (ModernBERT norm_bias false)
  v->beta = static_cast<const float*>(check_tensor(c, n->beta(), what + ".beta", fb::DType::F32, {hidden}));
  return v->beta != nullptr;
}

bool in_range(int v, int lo, int hi) { return v >= lo && v <= hi; }


// A layer's per-head q/k norms (schema 5): both or neither, gamma [head_dim], and for int8 the
// scales of Q and K after them, positive and constant within each head.
bool check_qk_norms(Checker& c, const fb::EncoderLayer* L, const std::string& p, const ModelConfig& k, bool int8,
                    LayerView* v) {  // after v->qkv is checked
  if (!L->q_norm() && !L->k_norm()) {
    if (L->qk_norm_scales()) return c.fail(p + "attention.qk_norm_scales without q_norm / k_norm");
    return true;
  }
  const int d = k.head_dim();
  if (!check_norm(c, L->q_norm(), p + "attention.q_norm", d, &v->q_norm) ||
      !check_norm(c, L->k_norm(), p + "attention.k_norm", d, &v->k_norm))
    return false;
  const auto* sc = L->qk_norm_scales();
  if (!int8 || !v->qkv.int8) {  // float Q and K: nothing to requantize
    if (sc) return c.fail(p + "attention.qk_norm_scales with an fp32 qkv GEMM");
    return true;
  }
  const int width = k.q_width() + k.kv_width();
  if (!sc || sc->size() != static_cast<size_t>(width))
    return c.fail(p + "attention.qk_norm_scales must have " + std::to_string(width) + " entries (int8 q/k norms)");
  for (int ch = 0; ch < width; ++ch)
    if (!finite_positive(sc->Get(static_cast<flatbuffers::uoffset_t>(ch))) ||
        sc->Get(static_cast<flatbuffers::uoffset_t>(ch)) != sc->Get(static_cast<flatbuffers::uoffset_t>(ch - ch % d)))
      return c.fail(p + "attention.qk_norm_scales must be positive and constant within each head");
  v->qk_norm_scales = sc->data();
  return true;
}

// The masked-LM head (task MASKED_LM, schema 5): transform [E, hidden] + activation + norm over E,
// the decoder [vocab, E] tied to the word table (the same Tensor in the file).
bool load_masked_lm_head(Checker& c, const fb::Model* fm, Model* m) {
  const bool present = fm->mlm_transform() || fm->mlm_norm() || fm->mlm_decoder();
  if (m->task != Task::kMaskedLm) return present ? c.fail("mlm_* tables are only valid for task MASKED_LM") : true;
  const ModelConfig& k = m->config;
  const int E = m->embedding_size > 0 ? m->embedding_size : k.hidden;
  if (!m->has_embeddings) return c.fail("task MASKED_LM needs the word embeddings (its decoder is tied to them)");
  if (!check_linear(c, fm->mlm_transform(), "mlm_transform", k.hidden, E, false, &m->mlm_transform)) return false;
  const int act = static_cast<int>(fm->mlm_transform_act());
  if (!in_range(act, 0, 5)) return c.fail("mlm_transform_act " + std::to_string(act) + " is not a known activation");
  m->mlm_act = static_cast<Activation>(act);
  if (!check_norm(c, fm->mlm_norm(), "mlm_norm", E, &m->mlm_norm)) return false;
  if (!check_linear(c, fm->mlm_decoder(), "mlm_decoder", E, k.vocab, m->int8, &m->mlm_decoder)) return false;
  const LinearView& d = m->mlm_decoder;
  if (d.int4 || (d.weight_s8 != m->word_s8 || d.weight_f32 != m->word_f32))
    return c.fail("mlm_decoder.weight must be the word embedding table itself (a tied decoder)");
  if (d.int8 && !d.output_scales)
    return c.fail("mlm_decoder: an int8 decoder needs per-channel output scales");
  return true;
}

// bge-m3's sparse head (task BGE_M3): sparse_linear fp32 [1, hidden] with its bias, and the unused
// token ids (each a vocabulary id, at most 64 of them).
bool load_bge_m3_sparse(Checker& c, const fb::Model* fm, Model* m) {
  const bool present = fm->sparse_linear() || fm->sparse_unused_ids();
  if (m->task != Task::kBgeM3) return present ? c.fail("sparse_linear / sparse_unused_ids are only valid for task BGE_M3") : true;
  if (!m->has_embeddings) return c.fail("task BGE_M3 needs token ids (its sparse weights are per token id)");
  if (!fm->sparse_linear() || !fm->sparse_linear()->bias()) return c.fail("task BGE_M3 needs sparse_linear with a bias");
  if (!check_linear(c, fm->sparse_linear(), "sparse_linear", m->config.hidden, 1, false, &m->sparse_linear)) return false;
  if (m->sparse_linear.int8) return c.fail("sparse_linear must be F32");
  const auto* ids = fm->sparse_unused_ids();
  if (!ids || ids->size() > 64) return c.fail("task BGE_M3 needs sparse_unused_ids (at most 64 ids)");
  for (int32_t id : *ids)
    if (!in_range(id, 0, m->config.vocab - 1))
      return c.fail("sparse_unused_ids: id " + std::to_string(id) + " is outside the vocabulary");
  m->sparse_unused_ids = ids->data();
  m->sparse_unused_count = ids->size();
  return true;
}

// The task head (schema 2; schema 1 files have a classifier or nothing): which tensors the task
// needs, their shapes, the label names and the sentence pooling.
bool load_head(Checker& c, const fb::Model* fm, Model* m) {
  ModelConfig& k = m->config;
  const int H = k.hidden;
  if (m->schema_version == 1) {
    m->task = fm->classifier() ? Task::kSequenceClassification : Task::kEncoder;
  } else {
    const int t = static_cast<int>(fm->task());
    if (!in_range(t, 0, m->schema_version >= 5 ? 7 : 4)) return c.fail("model task " + std::to_string(t) + " is not a known task");
    m->task = static_cast<Task>(t);
  }
  const std::string task = task_name(m->task);
  if (fm->pooler()) {
    m->has_pooler = true;
    if (!check_linear(c, fm->pooler(), "pooler", H, H, false, &m->pooler)) return false;
  }
  const bool wants_classifier = m->task == Task::kSequenceClassification || m->task == Task::kQuestionAnswering ||
                                m->task == Task::kTokenClassification || m->task == Task::kTokenVectors ||
                                m->task == Task::kBgeM3;
  if (wants_classifier != (fm->classifier() != nullptr))
    return c.fail(std::string("task ") + task + (wants_classifier ? " needs a classifier, which is missing"
                                                                   : " has no classifier, but the file has one"));
  if (m->task == Task::kQuestionAnswering && k.num_labels != 2)
    return c.fail("task QUESTION_ANSWERING needs config.num_labels 2 (start, end), not " + std::to_string(k.num_labels));
  if (wants_classifier) {
    if (k.num_labels < 1) return c.fail("classifier present but config.num_labels is 0");
    m->has_classifier = true;
    if (!check_linear(c, fm->classifier(), "classifier", H, k.num_labels, false, &m->classifier)) return false;
  } else if (k.num_labels != 0) {
    return c.fail("config.num_labels is " + std::to_string(k.num_labels) + " but task " + task + " has no classifier");
  }
  if (m->family == Family::kBert || m->family == Family::kDistilBert) {
    const bool wants_pre = m->is_distilbert && m->task == Task::kSequenceClassification;
    if (wants_pre != (fm->pre_classifier() != nullptr))
      return c.fail(wants_pre ? "DistilBERT sequence classification needs pre_classifier, which is missing"
                              : "pre_classifier is only valid for DistilBERT sequence classification");
  } else if (fm->pre_classifier() && !wants_classifier) {
    return c.fail(std::string("pre_classifier is only valid with a classifier head, not task ") + task);
  }
  if (fm->pre_classifier()) {
    m->has_pre_classifier = true;
    if (!check_linear(c, fm->pre_classifier(), "pre_classifier", H, H, false, &m->pre_classifier)) return false;
  }
  if (m->schema_version >= 4) {  // the family head fields
    const int act = static_cast<int>(fm->pre_classifier_act());
    if (!in_range(act, 0, 5)) return c.fail("pre_classifier_act " + std::to_string(act) + " is not a known activation");
    m->pre_classifier_act = static_cast<Activation>(act);
    const int in = static_cast<int>(fm->head_input());
    if (!in_range(in, 0, 2)) return c.fail("head_input " + std::to_string(in) + " is not CLS, MEAN or PER_TOKEN");
    m->head_input = static_cast<HeadInput>(in);
    if (m->head_input == HeadInput::kMean && m->task != Task::kSequenceClassification)
      return c.fail(std::string("head_input MEAN is only valid for SEQUENCE_CLASSIFICATION, not ") + task);
    if (m->head_input == HeadInput::kPerToken &&
        !(m->has_pre_classifier && (m->task == Task::kTokenClassification || m->task == Task::kQuestionAnswering)))
      return c.fail("head_input PER_TOKEN needs a pre_classifier and a per-token task (token classification, QA)");
    if (m->has_pre_classifier && m->head_input != HeadInput::kPerToken && m->task != Task::kSequenceClassification)
      return c.fail(std::string("pre_classifier on one row is only valid for SEQUENCE_CLASSIFICATION, not ") + task);
    if (fm->head_norm()) {
      if (!m->has_pre_classifier) return c.fail("head_norm needs a pre_classifier, which is missing");
      m->has_head_norm = true;
      if (!check_norm(c, fm->head_norm(), "head_norm", H, &m->head_norm)) return false;
    }
  }
  if (const auto* sp = fm->sentence_pooling()) {
    if (m->task != Task::kSentenceEmbedding && m->task != Task::kBgeM3)
      return c.fail(std::string("sentence_pooling is only valid for tasks SENTENCE_EMBEDDING and BGE_M3, not ") + task);
    if (m->task == Task::kBgeM3 && (sp->mode() != fb::Pooling::CLS || !sp->normalize() || sp->dense()))
      return c.fail("task BGE_M3 needs sentence_pooling CLS with normalize and no Dense modules");
    const int mode = static_cast<int>(sp->mode());
    if (!in_range(mode, 0, m->schema_version >= 5 ? 4 : 3))
      return c.fail("sentence_pooling.mode " + std::to_string(mode) + " is not a known pooling");
    m->pooling = static_cast<Pooling>(mode);
    m->normalize = sp->normalize();
    if (const auto* dense = sp->dense()) {  // schema_version 6 (has_gemma_fields)
      if (dense->size() > 16) return c.fail("sentence_pooling.dense has " + std::to_string(dense->size()) + " modules (at most 16)");
      m->sentence_dense.resize(dense->size());
      int width = H;
      for (flatbuffers::uoffset_t i = 0; i < dense->size(); ++i) {
        const fb::Linear* l = dense->Get(i)->linear();
        const std::string what = "sentence_pooling.dense[" + std::to_string(i) + "]";
        const bool last = i + 1 == dense->size();
        const int out = last ? H : (l->weight() && l->weight()->shape() && l->weight()->shape()->size() == 2
                                        ? static_cast<int>(l->weight()->shape()->Get(0))
                                        : 0);
        if (!in_range(out, 1, 1 << 16)) return c.fail(what + ".weight: not a 2-D tensor of 1..65536 rows");
        if (!check_linear(c, l, what, width, out, false, &m->sentence_dense[i])) return false;
        m->sentence_dense_tanh.push_back(dense->Get(i)->tanh());
        width = out;
      }
    }
  } else if (m->task == Task::kSentenceEmbedding || m->task == Task::kBgeM3) {
    return c.fail(std::string("task ") + task + " needs sentence_pooling, which is missing");
  }
  if (!load_bge_m3_sparse(c, fm, m)) return false;
  if (const auto* labels = fm->labels()) {
    if (labels->size() != static_cast<size_t>(k.num_labels))
      return c.fail("model has " + std::to_string(labels->size()) + " labels, config.num_labels is " +
                    std::to_string(k.num_labels));
    for (const auto* l : *labels) m->labels.push_back(l->str());
  } else {
    for (int i = 0; i < k.num_labels; ++i) m->labels.push_back("LABEL_" + std::to_string(i));
  }
  const int score = static_cast<int>(fm->score_function());
  if (!in_range(score, 0, 1)) return c.fail("score_function " + std::to_string(score) + " is not IDENTITY or SIGMOID");
  if (score == 1 && !(m->task == Task::kSequenceClassification && k.num_labels == 1))
    return c.fail("score_function SIGMOID is only valid for a SEQUENCE_CLASSIFICATION model with one label");
  m->score_sigmoid = score == 1;
  return load_masked_lm_head(c, fm, m);
}

// The prompts (schema 6): unique non-empty names, texts of at most 4096 bytes, the default one of them.
bool load_prompts(Checker& c, const fb::Model* fm, Model* m) {
  if (const auto* ps = fm->prompts()) {
    if (ps->size() > 64) return c.fail("the model has " + std::to_string(ps->size()) + " prompts (at most 64)");
    for (const fb::Prompt* p : *ps) {
      const std::string name = p->name()->str(), text = p->text()->str();
      if (name.empty() || name.size() > 256 || text.size() > 4096)
        return c.fail("prompt '" + name + "': names of 1..256 bytes, texts of at most 4096");
      for (const auto& q : m->prompts)
        if (q.first == name) return c.fail("prompt '" + name + "' is listed twice");
      m->prompts.emplace_back(name, text);
    }
  }
  if (const auto* d = fm->default_prompt_name()) {
    for (size_t i = 0; i < m->prompts.size(); ++i)
      if (m->prompts[i].first == d->str()) m->default_prompt = static_cast<int>(i);
    if (m->default_prompt < 0) return c.fail("default_prompt_name '" + d->str() + "' is not one of the prompts");
  }
  return true;
}

// PyLate's conventions of a ColBERT model (schema 6): token-vector models only; ids in the
// vocabulary (-1: none), lengths of 2..the positions (a query needs room for [CLS] marker [SEP]),
// skiplist ids sorted and unique.
bool load_colbert_inputs(Checker& c, const fb::Model* fm, Model* m) {
  const fb::ColbertInputs* ci = fm->colbert_inputs();
  if (!ci) return true;
  if (m->task != Task::kTokenVectors) return c.fail("colbert_inputs on a model that is not a TOKEN_VECTORS model");
  const int vocab = m->config.vocab, positions = m->config.max_position;
  for (const auto& [name, id] : {std::pair<const char*, int32_t>{"query_prefix_id", ci->query_prefix_id()},
                                 {"document_prefix_id", ci->document_prefix_id()},
                                 {"expansion_id", ci->expansion_id()}})
    if (id < -1 || id >= vocab)
      return c.fail(std::string("colbert_inputs: ") + name + " " + std::to_string(id) + " is outside -1.." +
                    std::to_string(vocab - 1));
  for (const auto& [name, len] : {std::pair<const char*, int32_t>{"query_length", ci->query_length()},
                                  {"document_length", ci->document_length()}})
    if (len < 2 || len > positions)
      return c.fail(std::string("colbert_inputs: ") + name + " " + std::to_string(len) + " is outside 2.." +
                    std::to_string(positions) + " (the model's positions)");
  Model::ColbertInputs& out = m->colbert;
  out.present = true;
  out.query_prefix_id = ci->query_prefix_id();
  out.document_prefix_id = ci->document_prefix_id();
  out.query_length = ci->query_length();
  out.document_length = ci->document_length();
  out.expansion_id = ci->expansion_id();
  out.attend_to_expansion = ci->attend_to_expansion();
  if (const auto* sk = ci->skiplist_ids()) {
    for (size_t i = 0; i < sk->size(); ++i) {
      const int32_t id = sk->Get(static_cast<flatbuffers::uoffset_t>(i));
      if (id < 0 || id >= vocab || (i > 0 && id <= sk->Get(static_cast<flatbuffers::uoffset_t>(i - 1))))
        return c.fail("colbert_inputs: skiplist id " + std::to_string(id) + " is out of range or out of order");
    }
    out.skiplist_ids = sk->data();
    out.skiplist_count = sk->size();
  }
  return true;
}

// Limits well beyond every published BERT-family encoder (BERT-large: hidden 1024, 24 layers,
// 4096 FFN, 512 positions; multilingual vocabularies ~250k tokens).
constexpr int kMaxHidden = 8192, kMaxLayers = 256, kMaxIntermediate = 65536, kMaxVocab = 1 << 22,
              kMaxPositions = 1 << 16, kMaxTypeVocab = 1 << 16, kMaxLabels = 1 << 16;

bool check_config_limits(Checker& c, const ModelConfig& k) {
  struct Field {
    const char* name;
    int value, lo, hi;
  };
  const Field fields[] = {{"hidden_size", k.hidden, 1, kMaxHidden},
                          {"num_attention_heads", k.heads, 1, k.hidden},
                          {"num_hidden_layers", k.layers, 1, kMaxLayers},
                          {"intermediate_size", k.intermediate, 1, kMaxIntermediate},
                          {"vocab_size", k.vocab, 1, kMaxVocab},
                          {"max_position_embeddings", k.max_position, 1, kMaxPositions},
                          {"type_vocab_size", k.type_vocab, 0, kMaxTypeVocab},  // 0: no token types (DistilBERT)
                          {"num_labels", k.num_labels, 0, kMaxLabels}};
  for (const Field& f : fields)
    if (!in_range(f.value, f.lo, f.hi))
      return c.fail(std::string("model config: ") + f.name + " = " + std::to_string(f.value) + " is outside " +
                    std::to_string(f.lo) + ".." + std::to_string(f.hi));
  if (k.head_size == 0 && k.hidden % k.heads != 0)
    return c.fail("model config: hidden_size " + std::to_string(k.hidden) + " is not divisible by num_attention_heads " +
                  std::to_string(k.heads));
  if (!finite_positive(k.eps)) return c.fail("model config: layer_norm_eps is not a positive finite number");
  return true;
}

// Any schema_version 4 field set (an older file must have none).
bool has_family_fields(const fb::Model* fm) {
  const fb::Config* k = fm->config();
  return k->family() != fb::Family::BERT || k->position_ids() != fb::PositionIds::ABSOLUTE || k->padding_idx() != 0 ||
         k->embedding_size() != 0 || k->pre_norm() || k->ffn() != fb::FfnKind::PLAIN || k->rotary() || k->layer_map() ||
         k->local_window() || fm->embedding_projection() || fm->final_norm() || fm->head_norm() ||
         fm->head_input() != fb::HeadInput::CLS || fm->pre_classifier_act() != fb::Activation::RELU;
}

bool finite_non_negative(double v) { return std::isfinite(v) && v >= 0.0; }

// Any schema_version 5 field set (an older file must have none).
bool has_llm_fields(const fb::Model* fm) {
  const fb::Config* k = fm->config();
  if (k->num_key_value_heads() != 0 || k->head_dim() != 0 || k->norm() != fb::NormKind::LAYER_NORM || k->causal() ||
      k->family() == fb::Family::QWEN3 || (fm->embeddings() && !fm->embeddings()->norm()))
    return true;
  if (fm->sentence_pooling() && fm->sentence_pooling()->mode() == fb::Pooling::LAST_TOKEN) return true;
  if (fm->task() == fb::Task::MASKED_LM || fm->mlm_transform() || fm->mlm_norm() || fm->mlm_decoder()) return true;
  for (const fb::EncoderLayer* L : *fm->layers())
    if (L->q_norm() || L->k_norm() || L->qk_norm_scales()) return true;
  if (fm->tokenizer() && fm->tokenizer()->pre_tokenizers())
    for (const fb::PreTokenizerSpec* p : *fm->tokenizer()->pre_tokenizers())
      if (p->regex()) return true;  // a Split regex
  return false;
}

// Any schema_version 6 field set: the branch post-norms (the family is range-checked by version).
bool has_gemma_fields(const fb::Model* fm) {
  for (const fb::EncoderLayer* L : *fm->layers())
    if (L->attention_post_norm() || L->ffn_post_norm()) return true;
  return (fm->sentence_pooling() && fm->sentence_pooling()->dense()) || fm->prompts() || fm->default_prompt_name() ||
         fm->colbert_inputs();
}

// The schema_version 5 fields of Config (issue 24): head geometry, norm kind, causal attention.
bool load_llm_config(Checker& c, const fb::Config* cfg, Model* m) {
  ModelConfig& k = m->config;
  const int kv = cfg->num_key_value_heads(), hd = cfg->head_dim();
  if (!in_range(kv, 0, k.heads) || (kv > 0 && k.heads % kv != 0))
    return c.fail("config.num_key_value_heads " + std::to_string(kv) + " must divide num_attention_heads " +
                  std::to_string(k.heads));
  if (!in_range(hd, 0, 1024) || (hd > 0 && hd % 2 != 0))
    return c.fail("config.head_dim " + std::to_string(hd) + " is outside 0..1024 or odd");
  if (hd > 0 && static_cast<int64_t>(hd) * k.heads > kMaxHidden)
    return c.fail("config: num_attention_heads x head_dim " + std::to_string(static_cast<int64_t>(hd) * k.heads) +
                  " is above " + std::to_string(kMaxHidden));
  k.kv_head_count = kv;
  k.head_size = hd;
  const int norm = static_cast<int>(cfg->norm());
  if (!in_range(norm, 0, 1)) return c.fail("config.norm " + std::to_string(norm) + " is not LAYER_NORM or RMS_NORM");
  m->rms_norm = norm == 1;
  m->causal = cfg->causal();
  return true;
}

// The schema_version 4 fields of Config (issue 18), each range-checked, into the model.
bool load_family_config(Checker& c, const fb::Model* fm, Model* m) {
  const fb::Config* cfg = fm->config();
  ModelConfig& k = m->config;
  const int family = static_cast<int>(cfg->family());
  if (!in_range(family, 0, m->schema_version >= 6 ? 8 : m->schema_version >= 5 ? 7 : 6)) return c.fail("config.family " + std::to_string(family) + " is not a known model family");
  m->family = static_cast<Family>(family);
  m->is_distilbert = m->family == Family::kDistilBert;
  if (!load_llm_config(c, cfg, m)) return false;
  const int pos = static_cast<int>(cfg->position_ids());
  if (!in_range(pos, 0, 2)) return c.fail("config.position_ids " + std::to_string(pos) + " is not ABSOLUTE, PADDING_OFFSET or NONE");
  m->position_ids = static_cast<PositionIds>(pos);
  m->padding_idx = cfg->padding_idx();
  if (m->position_ids == PositionIds::kPaddingOffset && !in_range(m->padding_idx, 0, k.vocab - 1))
    return c.fail("config.padding_idx " + std::to_string(m->padding_idx) + " is outside the vocabulary 0.." +
                  std::to_string(k.vocab - 1));
  m->embedding_size = cfg->embedding_size() == 0 ? k.hidden : cfg->embedding_size();
  if (!in_range(m->embedding_size, 1, kMaxHidden))
    return c.fail("config.embedding_size " + std::to_string(m->embedding_size) + " is outside 1.." + std::to_string(kMaxHidden));
  m->pre_norm = cfg->pre_norm();
  const int ffn = static_cast<int>(cfg->ffn());
  if (!in_range(ffn, 0, 1)) return c.fail("config.ffn " + std::to_string(ffn) + " is not PLAIN or GATED");
  m->gated_ffn = ffn == 1;
  if (m->gated_ffn && k.intermediate > kMaxIntermediate / 2)
    return c.fail("config.intermediate_size " + std::to_string(k.intermediate) + " is too large for a gated FFN");
  if (const fb::Rotary* r = cfg->rotary()) {
    RotaryConfig& q = m->rotary;
    q.dims = r->dims();
    q.interleaved = r->interleaved();
    q.theta = r->theta();
    q.local_theta = r->local_theta() > 0 ? r->local_theta() : r->theta();
    q.ntk_factor = r->ntk_factor();
    q.ntk_max_trained = r->ntk_max_trained_positions();
    if (q.dims < 2 || q.dims % 2 != 0 || q.dims > k.head_dim())
      return c.fail("config.rotary.dims " + std::to_string(q.dims) + " must be even and within 2.." +
                    std::to_string(k.head_dim()) + " (the head size)");
    if (!(std::isfinite(q.theta) && q.theta > 1.0) || !(std::isfinite(q.local_theta) && q.local_theta > 1.0))
      return c.fail("config.rotary: theta and local_theta must be finite numbers above 1");
    if (!finite_non_negative(q.ntk_factor) || q.ntk_factor > 1e6)
      return c.fail("config.rotary.ntk_factor must be a finite number in 0..1e6");
    if (q.ntk_factor > 0 && (q.dims < 4 || !in_range(q.ntk_max_trained, 1, kMaxPositions)))
      return c.fail("config.rotary: dynamic NTK needs ntk_max_trained_positions in 1.." + std::to_string(kMaxPositions) +
                    " and at least 4 rotary dims");
  }
  if (const auto* lm = cfg->layer_map()) {
    if (lm->size() != static_cast<size_t>(k.layers))
      return c.fail("config.layer_map has " + std::to_string(lm->size()) + " entries, num_hidden_layers is " +
                    std::to_string(k.layers));
    m->layer_map.assign(lm->begin(), lm->end());  // entries checked against the stored layers later
  } else {
    m->layer_map.resize(static_cast<size_t>(k.layers));
    for (int i = 0; i < k.layers; ++i) m->layer_map[static_cast<size_t>(i)] = i;
  }
  m->local_window.assign(static_cast<size_t>(k.layers), 0);
  if (const auto* lw = cfg->local_window()) {
    if (lw->size() != static_cast<size_t>(k.layers))
      return c.fail("config.local_window has " + std::to_string(lw->size()) + " entries, num_hidden_layers is " +
                    std::to_string(k.layers));
    for (size_t i = 0; i < lw->size(); ++i) {
      const int w = lw->Get(static_cast<flatbuffers::uoffset_t>(i));
      if (!in_range(w, 0, 2 * kMaxPositions))
        return c.fail("config.local_window[" + std::to_string(i) + "] = " + std::to_string(w) + " is outside 0.." +
                      std::to_string(2 * kMaxPositions));
      m->local_window[i] = w;
    }
  }
  return true;
}

}  // namespace

const char* task_name(Task t) {
  switch (t) {
    case Task::kEncoder: return "encoder";
    case Task::kSequenceClassification: return "sequence_classification";
    case Task::kQuestionAnswering: return "question_answering";
    case Task::kTokenClassification: return "token_classification";
    case Task::kSentenceEmbedding: return "sentence_embedding";
    case Task::kMaskedLm: return "masked_lm";
    case Task::kTokenVectors: return "token_vectors";
    case Task::kBgeM3: return "bge_m3";
  }
  return "?";
}

const char* pooling_name(Pooling p) {
  switch (p) {
    case Pooling::kCls: return "cls";
    case Pooling::kMean: return "mean";
    case Pooling::kMax: return "max";
    case Pooling::kMeanSqrtLen: return "mean_sqrt_len";
    case Pooling::kLastToken: return "last_token";
  }
  return "?";
}

const char* activation_name(Activation a) {
  switch (a) {
    case Activation::kGelu: return "gelu";
    case Activation::kRelu: return "relu";
    case Activation::kGeluTanh: return "gelu_tanh";
    case Activation::kSilu: return "silu";
    case Activation::kSigmoid: return "sigmoid";
    case Activation::kTanh: return "tanh";
  }
  return "?";
}

const char* family_name(Family f) {
  switch (f) {
    case Family::kBert: return "bert";
    case Family::kDistilBert: return "distilbert";
    case Family::kRoberta: return "roberta";
    case Family::kElectra: return "electra";
    case Family::kAlbert: return "albert";
    case Family::kNomicBert: return "nomic_bert";
    case Family::kModernBert: return "modernbert";
    case Family::kQwen3: return "qwen3";
    case Family::kGemma3: return "gemma3_text";
  }
  return "?";
}

Model::~Model() {
  if (mapping_) munmap(mapping_, mapping_size_);
}

Result<std::unique_ptr<Model>> Model::create(const void* data, size_t size, void* owned_mapping,
                                             size_t mapping_size) {
  std::unique_ptr<Model> m;
  std::string error;
  const eb_status s = create_checked(data, size, owned_mapping, mapping_size, &m, &error);
  if (s != EB_OK) return Status(s, error);
  return m;
}

Result<std::unique_ptr<Model>> Model::load_file(const char* path) {
  std::unique_ptr<Model> m;
  std::string error;
  const eb_status s = load_file_checked(path, &m, &error);
  if (s != EB_OK) return Status(s, error);
  return m;
}

eb_status Model::create_checked(const void* data, size_t size, void* owned_mapping, size_t mapping_size,
                                std::unique_ptr<Model>* out, std::string* error) {
  out->reset();
  std::unique_ptr<Model> m(new (std::nothrow) Model());
  if (!m) {
    if (owned_mapping) munmap(owned_mapping, mapping_size);
    if (error) *error = "out of memory";
    return EB_ERROR_OUT_OF_MEMORY;
  }
  m->mapping_ = owned_mapping;
  m->mapping_size_ = mapping_size;
  m->file_size = size;
  m->buffer = static_cast<const uint8_t*>(data);
  Checker c{error};
  const auto* bytes = static_cast<const uint8_t*>(data);
  {  // a HuggingFace file given as a model (config.json, tokenizer.json, safetensors): say what to do
    size_t i = 0;
    while (i < size && i < 64 && (bytes[i] == ' ' || bytes[i] == '\n' || bytes[i] == '\r' || bytes[i] == '\t')) ++i;
    const bool ebm = size >= 8 && std::memcmp(bytes + 4, "EBM1", 4) == 0;  // the file identifier
    const bool json = i < size && bytes[i] == '{';
    const bool safetensors = size >= 9 && bytes[8] == '{';  // u64 header length, then its JSON
    if (!ebm && (json || safetensors)) {
      c.fail(std::string("not an edgebert model: this is a HuggingFace ") + (json ? "JSON file (config.json?)" : "safetensors file") +
             "; convert the checkpoint folder first: edgebert-convert --input HF_DIR --output MODEL.ebm");
      return c.status;
    }
  }
  // FlatBuffers verifies buffers below 2 GiB (32-bit offsets). A file can be bigger only with
  // external payloads (schema_version 7): the FlatBuffer is its first external_data_start bytes.
  if (size < 8) {
    c.fail("not an edgebert model: " + std::to_string(size) + " bytes is too small");
    return c.status;
  }
  if (size % 64 != 0) {
    // The writer pads every model to its 64-byte payload alignment; anything else was cut or
    // extended after conversion.
    c.fail("corrupt or truncated model: size " + std::to_string(size) + " is not a multiple of 64 bytes");
    return c.status;
  }
  if (!fb::ModelBufferHasIdentifier(bytes)) {
    c.fail("not an edgebert model (file identifier is not 'EBM1')");
    return c.status;
  }
  // Check the version before the full verification, so a newer file gets a clear message, and
  // read where external payloads start (which bounds the FlatBuffer).
  uint64_t external_start = 0;
  {
    const size_t head = std::min(size, kMaxFlatBuffer);
    flatbuffers::Verifier pre(bytes, head, 64, 1000000);
    const auto root_off = flatbuffers::ReadScalar<flatbuffers::uoffset_t>(bytes);
    if (root_off < head && pre.VerifyTableStart(bytes + root_off)) {
      const auto* table = reinterpret_cast<const flatbuffers::Table*>(bytes + root_off);
      // Verify the field before reading it (fuzz_model found the read past the end when the
      // vtable's field offset points outside the buffer: tests/fuzz/regressions/fuzz_model).
      const bool readable = table->VerifyField<uint32_t>(pre, fb::Model::VT_SCHEMA_VERSION, 4);
      const uint32_t version = readable ? table->GetField<uint32_t>(fb::Model::VT_SCHEMA_VERSION, 1) : 1;
      if (version > kSchemaVersion) {
        c.fail("model schema version " + std::to_string(version) +
                   " is newer than this runtime supports (" + std::to_string(kSchemaVersion) +
                   "); upgrade edgebert or re-convert",
               EB_ERROR_UNSUPPORTED);
        return c.status;
      }
      if (table->VerifyField<uint64_t>(pre, fb::Model::VT_EXTERNAL_DATA_START, 8))
        external_start = table->GetField<uint64_t>(fb::Model::VT_EXTERNAL_DATA_START, 0);
    }
  }
  if (external_start != 0 &&
      (external_start % 64 != 0 || external_start > size || external_start > kMaxFlatBuffer)) {
    c.fail("corrupt or truncated model: external payloads start at byte " + std::to_string(external_start) +
           " of a " + std::to_string(size) + "-byte file");
    return c.status;
  }
  if (external_start == 0 && size > kMaxFlatBuffer) {
    c.fail("not an edgebert model: " + std::to_string(size) +
           " bytes is too large for a file without external payloads (FlatBuffers' 2 GiB)");
    return c.status;
  }
  c.base = bytes;
  c.file_size = size;
  c.external_start = external_start;
  flatbuffers::Verifier verifier(bytes, external_start != 0 ? external_start : size, 64, 1000000);
  if (!fb::VerifyModelBuffer(verifier)) {
    c.fail("corrupt or truncated model: FlatBuffer verification failed");
    return c.status;
  }
  const fb::Model* fm = fb::GetModel(bytes);
  const fb::Config* cfg = fm->config();
  ModelConfig& k = m->config;
  k.hidden = cfg->hidden_size();
  k.heads = cfg->num_attention_heads();
  k.layers = cfg->num_hidden_layers();
  k.intermediate = cfg->intermediate_size();
  k.vocab = cfg->vocab_size();
  k.max_position = cfg->max_position_embeddings();
  k.type_vocab = cfg->type_vocab_size();
  k.eps = cfg->layer_norm_eps();
  k.num_labels = cfg->num_labels();
  k.head_size = cfg->head_dim();  // checked with the other schema 5 fields
  // Absurd sizes are refused here, by name, before anything is allocated for them.
  if (!check_config_limits(c, k)) return c.status;
  m->schema_version = fm->schema_version();
  if (m->schema_version < 1) return c.fail("model schema_version 0 is invalid"), c.status;
  c.schema_version = m->schema_version;  // before any tensor is read (tensor_payload needs it)
  if (m->schema_version < 7 && external_start != 0)
    return c.fail("model schema_version " + std::to_string(m->schema_version) +
                  " has external payloads (schema_version 7); the file is inconsistent"),
           c.status;
  if (m->schema_version < 6 && has_gemma_fields(fm))
    return c.fail("model schema_version " + std::to_string(m->schema_version) +
                  " carries Gemma 3 fields (schema_version 6); the file is inconsistent"),
           c.status;
  if (m->schema_version < 5 && has_llm_fields(fm))
    return c.fail("model schema_version " + std::to_string(m->schema_version) +
                  " carries LLM-block fields (schema_version 5); the file is inconsistent"),
           c.status;
  if (m->schema_version >= 4) {
    if (!load_family_config(c, fm, m.get())) return c.status;
  } else {
    if (has_family_fields(fm))
      return c.fail("model schema_version " + std::to_string(m->schema_version) +
                    " carries family fields (schema_version 4); the file is inconsistent"),
             c.status;
    if (const auto* mt = cfg->model_type()) {
      if (mt->str() == "distilbert") {
        m->is_distilbert = true;
        m->family = Family::kDistilBert;
      } else if (mt->str() != "bert") {
        return c.fail("config.model_type '" + mt->str() + "' is not supported (bert, distilbert)"), c.status;
      }
    }
    m->layer_map.resize(static_cast<size_t>(k.layers));
    for (int i = 0; i < k.layers; ++i) m->layer_map[static_cast<size_t>(i)] = i;
    m->local_window.assign(static_cast<size_t>(k.layers), 0);
    m->embedding_size = k.hidden;
  }
  c.optional_bias = m->schema_version >= 4;
  c.rms_norm = m->rms_norm;
  const int act = static_cast<int>(cfg->hidden_act());
  const int max_act = m->gated_ffn ? 4 : 2;
  if (!in_range(act, 0, max_act))
    return c.fail("config.hidden_act " + std::to_string(act) +
                  (m->gated_ffn ? " is not GELU, RELU, GELU_TANH, SILU or SIGMOID" : " is not GELU, RELU or GELU_TANH")),
           c.status;
  k.activation = static_cast<Activation>(act);
  m->int8 = fm->precision() == fb::Precision::INT8;
  const bool int8_family = m->family == Family::kBert || m->family == Family::kDistilBert ||
                           m->family == Family::kRoberta || m->family == Family::kElectra ||
                           m->family == Family::kAlbert || m->family == Family::kModernBert ||
                           m->family == Family::kQwen3 || m->family == Family::kGemma3 ||
                           (m->family == Family::kNomicBert &&
                            (k.activation == Activation::kGelu || k.activation == Activation::kSilu ||
                             k.activation == Activation::kGeluTanh || k.activation == Activation::kSigmoid));
  if (m->int8 && !int8_family)
    return c.fail(std::string("int8 ") + family_name(m->family) +
                      " models are not supported by this runtime yet (convert with --fp32)",
                  EB_ERROR_UNSUPPORTED),
           c.status;
  const int H = k.hidden, I = k.intermediate, E = m->embedding_size;
  const int I_up = m->gated_ffn ? 2 * I : I;

  if (const fb::Embeddings* e = fm->embeddings()) {
    m->has_embeddings = true;
    if (m->int8 && e->word() && e->word()->dtype() == fb::DType::I4) {
      m->word_s4 = check_int4_tensor(c, e->word(), "embeddings.word", k.vocab, E, m->schema_version);
      if (!m->word_s4) return c.status;
      m->word_block_scales = e->word()->block_scales()->data();
      m->word_block = e->word()->block_size();
    } else if (e->word() && e->word()->dtype() == fb::DType::I8) {
      m->word_s8 = static_cast<const int8_t*>(check_tensor(c, e->word(), "embeddings.word", fb::DType::I8, {k.vocab, E}));
      if (!m->word_s8) return c.status;
      m->word_scales = e->word()->scales()->data();
    } else {
      m->word_f32 = static_cast<const float*>(check_tensor(c, e->word(), "embeddings.word", fb::DType::F32, {k.vocab, E}));
      if (!m->word_f32) return c.status;
    }
    if (m->position_ids == PositionIds::kNone) {
      if (e->position()) return c.fail("embeddings.position is present but config.position_ids is NONE"), c.status;
    } else {
      int64_t rows = k.max_position;
      if (m->position_ids == PositionIds::kPaddingOffset) {
        // max_position_embeddings + padding_idx + 1 rows, or fewer (the checkpoint's table): the
        // longest sequence is then rows - padding_idx - 1
        if (!e->position() || e->position()->shape()->size() != 2)
          return c.fail("embeddings.position: tensor missing or not 2-D (config.position_ids PADDING_OFFSET)"), c.status;
        rows = e->position()->shape()->Get(0);
        if (rows < m->padding_idx + 2 || rows > int64_t(k.max_position) + m->padding_idx + 1)
          return c.fail("embeddings.position has " + std::to_string(rows) + " rows; PADDING_OFFSET with padding_idx " +
                        std::to_string(m->padding_idx) + " needs " + std::to_string(m->padding_idx + 2) + ".." +
                        std::to_string(int64_t(k.max_position) + m->padding_idx + 1)),
                 c.status;
        k.max_position = static_cast<int>(rows) - m->padding_idx - 1;
      }
      m->position = static_cast<const float*>(
          check_tensor(c, e->position(), "embeddings.position", fb::DType::F32, {rows, E}));
      if (!m->position) return c.status;
    }
    if ((k.type_vocab > 0) != (e->token_type() != nullptr))
      return c.fail(k.type_vocab > 0 ? "embeddings.token_type: tensor missing (config.type_vocab_size is " +
                                           std::to_string(k.type_vocab) + ")"
                                     : std::string("embeddings.token_type is present but config.type_vocab_size is 0")),
             c.status;
    if (e->token_type()) {
      m->token_type = static_cast<const float*>(
          check_tensor(c, e->token_type(), "embeddings.token_type", fb::DType::F32, {k.type_vocab, E}));
      if (!m->token_type) return c.status;
      m->has_token_types = true;
    }
    if (e->norm() || (m->family != Family::kQwen3 && m->family != Family::kGemma3)) {  // the word rows as they are
      if (!check_norm(c, e->norm(), "embeddings.norm", E, &m->embedding_norm)) return c.status;
    }
  }
  if (const fb::Linear* p = fm->embedding_projection()) {
    if (m->schema_version < 4) return c.fail("embedding_projection needs schema_version 4"), c.status;
    m->has_embedding_projection = true;
    if (!check_linear(c, p, "embedding_projection", E, H, false, &m->embedding_projection)) return c.status;
  } else if (E != H) {
    return c.fail("config.embedding_size " + std::to_string(E) + " differs from hidden_size " + std::to_string(H) +
                  " but the model has no embedding_projection"),
           c.status;
  }
  if (const fb::LayerNorm* f = fm->final_norm()) {
    m->has_final_norm = true;
    if (!check_norm(c, f, "final_norm", H, &m->final_norm)) return c.status;
  }

  const int stored = static_cast<int>(fm->layers()->size());
  if (!cfg->layer_map() && stored != k.layers) {
    c.fail("model has " + std::to_string(stored) + " layers, config says " + std::to_string(k.layers));
    return c.status;
  }
  if (stored < 1 || stored > k.layers)
    return c.fail("model stores " + std::to_string(stored) + " layers, expected 1.." + std::to_string(k.layers)), c.status;
  for (size_t i = 0; i < m->layer_map.size(); ++i)
    if (!in_range(m->layer_map[i], 0, stored - 1))
      return c.fail("config.layer_map[" + std::to_string(i) + "] = " + std::to_string(m->layer_map[i]) +
                    " is not a stored layer (0.." + std::to_string(stored - 1) + ")"),
             c.status;
  m->layers.resize(static_cast<size_t>(stored));
  for (int i = 0; i < stored; ++i) {
    const fb::EncoderLayer* L = fm->layers()->Get(i);
    LayerView& v = m->layers[i];
    const std::string p = "layer." + std::to_string(i) + ".";
    if (!check_linear(c, L->qkv(), p + "attention.qkv", H, k.qkv_width(), m->int8, &v.qkv) ||
        !check_linear(c, L->attention_output(), p + "attention.output", k.q_width(), H, m->int8, &v.attention_output) ||
        (!(m->pre_norm && !L->attention_norm()) &&  // pre-norm: absent = identity (ModernBERT layer 0)
         !check_norm(c, L->attention_norm(), p + "attention.norm", H, &v.attention_norm)) ||
        !check_linear(c, L->intermediate(), p + "intermediate", H, I_up, m->int8, &v.intermediate) ||
        !check_linear(c, L->output(), p + "output", I, H, m->int8, &v.output) ||
        !check_norm(c, L->output_norm(), p + "output.norm", H, &v.output_norm))
      return c.status;
    if (!check_qk_norms(c, L, p, k, m->int8, &v)) return c.status;
    if (L->attention_post_norm() || L->ffn_post_norm() || m->family == Family::kGemma3) {  // Gemma 3: both
      if (!check_norm(c, L->attention_post_norm(), p + "attention.post_norm", H, &v.attention_post_norm) ||
          !check_norm(c, L->ffn_post_norm(), p + "output.post_norm", H, &v.ffn_post_norm))
        return c.status;
      if (!m->pre_norm || !m->rms_norm)
        return c.fail(p + "branch post-norms need a pre-norm RMSNorm model (Gemma 3)"), c.status;
    }
    if (m->int8) {
      // Neighbour constraints of the int8 pipeline.
      const LinearView* all[] = {&v.qkv, &v.attention_output, &v.intermediate, &v.output};
      for (const LinearView* g : all)
        if (!g->has_quant) return c.fail(p + "GEMM '" + g->name + "' lacks quantization parameters"), c.status;
      if (v.qkv.int8 && v.qkv.output_zero_point != 0) return c.fail(p + "attention.qkv output must be symmetric"), c.status;
      if (v.qkv.output_scales) {
        const int d = k.head_dim();
        for (int ch = 0; ch < k.qkv_width(); ++ch)
          if (v.qkv.output_scales[ch] != v.qkv.output_scales[ch - ch % d])
            return c.fail(p + "attention.qkv output scales must be constant within each head"), c.status;
      }
      if (v.intermediate.output_scales)
        return c.fail(p + "intermediate output must have one scale (GELU table)"), c.status;
      if (v.attention_output.input_factors || v.output.input_factors)
        return c.fail(p + "input_channel_factors are only supported on qkv and intermediate"), c.status;
      for (const LinearView* g : all)
        if (g->input_factors && !g->int8)
          return c.fail(p + "GEMM '" + g->name + "': input_channel_factors on an fp32 GEMM"), c.status;
    }
  }
  if (!load_head(c, fm, m.get())) return c.status;
  if (!load_prompts(c, fm, m.get())) return c.status;
  if (!load_colbert_inputs(c, fm, m.get())) return c.status;
  const fb::Vocabulary* voc = fm->vocab();
  if (voc) {
    const size_t tokens = voc->ends() ? voc->ends()->size() : voc->tokens()->size();
    if (tokens != static_cast<size_t>(k.vocab))
      return c.fail("vocabulary has " + std::to_string(tokens) + " tokens, config says " + std::to_string(k.vocab)),
             c.status;
    m->has_vocab = true;
  }
  const fb::TokenModelSpec* tm = fm->tokenizer() ? fm->tokenizer()->model() : nullptr;
  if (m->schema_version < 8 && ((tm && (tm->vocab_text() || tm->vocab_ends() || tm->tables())) ||
                                (voc && (voc->text() || voc->ends() || voc->tables()))))
    return c.fail("model schema_version " + std::to_string(m->schema_version) +
                  " carries a one-text vocabulary or tokenizer tables (schema_version 8); the file is inconsistent"),
           c.status;
  if (fm->tokenizer() != nullptr || m->has_vocab) {
    auto tok = std::unique_ptr<text::Tokenizer>(new (std::nothrow) text::Tokenizer());
    if (!tok) return c.fail("tokenizer: out of memory", EB_ERROR_OUT_OF_MEMORY), c.status;
    Status st = Status::ok();
    if (fm->tokenizer()) {
      st = tok->init(fm->tokenizer(), k.vocab);
    } else {
      st = tok->init_vocabulary(voc);
      if (!st.is_ok() && st.code() == EB_ERROR_INVALID_MODEL) st = Status(st.code(), "vocabulary: " + st.message());
    }
    if (!st.is_ok()) return c.fail(st.message(), st.code()), c.status;
    m->text_tokenizer = std::move(tok);
  }
  if (fm->calibration() && fm->calibration()->source()) m->calibration_source = fm->calibration()->source()->str();
  if (const auto* id = fm->content_id()) {
    if (id->size() != m->content_id.size())
      return c.fail("content_id has " + std::to_string(id->size()) + " bytes, expected 16"), c.status;
    std::copy(id->begin(), id->end(), m->content_id.begin());
    m->has_content_id = true;
  }
  if (m->mapping_) {
    m->pin_run_time_arrays();
    m->advise_word_table_random();
  }
  *out = std::move(m);
  return EB_OK;
}

const float* Model::pin(const float* p, size_t count) {
  if (!p || count == 0) return p;
  pinned_.emplace_back(p, p + count);
  return pinned_.back().data();
}

void Model::pin_run_time_arrays() {
  const size_t hidden = static_cast<size_t>(config.hidden), head_dim = static_cast<size_t>(config.head_dim());
  auto pin_linear = [&](LinearView& l) {
    const size_t in = static_cast<size_t>(l.in), out = static_cast<size_t>(l.out);
    l.bias = pin(l.bias, out);
    l.weight_scales = pin(l.weight_scales, out);
    l.output_scales = pin(l.output_scales, out);
    l.input_factors = pin(l.input_factors, in);
  };
  auto pin_norm = [&](LayerNormView& n, size_t width) {
    n.gamma = pin(n.gamma, width);
    n.beta = pin(n.beta, width);
  };
  for (LayerView& L : layers) {
    for (LinearView* l : {&L.qkv, &L.attention_output, &L.intermediate, &L.output}) pin_linear(*l);
    for (LayerNormView* n : {&L.attention_norm, &L.output_norm, &L.attention_post_norm, &L.ffn_post_norm})
      pin_norm(*n, hidden);
    pin_norm(L.q_norm, head_dim);
    pin_norm(L.k_norm, head_dim);
    L.qk_norm_scales = pin(L.qk_norm_scales, static_cast<size_t>(config.q_width() + config.kv_width()));
  }
  pin_norm(final_norm, hidden);
  word_scales = pin(word_scales, static_cast<size_t>(config.vocab));
}

// madvise(advice) over the whole pages strictly inside [p, p + bytes), so that neighbouring data
// keeps its state.
static void advise_inner_pages(const void* p, size_t bytes, int advice) {
  const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const uintptr_t begin = (reinterpret_cast<uintptr_t>(p) + page - 1) & ~(page - 1);
  const uintptr_t end = (reinterpret_cast<uintptr_t>(p) + bytes) & ~(page - 1);
  if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, advice);
}

void Model::advise_word_table_random() const {
  if (!mapping_ || task == Task::kMaskedLm) return;
  const size_t vocab = static_cast<size_t>(config.vocab);
  const size_t width = static_cast<size_t>(embedding_size > 0 ? embedding_size : config.hidden);
  const void* p = word_s4   ? static_cast<const void*>(word_s4)
                  : word_s8 ? static_cast<const void*>(word_s8)
                            : static_cast<const void*>(word_f32);
  const size_t bytes = word_s4 ? vocab * ((width + 1) / 2) : word_s8 ? vocab * width : vocab * width * sizeof(float);
  if (p) advise_inner_pages(p, bytes, MADV_RANDOM);
}

void Model::release_weight_pages(const LinearView& g) const {
  if (!mapping_) return;
  const size_t count = static_cast<size_t>(g.in) * static_cast<size_t>(g.out);
  const void* p = g.int4   ? static_cast<const void*>(g.weight_s4)
                  : g.int8 ? static_cast<const void*>(g.weight_s8)
                           : static_cast<const void*>(g.weight_f32);
  const size_t bytes = g.int4 ? static_cast<size_t>(g.out) * int4::row_bytes(g.in) : g.int8 ? count : count * sizeof(float);
  if (p) advise_inner_pages(p, bytes, MADV_DONTNEED);
}

eb_status Model::load_file_checked(const char* path, std::unique_ptr<Model>* out, std::string* error) {
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (error) *error = std::string(path) + ": cannot open: " + std::strerror(errno);
    return EB_ERROR_IO;
  }
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    const bool dir = S_ISDIR(st.st_mode);
    ::close(fd);
    if (error)
      *error = std::string(path) + (dir ? ": a folder, not a model file (a HuggingFace checkpoint folder? convert it "
                                          "first: edgebert-convert --input HF_DIR --output MODEL.ebm)"
                                        : ": not a regular file");
    return EB_ERROR_IO;
  }
  const size_t size = static_cast<size_t>(st.st_size);
  if (size == 0) {
    ::close(fd);
    if (error) *error = std::string(path) + ": empty file, not an edgebert model";
    return EB_ERROR_INVALID_MODEL;
  }
  void* p = mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  if (p == MAP_FAILED) {
    if (error) *error = std::string(path) + ": mmap failed: " + std::strerror(errno);
    return EB_ERROR_IO;
  }
  std::string why;
  const eb_status s = create_checked(p, size, p, size, out, &why);
  if (s != EB_OK && error) *error = std::string(path) + ": " + why;
  return s;
}

}  // namespace edgebert
