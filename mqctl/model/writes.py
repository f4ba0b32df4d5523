"""Offset writes: what a write changes per queue and what it did, read back from the cluster."""

from __future__ import annotations

from mqctl.model.queues import MessageQueue
from mqctl.records import record


@record(frozen=True, slots=True)
class OffsetChange:
    """One queue of an offset write: committed offset before (-1 none) and after (-1 removes)."""

    queue: MessageQueue
    before: int
    after: int


@record(frozen=True, slots=True)
class AppliedQueue:
    """One queue of an applied write, read back from the cluster afterwards."""

    queue: MessageQueue
    target: int
    now: int | None  # the committed offset read back; None when it could not be read
    drift: int = 0  # how far the queue had moved between the plan and the write (online groups)
    note: str | None = None  # why it did not take ("Offset has been previously reset", ...)
    resumed: bool = False  # an online consumer committed past the new offset since: it took, and it moved on

    @property
    def took(self) -> bool:
        return self.now == self.target or self.resumed


@record(frozen=True, slots=True)
class WriteResult:
    """What an offset write did: the brokers written, how (``method``), each queue read back."""

    brokers: tuple[str, ...]
    method: str  # "store" | "broker-reset" (INVOKE_BROKER_TO_RESET_OFFSET) | "offset-update" (UPDATE_CONSUMER_OFFSET)
    checks: tuple[AppliedQueue, ...] = ()
    notes: tuple[str, ...] = ()

    @property
    def not_taken(self) -> list[AppliedQueue]:
        return [c for c in self.checks if not c.took]
