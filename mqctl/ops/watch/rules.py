"""Lag over time: samples in, statuses, rates and time to drain out. Pure functions over model
types (no I/O, no backend), so a window can be replayed in tests, re-read from a --history file,
or evaluated by a Spark job over a history dataset.

A queue's window is its last ``Rules.window`` points: the samples it appears in, ending at the
newest one it appears in. A broker that did not answer a sample leaves its queues out of that
sample, so they keep the status their last points give (marked stale) instead of a false STOP.

The rules, first match wins (c = committed offset, b = broker offset, p = pull offset, lag =
max(b - c, 0), first and last = the window's oldest and newest point):

1. fewer than two points: OK (a new queue has no history);
2. c went down between two consecutive points: REWIND (a reset backwards, a replay);
3. lag was 0 at some point of the window: OK (it caught up within the window);
4. c the same at every point and the window spans at least ``Rules.min_frozen_ms``:
   STUCK when p is known and p(last) > p(first) (the consumer keeps pulling: one message in its
   process queue pins the committed offset); else STALL when b(last) > b(first) (messages
   arrive, the group does not move); else STOP (nothing moves);
5. lag(last) > lag(first): WARN (lag grows across the window);
6. OK.

A group's status is its worst queue's (``STATUSES`` order).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from mqctl.model import (
    D_DRAINED,
    D_DRAINING,
    D_NEVER,
    D_UNKNOWN,
    S_OK,
    S_REWIND,
    S_STALL,
    S_STOP,
    S_STUCK,
    S_WARN,
    STATUSES,
    BackendKind,
    GroupProgress,
    MessageQueue,
    QueuePoint,
    QueueWatch,
    Rates,
    Rules,
    Sample,
    WatchView,
    severity,
)

# A queue's series: (sample time in ms, its point), oldest first.
Series = Sequence[tuple[int, QueuePoint]]


def sample_from_progress(
    progress: GroupProgress, backend: BackendKind | str, topic: str | None = None
) -> Sample:
    """One consumerProgress result as a sample. A store knows no pull offsets (None); live, the
    pull offset is the committed offset plus the inflight messages."""
    kind = BackendKind(backend)
    points = tuple(
        QueuePoint(
            queue=r.queue,
            broker_offset=r.broker_offset,
            consumer_offset=r.consumer_offset,
            pull_offset=r.consumer_offset + r.inflight if kind.knows_runtime else None,
            committed=r.committed,
            lag_ms=r.lag_ms,
            min_offset=r.min_offset,
        )
        for r in progress.rows
    )
    missing = tuple(dict.fromkeys(f.broker_name for f in progress.failures))
    return Sample(progress.group, progress.now_ms, points, missing, kind.value, topic)


def worst(statuses: Iterable[str]) -> str:
    """The most severe status (OK for none)."""
    return max(statuses, key=severity, default=S_OK)


def worse_than(status: str, limit: str) -> bool:
    """``--max-status``: is ``status`` more severe than ``limit``?"""
    return severity(status) > severity(limit)


def parse_status(text: str) -> str:
    """A status name, case-insensitive; ValueError naming the accepted ones."""
    up = text.strip().upper()
    if up not in STATUSES:
        raise ValueError(f"unknown status {text!r}: expected one of {', '.join(STATUSES)}")
    return up


def check_status(view: WatchView, limit: str | None) -> None:
    """``--max-status``: CheckFailedError (exit 10) when a queue is worse than ``limit``, naming
    the first three such queues and why."""
    if limit is None or not worse_than(view.status, limit):
        return
    from mqctl.errors import CheckFailedError

    bad = [w for w in view.queues if worse_than(w.status, limit)]
    names = "; ".join(
        f"{w.point.queue.topic}/{w.point.queue.broker_name}/{w.point.queue.queue_id} {w.status}: {w.reason}"
        for w in bad[:3]
    )
    more = f" and {len(bad) - 3} more" if len(bad) > 3 else ""
    who = view.sample.group + (f", client {view.sample.client}" if view.sample.client else "")
    raise CheckFailedError(f"--max-status {limit} exceeded: group {who} is {view.status} ({names}{more})")


def _span(series: Series) -> int:
    return series[-1][0] - series[0][0] if series else 0


def queue_status(series: Series, rules: Rules = Rules()) -> tuple[str, str]:
    """The status of one queue's window (at most ``rules.window`` points, oldest first) and why,
    in a few words. See the module's docstring for the rules."""
    pts = [p for _t, p in series]
    if len(pts) < 2:
        return S_OK, "new: one sample"
    for (_t0, a), (_t1, b) in zip(series, series[1:]):
        if b.consumer_offset < a.consumer_offset:
            return S_REWIND, f"committed went back {a.consumer_offset} -> {b.consumer_offset}"
    first, last = pts[0], pts[-1]
    if any(p.lag == 0 for p in pts):
        return S_OK, "caught up" if last.lag == 0 else "caught up within the window"
    span_s = _span(series) / 1000
    frozen = all(p.consumer_offset == first.consumer_offset for p in pts)
    if frozen and _span(series) >= rules.min_frozen_ms:
        c = first.consumer_offset
        pulls = first.pull_offset is not None and last.pull_offset is not None
        if pulls and last.pull_offset > first.pull_offset:  # type: ignore[operator]
            return S_STUCK, (
                f"committed {c} for {span_s:g}s while pulls went {first.pull_offset} -> {last.pull_offset}"
            )
        if last.broker_offset > first.broker_offset:
            return S_STALL, (
                f"committed {c} for {span_s:g}s while the broker went "
                f"{first.broker_offset} -> {last.broker_offset}"
            )
        return S_STOP, f"nothing moved for {span_s:g}s with {last.lag} unconsumed"
    if last.lag > first.lag:
        return S_WARN, f"lag grew {first.lag} -> {last.lag} in {span_s:g}s"
    return S_OK, f"lag {first.lag} -> {last.lag}"


