"""lagReport --history (append, partitions, read back) and --status (the watch rules over a
replayed history, on Spark). Expected statuses are worked out by hand from the rules in
mqctl/ops/watch/rules.py's docstring, never by calling them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from mqctl_testkit.cli import NOW_MS

NOW = NOW_MS  # 2026-01-01T00:00:00Z
MIN = 60_000
T1, T2, T3 = NOW - 4 * MIN, NOW - 3 * MIN, NOW - 2 * MIN  # three runs a minute apart


def row(
    group: str, broker: str, qid: int, b: int, c: int, pull: int | None = None, topic: str = "T"
) -> tuple:
    """A LAG_REPORT row (committed, nothing below min or above max)."""
    return (group, topic, broker, qid, 0, b, c, b - c, None, 0, 0, 0, False, False, False,
            None if pull is None else 1.5, pull, None if pull is None else pull - c)  # fmt: skip


# G1 on broker-a, queue by queue (brokerOffset, committedOffset[, pullOffset]) at T1, T2, T3:
G1 = {
    0: ([(20, 10), (20, 12), (20, 8)], "REWIND"),  # committed went back
    1: ([(10, 5), (10, 10), (15, 12)], "OK"),  # caught up within the window
    2: ([(20, 7, 8), (20, 7, 9), (20, 7, 12)], "STUCK"),  # frozen 2 min while pulls advance
    3: ([(20, 7), (25, 7), (30, 7)], "STALL"),  # frozen while the broker advances
    4: ([(20, 7), (20, 7), (20, 7)], "STOP"),  # nothing moves, lag 13
    5: ([(10, 1), (15, 2), (20, 3)], "WARN"),  # lag 9 -> 13 -> 17
    6: ([(10, 1), (11, 5), (12, 9)], "OK"),  # lag 9 -> 6 -> 3
    7: ([None, None, (5, 1)], "OK"),  # new: one sample
}


def samples() -> dict[int, list[tuple]]:
    out: dict[int, list[tuple]] = {T1: [], T2: [], T3: []}
    for qid, (points, _status) in G1.items():
        for t, p in zip((T1, T2, T3), points):
            if p is not None:
                out[t].append(row("G1", "broker-a", qid, *p))
    # G2: broker-b does not answer the newest run (its queue stays, stale); broker-a queue 1 is
    # gone from the newest run although broker-a answered (it is dropped).
    out[T1] += [
        row("G2", "broker-a", 0, 10, 1),
        row("G2", "broker-b", 0, 10, 1),
        row("G2", "broker-a", 1, 9, 1),
    ]
    out[T2] += [
        row("G2", "broker-a", 0, 10, 5),
        row("G2", "broker-b", 0, 14, 2),
        row("G2", "broker-a", 1, 9, 1),
    ]
    out[T3] += [row("G2", "broker-a", 0, 10, 9)]
    # G3: two runs 5 s apart, frozen: shorter than the rules' 10 s, so not STOP (lag 4 -> 4: OK).
    out[T3] += [row("G3", "broker-a", 0, 10, 6)]
    out[T3 + 5000] = [row("G3", "broker-a", 0, 10, 6)]
    return out


EXPECTED_QUEUES = {("G1", "broker-a", q): (s, 1 if q == 7 else 3, False) for q, (_p, s) in G1.items()}
EXPECTED_QUEUES |= {
    ("G2", "broker-a", 0): ("OK", 3, False),
    ("G2", "broker-b", 0): ("WARN", 2, True),  # lag 9 -> 12, its last known window
    ("G3", "broker-a", 0): ("OK", 2, False),
}
# (status, queues, ok, warn, rewind, stop, stall, stuck, stale)
EXPECTED_GROUPS = {
    "G1": ("STUCK", 8, 3, 1, 1, 1, 1, 1, 0),
    "G2": ("WARN", 2, 1, 1, 0, 0, 0, 0, 1),
    "G3": ("OK", 1, 1, 0, 0, 0, 0, 0, 0),
}


@pytest.fixture(scope="module")
def history(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> Path:
    from mqctl.pipeline.history import append_history, history_df
    from mqctl.pipeline.spark_schemas import LAG_REPORT

    path = tmp_path_factory.mktemp("history") / "h"
    # An old run outside any window judged here: it would make G1 queue 6 a REWIND.
    old = NOW - 3 * 3600_000
    runs = sorted({old: [row("G1", "broker-a", 6, 50, 40)], **samples()}.items())
    for t, rows in runs[:3]:  # appended as lagReport --history does, one run at a time
        append_history(spark.createDataFrame(rows, LAG_REPORT), str(path), t)
    # The other runs in one write (test time): the same rows a run would append.
    rest = [history_df(spark.createDataFrame(rows, LAG_REPORT), t) for t, rows in runs[3:]]
    rest[0].unionByName(rest[1]).coalesce(1).write.mode("append").partitionBy("date", "hour").parquet(
        str(path)
    )
    return path


def test_appends_land_in_date_hour_partitions(spark: Any, history: Path) -> None:
    from mqctl.pipeline.history import read_history
    from mqctl.pipeline.spark_schemas import HISTORY

    parts = sorted(str(p.relative_to(history)) for p in history.glob("date=*/hour=*"))
    assert parts == ["date=2025-12-31/hour=21", "date=2025-12-31/hour=23"]
    assert len(list(history.glob("date=2025-12-31/hour=23/*.parquet"))) == 3  # one file per append
    df = read_history(spark, str(history))
    assert [(f.name, f.dataType) for f in df.schema.fields] == [(f.name, f.dataType) for f in HISTORY.fields]
    got = sorted(
        (r.sampleMs, r.group, r.brokerName, r.queueId, r.consumerOffset, r.pullOffset) for r in df.collect()
    )
    want = sorted((t, r[0], r[2], r[3], r[6], r[16]) for t, rows in samples().items() for r in rows)
    assert got == sorted([*want, (NOW - 3 * 3600_000, "G1", "broker-a", 6, 40, None)])
    assert {(r.date, r.hour) for r in df.where("sampleMs = %d" % T1).collect()} == {("2025-12-31", "23")}
    # The window's reader keeps only its samples (and prunes the old partition).
    assert read_history(spark, str(history), NOW - 15 * MIN, NOW).count() == len(want)


def test_statuses_per_queue_and_group(spark: Any, history: Path) -> None:
    from mqctl.model import Rules
    from mqctl.ops.watch.rules import queue_rates, queue_status
    from mqctl.pipeline.history import read_history
    from mqctl.pipeline.lagreport_status import StatusRules, group_status_df, queue_status_df
    from mqctl.pipeline.spark_schemas import GROUP_STATUS, QUEUE_STATUS

    window = read_history(spark, str(history), NOW - 15 * MIN, NOW)
    queues = queue_status_df(window, StatusRules(queue_status, queue_rates, Rules())).cache()
    assert [f.name for f in queues.schema.fields] == QUEUE_STATUS.names
    got = {(r.group, r.brokerName, r.queueId): r for r in queues.collect()}
    assert {k: (r.status, r.points, r.stale) for k, r in got.items()} == EXPECTED_QUEUES
    q6 = got[("G1", "broker-a", 6)]  # consumed 8 and produced 2 in 2 minutes, lag 3
    assert (q6.consumeRate, q6.produceRate, q6.lag, q6.spanMs) == pytest.approx(
        (8 / 120, 2 / 120, 3, 120_000)
    )
    assert got[("G1", "broker-a", 2)].pullOffset == 12 and all(r.reason for r in got.values())
    groups = group_status_df(queues).collect()
    assert [f.name for f in group_status_df(queues).schema.fields] == GROUP_STATUS.names
    assert [r.group for r in groups] == ["G1", "G2", "G3"]  # worst first
    cols = ("status", "queues", "ok", "warn", "rewind", "stop", "stall", "stuck", "stale")
    assert {r.group: tuple(r[c] for c in cols) for r in groups} == EXPECTED_GROUPS
    g1 = next(r for r in groups if r.group == "G1")
    assert g1.worstQueue == "T broker-a 2" and g1.lag == sum(p[-1][0] - p[-1][1] for p, _s in G1.values())


def test_status_cli(spark: Any, history: Path, tmp_path: Path) -> None:
    import typer
    from typer.testing import CliRunner

    from mqctl.cli.lagreport import lag_report

    app = typer.Typer()
    app.command()(lag_report)
    app.command("other")(lambda: None)
    out = tmp_path / "statuses"
    args = ["lag-report", "--status", "--history", str(history), "--window", "15m", "-o", "json"]
    res = CliRunner().invoke(app, [*args, "--out", str(out), "--format", "json", "--now-ms", str(NOW)])
    assert res.exit_code == 0, res.stderr
    doc = json.loads(res.stdout)
    assert doc["schema"] == "mqctl/lagReport.status/v1" and doc["queues"] == len(EXPECTED_QUEUES)
    assert [(g["group"], g["status"]) for g in doc["groups"]] == [
        (g, v[0]) for g, v in EXPECTED_GROUPS.items()
    ]
    lines = [json.loads(x) for p in out.glob("part-*.json") for x in p.read_text().splitlines()]
    assert {(d["group"], d["brokerName"], d["queueId"]): d["status"] for d in lines} == {
        k: v[0] for k, v in EXPECTED_QUEUES.items()
    }
    res = CliRunner().invoke(app, ["lag-report", "--status", "--history", str(tmp_path / "none")])
    assert res.exit_code == 2 and "no such directory" in res.stderr
