"""The Java client's queue allocation strategies (spec/mqadmin.md 7), each under its ``getName()``.

Each mirrors the Java class, including its precondition errors (raised as ``UsageError`` with the
Java message) and quirks: a client id listed twice takes the same share twice (its second slot's
queues go to nobody), CONFIG ignores every input, CONSISTENT_HASH lets a later virtual node
overwrite an earlier one with the same hash. ``build_strategy`` makes one from command-line values;
``mqctl.ops.allocate`` runs one over a topic's queues.
"""

from __future__ import annotations

import bisect
import hashlib
from collections.abc import Callable, Mapping, Sequence
from typing import Protocol

from mqctl.errors import UsageError
from mqctl.model import MessageQueue, java_compare_key, java_split
from mqctl.records import field, record

STRATEGY_NAMES = ("AVG", "AVG_BY_CIRCLE", "CONSISTENT_HASH", "MACHINE_ROOM", "MACHINE_ROOM_NEARBY", "CONFIG")

CURRENT_CID_EMPTY = "currentCID is empty"
MQ_ALL_EMPTY = "mqAll is null or mqAll empty"
CID_ALL_EMPTY = "cidAll is null or cidAll empty"


# --- strategies ---------------------------------------------------------------------------


class Strategy(Protocol):
    @property
    def name(self) -> str: ...

    def allocate(
        self, current_cid: str, mq_all: Sequence[MessageQueue], cid_all: Sequence[str], topic: str
    ) -> list[MessageQueue]: ...


def check(current_cid: str, mq_all: Sequence[MessageQueue], cid_all: Sequence[str]) -> bool:
    """``AbstractAllocateMessageQueueStrategy.check``: raise on empty inputs; False if not a member."""
    if not current_cid:
        raise UsageError(CURRENT_CID_EMPTY)
    if not mq_all:
        raise UsageError(MQ_ALL_EMPTY)
    if not cid_all:
        raise UsageError(CID_ALL_EMPTY)
    return current_cid in cid_all


