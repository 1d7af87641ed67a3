// Architecture name -> task (see architecture.h).
#include "converter/checkpoint/architecture.h"

#include "converter/checkpoint/checkpoint_error.h"

namespace edgebert {
namespace convert {
namespace {

struct Entry {
  const char* name;
  bool distilbert;
  Task task;
};

constexpr Entry kArchitectures[] = {
    {"BertModel", false, Task::kEncoder},
    {"BertForMaskedLM", false, Task::kEncoder},
    {"BertForPreTraining", false, Task::kEncoder},
    {"BertForSequenceClassification", false, Task::kSequenceClassification},
    {"BertForQuestionAnswering", false, Task::kQuestionAnswering},
    {"BertForTokenClassification", false, Task::kTokenClassification},
    {"DistilBertModel", true, Task::kEncoder},
    {"DistilBertForMaskedLM", true, Task::kEncoder},
    {"DistilBertForSequenceClassification", true, Task::kSequenceClassification},
    {"DistilBertForQuestionAnswering", true, Task::kQuestionAnswering},
    {"DistilBertForTokenClassification", true, Task::kTokenClassification},
};

}  // namespace

const char* task_name(Task task) {
  switch (task) {
    case Task::kEncoder: return "encoder";
    case Task::kSequenceClassification: return "sequence-classification";
    case Task::kQuestionAnswering: return "question-answering";
    case Task::kTokenClassification: return "token-classification";
    case Task::kSentenceEmbedding: return "sentence-embedding";
  }
  return "?";
}

Task task_from_architecture(const HfBertCheckpoint& ck) {
  const BertConfig& c = ck.config();
  if (c.architectures.empty()) {
    if (ck.has("qa_outputs.weight")) return Task::kQuestionAnswering;
    if (ck.has("classifier.weight")) return Task::kSequenceClassification;
    return Task::kEncoder;
  }
  const std::string& arch = c.architectures.front();
  std::string supported;
  for (const Entry& e : kArchitectures) {
    if (e.distilbert != c.is_distilbert()) continue;
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
