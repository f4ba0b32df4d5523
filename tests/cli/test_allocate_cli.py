"""allocateMQ end to end on stores written with StoreWriter: the spec's worked example byte for byte,
JSON/CSV shapes, exit statuses."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mqctl.cli.app import app
from mqctl.store.writer import StoreWriter


# spec/mqadmin.md 7.3's worked example, with the route order a real name server gives: it lists a
# topic's brokers in its HashMap order of broker names, broker-b before broker-a, so mqadmin fills
# its HashSet<MessageQueue> with broker-b's queues first. A JDK 17 HashSet filled that way iterates
# a3, b3, a2, b0, b2, a1, b1, a0 (the spec's a3, a2, b3, ... assumed broker-a first); AVG over 8
# queues and 3 ids gives 3, 3, 2; the HashMap of ids iterates 192.168.1.100, 10.0.0.2, 10.0.0.1.
# tests/compat checks the same against the real mqadmin.
def _mq(broker: str, qid: int) -> str:
    return '{"brokerName":"broker-%s","queueId":%d,"topic":"TopicTest"}' % (broker, qid)


SPEC_LINE = (
    '{"result":{"192.168.1.100":[' + ",".join([_mq("b", 1), _mq("a", 0)]) + "],"
    '"10.0.0.2":[' + ",".join([_mq("b", 0), _mq("b", 2), _mq("a", 1)]) + "],"
    '"10.0.0.1":[' + ",".join([_mq("a", 3), _mq("b", 3), _mq("a", 2)]) + "]}}\n"
)
IPS = "10.0.0.1,10.0.0.2,192.168.1.100"


@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    root = tmp_path_factory.mktemp("alloc")
    args: list[str] = []
    for broker in ("broker-a", "broker-b"):
        with StoreWriter(root / broker, broker_name=broker) as w:
            w.create_topic("TopicTest", 4)
            w.create_topic("TopicX", 4)
            w.create_topic("TopicY", 4)
            w.create_topic("WriteOnly", 4, perm=2)
        args += ["--store", f"{broker}={root / broker}"]
    return args


def run(stores: list[str], *args: str) -> tuple[int, str, str]:
    # a wide console: rich crops no-wrap table columns to the width it detects
    r = CliRunner(env={"COLUMNS": "200"}).invoke(app, ["allocateMQ", *args, *stores])
    return r.exit_code, r.stdout, r.stderr


def test_plain_is_mqadmins_line(stores: list[str]) -> None:
    code, out, err = run(stores, "-t", "TopicTest", "-i", IPS, "-o", "plain")
    assert (code, err) == (0, "")
    assert out == SPEC_LINE


def test_plain_through_the_real_entry_point(stores: list[str]) -> None:
    # piped stdout: plain is the default format
    p = subprocess.run(
        [sys.executable, "-m", "mqctl", "allocateMQ", "-t", " TopicTest ", "-i", f" {IPS} ", *stores],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert p.returncode == 0, p.stderr
    assert p.stdout == SPEC_LINE


def test_command_name_is_case_insensitive(stores: list[str]) -> None:
    r = CliRunner().invoke(app, ["allocatemq", "-t", "TopicTest", "-i", IPS, "-o", "plain", *stores])
    assert r.exit_code == 0 and r.stdout == SPEC_LINE


def test_plain_one_line_per_topic(stores: list[str]) -> None:
    code, out, _ = run(stores, "-t", "TopicTest,TopicX", "-i", IPS, "-o", "plain")
    lines = out.splitlines()
    assert code == 0 and len(lines) == 2
    assert lines[0] + "\n" == SPEC_LINE
    assert all(q["topic"] == "TopicX" for qs in json.loads(lines[1])["result"].values() for q in qs)


def test_json_document(stores: list[str]) -> None:
    code, out, _ = run(stores, "-t", "TopicTest", "-i", IPS, "-o", "json")
    assert code == 0
    doc = json.loads(out)
    assert doc["schema"] == "mqctl/allocateMQ/v1"
    assert doc["strategy"] == "AVG" and doc["order"] == "mqadmin"
    assert list(doc["result"]) == ["10.0.0.1", "10.0.0.2", "192.168.1.100"]
    assert [(q["brokerName"], q["queueId"]) for q in doc["result"]["10.0.0.1"]] == [
        ("broker-a", 3),
        ("broker-b", 3),
        ("broker-a", 2),
    ]
    assert doc["totals"] == {"10.0.0.1": 3, "10.0.0.2": 3, "192.168.1.100": 2}
    assert doc["imbalance"] == 1 and doc["queueCount"] == 8
    assert "moves" not in doc


def test_json_multi_topic_totals_sorted(stores: list[str]) -> None:
    # 8 queues per topic over 3 consumers, sorted as a consumer does: 3, 3, 2 in each topic
    code, out, _ = run(stores, "-t", "TopicX,TopicY", "-i", "c1,c2,c3", "--sorted", "-o", "json")
    doc = json.loads(out)
    assert code == 0 and doc["order"] == "sorted"
    assert doc["totals"] == {"c1": 6, "c2": 6, "c3": 4}
    assert doc["imbalance"] == 2
    assert [t["topic"] for t in doc["topics"]] == ["TopicX", "TopicY"]
    assert [(q["topic"], q["brokerName"], q["queueId"]) for q in doc["result"]["c3"]] == [
        ("TopicX", "broker-b", 2),
        ("TopicX", "broker-b", 3),
        ("TopicY", "broker-b", 2),
        ("TopicY", "broker-b", 3),
    ]


def test_json_moves(stores: list[str]) -> None:
    code, out, _ = run(
        stores, "-t", "TopicTest", "-i", "c1,c2", "--sorted", "--compare-with", "c1,c2,c3", "-o", "json"
    )
    doc = json.loads(out)
    assert code == 0 and doc["compareWith"] == ["c1", "c2", "c3"]
    # before: c1 a0-a3, c2 b0-b3; after: c1 a0-a2, c2 a3 b0 b1, c3 b2 b3
    moves = [(m["brokerName"], m["queueId"], m["from"], m["to"]) for m in doc["moves"]]
    assert moves == [
        ("broker-a", 3, ["c1"], ["c2"]),
        ("broker-b", 2, ["c2"], ["c3"]),
        ("broker-b", 3, ["c2"], ["c3"]),
    ]


def test_csv(stores: list[str]) -> None:
    code, out, _ = run(
        stores, "-t", "TopicTest", "-i", "a,b", "--strategy", "avg_by_circle", "--sorted", "-o", "csv"
    )
    rows = list(csv.reader(io.StringIO(out)))
    assert code == 0 and rows[0] == ["consumer", "topic", "brokerName", "queueId"]
    assert rows[1:3] == [["a", "TopicTest", "broker-a", "0"], ["a", "TopicTest", "broker-a", "2"]]
    assert len(rows) == 9


def test_table(stores: list[str]) -> None:
    code, out, _ = run(stores, "-t", "TopicTest", "-i", IPS, "-o", "table", "--compare-with", "10.0.0.1")
    flat = " ".join(out.split())
    assert code == 0
    assert "10.0.0.1 3 broker-a:2,3 broker-b:3" in flat  # compact and sorted
    assert "Imbalance: 1" in flat
    assert "Moves when the consumers become 10.0.0.1: 5" in flat


def test_table_flags_duplicate_ids_and_unassigned_queues(stores: list[str]) -> None:
    # -i a,b,a: 3 slots of 3, 3, 2 queues; "a" takes slot 0 twice, so slot 2 (a0, b1) has no owner
    code, out, _ = run(stores, "-t", "TopicTest", "-i", "a,b,a", "-o", "table")
    flat = " ".join(out.split())  # footers wrap at the console width
    assert code == 0
    assert "Listed more than once in -i: a" in flat
    assert "2 queue(s) assigned to nobody (broker-a:0 broker-b:1)" in flat


def test_consistent_hash_covers_every_queue_once(stores: list[str]) -> None:
    code, out, _ = run(stores, "-t", "TopicTest", "-i", IPS, "--strategy", "CONSISTENT_HASH", "-o", "json")
    doc = json.loads(out)
    assert code == 0 and doc["strategy"] == "CONSISTENT_HASH"
    assert sum(doc["totals"].values()) == 8 and doc["topics"][0]["unassigned"] == []


def test_machine_room_nearby_names_its_delegate(stores: list[str]) -> None:
    code, out, err = run(
        stores,
        *(
            "-t",
            "TopicTest",
            "-i",
            "c1,c2",
            "--strategy",
            "MACHINE_ROOM_NEARBY",
            "--delegate",
            "AVG_BY_CIRCLE",
        ),
        *("--broker-rooms", "broker-a=hz,broker-b=sh", "--consumer-rooms", "c1=hz,c2=sh", "-o", "json"),
    )
    doc = json.loads(out)
    assert code == 0, err
    assert doc["strategy"] == "MACHINE_ROOM_NEARBY-AVG_BY_CIRCLE"
    assert {q["brokerName"] for q in doc["result"]["c1"]} == {"broker-a"}
    assert doc["totals"] == {"c1": 4, "c2": 4}


@pytest.mark.parametrize(
    ("args", "status", "message"),
    [
        (["-t", "NoSuchTopic", "-i", "a"], 3, "No topic route info for the topic: NoSuchTopic"),
        (["-t", "WriteOnly", "-i", "a"], 3, "mqAll is null or mqAll empty"),
        (["-t", "TopicTest", "-i", "a,,b"], 2, "currentCID is empty"),
        (["-t", "TopicTest", "-i", "a", "--strategy", "MACHINE_ROOM"], 2, "--consumer-idcs"),
        (["-t", "TopicTest", "-i", "a", "--strategy", "MACHINE_ROOM_NEARBY"], 2, "Machine room is null"),
        (
            ["-t", "TopicTest", "-i", "a", "--strategy", "CONSISTENT_HASH", "--virtual-nodes", "-1"],
            2,
            "illegal",
        ),
        (
            ["-t", "TopicTest", "-i", "a", "--strategy", "CONFIG", "--config-queues", "x"],
            2,
            "--config-queues",
        ),
    ],
)
def test_errors(stores: list[str], args: list[str], status: int, message: str) -> None:
    code, out, err = run(stores, *args, "-o", "json")
    assert code == status
    assert out == ""
    assert err.startswith("mqctl: error: ") and message in err
    assert "Traceback" not in err


def test_missing_required_options(stores: list[str]) -> None:
    code, _, err = run(stores, "-t", "TopicTest")
    assert code == 2 and "--ipList" in err


def test_no_store_is_a_usage_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MQCTL_CONFIG", str(tmp_path / "none.toml"))
    monkeypatch.delenv("MQCTL_PROFILE", raising=False)
    r = CliRunner().invoke(app, ["allocateMQ", "-t", "T", "-i", "a"])
    assert r.exit_code == 2
