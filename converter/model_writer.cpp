// SPDX-License-Identifier: Apache-2.0
// model_writer.cpp: FlatBuffer construction for the .ebm format (see schemas/edgebert.fbs),
// schema_version 3: model type, FFN activation, task head, labels and sentence pooling (2), and the
// content id (3): 16 bytes of content_hash128 over the finished buffer with the id still zero.
#include "converter/model_writer.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <stdexcept>

#include "content_hash.h"
#include "converter/tokenizer/tokenizer_json.h"
#include "edgebert_generated.h"
#include "model_file_layout.h"
#include "text/tokenizer.h"

namespace edgebert::convert {
namespace {

namespace fb = edgebert::fb;
using flatbuffers::FlatBufferBuilder;
using flatbuffers::Offset;

// Payload bytes kept inline before a file switches to external payloads (schema_version 7): the
// limit less room for everything else (vocabulary, tokenizer, scales: tens of MB at most).
constexpr uint64_t kInlinePayloadLimit = kMaxFlatBuffer - (uint64_t{256} << 20);
// Payloads this small stay inline even in a file with external payloads (norms, biases).
constexpr size_t kExternalMinBytes = 4096;

uint64_t round_up_payload(uint64_t n) { return (n + kPayloadAlignment - 1) / kPayloadAlignment * kPayloadAlignment; }

// Where a build puts the tensor payloads: nowhere (kCount: a first pass that only adds up their
// bytes, so the real pass knows whether they fit inline without copying them twice), inline
// (every file that fits), or every payload of kExternalMinBytes or more after the FlatBuffer.
enum class Payloads { kCount, kInline, kExternal };

// The FlatBuffer under construction and where its tensor payloads go; external ones at 64-byte
// aligned offsets from the FlatBuffer's end (the bytes stay the caller's until the file is made).
struct Builder : FlatBufferBuilder {
  explicit Builder(Payloads where) : FlatBufferBuilder(1 << 20), payloads(where), external(where == Payloads::kExternal) {}
  struct Blob {
    const uint8_t* data;
    size_t size;
    uint64_t offset;
  };
  const Payloads payloads;
  const bool external;
  uint64_t inline_bytes = 0;
  uint64_t external_bytes = 0;
  std::vector<Blob> blobs;
  // True (and the payload's offset) when it goes after the FlatBuffer.
  bool place(const void* data, size_t n, uint64_t* offset) {
    if (external && n >= kExternalMinBytes) {
      *offset = external_bytes;
      blobs.push_back({static_cast<const uint8_t*>(data), n, external_bytes});
      external_bytes += round_up_payload(n);
      return true;
    }
    inline_bytes += n;
    return false;
  }
  // The payload vector of a tensor: its bytes, or empty when placed after the FlatBuffer (or
  // only counted).
  Offset<flatbuffers::Vector<uint8_t>> payload(const void* data, size_t n, uint64_t* external_offset, bool* is_external) {
    *is_external = place(data, n, external_offset);
    if (*is_external || payloads == Payloads::kCount) return CreateVector(static_cast<const uint8_t*>(nullptr), size_t{0});
    ForceVectorAlignment(n, 1, kPayloadAlignment);
    return CreateVector(static_cast<const uint8_t*>(data), n);
  }
};

// The converter's enums are written by value.
static_assert(static_cast<int>(fb::Task::SENTENCE_EMBEDDING) == static_cast<int>(Task::kSentenceEmbedding) &&
              static_cast<int>(fb::Task::TOKEN_CLASSIFICATION) == static_cast<int>(Task::kTokenClassification) &&
              static_cast<int>(fb::Task::QUESTION_ANSWERING) == static_cast<int>(Task::kQuestionAnswering) &&
              static_cast<int>(fb::Task::TOKEN_VECTORS) == static_cast<int>(Task::kTokenVectors) &&
              static_cast<int>(fb::Task::BGE_M3) == static_cast<int>(Task::kBgeM3));
static_assert(static_cast<int>(fb::Pooling::MAX_TOKENS) == static_cast<int>(PoolingMode::kMax) &&
              static_cast<int>(fb::Pooling::MEAN_SQRT_LEN) == static_cast<int>(PoolingMode::kMeanSqrtLen));
static_assert(static_cast<int>(fb::Activation::RELU) == static_cast<int>(HiddenAct::kRelu) &&
              static_cast<int>(fb::Activation::GELU_TANH) == static_cast<int>(HiddenAct::kGeluTanh));

Offset<fb::Tensor> tensor(Builder& b, const std::string& name, fb::DType dtype,
                          std::vector<int64_t> shape, const void* data, size_t nbytes,
                          const std::vector<float>* scales = nullptr) {
  auto n = b.CreateString(name);
  auto s = b.CreateVector(shape);
  Offset<flatbuffers::Vector<float>> sc;
  if (scales) sc = b.CreateVector(*scales);
  uint64_t external_offset = 0;
  bool external = false;
  auto d = b.payload(data, nbytes, &external_offset, &external);
  fb::TensorBuilder tb(b);
  tb.add_name(n);
  tb.add_dtype(dtype);
  tb.add_shape(s);
  tb.add_data(d);
  if (scales) tb.add_scales(sc);
  if (external) {
    tb.add_external_offset(external_offset);
    tb.add_external_size(nbytes);
  }
  return tb.Finish();
}

// An I4 tensor [rows, cols]: packed nibbles and bf16 block scales (backend/int4_weights.h).
Offset<fb::Tensor> int4_tensor(Builder& b, const std::string& name, int64_t rows, int64_t cols,
                               const int4::Quantized& q) {
  auto n = b.CreateString(name);
  auto s = b.CreateVector(std::vector<int64_t>{rows, cols});
  auto sc = b.CreateVector(q.scales);
  uint64_t external_offset = 0;
  bool external = false;
  auto d = b.payload(q.packed.data(), q.packed.size(), &external_offset, &external);
  fb::TensorBuilder tb(b);
  tb.add_name(n);
  tb.add_dtype(fb::DType::I4);
  tb.add_shape(s);
  tb.add_data(d);
  tb.add_block_size(q.block);
  tb.add_block_scales(sc);
  if (external) {
    tb.add_external_offset(external_offset);
    tb.add_external_size(q.packed.size());
  }
  return tb.Finish();
}

Offset<fb::Tensor> f32_tensor(Builder& b, const std::string& name, const std::vector<float>& v,
                              std::vector<int64_t> shape) {
  return tensor(b, name, fb::DType::F32, std::move(shape), v.data(), v.size() * sizeof(float));
}

Offset<fb::ActQuant> act_quant(Builder& b, const ActivationQuant& q) {
  Offset<flatbuffers::Vector<float>> sc;
  if (!q.channel_scales.empty()) sc = b.CreateVector(q.channel_scales);
  fb::ActQuantBuilder ab(b);
  ab.add_scale(q.scale);
  ab.add_zero_point(q.zero_point);
  if (!q.channel_scales.empty()) ab.add_scales(sc);
  ab.add_observed_min(q.observed_min);
  ab.add_observed_max(q.observed_max);
  ab.add_range_method(q.mse ? fb::RangeMethod::MSE : q.headroom ? fb::RangeMethod::HEADROOM : fb::RangeMethod::MINMAX);
  return ab.Finish();
}

Offset<fb::Linear> linear(Builder& b, const FloatLinear& f, const ConvertedLinear* c, bool int8_model) {
  Offset<fb::Tensor> w;
  if (c && c->int8 && c->int4) {
    w = int4_tensor(b, f.name + ".weight", f.out, f.in, c->weight4);
  } else if (c && c->int8) {
    w = tensor(b, f.name + ".weight", fb::DType::I8, {f.out, f.in}, c->weight.q.data(), c->weight.q.size(),
               &c->weight.scales);
  } else {
    w = f32_tensor(b, f.name + ".weight", f.weight, {f.out, f.in});
  }
  Offset<fb::Tensor> bias;
  if (!f.bias.empty()) bias = f32_tensor(b, f.name + ".bias", f.bias, {f.out});
  Offset<fb::ActQuant> in, out;
  Offset<flatbuffers::Vector<float>> factors;
  if (c && int8_model) {
    in = act_quant(b, c->input);
    out = act_quant(b, c->output);
    if (c->int8 && !c->input_factors.empty()) factors = b.CreateVector(c->input_factors);
  }
  auto name = b.CreateString(f.name);
  fb::LinearBuilder lb(b);
  lb.add_name(name);
  lb.add_precision(c && c->int8 ? fb::Precision::INT8 : fb::Precision::FP32);
  lb.add_in_features(f.in);
  lb.add_out_features(f.out);
  lb.add_weight(w);
  if (!bias.IsNull()) lb.add_bias(bias);
  if (c && int8_model) {
    lb.add_input_quant(in);
    lb.add_output_quant(out);
    if (!factors.IsNull()) {
      lb.add_input_channel_factors(factors);
      lb.add_smoothing_alpha(c->smoothing_alpha);
    }
  }
  return lb.Finish();
}

// The masked-LM decoder [vocab, E]: its weight is the word table `word` itself (one tensor, two
// references), int8 with per-row scales in int8 models (= per output channel), whose input and
// per-channel output quantization `q` the converter chose.
Offset<fb::Linear> tied_decoder(Builder& b, const FloatBert& m, Offset<fb::Tensor> word,
                                const ConvertedLinear* q) {
  Offset<fb::Tensor> bias;
  const int V = m.config.vocab_size, E = m.embedding_size > 0 ? m.embedding_size : m.config.hidden_size;
  if (!m.mlm_bias.empty()) bias = f32_tensor(b, "mlm.decoder.bias", m.mlm_bias, {V});
  Offset<fb::ActQuant> in, out;
  if (q) {
    in = act_quant(b, q->input);
    out = act_quant(b, q->output);
  }
  auto name = b.CreateString("mlm.decoder");
  fb::LinearBuilder lb(b);
  lb.add_name(name);
  lb.add_precision(q ? fb::Precision::INT8 : fb::Precision::FP32);
  lb.add_in_features(E);
  lb.add_out_features(V);
  lb.add_weight(word);
  if (!bias.IsNull()) lb.add_bias(bias);
  if (q) {
    lb.add_input_quant(in);
    lb.add_output_quant(out);
  }
  return lb.Finish();
}

Offset<fb::LayerNorm> layer_norm(Builder& b, const std::string& name, const FloatLayerNorm& n) {
  const int64_t H = static_cast<int64_t>(n.gamma.size());
  auto g = f32_tensor(b, name + ".gamma", n.gamma, {H});
  Offset<fb::Tensor> be;
  if (!n.beta.empty()) be = f32_tensor(b, name + ".beta", n.beta, {H});
  return fb::CreateLayerNorm(b, g, be);
}

}  // namespace

int64_t position_rows(const FloatBert& m, int max_sequence) {
  if (m.positions == PositionScheme::kNone) return 0;
  const int64_t rows = m.positions == PositionScheme::kPaddingOffset ? int64_t(max_sequence) + m.padding_idx + 1
                                                                     : int64_t(max_sequence);
  return std::min<int64_t>(rows, m.config.max_position_embeddings);
}

namespace {

// The model file's bytes, its payloads placed as `where` says; with Payloads::kCount nothing is
// made and *payload_bytes gets the bytes the payloads would take inline.
ModelBytes build(const ConvertedModel& cm, Payloads where, uint64_t* payload_bytes = nullptr) {
  const FloatBert& m = *cm.model;
  const BertConfig& c = m.config;
  const int64_t H = c.hidden_size;
  Builder b(where);

  Offset<fb::Vocabulary> vocab;
  if (cm.vocab && !cm.vocab->empty()) {
    auto find = [&](const char* t) {  // a later duplicate wins, as in HF's vocabulary map
      for (size_t i = cm.vocab->size(); i-- > 0;)
        if ((*cm.vocab)[i] == t) return static_cast<int>(i);
      return -1;
    };
    text::BertVocabOptions opt;
    opt.lowercase = cm.do_lower_case;
    opt.handle_chinese_chars = cm.tokenize_chinese_chars;
    opt.unk_id = find("[UNK]");
    opt.cls_id = find("[CLS]");
    opt.sep_id = find("[SEP]");
    opt.pad_id = find("[PAD]");
    // schema_version 8: the tokens as one text, and the WordPiece tables the runtime builds from
    // them (none when it refuses the vocabulary: the loader then refuses it with its reason)
    auto tokens = b.CreateVector(std::vector<Offset<flatbuffers::String>>{});
    const VocabTextBytes one = vocab_text_bytes(*cm.vocab, "vocab.txt");
    auto text_off = b.CreateVector(one.text);
    auto ends_off = b.CreateVector(one.ends);
    Offset<fb::TokenizerTables> tables_off;
    text::Tokenizer tok;
    if (tok.init_bert_vocab(std::vector<std::string_view>(cm.vocab->begin(), cm.vocab->end()), opt).is_ok())
      tables_off = write_tokenizer_tables(b, table_bytes(tok));
    fb::VocabularyBuilder vb(b);
    vb.add_tokens(tokens);
    vb.add_do_lower_case(opt.lowercase);
    vb.add_tokenize_chinese_chars(opt.handle_chinese_chars);
    vb.add_unk_id(opt.unk_id);
    vb.add_cls_id(opt.cls_id);
    vb.add_sep_id(opt.sep_id);
    vb.add_pad_id(opt.pad_id);
    vb.add_text(text_off);
    vb.add_ends(ends_off);
    if (!tables_off.IsNull()) vb.add_tables(tables_off);
    vocab = vb.Finish();
  }

  const int64_t E = m.embedding_size > 0 ? m.embedding_size : H;
  Offset<fb::Embeddings> emb;
  Offset<fb::Tensor> word;  // also the tied masked-LM decoder's weight
  if (m.has_embeddings) {
    if (cm.int8 && cm.word_int4) {
      word = int4_tensor(b, "embeddings.word", c.vocab_size, E, cm.word_embeddings4);
    } else if (cm.int8) {
      word = tensor(b, "embeddings.word", fb::DType::I8, {c.vocab_size, E}, cm.word_embeddings.q.data(),
                    cm.word_embeddings.q.size(), &cm.word_embeddings.scales);
    } else {
      word = f32_tensor(b, "embeddings.word", m.word_embeddings, {c.vocab_size, E});
    }
    Offset<fb::Tensor> pos;
    if (m.positions != PositionScheme::kNone) {
      const int64_t pos_rows = position_rows(m, cm.max_position);
      pos = tensor(b, "embeddings.position", fb::DType::F32, {pos_rows, E}, m.position_embeddings.data(),
                   static_cast<size_t>(pos_rows * E) * sizeof(float));
    }
    Offset<fb::Tensor> type;
    if (c.has_token_types())
      type = f32_tensor(b, "embeddings.token_type", m.token_type_embeddings, {c.type_vocab_size, E});
    Offset<fb::LayerNorm> norm;
    if (m.has_embedding_norm) norm = layer_norm(b, "embeddings.norm", m.embedding_norm);
    emb = fb::CreateEmbeddings(b, word, pos, type, norm);
  }

  std::vector<Offset<fb::EncoderLayer>> layers;
  for (size_t i = 0; i < m.layers.size(); ++i) {
    const FloatLayer& L = m.layers[i];
    const auto* conv = cm.layers.empty() ? nullptr : &cm.layers[i];
    auto cl = [&](GemmKind k) { return conv ? &(*conv)[static_cast<int>(k)] : nullptr; };
    const std::string p = "layer." + std::to_string(i) + ".";
    auto qkv = linear(b, L.qkv, cl(GemmKind::kQkv), cm.int8);
    auto ao = linear(b, L.attention_output, cl(GemmKind::kAttentionOutput), cm.int8);
    Offset<fb::LayerNorm> an;
    if (L.has_attention_norm) an = layer_norm(b, p + "attention.norm", L.attention_norm);
    auto it = linear(b, L.intermediate, cl(GemmKind::kIntermediate), cm.int8);
    auto ou = linear(b, L.output, cl(GemmKind::kOutput), cm.int8);
    auto on = layer_norm(b, p + "output.norm", L.output_norm);
    Offset<fb::LayerNorm> qn, kn;
    Offset<flatbuffers::Vector<float>> qk_scales;
    if (L.has_qk_norm) {
      qn = layer_norm(b, p + "attention.q_norm", L.q_norm);
      kn = layer_norm(b, p + "attention.k_norm", L.k_norm);
      if (cm.int8 && i < cm.qk_norm_scales.size() && !cm.qk_norm_scales[i].empty() &&
          (*conv)[static_cast<int>(GemmKind::kQkv)].int8)
        qk_scales = b.CreateVector(cm.qk_norm_scales[i]);
    }
    Offset<fb::LayerNorm> apn, fpn;
    if (L.has_post_norms) {
      apn = layer_norm(b, p + "attention.post_norm", L.attention_post_norm);
      fpn = layer_norm(b, p + "output.post_norm", L.ffn_post_norm);
    }
    layers.push_back(fb::CreateEncoderLayer(b, qkv, ao, an, it, ou, on, qn, kn, qk_scales, apn, fpn));
  }
  auto layers_vec = b.CreateVector(layers);

  Offset<fb::Linear> pooler, classifier, pre_classifier;
  if (m.has_pooler) pooler = linear(b, m.pooler, nullptr, false);
  if (m.has_pre_classifier) pre_classifier = linear(b, m.pre_classifier, nullptr, false);
  if (m.num_labels > 0) classifier = linear(b, m.classifier, nullptr, false);
  Offset<fb::Linear> mlm_transform, mlm_decoder;
  Offset<fb::LayerNorm> mlm_norm;
  if (m.task == Task::kMaskedLm) {
    mlm_transform = linear(b, m.mlm_transform, nullptr, false);
    mlm_norm = layer_norm(b, "mlm.norm", m.mlm_norm);
    mlm_decoder = tied_decoder(b, m, word, cm.int8 ? &cm.mlm_decoder : nullptr);
  }
  Offset<flatbuffers::Vector<Offset<flatbuffers::String>>> labels;
  if (!m.labels.empty()) labels = b.CreateVectorOfStrings(m.labels);
  Offset<fb::SentencePooling> pooling;
  Offset<fb::Linear> sparse_linear;
  Offset<flatbuffers::Vector<int32_t>> sparse_unused_ids;
  if (m.task == Task::kBgeM3) {  // the dense output is the sentence pooling below (CLS, normalize)
    sparse_linear = linear(b, m.sparse_linear, nullptr, false);
    sparse_unused_ids = b.CreateVector(m.sparse_unused_ids);
  }
  if (m.task == Task::kSentenceEmbedding || m.task == Task::kBgeM3) {
    Offset<flatbuffers::Vector<Offset<fb::SentenceDense>>> dense;
    if (!m.dense.empty()) {
      std::vector<Offset<fb::SentenceDense>> d;
      for (size_t i = 0; i < m.dense.size(); ++i)
        d.push_back(fb::CreateSentenceDense(b, linear(b, m.dense[i], nullptr, false), m.dense_tanh[i]));
      dense = b.CreateVector(d);
    }
    pooling = fb::CreateSentencePooling(b, static_cast<fb::Pooling>(static_cast<int>(m.pooling)), m.normalize, dense);
  }

  bool any_int4 = false;
  for (const auto& layer : cm.layers)
    for (const ConvertedLinear& g : layer) any_int4 = any_int4 || (g.int8 && g.int4);
  any_int4 = any_int4 || (cm.int8 && cm.word_int4);
  // (masked-LM and token-vector files are version 5, whose readers take the family from the family field)
  const bool new_task = m.task == Task::kMaskedLm || m.task == Task::kTokenVectors || m.task == Task::kBgeM3;
  // (files with a tokenizer are version 8, for its tables, and are read by their family fields too)
  const bool tables = cm.tokenizer != nullptr || !vocab.IsNull();
  const bool family_fields = !c.is_bert_or_distilbert() || any_int4 || new_task || tables;
  const bool gemma_fields = m.family() == Family::kGemma3 || !m.dense.empty() || !m.prompts.empty() || m.colbert.present;
  Offset<fb::ColbertInputs> colbert_inputs;
  if (m.colbert.present) {
    const auto skip = b.CreateVector(m.colbert.skiplist_ids);
    fb::ColbertInputsBuilder cb(b);
    cb.add_query_prefix_id(m.colbert.query_prefix_id);
    cb.add_document_prefix_id(m.colbert.document_prefix_id);
    cb.add_query_length(m.colbert.query_length);
    cb.add_document_length(m.colbert.document_length);
    cb.add_expansion_id(m.colbert.expansion_id);
    cb.add_attend_to_expansion(m.colbert.attend_to_expansion);
    cb.add_skiplist_ids(skip);
    colbert_inputs = cb.Finish();
  }
  Offset<flatbuffers::Vector<Offset<fb::Prompt>>> prompts;
  if (!m.prompts.empty()) {
    std::vector<Offset<fb::Prompt>> v;
    for (const auto& [name, text] : m.prompts) v.push_back(fb::CreatePromptDirect(b, name.c_str(), text.c_str()));
    prompts = b.CreateVector(v);
  }
  Offset<flatbuffers::String> default_prompt;
  if (!m.default_prompt_name.empty()) default_prompt = b.CreateString(m.default_prompt_name);
  const bool llm_fields = gemma_fields || m.family() == Family::kQwen3 || m.rms_norm || m.causal || !m.has_embedding_norm ||
                          m.kv_heads() != c.num_attention_heads || m.q_width() != c.hidden_size ||
                          (m.task == Task::kSentenceEmbedding && m.pooling == PoolingMode::kLastToken) ||
                          new_task;
  Offset<fb::Linear> projection;
  Offset<fb::LayerNorm> final_norm, head_norm;
  Offset<fb::Rotary> rotary;
  Offset<flatbuffers::Vector<int32_t>> layer_map, local_window;
  if (family_fields) {
    if (m.has_embedding_projection) projection = linear(b, m.embedding_projection, nullptr, false);
    if (m.has_final_norm) final_norm = layer_norm(b, "final_norm", m.final_norm);
    if (m.has_head_norm) head_norm = layer_norm(b, "head.norm", m.head_norm);
    if (m.rotary.dims > 0)
      rotary = fb::CreateRotary(b, m.rotary.dims, m.rotary.interleaved, m.rotary.theta, m.rotary.local_theta,
                                m.rotary.ntk_factor, m.rotary.ntk_max_trained);
    bool identity = m.num_applied_layers() == static_cast<int>(m.layers.size());
    for (int i = 0; i < m.num_applied_layers(); ++i) identity = identity && m.stored_layer(i) == i;
    if (!identity) layer_map = b.CreateVector(m.layer_map);
    if (std::any_of(m.local_window.begin(), m.local_window.end(), [](int w) { return w > 0; }))
      local_window = b.CreateVector(m.local_window);
  }
  auto model_type = b.CreateString(c.model_type);
  fb::ConfigBuilder cb(b);
  cb.add_hidden_size(c.hidden_size);
  cb.add_num_attention_heads(c.num_attention_heads);
  // the number of layers the model applies (ALBERT: more than it stores)
  cb.add_num_hidden_layers(m.num_applied_layers());
  cb.add_intermediate_size(c.intermediate_size);
  cb.add_vocab_size(c.vocab_size);
  cb.add_max_position_embeddings(cm.max_position);
  cb.add_type_vocab_size(c.type_vocab_size);
  cb.add_layer_norm_eps(c.layer_norm_eps);
  cb.add_num_labels(m.num_labels);
  cb.add_model_type(model_type);
  cb.add_hidden_act(static_cast<fb::Activation>(static_cast<int>(c.activation)));
  if (family_fields) {
    cb.add_family(static_cast<fb::Family>(static_cast<int>(m.family())));
    cb.add_position_ids(static_cast<fb::PositionIds>(static_cast<int>(m.positions)));
    cb.add_padding_idx(m.padding_idx);
    cb.add_embedding_size(static_cast<int32_t>(E));
    cb.add_pre_norm(m.pre_norm);
    cb.add_ffn(m.gated_ffn ? fb::FfnKind::GATED : fb::FfnKind::PLAIN);
    if (!rotary.IsNull()) cb.add_rotary(rotary);
    if (!layer_map.IsNull()) cb.add_layer_map(layer_map);
    if (!local_window.IsNull()) cb.add_local_window(local_window);
  }
  if (llm_fields) {
    if (m.kv_heads() != c.num_attention_heads) cb.add_num_key_value_heads(m.kv_heads());
    if (m.q_width() != c.hidden_size || c.family.head_dim > 0) cb.add_head_dim(m.head_dim());
    cb.add_norm(m.rms_norm ? fb::NormKind::RMS_NORM : fb::NormKind::LAYER_NORM);
    cb.add_causal(m.causal);
  }
  auto config = cb.Finish();
  Offset<fb::Calibration> calib;
  if (cm.int8)
    calib = fb::CreateCalibrationDirect(b, cm.calibration_source.c_str(), cm.calibration_sequences,
                                        cm.calibration_tokens, cm.calibration_method.c_str());
  auto producer = b.CreateString(std::string("edgebert-convert ") + EDGEBERT_VERSION_STRING);

  const uint8_t zero_id[16] = {};
  auto content_id = b.CreateVector(zero_id, sizeof zero_id);  // filled in once the buffer is finished
  Offset<fb::TokenizerSpec> tokenizer;
  if (cm.tokenizer) tokenizer = write_tokenizer_spec(b, *cm.tokenizer);

  b.ForceDefaults(true);  // always store schema_version, so readers (and tests) see it explicitly
  fb::ModelBuilder mb(b);
  const bool regex_split = cm.tokenizer && cm.tokenizer->uses_regex;  // a version-4 reader would run it as a literal
  mb.add_schema_version(tables ? kTokenTablesSchemaVersion : b.external ? kExternalDataSchemaVersion : gemma_fields ? kGemmaSchemaVersion : llm_fields || any_int4 || regex_split ? kLlmSchemaVersion : family_fields ? kFamilySchemaVersion : 3);  // 3: the content id
  mb.add_content_id(content_id);
  if (b.external) mb.add_external_data_start(1);  // set once the FlatBuffer's size is known
  mb.add_producer(producer);
  mb.add_config(config);
  mb.add_precision(cm.int8 ? fb::Precision::INT8 : fb::Precision::FP32);
  if (!vocab.IsNull()) mb.add_vocab(vocab);
  if (!emb.IsNull()) mb.add_embeddings(emb);
  mb.add_layers(layers_vec);
  if (!pooler.IsNull()) mb.add_pooler(pooler);
  if (!classifier.IsNull()) mb.add_classifier(classifier);
  if (!calib.IsNull()) mb.add_calibration(calib);
  mb.add_task(static_cast<fb::Task>(static_cast<int>(m.task)));
  if (!pre_classifier.IsNull()) mb.add_pre_classifier(pre_classifier);
  if (!labels.IsNull()) mb.add_labels(labels);
  if (!pooling.IsNull()) mb.add_sentence_pooling(pooling);
  if (!prompts.IsNull()) mb.add_prompts(prompts);
  if (!default_prompt.IsNull()) mb.add_default_prompt_name(default_prompt);
  if (family_fields) {
    if (!projection.IsNull()) mb.add_embedding_projection(projection);
    if (!final_norm.IsNull()) mb.add_final_norm(final_norm);
    if (m.has_pre_classifier)
      mb.add_pre_classifier_act(static_cast<fb::Activation>(static_cast<int>(m.pre_classifier_act)));
    if (!head_norm.IsNull()) mb.add_head_norm(head_norm);
    mb.add_head_input(m.head_per_token ? fb::HeadInput::PER_TOKEN
                      : m.head_mean_pooling ? fb::HeadInput::MEAN
                                            : fb::HeadInput::CLS);
  }
  if (!tokenizer.IsNull()) mb.add_tokenizer(tokenizer);
  if (m.score_sigmoid) mb.add_score_function(fb::ScoreFunction::SIGMOID);
  if (m.task == Task::kMaskedLm) {
    mb.add_mlm_transform(mlm_transform);
    mb.add_mlm_transform_act(static_cast<fb::Activation>(static_cast<int>(m.mlm_act)));
    mb.add_mlm_norm(mlm_norm);
    mb.add_mlm_decoder(mlm_decoder);
  }
  if (!sparse_linear.IsNull()) {
    mb.add_sparse_linear(sparse_linear);
    mb.add_sparse_unused_ids(sparse_unused_ids);
  }
  if (!colbert_inputs.IsNull()) mb.add_colbert_inputs(colbert_inputs);
  fb::FinishModelBuffer(b, mb.Finish());
  if (where == Payloads::kCount) {
    *payload_bytes = b.inline_bytes;
    return ModelBytes();
  }
  // FlatBuffers holds at most 2 GiB (32-bit offsets); the payloads went after it if they would not
  // fit, so only a model whose other parts are that large is refused.
  if (b.GetSize() > kMaxFlatBuffer)
    throw std::runtime_error("the model's FlatBuffer would be " + std::to_string(b.GetSize()) +
                             " bytes, over the format's limit of " + std::to_string(kMaxFlatBuffer) +
                             " (FlatBuffers' 2 GiB) even with its weights stored after it");
  // The content id names what was written: a hash of the whole file (id bytes zero), so the
  // runtime's weight cache file can be keyed by it without hashing the model at every load.
  auto stamp_content_id = [](uint8_t* file, size_t size) {
    const ContentId id = content_hash128(file, size);
    flatbuffers::Vector<uint8_t>* stored = fb::GetMutableModel(file)->mutable_content_id();
    for (size_t i = 0; i < id.size(); ++i) stored->Mutate(static_cast<flatbuffers::uoffset_t>(i), id[i]);
  };
  if (!b.external) {
    stamp_content_id(b.GetBufferPointer(), b.GetSize());
    return ModelBytes(b.Release());
  }
  // schema_version 7: the FlatBuffer, zeros to a 64-byte boundary, then the payloads in order.
  const uint64_t start = round_up_payload(b.GetSize());
  if (b.external_bytes > static_cast<uint64_t>(SIZE_MAX) - start)
    throw std::runtime_error("the model would be " + std::to_string(start + b.external_bytes) +
                             " bytes, more than this converter's address space holds");
  std::vector<uint8_t> file(static_cast<size_t>(start + b.external_bytes), 0);
  std::memcpy(file.data(), b.GetBufferPointer(), b.GetSize());
  for (const Builder::Blob& blob : b.blobs) std::memcpy(file.data() + start + blob.offset, blob.data, blob.size);
  if (!fb::GetMutableModel(file.data())->mutate_external_data_start(start))
    throw std::logic_error("model writer: external_data_start was not stored");
  stamp_content_id(file.data(), file.size());
  return ModelBytes(std::move(file));
}

}  // namespace

ModelBytes build_model_buffer(const ConvertedModel& cm, uint64_t inline_payload_limit) {
  const uint64_t limit = inline_payload_limit != 0 ? inline_payload_limit : kInlinePayloadLimit;
  uint64_t payload_bytes = 0;
  build(cm, Payloads::kCount, &payload_bytes);
  // payloads that would pass 2 GiB go after the FlatBuffer
  return build(cm, payload_bytes > limit ? Payloads::kExternal : Payloads::kInline);
}

void write_file_atomically(const std::string& path, const uint8_t* bytes, size_t size) {
  std::string tmp = path + ".tmp.XXXXXX";
  std::vector<char> name(tmp.begin(), tmp.end());
  name.push_back('\0');
  const int fd = mkstemp(name.data());
  if (fd < 0) throw std::runtime_error(path + ": cannot create temporary output file: " + std::strerror(errno));
  size_t done = 0;
  while (done < size) {
    const ssize_t w = ::write(fd, bytes + done, size - done);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      const std::string why = std::strerror(errno);
      ::close(fd);
      ::unlink(name.data());
      throw std::runtime_error(path + ": write failed: " + why);
    }
    done += static_cast<size_t>(w);
  }
  fchmod(fd, 0644);
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    const std::string why = std::strerror(errno);
    ::unlink(name.data());
    throw std::runtime_error(path + ": cannot finish writing: " + why);
  }
  if (std::rename(name.data(), path.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    ::unlink(name.data());
    throw std::runtime_error(path + ": cannot rename temporary file into place: " + why);
  }
}

}  // namespace edgebert::convert
