"""resetOffsetByTime --client-offsets: a broadcasting group's reset, written into its clients'
offsets.json (``ops.clientreset``), and its --undo. Parses nothing of its own: cli/reset.py hands
over the flags it parsed."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from mqctl.cli.blocks import opt
from mqctl.cli.errors import warn_all
from mqctl.cli.output import Output, OutputFormat, emit
from mqctl.errors import UsageError
from mqctl.records import record

if TYPE_CHECKING:
    from mqctl.cli.cluster import Cluster
    from mqctl.ops.resettarget import Scope

ClientOffsetsOpt = Annotated[
    list[Path] | None,
    opt(
        "--client-offsets",
        metavar="PATH",
        help="A broadcasting group: reset the offsets.json its clients keep (a client's file, its "
        "~/.rocketmq_offsets, or copies gathered as HOST/.rocketmq_offsets/...; repeat for several), "
        "each written as the client writes it, .bak first, only while that client is stopped (refused "
        "when it is connected, or its file was written within two persist intervals, or a process holds "
        "it). Copy the files back to their hosts if you reset copies.",
    ),
]
PersistIntervalOpt = Annotated[
    str | None,
    opt(
        "--persist-interval",
        metavar="DURATION",
        help="With --client-offsets: the clients' persistConsumerOffsetInterval (default 5s); a file written "
        "within two of them belongs to a running client.",
    ),
]


@record(frozen=True)
class ClientReset:
    """What cli/reset.py parsed, for a reset of client files."""

    group: str | None
    topic: str | None
    scope: Scope
    force: bool
    paths: list[Path] | None
    persist_interval: str | None
    execute: bool
    undo: str | None


def reset_clients(
    req: ClientReset, cluster: Cluster, out: Output, opener: Callable[..., Any], plan_files: tuple[Any, Any]
) -> None:
    """Plan (or the undo of a journal record), --execute it, draw it. ``opener(record, cluster,
    options)``: cli/reset.py's backend opener (an undo reopens the brokers its record names).
    ``plan_files``: --from-file and --export, which a reset of client files does not take."""
    from mqctl.ops.resetrun import ClientsReset, clients_source, run_clients

    if any(x is not None for x in plan_files):
        raise UsageError("--export and --from-file are for the brokers' offsets, not --client-offsets")
    if req.persist_interval is not None and not req.paths and req.undo is None:
        raise UsageError("--persist-interval needs --client-offsets PATH")
    record, persist_ms = clients_source(req.undo, req.group, req.topic, req.persist_interval)
    paths = req.paths or []
    run = ClientsReset(req.group, req.topic, req.scope, req.force, paths, persist_ms, req.execute, record)
    cplan, journal, warnings = run_clients(
        run, opener(record, cluster, cluster.options(ignore_abort_file=False))
    )
    warn_all(warnings)
    _render(cplan, journal, out.fmt, req.scope)


def _render(cplan: Any, journal: Any, fmt: OutputFormat, scope: Scope) -> None:
    from mqctl.ops.clientreset import csv_table, document
    from mqctl.render import Views
    from mqctl.render import clientreset as render

    status = render.status_line(cplan, journal)
    if fmt in (OutputFormat.plain, OutputFormat.csv):
        sys.stderr.write(status + "\n")
        sys.stderr.flush()
    if journal is None and fmt is not OutputFormat.table:
        warn_all(render.busy_lines(cplan))
    ts_text = scope.ts_text or cplan.target.text
    emit(
        fmt,
        Views(
            plain=lambda o: render.plain(cplan, o, ts_text, scope.ts_long),
            table=lambda o: render.table(cplan, o, status),
            json_doc=lambda: document(cplan, journal),
            csv=lambda: csv_table(cplan, journal),
        ),
    )