@record(frozen=True)
class Averagely:
    """AVG: contiguous blocks, the first ``M % N`` consumers one queue more."""

    name: str = "AVG"

    def allocate(
        self, current_cid: str, mq_all: Sequence[MessageQueue], cid_all: Sequence[str], topic: str = ""
    ) -> list[MessageQueue]:
        if not check(current_cid, mq_all, cid_all):
            return []
        m, n = len(mq_all), len(cid_all)
        index = cid_all.index(current_cid)
        mod = m % n
        bigger = mod > 0 and index < mod
        avg = 1 if m <= n else (m // n + 1 if bigger else m // n)
        start = index * avg if bigger else index * avg + mod
        size = min(avg, m - start)
        return list(mq_all[start : start + size]) if size > 0 else []


@record(frozen=True)
class AveragelyByCircle:
    """AVG_BY_CIRCLE: round robin, queue i to consumer i mod N."""

    name: str = "AVG_BY_CIRCLE"

    def allocate(
        self, current_cid: str, mq_all: Sequence[MessageQueue], cid_all: Sequence[str], topic: str = ""
    ) -> list[MessageQueue]:
        if not check(current_cid, mq_all, cid_all):
            return []
        index = cid_all.index(current_cid)
        return list(mq_all[index :: len(cid_all)])


def md5_hash(key: str) -> int:
    """``ConsistentHashRouter.MD5Hash``: first 4 MD5 bytes of the UTF-8 key, unsigned big-endian."""
    # Java's getBytes(UTF_8) turns an unpaired surrogate into '?', as "replace" does.
    return int.from_bytes(hashlib.md5(key.encode("utf-8", "replace")).digest()[:4], "big")  # noqa: S324


def message_queue_str(mq: MessageQueue) -> str:
    """``MessageQueue.toString()``, the key CONSISTENT_HASH routes by."""
    return f"MessageQueue [topic={mq.topic}, brokerName={mq.broker_name}, queueId={mq.queue_id}]"


@record(frozen=True)
class ConsistentHash:
    """CONSISTENT_HASH: a ring of ``virtual_nodes`` points per client id."""

    virtual_nodes: int = 10
    hash_fn: Callable[[str], int] = md5_hash
    name: str = "CONSISTENT_HASH"

    def __post_init__(self) -> None:
        if self.virtual_nodes < 0:
            raise UsageError(f"illegal virtualNodeCnt :{self.virtual_nodes}")

    def ring(self, cid_all: Sequence[str]) -> dict[int, str]:
        ring: dict[int, str] = {}
        for cid in cid_all:
            # A repeated id continues its numbering from the points it still holds on the ring.
            existing = sum(1 for owner in ring.values() if owner == cid)
            for i in range(self.virtual_nodes):
                ring[self.hash_fn(f"{cid}-{i + existing}")] = cid  # equal hash: the later node wins
        return ring

    def allocate(
        self, current_cid: str, mq_all: Sequence[MessageQueue], cid_all: Sequence[str], topic: str = ""
    ) -> list[MessageQueue]:
        if not check(current_cid, mq_all, cid_all):
            return []
        ring = self.ring(cid_all)
        if not ring:
            return []
        points = sorted(ring)
        out = []
        for mq in mq_all:
            i = bisect.bisect_left(points, self.hash_fn(message_queue_str(mq)))
            if ring[points[i % len(points)]] == current_cid:
                out.append(mq)
        return out


@record(frozen=True)
class ByConfig:
    """CONFIG: every consumer gets the configured list, whatever the inputs (no precondition check).

    Entries are (topic or None, brokerName, queueId); None means the topic being allocated.
    """

    entries: tuple[tuple[str | None, str, int], ...] = ()
    name: str = "CONFIG"

    def allocate(
        self, current_cid: str, mq_all: Sequence[MessageQueue], cid_all: Sequence[str], topic: str = ""
    ) -> list[MessageQueue]:
        return [MessageQueue(t if t is not None else topic, b, q) for t, b, q in self.entries]


@record(frozen=True)
class ByMachineRoom:
    """MACHINE_ROOM: only queues of brokers named ``IDC@name`` with IDC in ``consumer_idcs``."""

    consumer_idcs: frozenset[str] = frozenset()
    name: str = "MACHINE_ROOM"

    def allocate(
        self, current_cid: str, mq_all: Sequence[MessageQueue], cid_all: Sequence[str], topic: str = ""
    ) -> list[MessageQueue]:
        if not check(current_cid, mq_all, cid_all):
            return []
        index = cid_all.index(current_cid)
        pre = [mq for mq in mq_all if self._room_ok(mq.broker_name)]
        n = len(cid_all)
        mod, rem = divmod(len(pre), n)
        out = pre[mod * index : mod * index + mod]
        if rem > index:
            out.append(pre[index + mod * n])
        return out

    def _room_ok(self, broker_name: str) -> bool:
        parts = java_split(broker_name, "@")
        return len(parts) == 2 and parts[0] in self.consumer_idcs


@record(frozen=True)
class RoomResolver:
    """``MachineRoomResolver`` for MACHINE_ROOM_NEARBY.

    Broker room: ``broker_rooms[brokerName]``, else the part of the brokerName before its first
    ``@`` (``hz@broker-a`` is in room ``hz``). Consumer room: ``consumer_rooms[clientId]``, else
    the part of the client id after its last ``@`` (``10.0.0.1@hz``). No room is an error.
    """

    broker_rooms: Mapping[str, str] = field(default_factory=dict)
    consumer_rooms: Mapping[str, str] = field(default_factory=dict)

    def broker_deploy_in(self, mq: MessageQueue) -> str | None:
        if mq.broker_name in self.broker_rooms:
            return self.broker_rooms[mq.broker_name]
        room, sep, _ = mq.broker_name.partition("@")
        return room if sep else None

    def consumer_deploy_in(self, cid: str) -> str | None:
        if cid in self.consumer_rooms:
            return self.consumer_rooms[cid]
        _, sep, room = cid.rpartition("@")
        return room if sep else None


@record(frozen=True)
class MachineRoomNearby:
    """MACHINE_ROOM_NEARBY: the delegate within each room; rooms without consumers are shared by all."""

    delegate: Strategy = field(default_factory=Averagely)
    resolver: RoomResolver = field(default_factory=RoomResolver)

    @property
    def name(self) -> str:
        return f"MACHINE_ROOM_NEARBY-{self.delegate.name}"

    def allocate(
        self, current_cid: str, mq_all: Sequence[MessageQueue], cid_all: Sequence[str], topic: str = ""
    ) -> list[MessageQueue]:
        if not check(current_cid, mq_all, cid_all):
            return []
        queues_in: dict[str, list[MessageQueue]] = {}
        for mq in mq_all:
            room = self.resolver.broker_deploy_in(mq)
            if not room:
                raise UsageError(f"Machine room is null for mq {message_queue_str(mq)}")
            queues_in.setdefault(room, []).append(mq)
        consumers_in: dict[str, list[str]] = {}
        for cid in cid_all:
            room = self.resolver.consumer_deploy_in(cid)
            if not room:
                raise UsageError(f"Machine room is null for consumer id {cid}")
            consumers_in.setdefault(room, []).append(cid)
        mine = self.resolver.consumer_deploy_in(current_cid) or ""
        out: list[MessageQueue] = []
        local = queues_in.pop(mine, None)
        if local:
            out += self.delegate.allocate(current_cid, local, consumers_in.get(mine, []), topic)
        # Java keeps rooms in a TreeMap: visit them in String order.
        for room in sorted(queues_in, key=java_compare_key):
            if room not in consumers_in:
                out += self.delegate.allocate(current_cid, queues_in[room], cid_all, topic)
        return out


# --- building a strategy from command-line values -------------------------------------------


def parse_mapping(value: str | None, what: str) -> dict[str, str]:
    """``key=room,key=room`` (the CLI's room options)."""
    out: dict[str, str] = {}
    for item in (value or "").split(","):
        if not item.strip():
            continue
        k, sep, v = item.partition("=")
        if not sep or not k.strip() or not v.strip():
            raise UsageError(f"{what}: expected NAME=ROOM[,NAME=ROOM...], got {item!r}")
        out[k.strip()] = v.strip()
    return out


def parse_config_queues(specs: Sequence[str]) -> tuple[tuple[str | None, str, int], ...]:
    """``[TOPIC/]BROKER:QID[,QID...]`` items (repeatable) for CONFIG."""
    out: list[tuple[str | None, str, int]] = []
    for spec in specs:
        head, sep, ids = spec.rpartition(":")
        topic, slash, broker = head.rpartition("/")
        try:
            qids = [int(x) for x in ids.split(",") if x.strip()]
        except ValueError:
            qids = []
        if not sep or not broker or not qids or any(q < 0 for q in qids):
            raise UsageError(
                f"--config-queues {spec!r}: expected [TOPIC/]BROKER:QID[,QID...], e.g. broker-a:0,1"
            )
        out += [(topic if slash else None, broker, q) for q in qids]
    return tuple(out)


def build_strategy(
    name: str,
    *,
    virtual_nodes: int = 10,
    consumer_idcs: Sequence[str] = (),
    delegate: str = "AVG",
    broker_rooms: Mapping[str, str] | None = None,
    consumer_rooms: Mapping[str, str] | None = None,
    config_queues: Sequence[str] = (),
) -> Strategy:
    key = name.strip().upper()
    if key == "MACHINE_ROOM_NEARBY":
        if delegate.strip().upper() == "MACHINE_ROOM_NEARBY":
            raise UsageError("--delegate cannot be MACHINE_ROOM_NEARBY itself")
        inner = build_strategy(
            delegate, virtual_nodes=virtual_nodes, consumer_idcs=consumer_idcs, config_queues=config_queues
        )
        return MachineRoomNearby(inner, RoomResolver(dict(broker_rooms or {}), dict(consumer_rooms or {})))
    if key == "AVG":
        return Averagely()
    if key == "AVG_BY_CIRCLE":
        return AveragelyByCircle()
    if key == "CONSISTENT_HASH":
        return ConsistentHash(virtual_nodes)
    if key == "MACHINE_ROOM":
        if not consumer_idcs:
            raise UsageError("MACHINE_ROOM needs --consumer-idcs IDC[,IDC...]")
        return ByMachineRoom(frozenset(consumer_idcs))
    if key == "CONFIG":
        if not config_queues:
            raise UsageError("CONFIG needs --config-queues [TOPIC/]BROKER:QID[,QID...]")
        return ByConfig(parse_config_queues(config_queues))
    raise UsageError(f"unknown strategy {name!r}", f"one of {', '.join(STRATEGY_NAMES)}")
