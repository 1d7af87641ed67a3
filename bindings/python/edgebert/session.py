# SPDX-License-Identifier: Apache-2.0
"""edgebert.Session: runs a model on text, a text pair, token ids or embeddings and returns copies
of the outputs as numpy float32 arrays. One session per thread (calls on one session are
serialized by a lock, so misuse across threads is slow, never a crash)."""

import ctypes
import threading

import numpy as np

from ._errors import Error, Status
from ._handle import NativeHandle
from ._library import ChunkStruct, SequenceInfoStruct, SpanStruct, WordStruct, c_float_p, c_int32_p
from ._types import Chunk, Output, Span, Task, TokenLabel, Word

_INT32_MIN, _INT32_MAX = -2**31, 2**31 - 1
_SIZE_MAX = 2**64 - 1


class Session(NativeHandle):
    """Created by Model.session(); holds one planned arena. Closing it (or its model) is final."""

    _kind = "session"

    def __init__(self, model, handle, hidden_size):
        self._model = model  # keeps the model alive while the session exists
        # and the memory of a Model.from_bytes, which the C session reads until it is destroyed, even
        # when the model was closed first (a garbage cycle's finalizers run in any order)
        self._model_memory = model._buffer
        self._lib = model._lib
        self._handle = handle
        self._lock = threading.Lock()
        self._hidden = hidden_size
        self._context = None  # UTF-8 bytes of the last run's context (text_pair) for spans
        self._texts = ()  # UTF-8 bytes of the last text run's segments (text, text_pair) for words
        self._dims = 0  # set_embedding_dims (0: the full embedding)
        self._prompt = None  # set_prompt

    @property
    def model(self):
        return self._model

    def _check(self, status, what):
        if status != Status.OK:
            msg = self._lib.eb_session_last_error(self._handle)
            text = msg.decode("utf-8", errors="replace") if msg else ""
            raise Error(status, text or "%s: %s" % (what, self._lib.eb_status_string(status).decode()))

    def run(self, text=None, text_pair=None, ids=None, types=None, mask=None, embeddings=None):
        """Runs on exactly one input kind and returns {output name: float32 array copy} for every
        output the model has: text (optionally with text_pair), ids (types and mask optional) or
        embeddings ([seq, hidden] float32, mask optional)."""
        kinds = sum(x is not None for x in (text, ids, embeddings))
        if kinds != 1:
            raise Error(Status.INVALID_ARGUMENT, "run() needs exactly one of text, ids, embeddings")
        if text_pair is not None and text is None:
            raise Error(Status.INVALID_ARGUMENT, "text_pair needs text")
        if text is not None and (types is not None or mask is not None):
            raise Error(Status.INVALID_ARGUMENT, "types and mask go with ids, not with text")
        if embeddings is not None and types is not None:
            raise Error(Status.INVALID_ARGUMENT, "types go with ids, not with embeddings")
        with self._lock:
            return self._run_locked(text, text_pair, ids, types, mask, embeddings)

    def _run_locked(self, text=None, text_pair=None, ids=None, types=None, mask=None, embeddings=None):
        """run() under the session's lock (held by the caller)."""
        handle = self._ptr()
        if text is not None:
            a = _utf8(text, "text")
            self._context, self._texts = None, ()
            if text_pair is None:
                self._check(self._lib.eb_session_run_text(handle, a), "run_text")
                self._texts = (a,)
            else:
                b = _utf8(text_pair, "text_pair")
                self._check(self._lib.eb_session_run_text_pair(handle, a, b), "run_text_pair")
                self._context, self._texts = b, (a, b)
        elif ids is not None:
            ids_a = _int32_array(ids, "ids")
            n = ids_a.shape[0]
            types_a = None if types is None else _int32_array(types, "types", n)
            mask_a = None if mask is None else _int32_array(mask, "mask", n)
            self._context, self._texts = None, ()
            self._check(self._lib.eb_session_run_ids(handle, _p(ids_a), _p(types_a), _p(mask_a), n), "run_ids")
        else:
            emb = _float32_matrix(embeddings, self._hidden)
            n = emb.shape[0]
            mask_a = None if mask is None else _int32_array(mask, "mask", n)
            self._context, self._texts = None, ()
            self._check(self._lib.eb_session_run_embeddings(handle, emb.ctypes.data_as(c_float_p), _p(mask_a), n),
                        "run_embeddings")
        return self._outputs_locked()

    def _output_locked(self, which):
        data = c_float_p()
        shape = (ctypes.c_int64 * 2)()
        rank = ctypes.c_int32()
        status = self._lib.eb_session_get_output(self._ptr(), int(which), ctypes.byref(data), shape, ctypes.byref(rank))
        if status != Status.OK:
            return status, None
        dims = tuple(shape[i] for i in range(rank.value))
        count = int(np.prod(dims)) if dims else 0
        if count == 0:
            return status, np.zeros(dims, dtype=np.float32)
        return status, np.ctypeslib.as_array(data, shape=(count,)).reshape(dims).copy()

    def _outputs_locked(self):
        out = {}
        for which in Output:
            status, array = self._output_locked(which)
            if status == Status.OK:
                out[which.key] = array
            elif status == Status.UNSUPPORTED or (status == Status.INVALID_ARGUMENT and which >= Output.SENTENCE_EMBEDDING
                                                  and not self._lib.has("eb_session_run_text_pair")):
                continue  # the model lacks it (libraries before the task outputs do not know 3..6)
            else:
                self._check(status, "get_output " + which.key)
        return out

    def output(self, which):
        """One output of the last run (an Output or its name) as a float32 array copy."""
        which = _output(which)
        with self._lock:
            status, array = self._output_locked(which)
            self._check(status, "get_output " + which.key)
            return array

    @property
    def outputs(self):
        """Every output the model has, from the last run (as run() returns them)."""
        with self._lock:
            self._ptr()
            return self._outputs_locked()

    @property
    def input_ids(self):
        """Token ids of the last run (after tokenization for text), int32 array copy."""
        with self._lock:
            ptr, n = c_int32_p(), ctypes.c_size_t()
            self._check(self._lib.eb_session_get_input_ids(self._ptr(), ctypes.byref(ptr), ctypes.byref(n)),
                        "get_input_ids")
            return _copy_ints(ptr, n.value)

    def token_offsets(self):
        """After a text run: (begin, end, segment) int32 arrays, each token's byte range in its
        text and its segment (0 = text, 1 = text_pair, -1 = special token)."""
        with self._lock:
            return self._token_offsets_locked()

    def _token_offsets_locked(self):
        b, e, s, n = c_int32_p(), c_int32_p(), c_int32_p(), ctypes.c_size_t()
        self._check(self._lib.eb_session_get_token_offsets(self._ptr(), ctypes.byref(b), ctypes.byref(e),
                                                           ctypes.byref(s), ctypes.byref(n)),
                    "get_token_offsets")
        return _copy_ints(b, n.value), _copy_ints(e, n.value), _copy_ints(s, n.value)

    def word_ids(self):
        """After a text run: for each token, the index of its word within its segment (as
        HuggingFace's word_ids()), -1 for special tokens; int32 array copy."""
        with self._lock:
            ptr, n = c_int32_p(), ctypes.c_size_t()
            self._check(self._lib.eb_session_get_word_ids(self._ptr(), ctypes.byref(ptr), ctypes.byref(n)),
                        "get_word_ids")
            return _copy_ints(ptr, n.value)

    def words(self):
        """After a text run: its words in token order, each a Word(first_token, last_token,
        segment, begin_byte, end_byte, text, label); label is the name of the word's first token's
        label for token classifiers, else None."""
        with self._lock:
            ptr, n = ctypes.POINTER(WordStruct)(), ctypes.c_size_t()
            self._check(self._lib.eb_session_get_words(self._ptr(), ctypes.byref(ptr), ctypes.byref(n)), "get_words")
            raw = [ptr[i] for i in range(n.value)]
            words = [(w.first_token, w.last_token, w.segment, w.begin_byte, w.end_byte, w.label) for w in raw]
            texts = self._texts
        out = []
        for first, last, segment, begin, end, label in words:
            data = texts[segment] if 0 <= segment < len(texts) else b""
            text = data[begin:end].decode("utf-8", errors="replace") if 0 <= begin <= end <= len(data) else None
            out.append(Word(first, last, segment, begin, end, text, self._model.label(label) if label >= 0 else None))
        return out

    def best_span(self, max_answer_tokens=30):
        """QA models after run(text=question, text_pair=context): the best answer Span, whose
        .text is the answer exactly as written in the context."""
        if isinstance(max_answer_tokens, bool) or not isinstance(max_answer_tokens, int) or \
                not _INT32_MIN <= max_answer_tokens <= _INT32_MAX:
            raise Error(Status.INVALID_ARGUMENT, "max_answer_tokens must be a 32-bit int")
        with self._lock:
            span = SpanStruct()
            self._check(self._lib.eb_session_best_span(self._ptr(), max_answer_tokens, ctypes.byref(span)),
                        "best_span")
            text = None
            if self._context is not None and 0 <= span.begin_byte <= span.end_byte <= len(self._context):
                text = self._context[span.begin_byte:span.end_byte].decode("utf-8", errors="replace")
            return Span(span.start_token, span.end_token, span.begin_byte, span.end_byte, span.score, text)

    # ---- task outputs one call away (compositions of the calls above)

    def embed(self, text, text_pair=None, prompt=None):
        """Sentence-embedding models: the embedding of text (float32 [hidden], or [dims] after
        set_embedding_dims); prompt: a prompt name for this call only (see set_prompt)."""
        if prompt is None:
            return self._task_output(text, text_pair, "sentence_embedding")
        name = _prompt_name(prompt)
        with self._lock:  # one call: no other thread's run sees this prompt
            before = self._prompt
            self._set_prompt_locked(name)
            try:
                out = self._run_locked(text=text, text_pair=text_pair)
            finally:
                self._set_prompt_locked(before)
        return self._task_key(out, "sentence_embedding")

    def classify(self, text, text_pair=None):
        """Sequence classifiers: the name of the label with the largest logit (eb_session_classify_many
        of this one input: afterwards the session's outputs are those of a packed run of it)."""
        a = [_utf8(text, "text")]
        b = None if text_pair is None else [_utf8(text_pair, "text_pair")]
        label = np.full(1, -1, dtype=np.int32)
        self._many_locked("classify", a, b, lambda lib, h, pa, pb, n: lib.eb_session_classify_many(
            h, pa, pb, n, None, 0, _p(label), None))
        return self._model.label(int(label[0]))

    def answer(self, question, context, max_answer_tokens=30, doc_stride=-1):
        """Extractive QA models: the best answer Span (.text as written in the context) on a
        context of any length: (question, context) as one pair when it fits the session, else over
        windows of the context's tokens overlapping by doc_stride tokens (< 0: min(128, window / 2)),
        as HuggingFace's question-answering pipeline does; .windows is the number of windows run.
        Afterwards the outputs and offsets are the last window's. (A library without
        eb_session_answer: one pair run, so a context that does not fit is SEQUENCE_TOO_LONG.)"""
        for name, value in (("max_answer_tokens", max_answer_tokens), ("doc_stride", doc_stride)):
            if isinstance(value, bool) or not isinstance(value, int) or not _INT32_MIN <= value <= _INT32_MAX:
                raise Error(Status.INVALID_ARGUMENT, "%s must be a 32-bit int" % name)
        if not self._lib.has("eb_session_answer"):
            self._task_output(question, context, "start_logits")
            return self.best_span(max_answer_tokens)._replace(windows=1)
        q, c = _utf8(question, "question"), _utf8(context, "context")
        with self._lock:
            span, windows = SpanStruct(), ctypes.c_int32()
            self._context, self._texts = None, ()
            self._check(self._lib.eb_session_answer(self._ptr(), q, c, max_answer_tokens, doc_stride,
                                                    ctypes.byref(span), ctypes.byref(windows)), "answer")
            self._context, self._texts = c, (q, c)
            text = None
            if 0 <= span.begin_byte <= span.end_byte <= len(c):
                text = c[span.begin_byte:span.end_byte].decode("utf-8", errors="replace")
            return Span(span.start_token, span.end_token, span.begin_byte, span.end_byte, span.score, text,
                        windows.value)

    def token_labels(self, text):
        """Token classifiers: a TokenLabel(begin, end, text, label) per word piece of text (the
        special tokens left out), label = the name of the largest of its token_logits."""
        with self._lock:  # the run and what is read of it, in one call
            self._run_locked(text=text)
            begin, end, segment = self._token_offsets_locked()
            labels = np.zeros(len(begin), dtype=np.int32)
            self._check(self._lib.eb_session_get_token_labels(self._ptr(), _p(labels), labels.shape[0], None),
                        "get_token_labels")
        data = text.encode("utf-8")
        return [TokenLabel(int(b), int(e), data[b:e].decode("utf-8", errors="replace"), self._model.label(int(k)))
                for b, e, seg, k in zip(begin, end, segment, labels) if seg >= 0]

    # ---- many texts per call: packed runs looped in the library (eb_session_embed_many / classify_many)

    def embed_many(self, texts, text_pairs=None, statuses=False):
        """The embeddings of many texts (or text pairs: texts[i] with text_pairs[i]) as a float32
        ndarray [len(texts), hidden], row i equal to a single run of input i. Sentence-embedding
        models give their sentence_embedding; other models with a pooler give pooler_output; a
        model with neither raises Error(UNSUPPORTED). See classify_many for how the texts run and
        how failures are reported."""
        info = self._model.info
        if info.task == Task.SENTENCE_EMBEDDING:
            which = Output.SENTENCE_EMBEDDING
        elif info.has_pooler:
            which = Output.POOLER_OUTPUT
        else:
            raise Error(Status.UNSUPPORTED, "embed_many: this model has neither a sentence_embedding nor a "
                        "pooler_output (task %s)" % _task_name(info.task))
        width = self._dims if which == Output.SENTENCE_EMBEDDING and self._dims > 0 else info.hidden_size
        return self._rows_many("embed_many", texts, text_pairs, which, width, statuses)

    def classify_many(self, texts, text_pairs=None, statuses=False):
        """The logits of a sequence classifier for many texts (or text pairs) as a float32 ndarray
        [len(texts), num_labels], row i equal to a single run of input i (other models:
        Error(UNSUPPORTED)).

        The inputs run in packed runs: as many whole texts per run as the session's
        max_batch_tokens holds (Model.session(max_batch_tokens=...); 0 = max_sequence_length),
        tokens end to end without padding, until all are done. texts (and text_pairs, of the same
        length) must be a list or tuple of str; anything else (None, bytes, a str with NUL) raises
        Error(INVALID_ARGUMENT) before anything runs. An empty list gives an empty [0, width] array.
        An input that cannot run (longer than max_sequence_length: SEQUENCE_TOO_LONG) fails alone:
        by default Error(its status, "texts[i]: <the C message>") is raised for the first such
        input; with statuses=True nothing is raised for it and the call returns (array, statuses),
        statuses a list of Status per input (OK or why it did not run), the rows of failed inputs
        all 0. Afterwards the session's outputs are those of the last packed run."""
        return self._rows_many("classify_many", texts, text_pairs, None, self._model.info.num_labels,
                               statuses)

    def run_texts(self, texts):
        """One packed run (eb_session_run_texts): as many whole texts from the start of `texts` as
        the session's max_batch_tokens holds (Model.session(max_batch_tokens=...)), their tokens
        end to end, each sequence's outputs equal to a single run of its text (int8: bitwise).
        Returns the statuses of the texts it took, a list of Status (OK, or why that text alone
        did not run, e.g. SEQUENCE_TOO_LONG); its length is how many it took (at least 1: run the
        rest with another call). Sequence k of the run is text k: token_vectors(k); the outputs
        (outputs, output()) are the run's. texts must be a non-empty list or tuple of str, else
        Error(INVALID_ARGUMENT) before anything runs."""
        a = _utf8_list(texts, "texts")
        if not a:
            raise Error(Status.INVALID_ARGUMENT, "run_texts needs at least one text")
        n = len(a)
        array = (ctypes.c_char_p * n)(*a)
        consumed = ctypes.c_size_t(0)
        info = SequenceInfoStruct()
        with self._lock:
            handle = self._ptr()
            self._context, self._texts = None, ()
            self._check(self._lib.eb_session_run_texts(handle, array, n, ctypes.byref(consumed)), "run_texts")
            statuses = []
            for k in range(consumed.value):
                self._check(self._lib.eb_session_get_sequence(handle, k, ctypes.byref(info)), "get_sequence")
                statuses.append(_status(info.status))
            if consumed.value == 1:  # a packed run of one: its words index that text
                self._texts = (a[0],)
        return statuses

    _CHUNK_POOLINGS = {"none": 0, "mean": 1}

    def embed_chunked(self, text, window, stride, pooling="none"):
        """A long text (str, or UTF-8 bytes; any length) embedded in overlapping windows of its
        tokens (eb_session_embed_chunked), as HuggingFace tokenizers' overflowing tokens: windows
        of `window` tokens, consecutive ones sharing `stride` tokens, each run as a text of its own
        through the model's sentence embedding (sentence-embedding models; others raise
        Error(UNSUPPORTED)). Returns (vectors, chunks): pooling "none" gives a float32 ndarray
        [windows, width], one row per window; "mean" the windows' vectors averaged with weights
        their token counts, [width], L2-normalized when the model normalizes. chunks is a list of
        Chunk(begin_byte, end_byte, first_token, tokens) per window (bytes of the UTF-8 text).
        Bad arguments (stride >= window, a window longer than the session allows, a stretch of
        text without a single space longer than the session reads at a time) raise Error."""
        data = text if isinstance(text, bytes) else _utf8(text, "text")
        if not isinstance(pooling, str) or pooling not in self._CHUNK_POOLINGS:
            raise Error(Status.INVALID_ARGUMENT, "pooling must be 'none' or 'mean', got %r" % (pooling,))
        for name, v in (("window", window), ("stride", stride)):
            if not isinstance(v, int) or isinstance(v, bool) or not -2**31 <= v < 2**31:
                raise Error(Status.INVALID_ARGUMENT, "%s must be an int32, got %r" % (name, v))
        mode = self._CHUNK_POOLINGS[pooling]
        width = self._dims if self._dims > 0 else self._hidden
        count = ctypes.c_size_t(0)
        with self._lock:
            handle = self._ptr()
            self._context, self._texts = None, ()
            self._check(self._lib.eb_session_embed_chunked(handle, data, len(data), window, stride, mode, None, 0, None,
                                                           0, ctypes.byref(count)), "embed_chunked")
            n = count.value
            out = np.zeros((n, width) if mode == 0 else (width,), dtype=np.float32)
            chunks = (ChunkStruct * max(n, 1))()
            self._check(self._lib.eb_session_embed_chunked(handle, data, len(data), window, stride, mode,
                                                           out.ctypes.data_as(c_float_p), out.size, chunks, n,
                                                           ctypes.byref(count)), "embed_chunked")
        return out, [Chunk(c.begin_byte, c.end_byte, c.first_token, c.tokens) for c in chunks[:n]]

    _TRUNCATIONS = {"none": 0, "longest_first": 1, "only_second": 2}

    def set_truncation(self, strategy):
        """How later text calls cut a text (pair) longer than max_sequence_length
        (eb_session_set_truncation): "none" (the default: Error(SEQUENCE_TOO_LONG)),
        "longest_first" or "only_second", as HuggingFace tokenizers' truncation strategies."""
        if not isinstance(strategy, str) or strategy not in self._TRUNCATIONS:
            raise Error(Status.INVALID_ARGUMENT, "truncation must be one of %s, got %r" % (
                ", ".join(self._TRUNCATIONS), strategy))
        with self._lock:
            self._check(self._lib.eb_session_set_truncation(self._ptr(), self._TRUNCATIONS[strategy]), "set_truncation")

    _COLBERT_INPUTS = {"plain": 0, "query": 1, "document": 2}

    def set_colbert_input(self, mode):
        """ColBERT models converted from a PyLate folder: how later text runs (run(text=...),
        run_texts) lay out their tokens, as PyLate encodes them (eb_session_set_colbert_input):
        "query" ([CLS] query marker text [SEP], then [MASK] up to the model's query_length, those
        attended by no token unless attend_to_expansion_tokens), "document" ([CLS] document marker
        text [SEP]; token_vectors() leaves out the rows of the skiplist's tokens) or "plain" (the
        default: the model's template alone). Text pairs are refused in the query and document
        modes. Other models: Error(UNSUPPORTED) except for "plain"; other values:
        Error(INVALID_ARGUMENT). The last run's outputs stay readable."""
        if not isinstance(mode, str) or mode not in self._COLBERT_INPUTS:
            raise Error(Status.INVALID_ARGUMENT, "colbert input must be one of %s, got %r" % (
                ", ".join(self._COLBERT_INPUTS), mode))
        with self._lock:
            self._check(self._lib.eb_session_set_colbert_input(self._ptr(), self._COLBERT_INPUTS[mode]),
                        "set_colbert_input")

    def token_vectors(self, index=0):
        """ColBERT models, after a run: the token vectors of sequence `index` of the last run (0
        after a single run; after run_texts, text `index` of the texts it took) as the model scores
        them, a float32 ndarray [rows, dim] (dim: info.num_labels; eb_session_get_token_vectors):
        the sequence's rows of the token_vectors output, without the skiplist's rows after a
        "document" run (set_colbert_input). edgebert.maxsim scores them. Error(INVALID_ARGUMENT)
        for an index out of range, Error(UNSUPPORTED) for a model without token vectors,
        Error(BAD_STATE) before a run."""
        if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index < 2**63:
            raise Error(Status.INVALID_ARGUMENT, "index must be a non-negative int, got %r" % (index,))
        dim = self._model.info.num_labels  # (before the session's lock: Model.close takes both)
        rows = ctypes.c_size_t(0)
        with self._lock:
            handle = self._ptr()
            self._check(self._lib.eb_session_get_token_vectors(handle, index, None, 0, ctypes.byref(rows)),
                        "token_vectors")
            out = np.zeros((rows.value, dim), dtype=np.float32)
            if rows.value:
                self._check(self._lib.eb_session_get_token_vectors(handle, index, out.ctypes.data_as(c_float_p),
                                                                   rows.value, ctypes.byref(rows)), "token_vectors")
        return out

    def set_prompt(self, name):
        """The prompt (config_sentence_transformers.json "prompts", e.g. "query") put before the
        text of later text calls, as SentenceTransformer.encode(prompt_name=...) does
        (eb_session_set_prompt); None or "": no prompt. Unknown names: Error(INVALID_ARGUMENT)."""
        name = _prompt_name(name)
        with self._lock:
            self._set_prompt_locked(name)

    def _set_prompt_locked(self, name):
        self._check(self._lib.eb_session_set_prompt(self._ptr(), None if name is None else name.encode("utf-8")),
                    "set_prompt")
        self._prompt = name or None

    def set_num_threads(self, threads):
        """Later runs on 1 thread (the caller's) or on all the threads the session was made with
        (eb_session_set_num_threads): for cores that other work keeps busy, where 2 threads can be
        slower than 1. A session also leaves its pool by itself while its threads are preempted at
        such a rate and tries it again after a hold (1 s, doubling to 16 s); this call resets that.
        Outputs are the same; other counts raise Error(INVALID_ARGUMENT)."""
        if not isinstance(threads, int) or isinstance(threads, bool):
            raise Error(Status.INVALID_ARGUMENT, "threads must be an int, got %r" % (threads,))
        if not -2**31 <= threads < 2**31:
            raise Error(Status.INVALID_ARGUMENT, "threads %d is out of range" % threads)
        with self._lock:
            self._check(self._lib.eb_session_set_num_threads(self._ptr(), threads), "set_num_threads")

    def set_embedding_dims(self, dims):
        """Matryoshka: later sentence embeddings truncated to their first `dims` values and
        L2-normalized again (eb_session_set_embedding_dims); 0: the full embedding. Meaningful only
        for models trained for it."""
        _int_arg(dims, "dims", _INT32_MIN, _INT32_MAX)
        with self._lock:  # (the hidden size was read at creation: Model.close takes both locks)
            self._check(self._lib.eb_session_set_embedding_dims(self._ptr(), dims), "set_embedding_dims")
            self._dims = dims if dims != self._hidden else 0

    def truncated_tokens(self, index=0):
        """Text tokens cut from sequence `index` of the last run (0: nothing was cut)."""
        _int_arg(index, "index", 0, _SIZE_MAX)
        with self._lock:
            out = ctypes.c_int32(0)
            self._check(self._lib.eb_session_get_truncated_tokens(self._ptr(), index, ctypes.byref(out)),
                        "truncated_tokens")
            return out.value

    def rerank(self, query, passages, top_k=None, statuses=False):
        """Cross-encoders (a sequence classifier with one label; other models: Error(UNSUPPORTED)):
        the passages ranked by their relevance to query, best first, as a list of (index, score)
        (index into passages; equal scores: the lower index first), the top_k best only when
        top_k is given (eb_session_rerank_top_k). The score is the model's: the raw logit, or its
        sigmoid when the checkpoint's sentence-transformers config says Sigmoid (or says nothing,
        CrossEncoder's default for one label). The (query, passage) pairs run in packed runs as
        classify_many's inputs do; a passage that cannot run raises Error(its status,
        "passages[i]: ...") for the first such one, or with statuses=True is left out of the
        ranking and the call returns (ranking, statuses: a Status per passage)."""
        q = _utf8(query, "query")
        a = _utf8_list(passages, "passages")
        n = len(a)
        k = n if top_k is None else top_k
        if not isinstance(k, int) or isinstance(k, bool) or k < 0:
            raise Error(Status.INVALID_ARGUMENT, "top_k must be a non-negative int, got %r" % (top_k,))
        k = min(k, n)
        order = np.zeros(max(k, 1), dtype=np.int32)
        scores = np.zeros(max(k, 1), dtype=np.float32)
        codes = np.zeros(max(n, 1), dtype=np.int32) if statuses else None
        found = ctypes.c_size_t(0)
        array = (ctypes.c_char_p * n)(*a)
        with self._lock:
            handle = self._ptr()
            self._context, self._texts = None, ()
            self._check(self._lib.eb_session_rerank_top_k(handle, q, array, n, k, _p(order), scores.ctypes.data_as(
                c_float_p), ctypes.byref(found), None if codes is None else _p(codes)), "rerank")
        ranking = [(int(order[r]), float(scores[r])) for r in range(found.value)]
        return (ranking, [_status(int(c)) for c in codes[:n]]) if statuses else ranking

    def sparse_top_k(self, top_k=0, threshold=0.0, index=0):
        """Masked-LM (SPLADE) models, after a run: the entries of sequence `index`'s sparse vector
        above threshold, largest first, at most top_k (0: all), as a list of (token id, weight)
        (eb_session_sparse_top_k); other models: Error(UNSUPPORTED)."""
        _int_arg(top_k, "top_k", 0, _SIZE_MAX)
        _int_arg(index, "index", 0, _SIZE_MAX)
        if isinstance(threshold, bool) or not isinstance(threshold, (int, float)):
            raise Error(Status.INVALID_ARGUMENT, "threshold must be a number, got %r" % (threshold,))
        vocab = self._model.info.vocab_size
        room = max(min(top_k, vocab) if top_k > 0 else vocab, 1)
        ids = np.zeros(room, dtype=np.int32)
        weights = np.zeros(room, dtype=np.float32)
        found = ctypes.c_size_t(0)
        with self._lock:
            self._check(self._lib.eb_session_sparse_top_k(self._ptr(), index, top_k, float(threshold), _p(ids),
                                                          weights.ctypes.data_as(c_float_p), ctypes.byref(found)),
                        "sparse_top_k")
        return [(int(ids[i]), float(weights[i])) for i in range(found.value)]

    def fill_mask(self, token, k=5):
        """Masked-LM models, after a run: the k most probable vocabulary entries at run-wide token
        `token` (a row of last_hidden_state), largest first, as a list of (token id, probability):
        the softmax of the masked-LM logits there, as HF's fill-mask pipeline
        (eb_session_fill_mask); other models: Error(UNSUPPORTED)."""
        _int_arg(token, "token", 0, _SIZE_MAX)
        _int_arg(k, "k", 0, _SIZE_MAX)
        room = max(min(k, self._model.info.vocab_size), 1)
        ids = np.zeros(room, dtype=np.int32)
        probs = np.zeros(room, dtype=np.float32)
        found = ctypes.c_size_t(0)
        with self._lock:
            self._check(self._lib.eb_session_fill_mask(self._ptr(), token, min(k, room), _p(ids),
                                                       probs.ctypes.data_as(c_float_p), ctypes.byref(found)),
                        "fill_mask")
        return [(int(ids[i]), float(probs[i])) for i in range(found.value)]

    def _rows_many(self, fn, texts, text_pairs, which, width, statuses):
        """embed_many (fn "embed_many", output `which`) / classify_many: the inputs' rows [n, width]
        (and statuses) from one C call, which loops over the packed runs."""
        a = _utf8_list(texts, "texts")
        b = None if text_pairs is None else _utf8_list(text_pairs, "text_pairs")
        if b is not None and len(b) != len(a):
            raise Error(Status.INVALID_ARGUMENT, "%s: %d texts but %d text_pairs" % (fn, len(a), len(b)))
        out = np.zeros((len(a), width), dtype=np.float32)
        codes = np.zeros(len(a), dtype=np.int32) if statuses else None
        rows, size, status_p = out.ctypes.data_as(c_float_p), out.size, None if codes is None else _p(codes)
        if fn == "embed_many":
            self._many_locked(fn, a, b, lambda lib, h, pa, pb, n: lib.eb_session_embed_many(
                h, pa, pb, n, int(which), rows, size, status_p))
        else:
            self._many_locked(fn, a, b, lambda lib, h, pa, pb, n: lib.eb_session_classify_many(
                h, pa, pb, n, rows, size, None, status_p))
        return (out, [_status(int(c)) for c in codes]) if statuses else out

    def _many_locked(self, what, a, b, call):
        """call(lib, handle, texts, pairs or None, n): one many-texts C call on the UTF-8 texts a
        (and pairs b); its failure raised as Error."""
        n = len(a)
        array_a = (ctypes.c_char_p * n)(*a)
        array_b = None if b is None else (ctypes.c_char_p * n)(*b)
        with self._lock:
            handle = self._ptr()
            self._context, self._texts = None, ()
            self._check(call(self._lib, handle, array_a, array_b, n), what)
            if n == 1:  # a packed run of one: its words index that text (pair)
                self._texts = tuple(a) if b is None else (a[0], b[0])

    def _task_output(self, text, text_pair, key):
        return self._task_key(self.run(text=text, text_pair=text_pair), key)

    def _task_key(self, out, key):
        if key not in out:
            raise Error(Status.UNSUPPORTED, "this model has no %s output (task %s)" % (key, self._model.info.task.name))
        return out[key]

    def memory(self):
        """{"arena_bytes", "naive_bytes", "packed_weight_bytes"} of this session."""
        with self._lock:
            vals = [ctypes.c_size_t() for _ in range(3)]
            self._check(self._lib.eb_session_memory(self._ptr(), *[ctypes.byref(v) for v in vals]), "memory")
            return dict(zip(("arena_bytes", "naive_bytes", "packed_weight_bytes"), (v.value for v in vals)))

    def close(self):
        """Destroys the session. Idempotent; later calls raise Error(BAD_STATE)."""
        with self._lock:
            if self._handle is not None:
                self._lib.eb_session_destroy(self._handle)
                self._handle = None