def _since_last_drop(series: Series) -> Series:
    """The window's latest stretch without an offset going down (a rewind, a recreated queue):
    rates across a reset would be meaningless."""
    start = 0
    for i in range(1, len(series)):
        a, b = series[i - 1][1], series[i][1]
        if b.consumer_offset < a.consumer_offset or b.broker_offset < a.broker_offset:
            start = i
    return series[start:]


def drain(lag: int, consume: float | None, produce: float | None) -> tuple[str, float | None]:
    """Time to drain ``lag`` at these rates: (D_DRAINED, 0.0) without lag; (D_DRAINING, seconds)
    when the group gains (consume > produce); (D_NEVER, None) when it does not; (D_UNKNOWN, None)
    without rates."""
    if lag <= 0:
        return D_DRAINED, 0.0
    if consume is None or produce is None:
        return D_UNKNOWN, None
    if consume <= produce:
        return D_NEVER, None
    return D_DRAINING, lag / (consume - produce)


def queue_rates(series: Series) -> Rates:
    """Consume and produce rates (messages/s) from the committed- and broker-offset deltas over
    the window's latest stretch without a drop, and the time to drain the newest lag."""
    lag = series[-1][1].lag if series else 0
    part = _since_last_drop(series)
    span = _span(part)
    if len(part) < 2 or span <= 0:
        state, secs = drain(lag, None, None)
        return Rates(None, None, state, secs)
    first, last = part[0][1], part[-1][1]
    consume = (last.consumer_offset - first.consumer_offset) * 1000 / span
    produce = (last.broker_offset - first.broker_offset) * 1000 / span
    state, secs = drain(lag, consume, produce)
    return Rates(consume, produce, state, secs)


