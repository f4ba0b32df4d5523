"""Broadcasting consumer groups: the offsets each client instance keeps in its own ``offsets.json``
(``LocalFileOffsetStore``), read from files gathered from the clients' hosts."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from mqctl.model.queues import BackendTarget, BrokerFailure, MessageQueue
from mqctl.records import field, record

if TYPE_CHECKING:  # annotations only: a -g read that is not a broadcast's loads none of these
    from collections.abc import Mapping

    from mqctl.model.clients import Connection, ConsumerConnection
    from mqctl.model.plans import ResetPlan, Target
    from mqctl.model.results import GroupProgress
    from mqctl.model.subexpr import SubExpr
    from mqctl.model.writes import OffsetChange

CLIENT_ID_SEPARATOR = "@"


@record(frozen=True, slots=True)
class ClientOffsets:
    """One client instance's offsets for one group, as its ``<clientId>/<group>/offsets.json`` holds them.

    ``offsets`` are (queue, next offset to consume) in the file's own order; a queue the file does
    not name has no offset (the client starts it by its consumeFromWhere). ``read_from`` is the file
    the offsets came from: ``path`` itself, or its ``.bak`` when the client would fall back to it,
    or None when neither holds any (the client starts afresh). ``mtime_ms``: when the client last
    wrote ``path`` (a running client rewrites it every persistConsumerOffsetInterval, 5 s by
    default), None when it does not exist.
    """

    group: str | None  # the <group> directory above the file (None: not laid out as the client does)
    client_id: str | None  # the <clientId> directory above that: clientIP@instanceName[@unitName]
    host: str | None  # the HOST directory the file was gathered under (HOST/.rocketmq_offsets/...)
    path: str
    read_from: str | None
    mtime_ms: int | None
    offsets: tuple[tuple[MessageQueue, int], ...]
    dialect: str | None = None  # which client line wrote the text (store.clientoffsets DIALECTS)
    warning: str | None = None  # e.g. the .bak fallback, said once

    @property
    def client_ip(self) -> str | None:
        if not self.client_id:
            return None
        return self.client_id.split(CLIENT_ID_SEPARATOR, 1)[0]

    @property
    def instance_name(self) -> str | None:
        if not self.client_id or CLIENT_ID_SEPARATOR not in self.client_id:
            return None
        return self.client_id.split(CLIENT_ID_SEPARATOR)[1]

    @property
    def fell_back(self) -> bool:
        return self.read_from is not None and self.read_from != self.path

    def offset_of(self, mq: MessageQueue) -> int | None:
        return next((off for q, off in self.offsets if q == mq), None)

    def topics(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(q.topic for q, _ in self.offsets))

    @property
    def label(self) -> str:
        """How rows name the client: ``HOST/clientId`` when gathered from hosts (two containers of
        two hosts may both be ``172.17.0.2@DEFAULT``), its clientId, else the file's path."""
        name = self.client_id or self.path
        return f"{self.host}/{name}" if self.host else name


# A group's message model (ConsumerData.messageModel, as the clients' heartbeats tell the broker).
BROADCASTING = "BROADCASTING"
CLUSTERING = "CLUSTERING"

# Where mqctl learnt that a group broadcasts.
FROM_CLIENTS = "clients"  # live: the connected clients' heartbeats (consumerConnection's MessageModel)
FROM_FLAG = "--model"  # the user said so (a store cannot tell)
FROM_PULL_OFFSETS = "topic@group@broadcast"  # a 5.1+ broker tracked the group's push clients' pulls
FROM_FILES = "client files"  # offsets.json files of the group were given

# The overview's ``found_in`` for a group only its clients' files name.
FOUND_CLIENT_FILES = "clientOffsets"


@record(frozen=True)
class GroupModel:
    """A broadcasting group as the backend sees it: where the model is known from, the client
    instances the broker knows (live, online ones), and the 5.1+ broker's own pull positions.

    ``pull_offsets``: the ``topic@group@broadcast`` entries of the brokers' offset tables: per
    queue the minimum over the group's push clients seen in the last 120 s of the offset they
    last pulled from (what was fetched, not what was consumed). Never a committed offset."""

    model: str
    source: str
    clients: tuple[Connection, ...] = ()
    pull_offsets: tuple[tuple[MessageQueue, int], ...] = ()
    subscriptions: tuple[str, ...] = ()  # live: the topics the clients subscribe to

    @property
    def broadcasting(self) -> bool:
        return self.model == BROADCASTING


