"""resetOffsetByTime: targets, plan rows and plans; the journal record of an applied reset."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from mqctl.model.queues import BackendTarget
from mqctl.model.writes import OffsetChange, WriteResult
from mqctl.records import field, record

TargetKind = Literal["time", "earliest", "latest", "offset", "shift", "explicit", "file", "undo"]

# Warning codes of a plan row (documented in the command's help).
W_CLAMPED = "clamped"

W_EMPTY = "queue-empty"

W_NO_COMMIT = "no-committed-offset"

W_BELOW_MIN = "current-below-min"

W_KEPT = "kept-not-backwards"

W_BEYOND_MAX = "beyond-max"


@record(frozen=True)
class Target:
    """Where to move: ``kind`` and its value (epoch ms, offset or shift)."""

    kind: TargetKind
    value: int = 0
    text: str = ""  # as the user gave it, for headers


@record(frozen=True)
class PlanRow:
    topic: str
    broker_name: str
    queue_id: int
    current_offset: int  # committed offset, -1 when the group has none for this queue
    target_offset: int  # -1 only in an undo: remove the entry again
    min_offset: int
    max_offset: int
    target_timestamp: int  # store time of the message at the target, -1 when there is none
    warnings: tuple[str, ...] = ()
    searched_offset: int | None = None  # a time target: the broker's answer before -f false kept it

    @property
    def delta(self) -> int | None:
        """Messages skipped (> 0) or replayed (< 0); None without a committed offset."""
        if self.current_offset < 0 or self.target_offset < 0:
            return None
        return self.target_offset - self.current_offset


@record(frozen=True)
class ResetPlan:
    group: str
    topic: str
    target: Target
    force: bool
    rows: tuple[PlanRow, ...]
    single_queue: bool = False
    undo_of: str | None = None
    warnings: tuple[str, ...] = field(default_factory=tuple)
    online: bool | None = None  # the group has clients connected (None: a store cannot tell)
    rocketmq_version: int | None = None  # the brokers' MQVersion ordinal, None when unknown

    @property
    def replayed(self) -> int:
        return sum(-d for r in self.rows if (d := r.delta) is not None and d < 0)

    @property
    def skipped(self) -> int:
        return sum(d for r in self.rows if (d := r.delta) is not None and d > 0)

    @property
    def changed(self) -> int:
        return sum(1 for r in self.rows if r.target_offset != r.current_offset)


JOURNAL_SCHEMA = "mqctl/resetJournal/v1"


@record(frozen=True)
class JournalRecord:
    id: str
    created_ms: int
    state: str  # PENDING | APPLIED | PARTIAL | REFUSED
    group: str
    target: BackendTarget
    changes: tuple[OffsetChange, ...]
    note: str | None = None
    applied_brokers: tuple[str, ...] = ()  # PARTIAL: the brokers that hold the new offsets
    undo_of: str | None = None  # this reset undid that record (``--undo latest`` never redoes it)
    path: Path | None = field(default=None, compare=False)
    result: WriteResult | None = field(default=None, compare=False)  # this run's write (not persisted)

    def to_json(self) -> dict[str, Any]:
        doc: dict[str, Any] = {
            "schema": JOURNAL_SCHEMA,
            "id": self.id,
            "createdMs": self.created_ms,
            "state": self.state,
            "group": self.group,
            "note": self.note,
            "backend": self.target.kind,
        }
        if self.target.kind.reads_files:
            doc["stores"] = dict(self.target.stores)
        else:
            doc["namesrv"] = self.target.namesrv
        if self.applied_brokers:
            doc["appliedBrokers"] = list(self.applied_brokers)
        if self.undo_of is not None:
            doc["undoOf"] = self.undo_of
        doc["changes"] = [
            {
                "topic": c.queue.topic,
                "brokerName": c.queue.broker_name,
                "queueId": c.queue.queue_id,
                "before": c.before,
                "after": c.after,
            }
            for c in self.changes
        ]
        return doc
