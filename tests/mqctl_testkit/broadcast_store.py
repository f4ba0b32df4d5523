"""A broadcasting group's world for tests: a real-format store of two brokers and the offsets.json
of two client instances gathered from two hosts, with every fact computed by hand below.

Topic TopicBc: broker-a queues 0..2, broker-b queues 0..1; %RETRY%GroupBc on both (a consumer's
heartbeat creates it, whatever its model); subscription group GroupBc; no committed offset of
GroupBc anywhere (a broadcasting group commits none).

Messages: 10 on each of a0, a1, b0, b1 (queue offsets 0..9), none on a2. The i-th message of a
queue is stored at ``T0 + i * MINUTE`` (T0 = NOW_MS - 1 h) with tag ``TagA`` when i is even,
``TagB`` when odd.

Clients (``clients(root)``): ``hostA/.rocketmq_offsets/192.0.2.2@bcA/GroupBc/offsets.json`` holds
a0 = 1, a1 = 1, b0 = 8, b1 = 8 (no a2 entry); ``hostB/.../192.0.2.2@bcB/...`` a0..b1 = 10, a2 = 0.
So bcA's lag is 9 + 9 + 2 + 2 = 22 (a2 empty: 0), TagA lag 4 + 4 + 1 + 1 = 10 (even offsets in
[1, 10): 2,4,6,8; in [8, 10): 8), its oldest unconsumed message is a0/a1 offset 1, stored at
T0 + 1 min: lag time 59 min; bcB's lag is 0.

``memory_world``: the same cluster as a ``MemoryBackend`` (the in-memory Protocol), live, with the
group's clients bcA and bcC online when ``model`` is given.
"""

from __future__ import annotations

import os
from pathlib import Path

from mqctl.model import Connection, ConsumerConnection, MessageQueue, Subscription, TopicConfig
from mqctl.store.clientoffsets import FASTJSON2, client_order, encode_client_offsets
from mqctl.store.writer import StoreWriter
from mqctl_testkit.cli import NOW_MS
from mqctl_testkit.memory_backend import MemoryBackend, Queue

GROUP = "GroupBc"
TOPIC = "TopicBc"
MINUTE = 60_000
T0 = NOW_MS - 60 * MINUTE
A0, A1, A2 = (MessageQueue(TOPIC, "broker-a", q) for q in range(3))
B0, B1 = (MessageQueue(TOPIC, "broker-b", q) for q in range(2))
BC_A = {A0: 1, A1: 1, B0: 8, B1: 8}
BC_B = {A0: 10, A1: 10, A2: 0, B0: 10, B1: 10}
LAG_A, TAG_A_LAG_A = 22, 10
LAG_TIME_A = 59 * MINUTE


def build_stores(base: Path, *, broadcast_keys: bool = False) -> dict[str, Path]:
    """The two brokers' stores; ``broadcast_keys``: a 5.1+ broker's topic@group@broadcast entries
    (pull positions a0 = 4, a1 = 4, a2 = 0 on broker-a; b0 = 9, b1 = 9 on broker-b)."""
    stores = {}
    for name, queues in (("broker-a", 3), ("broker-b", 2)):
        w = StoreWriter(base / name, broker_name=name, commitlog_file_size=64 * 1024, cq_file_size=200)
        w.create_topic(TOPIC, queues=queues)
        w.create_topic(f"%RETRY%{GROUP}", queues=1)
        w.create_group(GROUP)
        for i in range(10):
            for qid in range(2):
                w.put(
                    TOPIC, qid, b"m", tags="TagA" if i % 2 == 0 else "TagB", store_timestamp=T0 + i * MINUTE
                )
        if broadcast_keys:
            for qid, off in enumerate((4, 4, 0) if name == "broker-a" else (9, 9)):
                w.commit_offset(f"{GROUP}@broadcast", TOPIC, qid, off)
        w.close()
        stores[name] = base / name
    return stores


def write_client(
    root: Path, host: str, client_id: str, offsets: dict[MessageQueue, int], *, age_ms: int = 0
) -> Path:
    """A client's file as the client writes it (fastjson2), modified ``age_ms`` before NOW_MS."""
    path = root / host / ".rocketmq_offsets" / client_id / GROUP / "offsets.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(encode_client_offsets(client_order(offsets.items()), FASTJSON2))
    t = (NOW_MS - age_ms) / 1000
    os.utime(path, (t, t))
    return path


def clients(root: Path, *, age_a_ms: int = 10_000, age_b_ms: int = 10_000) -> dict[str, Path]:
    return {
        "bcA": write_client(root, "hostA", "192.0.2.2@bcA", BC_A, age_ms=age_a_ms),
        "bcB": write_client(root, "hostB", "192.0.2.2@bcB", BC_B, age_ms=age_b_ms),
    }


def messages() -> list[tuple[int, str | None]]:
    """The 10 messages of a0, a1, b0, b1: (store time, tag)."""
    return [(T0 + i * MINUTE, "TagA" if i % 2 == 0 else "TagB") for i in range(10)]


def memory_world(model: str | None = "BROADCASTING") -> MemoryBackend:
    """The cluster in memory; ``model``: GroupBc online with that message model (clients
    192.0.2.2@bcA and 192.0.2.3@bcC, subscribing TopicBc); None: nobody online, and the backend
    answers connections as a store does (not available)."""
    retry = f"%RETRY%{GROUP}"
    topics = {
        "broker-a": {TOPIC: TopicConfig(TOPIC, 3, 3), retry: TopicConfig(retry, 1, 1)},
        "broker-b": {TOPIC: TopicConfig(TOPIC, 2, 2)},
    }
    queues = {(q.broker_name, TOPIC, q.queue_id): Queue(messages()) for q in (A0, A1, B0, B1)}
    conns = {}
    if model is not None:
        online = (
            Connection("192.0.2.2@bcA", "192.0.2.2:1", "JAVA", 479),
            Connection("192.0.2.3@bcC", "192.0.2.3:2", "JAVA", 479),
        )
        subs = (Subscription(TOPIC, "*"),)
        conns = {GROUP: ConsumerConnection(GROUP, online, subs, "CONSUME_PASSIVELY", model)}
    groups = {"broker-a": [GROUP], "broker-b": [GROUP]}
    return MemoryBackend(topics, queues, {}, groups=groups, connections=conns)
