"""An in-memory backend implementing the whole Backend Protocol, so ops/ is tested without files.

A cluster is described by hand: brokers with topic configs, per queue the store times (and
tags) of its messages from ``min`` on, committed offsets per group, and the online-only facts a
live broker knows (connections, clients' running info, pull offsets, TPS). Every answer follows
the broker's rules as the spec states them (remoting.md, mqadmin.md 2.2, rocketmq-store.md 5.1),
written here independently of mqctl's store code. Calls are counted per method.
"""

from __future__ import annotations

import collections
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from mqctl.errors import NotAvailableError, NotFoundError, RefusedError
from mqctl.model import (
    FOUND_OFFSETS,
    FOUND_RETRY_TOPIC,
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
    java_string_hash,
)
from mqctl.model.broadcast import GroupPresence, in_queue_order
from mqctl.model.pop import PopAck, PopCheckpoint, PopWheel


@dataclass
class Queue:
    """Messages of one queue from offset ``min`` on: (store time, tag) each."""

    messages: list[tuple[int, str | None]] = field(default_factory=list)
    min: int = 0

    @property
    def max(self) -> int:
        return self.min + len(self.messages)


class MemoryBackend:
    kind = BackendKind.LIVE  # answers what a running cluster knows (clients, TPS, pull offsets)

    def __init__(
        self,
        topics: Mapping[str, Mapping[str, TopicConfig]],
        queues: Mapping[tuple[str, str, int], Queue] | None = None,
        committed: Mapping[str, Mapping[tuple[str, str, int], int]] | None = None,
        *,
        groups: Mapping[str, Sequence[str]] | None = None,
        connections: Mapping[str, ConsumerConnection] | None = None,
        running: Mapping[tuple[str, str], ConsumerRunningInfo] | None = None,
        pull_offsets: Mapping[tuple[str, str, str, int], int] | None = None,
        tps: float | None = None,
    ) -> None:
        self.topics = {b: dict(t) for b, t in topics.items()}  # broker -> topic -> config (route order)
        self.queues = dict(queues or {})  # (broker, topic, qid) -> Queue
        self.committed = {g: dict(o) for g, o in (committed or {}).items()}  # group -> (b, t, q) -> off
        self.groups = {b: list(g) for b, g in (groups or {}).items()}  # broker -> subscription groups
        self.connections = dict(connections or {})
        self.running = dict(running or {})
        self.pull_offsets = dict(pull_offsets or {})  # (group, broker, topic, qid) -> pull offset
        self.tps = tps
        self.calls: collections.Counter[str] = collections.Counter()
        self.warnings: list[BackendWarning] = []
        self.fail_commit_after: int | None = None  # commit this many brokers, then fail
        self.writes: list[dict[MessageQueue, int]] = []
        # POP (RocketMQ 5 through a proxy): (group, topic) -> expression a broker's compensation
        # table holds; broker -> its settings; (proxy address, group) -> what the proxy lists.
        self.compensated: dict[tuple[str, str], str] = {}
        self.settings: dict[str, dict[str, str]] = {}
        self.proxy_connections: dict[tuple[str, str], ConsumerConnection] = {}
        self.stored: dict[QueueOffset, StoredMessage] = {}  # messages with ids, keys, reconsume times
        self.wheel_cks: list[PopCheckpoint] = []  # POP checkpoints and acks in the timer wheels
        self.wheel_acks: list[PopAck] = []
        self.wheel_readable = True
        # group -> queue -> a 5.1+ broker's topic@group@broadcast pull position
        self.broadcast_pulls: dict[str, dict[MessageQueue, int]] = {}

    def __enter__(self) -> MemoryBackend:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def _q(self, mq: MessageQueue) -> Queue:
        return self.queues.get((mq.broker_name, mq.topic, mq.queue_id), Queue())

    # --- about the backend ---------------------------------------------------------------
    def target(self) -> BackendTarget:
        return BackendTarget(BackendKind.LIVE, namesrv="memory")

    def protected_paths(self) -> Sequence[Path]:
        return []

    def take_warnings(self) -> list[BackendWarning]:
        out, self.warnings = self.warnings, []
        return out

    def when_idle(self, work: Callable[[], object]) -> None:
        """Dropped, as a store backend drops it: the model answers without waiting."""

    def refresh(self) -> None:
        """Nothing is cached: every question reads the model as it is now."""

    def rocketmq_version(self) -> int | None:
        return None  # 5.x rules and layouts

    # --- metadata ------------------------------------------------------------------------
    def broker_names(self) -> Sequence[str]:
        self.calls["broker_names"] += 1
        return list(self.topics)

    def topic_route(self, topic: str) -> TopicRoute:
        self.calls["topic_route"] += 1
        datas = tuple(
            QueueData(b, c.read_queue_nums, c.write_queue_nums, c.perm)
            for b, t in self.topics.items()
            if (c := t.get(topic)) is not None
        )
        if not datas:
            raise NotFoundError(f"No topic route info for the topic: {topic}")
        return TopicRoute(topic, datas, tuple(BrokerData(d.broker_name) for d in datas))

    def topic_configs(self, broker: str) -> Mapping[str, TopicConfig]:
        self.calls["topic_configs"] += 1
        return self.topics[broker]

    def subscription_groups(self, broker: str) -> Mapping[str, SubscriptionGroup]:
        self.calls["subscription_groups"] += 1
        return {g: SubscriptionGroup(g) for g in self.groups.get(broker, [])}

    def groups_overview(self, *, detail: bool = False) -> Sequence[GroupOverview]:
        self.calls["groups_overview"] += 1
        retry = [t[len("%RETRY%") :] for b in self.topics.values() for t in b if t.startswith("%RETRY%")]
        refs = [
            GroupRef(g, (FOUND_RETRY_TOPIC, FOUND_OFFSETS) if g in self.committed else (FOUND_RETRY_TOPIC,))
            for g in dict.fromkeys(retry)
        ]
        refs += [GroupRef(g, (FOUND_OFFSETS,)) for g in sorted(set(self.committed) - set(retry))]
        return [GroupOverview(r, self._stats(r.name, None), self.connections.get(r.name)) for r in refs]

    # --- per group ---------------------------------------------------------------------------
    def consume_stats(self, group: str, topic: str | None = None, *, detail: bool = True) -> ConsumeStats:
        self.calls["consume_stats"] += 1
        known = group in self.committed or any(f"%RETRY%{group}" in t for t in self.topics.values())
        if not known and not any(group in g for g in self.groups.values()):
            raise NotFoundError(f"consumer group {group!r} not found")
        if topic is not None and not any(topic in t for t in self.topics.values()):
            raise NotFoundError(f"topic {topic!r} not found")
        return self._stats(group, topic, detail)

    def _stats(self, group: str, topic: str | None, detail: bool = True) -> ConsumeStats:
        offsets = self.committed.get(group, {})
        rows = []
        for b, configs in self.topics.items():
            topics = (
                [topic] if topic is not None else list(dict.fromkeys(t for (bb, t, _q) in offsets if bb == b))
            )
            for t in topics:
                cfg = configs.get(t)
                for qid in range(cfg.read_queue_nums if cfg else 0):
                    rows.append(
                        self._row(group, MessageQueue(t, b, qid), offsets.get((b, t, qid), -1), detail)
                    )
        return ConsumeStats(group, tuple(rows), self.tps or 0.0)

    def _row(self, group: str, mq: MessageQueue, raw: int, detail: bool) -> QueueStat:
        q = self._q(mq)
        consumer = max(raw, 0)
        last = q.messages[consumer - 1 - q.min][0] if q.min <= consumer - 1 < q.max else 0
        pull = self.pull_offsets.get((group, mq.broker_name, mq.topic, mq.queue_id))
        return QueueStat(mq, q.max, consumer, last, pull, q.min if detail else None, raw >= 0)

    def consumer_connection(self, group: str, *, at: str | None = None) -> ConsumerConnection:
        self.calls["consumer_connection"] += 1
        if at is not None:
            if (at, group) not in self.proxy_connections:
                raise NotFoundError(f"consumer group {group!r} has no consumer online at {at}")
            return self.proxy_connections[(at, group)]
        if not self.connections:
            raise NotAvailableError("no connections in this backend")
        if group not in self.connections:
            raise NotFoundError(f"the consumer group[{group}] not online")
        return self.connections[group]

    def recent_subscriptions(self, group: str, topics: Sequence[str]) -> Mapping[str, str]:
        self.calls["recent_subscriptions"] += 1
        return {t: e for (g, t), e in self.compensated.items() if g == group and t in topics}

    def broker_settings(self, broker: str) -> Mapping[str, str]:
        self.calls["broker_settings"] += 1
        return dict(self.settings.get(broker, {}))

    def pop_checkpoints(self, group: str, brokers: Sequence[str], since_ms: int) -> PopWheel:
        """The wheel entries set by the test whose pop time is at or after ``since_ms`` (a broker
        stores a checkpoint or an ack at its pop or ack time, never before the pop)."""
        self.calls["pop_checkpoints"] += 1
        if not self.wheel_readable:
            raise NotAvailableError("no timer wheel in this backend")

        cks = tuple(
            c for c in self.wheel_cks if c.group == group and c.broker in brokers and c.pop_time >= since_ms
        )
        acks = tuple(
            a for a in self.wheel_acks if a.group == group and a.broker in brokers and a.pop_time >= since_ms
        )
        return PopWheel(cks, acks, tuple((b, since_ms) for b in brokers))

    def broadcast_pull_offsets(self, group: str | None = None) -> Mapping[str, Mapping[MessageQueue, int]]:
        self.calls["broadcast_pull_offsets"] += 1
        return {g: dict(o) for g, o in self.broadcast_pulls.items() if group in (None, g)}

    def group_presence(self, group: str) -> GroupPresence:
        """The two questions it joins, asked one after the other (counted as such too); the pull
        offsets left unread when the online clients say CLUSTERING, as the live backend does."""
        self.calls["group_presence"] += 1
        try:
            conn: ConsumerConnection | None = self.consumer_connection(group)
        except (NotFoundError, NotAvailableError):
            conn = None
        if conn is not None and conn.message_model != "BROADCASTING":
            return GroupPresence(conn, None)
        found = self.broadcast_pull_offsets(group).get(group, {})
        return GroupPresence(conn, in_queue_order(found))

    def running_info(self, group: str, client_id: str) -> ConsumerRunningInfo:
        self.calls["running_info"] += 1
        if (group, client_id) not in self.running:
            raise NotFoundError(f"The Consumer {group} {client_id} not online")
        return self.running[(group, client_id)]

    # --- positions (the broker's rules, spec rocketmq-store.md 5.1 / 5.3) --------------------
    def offsets_for_times(self, queries: Sequence[QueueTime]) -> list[int]:
        self.calls["offsets_for_times"] += 1
        out = []
        for qt in queries:
            q = self._q(qt.queue)
            times = [ts for ts, _tag in q.messages]
            if qt.boundary == "lower":
                hit = next((i for i, ts in enumerate(times) if ts >= qt.timestamp), None)
                out.append(q.max if hit is None else q.min + hit)
            else:
                hits = [i for i, ts in enumerate(times) if ts <= qt.timestamp]
                out.append(q.min if not hits else q.min + hits[-1])
        return out

    def store_times(self, positions: Sequence[QueueOffset]) -> list[int]:
        self.calls["store_times"] += 1
        out = []
        for p in positions:
            q = self._q(p.queue)
            out.append(q.messages[p.offset - q.min][0] if q.min <= p.offset < q.max else -1)
        return out

    def count_tag_matches(
        self, spans: Sequence[QueueSpan], expr: SubExpr, *, verify: bool = False, on_progress=None
    ) -> list[TagCount]:  # type: ignore[no-untyped-def]
        self.calls["count_tag_matches"] += 1
        out = []
        for s in spans:
            q = self._q(s.queue)
            tags = [tag for _ts, tag in q.messages[max(s.start - q.min, 0) : max(s.end - q.min, 0)]]
            if expr.match_all:
                out.append(TagCount(len(tags), 0 if verify else None))
                continue
            hashes = {java_string_hash(t) for t in expr.tags}
            by_hash = [t for t in tags if t is not None and java_string_hash(t) in hashes]
            real = [t for t in by_hash if t in expr.tags]
            out.append(TagCount(len(real), len(by_hash) - len(real)) if verify else TagCount(len(by_hash)))
        return out

    def message_at(self, position: QueueOffset) -> StoredMessage | None:
        self.calls["message_at"] += 1
        if position in self.stored:
            return self.stored[position]
        q = self._q(position.queue)
        if not q.min <= position.offset < q.max:
            return None
        ts, tag = q.messages[position.offset - q.min]
        return StoredMessage(
            queue=position.queue,
            queue_offset=position.offset,
            physical_offset=position.offset * 100,
            msg_id=f"MEM{position.offset:029X}",
            store_timestamp=ts,
            born_timestamp=ts,
            born_host="127.0.0.1:1",
            store_host="127.0.0.1:2",
            reconsume_times=0,
            size=100,
            tags=tag,
        )

    # --- writes -------------------------------------------------------------------------------
    def begin_offsets_write(
        self, group: str, targets: Mapping[MessageQueue, int], expected: Mapping[MessageQueue, int] | None
    ) -> MemoryWrite:
        self.calls["begin_offsets_write"] += 1
        return MemoryWrite(self, group, dict(targets), dict(expected or {}))