def _output(which):
    if isinstance(which, Output):
        return which
    if isinstance(which, str) and which.upper() in Output.__members__:
        return Output[which.upper()]
    raise Error(Status.INVALID_ARGUMENT, "unknown output %r (one of %s)" % (which, ", ".join(o.key for o in Output)))


def _utf8(text, name):
    if not isinstance(text, str):
        raise Error(Status.INVALID_ARGUMENT, "%s must be a str, got %s" % (name, type(text).__name__))
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError as e:
        raise Error(Status.INVALID_ARGUMENT, "%s is not valid Unicode: %s" % (name, e))
    if b"\0" in data:
        raise Error(Status.INVALID_ARGUMENT, "%s contains a NUL character" % name)
    return data


def _utf8_list(texts, name):
    if not isinstance(texts, (list, tuple)):
        raise Error(Status.INVALID_ARGUMENT, "%s must be a list or tuple of str, got %s" % (name, type(texts).__name__))
    return [_utf8(t, "%s[%d]" % (name, i)) for i, t in enumerate(texts)]


def _int_arg(value, name, lo, hi):
    """An int argument in the C parameter's range [lo, hi] (ctypes would keep only its low bits)."""
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
        raise Error(Status.INVALID_ARGUMENT, "%s must be an int in [%d, %d], got %r" % (name, lo, hi, value))
    return value


