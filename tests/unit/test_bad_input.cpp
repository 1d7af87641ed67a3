// SPDX-License-Identifier: Apache-2.0
// test_bad_input.cpp: every corruption of a model file and every misuse of the C API gets a
// status code and a message, never a crash (this suite also runs under ASan + UBSan).
#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "converter/converter.h"
#include "edgebert_generated.h"
#include "test_support.h"

using namespace edgebert::test;

namespace {

// Loads `bytes` from memory; when it loads, also runs it once (a corrupted-but-accepted model
// must still be safe to run).
eb_status load_and_maybe_run(const std::vector<uint8_t>& bytes, std::string* message) {
  AlignedBuffer buf(bytes);
  ModelHandle m;
  char err[512] = "";
  const eb_status s = eb_model_load_memory(buf.data, buf.size, &m.m, err, sizeof err);
  *message = err;
  if (s != EB_OK) {
    CHECK(m.m == nullptr);
    return s;
  }
  SessionHandle session;
  eb_session_options o;
  eb_session_options_init(&o);
  o.max_sequence_length = 8;
  if (eb_session_create(m.m, &o, &session.s, err, sizeof err) == EB_OK) {
    const int32_t ids[4] = {101, 7, 8, 102};
    // it may fail (a corrupted table can be out of range), but then with a message
    if (eb_session_run_ids(session.s, ids, nullptr, nullptr, 4) != EB_OK) CHECK(*eb_session_last_error(session.s) != '\0');
  }
  return s;
}

std::vector<uint8_t> tiny_model(const char* kind) { return read_bytes(ebm_path("tiny_f16", kind)); }

// Reference checkpoint `name` converted to fp32 without its vocabulary: a BERT / DistilBERT file
// of schema_version 3, as converters wrote before the vocabulary's tables (version 8), for the
// checks of older versions' semantics.
std::vector<uint8_t> without_vocab(const char* name) {
  std::vector<std::string> notes;
  std::string weights_dir;
  const auto model = edgebert::convert::load_model_dir(testdata_dir() + "/" + name, &notes, &weights_dir);
  edgebert::convert::ConvertOptions o;
  o.fp32 = true;
  o.quiet = true;
  const auto r = edgebert::convert::convert_model(model, nullptr, o);
  std::vector<uint8_t> b(r.buffer.data(), r.buffer.data() + r.buffer.size());
  REQUIRE(edgebert::fb::GetModel(b.data())->schema_version() == 3);
  return b;
}

}  // namespace

TEST_CASE("wrong identifier, empty and tiny files are rejected", "[bad-model]") {
  std::string msg;
  for (const char* kind : {"fp32", "int8"}) {
    std::vector<uint8_t> bytes = tiny_model(kind);
    REQUIRE(bytes.size() > 1000);
    std::vector<uint8_t> wrong = bytes;
    wrong[4] = 'X';  // file identifier lives at bytes 4..7
    CHECK(load_and_maybe_run(wrong, &msg) == EB_ERROR_INVALID_MODEL);
    CHECK(msg.find("identifier") != std::string::npos);
    CHECK(load_and_maybe_run({}, &msg) == EB_ERROR_INVALID_MODEL);
    CHECK(load_and_maybe_run({1, 2, 3}, &msg) == EB_ERROR_INVALID_MODEL);
    std::vector<uint8_t> zeros(bytes.size(), 0);
    CHECK(load_and_maybe_run(zeros, &msg) == EB_ERROR_INVALID_MODEL);
  }
}

TEST_CASE("truncation anywhere is rejected", "[bad-model]") {
  for (const char* kind : {"fp32", "int8"}) {
    const std::vector<uint8_t> bytes = tiny_model(kind);
    std::string msg;
    // Every 1/97th of the file plus the first and last 64 bytes exhaustively: this cuts inside
    // the root table, every tensor payload, the vocabulary and the trailing vtables.
    std::vector<size_t> cuts;
    for (size_t i = 0; i < 64; ++i) cuts.push_back(i), cuts.push_back(bytes.size() - 1 - i);
    for (size_t i = 1; i < 97; ++i) cuts.push_back(bytes.size() * i / 97);
    for (size_t cut : cuts) {
      std::vector<uint8_t> t(bytes.begin(), bytes.begin() + cut);
      INFO(kind << " truncated to " << cut << " of " << bytes.size());
      CHECK(load_and_maybe_run(t, &msg) == EB_ERROR_INVALID_MODEL);
      CHECK(!msg.empty());
    }
  }
}

