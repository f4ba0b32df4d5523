"""Plans re-made against the cluster as it is now: a reviewed plan file (--from-file) and the
reverse of a journalled reset (--undo). Both refuse when any offset moved since."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from mqctl.errors import RefusedError
from mqctl.model import MessageQueue, OffsetChange, ResetPlan, Target
from mqctl.ops.resetrows import check_ranges, current_queues, note, row_warnings, with_online_note, with_times

if TYPE_CHECKING:
    from mqctl.backends.base import Backend
    from mqctl.model import JournalRecord
    from mqctl.ops.planfile import PlanFile


def _replan(
    backend: Backend,
    group: str,
    items: list[tuple[MessageQueue, int, int]],
    target: Target,
    moved_message: Callable[[list[str]], str],
    undo_of: str | None = None,
) -> ResetPlan:
    """Rows for fixed (queue, recorded current, target); refuse if anything moved or a target lies
    outside its queue's range (the dry run says so as the write would)."""
    source = f"plan file {target.text}" if undo_of is None else f"journal {undo_of}"
    now = current_queues(backend, group, [mq for mq, _r, _t in items], source)
    planned, moved = [], []
    for mq, recorded, tgt in items:
        q = now[mq]
        if q.current != recorded:
            moved.append(
                f"{mq.broker_name} {mq.topic} queue {mq.queue_id} is {q.current}, recorded {recorded}"
            )
        planned.append((q, tgt, row_warnings(q.current, q.mn, q.mx)))
    if moved:
        more = f" (and {len(moved) - 3} more)" if len(moved) > 3 else ""
        raise RefusedError(moved_message(moved[:3]) + more + "; nothing written")
    rows = with_times(backend, planned)
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
    check_ranges(plan, now)
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
    did (nothing to undo there). A "refused" record is looked at too: nothing should have moved.
    """
    from mqctl.ops.journal import REFUSED

    changed = [c for c in record.changes if c.before != c.after]  # unchanged: nothing to undo
    now = current_queues(backend, record.group, [c.queue for c in changed], f"journal {record.id}")
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