def _prompt_name(name):
    """A prompt name as set_prompt takes it: None, or text without NUL (as every text argument)."""
    if name is None:
        return None
    if not isinstance(name, str):
        raise Error(Status.INVALID_ARGUMENT, "prompt must be a str or None, got %r" % (name,))
    _utf8(name, "prompt")
    return name


def _status(code):
    return Status(code) if code in Status._value2member_map_ else code


def _task_name(task):
    return task.name if isinstance(task, Task) else str(task)


def _int32_array(values, name, length=None):
    try:
        a = np.asarray(values)
    except Exception as e:  # ragged lists etc.
        raise Error(Status.INVALID_ARGUMENT, "%s: %s" % (name, e))
    if a.ndim != 1 or (a.size and not np.issubdtype(a.dtype, np.integer)):
        raise Error(Status.INVALID_ARGUMENT, "%s must be a 1-D sequence of integers" % name)
    if a.size and (a.min() < _INT32_MIN or a.max() > _INT32_MAX):
        raise Error(Status.INVALID_ARGUMENT, "%s has values outside the int32 range" % name)
    if length is not None and a.shape[0] != length:
        raise Error(Status.INVALID_ARGUMENT, "%s has %d values, ids has %d" % (name, a.shape[0], length))
    return np.ascontiguousarray(a, dtype=np.int32)


def _float32_array(values, name):
    """values as a C-contiguous float32 ndarray; Error(INVALID_ARGUMENT) for what is not real numbers."""
    try:
        if np.iscomplexobj(values):
            raise TypeError("complex values")
        a = np.ascontiguousarray(values, dtype=np.float32)
    except Exception as e:  # strings, ragged lists, None ...
        raise Error(Status.INVALID_ARGUMENT, "%s: not an array of real numbers (%s)" % (name, e))
    return a


def _float32_matrix(values, hidden):
    a = _float32_array(values, "embeddings")
    if a.ndim != 2 or a.shape[1] != hidden:
        raise Error(Status.INVALID_ARGUMENT, "embeddings must be a [seq_len, %d] matrix, got shape %s" % (hidden, a.shape))
    return a


def _p(array):
    return None if array is None else array.ctypes.data_as(c_int32_p)


def _copy_ints(ptr, n):
    if n == 0 or not ptr:
        return np.zeros(0, dtype=np.int32)
    return np.ctypeslib.as_array(ptr, shape=(n,)).copy()
