"""consumerProgress's over-time modes below the CLI, one entry point each: ``watch`` (--watch:
the sampler of one group, or of each client of a broadcasting group, seeded from --history),
``why`` (--why) and ``status_from`` (--status-from); and the values of their flags (--watch's
interval, --max-status, --why's queue). cli/progress_watch.py parses the flags and draws."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mqctl.errors import UsageError
from mqctl.records import record

if TYPE_CHECKING:
    from mqctl.backends.base import Backend
    from mqctl.model import Rules, WatchView


# The shortest time between two reads of the cluster: '-w 0.001' (a typo for '-w 1') would ask
# every broker hundreds of times a second. watch(1) keeps 0.1 s as its shortest interval too.
MIN_INTERVAL_S = 0.1


def interval_s(text: str, shortest_s: float = MIN_INTERVAL_S) -> float:
    """--watch's value: seconds ('2', '0.5') or a duration ('500ms', '1m'), from ``shortest_s``
    to a day."""
    try:
        secs = float(text)
    except ValueError:
        from mqctl.ops.timeparse import parse_duration_ms

        secs = parse_duration_ms(text) / 1000
    if not secs > 0 or secs > 86_400:
        raise UsageError(f"--watch {text}: expected a positive number of seconds (at most a day)")
    if secs < shortest_s:
        raise UsageError(
            f"--watch {text}: at least {shortest_s:g} s between samples (each one asks every broker "
            "of the group)"
        )
    return secs


def max_status(text: str | None) -> str | None:
    """--max-status's status name (None when not given)."""
    if text is None:
        return None
    from mqctl.ops.watch.rules import parse_status

    try:
        return parse_status(text)
    except ValueError as e:
        raise UsageError(f"--max-status: {e}") from None


def queue_ref(text: str, topic: str | None) -> tuple[str | None, str, int]:
    """--why's queue (BROKER:QID or TOPIC/BROKER/QID) as (topic, broker, queue id), the topic
    from -t when the reference has none."""
    from mqctl.ops.watch.rules import parse_queue_ref

    try:
        q_topic, broker, qid = parse_queue_ref(text)
    except ValueError as e:
        raise UsageError(f"--why: {e}") from None
    if q_topic and topic and q_topic != topic:
        raise UsageError(f"--why names topic {q_topic} but -t says {topic}")
    return (q_topic or topic, broker, qid)


def status_from(path: str, group: str, topic: str | None, rules: Rules) -> tuple[WatchView, list[str]]:
    """--status-from: statuses and rates from a --history file's last window, no cluster read."""
    from mqctl.ops.watch import history

    return history.judge(Path(path).expanduser(), group, topic, rules)


def why(
    backend: Backend, group: str, ref: tuple[str | None, str, int], *, now_ms: int | None, retry_scan: int
) -> tuple[Any, list[str]]:
    """--why: the message the queue waits on and its retried copies, and the backend's warnings."""
    from mqctl.ops.watch import why as ops_why

    with backend:
        stuck = ops_why.explain(backend, group, ref, now_ms=now_ms, retry_scan=retry_scan)
        return stuck, [str(w) for w in backend.take_warnings()]


@record(frozen=True)
class Watch:
    """What --watch runs (``sampler.run``): the sampler, its sample times, the --history file
    (checked), and the warnings of reading that history."""

    sampler: Any
    times: Iterator[int | None]
    history: Path | None
    warnings: list[str]


def watch(
    backend: Backend,
    group: str,
    topic: str | None,
    rules: Rules,
    *,
    history: str | None,
    ticks: tuple[float, int | None, int | None],
    retry_scan: int,
    client_files: Sequence[Path] = (),
    stale_after_ms: int | None = None,
) -> Watch:
    """--watch on ``backend`` (opened by the caller, kept across samples): ``history`` (--history)
    checked, one group's ``GroupSampler`` seeded with the file's last samples, or with
    ``client_files`` (a broadcasting group's --client-offsets) a ``BroadcastSampler``, a window per
    client; ``ticks``: interval (s), samples (None: until stopped), a fake clock's start."""
    from mqctl.ops.progressrun import history_path
    from mqctl.ops.watch.sampler import GroupSampler
    from mqctl.ops.watch.sampler import ticks as times

    path = history_path(history, backend.protected_paths())
    if client_files:
        from mqctl.ops.watch.broadcast import BroadcastSampler

        bs = BroadcastSampler(backend, group, topic, rules, client_files, retry_scan=retry_scan, history=path)
        if stale_after_ms is not None:
            bs.stale_after_ms = stale_after_ms
        return Watch(bs, times(*ticks), path, [])
    from mqctl.ops.watch.history import read_history

    seed: list[Any] = []
    warnings: list[str] = []
    if path is not None:
        seed, warnings = read_history(path, group, topic, rules.window * 3)
    gs = GroupSampler(backend, group, topic, rules, retry_scan=retry_scan, seed=seed)
    return Watch(gs, times(*ticks), path, warnings)
