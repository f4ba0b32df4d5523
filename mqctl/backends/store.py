"""The store backend: the Backend Protocol answered from broker store directories on disk.

Each answer is what the broker computes from the same files (GET_CONSUME_STATS, the 5.x time
search, the route a name server would hand out); what lives only in a running broker's memory
(connections, pull offsets, consume TPS) is not available here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mqctl.backends.store_files import BrokerFiles
from mqctl.errors import NotAvailableError, NotFoundError, StoreError
from mqctl.model import (
    FOUND_OFFSETS,
    FOUND_RETRY_TOPIC,
    FOUND_SUBSCRIPTION,
    RETRY_PREFIX,
    TIME_UNREADABLE,
    BackendKind,
    BackendTarget,
    BackendWarning,
    BrokerData,
    ConsumerConnection,
    ConsumerRunningInfo,
    ConsumeStats,
    GroupOverview,
    GroupRef,
    MessageQueue,
    OffsetChange,
    QueueData,
    QueueOffset,
    QueueSpan,
    QueueStat,
    QueueTime,
    StoredMessage,
    SubExpr,
    SubscriptionGroup,
    TagCount,
    TopicConfig,
    TopicRoute,
    WriteResult,
    group_of_retry_topic,
    is_system_group,
)

if TYPE_CHECKING:
    from mqctl.backends.base import ProgressCallback
    from mqctl.model.broadcast import GroupPresence
    from mqctl.model.pop import PopWheel

_LIVE_ONLY_HINT = "query a live cluster with -n/--namesrvAddr, or mqadmin"


class StoreBackend:
    """Backend over one or more broker store roots: {broker name: store root}.

    ``ignore_abort_file`` lets a write go ahead although a store has an ``abort`` file (never
    while the broker holds its lock); reads never look at it. A write waits up to
    ``lock_timeout`` seconds for another mqctl reset of the same store, telling ``on_lock_wait``.
    """

    kind = BackendKind.STORE

    def __init__(
        self,
        stores: Mapping[str, Path],
        *,
        ignore_abort_file: bool = False,
        version: int | None = None,
        lock_timeout: float = 30.0,
        on_lock_wait: Callable[[str], None] | None = None,
    ) -> None:
        self._roots = {name: Path(root) for name, root in stores.items()}
        self._ignore_abort_file = ignore_abort_file
        self._lock_timeout, self._on_lock_wait = lock_timeout, on_lock_wait
        self._version = version
        self._stack = ExitStack()
        self._brokers: dict[str, BrokerFiles] = {}
        self._warnings: list[BackendWarning] = []

    def __enter__(self) -> StoreBackend:
        for name, root in self._roots.items():
            self._brokers[name] = BrokerFiles(name, root, self._stack, self._warnings)
        return self

    def __exit__(self, *exc: object) -> None:
        self._stack.close()

    def refresh(self) -> None:
        """Read the files again: a running broker flushes its offsets every few seconds."""
        self._stack.close()
        self._stack = ExitStack()
        self._brokers.clear()
        self.__enter__()

    def _broker(self, name: str) -> BrokerFiles:
        try:
            return self._brokers[name]
        except KeyError:
            known = ", ".join(self._brokers) or "none"
            raise NotFoundError(f"unknown broker {name!r} (known: {known})") from None

    # --- about the backend ---------------------------------------------------------------
    def target(self) -> BackendTarget:
        return BackendTarget(BackendKind.STORE, tuple((n, str(p.resolve())) for n, p in self._roots.items()))

    def protected_paths(self) -> list[Path]:
        """The store roots: mqctl writes there only through the safe offset write."""
        return list(self._roots.values())

    def take_warnings(self) -> list[BackendWarning]:
        out, self._warnings[:] = list(self._warnings), []
        return out

    def when_idle(self, work: Callable[[], object]) -> None:
        """Dropped: reading files, this backend never waits for a network (see the Protocol)."""

    def rocketmq_version(self) -> int | None:
        if self._version is not None:
            return self._version
        found = [v for b in self._brokers.values() if (v := b.version) is not None]
        return min(found) if found else None

    # --- metadata ------------------------------------------------------------------------
    def broker_names(self) -> Sequence[str]:
        """Route order, as the name server hands it out: it collects a topic's brokers in a Java
        HashSet of broker names (``RouteInfoManager.pickupTopicRouteData``), so mqadmin visits them
        in that set's iteration order; ties within a hash bucket keep the --store order."""
        from mqctl.model.javaorder import string_order

        return string_order(self._brokers)

    def topic_route(self, topic: str) -> TopicRoute:
        datas = []
        for b in self.broker_names():
            cfg = self._brokers[b].topics.get(topic)
            if cfg is not None:
                datas.append(
                    QueueData(b, cfg.read_queue_nums, cfg.write_queue_nums, cfg.perm, cfg.topic_sys_flag)
                )
        if not datas:
            known = ", ".join(self.broker_names()) or "none"
            raise NotFoundError(
                f"No topic route info for the topic: {topic}",
                f"no broker store has a config for it (brokers: {known})",
            )
        return TopicRoute(topic, tuple(datas), tuple(BrokerData(q.broker_name) for q in datas))

    def topic_configs(self, broker: str) -> Mapping[str, TopicConfig]:
        return self._broker(broker).topics

    def subscription_groups(self, broker: str) -> Mapping[str, SubscriptionGroup]:
        return self._broker(broker).subscription_groups

    def _group_refs(self) -> list[GroupRef]:
        """mqadmin's overview order first: groups of the retry topics, in the Java HashSet order of
        the name server's topic list (a HashMap of capacity 1024 on the server, re-hashed into the
        client's set); then, by name, groups only the offset tables know, then those only a
        subscription-group table knows (system groups left out), as live_groups.py lists them."""
        from mqctl.model.javaorder import string_order

        topics = sorted({t for b in self._brokers.values() for t in b.topics})
        by_retry: dict[str, None] = {}
        for t in string_order(string_order(topics, 1024)):
            g = group_of_retry_topic(t)
            if g is not None:
                by_retry.setdefault(g)
        with_offsets = {g for b in self._brokers.values() for g in b.committed_by_group() if g}
        refs = [
            GroupRef(g, (FOUND_RETRY_TOPIC, FOUND_OFFSETS) if g in with_offsets else (FOUND_RETRY_TOPIC,))
            for g in by_retry
        ]
        refs += [GroupRef(g, (FOUND_OFFSETS,)) for g in sorted(with_offsets - by_retry.keys())]
        configured = {g for b in self._brokers.values() for g in b.subscription_groups} - with_offsets
        only = sorted(g for g in configured - by_retry.keys() if not is_system_group(g))
        return refs + [GroupRef(g, (FOUND_SUBSCRIPTION,)) for g in only]

    def groups_overview(self, *, detail: bool = False) -> Sequence[GroupOverview]:
        # A store's consume stats always carry min offsets and committed flags: detail is free.
        self._check_configs()
        return [GroupOverview(ref, self.consume_stats(ref.name)) for ref in self._group_refs()]

    def _check_configs(self) -> None:
        """Every config file a group's answer rests on is read once per command, even one this
        answer would not need: a corrupt subscriptionGroup.json with no usable .bak (the broker
        would start without its groups' settings) is exit 6, not a silently clean answer."""
        for b in self._brokers.values():
            _ = b.subscription_groups

    # --- per group ---------------------------------------------------------------------------
    def _group_known(self, group: str) -> bool:
        """Committed offsets, a retry topic (mqadmin's route) or a subscription group somewhere."""
        retry = f"{RETRY_PREFIX}{group}"
        for b in self._brokers.values():
            if group in b.committed_by_group() or retry in b.topics:
                return True
        return any(group in b.subscription_groups for b in self._brokers.values())

    def consume_stats(self, group: str, topic: str | None = None, *, detail: bool = True) -> ConsumeStats:
        """GET_CONSUME_STATS over every broker, as the broker computes it: the topic given, else
        every topic the group has committed offsets for (its retry topic included); topics without
        a config on a broker are skipped; every queue 0..readQueueNums-1 gets a row."""
        self._check_configs()
        if topic is not None and not any(topic in b.topics for b in self._brokers.values()):
            raise NotFoundError(f"topic {topic!r} not found on any broker")
        if not self._group_known(group):
            raise NotFoundError(
                f"consumer group {group!r} not found: no committed offsets, retry topic or subscription "
                "group on any broker",
                "list the groups with `mqctl consumerProgress` (no -g)",
            )
        queues: list[QueueStat] = []
        for name in self.broker_names():
            b = self._brokers[name]
            committed = b.committed_by_group().get(group, {})
            for t in [topic] if topic is not None else list(committed):
                cfg = b.topics.get(t)
                if cfg is None:
                    continue
                by_queue = committed.get(t, {})
                queues += [
                    _queue_stat(b, t, qid, by_queue.get(qid, -1)) for qid in range(cfg.read_queue_nums)
                ]
        self._report_damage()
        return ConsumeStats(group, tuple(queues))

    def consumer_connection(self, group: str, *, at: str | None = None) -> ConsumerConnection:
        raise NotAvailableError(
            f"a broker store holds no connection data for group {group!r}: connections exist only in a "
            "running broker's memory",
            _LIVE_ONLY_HINT,
        )

    def running_info(self, group: str, client_id: str) -> ConsumerRunningInfo:
        raise NotAvailableError(f"a broker store knows no clients (client {client_id!r})", _LIVE_ONLY_HINT)

    def recent_subscriptions(self, group: str, topics: Sequence[str]) -> Mapping[str, str]:
        raise NotAvailableError("a broker store holds no recent subscriptions (a running broker's memory)")

    def broker_settings(self, broker: str) -> Mapping[str, str]:
        raise NotAvailableError(f"a broker store does not hold {broker}'s running configuration")

    def pop_checkpoints(self, group: str, brokers: Sequence[str], since_ms: int) -> PopWheel:
        raise NotAvailableError("POP messages in flight are read from a running broker's timer wheel")

    def broadcast_pull_offsets(self, group: str | None = None) -> Mapping[str, Mapping[MessageQueue, int]]:
        from mqctl.store.offsets import broadcast_entries

        return broadcast_entries(
            {n: self._brokers[n].offsets.table.offsets for n in self.broker_names()}, group
        )

    def group_presence(self, group: str) -> GroupPresence:
        """No connection data in a store; the pull offsets its offset tables hold."""
        from mqctl.model.broadcast import GroupPresence, in_queue_order

        return GroupPresence(None, in_queue_order(self.broadcast_pull_offsets(group).get(group, {})))

    # --- positions ---------------------------------------------------------------------------
    def offsets_for_times(self, queries: Sequence[QueueTime]) -> list[int]:
        """The search of the broker line that wrote the store: 4.x picks a consume-queue file by
        its modification time and the nearest message in it; 5.x the LOWER/UPPER boundary."""
        from mqctl.model.versions import is_legacy
        from mqctl.store.timesearch import offset_by_time

        legacy = is_legacy(self.rocketmq_version())
        out, damaged = [], []
        for q in queries:
            b = self._broker(q.queue.broker_name)
            cq = b.queue(q.queue.topic, q.queue.queue_id)
            before = b.commitlog.damage_reads
            if legacy:
                from mqctl.store.timesearch4 import offset_by_time_4x

                out.append(offset_by_time_4x(cq, b.commitlog, q.timestamp))
            else:
                out.append(offset_by_time(cq, b.commitlog, q.timestamp, q.boundary))
            if b.commitlog.damage_reads > before:
                damaged.append(q.queue)
        if damaged:
            self._refuse_time_search(damaged)
        return out

    def _refuse_time_search(self, damaged: list[MessageQueue]) -> None:
        """A time search that read a damaged record answers from garbage (zeros read as "no
        time", which sends a LOWER search to max: the whole backlog skipped): refuse it."""
        from mqctl.errors import StoreCorruptError

        names = ", ".join(f"{q.broker_name} {q.topic} queue {q.queue_id}" for q in damaged[:5])
        more = f" and {len(damaged) - 5} more" if len(damaged) > 5 else ""
        files = {
            w: r
            for n in dict.fromkeys(q.broker_name for q in damaged)
            for w, r in self._brokers[n].commitlog.damage.items()
        }
        where = "; ".join(f"{w}: {r}" for w, r in list(files.items())[:2])
        raise StoreCorruptError(
            f"cannot search by time: store times of {len(damaged)} queue(s) cannot be read ({names}{more}): "
            f"commit log damaged: {where}",
            "a time-based plan (-s, --by-duration) needs the messages' store times; "
            "--to-earliest, --to-latest, --to-offset and --shift-by do not",
        )

    def _report_damage(self) -> None:
        for b in self._brokers.values():
            b.report_damage()

    def store_times(self, positions: Sequence[QueueOffset]) -> list[int]:
        out = [
            self._broker(p.queue.broker_name).store_time(p.queue.topic, p.queue.queue_id, p.offset)
            for p in positions
        ]
        self._report_damage()
        return out

    def count_tag_matches(
        self,
        spans: Sequence[QueueSpan],
        expr: SubExpr,
        *,
        verify: bool = False,
        on_progress: ProgressCallback | None = None,
    ) -> list[TagCount]:
        out = []
        for i, span in enumerate(spans):
            out.append(self._count(span, expr, verify))
            if on_progress is not None:
                on_progress(i + 1, len(spans))
        return out

    def _count(self, span: QueueSpan, expr: SubExpr, verify: bool) -> TagCount:
        if span.end <= span.start:
            return TagCount(0, 0 if verify else None)
        if expr.match_all:
            return TagCount(span.end - span.start, 0 if verify else None)
        b = self._broker(span.queue.broker_name)
        cq = b.queue(span.queue.topic, span.queue.queue_id)
        hashes = list(expr.hashes)
        if not verify:
            from mqctl.store.scan import scan_range

            return TagCount(scan_range(cq, span.start, span.end, hashes))
        from mqctl.store.scan import matching_positions

        matched = real = 0
        for first, view in cq.segment_views(span.start, span.end):
            for pos in matching_positions(view, hashes).tolist():
                matched += 1
                phys, _size, _tags = cq.entry(first + pos)
                real += expr.matches(b.commitlog.tags(phys))
        return TagCount(real, matched - real)

    def message_at(self, position: QueueOffset) -> StoredMessage | None:
        b = self._broker(position.queue.broker_name)
        cq = b.queue(position.queue.topic, position.queue.queue_id)
        if not cq.min_offset <= position.offset < cq.max_offset:
            return None
        phys, _size, _tags = cq.entry(position.offset)
        return b.commitlog.message(phys, b.name)

    # --- writes ----------------------------------------------------------------------------
    def begin_offsets_write(
        self, group: str, targets: Mapping[MessageQueue, int], expected: Mapping[MessageQueue, int] | None
    ) -> _StoreOffsetWrite:
        from mqctl.store.safewrite import StoreWrite

        def key(mq: MessageQueue) -> tuple[str, str, int]:
            return (mq.topic, mq.broker_name, mq.queue_id)

        layouts = {name: b.layout for name, b in self._brokers.items()}
        write = StoreWrite(
            layouts,
            group,
            {key(mq): off for mq, off in targets.items()},
            None if expected is None else {key(mq): off for mq, off in expected.items()},
            force_abort_file=self._ignore_abort_file,
            lock_timeout=self._lock_timeout,
            on_lock_wait=self._on_lock_wait,
        )
        return _StoreOffsetWrite(write)