def group_rates(queues: Sequence[QueueWatch]) -> Rates:
    """Sums of the queues' rates; the group drains when its last queue does: never if a lagging
    queue never drains, unknown if one has no rates yet, else the longest queue's time."""
    known = [q.rates for q in queues if q.rates.consume is not None]
    consume = sum(r.consume or 0.0 for r in known) if known else None
    produce = sum(r.produce or 0.0 for r in known) if known else None
    lagging = [q.rates for q in queues if q.point.lag > 0]
    if not lagging:
        return Rates(consume, produce, D_DRAINED, 0.0)
    for state in (D_NEVER, D_UNKNOWN):
        if any(r.drain == state for r in lagging):
            return Rates(consume, produce, state, None)
    return Rates(consume, produce, D_DRAINING, max(r.drain_s or 0.0 for r in lagging))


def queue_series(samples: Sequence[Sample], window: int) -> dict[MessageQueue, list[tuple[int, QueuePoint]]]:
    """Each queue's last ``window`` points across the samples (oldest first), queues in the order
    they first appear."""
    out: dict[MessageQueue, list[tuple[int, QueuePoint]]] = {}
    for s in samples:
        for p in s.points:
            out.setdefault(p.queue, []).append((s.at_ms, p))
    return {q: pts[-window:] for q, pts in out.items()}


def evaluate(samples: Sequence[Sample], rules: Rules = Rules()) -> WatchView:
    """The newest sample with its window judged: per queue (status, reason, rates, time to drain)
    and rolled up. Samples are one group's, oldest first. A queue absent from the newest sample
    stays (stale, with its last window) only when its broker did not answer that sample; a queue
    gone from a complete answer is gone."""
    samples = list(samples)
    if not samples:
        raise ValueError("no samples to evaluate")
    if rules.window < 2:
        raise ValueError("a window needs at least two samples")
    recent = samples[-rules.window :]
    return judge(samples[-1], queue_series(samples, rules.window), rules, [s.at_ms for s in recent])


def judge(
    newest: Sample, series: Mapping[MessageQueue, Series], rules: Rules, recent_ms: Sequence[int]
) -> WatchView:
    """``evaluate`` once each queue's window is known (``series``: its last ``rules.window`` points;
    ``recent_ms``: the times of the group's last ``rules.window`` samples). A sampler that keeps the
    windows from sample to sample (ops/watch/sampler.GroupWindow) calls this directly."""
    missing = set(newest.missing_brokers)
    present = {p.queue for p in newest.points}
    queues: list[QueueWatch] = []
    for q, kept in series.items():
        stale = q not in present
        if stale and q.broker_name not in missing:
            continue
        pts = kept if isinstance(kept, list) else list(kept)
        status, reason = queue_status(pts, rules)
        queues.append(QueueWatch(pts[-1][1], status, reason, queue_rates(pts), len(pts), _span(pts), stale))
    queues.sort(key=lambda w: w.point.queue.sort_key())
    return WatchView(
        sample=newest,
        queues=tuple(queues),
        status=worst(w.status for w in queues),
        rates=group_rates(queues),
        window=rules.window,
        samples=len(recent_ms),
        span_ms=recent_ms[-1] - recent_ms[0] if recent_ms else 0,
    )


def parse_queue_ref(text: str) -> tuple[str | None, str, int]:
    """``--why``: ``BROKER:QID`` or ``TOPIC/BROKER/QID`` -> (topic or None, broker, queue id).
    ValueError when it is neither."""
    s = text.strip()
    if s.count("/") == 2:
        topic, broker, qid = s.split("/")
    else:
        topic = None
        broker, sep, qid = s.rpartition(":")
        if not sep:
            raise ValueError(f"queue {text!r}: expected BROKER:QID or TOPIC/BROKER/QID")
    if not broker or not qid.isdecimal() or (topic is not None and not topic):
        raise ValueError(f"queue {text!r}: expected BROKER:QID or TOPIC/BROKER/QID")
    return topic, broker, int(qid)
