# SPDX-License-Identifier: Apache-2.0
"""Finds and loads libedgebert.so and declares the C API's signatures for ctypes.

Search order: the libedgebert.so bundled inside the package (an installed wheel carries the
library it was built with), then the EDGEBERT_LIBRARY environment variable (a file path: how a
source checkout is used), then a libedgebert.so* in the folder that holds the package, then the
system's library path.
Functions the loaded library lacks (an older build) are reported as edgebert.Error when used.
"""

import ctypes
import ctypes.util
import glob
import os
import re

from ._errors import Error, Status

c_int32_p = ctypes.POINTER(ctypes.c_int32)
c_float_p = ctypes.POINTER(ctypes.c_float)


class ModelInfoStruct(ctypes.Structure):
    _fields_ = [(name, ctypes.c_int32) for name in (
        "hidden_size", "num_attention_heads", "num_hidden_layers", "intermediate_size",
        "vocab_size", "max_position_embeddings", "type_vocab_size", "num_labels", "has_pooler",
        "has_embeddings", "has_vocab", "is_int8", "task", "is_distilbert")]


class SessionOptionsStruct(ctypes.Structure):
    _fields_ = [("num_threads", ctypes.c_int32), ("max_sequence_length", ctypes.c_int32),
                ("split_special_tokens", ctypes.c_int32), ("max_batch_tokens", ctypes.c_int32),
                ("max_memory_bytes", ctypes.c_uint64)]


class LoadOptionsStruct(ctypes.Structure):
    _fields_ = [("weight_cache_path", ctypes.c_char_p), ("reserved", ctypes.c_int32 * 3),
                ("skip_weight_cache_payload_check", ctypes.c_int32)]


class WordStruct(ctypes.Structure):
    _fields_ = [(name, ctypes.c_int32) for name in (
        "first_token", "last_token", "segment", "begin_byte", "end_byte", "label")]


class SequenceInfoStruct(ctypes.Structure):
    _fields_ = [(name, ctypes.c_int32) for name in ("status", "first_token", "tokens", "first_word", "words")]


class SpanStruct(ctypes.Structure):
    _fields_ = [("start_token", ctypes.c_int32), ("end_token", ctypes.c_int32),
                ("begin_byte", ctypes.c_int32), ("end_byte", ctypes.c_int32),
                ("score", ctypes.c_float)]


class ChunkStruct(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in ("begin_byte", "end_byte", "first_token", "tokens")]