def _queue_stat(b: BrokerFiles, topic: str, qid: int, raw: int) -> QueueStat:
    cq = b.queue(topic, qid)
    consumer = max(raw, 0)  # the broker clamps "no offset" (-1) to 0 for normal topics
    last = b.store_time(topic, qid, consumer - 1) if consumer > 0 else 0
    return QueueStat(
        queue=MessageQueue(topic, b.name, qid),
        broker_offset=max(cq.max_offset, 0),
        consumer_offset=consumer,
        last_timestamp=None if last == TIME_UNREADABLE else max(last, 0),
        min_offset=cq.min_offset,
        committed=raw >= 0,
    )


class _StoreOffsetWrite:
    """The store's safe write behind the OffsetWrite protocol; OS errors (a read-only filesystem,
    a full disk, permissions) become one StoreError naming the path, after the rollback."""

    def __init__(self, write: Any) -> None:
        self._write = write

    def __enter__(self) -> _StoreOffsetWrite:
        with _os_errors():
            self._write.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self._write.__exit__(*exc)

    @property
    def changes(self) -> Sequence[OffsetChange]:
        return self._write.changes

    def commit(self) -> WriteResult:
        from mqctl.model import WriteResult

        with _os_errors():
            return WriteResult(tuple(self._write.commit()), "store")


class _os_errors:  # noqa: N801 - used as a context manager, like contextlib's
    def __enter__(self) -> None:
        return None

    def __exit__(self, typ: object, exc: BaseException | None, tb: object) -> None:
        if isinstance(exc, OSError):
            where = exc.filename or "the store"
            raise StoreError(
                f"cannot write {where}: {exc.strerror or exc}; the reset was rolled back, nothing written",
                "check the store's filesystem (read-only? full?) and its permissions",
            ) from None
