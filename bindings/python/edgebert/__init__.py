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
from ._types import ModelInfo, Output, Span, Task, TokenLabel, WeightCache, WeightCacheState, Word
from .model import Model
from .session import Session

try:
    from ._version import __version__  # written by build_wheel.sh
except ImportError:  # a source checkout (PYTHONPATH=bindings/python): no wheel version
    __version__ = None

__all__ = ["Error", "Model", "ModelInfo", "Output", "Session", "Span", "Status", "Task", "TokenLabel", "WeightCache",
           "WeightCacheState", "Word", "__version__", "version"]


def version():
    """Version of the loaded libedgebert ("MAJOR.MINOR.PATCH")."""
    return _api().eb_version().decode()
