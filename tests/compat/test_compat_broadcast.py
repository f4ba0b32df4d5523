"""Broadcasting consumers on a real cluster: the offsets.json each client keeps, read by mqctl.

Two real broadcasting Java consumers per group (java/BroadcastConsumer.java: different instance
names, each with its own ``rocketmq.client.localOffsetStoreDir`` as if on its own host) consume
part of TopicBroadcast and stop; one group subscribes ``*``, the other ``TagA``. mqctl's reader
(backends/clientoffsets over the gathered ``HOST/.rocketmq_offsets`` tree) must give, per client
and queue, exactly what that consumer received (counted by the consumer itself), and the codec
must re-encode every real file byte for byte. Then one stopped client's file is rewritten by
mqctl's writer (store/clientwrite): restarted, that client receives exactly the messages from the
new offsets on, the other client's file is untouched, and while it runs the writer refuses.
The same through the command line: ``consumerProgress --client-offsets`` (store and live) per
client, plain and ``--tags``; what the brokers say of the group without the files; a cut-short
file and its ``.bak``; ``resetOffsetByTime --client-offsets ... --execute`` by time, ``--undo``
byte-equal, the reset again, and the restarted client receives exactly the messages from the
target on, while a live reset refuses it as long as it is connected.
"""

from __future__ import annotations

import json
import subprocess
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


# ------------------------------------------------------------------ mqctl's commands on the real files


def _mqctl(cluster: RocketMQ, *args: str, live: bool = False) -> subprocess.CompletedProcess[str]:
    """mqctl on the brokers' stores, or (``live``) on the running cluster through its name server."""
    return cluster.mqctl(*args, "-n", cluster.namesrv_addr, stores=[]) if live else cluster.mqctl(*args)


def _rows(doc: dict, client_id: str) -> dict[Key, dict]:
    (client,) = [c for c in doc["clients"] if c["clientId"] == client_id]
    return {(x["brokerName"], x["queueId"]): x for x in client["rows"]}


@pytest.mark.parametrize("live", [False, True], ids=["store", "live"])
def test_consumer_progress_per_client_equals_what_each_consumer_received(
    cluster: RocketMQ, broadcast: dict, live: bool
) -> None:
    root = str(broadcast["sc"].root)
    r = _mqctl(
        cluster, "consumerProgress", "-g", "GroupBcast", "--client-offsets", root, "-o", "json", live=live
    )
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    times = {(m.broker, m.queue_id, m.offset): m.store_timestamp for m in broadcast["runs"]["bcP2"].received}
    for name in ("bcP1", "bcP2"):
        run = broadcast["runs"][name]
        rows, got = _rows(doc, run.client_id), run.per_queue()
        for b, q in QUEUES:
            n = got[(b, q)]  # consumed 0 .. n-1, counted by the consumer itself
            row = rows[(b, q)]
            assert (row["consumerOffset"], row["brokerOffset"], row["lag"]) == (n, PER_QUEUE, PER_QUEUE - n)
            # the oldest unconsumed message's store time, as the consumer that got it printed it
            assert row["oldestUnconsumedTimestamp"] == (times[(b, q, n)] if n < PER_QUEUE else 0)
        assert rows[("broker-a", 2)]["lag"] == 0  # the empty queue
        (client,) = [c for c in doc["clients"] if c["clientId"] == run.client_id]
        assert client["totals"]["diff"] == len(broadcast["sent"]) - len(run.received)
        assert client["connected"] is (False if live else None)  # stopped: not in the broker's list
    assert doc["totals"]["worstClient"].endswith(broadcast["runs"]["bcP1"].client_id)


@pytest.mark.parametrize("live", [False, True], ids=["store", "live"])
def test_tag_filtered_lag_per_client_equals_what_each_consumer_did_not_receive(
    cluster: RocketMQ, broadcast: dict, live: bool
) -> None:
    root = str(broadcast["sc"].root)
    args = ("-g", "GroupBcastTags", "--client-offsets", root, "--tags", "TagA", "-o", "json")
    r = _mqctl(cluster, "consumerProgress", *args, live=live)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    sent_a = _by_queue([m for m in broadcast["sent"] if m.tag == "TagA"])
    for name in ("bcT1", "bcT2"):
        run = broadcast["runs"][name]
        rows, got = _rows(doc, run.client_id), run.per_queue()
        for b, q in QUEUES:
            # every TagA message it did not receive is still ahead of its offset
            assert rows[(b, q)]["matchedDiff"] == len(sent_a[(b, q)]) - got[(b, q)], (name, b, q)
    worst = [c for c in doc["clients"] if c["clientId"] == broadcast["runs"]["bcT1"].client_id][0]
    assert doc["totals"]["worstMatchedDiff"] == worst["totals"]["matchedDiff"] > 0


def test_the_brokers_keep_no_progress_for_the_group(cluster: RocketMQ, broadcast: dict) -> None:
    said = cluster.mqctl("consumerProgress", "-g", "GroupBcast", "--model", "broadcasting", "-o", "json")
    assert said.returncode == 7 and json.loads(said.stdout)["progressOn"] == "clients", said.stderr
    if not cluster.version.at_least(5, 1):
        r = cluster.mqctl("consumerProgress", "-g", "GroupBcast", "-o", "json")
        assert r.returncode == 0 and json.loads(r.stdout)["rows"] == []  # 4.x keeps nothing at all
        return
    # 5.1+: the brokers' topic@group@broadcast entries (flushed every few seconds) say it
    deadline = time.monotonic() + 30
    while True:
        r = cluster.mqctl("consumerProgress", "-g", "GroupBcast", "-o", "json")
        if r.returncode == 7 or time.monotonic() > deadline:
            break
        time.sleep(2)
    assert r.returncode == 7, r.stdout + r.stderr
    doc = json.loads(r.stdout)
    assert (
        doc["modelFrom"] == "topic@group@broadcast"
        and "not a committed offset" in doc["brokerPullOffsets"]["note"]
    )
    assert all(0 <= x["pullOffset"] <= PER_QUEUE for x in doc["brokerPullOffsets"]["queues"])


