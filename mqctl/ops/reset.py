"""resetOffsetByTime: plan (what would change), apply (two phases, journalled) and undo.

Targets follow the 5.2+ broker's server-side reset (spec/mqadmin.md 4.4): every queue
0..readQueueNums-1 of the topic on each broker with a topic config, offset by store time with
the LOWER boundary clamped to [min, max], a negative timestamp meaning max. The single-queue
path checks an explicit offset against [min, max + 1] as the broker does. ``force=False`` is
the legacy broker rule: a queue only moves backwards.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from mqctl.errors import NotFoundError, RefusedError, UsageError
from mqctl.model import (
    W_BELOW_MIN,
    W_BEYOND_MAX,
    W_CLAMPED,
    W_EMPTY,
    W_KEPT,
    W_NO_COMMIT,
    ConsumeStats,
    MessageQueue,
    OffsetChange,
    PlanRow,
    QueueOffset,
    QueueTime,
    ResetPlan,
    Target,
    TopicRoute,
    is_legacy,
)

if TYPE_CHECKING:
    from mqctl.backends.base import Backend
    from mqctl.model import JournalRecord
    from mqctl.ops.planfile import PlanFile

# ----------------------------------------------------------------------------------- planning


@dataclass(frozen=True)
class _Queue:
    """What a plan row starts from: a queue, its committed offset (-1 none), min and max."""

    mq: MessageQueue
    current: int
    mn: int
    mx: int


def _queues(stats: ConsumeStats) -> dict[MessageQueue, _Queue]:
    """The queues of complete stats: a plan over part of a topic would be a wrong plan."""
    if stats.failures:
        from mqctl.errors import ExitStatus, MqctlError

        names = "; ".join(f"{f.broker_name} ({f.addr}): {f.message}" for f in stats.failures)
        err = MqctlError(f"cannot plan without every broker of the group: {names}")
        err.exit_status = ExitStatus(max(f.exit_status for f in stats.failures))
        raise err
    return {
        q.queue: _Queue(
            q.queue, q.consumer_offset if q.committed is not False else -1, q.min_offset or 0, q.broker_offset
        )
        for q in stats.queues
    }


def _row_warnings(current: int, mn: int, mx: int) -> list[str]:
    """The warnings every plan row gets from where its queue stands (new plans, files, undo)."""
    out = []
    if mn == mx:
        out.append(W_EMPTY)
    if current < 0:
        out.append(W_NO_COMMIT)
    elif current < mn:
        out.append(W_BELOW_MIN)
    return out


def _time_targets(backend: Backend, queues: list[_Queue], ts: int) -> dict[MessageQueue, tuple[int, bool]]:
    """Target and "clamped" per queue for a time: the broker's LOWER search, one batch per question."""
    if ts < 0:  # the broker's searchOffsetByTimestamp: a negative time means the end
        return {q.mq: (q.mx, False) for q in queues}
    found = backend.offsets_for_times([QueueTime(q.mq, ts, "lower") for q in queues])
    # A time before the oldest retained message lands on min: say it was clamped.
    at_min = [q for q, t in zip(queues, found) if q.mx > q.mn and t == q.mn]
    first = dict(zip((q.mq for q in at_min), backend.store_times([QueueOffset(q.mq, q.mn) for q in at_min])))
    return {q.mq: (t, q.mq in first and ts < first[q.mq]) for q, t in zip(queues, found)}


def _target(q: _Queue, target: Target) -> tuple[int, list[str]]:
    kind, value = target.kind, target.value
    if kind == "earliest":
        return q.mn, []
    if kind == "latest":
        return q.mx, []
    if kind in ("offset", "shift"):
        if kind == "shift" and q.current < 0:
            raise UsageError(
                f"--shift-by: {q.mq.broker_name} {q.mq.topic} queue {q.mq.queue_id} has no committed offset to "
                "shift from; use --to-offset, --to-earliest or a timestamp"
            )
        want = q.current + value if kind == "shift" else value
        tgt = min(max(want, q.mn), q.mx)
        return tgt, [W_CLAMPED] if tgt != want else []
    if kind == "explicit":
        # AdminBrokerProcessor.resetOffsetInner: min <= offset <= max + 1.
        if value < q.mn or value > q.mx + 1:
            raise RefusedError(
                f"target offset {value} not in consume queue range [{q.mn}-{q.mx}] of {q.mq.broker_name} "
                f"{q.mq.topic} queue {q.mq.queue_id} (allowed {q.mn}..{q.mx + 1}); nothing written"
            )
        return value, [W_BEYOND_MAX] if value > q.mx else []
    raise ValueError(kind)  # plans from files and journals are built by _replan


