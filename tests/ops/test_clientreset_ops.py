"""ops/clientreset against the in-memory backend (mqctl_testkit.broadcast_store.memory_world): resets planned
on each client's own offsets, written into its file, journalled and undone byte for byte; never
while the client runs; every target checked against the brokers right before the write."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from mqctl_testkit.broadcast_store import A0, A1, A2, B0, B1, BC_A, BC_B, GROUP, MINUTE, T0, TOPIC, messages
from mqctl_testkit.broadcast_store import memory_world as world
from mqctl_testkit.memory_backend import Queue

from mqctl.errors import RefusedError
from mqctl.model import MessageQueue, Target
from mqctl.model.broadcast import ClientOffsets
from mqctl.ops import clientreset
from mqctl.store.clientoffsets import FASTJSON, client_order, decode_client_offsets, encode_client_offsets

G, T, A, B, MIN = GROUP, TOPIC, "broker-a", "broker-b", MINUTE


def _file(tmp: Path, name: str, offsets: dict[MessageQueue, int], age_s: float = 60) -> ClientOffsets:
    from mqctl.backends.clientoffsets import read_client_offsets

    path = tmp / name / ".rocketmq_offsets" / f"192.0.2.2@{name}" / G / "offsets.json"
    path.parent.mkdir(parents=True)
    path.write_bytes(encode_client_offsets(client_order(offsets.items()), FASTJSON))
    t = time.time() - age_s
    os.utime(path, (t, t))
    (c,) = read_client_offsets([path], G)
    return c


def test_a_reset_by_time_is_planned_on_each_clients_own_offsets(tmp_path: Path) -> None:
    cs = [_file(tmp_path, "bcA", BC_A), _file(tmp_path, "bcB", BC_B)]
    plan = clientreset.plan(world(None), G, T, Target("time", T0 + 4 * MIN), cs)
    by = {
        p.client.instance_name: {
            (r.broker_name, r.queue_id): (r.current_offset, r.target_offset) for r in p.plan.rows
        }
        for p in plan.plans
    }
    assert by["bcA"] == {(A, 0): (1, 4), (A, 1): (1, 4), (A, 2): (-1, 0), (B, 0): (8, 4), (B, 1): (8, 4)}
    assert by["bcB"] == {(A, 0): (10, 4), (A, 1): (10, 4), (A, 2): (0, 0), (B, 0): (10, 4), (B, 1): (10, 4)}
    assert all(p.busy is None for p in plan.plans)


def test_execute_writes_each_file_and_undo_puts_its_bytes_back(tmp_path: Path) -> None:
    cs = [_file(tmp_path, "bcA", BC_A)]
    before = Path(cs[0].path).read_bytes()
    b = world(None)
    plan = clientreset.plan(b, G, T, Target("time", T0 + 4 * MIN), cs)
    record = clientreset.apply(b, plan, persist_interval_ms=1, directory=tmp_path / "journal")
    path = Path(cs[0].path)
    assert decode_client_offsets(path.read_bytes()).as_dict() == {A0: 4, A1: 4, A2: 0, B0: 4, B1: 4}
    assert path.with_name("offsets.json.bak").read_bytes() == before
    assert record.state == "applied" and record.clients[0].before == before
    from mqctl.ops import clientjournal

    again = clientjournal.read(record.id, tmp_path / "journal")
    assert again == record
    time.sleep(0.01)
    undo, restore = clientreset.plan_undo(b, again)
    assert [(r.current_offset, r.target_offset) for r in undo.plans[0].plan.rows if r.queue_id == 2] == [
        (0, -1)
    ]
    clientreset.apply(b, undo, persist_interval_ms=1, restore=restore, directory=tmp_path / "journal")
    assert path.read_bytes() == before


def test_a_connected_client_is_never_written(tmp_path: Path) -> None:
    cs = [_file(tmp_path, "bcA", BC_A)]
    before = Path(cs[0].path).read_bytes()
    b = world()  # 192.0.2.2@bcA is online
    plan = clientreset.plan(b, G, T, Target("earliest"), cs)
    assert "connected to the brokers" in (plan.plans[0].busy or "")
    with pytest.raises(RefusedError, match="is connected to the brokers"):
        clientreset.apply(b, plan, directory=tmp_path / "journal")
    assert Path(cs[0].path).read_bytes() == before and not (tmp_path / "journal").exists()


def test_targets_are_checked_against_the_brokers_right_before_the_write(tmp_path: Path) -> None:
    cs = [_file(tmp_path, "bcA", BC_A)]
    before = Path(cs[0].path).read_bytes()
    b = world(None)
    plan = clientreset.plan(b, G, T, Target("latest"), cs)  # 10 on a0, a1, b0, b1
    b.queues[(A, T, 0)] = Queue(messages()[:5])  # the queue shrank to 5 (recreated) since the plan
    with pytest.raises(RefusedError, match=r"broker-a TopicBc queue 0: 10 is outside 0..6"):
        clientreset.apply(b, plan, directory=tmp_path / "journal")
    assert Path(cs[0].path).read_bytes() == before


def test_a_file_written_moments_ago_belongs_to_a_running_client(tmp_path: Path) -> None:
    cs = [_file(tmp_path, "bcA", BC_A, age_s=1)]
    plan = clientreset.plan(world(None), G, T, Target("earliest"), cs)
    assert "within two persist intervals" in (plan.plans[0].busy or "")
    with pytest.raises(RefusedError, match="may be running"):
        clientreset.apply(world(None), plan, directory=tmp_path / "journal")


def test_a_write_that_stops_part_way_is_partial_and_its_undo_restores_what_landed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mqctl.errors import PartialWriteError
    from mqctl.ops import clientjournal
    from mqctl.store import clientwrite

    cs = [_file(tmp_path, "bcA", BC_A), _file(tmp_path, "bcB", BC_B)]
    before = {c.path: Path(c.path).read_bytes() for c in cs}
    b = world(None)
    plan = clientreset.plan(b, G, T, Target("earliest"), cs)
    seen = []

    def crash(name: str) -> None:
        seen.append(name)
        if name == "bak-partial" and seen.count(name) == 2:  # the second file's write begins
            raise OSError(28, "No space left on device")

    monkeypatch.setattr(clientwrite, "_crash_point", crash)
    with pytest.raises(PartialWriteError, match="1 of 2 client file"):
        clientreset.apply(b, plan, persist_interval_ms=1, directory=tmp_path / "journal")
    monkeypatch.setattr(clientwrite, "_crash_point", lambda name: None)
    a_path, b_path = cs[0].path, cs[1].path
    assert decode_client_offsets(Path(a_path).read_bytes()).as_dict()[A0] == 0  # landed: earliest
    assert Path(b_path).read_bytes() == before[b_path]  # never written
    record = clientjournal.read("latest", tmp_path / "journal")
    assert record.state == "partial" and [c.written for c in record.clients] == [True, False]
    time.sleep(0.01)
    undo, restore = clientreset.plan_undo(b, record)
    assert [p.client.path for p in undo.plans] == [a_path] and "never landed" in undo.notes[0]
    clientreset.apply(b, undo, persist_interval_ms=1, restore=restore, directory=tmp_path / "journal")
    assert {p: Path(p).read_bytes() for p in before} == before
