"""consumerProgress -g output: mqadmin's plain layout, a rich table, JSON and CSV (the all-groups
overview is render/overview.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING, TextIO

from mqctl.render import Views
from mqctl.render.plain import front, java_2f, ljust, local_datetime, local_datetime_ms

if TYPE_CHECKING:
    from mqctl.model import GroupProgress, ProgressRow

SCHEMA = "mqctl/consumerProgress/v1"

# What the colours of the tables mean (printed under each table that uses them).
LAG_WARN_MS = 3_600_000
LEGEND = (
    "[yellow]yellow[/yellow]: unconsumed messages, the oldest younger than 1h; "
    "[red]red[/red]: the oldest unconsumed message is 1h old or older"
)


def _last_time(ts: int | None) -> str:
    # mqadmin's own column: the broker sends 0 for a time it could not read, printed N/A.
    return "N/A" if not ts else local_datetime(ts)


UNKNOWN = "unknown"  # a store time that could not be read (a damaged store), in mqctl's columns


def lag_style(lag: int, lag_ms: int | None) -> str | None:
    if lag == 0:
        return None
    return "yellow" if lag_ms is not None and lag_ms < LAG_WARN_MS else "red"


def plain(p: GroupProgress, out: TextIO, show_client_ip: bool = False, headers: bool = True) -> None:
    """mqadmin 5.1+ printf layout, byte for byte (spec/mqadmin.md 3.3); 4.x's for a 4.x cluster."""
    from mqctl.model.versions import is_legacy

    if is_legacy(p.rocketmq_version):
        plain_4x(p, out, show_client_ip, headers)
        return
    w = out.write
    head = "  ".join(
        [
            ljust("#Topic", 64),
            ljust("#Broker Name", 32),
            ljust("#QID", 4),
            ljust("#Broker Offset", 20),
            ljust("#Consumer Offset", 20),
        ]
    )
    if headers:
        ip_head = ljust("#Client IP", 20) + " " if show_client_ip else ""
        w(head + "  " + ip_head + ljust("#Diff", 20) + " " + ljust("#Inflight", 20) + "#LastTime\n")
    for r in p.rows:
        cells = _lead_cells(r)
        line = "  ".join(cells) + "  "
        if show_client_ip:
            line += ljust(r.client_ip or "N/A", 20) + " "
        inflight = "N/A" if p.inflight_unknown else r.inflight  # POP: popped, not acked, unknown
        line += ljust(r.diff, 20) + " " + ljust(inflight, 20) + " " + _last_time(r.last_timestamp) + "\n"
        w(line)
    w("\n")
    w(f"Consume TPS: {java_2f(p.consume_tps or 0.0)}\n")
    w(f"Consume Diff Total: {p.raw_diff_total}\n")
    w(f"Consume Inflight Total: {'N/A' if p.inflight_unknown else p.inflight_total}\n")


def _lead_cells(r: ProgressRow) -> list[str]:
    """A row's first five cells, as mqadmin 4.x and 5.x both print them."""
    return [
        ljust(front(r.topic, 64), 64),
        ljust(front(r.broker_name, 32), 32),
        ljust(r.queue_id, 4),
        ljust(r.broker_offset, 20),
        ljust(r.consumer_offset, 20),
    ]


def plain_4x(p: GroupProgress, out: TextIO, show_client_ip: bool = False, headers: bool = True) -> None:
    """mqadmin 4.9's layout (docs/rocketmq-versions.md 1): no Inflight column, "Diff Total:", and
    #LastTime aligned with its values."""
    w = out.write
    lead = (
        ("#Topic", 64),
        ("#Broker Name", 32),
        ("#QID", 4),
        ("#Broker Offset", 20),
        ("#Consumer Offset", 20),
    )
    if headers:
        ip_head = ljust("#Client IP", 20) + " " if show_client_ip else ""
        w("  ".join(ljust(h, n) for h, n in lead) + "  " + ip_head + ljust("#Diff", 20) + "  #LastTime\n")
    for r in p.rows:
        cells = _lead_cells(r)
        ip = ljust(r.client_ip or "N/A", 20) + " " if show_client_ip else ""
        w("  ".join(cells) + "  " + ip + ljust(r.diff, 20) + "  " + _last_time(r.last_timestamp) + "\n")
    w("\n")
    w(f"Consume TPS: {java_2f(p.consume_tps or 0.0)}\n")
    w(f"Diff Total: {p.raw_diff_total}\n")


# (JSON key, CSV column) of a row, in order; the CSV carries exactly the JSON's fields.
ROW_FIELDS = (
    "topic",
    "brokerName",
    "queueId",
    "brokerOffset",
    "consumerOffset",
    "diff",
    "lag",
    "inflight",
    "lastTimestamp",
    "minOffset",
    "committed",
    "belowMin",
    "aboveMax",
    "oldestUnconsumedTimestamp",
    "lagMs",
    "clientIp",
    "matchedDiff",
)


def _row_values(r: ProgressRow) -> dict:
    return {
        "topic": r.topic,
        "brokerName": r.broker_name,
        "queueId": r.queue_id,
        "brokerOffset": r.broker_offset,
        "consumerOffset": r.consumer_offset,
        "diff": r.diff,
        "lag": r.lag,
        "inflight": r.inflight,
        "lastTimestamp": r.last_timestamp,
        "minOffset": r.min_offset,
        "committed": r.committed,
        "belowMin": r.committed and r.min_offset is not None and r.consumer_offset < r.min_offset,
        "aboveMax": r.above_max,
        "oldestUnconsumedTimestamp": r.oldest_unconsumed_timestamp,
        "lagMs": r.lag_ms,
        "clientIp": r.client_ip,
        "matchedDiff": r.matched_diff,
    }


