"""edgebert.Model: a loaded .ebm model (from a file or from bytes), its info and label names."""

import ctypes
import threading
import weakref

from ._errors import Error, Status
from ._handle import NativeHandle
from ._library import ModelInfoStruct, SessionOptionsStruct, api
from ._types import INFO_FIELDS, ModelInfo, Task

_ERROR_SIZE = 512
_ALIGN = 64


class Model(NativeHandle):
    """An immutable model; any number of sessions on any threads may share it.

    Model(path) maps the file; Model.from_bytes(data) copies data into 64-byte aligned memory the
    model owns. close() (or leaving a `with` block) closes the model's open sessions first."""

    _kind = "model"

    def __init__(self, path):
        self._lib = api()
        self._lock = threading.Lock()
        self._sessions = weakref.WeakSet()
        self._buffer = None
        self._handle = None
        handle = ctypes.c_void_p()
        err = ctypes.create_string_buffer(_ERROR_SIZE)
        try:
            encoded = str(path).encode("utf-8")
        except UnicodeEncodeError as e:
            raise Error(Status.INVALID_ARGUMENT, "model path is not valid text: %s" % e)
        if b"\0" in encoded:
            raise Error(Status.INVALID_ARGUMENT, "model path contains a NUL character")
        _check_load(self._lib.eb_model_load_file(encoded, ctypes.byref(handle), err, _ERROR_SIZE), err)
        self._handle = handle

    @classmethod
    def from_bytes(cls, data):
        """Loads a model from a bytes-like object (copied once into aligned memory)."""
        model = cls.__new__(cls)
        model._lib = api()
        model._lock = threading.Lock()
        model._sessions = weakref.WeakSet()
        model._handle = None
        view = memoryview(data).cast("B")
        raw = ctypes.create_string_buffer(len(view) + _ALIGN)
        offset = (-ctypes.addressof(raw)) % _ALIGN
        ctypes.memmove(ctypes.addressof(raw) + offset, bytes(view), len(view))
        model._buffer = raw
        handle = ctypes.c_void_p()
        err = ctypes.create_string_buffer(_ERROR_SIZE)
        _check_load(model._lib.eb_model_load_memory(ctypes.addressof(raw) + offset, len(view),
                                                    ctypes.byref(handle), err, _ERROR_SIZE), err)
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
    def labels(self):
        """All label names, in index order ([] for models without labels)."""
        return [self.label(i) for i in range(self.info.num_labels)]

    def session(self, threads=1, max_sequence_length=0, split_special_tokens=False, max_memory_bytes=0):
        """A new Session (see eb_session_options); 0 = the model's maximum length, no memory limit."""
        from .session import Session  # session.py imports this module
        for name, value, lo, hi in (("threads", threads, 0, 2**31 - 1),
                                    ("max_sequence_length", max_sequence_length, 0, 2**31 - 1),
                                    ("max_memory_bytes", max_memory_bytes, 0, 2**64 - 1)):
            if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
                raise Error(Status.INVALID_ARGUMENT, "%s must be an int in [%d, %d], got %r" % (name, lo, hi, value))
        opts = SessionOptionsStruct()
        self._lib.eb_session_options_init(ctypes.byref(opts))
        opts.num_threads = threads
        opts.max_sequence_length = max_sequence_length
        opts.split_special_tokens = 1 if split_special_tokens else 0
        opts.max_memory_bytes = max_memory_bytes
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


def _check_load(status, err):
    if status != Status.OK:
        raise Error(status, _message(err, api(), status))
