"""resetOffsetByTime: plan (what would change) and apply (two phases, journalled).

Targets follow the 5.2+ broker's server-side reset (spec/mqadmin.md 4.4): every queue
0..readQueueNums-1 of the topic on each broker with a topic config, offset by store time with
the LOWER boundary clamped to [min, max], a negative timestamp meaning max. The single-queue
path checks an explicit offset against [min, max + 1] as the broker does. ``force=False`` is
the legacy broker rule: a queue only moves backwards. Plans from a file or a journal's undo are
made in ``ops.replan``; what every plan rests on is in ``ops.resetrows``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mqctl.errors import NotFoundError, RefusedError, UsageError
from mqctl.model import (
    W_BEYOND_MAX,
    W_CLAMPED,
    W_KEPT,
    MessageQueue,
    PlanRow,
    QueueOffset,
    QueueTime,
    ResetPlan,
    Target,
    TopicRoute,
    is_legacy,
)
from mqctl.ops.replan import plan_from_file, plan_undo
from mqctl.ops.resetrows import (
    QueueNow,
    check_ranges,
    current_queues,
    note,
    queues_of,
    row_warnings,
    with_online_note,
    with_times,
)
from mqctl.records import replace

if TYPE_CHECKING:
    from mqctl.backends.base import Backend
    from mqctl.model import JournalRecord

__all__ = ["apply_plan", "note", "plan_from_file", "plan_reset", "plan_undo", "with_online_note"]

# ----------------------------------------------------------------------------------- planning


def _time_targets(backend: Backend, queues: list[QueueNow], ts: int) -> dict[MessageQueue, tuple[int, bool]]:
    """Target and "clamped" per queue for a time: the broker's LOWER search, one batch per question."""
    if ts < 0:  # the broker's searchOffsetByTimestamp: a negative time means the end
        return {q.mq: (q.mx, False) for q in queues}
    found = backend.offsets_for_times([QueueTime(q.mq, ts, "lower") for q in queues])
    # A time before the oldest retained message lands on min: say it was clamped.
    at_min = [q for q, t in zip(queues, found) if q.mx > q.mn and t == q.mn]
    first = dict(zip((q.mq for q in at_min), backend.store_times([QueueOffset(q.mq, q.mn) for q in at_min])))
    return {q.mq: (t, q.mq in first and ts < first[q.mq]) for q, t in zip(queues, found)}


def _target(q: QueueNow, target: Target) -> tuple[int, list[str]]:
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


def _rows(backend: Backend, queues: list[QueueNow], target: Target, force: bool) -> tuple[PlanRow, ...]:
    by_time = _time_targets(backend, queues, target.value) if target.kind == "time" else {}
    planned: list[tuple[QueueNow, int, list[str]]] = []
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
        planned.append((q, tgt, warnings + row_warnings(q.current, q.mn, q.mx)))
    rows = with_times(backend, planned)
    if target.kind != "time":
        return rows
    return tuple(
        replace(r, searched_offset=searched[MessageQueue(r.topic, r.broker_name, r.queue_id)]) for r in rows
    )


def _selected(
    backend: Backend,
    route: TopicRoute,
    queues: dict[MessageQueue, QueueNow],
    broker: str | None,
    queue: int | None,
) -> list[QueueNow]:
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
    queues = queues_of(backend.consume_stats(group, topic))
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


def apply_plan(backend: Backend, plan: ResetPlan) -> JournalRecord:
    """Write the plan through the backend (two phases) with a journal record for undo; refuses if
    any current offset moved since planning, and (the one seam every write passes) if any target
    lies outside its queue's range as the backend has it right now."""
    from mqctl.ops.journal import apply_journalled, check_journal_dir

    check_journal_dir(backend.protected_paths())
    mqs = [MessageQueue(r.topic, r.broker_name, r.queue_id) for r in plan.rows]
    check_ranges(plan, current_queues(backend, plan.group, mqs, f"group {plan.group}"))
    targets = {MessageQueue(r.topic, r.broker_name, r.queue_id): r.target_offset for r in plan.rows}
    expected = {MessageQueue(r.topic, r.broker_name, r.queue_id): r.current_offset for r in plan.rows}
    write = backend.begin_offsets_write(plan.group, targets, expected)
    return apply_journalled(write, backend.target(), plan.group, undo_of=plan.undo_of)
