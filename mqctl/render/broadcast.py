"""consumerProgress of a broadcasting group: the notice that its progress lives on its clients,
and the per-client rows read from their offsets.json (table, plain, JSON, CSV).

``plain``: mqadmin has no layout for a broadcasting group's progress (its consumerProgress fails
or prints the broker's meaningless numbers). The closest is its own ``consumerProgress -s true``
layout: the rows of every client one after the other, the ``#Client IP`` column naming the client
each row belongs to (its ``HOST/clientId``), ``#Consumer Offset`` the client's own offset, and the
footer's totals summed over the rows printed, as mqadmin sums them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TextIO

from mqctl.render import Views
from mqctl.render.progress import CSV_COLUMNS, LAG_WARN_MS, LEGEND, UNKNOWN, csv_rows, json_doc

if TYPE_CHECKING:
    from mqctl.model import GroupProgress, MessageQueue
    from mqctl.model.broadcast import BroadcastProgress, ClientProgress, GroupModel

SCHEMA = "mqctl/consumerProgress.broadcast/v1"

PULL_NOTE = (
    "the brokers' own pull position (topic@group@broadcast, 5.1+ brokers): per queue the minimum over "
    "the group's push clients seen in the last 120 s of the offset each last pulled from. What was "
    "fetched, not what was consumed: not a committed offset, not any one client's progress"
)

WHERE = "<dir>/<clientId>/{group}/offsets.json (dir: the client's rocketmq.client.localOffsetStoreDir, ~/.rocketmq_offsets by default)"


def warning_lines(p: BroadcastProgress) -> list[str]:
    """What stderr says of the clients before their progress: the reads' warnings, each client
    whose file went stale, the connected clients no file was given for."""
    lines = list(p.warnings)
    for cp in p.stale:
        age = "unknown" if cp.age_ms is None else f"{cp.age_ms // 1000} s"
        lines.append(
            f"{cp.client.path}: not written for {age} (over --stale-after {p.stale_after_ms // 1000} s): "
            "its client stopped persisting (gone or stuck)"
        )
    if p.unseen:
        names = ", ".join(c.client_id for c in p.unseen)
        lines.append(
            f"connected client(s) without a file among those given (their progress is not shown): {names}"
        )
    return lines


def _q(mq: MessageQueue) -> str:
    return f"{mq.topic}/{mq.broker_name}/{mq.queue_id}"


# ------------------------------------------------------------------------------ the notice


def notice_text(model: GroupModel, group: str, out: TextIO, *, live: bool) -> None:
    """Why there is no table: the group broadcasts; its client instances and the brokers' pull
    positions, each said for what it is (table and plain)."""
    w = out.write
    w(f"Group {group} is a BROADCASTING consumer group (known from: {model.source}).\n")
    w(f"Its progress lives on each client instance, in {WHERE.format(group=group)};\n")
    w("the brokers keep no committed offsets for it, so they have no lag to show.\n")
    if live:
        w(f"\nClient instances the broker knows ({len(model.clients)} online):\n")
        for c in model.clients:
            w(f"  {c.client_id}  {c.client_addr}  {c.language}  {_version(c.version)}\n")
    else:
        w("\nA store cannot list the client instances (connections live in a running broker's memory).\n")
    if model.pull_offsets:
        w(f"\n{PULL_NOTE}:\n")
        for mq, off in model.pull_offsets:
            w(f"  {_q(mq)}  {off}\n")
    w(f"\nEach client's offsets, lag and lag time: consumerProgress -g {group} --client-offsets PATH\n")


def _version(v: int) -> str:
    from mqctl.model import version_name

    return version_name(v)


def _connected(model: GroupModel | None) -> list[dict[str, Any]]:
    clients = model.clients if model is not None else ()
    return [
        {
            "clientId": c.client_id,
            "clientAddr": c.client_addr,
            "language": c.language,
            "version": _version(c.version),
        }
        for c in clients
    ]


def _pulls(model: GroupModel | None) -> list[dict[str, Any]]:
    pulls = model.pull_offsets if model is not None else ()
    return [
        {"topic": mq.topic, "brokerName": mq.broker_name, "queueId": mq.queue_id, "pullOffset": off}
        for mq, off in pulls
    ]


def notice_json(model: GroupModel, group: str, backend: str) -> dict[str, Any]:
    """The broadcast document without clients' files: who is connected, the pull positions."""
    return {
        "schema": SCHEMA,
        "backend": backend,
        "group": group,
        "model": model.model,
        "modelFrom": model.source,
        "progressOn": "clients",
        "connected": _connected(model) if backend == "live" else None,
        "brokerPullOffsets": {"note": PULL_NOTE, "queues": _pulls(model)},
        "clients": [],
        "totals": None,
    }