def _rows(backend: Backend, queues: list[_Queue], target: Target, force: bool) -> tuple[PlanRow, ...]:
    by_time = _time_targets(backend, queues, target.value) if target.kind == "time" else {}
    planned: list[tuple[_Queue, int, list[str]]] = []
    searched: dict[MessageQueue, int] = {}
    for q in queues:
        if target.kind == "time":
            tgt, clamped = by_time[q.mq]
            warnings = [W_CLAMPED] if clamped else []
        else:
            tgt, warnings = _target(q, target)
        searched[q.mq] = tgt
        if not force and q.current >= 0 and tgt > q.current:
            tgt = q.current
            warnings.append(W_KEPT)
        planned.append((q, tgt, warnings + _row_warnings(q.current, q.mn, q.mx)))
    rows = _with_times(backend, planned)
    if target.kind != "time":
        return rows
    return tuple(
        replace(r, searched_offset=searched[MessageQueue(r.topic, r.broker_name, r.queue_id)]) for r in rows
    )


def _with_times(backend: Backend, planned: list[tuple[_Queue, int, list[str]]]) -> tuple[PlanRow, ...]:
    """Rows with the store time of the message at each target (one batch; -1 where none)."""
    inside = [(q, t) for q, t, _w in planned if q.mn <= t < q.mx]
    times = dict(
        zip((q.mq for q, _t in inside), backend.store_times([QueueOffset(q.mq, t) for q, t in inside]))
    )
    return tuple(
        PlanRow(
            q.mq.topic,
            q.mq.broker_name,
            q.mq.queue_id,
            q.current,
            t,
            q.mn,
            q.mx,
            max(times.get(q.mq, -1), -1),  # unreadable (a damaged store, warned) shows as none
            tuple(w),
        )
        for q, t, w in planned
    )


def _selected(
    backend: Backend,
    route: TopicRoute,
    queues: dict[MessageQueue, _Queue],
    broker: str | None,
    queue: int | None,
) -> list[_Queue]:
    """The plan's queues: one (-b -q), one broker's (-b) or every broker's with the topic."""
    topic, with_topic = route.topic, list(route.broker_names)
    brokers = list(backend.broker_names())
    if broker is not None and broker not in brokers:
        raise NotFoundError(f"unknown broker {broker!r} (known: {', '.join(brokers) or 'none'})")
    if queue is not None and broker is None:
        if len(with_topic) != 1:
            raise UsageError(f"-q needs -b BROKER_NAME: topic {topic!r} is on {', '.join(with_topic)}")
        broker = with_topic[0]
    if broker is not None and broker not in with_topic:
        raise NotFoundError(f"topic {topic!r} does not exist on broker {broker!r}")
    nums = {qd.broker_name: qd.read_queue_nums for qd in route.queue_datas}
    if queue is not None:
        assert broker is not None
        if not 0 <= queue < nums[broker]:
            raise NotFoundError(
                f"queue {queue} does not exist: {broker} {topic} has queues 0..{nums[broker] - 1}"
            )
        return [queues[MessageQueue(topic, broker, queue)]]
    chosen = [broker] if broker is not None else with_topic
    return [queues[MessageQueue(topic, b, q)] for b in chosen for q in range(nums[b])]


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
    if queue is None and target.kind == "explicit":
        raise UsageError("-o/--offset needs -b BROKER_NAME and -q QUEUE_ID (one queue)")
    try:
        route = backend.topic_route(topic)
    except NotFoundError:
        brokers = ", ".join(backend.broker_names()) or "none"
        raise NotFoundError(f"topic {topic!r} does not exist on any broker ({brokers})") from None
    queues = _queues(backend.consume_stats(group, topic))
    version = backend.rocketmq_version()
    if target.kind == "time" and is_legacy(version) and target.text.strip().lower() == "now":
        target = replace(target, value=-1)  # 4.x mqadmin sends -s now as -1: every queue's max
    rows = _rows(backend, _selected(backend, route, queues, broker, queue), target, force)
    return with_online_note(
        backend,
        ResetPlan(
            group, topic, target, force, rows, single_queue=queue is not None, rocketmq_version=version
        ),
    )


def with_online_note(backend: Backend, plan: ResetPlan) -> ResetPlan:
    """Live: whether the group has clients online, which decides how a reset is applied."""
    from mqctl.errors import MqctlError, NotAvailableError

    try:
        clients = len(backend.consumer_connection(plan.group).connections)
    except NotAvailableError:
        return plan  # a store: no clients to tell
    except MqctlError:
        clients = 0
    plan = replace(plan, online=bool(clients))
    if clients:
        return note(plan, f"group online ({clients} client(s)): the brokers reset and tell the clients")
    return note(plan, "group offline: nobody consumes, the brokers take the offsets as they are")


def note(plan: ResetPlan, text: str) -> ResetPlan:
    """The plan with a note for its first output line."""
    return replace(plan, warnings=(*plan.warnings, text))


# ----------------------------------------------------------------------------------- applying


def apply_plan(backend: Backend, plan: ResetPlan) -> JournalRecord:
    """Write the plan through the backend (two phases) with a journal record for undo; refuses if
    any current offset moved since planning."""
    from mqctl.ops.journal import apply_journalled

    targets = {MessageQueue(r.topic, r.broker_name, r.queue_id): r.target_offset for r in plan.rows}
    expected = {MessageQueue(r.topic, r.broker_name, r.queue_id): r.current_offset for r in plan.rows}
    write = backend.begin_offsets_write(plan.group, targets, expected)
    return apply_journalled(write, backend.target(), plan.group)