TEST_CASE("flipped bytes never crash", "[bad-model]") {
  for (const char* kind : {"fp32", "int8"}) {
    const std::vector<uint8_t> bytes = tiny_model(kind);
    std::mt19937 rng(7);
    std::uniform_int_distribution<size_t> pos(0, bytes.size() - 1);
    std::string msg;
    int rejected = 0;
    for (int trial = 0; trial < 400; ++trial) {
      std::vector<uint8_t> f = bytes;
      const int flips = 1 + trial % 4;
      for (int k = 0; k < flips; ++k) f[pos(rng)] ^= static_cast<uint8_t>(1u << (rng() % 8));
      const eb_status s = load_and_maybe_run(f, &msg);
      // (EB_ERROR_BACKEND: XNNPACK refused the damaged weights when the load packed them, 2024 API)
      CHECK((s == EB_OK || s == EB_ERROR_INVALID_MODEL || s == EB_ERROR_UNSUPPORTED || s == EB_ERROR_BACKEND));
      rejected += s != EB_OK;
    }
    // Also every byte of the first 512 (root table, vtables, config) flipped to 0xFF.
    for (size_t i = 0; i < 512 && i < bytes.size(); ++i) {
      std::vector<uint8_t> f = bytes;
      f[i] = static_cast<uint8_t>(~f[i]);
      const eb_status s = load_and_maybe_run(f, &msg);
      // (EB_ERROR_BACKEND: XNNPACK refused the damaged weights when the load packed them, 2024 API)
      CHECK((s == EB_OK || s == EB_ERROR_INVALID_MODEL || s == EB_ERROR_UNSUPPORTED || s == EB_ERROR_BACKEND));
    }
    WARN(kind << ": " << rejected << " of 400 random corruptions rejected (the rest hit weight payloads)");
  }
}

