"""Samples of a consumer group over time, taken on ONE backend kept across samples.

A live backend keeps its connections, its routes (re-asked after ``ROUTE_TTL_S``, as the Java
client polls the name server every 30 s) and gets a fresh deadline per sample; a store backend
re-reads its files. Between samples the sampler keeps what cannot change: the store time of the
message at a queue position (a lagging queue that did not move costs no request) and the stuck
message already looked up for a (queue, committed offset).

Each sample goes to a *sink*, a callable that draws it (the --watch table, a JSON line) or sends
it on; ``run`` then appends it to the --history file and applies the --max-status gate, so a
sink only ever draws.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from mqctl.errors import MqctlError
from mqctl.records import field, record

if TYPE_CHECKING:
    from mqctl.backends.base import Backend
    from mqctl.model import (
        GroupProgress,
        MessageQueue,
        QueueOffset,
        QueuePoint,
        Rules,
        Sample,
        StuckMessage,
        WatchView,
    )

STORE_NOTE = (
    "on a store, committed offsets change only when the broker flushes consumerOffset.json (about every "
    "5 s) and consumers persist them about every 5 s: rates are coarse; an interval of 5 s or more reads better"
)


@record(frozen=True)
class Tick:
    """One sample as a sink receives it: the window judged, the stuck messages of its STUCK and
    STALL queues, the consumerProgress read it came from, and warnings not given before."""

    view: WatchView
    stuck: dict[MessageQueue, StuckMessage]
    progress: GroupProgress
    warnings: list[str] = field(default_factory=list)

    @property
    def each(self) -> list[Tick]:
        """The windows of this sample (one; a broadcasting group's tick has one per client)."""
        return [self]


class Sampled(Protocol):
    """What a sampler's ``take`` gives: a Tick, or one per client of a broadcasting group."""

    warnings: list[str]

    @property
    def each(self) -> list[Tick]: ...


class Sampler(Protocol):
    def take(self, now_ms: int | None = None) -> Sampled: ...


Sink = Callable[[Any], None]


class GroupWindow:
    """One group's samples over time and what they are judged to be: the window (three windows
    kept: a queue whose broker drops out keeps its window for a while, stale), the stuck message
    of each STUCK and STALL queue, looked up once per (queue, committed offset), and the
    warnings already given. Shared by ``GroupSampler`` (--watch) and the fleet sampler (the
    exporter), so a status is the same status in every output."""

    def __init__(
        self,
        backend: Backend,
        group: str,
        rules: Rules,
        *,
        retry_scan: int = 200,
        seed: Sequence[Sample] = (),
    ) -> None:
        self.backend, self.group, self.rules, self.retry_scan = backend, group, rules, retry_scan
        self.samples: deque[Sample] = deque(maxlen=rules.window * 3)
        # Each queue's window kept from sample to sample (what rules.queue_series would rebuild
        # from all the samples every time: the cost of a --watch on a thousand queues), and the
        # sample it was last seen in: a queue unseen for three windows is dropped, as
        # rules.evaluate over ``samples`` drops it.
        self.series: dict[MessageQueue, deque[tuple[int, QueuePoint]]] = {}
        self.seen: dict[MessageQueue, int] = {}
        self.n = 0
        self.stuck_cache: dict[tuple[MessageQueue, int], StuckMessage] = {}
        self._said: set[str] = set()
        from mqctl.ops.watch.pop import RetryReader

        self.pop_reader = RetryReader(retry_scan)  # a POP group's retry queues, each entry read once
        for s in seed:
            self._append(s)

    def _append(self, sample: Sample) -> None:
        self.samples.append(sample)
        self.n += 1
        window = self.rules.window
        for p in sample.points:
            pts = self.series.get(p.queue)
            if pts is None:
                pts = self.series[p.queue] = deque(maxlen=window)
            pts.append((sample.at_ms, p))
            self.seen[p.queue] = self.n
        if len(self.seen) > len(sample.points):
            horizon = self.n - window * 3
            for q in [q for q, n in self.seen.items() if n <= horizon]:
                del self.seen[q], self.series[q]

    def add(self, sample: Sample, notes: list[str]) -> tuple[WatchView, dict[MessageQueue, StuckMessage]]:
        """Append ``sample``, judge the window, look up the stuck messages (problems go to ``notes``)."""
        from mqctl.ops.watch import rules

        if self.rules.window < 2:
            raise ValueError("a window needs at least two samples")
        self._append(sample)
        recent = [s.at_ms for s in list(self.samples)[-self.rules.window :]]
        view = rules.judge(sample, self.series, self.rules, recent)
        return view, self._stuck(view, notes)

    def _stuck(self, view: WatchView, notes: list[str]) -> dict[MessageQueue, StuckMessage]:
        """The stuck message of each STUCK and STALL queue, looked up once per committed offset;
        entries of offsets that moved on are forgotten."""
        from mqctl.ops.watch import why

        out: dict[MessageQueue, StuckMessage] = {}
        for w in view.queues:
            if w.stale or w.status not in ("STUCK", "STALL"):
                continue
            key = (w.point.queue, w.point.consumer_offset)
            if key not in self.stuck_cache:
                try:
                    self.stuck_cache[key] = why.stuck_message(
                        self.backend,
                        self.group,
                        why.stat_from_point(w.point),
                        now_ms=view.sample.at_ms,
                        retry_scan=self.retry_scan,
                    )
                except MqctlError as e:
                    q = key[0]
                    notes.append(f"the stuck message of {q.topic}/{q.broker_name}/{q.queue_id}: {e.message}")
                    continue
            out[w.point.queue] = self.stuck_cache[key]
        if len(self.stuck_cache) > len(out):
            self.stuck_cache = {(q, m.committed): m for q, m in out.items()}
        return out

    def once(self, lines: Iterable[str]) -> list[str]:
        """Each warning once, not once per sample."""
        fresh = [line for line in dict.fromkeys(lines) if line not in self._said]
        self._said.update(fresh)
        return fresh


class Outages:
    """Brokers that stop answering, said when they stop (with why) and again when they answer,
    not once per sample: a sample or round names its missing brokers, these lines say the
    change. ``consequence``: what a missing broker's queues become meanwhile."""

    def __init__(self, consequence: str) -> None:
        self.consequence = consequence
        self.down: dict[str, str] = {}  # broker -> why, as last said

    def lines(self, down: Mapping[str, str]) -> list[str]:
        said = [
            f"broker {b} did not answer: {why}; {self.consequence}"
            for b, why in sorted(down.items())
            if self.down.get(b) != why
        ]
        said += [f"broker {b} answers again" for b in sorted(self.down) if b not in down]
        self.down = dict(down)
        return said


class GroupSampler:
    """Takes samples of ``group`` (and ``topic``) on ``backend``, which it refreshes before each
    one. ``seed``: earlier samples (a --history file's) that start the window."""

    def __init__(
        self,
        backend: Backend,
        group: str,
        topic: str | None,
        rules: Rules,
        *,
        retry_scan: int = 200,
        seed: Sequence[Sample] = (),
    ) -> None:
        self.backend, self.group, self.topic, self.rules = backend, group, topic, rules
        self.window = GroupWindow(backend, group, rules, retry_scan=retry_scan, seed=seed)
        self.time_cache: dict[QueueOffset, int] = {}
        self._first = True
        self.outages = Outages("its queues keep their last values and status (stale) until it answers")

    @property
    def samples(self) -> deque[Sample]:
        return self.window.samples

    def take(self, now_ms: int | None = None) -> Tick:
        from mqctl.ops import progress

        if not self._first:
            self.backend.refresh()
        result = progress.group_progress(
            self.backend, self.group, self.topic, now_ms=now_ms, time_cache=self.time_cache
        )
        return self.judge(result)

    def judge(self, result: GroupProgress, client: str | None = None) -> Tick:
        """One read into the window, judged: this sampler's own (``take``) or, for a broadcasting
        group, one client's rows from a read of all its clients (``client``: its label)."""
        from mqctl.ops.watch import rules
        from mqctl.records import replace

        sample = rules.sample_from_progress(result, self.backend.kind, self.topic)
        if client is not None:  # a client's file holds no pull offsets
            sample = replace(
                sample, client=client, points=tuple(replace(p, pull_offset=None) for p in sample.points)
            )
        notes: list[str] = []
        view, stuck = self.window.add(sample, notes)
        if result.pop is not None:  # a POP group: STUCK shows in its POP retry topic
            from mqctl.ops.watch.pop import mark_stuck

            view = mark_stuck(self.backend, result, view, stuck, self.window.pop_reader, notes)
        if self._first and self.backend.kind.reads_files and client is None:
            notes.insert(0, STORE_NOTE)
        self._first = False
        said = self.window.once([*result.warnings, *notes])
        if client is None:  # a broadcasting group's clients: one read of the brokers for all
            said[:0] = self.outages.lines({f.broker_name: f.message for f in result.failures})
        return Tick(view, stuck, result, said)


def ticks(interval_s: float, samples: int | None = None, now_ms: int | None = None) -> Iterator[int | None]:
    """Sample times: None (the clock) every ``interval_s`` seconds, or with ``now_ms`` a fake
    clock stepping by the interval; ``samples`` ends it. A sample slower than the interval
    starts the next one at once."""
    n, next_at = 0, time.monotonic()
    while samples is None or n < samples:
        delay = next_at - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        next_at = max(next_at + interval_s, time.monotonic())
        yield None if now_ms is None else now_ms + round(n * interval_s * 1000)
        n += 1


def run(
    sampler: Sampler,
    times: Iterable[int | None],
    sink: Sink,
    *,
    history: Path | None = None,
    max_status: str | None = None,
) -> None:
    """Sample at each of ``times``: the sink draws the tick, then the sample is appended to
    ``history`` and the ``max_status`` gate applied (CheckFailedError after the sink drew it)."""
    from mqctl.ops.watch import codec, rules
    from mqctl.ops.watch.history import append_line

    for t in times:
        tick = sampler.take(t)
        sink(tick)
        if history is not None:
            for one in tick.each:
                append_line(history, codec.sample_line(one.view, one.stuck))
        for one in tick.each:
            rules.check_status(one.view, max_status)