# ------------------------------------------------------------------------------ per client

CLIENT_FIELDS = ("client", "clientId", "host", "path", "stale", "fileAgeMs")
BROADCAST_CSV_COLUMNS = [*CLIENT_FIELDS, *CSV_COLUMNS]


def _client_values(cp: ClientProgress) -> dict[str, Any]:
    c = cp.client
    return {
        "client": c.label,
        "clientId": c.client_id,
        "host": c.host,
        "path": c.path,
        "stale": cp.stale,
        "fileAgeMs": cp.age_ms,
    }


def _client_doc(cp: ClientProgress, backend: str) -> dict[str, Any]:
    c = cp.client
    doc = json_doc(cp.progress, backend)
    totals = doc["totals"]
    return {
        **_client_values(cp),
        "clientIp": c.client_ip,
        "instanceName": c.instance_name,
        "readFrom": c.read_from,
        "fellBackToBak": c.fell_back,
        "layout": c.dialect,
        "fileMtimeMs": c.mtime_ms,
        "connected": cp.connected,
        "rows": [{k: v for k, v in r.items() if k != "clientIp"} for r in doc["rows"]],
        "totals": {
            "diff": totals["diff"],
            "maxLagMs": totals["maxLagMs"],
            **({"matchedDiff": totals["matchedDiff"]} if "matchedDiff" in totals else {}),
        },
    }


def json_document(p: BroadcastProgress, backend: str) -> dict[str, Any]:
    worst = p.worst
    doc: dict[str, Any] = {
        "schema": SCHEMA,
        "backend": backend,
        "group": p.group,
        "model": p.model.model if p.model else None,
        "modelFrom": p.model.source if p.model else None,
        "progressOn": "clients",
        "nowMs": p.now_ms,
        "staleAfterMs": p.stale_after_ms,
        "topics": list(p.topics),
        "connected": _connected(p.model) if backend == "live" else None,
        "connectedWithoutFile": [c.client_id for c in p.unseen],
        "brokerPullOffsets": {"note": PULL_NOTE, "queues": _pulls(p.model)},
        "clients": [_client_doc(cp, backend) for cp in p.ranked],
        "totals": {
            "clients": len(p.clients),
            "staleClients": len(p.stale),
            "worstClient": worst.client.label if worst else None,
            "worstDiff": worst.progress.diff_total if worst else None,
            "worstMaxLagMs": worst.progress.max_lag_ms if worst else None,
        },
    }
    if p.tags is not None:
        doc["tags"] = "*" if p.tags.match_all else " || ".join(sorted(p.tags.tags))
        doc["totals"]["worstMatchedDiff"] = worst.lag if worst else None
    return doc


def csv_table(p: BroadcastProgress) -> list[list[Any]]:
    out = []
    for cp in p.ranked:
        lead = [_cell(v) for v in _client_values(cp).values()]
        out += [lead + row for row in csv_rows(cp.progress)]
    return out


def _cell(v: object) -> object:
    return ("true" if v else "false") if isinstance(v, bool) else v


def merged(p: BroadcastProgress) -> GroupProgress:
    """Every client's rows in one consumerProgress result (``client_ip``: the client), for plain."""
    from mqctl.model import GroupProgress

    rows = [r for cp in p.ranked for r in cp.progress.rows]
    return GroupProgress(p.group, rows, p.now_ms, consume_tps=0.0, rocketmq_version=p.rocketmq_version)


def plain(p: BroadcastProgress, out: TextIO, headers: bool = True) -> None:
    from mqctl.render.progress import plain as progress_plain

    progress_plain(merged(p), out, show_client_ip=True, headers=headers)


# ------------------------------------------------------------------------------ the table


def _time(ts: int | None) -> str:
    from mqctl.render.plain import local_datetime_ms

    return UNKNOWN if ts is None else "-" if ts == 0 else local_datetime_ms(ts)