TEST_CASE("semantic corruptions are caught by the verifier", "[bad-model]") {
  namespace fb = edgebert::fb;
  std::string msg;
  auto mutate = [&](const char* kind, auto&& fn) {
    std::vector<uint8_t> b = tiny_model(kind);
    fn(fb::GetMutableModel(b.data()));
    return load_and_maybe_run(b, &msg);
  };
  CHECK(mutate("fp32", [](fb::Model* m) { m->mutate_schema_version(9); }) == EB_ERROR_UNSUPPORTED);
  CHECK(msg.find("newer") != std::string::npos);
  CHECK(mutate("fp32", [](fb::Model* m) { m->mutable_config()->mutate_hidden_size(65); }) == EB_ERROR_INVALID_MODEL);
  CHECK(mutate("fp32", [](fb::Model* m) {
          m->mutable_config()->mutate_hidden_size(32);
          m->mutable_config()->mutate_embedding_size(32);  // (stored: a file of version 8 has the family fields)
        }) == EB_ERROR_INVALID_MODEL);
  CHECK(msg.find("shape") != std::string::npos);
  CHECK(mutate("fp32", [](fb::Model* m) { m->mutable_config()->mutate_num_attention_heads(3); }) == EB_ERROR_INVALID_MODEL);
  CHECK(mutate("fp32", [](fb::Model* m) { m->mutable_config()->mutate_num_hidden_layers(3); }) == EB_ERROR_INVALID_MODEL);
  CHECK(mutate("fp32", [](fb::Model* m) { m->mutable_config()->mutate_vocab_size(-5); }) == EB_ERROR_INVALID_MODEL);
  CHECK(mutate("fp32", [](fb::Model* m) { m->mutable_config()->mutate_layer_norm_eps(NAN); }) == EB_ERROR_INVALID_MODEL);
  CHECK(mutate("fp32", [](fb::Model* m) { m->mutable_config()->mutate_max_position_embeddings(100000); }) ==
        EB_ERROR_INVALID_MODEL);
  CHECK(mutate("fp32", [](fb::Model* m) { m->mutable_config()->mutate_num_labels(0); }) == EB_ERROR_INVALID_MODEL);
  CHECK(mutate("fp32", [](fb::Model* m) { m->mutable_layers()->GetMutableObject(0)->mutable_qkv()->mutate_out_features(7); }) ==
        EB_ERROR_INVALID_MODEL);
  CHECK(mutate("int8", [](fb::Model* m) {
          m->mutable_layers()->GetMutableObject(1)->mutable_output()->mutable_weight()->mutable_scales()->Mutate(3, -1.f);
        }) == EB_ERROR_INVALID_MODEL);
  // every value that is not a positive finite number, first and last of a row-scale vector (the
  // check is one branch-free pass: model.cpp, all_finite_positive)
  for (float bad : {NAN, -NAN, 0.f, -0.f, INFINITY, -INFINITY, -1e-30f})
    for (bool last : {false, true}) {
      INFO("scale " << bad << (last ? " last" : " first"));
      CHECK(mutate("int8", [&](fb::Model* m) {
              auto* s = m->mutable_layers()->GetMutableObject(0)->mutable_intermediate()->mutable_weight()->mutable_scales();
              s->Mutate(last ? s->size() - 1 : 0, bad);
            }) == EB_ERROR_INVALID_MODEL);
      CHECK(msg.find("positive finite") != std::string::npos);
      CHECK(mutate("int8", [&](fb::Model* m) {
              auto* s = m->mutable_layers()->GetMutableObject(0)->mutable_qkv()->mutable_output_quant()->mutable_scales();
              if (s) s->Mutate(last ? s->size() - 1 : 0, bad);
              else m->mutable_layers()->GetMutableObject(0)->mutable_qkv()->mutable_output_quant()->mutate_scale(bad);
            }) == EB_ERROR_INVALID_MODEL);
    }
  CHECK(mutate("int8", [](fb::Model* m) {
          m->mutable_layers()->GetMutableObject(0)->mutable_qkv()->mutable_input_quant()->mutate_scale(INFINITY);
        }) == EB_ERROR_INVALID_MODEL);
  CHECK(mutate("int8", [](fb::Model* m) {
          m->mutable_layers()->GetMutableObject(0)->mutable_qkv()->mutable_input_quant()->mutate_zero_point(300);
        }) == EB_ERROR_INVALID_MODEL);
  CHECK(mutate("int8", [](fb::Model* m) {
          m->mutable_layers()->GetMutableObject(0)->mutable_qkv()->mutable_output_quant()->mutable_scales()->Mutate(1, 0.5f);
        }) == EB_ERROR_INVALID_MODEL);
  CHECK(mutate("int8", [](fb::Model* m) {
          m->mutable_layers()->GetMutableObject(0)->mutable_intermediate()->mutate_precision(fb::Precision::FP32);
        }) == EB_ERROR_INVALID_MODEL);  // int8 payload declared as float32
  CHECK(mutate("int8", [](fb::Model* m) {
          m->mutable_embeddings()->mutable_word()->mutable_shape()->Mutate(0, 7);
        }) == EB_ERROR_INVALID_MODEL);
}

TEST_CASE("file loading errors", "[bad-model]") {
  ModelHandle m;
  char err[512];
  CHECK(eb_model_load_file("/nonexistent/model.ebm", &m.m, err, sizeof err) == EB_ERROR_IO);
  CHECK(std::string(err).find("/nonexistent/model.ebm") != std::string::npos);
  CHECK(m.m == nullptr);
  CHECK(eb_model_load_file("/tmp", &m.m, err, sizeof err) == EB_ERROR_IO);
  CHECK(std::string(err).find("convert it first: edgebert-convert") != std::string::npos);  // a folder
  CHECK(eb_model_load_file((testdata_dir() + "/calib.txt").c_str(), &m.m, err, sizeof err) == EB_ERROR_INVALID_MODEL);
  // a HuggingFace file given as the model says to convert the checkpoint first
  for (const char* f : {"/families/roberta_model/config.json", "/families/roberta_model/model.safetensors"}) {
    INFO(f);
    CHECK(eb_model_load_file((testdata_dir() + f).c_str(), &m.m, err, sizeof err) == EB_ERROR_INVALID_MODEL);
    CHECK(std::string(err).find("convert the checkpoint folder first") != std::string::npos);
  }
}

