"""--watch of a broadcasting group (ops/watch/broadcast.py) on the in-memory backend: the clients'
files are read again every sample, each client has its own window (statuses, rates), and a
--history file's samples of a client start that client's window only."""

from __future__ import annotations

from pathlib import Path

from mqctl_testkit.broadcast_store import A0, A1, B0, B1, write_client
from mqctl_testkit.memory_backend import MemoryBackend, Queue

from mqctl.model import Rules, TopicConfig
from mqctl.ops.watch import codec
from mqctl.ops.watch.broadcast import BroadcastSampler
from mqctl.ops.watch.history import append_line, read_history

G, T = "GroupBc", "TopicBc"
NOW = 10_000_000


def backend() -> MemoryBackend:
    topics = {"broker-a": {T: TopicConfig(T, 3, 3)}, "broker-b": {T: TopicConfig(T, 2, 2)}}
    q = [(1000 + i, None) for i in range(10)]
    queues = {
        (b, T, n): Queue(list(q))
        for b, n in (("broker-a", 0), ("broker-a", 1), ("broker-b", 0), ("broker-b", 1))
    }
    return MemoryBackend(topics, queues, {}, groups={"broker-a": [G]})


def test_each_client_gets_its_own_window_from_files_read_every_sample(tmp_path: Path) -> None:
    root = tmp_path / "hosts"
    a = {A0: 1, A1: 1, B0: 1, B1: 1}
    write_client(root, "hostA", "192.0.2.2@bcA", a)
    write_client(root, "hostB", "192.0.2.2@bcB", {A0: 10, A1: 10, B0: 10, B1: 10})
    s = BroadcastSampler(backend(), G, None, Rules(window=5), [root])
    first = s.take(NOW)
    assert [(t.view.sample.client, t.view.lag) for t in first.each] == [
        ("hostA/192.0.2.2@bcA", 36),
        ("hostB/192.0.2.2@bcB", 0),
    ]
    assert any("rewrites its offsets.json every 5 s" in w for w in first.warnings)
    write_client(root, "hostA", "192.0.2.2@bcA", {q: 6 for q in a})  # bcA consumed 5 per queue in 5 s
    second = s.take(NOW + 5000)
    ta = second.each[0]
    assert ta.view.lag == 16 and ta.view.rates.consume == 4.0  # 20 messages in 5 s
    assert second.each[1].view.rates.consume == 0.0
    write_client(root, "hostA", "192.0.2.2@bcA", {q: 2 for q in a})  # reset backwards
    third = s.take(NOW + 10_000)
    assert third.each[0].view.status == "REWIND" and third.each[1].view.status == "OK"


def test_history_samples_start_only_their_own_clients_window(tmp_path: Path) -> None:
    root = tmp_path / "hosts"
    write_client(root, "hostA", "192.0.2.2@bcA", {A0: 1, A1: 1, B0: 1, B1: 1})
    history = tmp_path / "h.jsonl"
    s = BroadcastSampler(backend(), G, None, Rules(window=5), [root])
    for t in s.take(NOW).each:
        append_line(history, codec.sample_line(t.view))
    (seeded,), _ = read_history(history, G, None, 10, client="hostA/192.0.2.2@bcA")
    assert seeded.client == "hostA/192.0.2.2@bcA" and read_history(history, G, None, 10)[0] == []
    again = BroadcastSampler(backend(), G, None, Rules(window=5), [root], history=history)
    assert again.take(NOW + 20_000).each[0].view.samples == 2