def test_unreadable_client_files_follow_the_broker_files_rules(
    cluster: RocketMQ, broadcast: dict, tmp_path: Path
) -> None:
    run = broadcast["runs"]["bcP2"]
    real = broadcast["clients"]["bcP2"].offsets_path(run.client_id)
    copy = tmp_path / "h" / ".rocketmq_offsets" / run.client_id / "GroupBcast" / "offsets.json"
    copy.parent.mkdir(parents=True)
    good = real.read_bytes()
    copy.with_name("offsets.json.bak").write_bytes(good)
    copy.write_bytes(good[: len(good) // 2])  # cut short: the client reads its .bak
    r = cluster.mqctl("consumerProgress", "-g", "GroupBcast", "--client-offsets", str(copy), "-o", "json")
    assert r.returncode == 0 and ".bak" in r.stderr
    assert json.loads(r.stdout)["clients"][0]["totals"]["diff"] == 0
    copy.with_name("offsets.json.bak").unlink()
    for gate in ([], ["--max-lag", "1000000"]):
        bad = cluster.mqctl(
            "consumerProgress", "-g", "GroupBcast", "--client-offsets", str(copy), *gate, "-o", "json"
        )
        assert bad.returncode == 6 and str(copy) in bad.stderr and bad.stdout == ""


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


def _targets(cluster: RocketMQ, times: dict[tuple[str, int, int], int], ts: int) -> dict[Key, int]:
    """Each queue's offset for ``ts`` by the broker line's rule: 5.x the first message stored at
    or after it (else max); 4.9.7 the message nearest it, ties to the earlier."""
    out = {}
    for b, q in QUEUES:
        stored = [(o, times[(b, q, o)]) for o in range(PER_QUEUE)]
        if cluster.version.legacy:
            out[(b, q)] = min(stored, key=lambda ot: (abs(ot[1] - ts), ot[0]))[0]
        else:
            out[(b, q)] = next((o for o, t in stored if t >= ts), PER_QUEUE)
    return out


def test_cli_reset_undo_then_restart_of_one_stopped_client(
    cluster: RocketMQ, broadcast: dict, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MQCTL_JOURNAL_DIR", str(tmp_path / "journal"))
    p1: BroadcastClient = broadcast["clients"]["bcP1"]
    path = p1.offsets_path(broadcast["runs"]["bcP1"].client_id)
    p2_file = broadcast["clients"]["bcP2"].offsets_path(broadcast["runs"]["bcP2"].client_id)
    p2_before = p2_file.read_bytes()
    times = {(m.broker, m.queue_id, m.offset): m.store_timestamp for m in broadcast["runs"]["bcP2"].received}
    ts = times[("broker-a", 0, 6)]
    target = _targets(cluster, times, ts)
    args = [
        "resetOffsetByTime",
        "-g",
        "GroupBcast",
        "-t",
        TOPIC,
        "-s",
        str(ts),
        "--client-offsets",
        str(path),
    ]
    args += ["--persist-interval", f"{PERSIST_MS}ms", "--output", "json"]
    settle = 2 * PERSIST_MS / 1000 + 0.5  # the last write must be older than two persist intervals
    time.sleep(settle)
    before = path.read_bytes()
    r = cluster.mqctl(*args, "--execute")
    assert r.returncode == 0, r.stderr
    rows = {
        (x["brokerName"], x["queueId"]): x["targetOffset"] for x in json.loads(r.stdout)["clients"][0]["rows"]
    }
    assert {k: v for k, v in rows.items() if k in target} == target
    assert {
        (mq.broker_name, mq.queue_id): o
        for mq, o in decode_client_offsets(path.read_bytes()).entries
        if (mq.broker_name, mq.queue_id) in target
    } == target
    time.sleep(settle)
    undo = cluster.mqctl("resetOffsetByTime", "--undo", "latest", "--execute", "--output", "json")
    assert undo.returncode == 0, undo.stderr
    assert path.read_bytes() == before  # byte-equal
    time.sleep(settle)
    assert cluster.mqctl(*args, "--execute").returncode == 0
    expected = {(b, q, o) for (b, q), start in target.items() for o in range(start, PER_QUEUE)}
    stop = broadcast["sc"].root / "stop-bcP1-cli"
    p1.start(stop=str(stop), idle="0")
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and p1.printed().count("RECV ") < len(expected):
            time.sleep(0.3)
        # while it runs: the broker lists it (the group is said to broadcast), a reset refuses it
        live = _mqctl(cluster, "consumerProgress", "-g", "GroupBcast", "-o", "json", live=True)
        assert live.returncode == 7, live.stderr
        assert broadcast["runs"]["bcP1"].client_id in [
            c["clientId"] for c in json.loads(live.stdout)["connected"]
        ]
        refused = _mqctl(cluster, *args[:-2], "--execute", live=True)
        assert refused.returncode == 5 and "connected to the brokers" in refused.stderr
    finally:
        stop.touch()
    run = p1.finish(timeout=60)
    assert {(m.broker, m.queue_id, m.offset) for m in run.received} == expected
    assert len(run.received) == len(expected)
    assert p2_file.read_bytes() == p2_before
    print(f"\nbroadcast scenario {cluster.version}: {time.monotonic() - broadcast['t0']:.0f} s")