TEST_CASE("C API misuse returns errors", "[c-api]") {
  char err[512];
  ModelHandle m;
  CHECK(eb_model_load_file(nullptr, &m.m, err, sizeof err) == EB_ERROR_INVALID_ARGUMENT);
  CHECK(eb_model_load_file("x", nullptr, err, sizeof err) == EB_ERROR_INVALID_ARGUMENT);
  CHECK(eb_model_load_memory(nullptr, 10, &m.m, err, sizeof err) == EB_ERROR_INVALID_ARGUMENT);
  {
    std::vector<uint8_t> bytes = tiny_model("int8");
    AlignedBuffer buf(bytes);
    std::vector<uint8_t> shifted(bytes.size() + 1);
    CHECK(eb_model_load_memory(buf.data + 1, buf.size - 1, &m.m, err, sizeof err) == EB_ERROR_INVALID_ARGUMENT);
    CHECK(std::string(err).find("aligned") != std::string::npos);
  }
  CHECK(eb_model_load_file(ebm_path("tiny_f16", "int8").c_str(), &m.m, nullptr, 0) == EB_OK);
  eb_model_info info;
  CHECK(eb_model_get_info(nullptr, &info) == EB_ERROR_INVALID_ARGUMENT);
  CHECK(eb_model_get_info(m.m, nullptr) == EB_ERROR_INVALID_ARGUMENT);
  REQUIRE(eb_model_get_info(m.m, &info) == EB_OK);

  SessionHandle s;
  eb_session_options o;
  eb_session_options_init(&o);
  eb_session_options_init(nullptr);
  CHECK(eb_session_create(nullptr, &o, &s.s, err, sizeof err) == EB_ERROR_INVALID_ARGUMENT);
  CHECK(eb_session_create(m.m, &o, nullptr, err, sizeof err) == EB_ERROR_INVALID_ARGUMENT);
  o.num_threads = -1;
  CHECK(eb_session_create(m.m, &o, &s.s, err, sizeof err) == EB_ERROR_INVALID_ARGUMENT);
  o.num_threads = 1;
  o.max_sequence_length = info.max_position_embeddings + 1;
  CHECK(eb_session_create(m.m, &o, &s.s, err, sizeof err) == EB_ERROR_INVALID_ARGUMENT);
  CHECK(std::string(err).find("max_sequence_length") != std::string::npos);
  o.max_sequence_length = 16;
  REQUIRE(eb_session_create(m.m, &o, &s.s, err, sizeof err) == EB_OK);

  const float* out = nullptr;
  CHECK(eb_session_get_output(s.s, EB_OUTPUT_LAST_HIDDEN_STATE, &out, nullptr, nullptr) == EB_ERROR_BAD_STATE);
  CHECK(std::string(eb_session_last_error(s.s)).size() > 0);
  CHECK(eb_session_get_output(nullptr, EB_OUTPUT_LAST_HIDDEN_STATE, &out, nullptr, nullptr) == EB_ERROR_INVALID_ARGUMENT);
  const int32_t* ids_out;
  size_t n_out;
  CHECK(eb_session_get_input_ids(s.s, &ids_out, &n_out) == EB_ERROR_BAD_STATE);

  const int32_t ids[5] = {101, 200, 300, 400, 102};
  CHECK(eb_session_run_ids(nullptr, ids, nullptr, nullptr, 5) == EB_ERROR_INVALID_ARGUMENT);
  CHECK(eb_session_run_ids(s.s, nullptr, nullptr, nullptr, 5) == EB_ERROR_INVALID_ARGUMENT);
  CHECK(eb_session_run_ids(s.s, ids, nullptr, nullptr, 0) == EB_ERROR_INVALID_ARGUMENT);
  std::vector<int32_t> longer(17, 101);
  CHECK(eb_session_run_ids(s.s, longer.data(), nullptr, nullptr, 17) == EB_ERROR_SEQUENCE_TOO_LONG);
  const int32_t bad_ids[3] = {101, -1, 102};
  CHECK(eb_session_run_ids(s.s, bad_ids, nullptr, nullptr, 3) == EB_ERROR_INVALID_ARGUMENT);
  CHECK(std::string(eb_session_last_error(s.s)).find("input_ids[1]") != std::string::npos);
  const int32_t big_ids[3] = {101, info.vocab_size, 102};
  CHECK(eb_session_run_ids(s.s, big_ids, nullptr, nullptr, 3) == EB_ERROR_INVALID_ARGUMENT);
  const int32_t bad_types[5] = {0, 0, 2, 0, 0};
  CHECK(eb_session_run_ids(s.s, ids, bad_types, nullptr, 5) == EB_ERROR_INVALID_ARGUMENT);
  const int32_t bad_mask[5] = {1, 1, 5, 1, 1};
  CHECK(eb_session_run_ids(s.s, ids, nullptr, bad_mask, 5) == EB_ERROR_INVALID_ARGUMENT);
  CHECK(eb_session_run_text(s.s, nullptr) == EB_ERROR_INVALID_ARGUMENT);
  CHECK(eb_session_run_text(nullptr, "x") == EB_ERROR_INVALID_ARGUMENT);
  std::string long_text;
  for (int i = 0; i < 40; ++i) long_text += "movie ";
  CHECK(eb_session_run_text(s.s, long_text.c_str()) == EB_ERROR_SEQUENCE_TOO_LONG);
  // invalid UTF-8 is refused before tokenizing, naming the first invalid byte (docs/tokenizers.md)
  CHECK(eb_session_run_text(s.s, "\xff\xfe invalid utf-8 \xc3") == EB_ERROR_INVALID_ARGUMENT);
  CHECK(std::string(eb_session_last_error(s.s)) == "text is not valid UTF-8: byte 0xFF at offset 0");
  CHECK(eb_session_run_text(s.s, "fine until \xc3") == EB_ERROR_INVALID_ARGUMENT);
  CHECK(std::string(eb_session_last_error(s.s)) == "text is not valid UTF-8: byte 0xC3 at offset 11");
  CHECK(eb_session_run_embeddings(s.s, nullptr, nullptr, 3) == EB_ERROR_INVALID_ARGUMENT);
  std::vector<float> emb(3 * static_cast<size_t>(info.hidden_size), 0.f);
  emb[5] = NAN;
  CHECK(eb_session_run_embeddings(s.s, emb.data(), nullptr, 3) == EB_ERROR_INVALID_ARGUMENT);
  // a failed run leaves no stale outputs behind
  CHECK(eb_session_get_output(s.s, EB_OUTPUT_LAST_HIDDEN_STATE, &out, nullptr, nullptr) == EB_ERROR_BAD_STATE);

  REQUIRE(eb_session_run_ids(s.s, ids, nullptr, nullptr, 5) == EB_OK);
  CHECK(eb_session_get_output(s.s, static_cast<eb_output>(42), &out, nullptr, nullptr) == EB_ERROR_INVALID_ARGUMENT);
  CHECK(eb_session_get_output(s.s, EB_OUTPUT_LAST_HIDDEN_STATE, nullptr, nullptr, nullptr) == EB_OK);
  CHECK(eb_session_get_input_ids(s.s, nullptr, &n_out) == EB_ERROR_INVALID_ARGUMENT);
  CHECK(eb_session_memory(nullptr, nullptr, nullptr, nullptr) == EB_ERROR_INVALID_ARGUMENT);
  CHECK(eb_session_memory(s.s, nullptr, nullptr, nullptr) == EB_OK);
  CHECK(std::string(eb_session_last_error(nullptr)).size() > 0);
  CHECK(std::string(eb_status_string(static_cast<eb_status>(1234))) == "unknown status");
  // The library's version is the header's (EB_VERSION_*).
  CHECK(std::string(eb_version()) == std::to_string(EB_VERSION_MAJOR) + "." + std::to_string(EB_VERSION_MINOR) + "." +
                                         std::to_string(EB_VERSION_PATCH));
  eb_session_destroy(nullptr);
  eb_model_free(nullptr);
}

