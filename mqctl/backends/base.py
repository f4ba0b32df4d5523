"""The Backend Protocol: the questions ops/ may ask about a cluster, and nothing else.

Every method asks what a broker answers in ONE request (or a name server in one), per broker or
per group, never per queue: a live backend then makes one round trip per broker where a store
backend reads a few files. Methods that take a list (positions, times, spans) are batches the
backend groups per broker and, live, sends concurrently.

Results are the records (data classes) of ``mqctl.model``; no raw dicts, no numpy arrays cross this seam.
Backend-only options (a store's ``ignore_abort_file``, a live cluster's timeout and
credentials) go to the backend's constructor. A question a backend cannot answer raises
``NotAvailableError`` (exit 7); unknown groups and topics raise ``NotFoundError`` (exit 3).
Brokers are named by broker name; ``broker_names()`` and every result follow the name server's
route order.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from mqctl.model import (
        BackendKind,
        BackendTarget,
        BackendWarning,
        ConsumerConnection,
        ConsumerRunningInfo,
        ConsumeStats,
        GroupOverview,
        MessageQueue,
        OffsetChange,
        QueueOffset,
        QueueSpan,
        QueueTime,
        StoredMessage,
        SubExpr,
        SubscriptionGroup,
        TagCount,
        TopicConfig,
        TopicRoute,
        WriteResult,
    )
    from mqctl.model.broadcast import GroupPresence
    from mqctl.model.pop import PopWheel


ProgressCallback = Callable[[int, int], None]


class OffsetWrite(Protocol):
    """A write of committed offsets, begun but not committed: the backend's locks are held and the
    current offsets were re-read under them (``changes``); ``commit`` applies, ``close`` (or the
    end of the ``with`` block) releases without applying if commit was not called."""

    def __enter__(self) -> OffsetWrite: ...
    def __exit__(self, *exc: object) -> None: ...

    @property
    def changes(self) -> Sequence[OffsetChange]:
        """Per queue: the committed offset now (re-read) and the one the write will set."""
        ...

    def commit(self) -> WriteResult:
        """Apply; returns the brokers written and each queue read back. A failure part-way
        raises ``PartialWriteError`` naming the brokers that hold the new offsets (a store rolls
        back first; what it could not roll back is named)."""
        ...


class Backend(Protocol):
    kind: BackendKind  # where the answers come from, and so what it can know

    def __enter__(self) -> Backend: ...
    def __exit__(self, *exc: object) -> None: ...

    # --- about the backend itself ------------------------------------------------------
    def target(self) -> BackendTarget:
        """What opens this backend again (a journal records it, undo reopens it)."""
        ...

    def protected_paths(self) -> Sequence[Path]:
        """Local paths no command may write a file of its own into (a store's root)."""
        ...

    def take_warnings(self) -> list[BackendWarning]:
        """Warnings raised since the last call (each is returned once, for the CLI to print)."""
        ...

    def when_idle(self, work: Callable[[], object]) -> None:
        """Hand over work the caller will do after the next answers anyway (importing what draws
        them): a live backend runs it while its requests are out and it would only wait for the
        network; a store backend, which never waits, drops it. Warm-up only: an error in it is
        dropped, and the caller still does (and, if need be, fails at) the work where it needs
        it. Callable before the backend is entered."""
        ...

    def refresh(self) -> None:
        """Start a new round of questions on the same backend (a sampler, before each sample):
        forget answers that can change (a store re-reads its files; a live cluster its groups'
        configs, and its routes once they are ``ROUTE_TTL_S`` old) and give the round a fresh
        deadline. Connections are kept."""
        ...

    def rocketmq_version(self) -> int | None:
        """The brokers' MQVersion ordinal (the lowest when they differ; None when unknown): the
        one the user named, else live from the answers' headers, a store from its files. It picks
        mqadmin's layout for plain output and, on a store, the broker's time search."""
        ...

    # --- metadata: the name server's route, the brokers' config tables ---------------------
    def broker_names(self) -> Sequence[str]:
        """The cluster's brokers, in route order."""
        ...

    def topic_route(self, topic: str) -> TopicRoute:
        """A topic's brokers with read/write queue counts and perms (GET_ROUTEINFO_BY_TOPIC)."""
        ...

    def topic_configs(self, broker: str) -> Mapping[str, TopicConfig]:
        """Every topic config of one broker (topics.json / GET_ALL_TOPIC_CONFIG)."""
        ...

    def subscription_groups(self, broker: str) -> Mapping[str, SubscriptionGroup]:
        """Every subscription group of one broker (subscriptionGroup.json / 201)."""
        ...

    def groups_overview(self, *, detail: bool = False) -> Sequence[GroupOverview]:
        """Every group mqadmin's overview lists (through its retry topic) and those only the
        offset or subscription tables know, in mqadmin's order, each with its consume stats.
        ``detail`` (the fleet question, lagReport's): each queue's min offset and whether the
        group has a committed offset there, in a few more requests per broker, not per group, and
        its pull offset (None where the broker does not report it: 4.x, 5.0)."""
        ...

    # --- per group ---------------------------------------------------------------------
    def consume_stats(self, group: str, topic: str | None = None, *, detail: bool = True) -> ConsumeStats:
        """GET_CONSUME_STATS merged over the brokers that serve the group (or ``topic``), with
        each queue's min offset when ``detail``. Brokers that fail are listed in ``failures``;
        an unknown group or topic raises NotFoundError."""
        ...

    def consumer_connection(self, group: str, *, at: str | None = None) -> ConsumerConnection:
        """The group's online clients and subscriptions (GET_CONSUMER_CONNECTION_LIST); ``at``: ask
        that address instead of a broker (a rocketmq-proxy's remoting port lists its gRPC clients)."""
        ...

    def recent_subscriptions(self, group: str, topics: Sequence[str]) -> Mapping[str, str]:
        """topic -> expression for the topics a broker remembers ``group`` consuming without a
        registered client (its compensation table: POP requests, heartbeat-less pulls, for 10
        minutes after the last one; QUERY_SUBSCRIPTION_BY_CONSUMER)."""
        ...

    def broker_settings(self, broker: str) -> Mapping[str, str]:
        """One broker's configuration, ``key`` -> value (GET_BROKER_CONFIG)."""
        ...

    def pop_checkpoints(self, group: str, brokers: Sequence[str], since_ms: int) -> PopWheel:
        """The POP checkpoints and acknowledgements of ``group`` in each broker's timer wheel
        (rmq_sys_wheel_timer) stored since ``since_ms``: what was popped, and not acknowledged."""
        ...

    def running_info(self, group: str, client_id: str) -> ConsumerRunningInfo:
        """What one client reports about itself, relayed by a broker (GET_CONSUMER_RUNNING_INFO)."""
        ...

    def broadcast_pull_offsets(self, group: str | None = None) -> Mapping[str, Mapping[MessageQueue, int]]:
        """group -> queue -> the 5.1+ broker's ``topic@group@broadcast`` entry: the minimum over a
        broadcasting group's push clients seen in the last 120 s of the offset each last pulled from
        (a pull position, never a committed offset); empty on 4.x and 5.0 brokers. Every group's,
        or only ``group``'s. One offset-table question per broker (live: GET_ALL_CONSUMER_OFFSET);
        brokers that fail are warned about."""
        ...

    def group_presence(self, group: str) -> GroupPresence:
        """``consumer_connection(group)`` and ``broadcast_pull_offsets(group)`` asked together: what
        tells whether a group the brokers show no committed offsets of broadcasts. Live, one round
        (the connection list, the route's brokers' offset tables, the cluster's broker list);
        the pull offsets are left unread (None) when the online clients say CLUSTERING."""
        ...

    # --- positions in queues (batches) -----------------------------------------------------
    def offsets_for_times(self, queries: Sequence[QueueTime]) -> list[int]:
        """The broker's offset for each time (SEARCH_OFFSET_BY_TIMESTAMP), clamped to [min, max].
        A search that met a store time that cannot be read raises ``StoreError`` naming the queues
        and files (the broker would answer from garbage: a zeroed log reads as "every queue at max")."""
        ...

    def store_times(self, positions: Sequence[QueueOffset]) -> list[int]:
        """Store time (epoch ms) of the message at each position; -1 where there is none (outside
        [min, max), or deleted by retention); ``TIME_UNREADABLE`` (-2) where the message should be
        there but cannot be read (a damaged store: the backend also warns, naming the file)."""
        ...

    def count_tag_matches(
        self,
        spans: Sequence[QueueSpan],
        expr: SubExpr,
        *,
        verify: bool = False,
        on_progress: ProgressCallback | None = None,
    ) -> list[TagCount]:
        """Exact counts of the messages in each span whose tag hash matches ``expr`` (with
        ``verify``, confirmed against the messages' real tags, collisions counted)."""
        ...

    def message_at(self, position: QueueOffset) -> StoredMessage | None:
        """The stored message at a queue position (ids, keys, tags, times); None when it is gone."""
        ...

    # --- writes ------------------------------------------------------------------------
    def begin_offsets_write(
        self, group: str, targets: Mapping[MessageQueue, int], expected: Mapping[MessageQueue, int] | None
    ) -> OffsetWrite:
        """Phase one of a write: take the backend's locks, re-read, and refuse (RefusedError) when
        any current offset differs from ``expected``. -1 as a target removes the queue's entry."""
        ...
