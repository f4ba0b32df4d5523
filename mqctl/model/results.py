"""What a command computed: progress rows and totals, reset plans, allocations. ops builds them,
render turns them into text; both depend on these types, never on each other."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from mqctl.model.broker import BackendTarget, BrokerFailure, MessageQueue, OffsetChange
from mqctl.model.subexpr import SubExpr

# ------------------------------------------------------------------------------------------------
# consumerProgress


@dataclass(frozen=True, slots=True)
class ProgressRow:
    """One consumerProgress row, with mqctl's extra columns."""

    topic: str
    broker_name: str
    queue_id: int
    broker_offset: int
    consumer_offset: int
    min_offset: int | None  # None when the backend was not asked (live, mqadmin's columns only)
    last_timestamp: int  # epoch ms of the message at consumerOffset-1, 0 when none
    inflight: int = 0
    client_ip: str | None = None
    committed: bool = True  # False when the group has no committed offset for this queue
    oldest_unconsumed_timestamp: int = 0  # store time of the first unconsumed message, 0 when none
    lag_ms: int = 0  # now - oldest_unconsumed_timestamp, 0 when nothing is unconsumed
    matched_diff: int | None = None  # --tags: exact count of unconsumed messages whose tag matches

    @property
    def diff(self) -> int:
        """mqadmin's Diff: negative when the committed offset lies above the broker's max."""
        return self.broker_offset - self.consumer_offset

    @property
    def lag(self) -> int:
        """Messages left to consume: the diff, never below zero (what totals and gates add up)."""
        return max(self.broker_offset - self.consumer_offset, 0)

    @property
    def above_max(self) -> bool:
        """Committed offset beyond the queue's end (a recreated queue, a bad reset)."""
        return self.consumer_offset > self.broker_offset

    @property
    def queue(self) -> MessageQueue:
        return MessageQueue(self.topic, self.broker_name, self.queue_id)


@dataclass(frozen=True)
class GroupProgress:
    group: str
    rows: list[ProgressRow]
    now_ms: int
    tags: SubExpr | None = None
    tag_collisions: int | None = None  # with --verify-tags: hash matches whose real tag did not match
    warnings: list[str] = field(default_factory=list)
    consume_tps: float | None = None  # None: the backend cannot know (a store)
    failures: tuple[BrokerFailure, ...] = ()  # brokers that did not answer: their rows are missing

    @property
    def diff_total(self) -> int:
        """Lag total: each queue's diff counted as never below zero, so a queue whose committed
        offset lies above its max cannot cancel out real lag elsewhere (gates use this)."""
        return sum(r.lag for r in self.rows)

    @property
    def raw_diff_total(self) -> int:
        """mqadmin's "Consume Diff Total": the plain sum of diffs, negative ones included."""
        return sum(r.diff for r in self.rows)

    @property
    def above_max(self) -> list[ProgressRow]:
        return [r for r in self.rows if r.above_max]

    @property
    def inflight_total(self) -> int:
        return sum(r.inflight for r in self.rows)

    @property
    def matched_total(self) -> int | None:
        if self.tags is None:
            return None
        return sum(r.matched_diff or 0 for r in self.rows)

    @property
    def max_lag_ms(self) -> int:
        return max((r.lag_ms for r in self.rows), default=0)


@dataclass(frozen=True)
class GroupSummary:
    """One row of the all-groups overview."""

    group: str
    diff_total: int
    topics: list[str]
    brokers: list[str]
    max_lag_ms: int
    raw_diff_total: int = 0  # mqadmin's sum, negative diffs included (plain output)
    queues_above_max: int = 0
    found_in: tuple[str, ...] = ()  # model.FOUND_*: where the overview found the group
    queues: int = 0
    tps: float | None = None  # consume TPS (live); None on a store
    clients: int | None = None  # online clients (live); None on a store
    version: int | None = None  # the oldest client's MQVersion ordinal
    consume_type: str | None = None
    message_model: str | None = None
    failure: str | None = None  # why the group's stats could not be read


# ------------------------------------------------------------------------------------------------
# resetOffsetByTime

TargetKind = Literal["time", "earliest", "latest", "offset", "shift", "explicit", "file", "undo"]

# Warning codes of a plan row (documented in the command's help).
W_CLAMPED = "clamped"
W_EMPTY = "queue-empty"
W_NO_COMMIT = "no-committed-offset"
W_BELOW_MIN = "current-below-min"
W_KEPT = "kept-not-backwards"
W_BEYOND_MAX = "beyond-max"


@dataclass(frozen=True)
class Target:
    """Where to move: ``kind`` and its value (epoch ms, offset or shift)."""

    kind: TargetKind
    value: int = 0
    text: str = ""  # as the user gave it, for headers


