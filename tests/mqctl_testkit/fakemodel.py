"""The in-memory cluster the fake name server and brokers of fakecluster.py serve, and the few Java
facts the tests need to work out expected values on their own (never through mqctl's code):
``String.hashCode``, HashSet / ConcurrentHashMap iteration order, commit-log records.

A queue is its messages by queue offset (store time and tag); messages below ``min_offset`` have
expired (their consume-queue units and commit-log records are gone). Each broker's commit log is
built once its address is known (the store host is part of a record).
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass, field

MAGIC_V1 = 0xDAA320A7


# --- Java ------------------------------------------------------------------------------------


def java_hash(s: str) -> int:
    """``String.hashCode``: h = 31 h + each UTF-16 code unit, wrapped to a signed int32."""
    data = s.encode("utf-16-be", "surrogatepass")
    h = 0
    for i in range(0, len(data), 2):
        h = (31 * h + int.from_bytes(data[i : i + 2], "big")) & 0xFFFFFFFF
    return h - (1 << 32) if h >= 1 << 31 else h


def _bucket(h: int, capacity: int) -> int:
    u = h & 0xFFFFFFFF
    return (u ^ (u >> 16)) & (capacity - 1)


def hashset_order(items: list[str]) -> list[str]:
    """A HashSet<String> filled one at a time: capacity 16 doubling while size > 0.75 capacity,
    iterated by bucket, ties in insertion order (mqadmin.md 8.2)."""
    unique = list(dict.fromkeys(items))
    capacity = 16
    while len(unique) > 0.75 * capacity:
        capacity *= 2
    return sorted(unique, key=lambda s: _bucket(java_hash(s), capacity))


def concurrent_hashmap_order(items: list[str]) -> list[str]:
    """A ConcurrentHashMap<String, ...> filled one at a time (mqadmin.md 8.3)."""
    unique = list(dict.fromkeys(items))
    capacity = 16
    while len(unique) >= 0.75 * capacity:
        capacity *= 2
    return sorted(unique, key=lambda s: _bucket(java_hash(s), capacity))


# --- the cluster -----------------------------------------------------------------------------


@dataclass
class Msg:
    store_ts: int
    tags: str | None = None


@dataclass
class Queue:
    msgs: list[Msg] = field(default_factory=list)
    min_offset: int = 0  # units below have expired

    @property
    def max_offset(self) -> int:
        return len(self.msgs)

    def time_at(self, offset: int) -> int | None:
        return self.msgs[offset].store_ts if self.min_offset <= offset < self.max_offset else None

    def search_lower(self, ts: int) -> int:
        """The 5.x broker's LOWER search: the first message stored at or after ``ts``, else max."""
        for off in range(self.min_offset, self.max_offset):
            if self.msgs[off].store_ts >= ts:
                return off
        return self.max_offset


@dataclass
class Topic:
    queues: list[Queue]
    perm: int = 6
    read: int | None = None  # readQueueNums, when not every queue (None: len(queues))
    write: int | None = None  # writeQueueNums, likewise
    static: bool = False  # a 5.x static topic (logical queues: a TopicQueueMappingDetail)

    @property
    def read_nums(self) -> int:
        return len(self.queues) if self.read is None else self.read

    @property
    def write_nums(self) -> int:
        return len(self.queues) if self.write is None else self.write


