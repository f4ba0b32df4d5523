"""Exit statuses and the typed errors every layer raises.

Only ``mqctl/cli/errors.py`` prints these; everything below the CLI raises them.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import IntEnum
from typing import Protocol


class ExitStatus(IntEnum):
    OK = 0
    ERROR = 1
    USAGE = 2
    NOT_FOUND = 3
    UNREACHABLE = 4
    REFUSED = 5
    STORE_DATA = 6
    NOT_AVAILABLE = 7
    DENIED = 8  # ACL: the broker refused who is asking (authentication or authorization)
    APPLIED_THEN_FAILED = 9  # a write landed (journalled), then something after it failed: do not retry
    CHECK_FAILED = 10
    INTERRUPTED = 130
    BROKEN_PIPE = 141  # stdout's reader went away (`| head`): 128 + SIGPIPE, as a Unix tool killed by it


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


# ------------------------------------------------------------------------------------------------
# The live cluster (remoting): local protocol faults are kept apart from the broker's own answers.


class ProtocolError(UnreachableError):
    """The peer did not speak RocketMQ's remoting protocol: a bad, oversized or truncated frame, a
    connection closed mid-frame. Local to this conversation; nothing was answered."""


class RemoteTimeoutError(UnreachableError):
    """No answer within the timeout (per request) or the overall deadline."""


# Broker/name-server response codes (remoting.md 6) -> the exit status they mean for a user.
_RESPONSE_EXIT = {
    3: ExitStatus.NOT_AVAILABLE,  # REQUEST_CODE_NOT_SUPPORTED: this broker version lacks the request
    14: ExitStatus.UNREACHABLE,  # SERVICE_NOT_AVAILABLE
    1500: ExitStatus.UNREACHABLE,  # GO_AWAY: a proxy shutting down
    16: ExitStatus.DENIED,  # NO_PERMISSION (authentication / authorization)
    17: ExitStatus.NOT_FOUND,  # TOPIC_NOT_EXIST
    22: ExitStatus.NOT_FOUND,  # QUERY_NOT_FOUND (no committed offset)
    24: ExitStatus.NOT_FOUND,  # SUBSCRIPTION_NOT_EXIST
    26: ExitStatus.NOT_FOUND,  # SUBSCRIPTION_GROUP_NOT_EXIST
    206: ExitStatus.NOT_FOUND,  # CONSUMER_NOT_ONLINE
}


class BrokerResponseError(MqctlError):
    """A broker or name server answered a request with an error code (its code and remark kept)."""

    def __init__(
        self,
        code: int,
        remark: str | None,
        addr: str,
        request: str = "request",
        hint: str | None = None,
        code_name: str | None = None,
    ) -> None:
        text = " ".join((remark or "").split()) or "no remark"
        named = f"code {code} {code_name}" if code_name else f"code {code}"
        super().__init__(f"{addr} refused {request}: {named}: {text}", hint)
        self.code = code
        self.remark = remark
        self.addr = addr
        self.exit_status = _RESPONSE_EXIT.get(code, ExitStatus.REFUSED)


class AccessDeniedError(MqctlError):
    """A broker (or name server) with ACL refused who is asking: a wrong secret, an unknown access
    key, no grant on the group or topic, an admin request from a non-admin account. The message
    names the request, its group/topic, the access key and why (remoting/acl.py words it); the
    broker's code and raw remark are kept."""

    exit_status = ExitStatus.DENIED

    def __init__(
        self,
        message: str,
        hint: str | None = None,
        *,
        code: int | None = None,
        remark: str | None = None,
        addr: str | None = None,
    ) -> None:
        super().__init__(message, hint)
        self.code = code
        self.remark = remark
        self.addr = addr


class PartialWriteError(MqctlError):
    """A write across several brokers stopped part-way: ``applied`` names the brokers that hold the
    new offsets (the others are unchanged). The journal keeps a record so undo can put them back.
    ``landed`` False: every broker refused and reading back showed no queue at its target, so
    nothing was written (the journal records the attempt as refused)."""

    def __init__(
        self,
        message: str,
        applied: list[str],
        exit_status: ExitStatus,
        hint: str | None = None,
        *,
        landed: bool = True,
    ) -> None:
        super().__init__(message, hint)
        self.applied = applied
        self.exit_status = exit_status
        self.landed = landed


class LandedThenFailedError(MqctlError):
    """An --execute whose offsets landed (and were journalled as ``journal_id``), then a later step
    (the export, stdout) failed with ``exc``: never a plain failure a script would retry."""

    exit_status = ExitStatus.APPLIED_THEN_FAILED

    def __init__(self, journal_id: str, exc: BaseException) -> None:
        if isinstance(exc, MqctlError):
            what = exc.message
        elif isinstance(exc, OSError):
            what = os_error_message(exc) if exc.filename else f"writing the output: {exc.strerror or exc}"
        elif isinstance(exc, SystemExit):
            what = "writing the output: Broken pipe"
        elif isinstance(exc, KeyboardInterrupt):
            what = "interrupted"
        else:
            what = f"internal error: {type(exc).__name__}: {exc}"
        super().__init__(
            f"after the reset was applied: {what}",
            f"the reset landed (journal {journal_id}): do not run it again; --undo {journal_id} takes it back",
        )


def os_error_message(exc: OSError) -> str:
    """'PATH: reason' for an OSError, without Python's '[Errno N]' noise."""
    reason = exc.strerror or str(exc)
    names = [n for n in (exc.filename, exc.filename2) if n]
    return f"{' -> '.join(str(n) for n in names)}: {reason}" if names else reason


class _Failure(Protocol):
    """What a failed broker is known by (``model.BrokerFailure``; errors import no model)."""

    @property
    def broker_name(self) -> str: ...
    @property
    def addr(self) -> str | None: ...
    @property
    def message(self) -> str: ...
    @property
    def exit_status(self) -> int: ...


class BrokersFailedError(MqctlError):
    """Brokers that did not answer while the command went on without them: one line naming each
    (once) and what their silence costs (``consequence``), with the exit status their answers
    mean (the worst of them: 4 when unreachable, 5 when refused ...). Raised after the other
    brokers' numbers were printed, so a partial answer never ends as a success."""

    def __init__(
        self,
        failures: Iterable[_Failure],
        consequence: str,
        *,
        unread_groups: int = 0,
        hint: str | None = None,
    ) -> None:
        self.failures = tuple(failures)
        named: dict[str, tuple[str, int]] = {}
        for f in self.failures:
            where = f"{f.broker_name} ({f.addr})" if f.addr else f.broker_name
            named.setdefault(where, (f.message, int(f.exit_status)))
        if named and all(s == ExitStatus.DENIED for _m, s in named.values()):
            # each denial names its broker, the request and why already
            text = f"{'; '.join(m for m, _s in named.values())}: {consequence}"
        else:
            names = "; ".join(f"{b}: {m}" for b, (m, _s) in named.items())
            text = f"{len(named)} broker(s) did not answer ({names}): {consequence}"
        if unread_groups:
            text += f"; {unread_groups} group(s) could not be read at all"
        super().__init__(text, hint)
        self.brokers = list(named)
        statuses = [s for _m, s in named.values()] or [int(ExitStatus.UNREACHABLE)]
        self.exit_status = ExitStatus(max(statuses))
