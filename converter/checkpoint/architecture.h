// SPDX-License-Identifier: Apache-2.0
// Which head a checkpoint has: config.json's `architectures` picks it (BertModel,
// BertForSequenceClassification, BertForQuestionAnswering, BertForTokenClassification, the
// DistilBert* equivalents, and the masked-LM / pre-training checkpoints as plain encoders); an
// unknown architecture is an error naming it.
#pragma once

#include <string>

#include "converter/checkpoint/hf_checkpoint.h"

namespace edgebert {
namespace convert {

// Values equal schemas/edgebert.fbs Task and the C API's eb_task.
enum class Task {
  kEncoder = 0,
  kSequenceClassification = 1,
  kQuestionAnswering = 2,
  kTokenClassification = 3,
  kSentenceEmbedding = 4,
  kMaskedLm = 5,  // *ForMaskedLM: the masked-LM head, run as SPLADE's sparse vector
  kTokenVectors = 6,  // a PyLate / ColBERT folder: Dense projection of every token, L2-normalized
  kBgeM3 = 7,  // a bge-m3 folder (FlagEmbedding BGEM3): dense, sparse_linear and colbert_linear outputs
};
const char* task_name(Task task);  // "encoder", "sequence-classification", ...

// The task of the checkpoint's architectures[0]. The architecture must belong to the config's
// model_type's family (Bert* for bert, DistilBert* for distilbert, Roberta* / XLMRoberta* /
// Camembert* for the RoBERTa family, Electra*, Albert*, NomicBert*, ModernBert*). *ForMaskedLM and
// *ForPreTraining are encoders (their heads are training-only tensors). Without an
// `architectures` entry the tensors decide: qa_outputs -> question answering, classifier ->
// sequence classification, else encoder. Throws CheckpointError
// "DIR/config.json: unsupported architecture 'X' (supported: ...)".
Task task_from_architecture(const HfBertCheckpoint& checkpoint);

}  // namespace convert
}  // namespace edgebert
