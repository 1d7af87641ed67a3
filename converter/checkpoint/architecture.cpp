// SPDX-License-Identifier: Apache-2.0
// Architecture name -> task (see architecture.h).
#include "converter/checkpoint/architecture.h"

#include "converter/checkpoint/checkpoint_error.h"

namespace edgebert {
namespace convert {
namespace {

struct Entry {
  const char* name;
  Family family;
  Task task;
};

constexpr Entry kArchitectures[] = {
    {"BertModel", Family::kBert, Task::kEncoder},
    {"BertForMaskedLM", Family::kBert, Task::kMaskedLm},
    {"BertForPreTraining", Family::kBert, Task::kEncoder},
    {"BertForSequenceClassification", Family::kBert, Task::kSequenceClassification},
    {"BertForQuestionAnswering", Family::kBert, Task::kQuestionAnswering},
    {"BertForTokenClassification", Family::kBert, Task::kTokenClassification},
    {"DistilBertModel", Family::kDistilBert, Task::kEncoder},
    {"DistilBertForMaskedLM", Family::kDistilBert, Task::kMaskedLm},
    {"DistilBertForSequenceClassification", Family::kDistilBert, Task::kSequenceClassification},
    {"DistilBertForQuestionAnswering", Family::kDistilBert, Task::kQuestionAnswering},
    {"DistilBertForTokenClassification", Family::kDistilBert, Task::kTokenClassification},
    // RoBERTa, XLM-RoBERTa and CamemBERT share one layout (prefix roberta.)
    {"RobertaModel", Family::kRoberta, Task::kEncoder},
    {"RobertaForMaskedLM", Family::kRoberta, Task::kMaskedLm},
    {"RobertaForSequenceClassification", Family::kRoberta, Task::kSequenceClassification},
    {"RobertaForQuestionAnswering", Family::kRoberta, Task::kQuestionAnswering},
    {"RobertaForTokenClassification", Family::kRoberta, Task::kTokenClassification},
    {"XLMRobertaModel", Family::kRoberta, Task::kEncoder},
    {"XLMRobertaForMaskedLM", Family::kRoberta, Task::kMaskedLm},
    {"XLMRobertaForSequenceClassification", Family::kRoberta, Task::kSequenceClassification},
    {"XLMRobertaForQuestionAnswering", Family::kRoberta, Task::kQuestionAnswering},
    {"XLMRobertaForTokenClassification", Family::kRoberta, Task::kTokenClassification},
    {"CamembertModel", Family::kRoberta, Task::kEncoder},
    {"CamembertForMaskedLM", Family::kRoberta, Task::kMaskedLm},
    {"CamembertForSequenceClassification", Family::kRoberta, Task::kSequenceClassification},
    {"CamembertForQuestionAnswering", Family::kRoberta, Task::kQuestionAnswering},
    {"CamembertForTokenClassification", Family::kRoberta, Task::kTokenClassification},
    {"ElectraModel", Family::kElectra, Task::kEncoder},
    {"ElectraForPreTraining", Family::kElectra, Task::kEncoder},
    {"ElectraForMaskedLM", Family::kElectra, Task::kMaskedLm},
    {"ElectraForSequenceClassification", Family::kElectra, Task::kSequenceClassification},
    {"ElectraForQuestionAnswering", Family::kElectra, Task::kQuestionAnswering},
    {"ElectraForTokenClassification", Family::kElectra, Task::kTokenClassification},
    {"AlbertModel", Family::kAlbert, Task::kEncoder},
    {"AlbertForMaskedLM", Family::kAlbert, Task::kMaskedLm},
    {"AlbertForPreTraining", Family::kAlbert, Task::kEncoder},
    {"AlbertForSequenceClassification", Family::kAlbert, Task::kSequenceClassification},
    {"AlbertForQuestionAnswering", Family::kAlbert, Task::kQuestionAnswering},
    {"AlbertForTokenClassification", Family::kAlbert, Task::kTokenClassification},
    {"NomicBertModel", Family::kNomicBert, Task::kEncoder},
    {"NomicBertForPreTraining", Family::kNomicBert, Task::kEncoder},
    {"NomicBertForSequenceClassification", Family::kNomicBert, Task::kSequenceClassification},
    {"ModernBertModel", Family::kModernBert, Task::kEncoder},
    {"ModernBertForMaskedLM", Family::kModernBert, Task::kMaskedLm},
    {"ModernBertForSequenceClassification", Family::kModernBert, Task::kSequenceClassification},
    {"ModernBertForQuestionAnswering", Family::kModernBert, Task::kQuestionAnswering},
    {"ModernBertForTokenClassification", Family::kModernBert, Task::kTokenClassification},
    {"Qwen3Model", Family::kQwen3, Task::kEncoder},
    {"Qwen3ForCausalLM", Family::kQwen3, Task::kEncoder},  // its lm_head is not used
    {"Gemma3TextModel", Family::kGemma3, Task::kEncoder},
};

}  // namespace

const char* task_name(Task task) {
  switch (task) {
    case Task::kEncoder: return "encoder";
    case Task::kSequenceClassification: return "sequence-classification";
    case Task::kQuestionAnswering: return "question-answering";
    case Task::kTokenClassification: return "token-classification";
    case Task::kSentenceEmbedding: return "sentence-embedding";
    case Task::kMaskedLm: return "masked-lm";
    case Task::kTokenVectors: return "token-vectors";
    case Task::kBgeM3: return "bge-m3";
  }
  return "?";
}

Task task_from_architecture(const HfBertCheckpoint& ck) {
  const BertConfig& c = ck.config();
  if (c.architectures.empty()) {
    if (ck.has("qa_outputs.weight")) return Task::kQuestionAnswering;
    if (ck.has("classifier.weight") || ck.has("classifier.out_proj.weight")) return Task::kSequenceClassification;
    return Task::kEncoder;
  }
  const std::string& arch = c.architectures.front();
  std::string supported;
  for (const Entry& e : kArchitectures) {
    if (e.family != c.family.family) continue;
    if (arch == e.name) return e.task;
    supported += supported.empty() ? e.name : std::string(", ") + e.name;
  }
  const std::string dir = ck.dir();
  const std::string path = dir.empty() ? "config.json" : (dir.back() == '/' ? dir : dir + "/") + "config.json";
  throw CheckpointError(path + ": unsupported architecture '" + arch + "' for model_type " + c.model_type +
                        " (supported: " + supported + ")");
}

}  // namespace convert
}  // namespace edgebert
