"""consumerProgress --watch: the sampling loop, a live table on a terminal, JSON lines on a pipe.

Imported only when --watch runs (rich's Live is loaded here, never for --help).
"""

from __future__ import annotations

import sys
import time
from collections import deque
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mqctl.cli.errors import warn
from mqctl.cli.options import OutputFormat
from mqctl.cli.progress_watch import WatchFlags, gate, interval_s, max_status, rules_of

if TYPE_CHECKING:
    from mqctl.backends.base import Backend
    from mqctl.backends.open import BackendOptions
    from mqctl.model import BackendTarget, MessageQueue, QueueOffset, Sample, StuckMessage, WatchView

STORE_NOTE = (
    "on a store, committed offsets change only when the broker flushes consumerOffset.json (about every "
    "5 s) and consumers persist them about every 5 s: rates are coarse; an interval of 5 s or more reads better"
)


class Sampler:
    """Takes samples: one group_progress call each, on a backend opened for that sample (a store's
    files are read once per open; live, --timeout bounds each sample as it bounds one command).
    Keeps the window's samples and the stuck messages already looked up (each queue and
    committed offset once)."""

    def __init__(
        self, f: WatchFlags, group: str, topic: str | None, target: BackendTarget, options: BackendOptions
    ) -> None:
        self.f, self.group, self.topic, self.target, self.options = f, group, topic, target, options
        self.rules = rules_of(f)
        # Three windows: a queue whose broker drops out keeps its window for a while (stale).
        self.samples: deque[Sample] = deque(maxlen=self.rules.window * 3)
        self.stuck_cache: dict[tuple[MessageQueue, int], StuckMessage] = {}
        # Store times by queue position: a lagging queue that did not move costs no request.
        self.time_cache: dict[QueueOffset, int] = {}
        self.warned: set[str] = set()
        self.history: Path | None = None

    def take(self, now_ms: int | None) -> tuple[WatchView, dict[MessageQueue, StuckMessage]]:
        from mqctl.backends.open import open_backend
        from mqctl.ops import progress, watch, watch_history

        with open_backend(self.target, self.options) as backend:
            if self.f.history is not None and self.history is None:
                self.history = watch_history.check_history_path(self.f.history, backend.protected_paths())
            result = progress.group_progress(
                backend, self.group, self.topic, now_ms=now_ms, time_cache=self.time_cache
            )
            self.samples.append(watch.sample_from_progress(result, backend.kind, self.topic))
            view = watch.evaluate(self.samples, self.rules)
            stuck = self._stuck(backend, view)
        self.warn(result.warnings)
        return view, stuck

    def _stuck(self, backend: Backend, view: WatchView) -> dict[MessageQueue, StuckMessage]:
        """The stuck message of each STUCK and STALL queue, looked up once per committed offset."""
        from mqctl.errors import MqctlError
        from mqctl.ops import why

        out: dict[MessageQueue, StuckMessage] = {}
        for w in view.queues:
            if w.stale or w.status not in ("STUCK", "STALL"):
                continue
            key = (w.point.queue, w.point.consumer_offset)
            if key not in self.stuck_cache:
                try:
                    self.stuck_cache[key] = why.stuck_message(
                        backend,
                        self.group,
                        why.stat_from_point(w.point),
                        now_ms=view.sample.at_ms,
                        retry_scan=self.f.retry_scan,
                    )
                except MqctlError as e:
                    q = key[0]
                    self.warn([f"the stuck message of {q.topic}/{q.broker_name}/{q.queue_id}: {e.message}"])
                    continue
            out[w.point.queue] = self.stuck_cache[key]
        return out

    def warn(self, lines: Sequence[str]) -> None:
        """Each warning once, not once per sample."""
        for line in lines:
            if line not in self.warned:
                self.warned.add(line)
                warn(line)

    def append_history(self, line: str) -> None:
        if self.history is not None:
            from mqctl.ops.watch_history import append_line

            append_line(self.history, line)


def ticks(interval: float, samples: int | None, now_ms: int | None) -> Iterator[int | None]:
    """Sample times: None (the clock) every ``interval`` seconds, or with --now-ms a fake clock
    stepping by the interval. A sample slower than the interval starts the next one at once."""
    n, next_at = 0, time.monotonic()
    while samples is None or n < samples:
        delay = next_at - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        next_at = max(next_at + interval, time.monotonic())
        yield None if now_ms is None else now_ms + round(n * interval * 1000)
        n += 1


def watch(
    f: WatchFlags,
    group: str,
    topic: str | None,
    fmt: OutputFormat,
    target: BackendTarget,
    options: BackendOptions,
    now_ms: int | None,
) -> None:
    assert f.watch is not None
    interval = interval_s(f.watch)
    limit = max_status(f)
    if target.kind.reads_files:
        warn(STORE_NOTE)
    sampler = Sampler(f, group, topic, target, options)
    if f.history is not None:
        from mqctl.ops.watch_history import read_history

        seed, warnings = read_history(Path(f.history).expanduser(), group, topic, sampler.rules.window * 3)
        sampler.samples.extend(seed)
        sampler.warn(warnings)
    times = ticks(interval, f.samples, now_ms)
    if fmt is OutputFormat.table and sys.stdout.isatty():
        _live(sampler, times, limit, group)
    else:
        _pipe(sampler, times, limit, fmt)


def _pipe(sampler: Sampler, times: Iterator[int | None], limit: str | None, fmt: OutputFormat) -> None:
    from mqctl.render import watch as render

    for t in times:
        view, stuck = sampler.take(t)
        line = render.sample_line(view, stuck)
        if fmt is OutputFormat.json:
            sys.stdout.write(line + "\n")
        else:
            render.write_view(view, sys.stdout, stuck)
            sys.stdout.write("\n")
        sys.stdout.flush()
        sampler.append_history(line)
        gate(view, limit)


def _live(sampler: Sampler, times: Iterator[int | None], limit: str | None, group: str) -> None:
    """rich's Live redraws the table in place (no alternate screen: the last table stays when
    it ends); Ctrl-C stops it, restores the cursor, and the command exits 130."""
    from rich.console import Console
    from rich.live import Live
    from rich.text import Text

    from mqctl.render import watch as render

    console = Console(file=sys.stdout, highlight=False)
    waiting: Any = Text(f"consumerProgress {group}: first sample ...")
    with Live(waiting, console=console, auto_refresh=False, transient=False, redirect_stdout=False) as live:
        for t in times:
            view, stuck = sampler.take(t)
            live.update(render.live_renderable(view, console.width, stuck), refresh=True)
            sampler.append_history(render.sample_line(view, stuck))
            gate(view, limit)
