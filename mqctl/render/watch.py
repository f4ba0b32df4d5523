"""consumerProgress over time as text: the watch table (live or printed) and the stuck message of
--why. Their JSON documents are ops/watch/codec.py's (the same format as the --history file)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, TextIO

from mqctl.render.plain import format_duration_ms, local_datetime, local_datetime_ms

if TYPE_CHECKING:
    from mqctl.model import MessageQueue, Rates, StoredMessage, StuckMessage, WatchView
    from mqctl.render.table import TableSpec

Stuck = Mapping["MessageQueue", "StuckMessage"]
Sink = Callable[[Any], None]  # takes a sampler's tick (ops.watch.sampler.Sampled)
Warn = Callable[[list[str]], None]

STYLES = {"WARN": "yellow", "REWIND": "magenta", "STOP": "red", "STALL": "red", "STUCK": "bold red"}


# --- the table -----------------------------------------------------------------------------


def _num(x: float | None) -> str:
    return "-" if x is None else f"{x:.1f}"


def drain_text(r: Rates) -> str:
    if r.drain == "draining" and r.drain_s is not None:
        return format_duration_ms(int(r.drain_s * 1000))
    return {"drained": "-", "never": "never"}.get(r.drain, "n/a")


def _summary(view: WatchView) -> str:
    counts = ", ".join(f"{n} {s}" for s, n in reversed(view.counts().items())) or "no queues"
    r = view.rates
    eta = {
        "drained": "no lag",
        "never": "never drains at these rates",
        "unknown": "time to drain not known yet",
    }
    drains = f"drains in {drain_text(r)}" if r.drain == "draining" else eta[r.drain]
    rates = (
        "rates after two samples"
        if r.consume is None
        else f"consume {_num(r.consume)}/s, produce {_num(r.produce)}/s"
    )
    return (
        f"\nGroup {_who(view)}: [{STYLES.get(view.status, 'green')}]{view.status}[/] ({counts}); "
        f"lag {view.lag}; {rates}; {drains}"
    )


def _who(view: WatchView) -> str:
    """The group, and the client of a broadcasting group's sample (its own offsets.json)."""
    s = view.sample
    return s.group + (f", client {s.client}" if s.client else "")


def stuck_lines(stuck: StuckMessage) -> list[str]:
    """The stuck message in a few lines (the table's footer, --why's text)."""
    q = stuck.queue
    head = f"{q.topic}/{q.broker_name}/{q.queue_id} committed {stuck.committed}"
    m = stuck.message
    if m is None:
        return [f"{head}: {stuck.note}"]
    lines = [f"{head}: the message at offset {stuck.offset}" + (f" ({stuck.note})" if stuck.note else "")]
    lines.append(f"  msgId {m.msg_id}" + (f"  uniqKey {m.unique_key}" if m.unique_key else ""))
    lines.append(f"  keys {m.keys or '-'}  tags {m.tags or '-'}  size {m.size} bytes")
    age = format_duration_ms(stuck.age_ms or 0)
    lines.append(f"  stored {local_datetime_ms(m.store_timestamp)} ({age} ago)  born host {m.born_host}")
    lines.append(f"  reconsume times {m.reconsume_times}")
    lines.append("  " + _retry_line(stuck))
    return lines


def _retry_line(stuck: StuckMessage) -> str:
    if stuck.retry_note and not stuck.retry_scanned:
        return f"retry topic: {stuck.retry_note}"
    looked = f"looked at the last {stuck.retry_entries} entries of {len(stuck.retry_scanned)} queue(s) of {stuck.retry_topic}"
    if not stuck.retry_copies:
        return f"no copy in the retry topic ({looked})"
    newest = stuck.retry_copies[0]
    return (
        f"{len(stuck.retry_copies)} copy(ies) in {stuck.retry_topic}, the newest {_where(newest)} stored "
        f"{local_datetime(newest.store_timestamp)}, reconsume times {newest.reconsume_times} ({looked})"
    )


def _where(m: StoredMessage) -> str:
    return f"{m.queue.broker_name}:{m.queue.queue_id}@{m.queue_offset}"


