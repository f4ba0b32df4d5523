"""lagReport's driver-side pieces without a JVM: the direct mode's file listing, the live
snapshot's rows, the history's partition names."""

from __future__ import annotations

from pathlib import Path

import pytest


def test_list_cq_files_selects_what_binary_files_glob_and_regex_select(tmp_path: Path) -> None:
    from mqctl.pipeline.inputs import list_cq_files

    for q in ("0", "1", "x"):
        (tmp_path / "consumequeue" / "T" / q).mkdir(parents=True)
    for name in ("00000000000000000000", "00000000000006000000", "123", "00000000000000000000.tmp"):
        (tmp_path / "consumequeue" / "T" / "0" / name).write_bytes(b"")
    (tmp_path / "consumequeue" / "T" / "x" / "00000000000000000000").write_bytes(b"")
    (tmp_path / "consumequeue" / "T" / "1" / "00000000000000000020").mkdir()  # a directory, not a file
    got = list_cq_files("b", str(tmp_path), ["T", "T", "Missing"])
    assert [(f.broker_name, f.topic, f.queue_id, f.file_start) for f in got] == [
        ("b", "T", 0, 0),
        ("b", "T", 0, 300_000),
    ]
    assert got[0].path == str(tmp_path / "consumequeue" / "T" / "0" / "00000000000000000000")


def test_live_rows_follow_consumer_progress_rules() -> None:
    pytest.importorskip("pyspark")
    from mqctl.model import ConsumeStats, GroupOverview, GroupRef, MessageQueue, QueueStat
    from mqctl.pipeline.inputs import LiveSnapshot
    from mqctl.pipeline.lagreport_live import live_rows

    a, b, c = (MessageQueue("T", "broker-a", q) for q in range(3))
    stats = ConsumeStats(
        "G",
        (
            QueueStat(a, 10, 4, 111, pull_offset=6, min_offset=0, committed=True),
            QueueStat(b, 10, 2, 0, pull_offset=None, min_offset=5, committed=True),  # below min: from 5
            QueueStat(c, 10, 10, 222, pull_offset=10, min_offset=0, committed=None),  # nothing to consume
        ),
        consume_tps=2.5,
    )
    ov = [GroupOverview(GroupRef("G", ()), stats), GroupOverview(GroupRef("H", ()), None, failure="down")]
    snap = LiveSnapshot(ov, {(a, 4): 1000, (b, 5): 2000, (b, 2): 9})
    assert snap.queue_count == 3
    assert live_rows(snap) == [
        ("G", "T", "broker-a", 0, 0, 10, 4, True, 111, 6, 1000, 2.5),
        ("G", "T", "broker-a", 1, 5, 10, 2, True, 0, None, 2000, 2.5),
        ("G", "T", "broker-a", 2, 0, 10, 10, None, 222, 10, 0, 2.5),
    ]
    assert [r[10] for r in live_rows(LiveSnapshot(ov, None))] == [None, None, None]  # no --lag-time
    assert [r[10] for r in live_rows(LiveSnapshot(ov, {}))] == [0, 0, 0]  # asked, messages gone


def test_history_partitions_are_utc_and_zero_padded() -> None:
    pytest.importorskip("pyspark")
    from mqctl.pipeline.history import local_dir, partition_of

    assert partition_of(1_767_225_600_000) == ("2026-01-01", "00")
    assert partition_of(1_767_225_600_000 - 1) == ("2025-12-31", "23")
    assert partition_of(1_767_225_600_000 + 9 * 3600_000 + 59_999) == ("2026-01-01", "09")
    assert local_dir("file:///h") == Path("/h") and local_dir("hdfs://nn/h") is None


def test_a_dataset_directory_is_probed_where_spark_will_create_it(tmp_path: Path) -> None:
    """A new --out three levels below an existing directory: the probe goes to that directory,
    and neither the probe nor any directory stays behind."""
    from mqctl.pipeline.inputs import check_dataset_target

    check_dataset_target("--out", str(tmp_path / "x" / "y" / "report"), [], must_be_new=True, here=True)
    check_dataset_target("--history", f"file://{tmp_path}", [], must_be_new=False, here=True)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="no /proc")
def test_paths_spark_writes_elsewhere_are_not_probed_here() -> None:
    """Not ``here`` (a cluster master, spark-submit) a plain path may name another filesystem, and
    another scheme always does: neither is refused for what this machine's /proc would do."""
    from mqctl.errors import MqctlError
    from mqctl.pipeline.inputs import check_dataset_target

    check_dataset_target("--out", "/proc/mqctl-report", [], must_be_new=True, here=False)
    check_dataset_target("--out", "hdfs://nn:8020/proc/mqctl-report", [], must_be_new=True, here=True)
    with pytest.raises(MqctlError, match="cannot create anything in /proc"):
        check_dataset_target("--out", "file:/proc/mqctl-report", [], must_be_new=True, here=True)


@pytest.mark.parametrize(
    ("master", "env", "local"),
    [
        (None, {}, True),
        ("local[2]", {}, True),
        ("spark://h:7077", {}, False),
        ("yarn", {}, False),
        (None, {"PYSPARK_GATEWAY_PORT": "4242"}, False),  # spark-submit chose the master
    ],
)
def test_local_spark(
    master: str | None, env: dict[str, str], local: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mqctl.pipeline.inputs import local_spark

    for k, v in env.items():
        monkeypatch.setenv(k, v)
    assert local_spark(master) is local
