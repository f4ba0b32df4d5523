"""consumerProgress output: mqadmin's plain layout, a rich table, JSON and CSV."""

from __future__ import annotations

from typing import TYPE_CHECKING, TextIO

from mqctl.render.plain import front, java_2f, ljust, local_datetime, local_datetime_ms

if TYPE_CHECKING:
    from mqctl.ops.progress import GroupProgress, GroupSummary

SCHEMA = "mqctl/consumerProgress/v1"
SCHEMA_GROUPS = "mqctl/consumerProgress.groups/v1"


def _last_time(ts: int) -> str:
    return "N/A" if ts == 0 else local_datetime(ts)


def plain(p: GroupProgress, out: TextIO, show_client_ip: bool = False) -> None:
    """mqadmin 5.1+ printf layout, byte for byte (spec/mqadmin.md 3.3)."""
    w = out.write
    head = [
        ljust("#Topic", 64),
        ljust("#Broker Name", 32),
        ljust("#QID", 4),
        ljust("#Broker Offset", 20),
        ljust("#Consumer Offset", 20),
    ]
    if show_client_ip:
        w(
            "  ".join(head)
            + "  "
            + ljust("#Client IP", 20)
            + " "
            + ljust("#Diff", 20)
            + " "
            + ljust("#Inflight", 20)
            + "#LastTime\n"
        )
    else:
        w("  ".join(head) + "  " + ljust("#Diff", 20) + " " + ljust("#Inflight", 20) + "#LastTime\n")
    for r in p.rows:
        cells = [
            ljust(front(r.topic, 64), 64),
            ljust(front(r.broker_name, 32), 32),
            ljust(r.queue_id, 4),
            ljust(r.broker_offset, 20),
            ljust(r.consumer_offset, 20),
        ]
        line = "  ".join(cells) + "  "
        if show_client_ip:
            line += ljust(r.client_ip or "N/A", 20) + " "
        line += ljust(r.diff, 20) + " " + ljust(r.inflight, 20) + " " + _last_time(r.last_timestamp) + "\n"
        w(line)
    w("\n")
    w(f"Consume TPS: {java_2f(0.0)}\n")
    w(f"Consume Diff Total: {p.diff_total}\n")
    w(f"Consume Inflight Total: {p.inflight_total}\n")


def _row_dict(r) -> dict:  # type: ignore[no-untyped-def]
    d = {
        "topic": r.topic,
        "brokerName": r.broker_name,
        "queueId": r.queue_id,
        "brokerOffset": r.broker_offset,
        "consumerOffset": r.consumer_offset,
        "diff": r.diff,
        "inflight": r.inflight,
        "lastTimestamp": r.last_timestamp,
        "minOffset": r.min_offset,
        "committed": r.committed,
        "belowMin": r.committed and r.consumer_offset < r.min_offset,
        "oldestUnconsumedTimestamp": r.oldest_unconsumed_timestamp,
        "lagMs": r.lag_ms,
    }
    if r.matched_diff is not None:
        d["matchedDiff"] = r.matched_diff
    return d


def json_doc(p: GroupProgress) -> dict:
    doc: dict = {
        "schema": SCHEMA,
        "backend": "store",
        "group": p.group,
        "nowMs": p.now_ms,
        "rows": [_row_dict(r) for r in p.rows],
        "totals": {
            "diff": p.diff_total,
            "inflight": p.inflight_total,
            "consumeTps": None,
            "maxLagMs": p.max_lag_ms,
        },
    }
    if p.tags is not None:
        doc["tags"] = "*" if p.tags.match_all else " || ".join(sorted(p.tags.tags))
        doc["totals"]["matchedDiff"] = p.matched_total
        if p.tag_collisions is not None:
            doc["totals"]["tagHashCollisions"] = p.tag_collisions
    return doc


CSV_COLUMNS = [
    "topic",
    "brokerName",
    "queueId",
    "brokerOffset",
    "consumerOffset",
    "diff",
    "inflight",
    "lastTimestamp",
    "minOffset",
    "oldestUnconsumedTimestamp",
    "lagMs",
    "matchedDiff",
]


def csv_rows(p: GroupProgress) -> list[list]:
    return [
        [
            r.topic,
            r.broker_name,
            r.queue_id,
            r.broker_offset,
            r.consumer_offset,
            r.diff,
            r.inflight,
            r.last_timestamp,
            r.min_offset,
            r.oldest_unconsumed_timestamp,
            r.lag_ms,
            r.matched_diff,
        ]
        for r in p.rows
    ]