def _lag(lag_ms: int | None, oldest: int | None) -> str:
    from mqctl.render.plain import format_duration_ms

    return UNKNOWN if lag_ms is None else format_duration_ms(lag_ms) if oldest else "-"


def _style(lag: int, lag_ms: int | None) -> str | None:
    if lag == 0:
        return None
    return "yellow" if lag_ms is not None and lag_ms < LAG_WARN_MS else "red"


def _client_line(cp: ClientProgress, with_tags: bool) -> str:
    from mqctl.render.plain import format_duration_ms

    p = cp.progress
    parts = [f"diff total {p.diff_total}"]
    if with_tags:
        parts.append(f"matched total {p.matched_total}")
    if p.max_lag_ms:
        parts.append(f"max lag time {format_duration_ms(p.max_lag_ms)}")
    age = "file time unknown" if cp.age_ms is None else f"written {format_duration_ms(cp.age_ms)} ago"
    parts.append(age + (" [red]STALE[/red]" if cp.stale else ""))
    if cp.client.fell_back:
        parts.append("read from its .bak")
    if cp.connected is not None:
        parts.append("connected" if cp.connected else "not connected")
    return f"{cp.client.label}: " + ", ".join(parts)


def _footer(p: BroadcastProgress, styled: bool) -> list[str]:
    from mqctl.render.plain import format_duration_ms

    with_tags = p.tags is not None
    lines = ["", *(_client_line(cp, with_tags) for cp in p.ranked)]
    worst = p.worst
    if worst is not None:
        what = "matched total" if with_tags else "diff total"
        lines.append(
            f"\nGroup {p.group}: {len(p.clients)} client(s); worst {worst.client.label} ({what} {worst.lag})"
        )
    if p.stale:
        lines.append(
            f"{len(p.stale)} client file(s) not written for over {format_duration_ms(p.stale_after_ms)}: the client stopped persisting (gone or stuck)"
        )
    if p.unseen:
        lines.append(
            f"connected without a file among those given: {', '.join(c.client_id for c in p.unseen)}"
        )
    if styled:
        lines.append(LEGEND)
    return lines


def table(p: BroadcastProgress, out: TextIO) -> None:
    from mqctl.render.table import Column, TableSpec, write_table

    with_tags = p.tags is not None
    cols = [
        Column("Client"),
        Column("Topic"),
        Column("Broker"),
        Column("QID", "right", kind="number"),
        Column("Min", "right", kind="number", optional=True),
        Column("Broker Offset", "right", kind="number"),
        Column("Client Offset", "right", kind="number"),
        Column("Diff", "right", kind="number"),
        *([Column("Matched", "right", kind="number")] if with_tags else []),
        Column("Last Consumed", kind="text", optional=True),
        Column("Lag Time", "right", kind="number"),
    ]
    rows, styles = [], []
    for cp in p.ranked:
        for r in cp.progress.rows:
            rows.append(
                [
                    cp.client.label,
                    r.topic,
                    r.broker_name,
                    r.queue_id,
                    r.min_offset,
                    r.broker_offset,
                    r.consumer_offset if r.committed else "none",
                    r.diff,
                    *([r.matched_diff] if with_tags else []),
                    _time(r.last_timestamp),
                    _lag(r.lag_ms, r.oldest_unconsumed_timestamp),
                ]
            )
            styles.append(_style(r.lag, r.lag_ms))
    title = f"consumerProgress {p.group} (broadcasting: each client's own offsets.json)"
    write_table(
        TableSpec(cols, rows, title=title, footer_lines=_footer(p, any(styles)), row_styles=styles), out
    )


def notice_views(model: GroupModel, group: str, kind: Any) -> Views:
    """The notice in each format (``kind``: the backend's; a live one knows the clients)."""
    live = kind.knows_runtime
    return Views(
        plain=lambda o: notice_text(model, group, o, live=live),
        table=lambda o: notice_text(model, group, o, live=live),
        json_doc=lambda: notice_json(model, group, str(kind)),
        csv=lambda: (BROADCAST_CSV_COLUMNS, []),
    )


def views(p: BroadcastProgress, kind: object, *, headers: bool) -> Views:
    """Every client's progress in each format."""
    return Views(
        plain=lambda o: plain(p, o, headers=headers),
        table=lambda o: table(p, o),
        json_doc=lambda: json_document(p, str(kind)),
        csv=lambda: (BROADCAST_CSV_COLUMNS, csv_table(p)),
    )