def in_queue_order(pulls: Mapping[MessageQueue, int]) -> tuple[tuple[MessageQueue, int], ...]:
    """A group's pull offsets (queue -> offset) as ``GroupModel`` and ``GroupPresence`` hold them:
    (queue, offset) pairs in queue order."""
    return tuple(sorted(pulls.items(), key=lambda kv: kv[0].sort_key()))


@record(frozen=True, slots=True)
class GroupPresence:
    """What tells whether a group without committed offsets broadcasts, asked together
    (``Backend.group_presence``): its online clients, and the brokers' pull positions of it.

    ``connection``: None when no client is online (or the backend cannot know: a store).
    ``pull_offsets``: the group's ``topic@group@broadcast`` entries, in queue order; None when they
    were not read, because the online clients say the group consumes CLUSTERING."""

    connection: ConsumerConnection | None
    pull_offsets: tuple[tuple[MessageQueue, int], ...] | None


@record(frozen=True)
class ClientProgress:
    """One client instance's progress: its file's offsets against the brokers' queues (rows as
    consumerProgress draws them, ``client_ip`` holding the client's label)."""

    client: ClientOffsets
    progress: GroupProgress
    age_ms: int | None  # now - the file's modification time; None: no time known
    stale: bool  # not written for longer than --stale-after: the client is gone or stuck
    connected: bool | None = None  # live: the broker lists its clientId; None: cannot tell

    @property
    def lag(self) -> int:
        """What gates and the worst client count: the matched total with --tags, else the diff total."""
        p = self.progress
        matched = p.matched_total
        return matched if matched is not None else p.diff_total


@record(frozen=True)
class BroadcastProgress:
    """consumerProgress of a broadcasting group from its clients' files."""

    group: str
    clients: tuple[ClientProgress, ...]
    now_ms: int
    stale_after_ms: int
    model: GroupModel | None = None
    tags: SubExpr | None = None
    warnings: tuple[str, ...] = ()
    failures: tuple[BrokerFailure, ...] = ()
    unseen: tuple[Connection, ...] = ()  # live: connected clients without a file among those given
    rocketmq_version: int | None = None
    topics: tuple[str, ...] = ()

    @property
    def ranked(self) -> list[ClientProgress]:
        """Worst first: most lag (matched with --tags), then the oldest unconsumed message."""
        return sorted(self.clients, key=lambda c: (-c.lag, -c.progress.max_lag_ms, c.client.label))

    @property
    def worst(self) -> ClientProgress | None:
        ranked = self.ranked
        return ranked[0] if ranked else None

    @property
    def stale(self) -> list[ClientProgress]:
        return [c for c in self.clients if c.stale]


# ------------------------------------------------------------------------------ resets of client files


@record(frozen=True)
class ClientPlan:
    """One client's share of a reset: its plan (rows as a group's, current = the client's offset)
    and why it looks running now (``--execute`` refuses then)."""

    client: ClientOffsets
    plan: ResetPlan
    busy: str | None = None


@record(frozen=True)
class ClientResetPlan:
    """resetOffsetByTime over a broadcasting group's client files: one plan per client."""

    group: str
    topic: str
    target: Target
    plans: tuple[ClientPlan, ...]
    undo_of: str | None = None
    notes: tuple[str, ...] = ()

    @property
    def rows(self) -> int:
        return sum(len(p.plan.rows) for p in self.plans)

    @property
    def changed(self) -> int:
        return sum(p.plan.changed for p in self.plans)


CLIENT_JOURNAL_SCHEMA = "mqctl/resetJournal.clientOffsets/v1"


@record(frozen=True)
class ClientWrite:
    """One client file of a journalled reset: its bytes before and after (undo puts the before
    bytes back when the file still holds the after ones), and the per-queue changes."""

    path: str
    client_id: str | None
    host: str | None
    before: bytes
    after: bytes
    changes: tuple[OffsetChange, ...]
    written: bool = False  # the new bytes landed (a partial record names the files written)


@record(frozen=True)
class ClientJournal:
    """The journal record of a reset of client files (``CLIENT_JOURNAL_SCHEMA``), in the broker
    resets' journal directory, under the same kind of id: ``--undo ID|latest`` finds both."""

    id: str
    created_ms: int
    state: str  # pending | applied | partial (ops.journal's states)
    group: str
    topic: str
    target: BackendTarget  # the brokers the ranges were checked against (undo checks them again)
    clients: tuple[ClientWrite, ...]
    persist_interval_ms: int
    undo_of: str | None = None  # this reset undid that record (``--undo latest`` never redoes it)
    path: Path | None = field(default=None, compare=False)
