"""consumerProgress over time: --watch, --history, --status-from, --max-status and --why.

The command's own module (cli/progress.py) keeps mqadmin's one-shot read; this one adds the
sampling loop. Each sample is one ``ops.progress.group_progress`` call; a store is re-opened per
sample (its files are read once per open); a live cluster stays connected.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from mqctl.cli.errors import warn
from mqctl.cli.options import OutputFormat
from mqctl.errors import CheckFailedError, UsageError

if TYPE_CHECKING:
    from mqctl.backends.open import BackendOptions
    from mqctl.model import BackendTarget, GroupProgress, Rules, WatchView

DEFAULT_INTERVAL = "2"
STATUS_NAMES = "OK|WARN|REWIND|STOP|STALL|STUCK"

WatchOpt = Annotated[
    str | None,
    typer.Option(
        "--watch",
        "-w",
        metavar="[SECONDS]",
        help="With -g: sample every SECONDS (default 2; '-w 5', '--watch=500ms') until Ctrl-C (exit 130). "
        "A terminal gets a live table; a pipe one JSON line per sample (schema "
        "mqctl/consumerProgress.sample/v1). Per queue and group: diff, consume and produce rates "
        "(messages/s over the window), time to drain, status.",
        show_default=False,
    ),
]
WindowOpt = Annotated[
    int,
    typer.Option(
        "--window",
        metavar="N",
        help="Statuses and rates over each queue's last N samples (>= 2). STALL, STOP and STUCK also need "
        "the window to span 10 s or more (consumers and brokers persist offsets every 5 s).",
    ),
]
MaxStatusOpt = Annotated[
    str | None,
    typer.Option(
        "--max-status",
        metavar=STATUS_NAMES,
        help="Exit 10 after printing when a queue's status is worse than this one. Severity: OK < WARN < "
        "REWIND < STOP < STALL < STUCK. Rules, first match wins, over a queue's window (c committed, "
        "b broker, p pull offset, lag = b - c): one sample: OK; c went down: REWIND; lag 0 at some "
        "sample: OK; c unchanged for >= 10 s: STUCK if p advanced (the consumer pulls on while one "
        "message pins c; live only), else STALL if b advanced, else STOP; lag grew from the first "
        "sample to the last: WARN; else OK. A broker missing from a sample keeps its queues' last status "
        "(stale, the sample marked incomplete). With --watch: checked after each sample.",
        show_default=False,
    ),
]
WhyOpt = Annotated[
    str | None,
    typer.Option(
        "--why",
        metavar="BROKER:QID|TOPIC/BROKER/QID",
        help="With -g: the message at the queue's committed offset (id, keys, tags, store time and age, "
        "born host, reconsume times, size) and its copies in %RETRY%<group> (the newest --retry-scan "
        "entries of each retry queue are read). --watch shows it for STUCK and STALL queues.",
        show_default=False,
    ),
]
HistoryOpt = Annotated[
    str | None,
    typer.Option(
        "--history",
        metavar="PATH",
        help="Append each sample to PATH as a JSON line (the pipe schema); the file's last samples of the "
        "group start the window, so a run from cron (one sample per run, no --watch) gets statuses and "
        "rates, and --max-status works per run.",
        show_default=False,
    ),
]
StatusFromOpt = Annotated[
    str | None,
    typer.Option(
        "--status-from",
        metavar="PATH",
        help="With -g: statuses and rates from a --history file's last window, without reading the "
        "cluster. A corrupt file is exit 6, another kind of file or no samples of the group exit 2.",
        show_default=False,
    ),
]
RetryScanOpt = Annotated[
    int, typer.Option("--retry-scan", metavar="N", help="--why: retry-queue entries to read, per queue.")
]
SamplesOpt = Annotated[int | None, typer.Option("--samples", hidden=True)]


@dataclass(frozen=True)
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
        if a in ("-w", "--watch") and (i + 1 == len(out) or out[i + 1].startswith("-")):
            out.insert(i + 1, DEFAULT_INTERVAL)
            i += 1
        i += 1
    return out


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
    if f.retry_scan < 0 or (f.samples is not None and f.samples < 1):
        raise UsageError("--retry-scan must be >= 0 and --samples >= 1")
    if f.max_status is not None:
        max_status(f)


def max_status(f: WatchFlags) -> str | None:
    from mqctl.ops.watch import parse_status

    if f.max_status is None:
        return None
    try:
        return parse_status(f.max_status)
    except ValueError as e:
        raise UsageError(f"--max-status: {e}") from None


def interval_s(text: str) -> float:
    """--watch's value: seconds ('2', '0.5') or a duration ('500ms', '1m')."""
    try:
        secs = float(text)
    except ValueError:
        from mqctl.ops.timeparse import parse_duration_ms

        secs = parse_duration_ms(text) / 1000
    if not secs > 0 or secs > 86_400:
        raise UsageError(f"--watch {text}: expected a positive number of seconds (at most a day)")
    return secs


