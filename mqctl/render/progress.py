"""consumerProgress output: mqadmin's plain layout, a rich table, JSON and CSV."""

from __future__ import annotations

from typing import TYPE_CHECKING, TextIO

from mqctl.render import broadcast_groups as bcg
from mqctl.render.plain import front, java_2f, ljust, local_datetime, local_datetime_ms

if TYPE_CHECKING:
    from mqctl.model import GroupProgress, GroupSummary, ProgressRow

SCHEMA = "mqctl/consumerProgress/v1"
SCHEMA_GROUPS = "mqctl/consumerProgress.groups/v1"

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


def _lag_style(lag: int, lag_ms: int | None) -> str | None:
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
        line += ljust(r.diff, 20) + " " + ljust(r.inflight, 20) + " " + _last_time(r.last_timestamp) + "\n"
        w(line)
    w("\n")
    w(f"Consume TPS: {java_2f(p.consume_tps or 0.0)}\n")
    w(f"Consume Diff Total: {p.raw_diff_total}\n")
    w(f"Consume Inflight Total: {p.inflight_total}\n")


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
        rows.append(d)
    doc: dict = {
        "schema": SCHEMA,
        "backend": backend,
        "group": p.group,
        "nowMs": p.now_ms,
        "rows": rows,
        "totals": {
            "diff": p.diff_total,
            "inflight": p.inflight_total,
            "consumeTps": p.consume_tps,
            "maxLagMs": None if p.time_unknown else p.max_lag_ms,
        },
    }
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
    from mqctl.render.plain import format_duration_ms
    from mqctl.render.table import Column, TableSpec, write_table

    with_tags = p.tags is not None
    cols = [
        Column("Topic"),
        Column("Broker"),
        Column("QID", "right", kind="number"),
        Column("Min", "right", kind="number", optional=True),
        Column("Broker Offset", "right", kind="number"),
        Column("Consumer Offset", "right", kind="number"),
        Column("Diff", "right", kind="number"),
        *([Column("Matched", "right", kind="number")] if with_tags else []),
        *([Column("Client IP", optional=True)] if show_client_ip else []),
        Column("Last Consumed", kind="text", optional=True),
        Column("Lag Time", "right", kind="number"),
    ]
    rows, styles = [], []
    for r in p.rows:
        rows.append(
            [
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
        )
        styles.append(_lag_style(r.lag, r.lag_ms))
    footer = [
        f"\nGroup {p.group}: diff total {p.diff_total}"
        + (f", matched total {p.matched_total} ({_expr(p)})" if with_tags else "")
        + (f", max lag time {format_duration_ms(p.max_lag_ms)}" if p.max_lag_ms else "")
    ]
    if p.time_unknown:
        footer.append(f"{len(p.time_unknown)} queue(s) with a store time that cannot be read: {UNKNOWN}")
    if p.tag_collisions:
        footer.append(f"{p.tag_collisions} tag-hash matches had a different real tag (hash collisions)")
    if any(styles):
        footer.append(LEGEND)
    if p.consume_tps is None:
        footer.append(
            "[dim]Consume TPS and inflight need a live broker; a store shows committed offsets.[/dim]"
        )
    else:
        footer.append(f"consume TPS {p.consume_tps:.2f}, inflight total {p.inflight_total}")
    write_table(
        TableSpec(cols, rows, title=f"consumerProgress {p.group}", footer_lines=footer, row_styles=styles),
        out,
    )


def _table_time(ts: int | None) -> str:
    return UNKNOWN if ts is None else "-" if ts == 0 else local_datetime_ms(ts)


def _expr(p: GroupProgress) -> str:
    assert p.tags is not None
    return "*" if p.tags.match_all else " || ".join(sorted(p.tags.tags))


# --- all-groups overview ------------------------------------------------------------------


def _mqadmin_type(g: GroupSummary) -> tuple[str, str]:
    """mqadmin's #Type and #Model: PULL for CONSUME_ACTIVELY, else PUSH; the model only for push."""
    if not g.clients:
        return "", ""
    kind = "PULL" if g.consume_type == "CONSUME_ACTIVELY" else "PUSH"
    model = (g.message_model or "") if g.consume_type == "CONSUME_PASSIVELY" else ""
    return kind, model


def groups_plain(groups: list[GroupSummary], out: TextIO, headers: bool = True) -> None:
    """mqadmin's all-groups layout (spec/mqadmin.md 3.4); a store knows no clients: OFFLINE."""
    from mqctl.model import version_name

    if headers:
        out.write(
            f"{ljust('#Group', 64)}  {ljust('#Count', 6)}  {ljust('#Version', 24)} {ljust('#Type', 5)}  "
            f"{ljust('#Model', 14)}  {ljust('#TPS', 7)}  #Diff Total\n"
        )
    for g in groups:
        count = g.clients or 0
        version = version_name(g.version) if count and g.version is not None else "OFFLINE"
        kind, model = _mqadmin_type(g)
        tps = int(g.tps or 0.0)  # Java's (int) cast truncates toward zero
        out.write(
            f"{ljust(front(g.group, 64), 64)}  {ljust(count, 6)}  {ljust(version, 24)} {ljust(kind, 5)}  "
            f"{ljust(model, 14)}  {ljust(tps, 7)}  {g.raw_diff_total}\n"
        )


# The overview's fields, the same in JSON rows and CSV columns.
GROUP_FIELDS = (
    "group",
    "count",
    "version",
    "type",
    "model",
    "tps",
    "diffTotal",
    "maxLagMs",
    "queues",
    "queuesAboveMax",
    "foundIn",
    "topics",
    "brokers",
    *bcg.FIELDS,
)


def _group_values(g: GroupSummary) -> dict:
    return {
        "group": g.group,
        "count": g.clients,
        "version": g.version,
        "type": g.consume_type,
        "model": g.message_model,
        "tps": g.tps,
        "diffTotal": None if bcg.unknown(g) else g.diff_total,
        "maxLagMs": None if g.time_unknown or bcg.unknown(g) else g.max_lag_ms,
        "queues": g.queues,
        "queuesAboveMax": g.queues_above_max,
        "foundIn": list(g.found_in),
        "topics": g.topics,
        "brokers": g.brokers,
        **bcg.values(g),
    }


def groups_json(groups: list[GroupSummary], backend: str = "store") -> dict:
    return {
        "schema": SCHEMA_GROUPS,
        "backend": backend,
        "note": "count, version, type, model and tps need a live cluster; a store cannot know them (null)",
        "rows": [_group_values(g) for g in groups],
        "totals": {"groups": len(groups), "diffTotal": sum(g.diff_total for g in groups)},
    }


GROUP_CSV_COLUMNS = list(GROUP_FIELDS)


def groups_csv_rows(groups: list[GroupSummary]) -> list[list]:
    out = []
    for g in groups:
        values = _group_values(g)
        out.append([" ".join(v) if isinstance(v, list) else v for v in (values[k] for k in GROUP_FIELDS)])
    return out


def groups_table(groups: list[GroupSummary], out: TextIO, sort: str = "lag") -> None:
    from mqctl.model import FOUND_RETRY_TOPIC, version_name
    from mqctl.render.plain import format_duration_ms
    from mqctl.render.table import Column, TableSpec, write_table

    live = any(g.clients is not None for g in groups)
    cols = [
        Column("Group"),
        *(
            [Column("Clients", "right", kind="number"), Column("Version", kind="text", optional=True)]
            if live
            else []
        ),
        Column("Diff Total", "right", kind="number"),
        Column("Max Lag Time", "right", kind="number"),
        *([Column("TPS", "right", kind="number", optional=True)] if live else []),
        Column("Topics", kind="text", optional=True),
        Column("Brokers", kind="text", optional=True),
    ]
    rows, styles = [], []
    for g in groups:
        name = g.group if FOUND_RETRY_TOPIC in g.found_in else f"{g.group} *"
        name += " (broadcast)" if g.offsets_on_clients else ""
        version = version_name(g.version) if g.version is not None else "-"
        lag_time = UNKNOWN if g.time_unknown else format_duration_ms(g.max_lag_ms) if g.max_lag_ms else "-"
        rows.append(
            [
                name,
                *([g.clients, version] if live else []),
                bcg.ON_CLIENTS if bcg.unknown(g) else g.diff_total,
                bcg.ON_CLIENTS if bcg.unknown(g) else lag_time,
                *([f"{g.tps or 0.0:.2f}"] if live else []),
                ", ".join(g.topics),
                ", ".join(g.brokers),
            ]
        )
        styles.append(_lag_style(g.diff_total, g.max_lag_ms))
    total = sum(g.diff_total for g in groups)
    order = {"lag": "largest lag first", "name": "by name", "mqadmin": "in mqadmin's order"}[sort]
    footer = [f"\n{len(groups)} group(s), diff total {total} ({order}; --sort lag|name|mqadmin)"]
    if any(FOUND_RETRY_TOPIC not in g.found_in for g in groups):
        footer.append(
            "* no %RETRY% topic (found in the offset or subscription-group tables): mqadmin does not list it"
        )
    if any(g.offsets_on_clients for g in groups):
        footer.append(bcg.FOOTER)
    if any(styles):
        footer.append(LEGEND)
    if not live:
        footer.append(
            "[dim]Clients, version, type, model and TPS need a live cluster; a store cannot know them.[/dim]"
        )
    write_table(
        TableSpec(cols, rows, title="consumer groups", footer_lines=footer, row_styles=styles),
        out,
    )
