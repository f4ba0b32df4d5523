"""Scenario 6: the store ``mqctl demo`` writes loads in a real broker, which then reports the
offsets we wrote, serves our messages with their tags, and agrees with mqctl on the same files."""

from __future__ import annotations

import json
import re
from collections import defaultdict

import pytest
from compat_harness import RocketMQ, local_seconds, parse_consumer_progress

pytestmark = pytest.mark.compat

DEMO_BROKER = "broker-demo"  # the session already has a broker-a in the name server
TOPIC = "OrderEvents"
GROUPS = ("order-analytics", "inventory-sync", "legacy-reporting")


@pytest.fixture(scope="module")
def demo(cluster: RocketMQ, tmp_path_factory: pytest.TempPathFactory, monkeypatch_module):
    import mqctl.store.demo as demo_mod
    from mqctl.store.writer import StoreWriter

    writers: list[StoreWriter] = []

    class Recording(StoreWriter):  # keeps the writer's per-message ground truth (tags, offsets)
        def __init__(self, *args, **kwargs) -> None:
            super().__init__(*args, **kwargs)
            writers.append(self)

    monkeypatch_module.setattr(demo_mod, "StoreWriter", Recording)
    root = tmp_path_factory.mktemp("demo") / "store"
    summary = demo_mod.build_demo_store(root)
    conf = [line for line in demo_mod.broker_conf_lines(summary) if not line.startswith("brokerName=")]
    cluster.add_broker(DEMO_BROKER, root, extra=conf)
    cluster.start_broker(DEMO_BROKER)
    yield summary, writers[0].messages
    cluster.stop_broker(DEMO_BROKER)


@pytest.fixture(scope="module")
def monkeypatch_module():
    mp = pytest.MonkeyPatch()
    yield mp
    mp.undo()


def test_broker_reports_the_queue_offsets_we_wrote(cluster: RocketMQ, demo, fidelity) -> None:
    summary, _ = demo
    out = cluster.mqadmin_ok("topicStatus", "-t", TOPIC)
    rows = {}
    for line in out.splitlines()[1:]:
        m = re.match(r"^(\S+)\s+(\d+)\s+(\d+)\s+(\d+)", line)
        if m and m[1] == DEMO_BROKER:
            rows[int(m[2])] = (int(m[3]), int(m[4]))
    ok = True
    for qid in range(4):
        ok &= fidelity.check(
            f"demo {TOPIC} q{qid} (min, max)", summary.queue_offsets[(TOPIC, qid)], rows.get(qid)
        )
    assert ok, "the broker's view of the demo store differs from what the writer wrote"


def test_broker_and_mqctl_report_the_offsets_we_committed(cluster: RocketMQ, demo, fidelity) -> None:
    summary, _ = demo
    ok = True
    for group in GROUPS:
        theirs = parse_consumer_progress(cluster.consumer_progress(group, TOPIC))[0]
        theirs = [r for r in theirs if r.topic == TOPIC]
        for r in theirs:
            written = summary.committed.get((group, TOPIC, r.queue_id), 0)  # never committed: shown as 0
            ok &= fidelity.check(
                f"demo {group} q{r.queue_id}: committed (writer vs broker)", written, r.consumer_offset
            )
            ok &= fidelity.check(
                f"demo {group} q{r.queue_id}: max (writer vs broker)",
                summary.queue_offsets[(TOPIC, r.queue_id)][1],
                r.broker_offset,
            )
        proc = cluster.mqctl("consumerProgress", "-g", group, "-t", TOPIC, "-o", "json", stores=[DEMO_BROKER])
        ok &= fidelity.check(f"demo consumerProgress -g {group} exit", proc.returncode, 0)
        if proc.returncode != 0:
            continue
        ours = {r["queueId"]: r for r in json.loads(proc.stdout)["rows"] if r["topic"] == TOPIC}
        for r in theirs:
            o = ours.get(r.queue_id, {})
            what = f"demo consumerProgress -g {group} q{r.queue_id}"
            ok &= fidelity.check(f"{what} brokerOffset", o.get("brokerOffset"), r.broker_offset)
            ok &= fidelity.check(f"{what} consumerOffset", o.get("consumerOffset"), r.consumer_offset)
            ok &= fidelity.check(f"{what} diff", o.get("diff"), r.diff)
            ok &= fidelity.check(f"{what} lastTime", local_seconds(o.get("lastTimestamp", 0)), r.last_time)
    assert ok, "committed offsets differ, see the fidelity section"


def test_real_consumer_receives_the_demo_messages(cluster: RocketMQ, demo) -> None:
    summary, messages = demo
    group = "order-analytics"
    got = cluster.consume(TOPIC, group, "*", idle=12, linger=1)
    written = {(m.queue_id, m.queue_offset): m for m in messages if m.topic == TOPIC}
    expected = defaultdict(list)
    for qid in range(4):
        lo = summary.committed[(group, TOPIC, qid)]
        expected[qid] = list(range(lo, summary.queue_offsets[(TOPIC, qid)][1]))
    received = defaultdict(list)
    for m in got:
        assert m.broker == DEMO_BROKER
        received[m.queue_id].append(m.offset)
        w = written[(m.queue_id, m.offset)]
        assert (m.tag, m.store_timestamp) == (w.tags, w.store_timestamp), (m, w)
    assert {q: sorted(v) for q, v in received.items() if v} == {q: v for q, v in expected.items() if v}
