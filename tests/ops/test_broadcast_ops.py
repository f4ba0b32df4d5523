"""ops/broadcast against the in-memory backend (mqctl_testkit.broadcast_store.memory_world, every
value worked out by hand there): a broadcasting group's model, each client's progress from its
file, the gates on the worst client."""

from __future__ import annotations

import pytest
from mqctl_testkit.broadcast_store import A0, A1, A2, B0, B1, BC_A, BC_B, GROUP, MINUTE, T0, TOPIC, messages
from mqctl_testkit.broadcast_store import memory_world as world
from mqctl_testkit.cli import NOW_MS
from mqctl_testkit.memory_backend import MemoryBackend, Queue

from mqctl.errors import BrokersFailedError, CheckFailedError
from mqctl.model import BrokerFailure, GroupProgress, MessageQueue, parse_subexpr
from mqctl.model.broadcast import (
    BROADCASTING,
    FROM_CLIENTS,
    FROM_FLAG,
    FROM_PULL_OFFSETS,
    BroadcastProgress,
    ClientOffsets,
    ClientProgress,
)
from mqctl.ops import broadcast
from mqctl.ops.progress import Gates

NOW = NOW_MS
G, T, A, B, MIN = GROUP, TOPIC, "broker-a", "broker-b", MINUTE


def client(
    name: str, offsets: dict[MessageQueue, int], *, mtime: int | None = NOW - 10_000, path: str = ""
) -> ClientOffsets:
    cid = f"192.0.2.2@{name}"
    return ClientOffsets(
        G,
        cid,
        f"host{name}",
        path or f"/x/{name}/offsets.json",
        path or f"/x/{name}/offsets.json",
        mtime,
        tuple(offsets.items()),
    )


def progress(backend: MemoryBackend, clients: list[ClientOffsets], **kw) -> BroadcastProgress:  # type: ignore[no-untyped-def]
    return broadcast.client_progress(backend, G, clients, now_ms=NOW, **kw)


# ------------------------------------------------------------------ which model


def test_live_clients_say_broadcasting() -> None:
    m = broadcast.group_model(world(), G, None, rows=[])
    assert m is not None and m.model == BROADCASTING and m.source == FROM_CLIENTS
    assert [c.client_id for c in m.clients] == ["192.0.2.2@bcA", "192.0.2.3@bcC"]
    assert m.subscriptions == (T,)


def test_clustering_groups_are_left_alone() -> None:
    assert broadcast.group_model(world("CLUSTERING"), G, None, rows=[]) is None
    b = world()
    # committed progress on the brokers: a clustering group's; the clients are not even asked
    from mqctl.model import ProgressRow

    row = ProgressRow(T, A, 0, 10, 3, 0, 0)
    assert broadcast.group_model(b, G, None, rows=[row]) is None
    assert b.calls["consumer_connection"] == 0
    assert broadcast.group_model(b, G, "CLUSTERING") is None and b.calls["consumer_connection"] == 0


def test_offline_the_brokers_broadcast_entries_or_the_users_word() -> None:
    b = world(None)  # no connections: the memory backend answers NotAvailable, as a store
    assert broadcast.group_model(b, G, None, rows=[]) is None
    b.broadcast_pulls = {G: {A0: 4, B0: 9}, "Other": {A1: 1}}
    m = broadcast.group_model(b, G, None, rows=[])
    assert m is not None and m.source == FROM_PULL_OFFSETS and m.pull_offsets == ((A0, 4), (B0, 9))
    b.broadcast_pulls = {}
    m = broadcast.group_model(b, G, "BROADCASTING")
    assert m is not None and m.source == FROM_FLAG and m.clients == ()


# ------------------------------------------------------------------ each client's progress


def test_each_clients_rows_lag_and_lag_time() -> None:
    p = progress(world(), [client("bcA", BC_A), client("bcB", BC_B)])
    a, b = p.clients
    rows = {r.queue: r for r in a.progress.rows}
    assert {q: (r.consumer_offset, r.broker_offset, r.lag) for q, r in rows.items()} == {
        A0: (1, 10, 9),
        A1: (1, 10, 9),
        A2: (0, 0, 0),
        B0: (8, 10, 2),
        B1: (8, 10, 2),
    }
    assert not rows[A2].committed and rows[A0].committed  # no entry in the file: none
    assert a.progress.diff_total == 22 and b.progress.diff_total == 0
    # oldest unconsumed: message 1 of a0 (T0 + 1 min); last consumed: message 0 (1000)
    assert rows[A0].lag_ms == NOW - (T0 + MIN) and rows[A0].last_timestamp == T0
    assert rows[B0].lag_ms == NOW - (T0 + 8 * MIN)
    assert a.progress.max_lag_ms == NOW - (T0 + MIN)
    assert {r.client_ip for r in a.progress.rows} == {"hostbcA/192.0.2.2@bcA"}
    assert p.worst is a and [c.client.instance_name for c in p.ranked] == ["bcA", "bcB"]


def test_store_times_are_asked_once_for_all_clients() -> None:
    b = world()
    progress(b, [client("bcA", BC_A), client("bcA2", BC_A), client("bcB", BC_B)])
    assert b.calls["store_times"] == 1