@dataclass(frozen=True)
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

    @property
    def delta(self) -> int | None:
        """Messages skipped (> 0) or replayed (< 0); None without a committed offset."""
        if self.current_offset < 0 or self.target_offset < 0:
            return None
        return self.target_offset - self.current_offset


@dataclass(frozen=True)
class ResetPlan:
    group: str
    topic: str
    target: Target
    force: bool
    rows: tuple[PlanRow, ...]
    single_queue: bool = False
    undo_of: str | None = None
    warnings: tuple[str, ...] = field(default_factory=tuple)

    @property
    def replayed(self) -> int:
        return sum(-d for r in self.rows if (d := r.delta) is not None and d < 0)

    @property
    def skipped(self) -> int:
        return sum(d for r in self.rows if (d := r.delta) is not None and d > 0)

    @property
    def changed(self) -> int:
        return sum(1 for r in self.rows if r.target_offset != r.current_offset)


# ------------------------------------------------------------------------------------------------
# allocateMQ


@dataclass(frozen=True)
class TopicAllocation:
    topic: str
    mq_all: tuple[MessageQueue, ...]  # in the order the strategy ran over
    cid_all: tuple[str, ...]  # likewise (duplicates kept)
    result: tuple[tuple[str, tuple[MessageQueue, ...]], ...]  # per distinct client id, first-seen order

    def queues_of(self, cid: str) -> tuple[MessageQueue, ...]:
        return dict(self.result).get(cid, ())

    @property
    def unassigned(self) -> tuple[MessageQueue, ...]:
        taken = {mq for _, qs in self.result for mq in qs}
        return tuple(mq for mq in self.mq_all if mq not in taken)


@dataclass(frozen=True)
class AllocationResult:
    strategy: str
    sorted: bool
    clients: tuple[str, ...]  # distinct client ids, in the order allocation visited them
    topics: tuple[TopicAllocation, ...]

    def queues_of(self, cid: str) -> list[MessageQueue]:
        return [mq for t in self.topics for mq in t.queues_of(cid)]

    @property
    def totals(self) -> dict[str, int]:
        return {cid: len(self.queues_of(cid)) for cid in self.clients}

    @property
    def imbalance(self) -> int:
        counts = list(self.totals.values())
        return max(counts) - min(counts) if counts else 0

    @property
    def queue_count(self) -> int:
        return sum(len(t.mq_all) for t in self.topics)


@dataclass(frozen=True)
class Move:
    queue: MessageQueue
    before: tuple[str, ...]  # owners with the first client list (usually one; none = unassigned)
    after: tuple[str, ...]


# ------------------------------------------------------------------------------------------------
# The reset journal (ops/journal.py reads and writes it)

JOURNAL_SCHEMA = "mqctl/resetJournal/v1"


@dataclass(frozen=True)
class JournalRecord:
    id: str
    created_ms: int
    state: str  # PENDING | APPLIED | PARTIAL
    group: str
    target: BackendTarget
    changes: tuple[OffsetChange, ...]
    note: str | None = None
    applied_brokers: tuple[str, ...] = ()  # PARTIAL: the brokers that hold the new offsets
    path: Path | None = field(default=None, compare=False)

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
        if self.target.kind == "store":
            doc["stores"] = dict(self.target.stores)
        else:
            doc["namesrv"] = self.target.namesrv
        if self.applied_brokers:
            doc["appliedBrokers"] = list(self.applied_brokers)
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


# ------------------------------------------------------------------------------------------------
# allocateMQ -g: the clients' real assignment against the strategy's


@dataclass(frozen=True)
class RebalanceRow:
    queue: MessageQueue
    expected: str | None  # the client the strategy gives the queue to (None: outside the simulation)
    reported: tuple[str, ...]  # the clients whose running info holds the queue

    @property
    def status(self) -> str:
        """ok | moved (another client holds it) | duplicated | unowned | unexpected."""
        if len(self.reported) > 1:
            return "duplicated"
        if not self.reported:
            return "unowned"
        if self.expected is None:
            return "unexpected"
        return "ok" if self.reported[0] == self.expected else "moved"


@dataclass(frozen=True)
class RebalanceReport:
    group: str
    strategy: str
    strategy_source: str  # "clients" (their running info) or "--strategy"
    clients: tuple[str, ...]  # sorted, as each client sorts the id list before allocating
    simulated: AllocationResult
    rows: tuple[RebalanceRow, ...]

    @property
    def problems(self) -> list[RebalanceRow]:
        return [r for r in self.rows if r.status != "ok"]
