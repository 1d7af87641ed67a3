# SPDX-License-Identifier: Apache-2.0
"""edgebert.Model: a loaded .ebm model (from a file or from bytes, optionally with a packed-weight
cache file), its info, label names, weight cache state and shared memory."""

import ctypes
import os
import threading
import weakref

from ._errors import Error, Status
from ._handle import NativeHandle
from ._library import LoadOptionsStruct, ModelInfoStruct, SessionOptionsStruct, api
from ._types import INFO_FIELDS, ModelInfo, Task, WeightCache, WeightCacheState

_ERROR_SIZE = 512
_ALIGN = 64


class Model(NativeHandle):
    """An immutable model; any number of sessions on any threads may share it.

    Model(path) maps the file; Model.from_bytes(data) copies data into 64-byte aligned memory the
    model owns. With weight_cache=PATH the packed GEMM weights are kept in that file: the first
    load writes it, later loads map it (see eb_load_options; never an error of the load, never
    other outputs: `weight_cache` tells what happened). close() (or leaving a `with` block)
    closes the model's open sessions first."""

    _kind = "model"

    def __init__(self, path, weight_cache=None):
        self._lib = api()
        self._lock = threading.Lock()
        self._sessions = weakref.WeakSet()
        self._buffer = None
        self._handle = None
        handle = ctypes.c_void_p()
        err = ctypes.create_string_buffer(_ERROR_SIZE)
        encoded = _path_bytes(path, "model path")
        opts = _load_options(self._lib, weight_cache)
        if opts is None:
            status = self._lib.eb_model_load_file(encoded, ctypes.byref(handle), err, _ERROR_SIZE)
        else:
            status = self._lib.eb_model_load_file_with_options(encoded, ctypes.byref(opts), ctypes.byref(handle),
                                                               err, _ERROR_SIZE)
        _check_load(status, err)
        self._handle = handle

    @classmethod
    def from_bytes(cls, data, weight_cache=None):
        """Loads a model from a bytes-like object (copied once into aligned memory)."""
        model = cls.__new__(cls)
        model._lib = api()
        model._lock = threading.Lock()
        model._sessions = weakref.WeakSet()
        model._handle = None
        try:
            view = memoryview(data).cast("B")
        except TypeError as e:  # None, str, a non-contiguous buffer ...
            raise Error(Status.INVALID_ARGUMENT, "from_bytes needs a bytes-like object: %s" % e)
        raw = ctypes.create_string_buffer(len(view) + _ALIGN)
        offset = (-ctypes.addressof(raw)) % _ALIGN
        ctypes.memmove(ctypes.addressof(raw) + offset, bytes(view), len(view))
        model._buffer = raw
        handle = ctypes.c_void_p()
        err = ctypes.create_string_buffer(_ERROR_SIZE)
        opts = _load_options(model._lib, weight_cache)
        address = ctypes.addressof(raw) + offset
        if opts is None:
            status = model._lib.eb_model_load_memory(address, len(view), ctypes.byref(handle), err, _ERROR_SIZE)
        else:
            status = model._lib.eb_model_load_memory_with_options(address, len(view), ctypes.byref(opts),
                                                                  ctypes.byref(handle), err, _ERROR_SIZE)
        _check_load(status, err)
        model._handle = handle
        return model

    @property
    def info(self):
        """ModelInfo with the model's shapes, task and flags."""
        with self._lock:
            s = ModelInfoStruct()
            status = self._lib.eb_model_get_info(self._ptr(), ctypes.byref(s))
            if status != Status.OK:
                raise Error(status, "eb_model_get_info: " + _status_text(self._lib, status))
        values = {f: getattr(s, f) for f in INFO_FIELDS}
        for f in ("has_pooler", "has_embeddings", "has_vocab", "is_int8", "is_distilbert"):
            values[f] = bool(values[f])
        values["task"] = Task(values["task"]) if values["task"] in Task._value2member_map_ else values["task"]
        return ModelInfo(**values)

    def label(self, index):
        """Name of label `index` (from the checkpoint's id2label, else "LABEL_<i>")."""
        if not isinstance(index, int) or not -2**31 <= index < 2**31:
            raise Error(Status.INVALID_ARGUMENT, "label index must be a 32-bit int, got %r" % (index,))
        name = ctypes.c_char_p()
        with self._lock:
            status = self._lib.eb_model_get_label(self._ptr(), index, ctypes.byref(name))
        if status != Status.OK:
            raise Error(status, "label %d: %s" % (index, _status_text(self._lib, status)))
        return name.value.decode("utf-8", errors="replace")

    @property
    def weight_cache(self):
        """WeightCache(state, message): what happened to the weight cache file of this model."""
        state, message = ctypes.c_int(), ctypes.c_char_p()
        with self._lock:
            status = self._lib.eb_model_get_weight_cache(self._ptr(), ctypes.byref(state), ctypes.byref(message))
            if status != Status.OK:
                raise Error(status, "eb_model_get_weight_cache: " + _status_text(self._lib, status))
            text = message.value.decode("utf-8", errors="replace") if message.value else ""
        known = state.value in WeightCacheState._value2member_map_
        return WeightCache(WeightCacheState(state.value) if known else state.value, text)

    def memory(self):
        """{"packed_weight_bytes", "model_file_bytes"}: memory shared by every session of the model
        (packed weights 0 on XNNPACK 2022, where each session packs its own)."""
        packed, file_bytes = ctypes.c_size_t(), ctypes.c_size_t()
        with self._lock:
            status = self._lib.eb_model_get_memory(self._ptr(), ctypes.byref(packed), ctypes.byref(file_bytes))
            if status != Status.OK:
                raise Error(status, "eb_model_get_memory: " + _status_text(self._lib, status))
        return {"packed_weight_bytes": packed.value, "model_file_bytes": file_bytes.value}

    @property
    def labels(self):
        """All label names, in index order ([] for models without labels)."""
        return [self.label(i) for i in range(self.info.num_labels)]

    def session(self, threads=1, max_sequence_length=0, split_special_tokens=False, max_memory_bytes=0,
                max_batch_tokens=0):
        """A new Session (see eb_session_options); 0 = the model's maximum length, no memory limit.
        max_batch_tokens: tokens of one packed run of embed_many / classify_many (0 =
        max_sequence_length; else at least max_sequence_length, or creation fails)."""
        from .session import Session  # session.py imports this module
        for name, value, lo, hi in (("threads", threads, 0, 2**31 - 1),
                                    ("max_sequence_length", max_sequence_length, 0, 2**31 - 1),
                                    ("max_batch_tokens", max_batch_tokens, 0, 2**31 - 1),
                                    ("max_memory_bytes", max_memory_bytes, 0, 2**64 - 1)):
            if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
                raise Error(Status.INVALID_ARGUMENT, "%s must be an int in [%d, %d], got %r" % (name, lo, hi, value))
        opts = SessionOptionsStruct()
        self._lib.eb_session_options_init(ctypes.byref(opts))
        opts.num_threads = threads
        opts.max_sequence_length = max_sequence_length
        opts.split_special_tokens = 1 if split_special_tokens else 0
        opts.max_memory_bytes = max_memory_bytes
        opts.max_batch_tokens = max_batch_tokens
        hidden = self.info.hidden_size
        handle = ctypes.c_void_p()
        err = ctypes.create_string_buffer(_ERROR_SIZE)
        with self._lock:
            status = self._lib.eb_session_create(self._ptr(), ctypes.byref(opts), ctypes.byref(handle), err, _ERROR_SIZE)
            if status != Status.OK:
                raise Error(status, _message(err, self._lib, status))
            session = Session(self, handle, hidden)
            self._sessions.add(session)
        return session

    def close(self):
        """Closes the model's open sessions, then frees the model. Idempotent."""
        with self._lock:
            if self._handle is None:
                return
            for s in list(self._sessions):
                s.close()
            self._lib.eb_model_free(self._handle)
            self._handle = None
            self._buffer = None


    def __repr__(self):
        return "<edgebert.Model %s>" % ("closed" if self.closed else self._lib.path)