_P = ctypes.c_void_p
_S = ctypes.c_int  # eb_status
_SIGNATURES = {
    "eb_version": (ctypes.c_char_p, []),
    "eb_status_string": (ctypes.c_char_p, [ctypes.c_int]),
    "eb_model_load_file": (_S, [ctypes.c_char_p, ctypes.POINTER(_P), ctypes.c_char_p, ctypes.c_size_t]),
    "eb_model_load_memory": (_S, [_P, ctypes.c_size_t, ctypes.POINTER(_P), ctypes.c_char_p, ctypes.c_size_t]),
    "eb_model_get_info": (_S, [_P, ctypes.POINTER(ModelInfoStruct)]),
    "eb_model_get_label": (_S, [_P, ctypes.c_int32, ctypes.POINTER(ctypes.c_char_p)]),
    "eb_model_free": (None, [_P]),
    "eb_load_options_init": (None, [ctypes.POINTER(LoadOptionsStruct)]),
    "eb_model_load_file_with_options": (_S, [ctypes.c_char_p, ctypes.POINTER(LoadOptionsStruct), ctypes.POINTER(_P),
                                             ctypes.c_char_p, ctypes.c_size_t]),
    "eb_model_load_memory_with_options": (_S, [_P, ctypes.c_size_t, ctypes.POINTER(LoadOptionsStruct),
                                               ctypes.POINTER(_P), ctypes.c_char_p, ctypes.c_size_t]),
    "eb_model_get_weight_cache": (_S, [_P, ctypes.POINTER(ctypes.c_int), ctypes.POINTER(ctypes.c_char_p)]),
    "eb_model_get_memory": (_S, [_P, ctypes.POINTER(ctypes.c_size_t), ctypes.POINTER(ctypes.c_size_t)]),
    "eb_session_options_init": (None, [ctypes.POINTER(SessionOptionsStruct)]),
    "eb_session_create": (_S, [_P, ctypes.POINTER(SessionOptionsStruct), ctypes.POINTER(_P),
                               ctypes.c_char_p, ctypes.c_size_t]),
    "eb_session_destroy": (None, [_P]),
    "eb_session_run_ids": (_S, [_P, c_int32_p, c_int32_p, c_int32_p, ctypes.c_size_t]),
    "eb_session_run_text": (_S, [_P, ctypes.c_char_p]),
    "eb_session_run_text_pair": (_S, [_P, ctypes.c_char_p, ctypes.c_char_p]),
    "eb_session_run_embeddings": (_S, [_P, c_float_p, c_int32_p, ctypes.c_size_t]),
    "eb_session_run_texts": (_S, [_P, ctypes.POINTER(ctypes.c_char_p), ctypes.c_size_t, ctypes.POINTER(ctypes.c_size_t)]),
    "eb_session_run_text_pairs": (_S, [_P, ctypes.POINTER(ctypes.c_char_p), ctypes.POINTER(ctypes.c_char_p),
                                       ctypes.c_size_t, ctypes.POINTER(ctypes.c_size_t)]),
    "eb_session_get_sequence_count": (_S, [_P, ctypes.POINTER(ctypes.c_size_t)]),
    "eb_session_get_sequence": (_S, [_P, ctypes.c_size_t, ctypes.POINTER(SequenceInfoStruct)]),
    "eb_session_get_output": (_S, [_P, ctypes.c_int, ctypes.POINTER(c_float_p),
                                   ctypes.POINTER(ctypes.c_int64), ctypes.POINTER(ctypes.c_int32)]),
    "eb_session_get_input_ids": (_S, [_P, ctypes.POINTER(c_int32_p), ctypes.POINTER(ctypes.c_size_t)]),
    "eb_session_get_token_offsets": (_S, [_P, ctypes.POINTER(c_int32_p), ctypes.POINTER(c_int32_p),
                                          ctypes.POINTER(c_int32_p), ctypes.POINTER(ctypes.c_size_t)]),
    "eb_session_best_span": (_S, [_P, ctypes.c_int32, ctypes.POINTER(SpanStruct)]),
    "eb_session_get_word_ids": (_S, [_P, ctypes.POINTER(c_int32_p), ctypes.POINTER(ctypes.c_size_t)]),
    "eb_session_get_words": (_S, [_P, ctypes.POINTER(ctypes.POINTER(WordStruct)), ctypes.POINTER(ctypes.c_size_t)]),
    "eb_session_answer": (_S, [_P, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int32, ctypes.c_int32,
                               ctypes.POINTER(SpanStruct), c_int32_p]),
    "eb_session_embed_many": (_S, [_P, ctypes.POINTER(ctypes.c_char_p), ctypes.POINTER(ctypes.c_char_p), ctypes.c_size_t,
                                   ctypes.c_int, c_float_p, ctypes.c_size_t, c_int32_p]),
    "eb_session_classify_many": (_S, [_P, ctypes.POINTER(ctypes.c_char_p), ctypes.POINTER(ctypes.c_char_p),
                                      ctypes.c_size_t, c_float_p, ctypes.c_size_t, c_int32_p, c_int32_p]),
    "eb_session_rerank": (_S, [_P, ctypes.c_char_p, ctypes.POINTER(ctypes.c_char_p), ctypes.c_size_t, c_float_p,
                               c_int32_p]),
    "eb_session_rerank_top_k": (_S, [_P, ctypes.c_char_p, ctypes.POINTER(ctypes.c_char_p), ctypes.c_size_t,
                                     ctypes.c_size_t, c_int32_p, c_float_p, ctypes.POINTER(ctypes.c_size_t),
                                     c_int32_p]),
    "eb_session_embed_chunked": (_S, [_P, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_int32, ctypes.c_int32,
                                      ctypes.c_int, c_float_p, ctypes.c_size_t, ctypes.POINTER(ChunkStruct),
                                      ctypes.c_size_t, ctypes.POINTER(ctypes.c_size_t)]),
    "eb_session_sparse_top_k": (_S, [_P, ctypes.c_size_t, ctypes.c_size_t, ctypes.c_float, c_int32_p, c_float_p,
                                     ctypes.POINTER(ctypes.c_size_t)]),
    "eb_session_fill_mask": (_S, [_P, ctypes.c_size_t, ctypes.c_size_t, c_int32_p, c_float_p,
                                  ctypes.POINTER(ctypes.c_size_t)]),
    "eb_maxsim": (_S, [c_float_p, ctypes.c_size_t, c_float_p, ctypes.c_size_t, ctypes.c_size_t, c_float_p]),
    "eb_pool_token_vectors": (_S, [c_float_p, ctypes.c_size_t, ctypes.c_size_t, ctypes.c_size_t, ctypes.c_size_t,
                                   c_float_p, ctypes.POINTER(ctypes.c_size_t)]),
    "eb_session_set_truncation": (_S, [_P, ctypes.c_int]),
    "eb_session_set_embedding_dims": (_S, [_P, ctypes.c_int32]),
    "eb_session_set_prompt": (_S, [_P, ctypes.c_char_p]),
    "eb_session_set_num_threads": (_S, [_P, ctypes.c_int32]),
    "eb_session_set_colbert_input": (_S, [_P, ctypes.c_int]),
    "eb_session_get_token_vectors": (_S, [_P, ctypes.c_size_t, c_float_p, ctypes.c_size_t,
                                          ctypes.POINTER(ctypes.c_size_t)]),
    "eb_session_get_truncated_tokens": (_S, [_P, ctypes.c_size_t, c_int32_p]),
    "eb_session_get_token_labels": (_S, [_P, c_int32_p, ctypes.c_size_t, ctypes.POINTER(ctypes.c_size_t)]),
    "eb_session_memory": (_S, [_P, ctypes.POINTER(ctypes.c_size_t), ctypes.POINTER(ctypes.c_size_t),
                               ctypes.POINTER(ctypes.c_size_t)]),
    "eb_session_last_error": (ctypes.c_char_p, [_P]),
}


