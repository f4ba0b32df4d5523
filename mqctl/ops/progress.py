"""consumerProgress: per-queue progress of a group, as the broker's GET_CONSUME_STATS computes it.

Per broker (route order), the topics are the ones given with -t, else every topic the broker
holds a committed offset for (``topic@group`` keys, the retry topic included); topics without a
topic config on that broker are skipped, and every readable queue id 0..readQueueNums-1 gets a row.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from mqctl.backends.base import Backend
from mqctl.errors import NotFoundError
from mqctl.model import RETRY_PREFIX, ProgressRow
from mqctl.store.subexpr import SubExpr

ProgressCallback = Callable[[int, int], None]


@dataclass(frozen=True)
class GroupProgress:
    group: str
    rows: list[ProgressRow]
    now_ms: int
    tags: SubExpr | None = None
    tag_collisions: int | None = None  # with --verify-tags: hash matches whose real tag did not match
    warnings: list[str] = field(default_factory=list)

    @property
    def diff_total(self) -> int:
        """Lag total: each queue's diff counted as never below zero, so a queue whose committed
        offset lies above its max cannot cancel out real lag elsewhere (gates use this)."""
        return sum(r.lag for r in self.rows)

    @property
    def raw_diff_total(self) -> int:
        """mqadmin's "Consume Diff Total": the plain sum of diffs, negative ones included."""
        return sum(r.diff for r in self.rows)

    @property
    def above_max(self) -> list[ProgressRow]:
        return [r for r in self.rows if r.above_max]

    @property
    def inflight_total(self) -> int:
        return sum(r.inflight for r in self.rows)

    @property
    def matched_total(self) -> int | None:
        if self.tags is None:
            return None
        return sum(r.matched_diff or 0 for r in self.rows)

    @property
    def max_lag_ms(self) -> int:
        return max((r.lag_ms for r in self.rows), default=0)


@dataclass(frozen=True)
class GroupSummary:
    """One row of the all-groups overview."""

    group: str
    diff_total: int
    topics: list[str]
    brokers: list[str]
    max_lag_ms: int
    raw_diff_total: int = 0  # mqadmin's sum, negative diffs included (plain output)
    queues_above_max: int = 0
    found_in: tuple[str, ...] = ()  # model.FOUND_*: where the overview found the group
    queues: int = 0


def _topics_for(backend: Backend, broker: str, group: str, topic: str | None) -> list[str]:
    if topic is not None:
        return [topic]
    return list(backend.committed_offsets(broker, group))


def group_known(backend: Backend, group: str) -> bool:
    """Committed offsets, a subscription group or a retry topic (mqadmin's route) on any broker."""
    for broker in backend.broker_names():
        if backend.committed_offsets(broker, group) or f"{RETRY_PREFIX}{group}" in backend.topic_configs(
            broker
        ):
            return True
    return any(group in backend.subscription_groups(b) for b in backend.broker_names())


def group_progress(
    backend: Backend,
    group: str,
    topic: str | None = None,
    *,
    tags: SubExpr | None = None,
    verify_tags: bool = False,
    now_ms: int | None = None,
    on_progress: ProgressCallback | None = None,
    require_known: bool = True,
) -> GroupProgress:
    now = int(time.time() * 1000) if now_ms is None else now_ms
    if require_known and not group_known(backend, group):
        raise NotFoundError(
            f"consumer group {group!r} not found: no committed offsets and no subscription group on any broker",
            "list the groups with `mqctl consumerProgress` (no -g)",
        )
    if topic is not None and not any(topic in backend.topic_configs(b) for b in backend.broker_names()):
        raise NotFoundError(f"topic {topic!r} not found on any broker")

    work: list[tuple[str, str, int, dict]] = []
    for broker in backend.broker_names():
        configs = backend.topic_configs(broker)
        committed = backend.committed_offsets(broker, group)
        for t in _topics_for(backend, broker, group, topic):
            cfg = configs.get(t)
            if cfg is None:
                continue
            for qid in range(cfg.read_queue_nums):
                work.append((broker, t, qid, dict(committed.get(t, {}))))

    rows: list[ProgressRow] = []
    collisions = 0 if (tags is not None and verify_tags) else None
    for i, (broker, t, qid, committed) in enumerate(work):
        row, coll = _row(backend, broker, t, qid, committed, tags, verify_tags, now)
        rows.append(row)
        if collisions is not None:
            collisions += coll
        if on_progress is not None:
            on_progress(i + 1, len(work))

    rows.sort(key=lambda r: r.queue.sort_key())
    warnings = list(getattr(backend, "warnings", []))
    warnings += [
        f"{r.broker_name} {r.topic} queue {r.queue_id}: committed offset {r.consumer_offset} lies above the "
        f"queue's max {r.broker_offset} (recreated queue or a bad reset?); counted as 0 lag in totals and gates"
        for r in rows
        if r.above_max
    ]
    return GroupProgress(
        group=group, rows=rows, now_ms=now, tags=tags, tag_collisions=collisions, warnings=warnings
    )


