"""edgebert for Python: ctypes bindings over libedgebert.so (the C API in edgebert.h).

    import edgebert
    with edgebert.Model("model.ebm") as model, model.session(threads=2) as session:
        out = session.run(text="hello world")       # {"last_hidden_state": array, ...}

The library is found through EDGEBERT_LIBRARY, next to this package, or in the system.
"""

from ._errors import Error, Status
from ._library import api as _api
from ._types import ModelInfo, Output, Span, Task, TokenLabel
from .model import Model
from .session import Session

__all__ = ["Error", "Model", "ModelInfo", "Output", "Session", "Span", "Status", "Task", "TokenLabel", "version"]


def version():
    """Version of the loaded libedgebert ("MAJOR.MINOR.PATCH")."""
    return _api().eb_version().decode()