TEST_CASE("encoder-only and classifier-less models refuse what they cannot do", "[c-api]") {
  ModelHandle m;
  char err[512];
  REQUIRE(eb_model_load_file(ebm_path("h192_3x64", "int8").c_str(), &m.m, err, sizeof err) == EB_OK);
  SessionHandle s;
  REQUIRE(eb_session_create(m.m, nullptr, &s.s, err, sizeof err) == EB_OK);
  const int32_t ids[3] = {101, 200, 102};
  REQUIRE(eb_session_run_ids(s.s, ids, nullptr, nullptr, 3) == EB_OK);
  const float* out;
  CHECK(eb_session_get_output(s.s, EB_OUTPUT_LOGITS, &out, nullptr, nullptr) == EB_ERROR_UNSUPPORTED);
}

TEST_CASE("schema 2 head fields are validated (task, activation, pooling, labels, token types)", "[bad-model][heads]") {
  namespace fb = edgebert::fb;
  std::string msg;
  auto mutate = [&](const char* model, auto&& fn) {
    std::vector<uint8_t> b = read_bytes(ebm_path(model, "fp32"));
    REQUIRE(fn(fb::GetMutableModel(b.data())));  // the field is stored, so the mutation took effect
    return load_and_maybe_run(b, &msg);
  };
  CHECK(mutate("task_bert_qa", [](fb::Model* m) { return m->mutate_task(static_cast<fb::Task>(9)); }) ==
        EB_ERROR_INVALID_MODEL);
  CHECK(msg.find("task 9") != std::string::npos);
  CHECK(mutate("task_bert_token", [](fb::Model* m) { return m->mutable_config()->mutate_hidden_act(static_cast<fb::Activation>(3)); }) ==
        EB_ERROR_INVALID_MODEL);
  CHECK(msg.find("hidden_act") != std::string::npos);
  CHECK(mutate("task_st_max", [](fb::Model* m) { return m->mutable_sentence_pooling()->mutate_mode(static_cast<fb::Pooling>(5)); }) ==
        EB_ERROR_INVALID_MODEL);
  CHECK(msg.find("sentence_pooling.mode") != std::string::npos);
  // LAST_TOKEN is a schema_version 5 value: an older file carrying it is inconsistent
  auto old_file = [&](const char* model, auto&& fn) {
    std::vector<uint8_t> b = without_vocab(model);
    REQUIRE(fn(fb::GetMutableModel(b.data())));
    return load_and_maybe_run(b, &msg);
  };
  CHECK(old_file("task_st_max", [](fb::Model* m) { return m->mutable_sentence_pooling()->mutate_mode(fb::Pooling::LAST_TOKEN); }) ==
        EB_ERROR_INVALID_MODEL);
  CHECK(msg.find("schema_version 5") != std::string::npos);
  // a classifier in a model whose task has none, and the reverse
  CHECK(mutate("task_bert_seqcls_tanh", [](fb::Model* m) { return m->mutate_task(fb::Task::ENCODER); }) == EB_ERROR_INVALID_MODEL);
  CHECK(msg.find("classifier") != std::string::npos);
  CHECK(mutate("task_st_cls", [](fb::Model* m) { return m->mutate_task(fb::Task::TOKEN_CLASSIFICATION); }) ==
        EB_ERROR_INVALID_MODEL);
  // QA needs [2, H]; labels must match num_labels
  CHECK(mutate("task_bert_token", [](fb::Model* m) { return m->mutate_task(fb::Task::QUESTION_ANSWERING); }) ==
        EB_ERROR_INVALID_MODEL);
  CHECK(mutate("task_bert_seqcls_tanh", [](fb::Model* m) { return m->mutable_config()->mutate_num_labels(2); }) ==
        EB_ERROR_INVALID_MODEL);
  // DistilBERT's pre_classifier belongs to sequence classification only
  CHECK(mutate("task_distil_seqcls_relu", [](fb::Model* m) { return m->mutate_task(fb::Task::TOKEN_CLASSIFICATION); }) ==
        EB_ERROR_INVALID_MODEL);
  CHECK(msg.find("pre_classifier") != std::string::npos);
  // token types present iff type_vocab_size > 0
  CHECK(mutate("task_bert_model_relu", [](fb::Model* m) { return m->mutable_config()->mutate_type_vocab_size(0); }) ==
        EB_ERROR_INVALID_MODEL);
  CHECK(msg.find("token_type") != std::string::npos);
  // schema version 1 files have no task field: a classifier means sequence classification
  CHECK(old_file("task_bert_seqcls_tanh", [](fb::Model* m) { return m->mutate_schema_version(1); }) == EB_OK);
  CHECK(old_file("task_bert_model_relu", [](fb::Model* m) { return m->mutate_schema_version(1); }) == EB_OK);
  // ... and a file of version 8 whose version says older is inconsistent (its vocabulary is one text)
  CHECK(mutate("task_bert_model_relu", [](fb::Model* m) { return m->mutate_schema_version(7); }) == EB_ERROR_INVALID_MODEL);
  CHECK(msg.find("schema_version 8") != std::string::npos);
}
