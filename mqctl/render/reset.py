"""resetOffsetByTime output: the dry-run/executed line, mqadmin's reset table, a rich table, JSON, CSV."""

from __future__ import annotations

from typing import TYPE_CHECKING, TextIO

from mqctl.render.plain import front, ljust, local_datetime_ms

if TYPE_CHECKING:
    from mqctl.model import JournalRecord, ResetPlan, WriteResult


def status_line(plan: ResetPlan, journal: JournalRecord | None, exported: str | None = None) -> str:
    """The first line of every output: dry run or executed, and every file written."""
    what = f"group {plan.group}, topic {plan.topic}, {len(plan.rows)} queue(s)"
    if plan.undo_of:
        what = f"undo of {plan.undo_of}: " + what
    if plan.warnings:
        what += "; " + "; ".join(plan.warnings)
    where = "" if exported in (None, "-") else f"; plan exported to {exported}"
    if journal is None:
        if where:
            return f"DRY RUN: offsets unchanged ({what}){where}; add --execute to apply"
        return f"DRY RUN: nothing written ({what}); add --execute to apply"
    state = "" if journal.state == "applied" else f" (journal left {journal.state}: see --undo)"
    took = ""
    result = journal.result
    if result is not None and result.checks:
        missed = len(result.not_taken)
        resumed = sum(1 for c in result.checks if c.resumed)
        took = (
            f"; all {len(result.checks)} queue(s) read back at their targets"
            if not missed
            else f"; {missed} of {len(result.checks)} queue(s) NOT at their targets (listed on stderr)"
        )
        if resumed:
            took += f" ({resumed} already past them: the consumers resumed)"
    return (
        f"EXECUTED: offsets written ({what}){took}; journal {journal.id}{state}, undo with --undo {journal.id}"
        + where
    )


def write_notes(result: WriteResult | None) -> list[str]:
    """How a live write went, queue by queue, for stderr (the status line has the summary)."""
    if result is None:
        return []
    lines = list(result.notes)
    for c in result.not_taken[:20]:
        q = c.queue
        lines.append(
            f"{q.broker_name} {q.topic} queue {q.queue_id}: target {c.target}, now {c.now}: {c.note or 'not applied'}"
        )
    moved = [c for c in result.checks if c.drift]
    if moved:
        lines.append(
            f"{len(moved)} queue(s) had moved since the plan (online consumers); the plan's targets were applied"
        )
    return lines


def _mqadmin_order(plan: ResetPlan) -> list:
    """Row order of mqadmin's Path B: per-broker HashMaps putAll-ed into one (spec 8.4)."""
    from mqctl.model import MessageQueue
    from mqctl.model.javaorder import hashmap_order, hashmap_putall_order, message_queue_hash

    per_broker: dict[str, list] = {}
    for r in plan.rows:
        per_broker.setdefault(r.broker_name, []).append((MessageQueue(r.topic, r.broker_name, r.queue_id), r))
    maps = [hashmap_order(pairs, message_queue_hash) for pairs in per_broker.values()]
    return [r for _mq, r in hashmap_putall_order(maps, message_queue_hash)]


def plain(plan: ResetPlan, out: TextIO, ts_text: str, ts_long: int) -> None:
    """mqadmin's printf lines alone (spec/mqadmin.md 4.2 / 4.3); the status line goes elsewhere."""
    w = out.write
    if plan.single_queue and len(plan.rows) == 1:
        r = plan.rows[0]
        w(
            f"start reset consumer offset by specified, group[{plan.group}], topic[{plan.topic}], "
            f"queueId[{r.queue_id}], broker[{r.broker_name}], timestamp(string)[{ts_text}], "
            f"timestamp(long)[{ts_long}]\n"
        )
        w(f"reset consumer offset to {r.target_offset}\n")
        return
    from mqctl.model.versions import is_legacy

    force = "true" if plan.force else "false"
    if is_legacy(plan.rocketmq_version):
        if ts_text.lower() == "now":
            ts_long = -1  # 4.x mqadmin sends "now" as -1
        if not plan.online:  # the 4.x broker answers CONSUMER_NOT_ONLINE: mqadmin's old path
            _plain_old_path_4x(plan, out, force, ts_text, ts_long)
            return
        w(f"rollback consumer offset by specified group[{plan.group}], topic[{plan.topic}], ")
    else:
        w(f"start reset consumer offset by specified, group[{plan.group}], topic[{plan.topic}], ")
    w(f"force[{force}], timestamp(string)[{ts_text}], timestamp(long)[{ts_long}]\n")
    w(f"{ljust('#brokerName', 40)}  {ljust('#queueId', 40)}  {ljust('#offset', 40)}\n")
    for r in _mqadmin_order(plan):
        w(f"{ljust(front(r.broker_name, 32), 40)}  {ljust(r.queue_id, 40)}  {ljust(r.target_offset, 40)}\n")


