"""consumerProgress: a group's consume stats turned into rows and totals, plus mqctl's extras.

The backend answers GET_CONSUME_STATS (one request per broker live; a few files on a store);
this module adds what mqadmin does on top (client IPs with ``-s true``, sorting) and what mqctl
adds (lag time: the store time of the oldest unconsumed message; exact filtered lag), each as
one batch question to the backend, never one per queue.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Mapping, Sequence
from functools import partial
from importlib import import_module
from typing import TYPE_CHECKING

from mqctl.errors import BrokersFailedError, CheckFailedError, MqctlError, NotAvailableError
from mqctl.model import TIME_UNREADABLE
from mqctl.records import record

if TYPE_CHECKING:  # names only annotations use: a command loads the model modules it needs
    from mqctl.backends.base import Backend, ProgressCallback
    from mqctl.model import (
        ConsumeStats,
        GroupProgress,
        GroupSummary,
        MessageQueue,
        ProgressRow,
        QueueOffset,
        QueueStat,
        SubExpr,
        WatchView,
    )

# What turns one group's consume stats into its result, once they are in: a live backend
# imports it while its requests are out (``Backend.when_idle``).
_AFTER_STATS = ("mqctl.model.results", "mqctl.ops.pop")


def _now(now_ms: int | None) -> int:
    return int(time.time() * 1000) if now_ms is None else now_ms


def _start(q: QueueStat) -> int:
    """First unconsumed offset that still exists: a committed offset below min starts at min."""
    return max(q.consumer_offset, q.min_offset or 0)


def _store_times(
    backend: Backend, positions: list[QueueOffset], cache: dict[QueueOffset, int] | None
) -> list[int]:
    """Store times of the messages at these positions. With a ``cache`` (repeated samples, as
    --watch takes them) only positions not seen before are asked for: the message at a queue
    position never changes. The cache keeps just this call's found times (a lagging queue whose
    committed offset did not move costs no request; -1, no message yet, is asked again)."""
    if cache is None:
        return backend.store_times(positions)
    missing = [p for p in positions if p not in cache]
    fresh = dict(zip(missing, backend.store_times(missing))) if missing else {}
    times = [cache[p] if p in cache else fresh[p] for p in positions]
    cache.clear()
    cache.update((p, t) for p, t in zip(positions, times) if t >= 0)
    return times


def oldest_times(
    backend: Backend, stats: Sequence[ConsumeStats], cache: dict[QueueOffset, int] | None
) -> dict[QueueOffset, int]:
    """The store time of the oldest unconsumed message of every lagging queue of these consume
    stats (several groups' at once), in ONE batch question: a queue position two groups wait on
    is asked once; with a ``cache`` (a sampler's), only positions not known from the previous
    round are asked (see ``_store_times``)."""
    from mqctl.model import QueueOffset

    positions = list(
        dict.fromkeys(
            QueueOffset(q.queue, _start(q)) for s in stats for q in s.queues if _start(q) < q.broker_offset
        )
    )
    return dict(zip(positions, _store_times(backend, positions, cache))) if positions else {}


def rows_from_stats(
    backend: Backend,
    stats: ConsumeStats,
    now: int,
    *,
    lag_time: bool = True,
    tags: SubExpr | None = None,
    verify_tags: bool = False,
    client_ips: dict[MessageQueue, str] | None = None,
    on_progress: ProgressCallback | None = None,
    time_cache: dict[QueueOffset, int] | None = None,
    known_times: Mapping[QueueOffset, int] | None = None,
) -> tuple[list[ProgressRow], int | None]:
    """Rows in mqadmin's order (MessageQueue order) and, with verified tags, the collisions.
    ``known_times``: the store times of the unconsumed positions, asked for already (a fleet's
    round asks for every group's at once: ``oldest_times``)."""
    from mqctl.model.results import ProgressRow

    queues = sorted(stats.queues, key=lambda q: q.queue.sort_key())
    oldest = _oldest_times(backend, queues, time_cache, known_times) if lag_time else {}
    matched: dict[MessageQueue, int] = {}
    collisions: int | None = None
    if tags is not None:
        matched, collisions = _tag_matches(backend, queues, tags, verify_tags, on_progress)
    rows = []
    for q in queues:
        ts = oldest.get(q.queue, 0)
        rows.append(
            ProgressRow(
                topic=q.queue.topic,
                broker_name=q.queue.broker_name,
                queue_id=q.queue.queue_id,
                broker_offset=q.broker_offset,
                consumer_offset=q.consumer_offset,
                min_offset=q.min_offset,
                last_timestamp=q.last_timestamp,
                inflight=0 if q.pull_offset is None else q.pull_offset - q.consumer_offset,
                client_ip=None if client_ips is None else client_ips.get(q.queue),
                committed=q.committed is not False,
                oldest_unconsumed_timestamp=ts,
                lag_ms=None if ts is None else max(now - ts, 0) if ts else 0,
                matched_diff=matched.get(q.queue) if tags is not None else None,
            )
        )
    return rows, collisions


def _oldest_times(
    backend: Backend,
    queues: list[QueueStat],
    time_cache: dict[QueueOffset, int] | None,
    known_times: Mapping[QueueOffset, int] | None,
) -> dict[MessageQueue, int | None]:
    """Store time of each lagging queue's oldest unconsumed message (queues without one are left
    out: no lag)."""
    from mqctl.model import QueueOffset

    unconsumed = [q for q in queues if _start(q) < q.broker_offset]
    if not unconsumed:
        return {}
    positions = [QueueOffset(q.queue, _start(q)) for q in unconsumed]
    if known_times is not None:
        times = [known_times.get(p, -1) for p in positions]
    else:
        times = _store_times(backend, positions, time_cache)
    # A time that cannot be read is unknown (None), never 0: "no lag" would pass every gate.
    return {
        q.queue: (None if t == TIME_UNREADABLE else t)
        for q, t in zip(unconsumed, times)
        if t > 0 or t == TIME_UNREADABLE
    }


def _tag_matches(
    backend: Backend,
    queues: list[QueueStat],
    tags: SubExpr,
    verify_tags: bool,
    on_progress: ProgressCallback | None,
) -> tuple[dict[MessageQueue, int], int | None]:
    """Each queue's unconsumed messages matching ``tags``, and with ``verify_tags`` the collisions."""
    from mqctl.model import QueueSpan

    spans = [QueueSpan(q.queue, _start(q), q.broker_offset) for q in queues]
    counts = backend.count_tag_matches(spans, tags, verify=verify_tags, on_progress=on_progress)
    matched = {s.queue: c.matched for s, c in zip(spans, counts)}
    collisions = sum(c.collisions or 0 for c in counts) if verify_tags else None
    return matched, collisions


def client_ips(backend: Backend, group: str) -> dict[MessageQueue, str]:
    """mqadmin's ``-s true``: each queue's owner from the clients' running info (its IP, the part
    of the client id before ``@``). Like mqadmin, a failure stops filling the map (those queues
    show N/A); a backend without clients (a store) gives an empty map."""
    owners: dict[MessageQueue, str] = {}
    try:
        conn = backend.consumer_connection(group)
        for c in conn.connections:
            info = backend.running_info(group, c.client_id)
            for mq, _pq in info.queues:
                owners[mq] = c.client_id.split("@")[0]
    except (NotAvailableError, MqctlError):
        pass
    return owners


def group_progress(
    backend: Backend,
    group: str,
    topic: str | None = None,
    *,
    tags: SubExpr | None = None,
    verify_tags: bool = False,
    now_ms: int | None = None,
    on_progress: ProgressCallback | None = None,
    show_client_ip: bool = False,
    detail: bool = True,
    time_cache: dict[QueueOffset, int] | None = None,
) -> GroupProgress:
    """``detail`` False asks only for mqadmin's columns (no min offset, no lag time).
    ``time_cache``: store times already known by position (see ``_store_times``)."""
    for module in (m for m in _AFTER_STATS if m not in sys.modules):  # (not again per --watch sample)
        backend.when_idle(partial(import_module, module))
    now = _now(now_ms)
    stats = backend.consume_stats(group, topic, detail=detail)
    from mqctl.model.results import GroupProgress
    from mqctl.ops import pop

    pop_view = pop.view(backend, group, stats, topic, now)
    ips = client_ips(backend, group) if show_client_ip else None
    rows, collisions = rows_from_stats(
        backend,
        stats,
        now,
        lag_time=detail,
        tags=tags,
        verify_tags=verify_tags,
        client_ips=ips,
        on_progress=on_progress,
        time_cache=time_cache,
    )
    if pop_view is not None and pop_view.inflight is not None:  # POP: popped, not acknowledged
        from mqctl.records import replace

        counts = dict(pop_view.inflight_by_queue)
        rows = [replace(r, inflight=counts.get(r.queue, 0)) for r in rows]
    warnings = [str(w) for w in backend.take_warnings()]
    warnings += [
        f"{r.broker_name} {r.topic} queue {r.queue_id}: committed offset {r.consumer_offset} lies above the "
        f"queue's max {r.broker_offset} (recreated queue or a bad reset?); counted as 0 lag in totals and gates"
        for r in rows
        if r.above_max
    ]
    return GroupProgress(
        group=group,
        rows=rows,
        now_ms=now,
        tags=tags,
        tag_collisions=collisions,
        warnings=warnings,
        consume_tps=stats.consume_tps if backend.kind.knows_runtime else None,
        failures=stats.failures,
        rocketmq_version=backend.rocketmq_version(),
        pop=pop_view,
    )


def all_groups(
    backend: Backend,
    *,
    now_ms: int | None = None,
    on_progress: ProgressCallback | None = None,
    lag_time: bool = True,
) -> list[GroupSummary]:
    """The all-groups overview, in mqadmin's row order: the groups mqadmin lists (through their
    retry topics) and the ones only the offset tables know, each with its lag total."""
    from mqctl.model.results import GroupProgress, GroupSummary
    from mqctl.ops.pop import overview_notes

    now = _now(now_ms)
    overviews = list(backend.groups_overview())
    pop_types, notes, skip = overview_notes(backend, overviews)
    out: list[GroupSummary] = []
    for i, ov in enumerate(overviews):
        if ov.ref.name in skip:
            continue  # a POP retry topic mqadmin lists as a group: its owner's note says so
        rows: list[ProgressRow] = []
        if ov.stats is not None:
            rows, _ = rows_from_stats(backend, ov.stats, now, lag_time=lag_time)
        prog = GroupProgress(ov.ref.name, rows, now)
        conn = ov.connection
        out.append(
            GroupSummary(
                group=ov.ref.name,
                found_in=ov.ref.found_in,
                queues=len(rows),
                diff_total=prog.diff_total,
                topics=sorted({r.topic for r in rows}),
                brokers=sorted({r.broker_name for r in rows}),
                max_lag_ms=prog.max_lag_ms,
                raw_diff_total=prog.raw_diff_total,
                queues_above_max=len(prog.above_max),
                tps=ov.stats.consume_tps if ov.stats is not None and backend.kind.knows_runtime else None,
                clients=(len(conn.connections) if conn else 0) if backend.kind.knows_runtime else None,
                version=min((c.version for c in conn.connections), default=None) if conn else None,
                consume_type=conn.consume_type if conn else pop_types.get(ov.ref.name),
                message_model=conn.message_model if conn else None,
                failure=ov.failure,
                failures=ov.stats.failures if ov.stats is not None else ov.failures,
                time_unknown=len(prog.time_unknown),
                notes=notes.get(ov.ref.name, ()),
            )
        )
        if on_progress is not None:
            on_progress(i + 1, len(overviews))
    return out


def sort_groups(groups: Sequence[GroupSummary], by: str) -> list[GroupSummary]:
    """``lag``: largest lag total first (then the oldest unconsumed message, then name);
    ``name``: by group name; ``mqadmin``: as listed (mqadmin's own order)."""
    if by == "lag":
        return sorted(groups, key=lambda g: (-g.diff_total, -g.max_lag_ms, g.group))
    if by == "name":
        return sorted(groups, key=lambda g: g.group)
    return list(groups)


def no_rows_reason(progress: GroupProgress, topic: str | None) -> str | None:
    """Why a group's table is empty (mqadmin fails instead, with a route or empty-table error)."""
    if progress.rows:
        return None
    where = f" for topic {topic}" if topic else ""
    return (
        f"group {progress.group} has no committed offsets{where} on any broker: it never consumed, "
        "or it is a pull / broadcasting consumer that keeps its offsets itself; nothing to show (a broadcasting "
        "group: --model broadcasting, or its clients' files with --client-offsets PATH)"
    )


def commits_offsets(rows: Sequence[ProgressRow]) -> bool:
    """Whether the brokers show committed progress of the group (a broadcasting group commits none)."""
    return any(r.committed and r.consumer_offset > 0 for r in rows)


def check_times_readable(progress: GroupProgress | None = None, groups: Sequence[GroupSummary] = ()) -> None:
    """After the output: a store time that could not be read (a damaged store) is exit 6, so that
    no gate and no script passes on it (the warnings printed first name the damaged files)."""
    from mqctl.errors import StoreCorruptError

    hint = "the store's commit log is damaged (see the warnings); its times are shown as unknown"
    if progress is not None and progress.time_unknown:
        rows = progress.time_unknown
        names = ", ".join(f"{r.broker_name} {r.topic} queue {r.queue_id}" for r in rows[:5])
        more = f" and {len(rows) - 5} more" if len(rows) > 5 else ""
        raise StoreCorruptError(
            f"store times of {len(rows)} queue(s) of group {progress.group} cannot be read: {names}{more}",
            hint,
        )
    bad = [g for g in groups if g.time_unknown]
    if bad:
        names = ", ".join(f"{g.group} ({g.time_unknown})" for g in bad[:5])
        more = f" and {len(bad) - 5} more" if len(bad) > 5 else ""
        raise StoreCorruptError(
            f"store times of queues of {len(bad)} group(s) cannot be read: {names}{more}; "
            "their max lag time is unknown",
            hint,
        )


@record(frozen=True)
class Gates:
    """--max-lag / --max-lag-time: checked after the output was printed (exit 10)."""

    max_lag: int | None = None
    max_lag_ms: int | None = None

    @property
    def any(self) -> bool:
        return self.max_lag is not None or self.max_lag_ms is not None

    def check_group(self, result: GroupProgress) -> None:
        measured = result.matched_total if result.tags is not None else result.diff_total
        if self.max_lag is not None and measured is not None and measured > self.max_lag:
            what = "matched diff total" if result.tags is not None else "diff total"
            raise CheckFailedError(
                f"--max-lag exceeded: {what} {measured} > {self.max_lag} (group {result.group})"
            )
        if self.max_lag_ms is not None and result.max_lag_ms > self.max_lag_ms:
            raise CheckFailedError(
                f"--max-lag-time exceeded: oldest unconsumed message is {result.max_lag_ms} ms old "
                f"> {self.max_lag_ms} ms (group {result.group})"
            )

    def check_groups(self, summaries: Sequence[GroupSummary]) -> None:
        """Without -g: the fleet-wide check, every group against the same limits."""
        over = [
            g
            for g in summaries
            if (self.max_lag is not None and g.diff_total > self.max_lag)
            or (self.max_lag_ms is not None and g.max_lag_ms > self.max_lag_ms)
        ]
        if over:
            names = ", ".join(f"{g.group} ({g.diff_total}, {g.max_lag_ms} ms)" for g in over[:5])
            more = f" and {len(over) - 5} more" if len(over) > 5 else ""
            raise CheckFailedError(
                f"{len(over)} of {len(summaries)} group(s) over --max-lag/--max-lag-time: {names}{more}"
            )


def verdict(
    result: GroupProgress, gates: Gates, view: WatchView | None = None, max_status: str | None = None
) -> None:
    """After a group's output: every reason it cannot end with exit 0, in this order: brokers that
    did not answer (their rows are missing), the gates, --max-status over the --history window,
    store times that could not be read (a damaged store, whatever the gates said)."""
    if result.failures:
        raise BrokersFailedError(result.failures, "their rows are missing")
    gates.check_group(result)
    if view is not None:
        from mqctl.ops.watch.rules import check_status

        check_status(view, max_status)
    check_times_readable(result)


def overview_verdict(summaries: Sequence[GroupSummary], gates: Gates) -> None:
    """After the overview: brokers that did not answer (its numbers are incomplete), the gates,
    store times that could not be read."""
    failures = [f for g in summaries for f in g.failures]
    unread = sum(1 for g in summaries if g.failure)
    if failures or unread:
        raise BrokersFailedError(failures, "the groups' numbers above are incomplete", unread_groups=unread)
    gates.check_groups(summaries)
    check_times_readable(groups=summaries)
