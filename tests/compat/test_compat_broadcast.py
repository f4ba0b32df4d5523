"""Broadcasting consumers on a real cluster: the offsets.json each client keeps, read by mqctl.

Two real broadcasting Java consumers per group (java/BroadcastConsumer.java: different instance
names, each with its own ``rocketmq.client.localOffsetStoreDir`` as if on its own host) consume
part of TopicBroadcast and stop; one group subscribes ``*``, the other ``TagA``. mqctl's reader
(backends/clientoffsets over the gathered ``HOST/.rocketmq_offsets`` tree) must give, per client
and queue, exactly what that consumer received (counted by the consumer itself), and the codec
must re-encode every real file byte for byte. Then one stopped client's file is rewritten by
mqctl's writer (store/clientwrite): restarted, that client receives exactly the messages from the
new offsets on, the other client's file is untouched, and while it runs the writer refuses.
"""

from __future__ import annotations

import time
from collections import defaultdict
from pathlib import Path

import pytest
from compat_harness import Received, RocketMQ, Sent
from matrix_broadcast import BroadcastClient, BroadcastRun

from mqctl.backends.clientoffsets import read_client_offsets
from mqctl.errors import RefusedError
from mqctl.model import MessageQueue
from mqctl.store.clientoffsets import FASTJSON, FASTJSON2, decode_client_offsets, encode_client_offsets
from mqctl.store.clientwrite import ClientOffsetsWrite

pytestmark = pytest.mark.compat

TOPIC = "TopicBroadcast"
QUEUES = (("broker-a", 0), ("broker-a", 1), ("broker-b", 0), ("broker-b", 1))  # broker-a 2: empty
PER_QUEUE = 15
TAGS = ("TagA", "TagB", None)
PERSIST_MS = 1000  # the clients persist every second (default 5 s) to keep the scenario short
Key = tuple[str, int]


def _plan() -> list[str]:
    n = PER_QUEUE * len(QUEUES)
    return [f"send {TAGS[i % 3] or '-'} bc-{i} {QUEUES[i % 4][1]} {QUEUES[i % 4][0]}" for i in range(n)]


def _by_queue(msgs: list[Received] | list[Sent]) -> dict[Key, set[int]]:
    out: dict[Key, set[int]] = defaultdict(set)
    for m in msgs:
        out[(m.broker, m.queue_id)].add(m.offset)
    return out


def _layout(cluster: RocketMQ) -> str:
    # The client line's JSON library: fastjson up to 5.3, fastjson2 from 5.5 (the 5.5.1 cell's
    # client is 5.5.0 on the 5.5.1 remoting jar).
    return FASTJSON2 if cluster.version.at_least(5, 5) else FASTJSON


class Scenario:
    def __init__(self, cluster: RocketMQ, root: Path) -> None:
        self.cluster = cluster
        self.root = root  # gathered copies: root/<host>/.rocketmq_offsets/<clientId>/<group>/

    def client(self, name: str, group: str, subexpr: str) -> BroadcastClient:
        store = self.root / f"host-{name}" / ".rocketmq_offsets"
        return BroadcastClient(self.cluster, TOPIC, group, subexpr, name, store, {"persist": str(PERSIST_MS)})


def _check_file(cluster: RocketMQ, client: BroadcastClient, run: BroadcastRun) -> dict[MessageQueue, int]:
    """The real file re-encodes byte-equal; its offsets equal the consumer's own memory."""
    data = client.offsets_path(run.client_id).read_bytes()
    table = decode_client_offsets(data)
    assert table.dialect == _layout(cluster)
    assert encode_client_offsets(table.entries, _layout(cluster)) == data
    offsets = table.as_dict()
    memory = {MessageQueue(TOPIC, b, q): off for (b, q), off in run.memory_offsets.items() if off >= 0}
    assert offsets == memory
    return offsets


@pytest.fixture(scope="module")
def broadcast(cluster: RocketMQ, tmp_path_factory: pytest.TempPathFactory) -> dict:
    t0 = time.monotonic()
    sent = cluster.produce(TOPIC, _plan())
    sc = Scenario(cluster, tmp_path_factory.mktemp("broadcast-hosts"))
    tag_a = [m for m in sent if m.tag == "TagA"]
    clients = {
        # part of the topic (pull batch 1, paced) and all of it, per group
        "bcP1": (sc.client("bcP1", "GroupBcast", "*"), {"max": "12", "batch": "1", "pace": "30"}),
        "bcP2": (sc.client("bcP2", "GroupBcast", "*"), {"max": str(len(sent))}),
        "bcT1": (sc.client("bcT1", "GroupBcastTags", "TagA"), {"max": "5", "batch": "1", "pace": "30"}),
        "bcT2": (sc.client("bcT2", "GroupBcastTags", "TagA"), {"max": str(len(tag_a))}),
    }
    for c, opts in clients.values():
        c.start(**opts)
    runs = {name: c.finish(timeout=150) for name, (c, _) in clients.items()}
    return {"sc": sc, "sent": sent, "clients": {k: v[0] for k, v in clients.items()}, "runs": runs, "t0": t0}


