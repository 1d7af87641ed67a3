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
           "WeightCacheState", "Word", "__version__", "maxsim", "version"]


def version():
    """Version of the loaded libedgebert ("MAJOR.MINOR.PATCH")."""
    return _api().eb_version().decode()


def maxsim(query, document):
    """ColBERT's MaxSim (eb_maxsim): the sum over the query's rows of the largest dot product with
    any document row. query [q_tokens, dim], document [d_tokens, dim]: float32-convertible 2-D
    arrays, e.g. Session.run()["token_vectors"]. Error(INVALID_ARGUMENT) on empty or mismatched
    arrays."""
    import ctypes

    import numpy as np

    q = np.ascontiguousarray(query, dtype=np.float32)
    d = np.ascontiguousarray(document, dtype=np.float32)
    if q.ndim != 2 or d.ndim != 2 or q.shape[1] != d.shape[1]:
        raise Error(Status.INVALID_ARGUMENT, "maxsim: needs 2-D arrays of one width, got %s and %s" % (q.shape, d.shape))
    fp = ctypes.POINTER(ctypes.c_float)
    score = ctypes.c_float(0.0)
    status = _api().eb_maxsim(q.ctypes.data_as(fp), q.shape[0], d.ctypes.data_as(fp), d.shape[0], q.shape[1],
                              ctypes.byref(score))
    if status != Status.OK:
        raise Error(status, "maxsim: empty query or document (%s, %s)" % (q.shape, d.shape))
    return float(score.value)
