"""Scenarios 4 and 5: ``mqctl resetOffsetByTime --execute`` on broker-a's store refuses while the
broker runs, and on the stopped broker's store writes offsets the restarted broker serves."""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass

import pytest
from compat_harness import Received, RocketMQ, parse_consumer_progress
from matrix_expect import expected_target

pytestmark = pytest.mark.compat

TOPIC, GROUP, BROKER = "TopicOffline", "GroupOffline", "broker-a"
PER_QUEUE_1, PER_QUEUE_2 = 40, 20


@dataclass(frozen=True)
class OfflineData:
    stamps: dict[int, list[int]]  # qid -> store times of phase 1, by offset
    reset_ts: int  # a store time inside phase 1 of queue 0


@pytest.fixture(scope="module")
def offline_data(cluster: RocketMQ) -> OfflineData:
    # GroupOffline consumes phase 1 (40 per queue, past the first CQ file), phase 2 stays unread.
    cluster.produce(
        TOPIC, [f"send TagO p1-{i} {i % 2} {BROKER}" for i in range(2 * PER_QUEUE_1)] + ["sleep 20"]
    )
    got: list[Received] = cluster.consume(TOPIC, GROUP, "*", max_messages=2 * PER_QUEUE_1, idle=20, linger=3)
    cluster.produce(
        TOPIC, ["sleep 20"] + [f"send TagO p2-{i} {i % 2} {BROKER}" for i in range(2 * PER_QUEUE_2)]
    )
    cluster.wait_offsets_flushed()
    stamps: dict[int, dict[int, int]] = defaultdict(dict)
    for m in got:
        stamps[m.queue_id][m.offset] = m.store_timestamp
    flat = {q: [s[i] for i in range(len(s))] for q, s in stamps.items()}
    assert {q: len(s) for q, s in flat.items()} == {0: PER_QUEUE_1, 1: PER_QUEUE_1}
    return OfflineData(flat, flat[0][12])


def _config_snapshot(cluster: RocketMQ) -> dict[str, bytes]:
    config = cluster.brokers[BROKER].store / "config"
    return {p.name: p.read_bytes() for p in sorted(config.iterdir()) if p.name.startswith("consumerOffset")}


def test_execute_refused_while_broker_runs(cluster: RocketMQ, offline_data: OfflineData) -> None:
    """Scenario 5: the broker holds its store lock; mqctl exits 5 and writes nothing."""
    assert cluster.brokers[BROKER].running
    before = _config_snapshot(cluster)
    proc = cluster.mqctl(
        "resetOffsetByTime",
        "-g",
        GROUP,
        "-t",
        TOPIC,
        "-s",
        "0",
        "--execute",
        "--output",
        "json",
        stores=[BROKER],
    )
    after = _config_snapshot(cluster)
    assert proc.returncode == 5, f"exit {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
    # The broker rewrites the file every second with unchanged content; a write by mqctl (offsets
    # to 0) would show here until the broker's next flush.
    assert after == before
    assert "lock" in proc.stderr.lower()


def _served(cluster: RocketMQ) -> dict[int, int]:
    rows, _ = parse_consumer_progress(cluster.consumer_progress(GROUP, TOPIC))
    return {r.queue_id: r.consumer_offset for r in rows if r.topic == TOPIC}


def _offline(cluster: RocketMQ, *args: str) -> None:
    """``mqctl ARGS`` on broker-a's files while that broker is stopped, then start it again."""
    cluster.stop_broker(BROKER)
    try:
        proc = cluster.mqctl(*args, stores=[BROKER])
        assert proc.returncode == 0, f"mqctl {' '.join(args)}: exit {proc.returncode}\n{proc.stderr}"
    finally:
        cluster.start_broker(BROKER)


def test_offline_execute_then_restart(
    cluster: RocketMQ, offline_data: OfflineData, fidelity, tmp_path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Scenario 4: reset on the stopped broker's files; the restarted broker serves the targets;
    --undo on the stopped broker puts the old offsets back, the broker serves those; the reset
    again, and a consumer resumes at the targets."""
    monkeypatch.setenv("MQCTL_JOURNAL_DIR", str(tmp_path / "journal"))
    ts = offline_data.reset_ts
    # what this version's broker would set (5.x: first offset stored at or after ts; 4.x: the
    # nearer neighbour in the CQ file its mtimes choose, docs/rocketmq-versions.md §4.1)
    queues = cluster.brokers[BROKER].store / "consumequeue" / TOPIC
    expected = {
        q: expected_target(cluster.version, s, ts, queues / str(q)) for q, s in offline_data.stamps.items()
    }
    assert all(0 < o < PER_QUEUE_1 for o in expected.values()), expected
    cluster.stop_broker(BROKER)
    try:
        proc = cluster.mqctl(
            "resetOffsetByTime", "-g", GROUP, "-t", TOPIC, "-s", str(ts), "--execute", "--output", "json",
            stores=[BROKER],
        )  # fmt: skip
        assert proc.returncode == 0, f"exit {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
        doc = json.loads(proc.stdout)
        assert doc["schema"] == "mqctl/resetOffsetByTime/v1" and doc["executed"] is True
        ours = {r["queueId"]: r["targetOffset"] for r in doc["rows"] if r["topic"] == TOPIC}
        assert ours == expected  # independent truth: the consumer-observed store times
    finally:
        cluster.start_broker(BROKER)

    rows, _ = parse_consumer_progress(cluster.consumer_progress(GROUP, TOPIC))
    served = {r.queue_id: r.consumer_offset for r in rows if r.topic == TOPIC}
    ok = True
    for q, target in sorted(ours.items()):
        ok &= fidelity.check(
            f"offline reset -s {ts}: restarted broker's consumer offset q{q}", target, served.get(q)
        )
        ok &= fidelity.check(
            f"offline reset -s {ts}: brokerOffset q{q}",
            PER_QUEUE_1 + PER_QUEUE_2,
            next(r.broker_offset for r in rows if r.topic == TOPIC and r.queue_id == q),
        )

    _offline(cluster, "resetOffsetByTime", "--undo", "latest", "--execute")
    ok &= fidelity.check(
        f"offline reset -s {ts} undone: the restarted broker's offsets",
        _served(cluster),
        {0: PER_QUEUE_1, 1: PER_QUEUE_1},
    )
    _offline(cluster, "resetOffsetByTime", "-g", GROUP, "-t", TOPIC, "-s", str(ts), "--execute")
    ok &= fidelity.check(
        f"offline reset -s {ts} again: the restarted broker's offsets", _served(cluster), ours
    )

    got = cluster.consume(TOPIC, GROUP, "*", idle=12, linger=2)
    first: dict[int, int] = {}
    for m in got:
        first[m.queue_id] = min(first.get(m.queue_id, m.offset), m.offset)
    for q, target in sorted(ours.items()):
        ok &= fidelity.check(f"offline reset -s {ts}: consumer resumes q{q} at", target, first.get(q))
    assert len(got) == sum(PER_QUEUE_1 + PER_QUEUE_2 - t for t in ours.values())
    assert ok, "the restarted broker does not serve mqctl's offsets, see the fidelity section"
