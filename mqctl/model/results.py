"""What consumerProgress computed: rows, a group's totals, the groups overview's summaries
(lagReport's run summaries are in ``reports``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from mqctl.model.queues import BrokerFailure, MessageQueue
from mqctl.records import field, record

if TYPE_CHECKING:
    from mqctl.model.subexpr import SubExpr

if TYPE_CHECKING:
    from mqctl.model.pop import PopView


@record(frozen=True, slots=True)
class ProgressRow:
    """One consumerProgress row, with mqctl's extra columns."""

    topic: str
    broker_name: str
    queue_id: int
    broker_offset: int
    consumer_offset: int
    min_offset: int | None  # None when the backend was not asked (live, mqadmin's columns only)
    last_timestamp: int | None  # epoch ms of the message at consumerOffset-1, 0 when none, None unreadable
    inflight: int = 0
    client_ip: str | None = None
    committed: bool = True  # False when the group has no committed offset for this queue
    oldest_unconsumed_timestamp: int | None = 0  # store time of the first unconsumed message, 0 when none
    lag_ms: int | None = 0  # now - oldest_unconsumed_timestamp, 0 when nothing is unconsumed
    # (both None: the message is there but its store time cannot be read: a damaged store)
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

    @property
    def time_unknown(self) -> bool:
        """A store time of this row (last consumed, oldest unconsumed) could not be read."""
        return self.lag_ms is None or self.last_timestamp is None


@record(frozen=True)
class GroupProgress:
    group: str
    rows: list[ProgressRow]
    now_ms: int
    tags: SubExpr | None = None
    tag_collisions: int | None = None  # with --verify-tags: hash matches whose real tag did not match
    warnings: list[str] = field(default_factory=list)
    consume_tps: float | None = None  # None: the backend cannot know (a store)
    failures: tuple[BrokerFailure, ...] = ()  # brokers that did not answer: their rows are missing
    rocketmq_version: int | None = None  # the brokers' MQVersion ordinal (mqadmin's layout), None unknown
    pop: PopView | None = None  # a POP group (gRPC clients through a proxy): what its numbers mean

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
    def inflight_unknown(self) -> bool:
        """A POP group: the broker's pull offsets say nothing of what was popped and not acked."""
        return self.pop is not None and self.pop.inflight is None

    @property
    def matched_total(self) -> int | None:
        if self.tags is None:
            return None
        return sum(r.matched_diff or 0 for r in self.rows)

    @property
    def max_lag_ms(self) -> int:
        """The largest lag time that could be read (``time_unknown`` lists the others)."""
        return max((r.lag_ms for r in self.rows if r.lag_ms is not None), default=0)

    @property
    def time_unknown(self) -> list[ProgressRow]:
        """Rows with a store time that could not be read: gates must not pass on them."""
        return [r for r in self.rows if r.time_unknown]


@record(frozen=True)
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
    failures: tuple[BrokerFailure, ...] = ()  # brokers that did not answer for this group
    time_unknown: int = 0  # queues with a store time that could not be read (max_lag_ms is a floor)
    notes: tuple[str, ...] = ()  # what the overview says of this group besides its numbers (POP)
    # A broadcasting group: its progress lives on its clients. With their files (--client-offsets):
    # diff_total and max_lag_ms are its worst client's; without them: not known (0 here, drawn so).
    offsets_on_clients: bool = False
    worst_client: str | None = None  # the worst client's HOST/clientId, when files were given
    client_files: int = 0
    stale_clients: int = 0
