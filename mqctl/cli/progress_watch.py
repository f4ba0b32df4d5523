"""consumerProgress over time: --watch, --history, --status-from, --max-status and --why.

The flags (one block, defined here), their combination checks, and the drawing of the three modes
they select, each one ``ops.watch.modes`` entry point: --watch (``modes.watch`` on one kept
backend, run by ``ops.watch.sampler.run``; a live table on a terminal, JSON lines on a pipe),
--status-from (``modes.status_from``) and --why (``modes.why``). The one-shot read with --history
is ``ops.progressrun``'s.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from mqctl.cli.blocks import Flag, block, opt
from mqctl.cli.command import given
from mqctl.cli.errors import warn, warn_all
from mqctl.cli.output import Output, OutputFormat
from mqctl.errors import UsageError
from mqctl.records import record

if TYPE_CHECKING:
    from mqctl.cli.cluster import Cluster
    from mqctl.model import Rules

DEFAULT_INTERVAL = "2"
STATUS_NAMES = "OK|WARN|REWIND|STOP|STALL|STUCK"

WatchOpt = Annotated[
    str | None,
    opt(
        "--watch",
        "-w",
        metavar="[SECONDS]",
        help="With -g: sample every SECONDS (default 2, at least 0.1; '-w 5', '--watch=500ms') until "
        "Ctrl-C (exit 130). A terminal gets a live table; a pipe one JSON line per sample (schema "
        "mqctl/consumerProgress.sample/v1). Per queue and group: diff, consume and produce rates "
        "(messages/s over the window), time to drain, status.",
    ),
]
WindowOpt = Annotated[
    int,
    typer.Option(
        "--window",
        metavar="N",
        help="With --watch, --history or --status-from: statuses and rates over each queue's last N "
        "samples (>= 2). STALL, STOP and STUCK also need the window to span 10 s or more (consumers and "
        "brokers persist offsets every 5 s).",
    ),
]
MaxStatusOpt = Annotated[
    str | None,
    opt(
        "--max-status",
        metavar=STATUS_NAMES,
        help="Exit 10 after printing when a queue's status is worse than this one. Severity: OK < WARN < "
        "REWIND < STOP < STALL < STUCK. Rules, first match wins, over a queue's window (c committed, "
        "b broker, p pull offset, lag = b - c): one sample: OK; c went down: REWIND; lag 0 at some "
        "sample: OK; c unchanged for >= 10 s: STUCK if p advanced (the consumer pulls on while one "
        "message pins c; live only), else STALL if b advanced, else STOP; lag grew from the first "
        "sample to the last: WARN; else OK. A broker missing from a sample keeps its queues' last status "
        "(stale, the sample marked incomplete). With --watch: checked after each sample.",
    ),
]
WhyOpt = Annotated[
    str | None,
    opt(
        "--why",
        metavar="BROKER:QID|TOPIC/BROKER/QID",
        help="With -g: the message at the queue's committed offset (id, keys, tags, store time and age, "
        "born host, reconsume times, size) and its copies in %RETRY%<group> (the newest --retry-scan "
        "entries of each retry queue are read). --watch shows it for STUCK and STALL queues.",
    ),
]
HistoryOpt = Annotated[
    str | None,
    opt(
        "--history",
        metavar="PATH",
        help="Append each sample to PATH as a JSON line (the pipe schema); the file's last samples of the "
        "group start the window, so a run from cron (one sample per run, no --watch) gets statuses and "
        "rates, and --max-status works per run.",
    ),
]
StatusFromOpt = Annotated[
    str | None,
    opt(
        "--status-from",
        metavar="PATH",
        help="With -g: statuses and rates from a --history file's last window, without reading the "
        "cluster. A corrupt file is exit 6, another kind of file or no samples of the group exit 2.",
    ),
]
RetryScanOpt = Annotated[
    int,
    typer.Option(
        "--retry-scan", metavar="N", help="With --why (or --watch): retry-queue entries to read, per queue."
    ),
]
SamplesOpt = Annotated[int | None, typer.Option("--samples", hidden=True)]


@record(frozen=True)
class WatchFlags:
    watch: str | None = None
    window: int = 10
    max_status: str | None = None
    why: str | None = None
    history: str | None = None
    status_from: str | None = None
    retry_scan: int = 200
    samples: int | None = None

    @property
    def takes_over(self) -> bool:
        """This module runs the command (else the one-shot read runs, maybe with --history)."""
        return bool(self.watch is not None or self.why or self.status_from)

    @property
    def any(self) -> bool:
        return self.takes_over or self.history is not None or self.max_status is not None


def fill_watch_value(args: Sequence[str], value_options: set[str]) -> list[str]:
    """``-w``/``--watch`` without a value gets the default interval, so the option can take an
    optional value (click cannot): consumerProgress's tokens are walked, skipping the values of
    options that take one."""
    out = list(args)
    i = next((n for n, a in enumerate(out) if not a.startswith("-")), None)
    if i is None or out[i].lower() != "consumerprogress":
        return out
    i += 1
    while i < len(out):
        a = out[i]
        if a == "--":
            break
        if a in value_options:
            i += 2
            continue
        if a in ("-w", "--watch") and (i + 1 == len(out) or _an_option(out[i + 1])):
            out.insert(i + 1, DEFAULT_INTERVAL)
            i += 1
        i += 1
    return out


def _an_option(token: str) -> bool:
    """A token after -w that is the next option, not -w's value: '-w -1' and '-w -.5' are negative
    intervals (refused as such), not options named -1 or -."""
    return token.startswith("-") and not (token[1:2].isdecimal() or token[1:2] == ".")


def check_flags(f: WatchFlags, group: str | None, *, tags: bool, client_ip: bool, gates: bool) -> None:
    if f.any and not group:
        raise UsageError("--watch, --why, --history, --status-from and --max-status need -g/--groupName")
    picked = [
        n
        for n, v in (("--watch", f.watch), ("--why", f.why), ("--status-from", f.status_from))
        if v is not None
    ]
    if len(picked) > 1:
        raise UsageError(f"{' and '.join(picked)} cannot be combined: give one")
    if f.takes_over and (tags or client_ip or gates):
        raise UsageError(
            f"--tags, -s true, --max-lag and --max-lag-time belong to the one-shot read, not to {picked[0]}",
            "use --max-status with --watch and --status-from",
        )
    if f.history is not None and (f.why or f.status_from):
        raise UsageError("--history records samples: use it alone or with --watch")
    if f.max_status is not None and not (f.watch is not None or f.history or f.status_from):
        raise UsageError("--max-status needs a window: --watch, --history PATH or --status-from PATH")
    if f.window < 2:
        raise UsageError(f"--window {f.window}: a window needs at least 2 samples")
    if f.retry_scan < 0:
        raise UsageError(f"--retry-scan {f.retry_scan}: must be >= 0")
    if f.samples is not None and f.samples < 1:
        raise UsageError(f"--samples {f.samples}: must be >= 1")
    if f.max_status is not None:
        max_status(f)


def check_idle(f: WatchFlags) -> None:
    """--window and --retry-scan given where they change nothing: a script's typo for the mode
    that uses them, said instead of ignored."""
    if given("window") and not (f.watch is not None or f.history is not None or f.status_from):
        raise UsageError(
            "--window needs --watch, --history PATH or --status-from PATH: their statuses span it"
        )
    if given("retry_scan") and not (f.why or f.watch is not None):
        raise UsageError(
            "--retry-scan needs --why, or --watch (which looks up STUCK and STALL queues the same way)"
        )


def max_status(f: WatchFlags) -> str | None:
    if f.max_status is None:
        return None  # every one-shot read asks: no import of the over-time modes for it
    from mqctl.ops.watch.modes import max_status as parse

    return parse(f.max_status)


def rules_of(f: WatchFlags) -> Rules:
    from mqctl.model import Rules

    return Rules(window=f.window)


watch_options = block(
    "over_time",
    [
        Flag("watch", WatchOpt),
        Flag("window", WindowOpt, 10),
        Flag("max_status", MaxStatusOpt),
        Flag("why", WhyOpt),
        Flag("history", HistoryOpt),
        Flag("status_from", StatusFromOpt),
        Flag("retry_scan", RetryScanOpt, 200),
        Flag("samples", SamplesOpt),
    ],
    WatchFlags,
)


def _format(output: Output, what: str) -> OutputFormat:
    """Table on a terminal, JSON lines on a pipe; plain and csv have no place for statuses."""
    if output.requested in (OutputFormat.plain, OutputFormat.csv):
        raise UsageError(f"{what} prints a table or JSON lines: -o table or -o json")
    if output.requested is not None:
        return output.requested
    return OutputFormat.table if sys.stdout.isatty() else OutputFormat.json


# --- --status-from -------------------------------------------------------------------------------


def run(
    f: WatchFlags,
    group: str,
    topic: str | None,
    output: Output,
    cluster: Cluster,
    now_ms: int | None,
    bcast: Any,
) -> None:
    """The mode the over-time flags take the command over with: --status-from, --watch (per client
    with ``bcast``'s --client-offsets) or --why."""
    if f.status_from:
        return status_from(f, group, topic, output)
    if f.watch is not None:
        files, stale = bcast.client_offsets or [], bcast.stale_after_ms
        return watch(f, group, topic, output, cluster, now_ms, files, stale)
    return why(f, group, topic, output, cluster, now_ms)


def status_from(f: WatchFlags, group: str, topic: str | None, output: Output) -> None:
    from mqctl.ops.watch import codec, modes, rules
    from mqctl.render import watch as render

    fmt = _format(output, "--status-from")
    assert f.status_from is not None
    view, warnings = modes.status_from(f.status_from, group, topic, rules_of(f))
    warn_all(warnings)
    if fmt is OutputFormat.json:
        sys.stdout.write(codec.sample_line(view) + "\n")
    else:
        render.write_view(view, sys.stdout)
    sys.stdout.flush()
    rules.check_status(view, max_status(f))


# --- --why -----------------------------------------------------------------------------------------


def why(
    f: WatchFlags, group: str, topic: str | None, output: Output, cluster: Cluster, now_ms: int | None
) -> None:
    from mqctl.ops.watch import codec, modes
    from mqctl.render import watch as render

    assert f.why is not None
    ref = modes.queue_ref(f.why, topic)
    stuck, warnings = modes.why(cluster.open(), group, ref, now_ms=now_ms, retry_scan=f.retry_scan)
    warn_all(warnings)
    if output.requested is OutputFormat.json:
        from mqctl.render.jsonout import write_json

        write_json(codec.why_doc(stuck), sys.stdout)
    else:
        render.why_text(stuck, sys.stdout)
    sys.stdout.flush()


# --- --watch ---------------------------------------------------------------------------------------


def watch(
    f: WatchFlags,
    group: str,
    topic: str | None,
    output: Output,
    cluster: Cluster,
    now_ms: int | None,
    client_files: Sequence[Path] = (),
    stale_after_ms: int | None = None,
) -> None:
    """``client_files``: a broadcasting group's clients' offsets.json (--client-offsets): one
    window per client."""
    from contextlib import AbstractContextManager, nullcontext

    from mqctl.ops.watch import codec, modes
    from mqctl.ops.watch.sampler import run
    from mqctl.render import watch as render

    assert f.watch is not None
    interval, limit, fmt = modes.interval_s(f.watch), max_status(f), _format(output, "--watch")
    ticks, files = (interval, f.samples, now_ms), client_files
    with cluster.open() as backend:
        w = modes.watch(
            backend,
            group,
            topic,
            rules_of(f),
            history=f.history,
            ticks=ticks,
            retry_scan=f.retry_scan,
            client_files=files,
            stale_after_ms=stale_after_ms,
        )
        warn_all(w.warnings)
        if fmt is OutputFormat.table and sys.stdout.isatty() and _can_redraw():
            # a table redrawn in place; Ctrl-C stops it (exit 130)
            drawn: AbstractContextManager[Any] = render.live(group, sys.stdout, warn_all)
        else:  # one table or JSON line after the other
            line = codec.sample_line if fmt is OutputFormat.json else None
            drawn = nullcontext(render.pipe_sink(sys.stdout, warn_all, line))
        with drawn as sink:
            run(w.sampler, w.times, sink, history=w.history, max_status=limit)


def _can_redraw() -> bool:
    """A dumb terminal gets a new table per sample instead of one redrawn (and is told why)."""
    from mqctl.render.watch import can_redraw

    if not can_redraw(sys.stdout):
        warn("TERM is a dumb terminal that cannot redraw in place: a new table per sample")
        return False
    return True
