"""lagReport -n against the fake cluster (tests/backends): every row against the fake's model,
and against consumerProgress's own numbers through the live backend.

The expected rows are computed from the model (live_scenario.build_model, with one committed
offset removed so a queue has none), never from mqctl's readers.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import mqctl_testkit.fakecluster as fakecluster
import mqctl_testkit.live_scenario as live_scenario
import pytest

NOW = live_scenario.NOW


def _model() -> Any:
    model = live_scenario.build_model()
    a = model.broker("broker-a")
    del a.offsets["G2"]["TopicTest"][2]  # G2 never committed on broker-a TopicTest queue 2
    return model


@pytest.fixture(scope="module")
def cluster() -> Iterator[Any]:
    c = fakecluster.FakeCluster(_model())
    yield c
    c.close()


def expected_rows(model: Any, lag_time: bool) -> list[tuple[Any, ...]]:
    """GET_CONSUME_STATS' rows as the fake answers them (an online group: its subscribed
    topics only), with min offsets, commits, pull offsets and lag from the model."""
    tps: dict[str, float] = {}
    for b in model.brokers:
        for g, v in b.tps.items():
            tps[g] = tps.get(g, 0.0) + v
    rows = []
    for b in model.brokers:
        for group, topics in b.offsets.items():
            online = model.online.get(group)
            for topic, committed in topics.items():
                if topic not in b.topics or (online is not None and topic not in online.subscriptions):
                    continue
                for qid, q in enumerate(b.topics[topic].queues):
                    co = max(committed.get(qid, -1), 0)
                    has = qid in committed
                    pull = max(co, b.pulls.get(group, {}).get(topic, {}).get(qid, 0))
                    start = max(co, q.min_offset)
                    oldest = (q.time_at(start) or 0) if start < q.max_offset else 0
                    rows.append(
                        (group, topic, b.name, qid, q.min_offset, q.max_offset, co, q.max_offset - co, None,
                         q.time_at(co - 1) or 0, oldest if lag_time else None,
                         (NOW - oldest if oldest else 0) if lag_time else None,
                         not has, has and co < q.min_offset, has and co > q.max_offset,
                         tps.get(group, 0.0), pull, pull - co)
                    )  # fmt: skip
    return sorted(rows)


def _snapshot(cluster: Any, lag_time: bool) -> Any:
    from mqctl.backends.live import LiveBackend
    from mqctl.pipeline.lagreport import live_snapshot

    with LiveBackend(cluster.ns, timeout=10.0) as backend:
        snap, failure = live_snapshot(backend, lag_time=lag_time)
    assert failure is None
    return snap


@pytest.mark.parametrize("lag_time", [True, False], ids=["lag-time", "no-lag-time"])
def test_rows_equal_the_model(spark: Any, cluster: Any, lag_time: bool) -> None:
    from mqctl.pipeline.lagreport_live import run_live_report
    from mqctl.pipeline.spark_schemas import LAG_REPORT

    df = run_live_report(spark, _snapshot(cluster, lag_time), NOW)
    assert [(f.name, f.dataType) for f in df.schema.fields] == [
        (f.name, f.dataType) for f in LAG_REPORT.fields
    ]
    expected = expected_rows(_model(), lag_time)
    # What the scenario covers, so a silently empty comparison cannot pass.
    assert len(expected) == 18 and any(r[12] for r in expected) and any(r[17] for r in expected)
    assert any(r[11] for r in expected) if lag_time else all(r[11] is None for r in expected)
    assert sorted(tuple(r) for r in df.collect()) == expected


def test_same_numbers_as_consumer_progress(spark: Any, cluster: Any) -> None:
    from mqctl.backends.live import LiveBackend
    from mqctl.ops.progress import group_progress
    from mqctl.pipeline.lagreport_live import run_live_report

    report = run_live_report(spark, _snapshot(cluster, True), NOW)
    got = {(r.group, r.topic, r.brokerName, r.queueId): r for r in report.collect()}
    with LiveBackend(cluster.ns, timeout=10.0) as backend:
        for group in ("G1", "G2"):  # G3 (offsets only, no retry topic) is not a -g group live
            progress = group_progress(backend, group, now_ms=NOW)
            for p in progress.rows:
                r = got.pop((group, p.topic, p.broker_name, p.queue_id))
                assert r.consumeTps == progress.consume_tps
                assert (r.minOffset, r.brokerOffset, r.consumerOffset, r.diff, r.lastTimestamp) == (
                    p.min_offset, p.broker_offset, p.consumer_offset, p.diff, p.last_timestamp)  # fmt: skip
                assert (r.oldestUnconsumedTimestamp, r.lagMs, r.inflight) == (
                    p.oldest_unconsumed_timestamp, p.lag_ms, p.inflight)  # fmt: skip
    assert {k[0] for k in got} == {"G3"}  # the same queue set, too


def test_requests_do_not_grow_per_queue(cluster: Any) -> None:
    """Lag time: one QUERY_CONSUME_QUEUE + VIEW_MESSAGE_BY_ID pair per distinct lagging position;
    everything else is per broker, per group or per (broker, topic)."""
    from mqctl.backends.live import LiveBackend
    from mqctl.pipeline.lagreport import live_snapshot

    with LiveBackend(cluster.ns, timeout=10.0) as backend:
        snap, _ = live_snapshot(backend, lag_time=True)
        asked = dict(backend.requests)
    lagging = {(r[1], r[2], r[3], max(r[6], r[4])) for r in expected_rows(_model(), True) if r[10]}
    assert asked[321] == asked[33] == len(lagging) == len(snap.oldest or {})
    # (group, topic) pairs of the brokers' offset tables, (topics x brokers), one offset table per
    # broker: the overview's, which also says which queues have a committed offset
    pairs = sum(len(topics) for b in _model().brokers for topics in b.offsets.values())
    assert (asked[208], asked[202], asked[43]) == (pairs, 4 * 2, 2)


def test_cli_live_with_history(spark: Any, cluster: Any, tmp_path: Path) -> None:
    import typer
    from typer.testing import CliRunner

    from mqctl.cli.lagreport import lag_report
    from mqctl.pipeline.history import read_history

    app = typer.Typer()
    app.command()(lag_report)
    app.command("other")(lambda: None)  # keep lagReport a sub-command, as in app.py
    hist = tmp_path / "history"
    args = ["lag-report", "-n", cluster.ns, "--lag-time", "--history", str(hist), "-o", "json"]
    res = CliRunner().invoke(app, [*args, "--now-ms", str(NOW)], env={"MQCTL_CONFIG": "/dev/null"})
    assert res.exit_code == 0, res.stderr
    doc = json.loads(res.stdout)
    expected = expected_rows(_model(), True)
    assert doc["source"] == "live" and doc["rows"] == len(expected)
    totals: dict[str, int] = {}
    for r in expected:
        totals[r[0]] = totals.get(r[0], 0) + r[7]
    assert {d["group"]: d["diffTotal"] for d in doc["top"]} == totals
    assert all(d["matchedDiffTotal"] is None for d in doc["top"])
    assert [p.name for p in hist.iterdir() if not p.name.startswith(("_", "."))] == ["date=2026-01-01"]
    back = read_history(spark, str(hist)).collect()
    assert sorted(tuple(r)[:-3] for r in back) == expected
    assert {(r.sampleMs, r.date, r.hour) for r in back} == {(NOW, "2026-01-01", "00")}


def test_subscriptions_are_refused_live(cluster: Any) -> None:
    import typer
    from typer.testing import CliRunner

    from mqctl.cli.lagreport import lag_report

    app = typer.Typer()
    app.command("lagReport")(lag_report)
    app.command("other")(lambda: None)
    res = CliRunner().invoke(app, ["lagReport", "-n", cluster.ns, "--subscriptions", "x.json"])
    assert res.exit_code == 2, res.stderr
    assert "--subscriptions needs stores" in res.stderr