@dataclass
class Broker:
    name: str
    topics: dict[str, Topic] = field(default_factory=dict)
    offsets: dict[str, dict[str, dict[int, int]]] = field(default_factory=dict)  # group -> topic -> qid
    pulls: dict[str, dict[str, dict[int, int]]] = field(default_factory=dict)  # last pull offsets
    groups: list[str] = field(default_factory=list)  # subscription group configs
    tps: dict[str, float] = field(default_factory=dict)  # group -> consume TPS
    addr: str = ""
    records: dict[int, bytes] = field(default_factory=dict)  # commit-log offset -> record
    phys: dict[tuple[str, int, int], int] = field(default_factory=dict)  # (topic, qid, offset) -> phys
    server_side_reset: bool = True  # 5.x useServerSideResetOffset: 222 with an offset writes the table
    drop_writes: bool = False  # answers offset writes with success and keeps nothing (a broken broker)
    # POP consumers through a proxy leave (group, topic) -> expression in the compensation table
    compensated: dict[tuple[str, str], str] = field(default_factory=dict)

    def build_commitlog(self) -> None:
        """Every live message as a commit-log record, at consecutive physical offsets."""
        host, port = self.addr.rsplit(":", 1)
        pos = 1_000  # a commit log rarely starts at 0 after retention
        self.records.clear()
        self.phys.clear()
        for topic, t in self.topics.items():
            for qid, q in enumerate(t.queues):
                for off in range(q.min_offset, q.max_offset):
                    rec = record(topic, qid, off, pos, q.msgs[off], (host, int(port)))
                    self.records[pos] = rec
                    self.phys[(topic, qid, off)] = pos
                    pos += len(rec)


@dataclass
class Client:
    client_id: str
    addr: str
    owns: list[tuple[str, str, int]]  # (topic, broker, queue id) in its running info's mqTable
    version: int = 479
    language: str = "JAVA"


@dataclass
class Online:
    clients: list[Client]
    subscriptions: dict[str, str]  # topic -> expression
    consume_type: str = "CONSUME_PASSIVELY"
    message_model: str = "CLUSTERING"
    consume_from: str = "CONSUME_FROM_LAST_OFFSET"
    # the brokers its clients send heartbeats to (None: every broker, as where TBW102 is routed)
    heartbeats_to: tuple[str, ...] | None = None


@dataclass
class Cluster:
    brokers: list[Broker]  # in the name server's map order
    online: dict[str, Online] = field(default_factory=dict)
    cq_file_units: int = 10  # units per consume-queue file: 321 answers stop at a file's end
    name: str = "DefaultCluster"

    def broker(self, name: str) -> Broker:
        return next(b for b in self.brokers if b.name == name)

    def topic_names(self) -> list[str]:
        return list(dict.fromkeys(t for b in self.brokers for t in b.topics))


def tags_code(tags: str | None) -> int:
    return java_hash(tags) if tags else 0


def record(topic: str, qid: int, offset: int, phys: int, msg: Msg, store_host: tuple[str, int]) -> bytes:
    """One commit-log record, v1 layout, IPv4 hosts (remoting.md 7.14), written with struct."""
    body = f"{topic}/{qid}/{offset}".encode()
    props = "".join(
        f"{k}\x01{v}\x02" for k, v in (("TAGS", msg.tags), ("UNIQ_KEY", f"ID{phys:020d}")) if v is not None
    ).encode()
    topic_b = topic.encode()
    born_host = bytes([10, 0, 0, 5]) + struct.pack(">i", 50001)
    store = bytes(int(x) for x in store_host[0].split(".")) + struct.pack(">i", store_host[1])
    fields = (
        struct.pack(">I", MAGIC_V1)
        + struct.pack(">i", zlib.crc32(body) & 0x7FFFFFFF)
        + struct.pack(">ii", qid, 0)  # queue id, flag
        + struct.pack(">qq", offset, phys)
        + struct.pack(">i", 0)  # sysFlag: IPv4 hosts, not compressed
        + struct.pack(">q", msg.store_ts - 7)  # born timestamp
        + born_host
        + struct.pack(">q", msg.store_ts)
        + store
        + struct.pack(">iq", 0, 0)  # reconsume times, prepared transaction offset
        + struct.pack(">i", len(body))
        + body
        + struct.pack(">b", len(topic_b))
        + topic_b
        + struct.pack(">h", len(props))
        + props
    )
    return struct.pack(">i", 4 + len(fields)) + fields
