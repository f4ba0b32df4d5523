"""Data for the live benchmarks, written into a real cluster with the broker's own admin and send
requests over mqctl's remoting client (no JVM): topics (UPDATE_AND_CREATE_TOPIC 17), groups
(UPDATE_AND_CREATE_SUBSCRIPTIONGROUP 200), committed offsets (UPDATE_CONSUMER_OFFSET 15) and
tagged messages in batches (SEND_BATCH_MESSAGE 320, the client's MessageBatch encoding:
MessageDecoder.encodeMessage per message, magic and body CRC left 0 as the client leaves them).
"""

from __future__ import annotations

import json
import struct
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from mqctl.remoting.client import Call, RemotingClient, check  # noqa: E402

SEND_BATCH_MESSAGE = 320
UPDATE_AND_CREATE_TOPIC = 17
UPDATE_AND_CREATE_SUBSCRIPTIONGROUP = 200
UPDATE_CONSUMER_OFFSET = 15
GET_ROUTEINFO_BY_TOPIC = 105
PERM_RW = 6


def broker_addrs(client: RemotingClient, namesrv: str) -> dict[str, str]:
    """Broker name -> master address, from the cluster info (GET_BROKER_CLUSTER_INFO 106)."""
    resp = check(client.call(namesrv, 106), namesrv, "cluster info")
    from mqctl.remoting.bodies import decode_cluster_info

    info = decode_cluster_info(resp.body)
    return {name: b.master_addr for name, b in info.brokers.items() if b.master_addr}


def create_topics(client: RemotingClient, addrs: Sequence[str], topics: Sequence[str], queues: int) -> None:
    calls = [
        Call(
            addr,
            UPDATE_AND_CREATE_TOPIC,
            {
                "topic": t,
                "defaultTopic": "TBW102",
                "readQueueNums": queues,
                "writeQueueNums": queues,
                "perm": PERM_RW,
                "topicFilterType": "SINGLE_TAG",
                "topicSysFlag": 0,
                "order": False,
            },
            timeout=30,
        )
        for t in topics
        for addr in addrs
    ]
    _all_ok(client, calls, "create topic")


def create_groups(client: RemotingClient, addrs: Sequence[str], groups: Sequence[str]) -> None:
    calls = [
        Call(addr, UPDATE_AND_CREATE_SUBSCRIPTIONGROUP, {}, json.dumps({"groupName": g}).encode(), timeout=30)
        for g in groups
        for addr in addrs
    ]
    _all_ok(client, calls, "create group")


def commit(client: RemotingClient, addr: str, group: str, topic: str, offsets: dict[int, int]) -> None:
    calls = [
        Call(
            addr,
            UPDATE_CONSUMER_OFFSET,
            {"consumerGroup": group, "topic": topic, "queueId": q, "commitOffset": o},
        )
        for q, o in offsets.items()
    ]
    _all_ok(client, calls, "commit offset")


def _encode(body: bytes, tag: str | None) -> bytes:
    props = f"TAGS\x01{tag}\x02".encode() if tag else b""
    size = 4 + 4 + 4 + 4 + 4 + len(body) + 2 + len(props)
    return struct.pack(">iiiii", size, 0, 0, 0, len(body)) + body + struct.pack(">h", len(props)) + props


def send_batches(
    client: RemotingClient,
    addr: str,
    broker: str,
    topic: str,
    queue_id: int,
    tags: Iterator[str | None],
    count: int,
    batch: int = 1000,
) -> None:
    """``count`` messages with the given tags into one queue, ``batch`` per request, pipelined."""
    sent = 0
    window: list[Call] = []
    while sent < count:
        n = min(batch, count - sent)
        body = b"".join(_encode(b"m%d" % (sent + i), next(tags)) for i in range(n))
        header = {
            "a": "mqctl-bench-producer",
            "b": topic,
            "c": "TBW102",
            "d": 4,
            "e": queue_id,
            "f": 0,
            "g": int(time.time() * 1000),
            "h": 0,
            "i": "",
            "j": 0,
            "k": False,
            "m": True,
            "n": broker,
        }
        window.append(Call(addr, SEND_BATCH_MESSAGE, header, body, timeout=60))
        sent += n
        if len(window) == 16 or sent == count:
            _all_ok(client, window, "send batch")
            window = []


def _all_ok(client: RemotingClient, calls: Sequence[Call], what: str) -> None:
    for start in range(0, len(calls), 256):
        part = calls[start : start + 256]
        for call, r in zip(part, client.call_many(part)):
            if isinstance(r, Exception):
                raise r
            check(r, call.addr, what)
