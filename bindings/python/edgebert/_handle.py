# SPDX-License-Identifier: Apache-2.0
"""Base of Model and Session: owns one C handle; context manager, `closed`, close on collection."""

from ._errors import Error, Status


class NativeHandle:
    _handle = None
    _kind = "object"

    @property
    def closed(self):
        return self._handle is None

    def _ptr(self):
        if self._handle is None:
            raise Error(Status.BAD_STATE, "%s is closed" % self._kind)
        return self._handle

    def close(self):
        raise NotImplementedError

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        if getattr(self, "_handle", None) is not None:
            self.close()