def _row(
    backend: Backend,
    broker: str,
    topic: str,
    qid: int,
    committed: dict[int, int],
    tags: SubExpr | None,
    verify_tags: bool,
    now: int,
) -> tuple[ProgressRow, int]:
    min_off, max_off = backend.queue_offsets(broker, topic, qid)
    broker_offset = max(max_off, 0)
    raw = committed.get(qid, -1)
    consumer_offset = max(raw, 0)  # the broker clamps "no offset" (-1) to 0 for normal topics
    last_ts = 0
    if consumer_offset - 1 >= 0:
        ts = backend.store_timestamp(broker, topic, qid, consumer_offset - 1)
        if ts > 0:
            last_ts = ts
    start = max(consumer_offset, min_off)
    oldest = 0
    if start < broker_offset:
        ts = backend.store_timestamp(broker, topic, qid, start)
        oldest = ts if ts > 0 else 0
    matched: int | None = None
    coll = 0
    if tags is not None:
        if tags.match_all:
            matched = max(broker_offset - start, 0)
        elif verify_tags:
            offsets = backend.matching_offsets(broker, topic, qid, start, broker_offset, tags.hashes)
            real = sum(
                1 for o in offsets.tolist() if tags.matches(backend.message_tags(broker, topic, qid, o))
            )
            coll = len(offsets) - real
            matched = real
        else:
            matched = backend.count_tag_matches(broker, topic, qid, start, broker_offset, tags.hashes)
    row = ProgressRow(
        topic=topic,
        broker_name=broker,
        queue_id=qid,
        broker_offset=broker_offset,
        consumer_offset=consumer_offset,
        min_offset=min_off,
        last_timestamp=last_ts,
        committed=raw >= 0,
        oldest_unconsumed_timestamp=oldest,
        lag_ms=max(now - oldest, 0) if oldest else 0,
        matched_diff=matched,
    )
    return row, coll


def all_groups(
    backend: Backend, *, now_ms: int | None = None, on_progress: ProgressCallback | None = None
) -> list[GroupSummary]:
    """The all-groups overview, in mqadmin's row order: the groups mqadmin lists (through their
    retry topics) and the ones only the offset tables know, each with its lag total."""
    now = int(time.time() * 1000) if now_ms is None else now_ms
    groups = list(backend.group_catalog())
    out: list[GroupSummary] = []
    for i, ref in enumerate(groups):
        prog = group_progress(backend, ref.name, now_ms=now, require_known=False)
        out.append(
            GroupSummary(
                group=ref.name,
                found_in=ref.found_in,
                queues=len(prog.rows),
                diff_total=prog.diff_total,
                topics=sorted({r.topic for r in prog.rows}),
                brokers=sorted({r.broker_name for r in prog.rows}),
                max_lag_ms=prog.max_lag_ms,
                raw_diff_total=prog.raw_diff_total,
                queues_above_max=len(prog.above_max),
            )
        )
        if on_progress is not None:
            on_progress(i + 1, len(groups))
    return out


def sort_groups(groups: list[GroupSummary], by: str) -> list[GroupSummary]:
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
        "or it is a pull / broadcasting consumer that keeps its offsets itself; nothing to show"
    )