def _status_text(lib, status):
    return lib.eb_status_string(status).decode("utf-8", errors="replace")


def _message(err, lib, status):
    text = err.value.decode("utf-8", errors="replace")
    return text or _status_text(lib, status)


def _path_bytes(path, what):
    """A path (str: UTF-8; bytes as they are; os.PathLike) as the bytes the C library opens."""
    try:
        path = os.fspath(path)
    except TypeError:
        raise Error(Status.INVALID_ARGUMENT, "%s must be a str, bytes or os.PathLike, got %s" % (what, type(path).__name__))
    try:
        encoded = path if isinstance(path, bytes) else path.encode("utf-8")
    except UnicodeEncodeError as e:
        raise Error(Status.INVALID_ARGUMENT, "%s is not valid text: %s" % (what, e))
    if b"\0" in encoded:
        raise Error(Status.INVALID_ARGUMENT, "%s contains a NUL character" % what)
    return encoded


def _load_options(lib, weight_cache):
    """eb_load_options for a weight cache path, or None (no options: the plain load functions,
    which every library version has)."""
    if weight_cache is None:
        return None
    opts = LoadOptionsStruct()
    lib.eb_load_options_init(ctypes.byref(opts))
    opts.weight_cache_path = _path_bytes(weight_cache, "weight cache path")
    return opts


def _check_load(status, err):
    if status != Status.OK:
        raise Error(status, _message(err, api(), status))