def _current_queues(backend: Backend, group: str, mqs: list[MessageQueue]) -> dict[MessageQueue, _Queue]:
    """The queues a plan file or journal names, as they stand now (one stats question per topic)."""
    found: dict[MessageQueue, _Queue] = {}
    for topic in dict.fromkeys(mq.topic for mq in mqs):
        try:
            found.update(_queues(backend.consume_stats(group, topic)))
        except NotFoundError:
            pass  # reported per queue below, naming the broker
    brokers = set(backend.broker_names())
    for mq in mqs:
        if mq.broker_name not in brokers:
            raise NotFoundError(
                f"unknown broker {mq.broker_name!r} (known: {', '.join(sorted(brokers)) or 'none'})"
            )
        if mq not in found:
            raise NotFoundError(f"topic {mq.topic!r} does not exist on broker {mq.broker_name!r}")
    return found


def _replan(
    backend: Backend,
    group: str,
    items: list[tuple[MessageQueue, int, int]],
    target: Target,
    moved_message: Callable[[list[str]], str],
    undo_of: str | None = None,
) -> ResetPlan:
    """Rows for fixed (queue, recorded current, target); refuse if anything moved."""
    now = _current_queues(backend, group, [mq for mq, _r, _t in items])
    planned, moved = [], []
    for mq, recorded, tgt in items:
        q = now[mq]
        if q.current != recorded:
            moved.append(
                f"{mq.broker_name} {mq.topic} queue {mq.queue_id} is {q.current}, recorded {recorded}"
            )
        planned.append((q, tgt, _row_warnings(q.current, q.mn, q.mx)))
    if moved:
        more = f" (and {len(moved) - 3} more)" if len(moved) > 3 else ""
        raise RefusedError(moved_message(moved[:3]) + more + "; nothing written")
    rows = _with_times(backend, planned)
    topics = sorted({r.topic for r in rows})
    plan = ResetPlan(
        group,
        ",".join(topics),
        target,
        True,
        rows,
        undo_of=undo_of,
        rocketmq_version=backend.rocketmq_version(),
    )
    return with_online_note(backend, plan)


def plan_from_file(backend: Backend, plan_file: PlanFile, path: str) -> ResetPlan:
    items = [
        (MessageQueue(r.topic, r.broker_name, r.queue_id), r.current_offset, r.target_offset)
        for r in plan_file.rows
    ]
    return _replan(
        backend,
        plan_file.group,
        items,
        Target("file", text=path),
        lambda moved: "offsets moved since the plan was exported: " + "; ".join(moved),
    )


def _landed_changes(backend: Backend, record: JournalRecord) -> tuple[list[OffsetChange], int]:
    """A record still "pending" was written before its offsets were (or "partial": a write that
    stopped part-way): the reset may have been killed before, between or after the brokers'
    writes. Look at what the cluster holds: the changes that landed (to undo) and how many never
    did (nothing to undo there)."""
    from mqctl.ops.journal import REFUSED

    changed = [c for c in record.changes if c.before != c.after]  # unchanged: nothing to undo
    now = _current_queues(backend, record.group, [c.queue for c in changed])
    landed, not_landed, moved = [], 0, []
    for c in changed:
        current = now[c.queue].current
        if current == c.after:
            landed.append(c)
        elif current == c.before:
            not_landed += 1
        else:
            where = f"{c.queue.broker_name} {c.queue.topic} queue {c.queue.queue_id}"
            moved.append(f"{where} is {current} (before {c.before}, reset to {c.after})")
    if moved:
        raise RefusedError(
            f"cannot undo {record.id}: its journal record is {record.state} (the reset was interrupted) and "
            f"offsets moved since: {'; '.join(moved[:3])}; nothing written",
            "inspect with consumerProgress and reset the queues explicitly (--from-file)",
        )
    if not landed:
        why = (
            "every broker refused it"
            if record.state == REFUSED
            else "the reset was interrupted before writing"
        )
        raise RefusedError(
            f"nothing to undo: reset {record.id} never landed (its journal record is {record.state} and the "
            f"cluster still holds the offsets from before it: {why})",
            "undo an older reset by its id (the journal directory lists them)",
        )
    return landed, not_landed


def plan_undo(backend: Backend, record: JournalRecord) -> ResetPlan:
    """The reverse of a journalled reset: every queue back to its offset before it."""
    from mqctl.ops.journal import APPLIED

    changes, note_text = list(record.changes), None
    if record.state != APPLIED:
        changes, missing = _landed_changes(backend, record)
        note_text = f"{record.state} journal record: undoing the {len(changes)} queue(s) whose reset landed"
        if missing:
            note_text += f", {missing} never changed"
    plan = _replan(
        backend,
        record.group,
        [(c.queue, c.after, c.before) for c in changes],
        Target("undo", text=record.id),
        lambda moved: f"cannot undo {record.id}: offsets moved since it was applied: " + "; ".join(moved),
        undo_of=record.id,
    )
    return note(plan, note_text) if note_text else plan
