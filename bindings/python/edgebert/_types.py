"""Plain Python views of the C API's enums and structs: Output, Task, ModelInfo, Span."""

import collections
import enum


class Output(enum.IntEnum):
    """Same values as the C enum eb_output; str names are the keys of Session.run()'s dict."""
    LAST_HIDDEN_STATE = 0
    POOLER_OUTPUT = 1
    LOGITS = 2
    SENTENCE_EMBEDDING = 3
    START_LOGITS = 4
    END_LOGITS = 5
    TOKEN_LOGITS = 6

    @property
    def key(self):
        return self.name.lower()


class Task(enum.IntEnum):
    """Same values as the C enum eb_task."""
    ENCODER = 0
    SEQUENCE_CLASSIFICATION = 1
    QUESTION_ANSWERING = 2
    TOKEN_CLASSIFICATION = 3
    SENTENCE_EMBEDDING = 4


INFO_FIELDS = ("hidden_size", "num_attention_heads", "num_hidden_layers", "intermediate_size",
               "vocab_size", "max_position_embeddings", "type_vocab_size", "num_labels",
               "has_pooler", "has_embeddings", "has_vocab", "is_int8", "task", "is_distilbert")

# eb_model_info; flags are bool, task is a Task.
ModelInfo = collections.namedtuple("ModelInfo", INFO_FIELDS)

# One token of a token-classification run: its bytes [begin, end) in the text and its best label.
TokenLabel = collections.namedtuple("TokenLabel", "begin end text label")

# eb_span plus the answer text: context bytes [begin_byte, end_byte) decoded as UTF-8.
Span = collections.namedtuple("Span", "start_token end_token begin_byte end_byte score text")