def test_tag_filtered_lag() -> None:
    p = progress(world(), [client("bcA", BC_A), client("bcB", BC_B)], tags=parse_subexpr("TagA"))
    a, b = p.clients
    # TagA at even offsets: a0, a1 in [1, 10): 2 4 6 8; b0, b1 in [8, 10): 8
    assert {r.queue: r.matched_diff for r in a.progress.rows} == {A0: 4, A1: 4, A2: 0, B0: 1, B1: 1}
    assert a.lag == 10 and b.lag == 0 and p.worst is a


def test_live_connected_clients_and_the_ones_without_a_file() -> None:
    p = progress(world(), [client("bcA", BC_A), client("bcB", BC_B)])
    assert [c.connected for c in p.clients] == [True, False]
    assert [c.client_id for c in p.unseen] == ["192.0.2.3@bcC"]
    off = world(None)  # a backend that cannot tell who is online (as a store)
    assert progress(off, [client("bcA", BC_A)]).clients[0].connected is None
    nobody = world()
    nobody.connections = {"Other": nobody.connections[G]}  # live, the group has nobody online
    p = progress(nobody, [client("bcA", BC_A)])
    assert p.clients[0].connected is False and p.unseen == ()


def test_a_file_not_written_for_longer_than_stale_after_is_stale() -> None:
    cs = [client("bcA", BC_A, mtime=NOW - 6 * MIN), client("bcB", BC_B, mtime=NOW - 4 * MIN)]
    p = progress(world(), cs)
    assert [c.stale for c in p.clients] == [True, False] and [c.age_ms for c in p.clients] == [
        6 * MIN,
        4 * MIN,
    ]
    assert [c.stale for c in progress(world(), cs, stale_after_ms=7 * MIN).clients] == [False, False]


def test_a_queue_the_file_does_not_name_counts_from_min() -> None:
    b = world()
    b.queues[(B, T, 1)] = Queue(messages()[3:], min=3)  # offsets 3..9
    p = progress(b, [client("bcA", {A0: 10, A1: 10, B0: 10})])
    rows = {r.queue: r for r in p.clients[0].progress.rows}
    assert (rows[B1].committed, rows[B1].consumer_offset, rows[B1].lag) == (False, 0, 10)
    # lag counts from min, lag time from the first message that exists (offset 3)
    assert rows[B1].lag_ms == NOW - (T0 + 3 * MIN)


def test_offsets_of_queues_no_broker_serves_are_named() -> None:
    gone = MessageQueue(T, A, 7)
    p = progress(world(), [client("bcA", {**BC_A, gone: 5})])
    assert gone not in {r.queue for r in p.clients[0].progress.rows}
    assert any("no broker serves (TopicBc/broker-a/7)" in w for w in p.warnings)


# ------------------------------------------------------------------ verdict


def test_gates_judge_every_client_and_name_the_worst() -> None:
    p = progress(world(), [client("bcB", BC_B), client("bcA", BC_A)])
    broadcast.verdict(p, Gates(22, None))
    with pytest.raises(
        CheckFailedError, match=r"diff total 22 > 21 \(group GroupBc, client hostbcA/192.0.2.2@bcA\)"
    ):
        broadcast.verdict(p, Gates(21, None))
    with pytest.raises(CheckFailedError, match="client hostbcA"):
        broadcast.verdict(p, Gates(None, 58 * MIN))


def test_brokers_that_did_not_answer_come_first() -> None:
    p = progress(world(), [client("bcA", BC_A)])
    failed = BroadcastProgress(
        p.group, p.clients, p.now_ms, p.stale_after_ms, failures=(BrokerFailure(B, None, "down"),)
    )
    with pytest.raises(BrokersFailedError):
        broadcast.verdict(failed, Gates(10**9, None))


def test_a_store_time_that_cannot_be_read_fails_after_the_gates() -> None:
    from mqctl.errors import StoreCorruptError
    from mqctl.model import ProgressRow

    row = ProgressRow(T, A, 0, 10, 1, 0, 0, lag_ms=None, oldest_unconsumed_timestamp=None)
    cp = ClientProgress(client("bcA", BC_A), GroupProgress(G, [row], NOW), 0, False)
    with pytest.raises(StoreCorruptError):
        broadcast.verdict(BroadcastProgress(G, (cp,), NOW, 1), Gates(10**9, None))


def test_a_topic_gone_from_the_brokers_is_said_and_an_unknown_group_or_topic_is_not_found() -> None:
    from mqctl.errors import NotFoundError

    gone = MessageQueue("TopicGone", A, 0)
    p = progress(world(), [client("bcA", {**BC_A, gone: 3})])
    assert (
        gone not in {r.queue for r in p.clients[0].progress.rows} and p.clients[0].progress.diff_total == 22
    )
    assert any("TopicGone (in the clients' files) is on no broker" in w for w in p.warnings)
    with pytest.raises(NotFoundError):
        broadcast.client_progress(world(), "GroupNobodyKnows", [client("bcA", BC_A)], now_ms=NOW)
    with pytest.raises(NotFoundError):
        broadcast.client_progress(world(), G, [client("bcA", BC_A)], "TopicGone", now_ms=NOW)