def rules_of(f: WatchFlags) -> Rules:
    from mqctl.model import Rules

    return Rules(window=f.window)


def gate(view: WatchView, limit: str | None) -> None:
    """--max-status: exit 10 when a queue is worse than ``limit`` (after the output)."""
    from mqctl.ops.watch import worse_than

    if limit is None or not worse_than(view.status, limit):
        return
    bad = [w for w in view.queues if worse_than(w.status, limit)]
    names = "; ".join(
        f"{w.point.queue.topic}/{w.point.queue.broker_name}/{w.point.queue.queue_id} {w.status}: {w.reason}"
        for w in bad[:3]
    )
    more = f" and {len(bad) - 3} more" if len(bad) > 3 else ""
    raise CheckFailedError(
        f"--max-status {limit} exceeded: group {view.sample.group} is {view.status} ({names}{more})"
    )


def _format(output: OutputFormat | None, what: str) -> OutputFormat:
    """Table on a terminal, JSON lines on a pipe; plain and csv have no place for statuses."""
    if output in (OutputFormat.plain, OutputFormat.csv):
        raise UsageError(f"{what} prints a table or JSON lines: -o table or -o json")
    if output is not None:
        return output
    return OutputFormat.table if sys.stdout.isatty() else OutputFormat.json


# --- one-shot read with --history (cron) ------------------------------------------------------


def record(
    f: WatchFlags, result: GroupProgress, kind: str, topic: str | None, protected: Sequence[Path]
) -> WatchView:
    """Append the one-shot read to --history, judged with the file's last window."""
    from mqctl.ops import watch, watch_history

    assert f.history is not None
    path = watch_history.check_history_path(f.history, protected)
    rules = rules_of(f)
    seed, warnings = watch_history.read_history(path, result.group, topic, rules.window * 3)
    for w in warnings:
        warn(w)
    view = watch.evaluate([*seed, watch.sample_from_progress(result, kind, topic)], rules)
    from mqctl.render.watch import sample_line

    watch_history.append_line(path, sample_line(view))
    return view


# --- --status-from and --why -----------------------------------------------------------------


def run(
    f: WatchFlags,
    group: str,
    topic: str | None,
    output: OutputFormat | None,
    target: Callable[[], BackendTarget],
    options: BackendOptions,
    now_ms: int | None,
) -> None:
    """The command when --watch, --why or --status-from was given. ``target`` gives the cluster
    (--status-from reads no cluster)."""
    if f.status_from:
        return _status_from(f, group, topic, output)
    if f.why:
        return _why(f, group, topic, output, target(), options, now_ms)
    from mqctl.cli.progress_live import watch

    assert f.watch is not None
    return watch(f, group, topic, _format(output, "--watch"), target(), options, now_ms)


def _status_from(f: WatchFlags, group: str, topic: str | None, output: OutputFormat | None) -> None:
    from mqctl.ops import watch, watch_history
    from mqctl.render import watch as render

    fmt = _format(output, "--status-from")
    rules = rules_of(f)
    assert f.status_from is not None
    path = Path(f.status_from).expanduser()
    samples, warnings = watch_history.read_history(path, group, topic, rules.window * 3, required=True)
    for w in warnings:
        warn(w)
    view = watch.evaluate(samples, rules)
    if fmt is OutputFormat.json:
        sys.stdout.write(render.sample_line(view) + "\n")
    else:
        render.write_view(view, sys.stdout)
    sys.stdout.flush()
    gate(view, max_status(f))


def _why(
    f: WatchFlags,
    group: str,
    topic: str | None,
    output: OutputFormat | None,
    target: BackendTarget,
    options: BackendOptions,
    now_ms: int | None,
) -> None:
    from mqctl.backends.open import open_backend
    from mqctl.ops import why as ops_why
    from mqctl.ops.watch import parse_queue_ref
    from mqctl.render import watch as render

    assert f.why is not None
    try:
        q_topic, broker, qid = parse_queue_ref(f.why)
    except ValueError as e:
        raise UsageError(f"--why: {e}") from None
    if q_topic and topic and q_topic != topic:
        raise UsageError(f"--why names topic {q_topic} but -t says {topic}")
    with open_backend(target, options) as backend:
        stuck = ops_why.explain(
            backend, group, (q_topic or topic, broker, qid), now_ms=now_ms, retry_scan=f.retry_scan
        )
        for w in backend.take_warnings():
            warn(str(w))
    if output is OutputFormat.json:
        from mqctl.render.jsonout import write_json

        write_json(render.why_doc(stuck), sys.stdout)
    else:
        render.why_text(stuck, sys.stdout)
    sys.stdout.flush()