def table(p: GroupProgress, out: TextIO) -> None:
    from mqctl.ops.timeparse import format_duration_ms
    from mqctl.render.table import Column, TableSpec, write_table

    cols = [
        Column("Topic"),
        Column("Broker"),
        Column("QID", "right"),
        Column("Min", "right"),
        Column("Broker Offset", "right"),
        Column("Consumer Offset", "right"),
        Column("Diff", "right"),
    ]
    with_tags = p.tags is not None
    if with_tags:
        cols.append(Column("Matched", "right"))
    cols += [Column("Last Consumed"), Column("Lag Time", "right")]
    rows, styles = [], []
    for r in p.rows:
        cells: list = [
            r.topic,
            r.broker_name,
            r.queue_id,
            r.min_offset,
            r.broker_offset,
            r.consumer_offset if r.committed else f"{r.consumer_offset} (none)",
            r.diff,
        ]
        if with_tags:
            cells.append(r.matched_diff)
        cells += [
            "-" if r.last_timestamp == 0 else local_datetime_ms(r.last_timestamp),
            format_duration_ms(r.lag_ms) if r.oldest_unconsumed_timestamp else "-",
        ]
        rows.append(cells)
        styles.append(None if r.diff == 0 else ("yellow" if r.lag_ms < 3_600_000 else "red"))
    footer = [
        f"\nGroup {p.group}: diff total {p.diff_total}"
        + (f", matched total {p.matched_total} ({_expr(p)})" if with_tags else "")
        + (f", max lag time {format_duration_ms(p.max_lag_ms)}" if p.max_lag_ms else "")
    ]
    if p.tag_collisions:
        footer.append(f"{p.tag_collisions} tag-hash matches had a different real tag (hash collisions)")
    footer.append("[dim]Consume TPS and inflight need a live broker; a store shows committed offsets.[/dim]")
    write_table(
        TableSpec(cols, rows, title=f"consumerProgress {p.group}", footer_lines=footer, row_styles=styles),
        out,
    )


def _expr(p: GroupProgress) -> str:
    assert p.tags is not None
    return "*" if p.tags.match_all else " || ".join(sorted(p.tags.tags))


# --- all-groups overview ------------------------------------------------------------------


def groups_plain(groups: list[GroupSummary], out: TextIO) -> None:
    """mqadmin's all-groups layout; a store knows no connections, so every group is OFFLINE."""
    out.write(
        f"{ljust('#Group', 64)}  {ljust('#Count', 6)}  {ljust('#Version', 24)} {ljust('#Type', 5)}  "
        f"{ljust('#Model', 14)}  {ljust('#TPS', 7)}  #Diff Total\n"
    )
    for g in groups:
        out.write(
            f"{ljust(front(g.group, 64), 64)}  {ljust(0, 6)}  {ljust('OFFLINE', 24)} {ljust('', 5)}  "
            f"{ljust('', 14)}  {ljust(0, 7)}  {g.diff_total}\n"
        )


def groups_json(groups: list[GroupSummary]) -> dict:
    return {
        "schema": SCHEMA_GROUPS,
        "backend": "store",
        "note": "count, version, type, model and tps need a live cluster; a store cannot know them (null)",
        "rows": [
            {
                "group": g.group,
                "count": None,
                "version": None,
                "type": None,
                "model": None,
                "tps": None,
                "diffTotal": g.diff_total,
                "maxLagMs": g.max_lag_ms,
                "topics": g.topics,
                "brokers": g.brokers,
            }
            for g in groups
        ],
    }


def groups_table(groups: list[GroupSummary], out: TextIO) -> None:
    from mqctl.ops.timeparse import format_duration_ms
    from mqctl.render.table import Column, TableSpec, write_table

    cols = [
        Column("Group"),
        Column("Diff Total", "right"),
        Column("Max Lag Time", "right"),
        Column("Topics"),
        Column("Brokers"),
    ]
    rows = [
        [
            g.group,
            g.diff_total,
            format_duration_ms(g.max_lag_ms) if g.max_lag_ms else "-",
            ", ".join(g.topics),
            ", ".join(g.brokers),
        ]
        for g in groups
    ]
    write_table(
        TableSpec(
            cols,
            rows,
            title="consumer groups (from the stores' offset tables)",
            footer_lines=[
                "[dim]Clients, version, type, model and TPS need a live cluster; a store cannot know them.[/dim]"
            ],
        ),
        out,
    )