def table_spec(view: WatchView, stuck: Stuck | None = None, *, live: bool = False) -> TableSpec:
    from mqctl.render.table import Column, TableSpec

    pulls = any(w.point.pull_offset is not None for w in view.queues)
    # Narrow terminals drop the offsets before the rates: watching is about how the lag moves.
    cols = [
        Column("Topic"),
        Column("Broker"),
        Column("QID", "right", kind="number"),
        Column("Broker Offset", "right", kind="number", optional=True, priority=2),
        Column("Consumer Offset", "right", kind="number", optional=True, priority=3),
        Column("Diff", "right", kind="number"),
        *([Column("Inflight", "right", kind="number", optional=True, priority=1)] if pulls else []),
        Column("Consume/s", "right", kind="number", optional=True, priority=4),
        Column("Produce/s", "right", kind="number", optional=True, priority=4),
        Column("Drain", "right", kind="number"),
        Column("Status"),
        Column("Why", kind="text", optional=True),
    ]
    rows, styles = [], []
    for w in view.queues:
        p = w.point
        rows.append(
            [
                p.queue.topic,
                p.queue.broker_name,
                p.queue.queue_id,
                p.broker_offset,
                p.consumer_offset,
                p.lag,
                *([p.inflight if p.pull_offset is not None else "-"] if pulls else []),
                _num(w.rates.consume),
                _num(w.rates.produce),
                drain_text(w.rates),
                w.status + (" (stale)" if w.stale else ""),
                w.reason,
            ]
        )
        styles.append("dim" if w.stale else STYLES.get(w.status))
    return TableSpec(
        cols, rows, title=_title(view), footer_lines=_footer(view, stuck, live), row_styles=styles
    )


def _title(view: WatchView) -> str:
    s = view.sample
    span = format_duration_ms(view.span_ms) if view.span_ms else "0s"
    topic = f" -t {s.topic}" if s.topic else ""
    return (
        f"consumerProgress {_who(view)}{topic} at {local_datetime(s.at_ms)}, window {view.samples} of "
        f"{view.window} samples ({span}), {s.backend}"
    )


def _footer(view: WatchView, stuck: Stuck | None, live: bool) -> list[str]:
    lines = [_summary(view)]
    if view.incomplete:
        lines.append(
            f"[red]incomplete: {', '.join(view.sample.missing_brokers)} did not answer; "
            "its queues keep their last values and status (stale)[/red]"
        )
    for sm in (stuck or {}).values():
        lines += ["", *(_escape(line) for line in stuck_lines(sm))]
    if live:
        lines.append("[dim]Ctrl-C to stop. Statuses: consumerProgress --help.[/dim]")
    return lines


def _escape(text: str) -> str:
    return text.replace("[", "\\[")


def write_view(view: WatchView, out: TextIO, stuck: Stuck | None = None) -> None:
    """The table once (a pipe with -o table, --status-from)."""
    from mqctl.render.table import write_table

    write_table(table_spec(view, stuck), out)


def live_renderable(view: WatchView, width: int, stuck: Stuck | None = None) -> Any:
    """The table as a rich renderable for rich's Live, fitted to ``width`` columns by the rule
    every table follows (render.table: nothing is cut, dropped columns are named)."""
    from rich.console import Group

    from mqctl.render.table import renderables

    return Group(*renderables(table_spec(view, stuck, live=True), width, colour=True, soft=False))


def why_text(stuck: StuckMessage, out: TextIO) -> None:
    out.write("\n".join(stuck_lines(stuck)) + "\n")


# --- --watch: the sinks a sampler's ticks are drawn by -----------------------------------------


def can_redraw(out: TextIO) -> bool:
    """A terminal that moves the cursor: rich's Live on TERM=dumb shows nothing until it stops."""
    from rich.console import Console

    return not Console(file=out).is_dumb_terminal


def pipe_sink(out: TextIO, warn: Warn, line: Callable[..., str] | None) -> Sink:
    """Each tick's views one after the other: ``line(view, stuck)`` each (JSON lines), or the
    table each (``line`` None); one per client of a broadcasting group."""

    def sink(tick: Any) -> None:
        warn(tick.warnings)
        for one in tick.each:
            if line is not None:
                out.write(line(one.view, one.stuck) + "\n")
            else:
                write_view(one.view, out, one.stuck)
                out.write("\n")
        out.flush()

    return sink


@contextmanager
def live(group: str, out: TextIO, warn: Warn) -> Iterator[Sink]:
    """rich's Live redraws the table in place (no alternate screen: the last table stays when
    it ends); Ctrl-C stops it and restores the cursor."""
    from rich.console import Console, Group
    from rich.live import Live
    from rich.text import Text

    console = Console(file=out, highlight=False)
    waiting: Any = Text(f"consumerProgress {group}: first sample ...")
    with Live(waiting, console=console, auto_refresh=False, transient=False, redirect_stdout=False) as shown:

        def sink(tick: Any) -> None:
            warn(tick.warnings)
            views = [live_renderable(one.view, console.width, one.stuck) for one in tick.each]
            shown.update(views[0] if len(views) == 1 else Group(*views), refresh=True)

        yield sink