def _plain_old_path_4x(plan: ResetPlan, out: TextIO, force: str, ts_text: str, ts_long: int) -> None:
    """4.x mqadmin's client-side reset (docs/rocketmq-versions.md 2.3, Path C): per broker in route
    order, its consume stats' HashMap order; the offset the time search gave and the one set."""
    from mqctl.model import MessageQueue
    from mqctl.model.javaorder import hashmap_order, message_queue_hash

    w = out.write
    w(
        f"rollback consumer offset by specified consumerGroup[{plan.group}], topic[{plan.topic}], "
        f"force[{force}], timestamp(string)[{ts_text}], timestamp(long)[{ts_long}]\n"
    )
    heads = (
        "#brokerName",
        "#queueId",
        "#brokerOffset",
        "#consumerOffset",
        "#timestampOffset",
        "#rollbackOffset",
    )
    w("  ".join(ljust(h, 20) for h in heads) + "\n")
    per_broker: dict[str, list] = {}
    for r in plan.rows:
        per_broker.setdefault(r.broker_name, []).append((MessageQueue(r.topic, r.broker_name, r.queue_id), r))
    for pairs in per_broker.values():
        for _mq, r in hashmap_order(pairs, message_queue_hash):
            searched = r.target_offset if r.searched_offset is None else r.searched_offset
            cells = (front(r.broker_name, 32), r.queue_id, r.max_offset, max(r.current_offset, 0), searched)
            w("  ".join(ljust(c, 20) for c in (*cells, r.target_offset)) + "\n")


def _signed(d: int | None) -> str:
    if d is None:
        return "-"
    return f"+{d}" if d > 0 else str(d)


def table(plan: ResetPlan, out: TextIO, status: str) -> None:
    from mqctl.render.table import Column, TableSpec, write_table

    cols = [
        Column("Broker"),
        Column("QID", "right", kind="number"),
        Column("Current", "right", kind="number"),
        Column("Target", "right", kind="number"),
        Column("Delta", "right", kind="number"),
        Column("Store Time at Target", kind="text", optional=True),
        Column("Warning", kind="text"),
    ]
    multi_topic = len({r.topic for r in plan.rows}) > 1
    if multi_topic:
        cols.insert(0, Column("Topic"))
    rows, styles = [], []
    for r in plan.rows:
        cells: list = [
            r.broker_name,
            r.queue_id,
            r.current_offset if r.current_offset >= 0 else "(none)",
            r.target_offset if r.target_offset >= 0 else "(remove)",
            _signed(r.delta),
            "-" if r.target_timestamp < 0 else local_datetime_ms(r.target_timestamp),
            ", ".join(r.warnings),
        ]
        if multi_topic:
            cells.insert(0, r.topic)
        rows.append(cells)
        styles.append("yellow" if r.warnings else None)
    footer = [
        f"\n{len(plan.rows)} queue(s), {plan.changed} changed: {plan.replayed} message(s) replayed, "
        f"{plan.skipped} skipped (delta < 0 replays, > 0 skips)"
    ]
    write_table(
        TableSpec(
            cols,
            rows,
            title=f"resetOffsetByTime {plan.group} {plan.topic}",
            footer_lines=footer,
            row_styles=styles,
            status=status,
        ),
        out,
    )
