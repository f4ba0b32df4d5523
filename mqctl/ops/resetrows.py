"""What every reset plan rests on, whatever produced it (new targets, a plan file, a journal's
undo): each queue as it stands now (committed offset, min, max), the warnings of a row, the store
time at each target, and the notes of the plan's first line."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from mqctl.errors import NotFoundError, RefusedError
from mqctl.model import (
    W_BELOW_MIN,
    W_EMPTY,
    W_NO_COMMIT,
    ConsumeStats,
    MessageQueue,
    PlanRow,
    QueueOffset,
    ResetPlan,
)
from mqctl.records import record, replace

if TYPE_CHECKING:
    from mqctl.backends.base import Backend


@record(frozen=True)
class QueueNow:
    """What a plan row starts from: a queue, its committed offset (-1 none), min and max."""

    mq: MessageQueue
    current: int
    mn: int
    mx: int


def queues_of(stats: ConsumeStats) -> dict[MessageQueue, QueueNow]:
    """The queues of complete stats: a plan over part of a topic would be a wrong plan."""
    if stats.failures:
        from mqctl.errors import ExitStatus, MqctlError

        names = "; ".join(f"{f.broker_name} ({f.addr}): {f.message}" for f in stats.failures)
        err = MqctlError(f"cannot plan without every broker of the group: {names}")
        err.exit_status = ExitStatus(max(f.exit_status for f in stats.failures))
        raise err
    return {
        q.queue: QueueNow(
            q.queue, q.consumer_offset if q.committed is not False else -1, q.min_offset or 0, q.broker_offset
        )
        for q in stats.queues
    }


def row_warnings(current: int, mn: int, mx: int) -> list[str]:
    """The warnings every plan row gets from where its queue stands (new plans, files, undo)."""
    out = []
    if mn == mx:
        out.append(W_EMPTY)
    if current < 0:
        out.append(W_NO_COMMIT)
    elif current < mn:
        out.append(W_BELOW_MIN)
    return out


def with_times(backend: Backend, planned: list[tuple[QueueNow, int, list[str]]]) -> tuple[PlanRow, ...]:
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
    from mqctl.ops.pop import reset_note

    pop = reset_note(backend, plan.group, tuple(dict.fromkeys(r.topic for r in plan.rows)))
    if pop is not None:
        return note(replace(plan, online=pop[0]), pop[1])
    return note(plan, "group offline: nobody consumes, the brokers take the offsets as they are")


def note(plan: ResetPlan, text: str) -> ResetPlan:
    """The plan with a note for its first output line."""
    return replace(plan, warnings=(*plan.warnings, text))


def current_queues(
    backend: Backend, group: str, mqs: list[MessageQueue], source: str
) -> dict[MessageQueue, QueueNow]:
    """The queues a plan file or journal (``source``) names, as they stand now (one stats question
    per topic); a queue that is not there is named with what is really missing."""
    found: dict[MessageQueue, QueueNow] = {}
    for topic in dict.fromkeys(mq.topic for mq in mqs):
        try:
            found.update(queues_of(backend.consume_stats(group, topic)))
        except NotFoundError as exc:  # an unknown group, or a topic no broker has
            raise NotFoundError(f"{source}: {exc.message}", exc.hint) from None
    for mq in mqs:
        if mq not in found:
            raise NotFoundError(f"{source}: {_missing(backend, group, mq)}")
    return found


def _missing(backend: Backend, group: str, mq: MessageQueue) -> str:
    """Why the group's stats have no row for ``mq``: the broker, the topic there, or the queue id."""
    brokers = list(backend.broker_names())
    if mq.broker_name not in brokers:
        return f"unknown broker {mq.broker_name!r} (known: {', '.join(brokers) or 'none'})"
    route = backend.topic_route(mq.topic)
    nums = {qd.broker_name: qd.read_queue_nums for qd in route.queue_datas}
    if mq.broker_name not in nums:
        return f"topic {mq.topic!r} does not exist on broker {mq.broker_name!r} (it is on {', '.join(nums)})"
    if not 0 <= mq.queue_id < nums[mq.broker_name]:
        return (
            f"queue {mq.queue_id} does not exist: {mq.broker_name} {mq.topic} has queues "
            f"0..{nums[mq.broker_name] - 1}"
        )
    return f"{mq.broker_name} {mq.topic} queue {mq.queue_id}: the consume stats of group {group!r} do not list it"


def check_ranges(plan: ResetPlan, now: Mapping[MessageQueue, QueueNow]) -> None:
    """The range rule every write obeys, whatever produced its targets (flags, a plan file, a
    journal's undo): a target lies in the backend's [min, max + 1] as it stands now (the broker's
    own check, max + 1 being "after the last message"), never in a range a file claims. A row that
    keeps its queue's committed offset writes nothing new. An undo may also put back what the queue
    held before: no committed offset (-1), or an offset below a min that grew since (its messages
    expired; the broker reads it as min at the next pull, and a live write sends min)."""
    undo = plan.undo_of is not None
    bad = []
    for r in plan.rows:
        mq = MessageQueue(r.topic, r.broker_name, r.queue_id)
        q, t = now[mq], r.target_offset
        if t in (r.current_offset, q.current) or (undo and -1 <= t <= q.mx + 1):
            continue
        if not q.mn <= t <= q.mx + 1:
            bad.append(
                f"{mq.broker_name} {mq.topic} queue {mq.queue_id}: {t} is outside {q.mn}..{q.mx + 1} "
                f"(min {q.mn}, max {q.mx})"
            )
    if bad:
        more = f" (and {len(bad) - 3} more)" if len(bad) > 3 else ""
        raise RefusedError(
            f"{_source(plan)}: target offset(s) outside the queue's range now: "
            f"{'; '.join(bad[:3])}{more}; nothing written",
            "a queue takes offsets from its min to max + 1 (after the last message); the range comes "
            "from the cluster, not from the plan's minOffset/maxOffset"
            if plan.target.kind == "file"
            else "a queue takes offsets from its min to max + 1 (after the last message)",
        )


def _source(plan: ResetPlan) -> str:
    if plan.target.kind == "file":
        return f"plan file {plan.target.text}"
    if plan.undo_of is not None:
        return f"undo of {plan.undo_of}"
    return f"reset of group {plan.group}"