class MemoryWrite:
    def __init__(self, backend: MemoryBackend, group: str, targets: dict, expected: dict) -> None:
        self.backend, self.group, self.targets, self.expected = backend, group, targets, expected
        self.changes: list[OffsetChange] = []

    def __enter__(self) -> MemoryWrite:
        offsets = self.backend.committed.get(self.group, {})
        moved = []
        for mq, after in self.targets.items():
            before = offsets.get((mq.broker_name, mq.topic, mq.queue_id), -1)
            if mq in self.expected and self.expected[mq] != before:
                moved.append(mq)
            self.changes.append(OffsetChange(mq, before, after))
        if moved:
            raise RefusedError(f"offsets moved since the plan was made: {moved}; nothing written")
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def commit(self) -> WriteResult:
        from mqctl.errors import ExitStatus, PartialWriteError

        brokers = list(dict.fromkeys(c.queue.broker_name for c in self.changes))
        done: list[str] = []
        offsets = self.backend.committed.setdefault(self.group, {})
        for b in brokers:
            if self.backend.fail_commit_after is not None and len(done) == self.backend.fail_commit_after:
                raise PartialWriteError(f"{b} dropped the connection", done, ExitStatus.UNREACHABLE)
            for c in self.changes:
                if c.queue.broker_name == b:
                    key = (b, c.queue.topic, c.queue.queue_id)
                    if c.after < 0:
                        offsets.pop(key, None)
                    else:
                        offsets[key] = c.after
            done.append(b)
        self.backend.writes.append({c.queue: c.after for c in self.changes})
        return WriteResult(tuple(done), "memory")