def _candidates():
    here = os.path.dirname(os.path.abspath(__file__))
    bundled = os.path.join(here, "libedgebert.so")
    if os.path.exists(bundled):
        return [bundled]  # the wheel's own build: its Python code and library match
    env = os.environ.get("EDGEBERT_LIBRARY")
    if env:
        return [env]  # an explicit choice is never silently replaced by another library
    found = sorted(glob.glob(os.path.join(os.path.dirname(here), "libedgebert.so*")))
    system = ctypes.util.find_library("edgebert")
    found += [system] if system else []
    return found + ["libedgebert.so.0", "libedgebert.so"]


class _Api:
    """The C functions as attributes; a missing one raises edgebert.Error when called."""

    def __init__(self, cdll, path):
        self.path = path
        for name, (restype, argtypes) in _SIGNATURES.items():
            try:
                fn = getattr(cdll, name)
            except AttributeError:
                setattr(self, name, _missing(name, path))
                continue
            fn.restype, fn.argtypes = restype, argtypes
            setattr(self, name, fn)

    def has(self, name):
        return not getattr(getattr(self, name), "edgebert_missing", False)


def _missing(name, path):
    def fail(*_args):
        raise Error(Status.UNSUPPORTED, "%s lacks %s (library older than these bindings)" % (path, name))
    fail.edgebert_missing = True
    return fail


_api = None

# The system libraries libedgebert links, and the Debian packages that ship them.
_RUNTIME_PACKAGES = {"libxnnpack": "libxnnpack0", "libpthreadpool": "libpthreadpool0", "libcpuinfo": "libcpuinfo0",
                     "libutf8proc": "libutf8proc2", "libpcre2-8": "libpcre2-8-0"}


def missing_library_hint(message):
    """For a dlopen error naming a shared object that cannot be found, which one and where it comes from."""
    m = re.search(r"([\w.+-]+\.so[\w.]*): cannot open shared object file", message)
    if not m:
        return ""
    name = m.group(1)
    package = _RUNTIME_PACKAGES.get(name.split(".so")[0])
    return " (missing: %s%s)" % (name, ", Debian package %s" % package if package else "")


def api():
    """The loaded C API (loaded on first use)."""
    global _api
    if _api is None:
        errors = []
        for path in _candidates():
            try:
                _api = _Api(ctypes.CDLL(path), path)
                break
            except OSError as e:
                errors.append(str(e) + missing_library_hint(str(e)))
        else:
            raise Error(Status.IO, "libedgebert not found (set EDGEBERT_LIBRARY to its path): " +
                        "; ".join(errors))
    return _api
