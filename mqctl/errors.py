"""Exit statuses and the typed errors every layer raises.

Only ``mqctl/cli/errors.py`` prints these; everything below the CLI raises them.
"""

from __future__ import annotations

from enum import IntEnum


class ExitStatus(IntEnum):
    OK = 0
    ERROR = 1
    USAGE = 2
    NOT_FOUND = 3
    UNREACHABLE = 4
    REFUSED = 5
    STORE_DATA = 6
    NOT_AVAILABLE = 7
    CHECK_FAILED = 10
    INTERRUPTED = 130


class MqctlError(Exception):
    """Base error: a one-line message, an optional hint, an exit status."""

    exit_status: ExitStatus = ExitStatus.ERROR

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint


class UsageError(MqctlError):
    """Bad input on the command line (malformed timestamp, bad option value)."""

    exit_status = ExitStatus.USAGE


class NotFoundError(MqctlError):
    """Unknown group, topic, queue or broker."""

    exit_status = ExitStatus.NOT_FOUND


class UnreachableError(MqctlError):
    """Cluster unreachable or timed out."""

    exit_status = ExitStatus.UNREACHABLE


class RefusedError(MqctlError):
    """The broker (or the store's owner) refused the request: e.g. the store lock is held."""

    exit_status = ExitStatus.REFUSED


class StoreError(MqctlError):
    """Corrupt, unreadable or unsupported store data."""

    exit_status = ExitStatus.STORE_DATA


class StoreCorruptError(StoreError):
    """Bytes that do not follow the broker's format (bad magic, bad length, truncated file)."""


class StoreUnsupportedError(StoreError):
    """A store layout mqctl deliberately does not read (RocksDB consume queue, DLedger commit log)."""


class NotAvailableError(MqctlError):
    """The backend cannot answer this question (e.g. connections from a store directory)."""

    exit_status = ExitStatus.NOT_AVAILABLE


class CheckFailedError(MqctlError):
    """A --max-lag style gate was exceeded (the data was still printed)."""

    exit_status = ExitStatus.CHECK_FAILED
