"""consumerProgress without -g: the all-groups overview as mqadmin prints it, a rich table, JSON
and CSV."""

from __future__ import annotations

from typing import TYPE_CHECKING, TextIO

from mqctl.model import BackendKind
from mqctl.render import Views
from mqctl.render import broadcast_groups as bcg
from mqctl.render.plain import front, ljust
from mqctl.render.progress import LEGEND, UNKNOWN, lag_style

if TYPE_CHECKING:
    from mqctl.model import GroupSummary

SCHEMA_GROUPS = "mqctl/consumerProgress.groups/v1"


def _mqadmin_type(g: GroupSummary) -> tuple[str, str]:
    """mqadmin's #Type and #Model: PULL for CONSUME_ACTIVELY, else PUSH; the model only for push
    (mqctl's POP: a group whose clients pop through a proxy, which mqadmin does not list)."""
    if g.consume_type == "CONSUME_POP":
        return "POP", ""
    if not g.clients:
        return "", ""
    kind = "PULL" if g.consume_type == "CONSUME_ACTIVELY" else "PUSH"
    model = (g.message_model or "") if g.consume_type == "CONSUME_PASSIVELY" else ""
    return kind, model


def groups_plain(groups: list[GroupSummary], out: TextIO, headers: bool = True) -> None:
    """mqadmin's all-groups layout (spec/mqadmin.md 3.4); a store knows no clients: OFFLINE.
    Only the groups mqadmin lists (those of a %RETRY% topic): plain is mqadmin's bytes; the
    others are in the table, JSON and CSV, marked by their foundIn. One exception: a POP group is
    listed under its own name, typed POP, where mqadmin lists its POP retry topic as a group
    (``GroupPop_TopicPop``, left out by ops)."""
    from mqctl.model import FOUND_RETRY_TOPIC, version_name

    if headers:
        out.write(
            f"{ljust('#Group', 64)}  {ljust('#Count', 6)}  {ljust('#Version', 24)} {ljust('#Type', 5)}  "
            f"{ljust('#Model', 14)}  {ljust('#TPS', 7)}  #Diff Total\n"
        )
    for g in groups:
        if FOUND_RETRY_TOPIC not in g.found_in and g.consume_type != "CONSUME_POP":
            continue
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


STORE_NOTE = "count, version, type, model and tps need a live cluster; a store cannot know them (null)"


def groups_json(groups: list[GroupSummary], backend: str = "store") -> dict:
    return {
        "schema": SCHEMA_GROUPS,
        "backend": backend,
        "note": STORE_NOTE if BackendKind(backend).reads_files else None,
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


def groups_table(groups: list[GroupSummary], out: TextIO, sort: str = "lag", *, live: bool = False) -> None:
    """``live``: the backend is a running cluster (clients, version and TPS columns), even when
    it has no group to show."""
    from mqctl.render.table import Column, TableSpec, write_table

    cols = [
        Column("Group"),
        *(
            [Column("Clients", "right", kind="number"), Column("Version", optional=True, priority=1)]
            if live
            else []
        ),
        Column("Diff Total", "right", kind="number"),
        Column("Max Lag Time", "right", kind="number"),
        *([Column("TPS", "right", kind="number", optional=True, priority=2)] if live else []),
        Column("Topics", kind="text", optional=True),
        Column("Brokers", kind="text", optional=True),
    ]
    rows = [_group_row(g, live) for g in groups]
    styles = [lag_style(g.diff_total, g.max_lag_ms) for g in groups]
    write_table(
        TableSpec(
            cols,
            rows,
            title="consumer groups",
            footer_lines=_groups_footer(groups, sort, live),
            row_styles=styles,
            legend=LEGEND if any(styles) else None,
        ),
        out,
    )


def _group_row(g: GroupSummary, live: bool) -> list:
    """One group's cells; a name marked ``*`` has no retry topic, ``(POP)`` is popped by a proxy,
    ``(broadcast)`` keeps its offsets on its clients."""
    from mqctl.model import FOUND_RETRY_TOPIC, version_name
    from mqctl.render.plain import format_duration_ms

    name = g.group if FOUND_RETRY_TOPIC in g.found_in else f"{g.group} *"
    name += " (POP)" if g.consume_type == "CONSUME_POP" else ""
    name += " (broadcast)" if g.offsets_on_clients else ""
    lag_time = UNKNOWN if g.time_unknown else format_duration_ms(g.max_lag_ms) if g.max_lag_ms else "-"
    version = version_name(g.version) if g.version is not None else "-"
    return [
        name,
        *([g.clients, version] if live else []),
        bcg.ON_CLIENTS if bcg.unknown(g) else g.diff_total,
        bcg.ON_CLIENTS if bcg.unknown(g) else lag_time,
        *([f"{g.tps or 0.0:.2f}"] if live else []),
        ", ".join(g.topics),
        ", ".join(g.brokers),
    ]


def _groups_footer(groups: list[GroupSummary], sort: str, live: bool) -> list[str]:
    """The total, the order, and what the marks and missing columns mean."""
    from mqctl.model import FOUND_RETRY_TOPIC

    total = sum(g.diff_total for g in groups)
    order = {"lag": "largest lag first", "name": "by name", "mqadmin": "in mqadmin's order"}[sort]
    footer = [f"\n{len(groups)} group(s), diff total {total} ({order}; --sort lag|name|mqadmin)"]
    if any(FOUND_RETRY_TOPIC not in g.found_in for g in groups):
        footer.append(
            "* no %RETRY% topic (found in the offset or subscription-group tables): mqadmin and -o plain "
            "do not list it"
        )
    if any(g.offsets_on_clients for g in groups):
        footer.append(bcg.FOOTER)
    if any(g.consume_type == "CONSUME_POP" for g in groups):
        footer.append("(POP): gRPC consumers through a proxy, popping: Diff = messages not popped yet")
    if not live:
        footer.append(
            "[dim]Clients, version, type, model and TPS need a live cluster; a store cannot know them.[/dim]"
        )
    return footer


def views(
    groups: list[GroupSummary], ordered: list[GroupSummary], sort: str, kind: str, *, headers: bool
) -> Views:
    """The overview in each format: plain in mqadmin's order always, the others in ``ordered``
    (``--sort``'s order)."""
    return Views(
        plain=lambda o: groups_plain(groups, o, headers=headers),
        table=lambda o: groups_table(ordered, o, sort, live=not BackendKind(kind).reads_files),
        json_doc=lambda: groups_json(ordered, kind),
        csv=lambda: (GROUP_CSV_COLUMNS, groups_csv_rows(ordered)),
    )
