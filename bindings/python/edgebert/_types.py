# SPDX-License-Identifier: Apache-2.0
"""Plain Python views of the C API's enums and structs: Output, Task, ModelInfo, Span, Word,
WeightCacheState and WeightCache."""

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
    SPARSE_EMBEDDING = 7  # [vocab], masked-LM (SPLADE) models
    TOKEN_VECTORS = 8  # [seq_len, dim], ColBERT models (rows L2-normalized)

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
    MASKED_LM = 5
    TOKEN_VECTORS = 6
    BGE_M3 = 7  # sentence_embedding, sparse_embedding and token_vectors (bge-m3)


class WeightCacheState(enum.IntEnum):
    """Same values as the C enum eb_weight_cache_state."""
    NONE = 0         # no cache file was asked for
    LOADED = 1       # a valid cache file is mapped: nothing was packed
    CREATED = 2      # packed, and the cache file was written (new, or rebuilt: the message says why)
    UNAVAILABLE = 3  # asked for but not used (no cache API in this XNNPACK, or not writable)


INFO_FIELDS = ("hidden_size", "num_attention_heads", "num_hidden_layers", "intermediate_size",
               "vocab_size", "max_position_embeddings", "type_vocab_size", "num_labels",
               "has_pooler", "has_embeddings", "has_vocab", "is_int8", "task", "is_distilbert")

# eb_model_info; flags are bool, task is a Task.
ModelInfo = collections.namedtuple("ModelInfo", INFO_FIELDS)

# One token of a token-classification run: its bytes [begin, end) in the text and its best label.
TokenLabel = collections.namedtuple("TokenLabel", "begin end text label")

# eb_span plus the answer text: context bytes [begin_byte, end_byte) decoded as UTF-8; `windows`
# is the number of context windows Session.answer() ran (None from best_span()).
Span = collections.namedtuple("Span", "start_token end_token begin_byte end_byte score text windows",
                              defaults=(None,))

# One window of Session.embed_chunked: the text's bytes [begin_byte, end_byte) (its first token's
# begin to its last token's end), the index of its first token among the text's tokens and its
# token count (special tokens not counted).
Chunk = collections.namedtuple("Chunk", "begin_byte end_byte first_token tokens")

# What happened to a model's weight cache file: a WeightCacheState and a readable reason ("" if none).
WeightCache = collections.namedtuple("WeightCache", "state message")

# A word of the last text run (eb_word): its tokens [first_token, last_token], its segment (0 =
# text, 1 = text_pair), its bytes [begin_byte, end_byte) in that segment's text, that text, and for
# token classifiers the name of its first token's label (None otherwise).
Word = collections.namedtuple("Word", "first_token last_token segment begin_byte end_byte text label")