def json_doc(p: GroupProgress, backend: str = "store") -> dict:
    rows = []
    for r in p.rows:
        d = _row_values(r)
        if d["matchedDiff"] is None:
            del d["matchedDiff"]
        if p.inflight_unknown:
            d["inflight"] = None
        rows.append(d)
    doc: dict = {
        "schema": SCHEMA,
        "backend": backend,
        "group": p.group,
        "nowMs": p.now_ms,
        "rows": rows,
        "totals": {
            "diff": p.diff_total,
            "inflight": None if p.inflight_unknown else p.inflight_total,
            "consumeTps": p.consume_tps,
            "maxLagMs": None if p.time_unknown else p.max_lag_ms,
        },
    }
    if p.pop is not None:
        from mqctl.render.pop import progress_json

        doc["pop"] = progress_json(p.pop)
    if p.tags is not None:
        doc["tags"] = _expr(p)
        doc["totals"]["matchedDiff"] = p.matched_total
        if p.tag_collisions is not None:
            doc["totals"]["tagHashCollisions"] = p.tag_collisions
    return doc


CSV_COLUMNS = list(ROW_FIELDS)


def csv_rows(p: GroupProgress) -> list[list]:
    return [[_csv(_row_values(r)[k]) for k in ROW_FIELDS] for r in p.rows]


def _csv(v: object) -> object:
    return ("true" if v else "false") if isinstance(v, bool) else v


def table(p: GroupProgress, out: TextIO, show_client_ip: bool = False) -> None:
    from mqctl.render.table import TableSpec, write_table

    with_tags = p.tags is not None
    rows = [_table_row(r, with_tags, show_client_ip) for r in p.rows]
    styles = [lag_style(r.lag, r.lag_ms) for r in p.rows]
    write_table(
        TableSpec(
            _table_columns(with_tags, show_client_ip),
            rows,
            title=f"consumerProgress {p.group}",
            footer_lines=_table_footer(p, with_tags),
            row_styles=styles,
            legend=LEGEND if any(styles) else None,
        ),
        out,
    )


def _table_columns(with_tags: bool, show_client_ip: bool) -> list:
    from mqctl.render.table import Column

    return [
        Column("Topic"),
        Column("Broker"),
        Column("QID", "right", kind="number"),
        Column("Min", "right", kind="number", optional=True, priority=1),
        Column("Broker Offset", "right", kind="number"),
        Column("Consumer Offset", "right", kind="number"),
        Column("Diff", "right", kind="number"),
        *([Column("Matched", "right", kind="number")] if with_tags else []),
        *([Column("Client IP", optional=True, priority=2)] if show_client_ip else []),
        Column("Last Consumed", kind="text", optional=True),
        Column("Lag Time", "right", kind="number"),
    ]


def _table_row(r: ProgressRow, with_tags: bool, show_client_ip: bool) -> list:
    from mqctl.render.plain import format_duration_ms

    return [
        r.topic,
        r.broker_name,
        r.queue_id,
        r.min_offset,
        r.broker_offset,
        r.consumer_offset if r.committed else f"{r.consumer_offset} (none)",
        r.diff,
        *([r.matched_diff] if with_tags else []),
        *([r.client_ip or "N/A"] if show_client_ip else []),
        _table_time(r.last_timestamp),
        UNKNOWN
        if r.lag_ms is None
        else format_duration_ms(r.lag_ms)
        if r.oldest_unconsumed_timestamp
        else "-",
    ]


def _table_footer(p: GroupProgress, with_tags: bool) -> list[str]:
    """The lines under the table: totals, unknown times, collisions, TPS, a POP group's lines."""
    from mqctl.render.plain import format_duration_ms

    footer = [
        f"\nGroup {p.group}: diff total {p.diff_total}"
        + (f", matched total {p.matched_total} ({_expr(p)})" if with_tags else "")
        + (f", max lag time {format_duration_ms(p.max_lag_ms)}" if p.max_lag_ms else "")
    ]
    if p.time_unknown:
        footer.append(f"{len(p.time_unknown)} queue(s) with a store time that cannot be read: {UNKNOWN}")
    if p.tag_collisions:
        footer.append(f"{p.tag_collisions} tag-hash matches had a different real tag (hash collisions)")
    if p.consume_tps is None:
        footer.append(
            "[dim]Consume TPS and inflight need a live broker; a store shows committed offsets.[/dim]"
        )
    else:
        inflight = "" if p.pop is not None else f", inflight total {p.inflight_total}"
        footer.append(f"consume TPS {p.consume_tps:.2f}{inflight}")
    if p.pop is not None:
        from mqctl.render.pop import progress_lines

        footer += progress_lines(p.pop)
    return footer


def _table_time(ts: int | None) -> str:
    return UNKNOWN if ts is None else "-" if ts == 0 else local_datetime_ms(ts)


def _expr(p: GroupProgress) -> str:
    assert p.tags is not None
    return "*" if p.tags.match_all else " || ".join(sorted(p.tags.tags))


def views(p: GroupProgress, kind: str, *, show_client_ip: bool, headers: bool) -> Views:
    """One group's progress in each format (``kind``: the backend's, in the JSON document)."""
    return Views(
        plain=lambda o: plain(p, o, show_client_ip=show_client_ip, headers=headers),
        table=lambda o: table(p, o, show_client_ip=show_client_ip),
        json_doc=lambda: json_doc(p, kind),
        csv=lambda: (CSV_COLUMNS, csv_rows(p)),
    )
