"""lagReport's output: the top groups of a report and the worst groups of --status, as a table,
JSON (schemas mqctl/lagReport/v1 and mqctl/lagReport.status/v1) or CSV."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TextIO

from mqctl.render import Views
from mqctl.render.plain import format_duration_ms

if TYPE_CHECKING:
    from mqctl.model import LagReportSummary, LagStatusSummary

SCHEMA = "mqctl/lagReport/v1"
STATUS_SCHEMA = "mqctl/lagReport.status/v1"

TOP_COLUMNS = [
    "group",
    "diffTotal",
    "matchedDiffTotal",
    "maxLagMs",
    "queues",
    "queuesBelowMin",
    "queuesAboveMax",
]
STATUS_COLUMNS = [
    "group",
    "status",
    "queues",
    "lag",
    "maxLagMs",
    "consumeRate",
    "produceRate",
    "worstQueue",
    "reason",
]


def report_doc(s: LagReportSummary) -> dict[str, Any]:
    return {
        "schema": SCHEMA,
        "out": s.out,
        "format": s.dataset_format if s.out else None,
        "rows": s.rows,
        "history": s.history,
        "source": s.source,
        "nowMs": s.now_ms,
        "top": [{k: r[k] for k in TOP_COLUMNS} for r in s.top],
        "groupsWithoutRows": list(s.groups_without_rows),
    }


def report_csv(s: LagReportSummary) -> tuple[list[str], list[list[Any]]]:
    return TOP_COLUMNS, [[r[k] for k in TOP_COLUMNS] for r in s.top]


def _cell(key: str, value: Any) -> Any:
    """A table cell: "-" for null (live: no matchedDiff, no lag time) and for no lag at all."""
    if value is None or (key == "maxLagMs" and not value):
        return "-"
    return format_duration_ms(value) if key == "maxLagMs" else value


def report_table(s: LagReportSummary, out: TextIO) -> None:
    """The top groups. A terminal table has no mqadmin-style '#' headers, and the Matched column
    only when some group has one (--subscriptions): a column empty by construction says nothing."""
    from mqctl.render.table import Column, TableSpec, write_table

    footer = f"{s.rows} queue rows" + (f" written to {s.out} ({s.dataset_format})" if s.out else "")
    if s.history:
        footer += f"; appended to the history {s.history}"
    matched = any(r.get("matchedDiffTotal") is not None for r in s.top)
    keys = [k for k in TOP_COLUMNS if matched or k != "matchedDiffTotal"]
    heads = {
        "group": Column("Group"),
        "diffTotal": Column("Diff Total", "right", kind="number"),
        "matchedDiffTotal": Column("Matched", "right", kind="number"),
        "maxLagMs": Column("Max Lag", "right", kind="number"),
        "queues": Column("Queues", "right", kind="number"),
        "queuesBelowMin": Column("Below Min", "right", kind="number"),
        "queuesAboveMax": Column("Above Max", "right", kind="number"),
    }
    lines = [footer]
    if s.groups_without_rows:
        lines.append(
            f"Not in the report: {len(s.groups_without_rows)} group(s) with no committed offset on any "
            f"topic, so no queue rows (consumerProgress lists them with diff 0): {', '.join(s.groups_without_rows)}"
        )
    spec = TableSpec(
        columns=[heads[k] for k in keys],
        rows=[[_cell(k, r[k]) for k in keys] for r in s.top],
        footer_lines=lines,
    )
    write_table(spec, out)


def _status_counts() -> list[str]:
    from mqctl.model import STATUSES

    return [x.lower() for x in STATUSES]


def status_doc(s: LagStatusSummary) -> dict[str, Any]:
    return {
        "schema": STATUS_SCHEMA,
        "history": s.history,
        "nowMs": s.now_ms,
        "windowMs": s.window_ms,
        "queues": s.queues,
        "out": s.out,
        "groups": s.groups,
    }


def status_csv(s: LagStatusSummary) -> tuple[list[str], list[list[Any]]]:
    cols = [*STATUS_COLUMNS[:3], *_status_counts(), "stale", *STATUS_COLUMNS[3:]]
    return cols, [[r[c] for c in cols] for r in s.groups]


def _rate(v: float | None) -> str:
    return "-" if v is None else f"{v:.2f}"


def _queues_cell(r: dict[str, Any], counts: list[str]) -> str:
    """ "12" when all are OK, else "12 (2 STALL, 1 WARN)"; stale ones are said too."""
    parts = [f"{r[c]} {c.upper()}" for c in reversed(counts) if c != "ok" and r[c]]
    if r["stale"]:
        parts.append(f"{r['stale']} stale")
    return f"{r['queues']}" + (f" ({', '.join(parts)})" if parts else "")


def status_table(s: LagStatusSummary, out: TextIO) -> None:
    from mqctl.render.table import Column, TableSpec, write_table

    counts = _status_counts()
    rows = [
        [
            r["group"],
            r["status"],
            _queues_cell(r, counts),
            r["lag"],
            format_duration_ms(r["maxLagMs"]) if r["maxLagMs"] else "-",
            _rate(r["consumeRate"]),
            _rate(r["produceRate"]),
            r["worstQueue"],
            r["reason"],
        ]
        for r in s.groups
    ]
    footer = f"{s.queues} queues judged over the last {format_duration_ms(s.window_ms)} of {s.history}"
    if s.out:
        footer += f"; per-queue statuses written to {s.out} ({s.dataset_format})"
    spec = TableSpec(
        columns=[
            Column("Group"),
            Column("Status"),
            Column("Queues", "right"),
            Column("Lag", "right", kind="number"),
            Column("Max Lag", "right", kind="number"),
            Column("Consume/s", "right", kind="number", optional=True, priority=1),
            Column("Produce/s", "right", kind="number", optional=True, priority=1),
            Column("Worst Queue"),
            Column("Why", kind="text", optional=True),
        ],
        rows=rows,
        footer_lines=[footer],
    )
    write_table(spec, out)


def report_views(s: LagReportSummary) -> Views:
    """The report in each format; plain is the table (lagReport has no mqadmin layout)."""
    return Views(
        lambda o: report_table(s, o),
        lambda o: report_table(s, o),
        lambda: report_doc(s),
        lambda: report_csv(s),
    )


def status_views(s: LagStatusSummary) -> Views:
    """--status in each format; plain is the table."""
    return Views(
        lambda o: status_table(s, o),
        lambda o: status_table(s, o),
        lambda: status_doc(s),
        lambda: status_csv(s),
    )