def test_plain_offsets_equal_what_each_consumer_received(cluster: RocketMQ, broadcast: dict) -> None:
    found = {c.client_id: c for c in read_client_offsets([broadcast["sc"].root], "GroupBcast")}
    for name in ("bcP1", "bcP2"):
        run = broadcast["runs"][name]
        client = broadcast["clients"][name]
        assert found[run.client_id].host == f"host-{name}"
        offsets = dict(found[run.client_id].offsets)
        assert offsets == _check_file(cluster, client, run)
        got = _by_queue(run.received)
        for b, q in QUEUES:
            nxt = offsets.get(MessageQueue(TOPIC, b, q), 0)
            # consumed from the first offset, in order: exactly 0 .. next-1, each once
            assert got.get((b, q), set()) == set(range(nxt)), (name, b, q)
            assert len([m for m in run.received if (m.broker, m.queue_id) == (b, q)]) == nxt
        assert offsets.get(MessageQueue(TOPIC, "broker-a", 2), 0) == 0  # the empty queue
    assert sum(broadcast["runs"]["bcP2"].per_queue().values()) == len(broadcast["sent"])
    assert sum(broadcast["runs"]["bcP1"].per_queue().values()) < len(broadcast["sent"])


def test_tag_filtered_offsets_equal_what_each_consumer_received(cluster: RocketMQ, broadcast: dict) -> None:
    sent_a = _by_queue([m for m in broadcast["sent"] if m.tag == "TagA"])
    found = {c.client_id: c for c in read_client_offsets([broadcast["sc"].root], "GroupBcastTags")}
    for name in ("bcT1", "bcT2"):
        run = broadcast["runs"][name]
        offsets = dict(found[run.client_id].offsets)
        assert offsets == _check_file(cluster, broadcast["clients"][name], run)
        got = _by_queue(run.received)
        assert all(m.tag == "TagA" for m in run.received)
        for b, q in QUEUES:
            nxt = offsets.get(MessageQueue(TOPIC, b, q), 0)
            assert 0 <= nxt <= PER_QUEUE
            # every TagA message below the client's offset was received, none at or above it
            assert got.get((b, q), set()) == {o for o in sent_a[(b, q)] if o < nxt}, (name, b, q)
    assert sum(broadcast["runs"]["bcT2"].per_queue().values()) == sum(len(v) for v in sent_a.values())


def test_a_reset_written_while_stopped_is_where_the_restarted_client_resumes(
    cluster: RocketMQ, broadcast: dict
) -> None:
    p1: BroadcastClient = broadcast["clients"]["bcP1"]
    run1 = broadcast["runs"]["bcP1"]
    p2_file = broadcast["clients"]["bcP2"].offsets_path(broadcast["runs"]["bcP2"].client_id)
    p2_before = p2_file.read_bytes()
    path = p1.offsets_path(run1.client_id)
    target = {
        ("broker-a", 0): 3,
        ("broker-a", 1): 0,
        ("broker-b", 0): PER_QUEUE - 1,
        ("broker-b", 1): PER_QUEUE,
    }
    time.sleep(2 * PERSIST_MS / 1000)  # the client's last write (at shutdown) must be older than the window
    with ClientOffsetsWrite(path, persist_interval_ms=PERSIST_MS) as w:
        w.commit({MessageQueue(TOPIC, b, q): off for (b, q), off in target.items()})
    expected = {(b, q, o) for (b, q), start in target.items() for o in range(start, PER_QUEUE)}

    stop = broadcast["sc"].root / "stop-bcP1"
    p1.start(stop=str(stop), idle="0")
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and p1.printed().count("RECV ") < len(expected):
            time.sleep(0.3)
        # Its first write comes 10 s after start: from then on the writer sees it running.
        started = path.stat().st_mtime
        while time.monotonic() < deadline and path.stat().st_mtime == started:
            time.sleep(0.3)
        with pytest.raises(RefusedError, match="may be running"):
            with ClientOffsetsWrite(path, persist_interval_ms=PERSIST_MS):
                pass
    finally:
        stop.touch()
    run2 = p1.finish(timeout=60)
    assert {(m.broker, m.queue_id, m.offset) for m in run2.received} == expected
    assert len(run2.received) == len(expected)
    offsets = _check_file(cluster, p1, run2)
    assert all(offsets[MessageQueue(TOPIC, b, q)] == PER_QUEUE for b, q in QUEUES)
    assert p2_file.read_bytes() == p2_before  # the other client is untouched
    print(f"\nbroadcast scenario {cluster.version}: {time.monotonic() - broadcast['t0']:.0f} s")
