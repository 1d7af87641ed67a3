# SPDX-License-Identifier: Apache-2.0
"""edgebert.Error and the status codes of the C API (eb_status)."""

import enum


class Status(enum.IntEnum):
    """Same values as the C enum eb_status."""
    OK = 0
    INVALID_ARGUMENT = 1
    IO = 2
    INVALID_MODEL = 3
    UNSUPPORTED = 4
    OUT_OF_MEMORY = 5
    BACKEND = 6
    SEQUENCE_TOO_LONG = 7
    BAD_STATE = 8


class Error(RuntimeError):
    """A failed edgebert call: .status is the C eb_status code (an int), str() the C message."""

    def __init__(self, status, message):
        super().__init__(message)
        self.status = int(status)
        self.message = message

    def __repr__(self):
        try:
            name = Status(self.status).name
        except ValueError:
            name = str(self.status)
        return "edgebert.Error(%s, %r)" % (name, self.message)
