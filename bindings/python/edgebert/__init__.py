# SPDX-License-Identifier: Apache-2.0
"""edgebert for Python: ctypes bindings over libedgebert.so (the C API in edgebert.h).

    import edgebert
    with edgebert.Model("model.ebm") as model, model.session(threads=2) as session:
        out = session.run(text="hello world")       # {"last_hidden_state": array, ...}

The library is the one bundled in the package (an installed wheel), else EDGEBERT_LIBRARY, else
one next to the package or in the system. __version__ is the wheel's version (CMake's project
version, which version() of its bundled library equals); None in a source checkout.
"""

from ._errors import Error, Status
from ._library import api as _api
from ._types import Chunk, ModelInfo, Output, Span, Task, TokenLabel, WeightCache, WeightCacheState, Word
from .model import Model
from .session import Session

try:
    from ._version import __version__  # written by build_wheel.sh
except ImportError:  # a source checkout (PYTHONPATH=bindings/python): no wheel version
    __version__ = None

__all__ = ["Chunk", "Error", "Model", "ModelInfo", "Output", "Session", "Span", "Status", "Task", "TokenLabel", "WeightCache",
           "WeightCacheState", "Word", "__version__", "maxsim", "pool_token_vectors", "version"]


def version():
    """Version of the loaded libedgebert ("MAJOR.MINOR.PATCH")."""
    return _api().eb_version().decode()


def maxsim(query, document):
    """ColBERT's MaxSim (eb_maxsim): the sum over the query's rows of the largest dot product with
    any document row. query [q_tokens, dim], document [d_tokens, dim]: float32-convertible 2-D
    arrays, e.g. Session.run()["token_vectors"]. Error(INVALID_ARGUMENT) on empty or mismatched
    arrays."""
    import ctypes

    from .session import _float32_array

    q, d = _float32_array(query, "maxsim: query"), _float32_array(document, "maxsim: document")
    if q.ndim != 2 or d.ndim != 2 or q.shape[1] != d.shape[1]:
        raise Error(Status.INVALID_ARGUMENT, "maxsim: needs 2-D arrays of one width, got %s and %s" % (q.shape, d.shape))
    fp = ctypes.POINTER(ctypes.c_float)
    score = ctypes.c_float(0.0)
    status = _api().eb_maxsim(q.ctypes.data_as(fp), q.shape[0], d.ctypes.data_as(fp), d.shape[0], q.shape[1],
                              ctypes.byref(score))
    if status != Status.OK:
        raise Error(status, "maxsim: empty query or document (%s, %s)" % (q.shape, d.shape))
    return float(score.value)


def pool_token_vectors(vectors, pool_factor, protected_tokens=1):
    """PyLate's hierarchical pooling of one document's token vectors (eb_pool_token_vectors, as
    ColBERT.encode(..., pool_factor=F) pools documents): the first `protected_tokens` rows are kept,
    the others are clustered (Ward) into max(rows / F, 1) clusters and replaced by their means; the
    means come first, then the protected rows. vectors [tokens, dim] (e.g.
    Session.token_vectors(i) after a DOCUMENT run) -> float32 [pooled, dim]. pool_factor 1 returns
    the rows unchanged. Error(INVALID_ARGUMENT) for an empty array, a factor < 1 or a value that is
    not finite."""
    import ctypes

    import numpy as np

    from .session import _float32_array, _int_arg

    v = _float32_array(vectors, "pool_token_vectors: vectors")
    if v.ndim != 2 or v.shape[0] == 0 or v.shape[1] == 0:
        raise Error(Status.INVALID_ARGUMENT, "pool_token_vectors: needs a non-empty 2-D array, got %s" % (v.shape,))
    _int_arg(pool_factor, "pool_token_vectors: pool_factor", 1, 2**64 - 1)
    _int_arg(protected_tokens, "pool_token_vectors: protected_tokens", 0, 2**64 - 1)
    out = np.empty_like(v)
    rows = ctypes.c_size_t(0)
    fp = ctypes.POINTER(ctypes.c_float)
    status = _api().eb_pool_token_vectors(v.ctypes.data_as(fp), v.shape[0], v.shape[1], int(pool_factor),
                                          int(protected_tokens), out.ctypes.data_as(fp), ctypes.byref(rows))
    if status != Status.OK:
        raise Error(status, "pool_token_vectors: %s" % ("out of memory" if status == Status.OUT_OF_MEMORY
                                                       else "a value that is not finite"))
    return out[:rows.value].copy()
