"""resetOffsetByTime: plan (what would change), apply, plan files and undo.

Targets follow the 5.2+ broker's server-side reset (spec/mqadmin.md 4.4): every queue
0..readQueueNums-1 of the topic on each broker with a topic config, offset by store time with
the LOWER boundary clamped to [min, max], a negative timestamp meaning max. The single-queue
path checks an explicit offset against [min, max + 1] as the broker does. ``force=False`` is
the legacy broker rule: a queue only moves backwards.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Literal

from mqctl.errors import NotFoundError, RefusedError, UsageError

if TYPE_CHECKING:
    from mqctl.backends.base import Backend
    from mqctl.ops.planfile import PlanFile

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


# ----------------------------------------------------------------------------------- planning


def _committed(backend: Backend, broker: str, group: str, topic: str, qid: int) -> int:
    return backend.committed_offsets(broker, group).get(topic, {}).get(qid, -1)


def _group_exists(backend: Backend, group: str) -> bool:
    for b in backend.broker_names():
        if backend.committed_offsets(b, group):
            return True
        if group in backend.subscription_groups(b):
            return True
    return False


def _row(
    backend: Backend, group: str, topic: str, broker: str, qid: int, target: Target, force: bool
) -> PlanRow:
    current = _committed(backend, broker, group, topic, qid)
    mn, mx = backend.queue_offsets(broker, topic, qid)
    warnings: list[str] = []
    kind, value = target.kind, target.value
    if kind == "time":
        if value < 0:
            tgt = mx  # the broker's searchOffsetByTimestamp: a negative time means the end
        else:
            tgt = backend.offset_for_time(broker, topic, qid, value, "lower")
            # Before the oldest retained message: the broker's clamp lands on min.
            if mx > mn and tgt == mn and value < backend.store_timestamp(broker, topic, qid, mn):
                warnings.append(W_CLAMPED)
    elif kind == "earliest":
        tgt = mn
    elif kind == "latest":
        tgt = mx
    elif kind in ("offset", "shift"):
        if kind == "shift":
            if current < 0:
                raise UsageError(
                    f"--shift-by: {broker} {topic} queue {qid} has no committed offset to shift from; "
                    "use --to-offset, --to-earliest or a timestamp"
                )
            want = current + value
        else:
            want = value
        tgt = min(max(want, mn), mx)
        if tgt != want:
            warnings.append(W_CLAMPED)
    elif kind == "explicit":
        # AdminBrokerProcessor.resetOffsetInner: min <= offset <= max + 1.
        if value < mn or value > mx + 1:
            raise RefusedError(
                f"target offset {value} not in consume queue range [{mn}-{mx}] of {broker} {topic} queue {qid} "
                f"(allowed {mn}..{mx + 1}); nothing written"
            )
        tgt = value
        if tgt > mx:
            warnings.append(W_BEYOND_MAX)
    else:  # pragma: no cover - plans from files and journals are built elsewhere
        raise ValueError(kind)
    if not force and current >= 0 and tgt > current:
        tgt = current
        warnings.append(W_KEPT)
    if mn == mx:
        warnings.append(W_EMPTY)
    if current < 0:
        warnings.append(W_NO_COMMIT)
    elif current < mn:
        warnings.append(W_BELOW_MIN)
    ts = backend.store_timestamp(broker, topic, qid, tgt) if mn <= tgt < mx else -1
    return PlanRow(topic, broker, qid, current, tgt, mn, mx, ts, tuple(warnings))


def plan_reset(
    backend: Backend,
    group: str,
    topic: str,
    target: Target,
    *,
    force: bool = True,
    broker: str | None = None,
    queue: int | None = None,
) -> ResetPlan:
    """The rows a reset would write, computed like the 5.x broker (nothing is written)."""
    brokers = list(backend.broker_names())
    if broker is not None and broker not in brokers:
        raise NotFoundError(f"unknown broker {broker!r} (known: {', '.join(brokers) or 'none'})")
    with_topic = [b for b in brokers if topic in backend.topic_configs(b)]
    if not with_topic:
        raise NotFoundError(f"topic {topic!r} does not exist on any broker ({', '.join(brokers) or 'none'})")
    if not _group_exists(backend, group):
        raise NotFoundError(f"group {group!r} does not exist: no subscription group and no committed offsets")
    if queue is not None:
        if broker is None:
            if len(with_topic) != 1:
                raise UsageError(f"-q needs -b BROKER_NAME: topic {topic!r} is on {', '.join(with_topic)}")
            broker = with_topic[0]
        if broker not in with_topic:
            raise NotFoundError(f"topic {topic!r} does not exist on broker {broker!r}")
        nums = backend.topic_configs(broker)[topic].read_queue_nums
        if not 0 <= queue < nums:
            raise NotFoundError(f"queue {queue} does not exist: {broker} {topic} has queues 0..{nums - 1}")
        pairs = [(broker, queue)]
    else:
        if target.kind == "explicit":
            raise UsageError("-o/--offset needs -b BROKER_NAME and -q QUEUE_ID (one queue)")
        targets = [broker] if broker is not None else with_topic
        if broker is not None and broker not in with_topic:
            raise NotFoundError(f"topic {topic!r} does not exist on broker {broker!r}")
        pairs = [(b, q) for b in targets for q in range(backend.topic_configs(b)[topic].read_queue_nums)]
    rows = tuple(_row(backend, group, topic, b, q, target, force) for b, q in pairs)
    return ResetPlan(group, topic, target, force, rows, single_queue=queue is not None)


def note(plan: ResetPlan, text: str) -> ResetPlan:
    """The plan with a note for its first output line."""
    return replace(plan, warnings=(*plan.warnings, text))


# ----------------------------------------------------------------------------------- applying


def apply_plan(backend: Backend, plan: ResetPlan, *, force_abort_file: bool = False) -> dict:
    """Write the plan through the backend; refuses if any current offset moved since planning."""
    offsets = {(r.topic, r.broker_name, r.queue_id): r.target_offset for r in plan.rows}
    expected = {(r.topic, r.broker_name, r.queue_id): r.current_offset for r in plan.rows}
    return backend.apply_offsets(plan.group, offsets, expected, force_abort_file=force_abort_file)


def _replan(
    backend: Backend,
    group: str,
    items: list[tuple[str, str, int, int, int]],
    target: Target,
    moved_message: Callable[[list[str]], str],
    undo_of: str | None = None,
) -> ResetPlan:
    """Rows for fixed (topic, broker, qid, recorded current, target); refuse if anything moved."""
    brokers = set(backend.broker_names())
    rows, moved = [], []
    for topic, broker, qid, recorded, tgt in items:
        if broker not in brokers:
            raise NotFoundError(f"unknown broker {broker!r} (known: {', '.join(sorted(brokers)) or 'none'})")
        if topic not in backend.topic_configs(broker):
            raise NotFoundError(f"topic {topic!r} does not exist on broker {broker!r}")
        current = _committed(backend, broker, group, topic, qid)
        if current != recorded:
            moved.append(f"{broker} {topic} queue {qid} is {current}, recorded {recorded}")
        mn, mx = backend.queue_offsets(broker, topic, qid)
        warnings = []
        if mn == mx:
            warnings.append(W_EMPTY)
        if current < 0:
            warnings.append(W_NO_COMMIT)
        elif current < mn:
            warnings.append(W_BELOW_MIN)
        ts = backend.store_timestamp(broker, topic, qid, tgt) if mn <= tgt < mx else -1
        rows.append(PlanRow(topic, broker, qid, current, tgt, mn, mx, ts, tuple(warnings)))
    if moved:
        more = f" (and {len(moved) - 3} more)" if len(moved) > 3 else ""
        raise RefusedError(moved_message(moved[:3]) + more + "; nothing written")
    topics = sorted({r.topic for r in rows})
    return ResetPlan(group, ",".join(topics), target, True, tuple(rows), undo_of=undo_of)


def plan_from_file(backend: Backend, plan_file: PlanFile, path: str) -> ResetPlan:
    items = [(r.topic, r.broker_name, r.queue_id, r.current_offset, r.target_offset) for r in plan_file.rows]
    return _replan(
        backend,
        plan_file.group,
        items,
        Target("file", text=path),
        lambda moved: "offsets moved since the plan was exported: " + "; ".join(moved),
    )


def _landed_changes(backend: Backend, record: Mapping, rid: str) -> tuple[list[Mapping], int]:
    """A journal record still "pending" was written before its offsets were: the reset may have
    been killed before, between or after the brokers' writes. Look at what the store holds:
    the changes that landed (to undo) and how many never did (nothing to undo there)."""
    landed: list[Mapping] = []
    not_landed, moved = 0, []
    for c in record["changes"]:
        if c["before"] == c["after"]:
            continue  # unchanged by the reset: nothing to tell, nothing to undo
        now = _committed(backend, c["brokerName"], str(record["group"]), c["topic"], c["queueId"])
        if now == c["after"]:
            landed.append(c)
        elif now == c["before"]:
            not_landed += 1
        else:
            where = f"{c['brokerName']} {c['topic']} queue {c['queueId']}"
            moved.append(f"{where} is {now} (before {c['before']}, reset to {c['after']})")
    if moved:
        raise RefusedError(
            f"cannot undo {rid}: its journal record is pending (the reset was interrupted) and offsets "
            f"moved since: {'; '.join(moved[:3])}; nothing written",
            "inspect with consumerProgress and reset the queues explicitly (--from-file)",
        )
    if not landed:
        raise RefusedError(
            f"nothing to undo: reset {rid} never landed (its journal record is pending and the store "
            "still holds the offsets from before it: the reset was interrupted before writing)",
            "undo an older reset by its id (the journal directory lists them)",
        )
    return landed, not_landed


def plan_undo(backend: Backend, record: Mapping) -> ResetPlan:
    """The reverse of a journalled reset: every queue back to its offset before it."""
    rid = str(record.get("id"))
    changes, note_text = list(record["changes"]), None
    if record.get("state", "applied") == "pending":
        changes, missing = _landed_changes(backend, record, rid)
        note_text = f"pending journal record: undoing the {len(changes)} queue(s) whose reset landed"
        if missing:
            note_text += f", {missing} never changed"
    items = [(c["topic"], c["brokerName"], c["queueId"], c["after"], c["before"]) for c in changes]
    plan = _replan(
        backend,
        str(record["group"]),
        items,
        Target("undo", text=rid),
        lambda moved: f"cannot undo {rid}: offsets moved since it was applied: " + "; ".join(moved),
        undo_of=rid,
    )
    return note(plan, note_text) if note_text else plan
