"""consumerProgress of a broadcasting group on real-format stores and client files
(mqctl_testkit.broadcast_store: every value worked out by hand there): the notice and its exit
7, each client's progress in every format, the gates on the worst client, stale files, bad files
(the broker files' rules), the overview, and --watch / --history per client."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from mqctl_testkit.broadcast_store import (
    GROUP,
    LAG_A,
    LAG_TIME_A,
    MINUTE,
    T0,
    TAG_A_LAG_A,
    build_stores,
    clients,
)
from mqctl_testkit.cli import NOW_MS, error_lines, invoke, store_args

NOW = ["--now-ms", str(NOW_MS)]
A = "hostA/192.0.2.2@bcA"
B = "hostB/192.0.2.2@bcB"


@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return build_stores(tmp_path_factory.mktemp("bc") / "stores")


@pytest.fixture(scope="module")
def stores_5x(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return build_stores(tmp_path_factory.mktemp("bc5") / "stores", broadcast_keys=True)


@pytest.fixture
def hosts(tmp_path: Path) -> Path:
    root = tmp_path / "hosts"
    clients(root)
    return root


def progress(stores: dict[str, Path], *args: str):  # type: ignore[no-untyped-def]
    return invoke("consumerProgress", *store_args(stores), *NOW, *args)


# ------------------------------------------------------------------ no client files


def test_the_brokers_broadcast_entries_make_it_a_notice_and_exit_7(stores_5x: dict[str, Path]) -> None:
    r = progress(stores_5x, "-g", GROUP, "-o", "table")
    assert r.exit_code == 7
    assert "BROADCASTING consumer group" in r.stdout and "Its progress lives on each client" in r.stdout
    # the brokers' pull positions, said for what they are, never as lag
    assert "not a committed offset" in r.stdout
    assert "TopicBc/broker-a/0  4" in r.stdout and "TopicBc/broker-b/1  9" in r.stdout
    assert "Diff" not in r.stdout
    (line,) = error_lines(r.stderr)
    assert "broadcasting consumer group" in line and "--client-offsets PATH" in r.stderr
    doc = json.loads(progress(stores_5x, "-g", GROUP, "-o", "json").stdout)
    assert doc["schema"] == "mqctl/consumerProgress.broadcast/v1" and doc["progressOn"] == "clients"
    assert doc["modelFrom"] == "topic@group@broadcast" and doc["clients"] == []
    pulls = {(q["brokerName"], q["queueId"]): q["pullOffset"] for q in doc["brokerPullOffsets"]["queues"]}
    assert pulls == {
        ("broker-a", 0): 4,
        ("broker-a", 1): 4,
        ("broker-a", 2): 0,
        ("broker-b", 0): 9,
        ("broker-b", 1): 9,
    }


def test_a_store_cannot_tell_unless_the_user_says_it(stores: dict[str, Path]) -> None:
    r = progress(stores, "-g", GROUP, "-o", "json")
    assert r.exit_code == 0 and json.loads(r.stdout)["rows"] == []  # nothing committed: an empty table
    assert "--model broadcasting" in r.stderr
    said = progress(stores, "-g", GROUP, "--model", "broadcasting", "-o", "plain")
    assert said.exit_code == 7 and "known from: --model" in said.stdout
    assert "A store cannot list the client instances" in said.stdout
    assert progress(stores, "-g", GROUP, "--model", "clustering", "-o", "json").exit_code == 0


# ------------------------------------------------------------------ each client's progress


def test_json_each_client_and_the_worst(stores: dict[str, Path], hosts: Path) -> None:
    r = progress(stores, "-g", GROUP, "--client-offsets", str(hosts), "-o", "json")
    assert r.exit_code == 0, r.stderr
    doc = json.loads(r.stdout)
    assert [c["client"] for c in doc["clients"]] == [A, B]
    a, b = doc["clients"]
    lag = {
        (x["brokerName"], x["queueId"]): (x["consumerOffset"], x["brokerOffset"], x["lag"]) for x in a["rows"]
    }
    assert lag == {
        ("broker-a", 0): (1, 10, 9),
        ("broker-a", 1): (1, 10, 9),
        ("broker-a", 2): (0, 0, 0),
        ("broker-b", 0): (8, 10, 2),
        ("broker-b", 1): (8, 10, 2),
    }
    assert a["totals"] == {"diff": LAG_A, "maxLagMs": LAG_TIME_A} and b["totals"]["diff"] == 0
    assert (a["clientId"], a["host"], a["stale"], a["fileAgeMs"]) == ("192.0.2.2@bcA", "hostA", False, 10_000)
    first = next(x for x in a["rows"] if (x["brokerName"], x["queueId"]) == ("broker-a", 0))
    assert first["lastTimestamp"] == T0 and first["oldestUnconsumedTimestamp"] == T0 + MINUTE
    assert doc["totals"]["worstClient"] == A and doc["totals"]["worstDiff"] == LAG_A
    assert doc["connected"] is None  # a store knows no connections


def test_tag_filtered_lag_and_the_gates_on_the_worst_client(stores: dict[str, Path], hosts: Path) -> None:
    base = ["-g", GROUP, "--client-offsets", str(hosts)]
    doc = json.loads(progress(stores, *base, "--tags", "TagA", "-o", "json").stdout)
    assert doc["totals"]["worstMatchedDiff"] == TAG_A_LAG_A
    assert progress(stores, *base, "--max-lag", str(LAG_A), "-o", "json").exit_code == 0
    over = progress(stores, *base, "--max-lag", str(LAG_A - 1), "-o", "json")
    assert over.exit_code == 10 and json.loads(over.stdout)["clients"]  # printed first
    (line,) = error_lines(over.stderr)
    assert f"diff total {LAG_A} > {LAG_A - 1} (group {GROUP}, client {A})" in line
    tagged = progress(stores, *base, "--tags", "TagA", "--max-lag", str(TAG_A_LAG_A - 1), "-o", "json")
    assert tagged.exit_code == 10 and f"matched diff total {TAG_A_LAG_A}" in tagged.stderr
    assert progress(stores, *base, "--max-lag-time", "60m", "-o", "json").exit_code == 0
    assert progress(stores, *base, "--max-lag-time", "58m", "-o", "json").exit_code == 10


def test_plain_is_mqadmins_layout_with_the_client_in_the_ip_column(
    stores: dict[str, Path], hosts: Path
) -> None:
    r = progress(stores, "-g", GROUP, "--client-offsets", str(hosts), "-o", "plain")
    lines = r.stdout.splitlines()
    assert lines[0].split() == [
        "#Topic",
        "#Broker",
        "Name",
        "#QID",
        "#Broker",
        "Offset",
        "#Consumer",
        "Offset",
        "#Client",
        "IP",
        "#Diff",
        "#Inflight",
        "#LastTime",
    ]
    rows = [x.split() for x in lines[1:11]]
    assert [(x[1], x[2], x[4], x[5], x[6]) for x in rows[:5]] == [
        ("broker-a", "0", "1", A, "9"),
        ("broker-a", "1", "1", A, "9"),
        ("broker-a", "2", "0", A, "0"),
        ("broker-b", "0", "8", A, "2"),
        ("broker-b", "1", "8", A, "2"),
    ]
    assert {x[5] for x in rows[5:]} == {B}
    assert "Consume Diff Total: 22" in r.stdout  # the sum of the rows printed, as mqadmin sums


def test_csv_one_row_per_client_and_queue(stores: dict[str, Path], hosts: Path) -> None:
    r = progress(stores, "-g", GROUP, "--client-offsets", str(hosts), "-o", "csv")
    header, *rows = r.stdout.splitlines()
    cols = header.split(",")
    assert cols[:6] == ["client", "clientId", "host", "path", "stale", "fileAgeMs"] and "matchedDiff" in cols
    assert len(rows) == 10 and sum(int(x.split(",")[cols.index("lag")]) for x in rows) == LAG_A


def test_the_table_names_the_worst_client(stores: dict[str, Path], hosts: Path) -> None:
    r = progress(stores, "-g", GROUP, "--client-offsets", str(hosts), "-o", "table")
    assert f"worst {A} (diff total {LAG_A})" in r.stdout
    assert r.stdout.count(A) >= 5 and "none" in r.stdout  # a2 has no entry in bcA's file


def test_a_file_not_written_for_long_is_flagged_stale(stores: dict[str, Path], tmp_path: Path) -> None:
    clients(tmp_path / "h", age_a_ms=6 * MINUTE)
    base = ["-g", GROUP, "--client-offsets", str(tmp_path / "h"), "-o", "json"]
    r = progress(stores, *base)
    assert [c["stale"] for c in json.loads(r.stdout)["clients"]] == [True, False]
    assert "stopped persisting" in r.stderr and r.exit_code == 0
    later = json.loads(progress(stores, *base, "--stale-after", "10m").stdout)
    assert [c["stale"] for c in later["clients"]] == [False, False]


# ------------------------------------------------------------------ bad client files


def _a(hosts: Path) -> Path:
    return hosts / "hostA/.rocketmq_offsets/192.0.2.2@bcA" / GROUP / "offsets.json"


def test_a_truncated_or_empty_file_falls_back_to_its_bak(stores: dict[str, Path], hosts: Path) -> None:
    f = _a(hosts)
    good = f.read_bytes()
    for damaged in (good[:30], b""):
        f.with_name("offsets.json.bak").write_bytes(good)
        f.write_bytes(damaged)
        r = progress(stores, "-g", GROUP, "--client-offsets", str(hosts), "-o", "json")
        assert r.exit_code == 0 and ".bak" in r.stderr
        a = json.loads(r.stdout)["clients"][0]
        assert a["fellBackToBak"] and a["totals"]["diff"] == LAG_A


@pytest.mark.parametrize(
    "text",
    [
        b'{"offsetTable":{',
        b'{"offsetTable":[{"brokerName":"broker-a","queueId":0,"topic":"TopicBc","offset":1}]}',
        b"[]",
    ],
    ids=["truncated-no-bak", "a-list-layout", "not-an-object"],
)
def test_an_unreadable_file_is_exit_6_naming_it_and_no_gate_passes(
    stores: dict[str, Path], hosts: Path, text: bytes
) -> None:
    f = _a(hosts)
    f.write_bytes(text)
    for gate in ([], ["--max-lag", "1000000"]):
        r = progress(stores, "-g", GROUP, "--client-offsets", str(hosts), *gate, "-o", "json")
        assert r.exit_code == 6 and r.stdout == ""
        (line,) = error_lines(r.stderr)
        assert str(f) in line


def test_another_groups_file_given_by_name_is_exit_6(stores: dict[str, Path], hosts: Path) -> None:
    other = _a(hosts).parent.parent / "GroupOther"
    other.mkdir()
    shutil.copy(_a(hosts), other / "offsets.json")
    r = progress(stores, "-g", GROUP, "--client-offsets", str(other / "offsets.json"), "-o", "json")
    assert r.exit_code == 6 and "GroupOther's offsets.json" in r.stderr


# ------------------------------------------------------------------ flags


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--model", "pub-sub"], "expected broadcasting or clustering"),
        (["--stale-after", "5m"], "--stale-after needs --client-offsets"),
        (["--client-offsets", "X", "-s", "true"], "every row is a client's already"),
        (["--client-offsets", "X", "--model", "clustering"], "contradicts"),
        (["--client-offsets", "X", "--why", "broker-a:0"], "--why and --status-from"),
    ],
)
def test_flag_combinations(stores: dict[str, Path], args: list[str], message: str) -> None:
    r = progress(stores, "-g", GROUP, *args)
    assert r.exit_code == 2 and message in r.stderr


# ------------------------------------------------------------------ the overview


def test_the_overview_says_which_groups_broadcast(stores_5x: dict[str, Path], hosts: Path) -> None:
    doc = json.loads(progress(stores_5x, "-o", "json").stdout)
    (g,) = [x for x in doc["rows"] if x["group"] == GROUP]
    assert (g["model"], g["progressOn"], g["diffTotal"], g["maxLagMs"]) == (
        "BROADCASTING",
        "clients",
        None,
        None,
    )
    table = progress(stores_5x, "-o", "table").stdout
    assert f"{GROUP} (broadcast)" in table and "on clients" in table
    judged = json.loads(progress(stores_5x, "--client-offsets", str(hosts), "-o", "json").stdout)
    (g,) = [x for x in judged["rows"] if x["group"] == GROUP]
    assert (g["diffTotal"], g["maxLagMs"], g["worstClient"], g["clientFiles"]) == (LAG_A, LAG_TIME_A, A, 2)
    gate = progress(stores_5x, "--client-offsets", str(hosts), "--max-lag", "10", "-o", "json")
    assert gate.exit_code == 10 and GROUP in gate.stderr
    unjudged = progress(stores_5x, "--max-lag", "10", "-o", "json")
    assert unjudged.exit_code == 0 and "not judged by the gates" in unjudged.stderr


# ------------------------------------------------------------------ over time, per client


def test_watch_and_history_keep_one_window_per_client(
    stores: dict[str, Path], hosts: Path, tmp_path: Path
) -> None:
    base = ["-g", GROUP, "--client-offsets", str(hosts)]
    r = progress(stores, *base, "-w", "1", "--samples", "2", "-o", "json")
    lines = [json.loads(x) for x in r.stdout.splitlines()]
    assert [(x["client"], x["window"]["samples"]) for x in lines] == [(A, 1), (B, 1), (A, 2), (B, 2)]
    assert [x["totals"]["lag"] for x in lines] == [LAG_A, 0, LAG_A, 0]
    history = tmp_path / "h.jsonl"
    for _ in (1, 2):
        r = progress(stores, *base, "--history", str(history), "-o", "json")
        assert r.exit_code == 0, r.stderr
    recorded = [json.loads(x) for x in history.read_text().splitlines()]
    assert [(x["client"], x["window"]["samples"]) for x in recorded] == [(A, 1), (B, 1), (A, 2), (B, 2)]
    # a third run 30 s later: bcA's offsets stood still for 30 s while it lagged (STOP), bcB is OK
    later = invoke(
        "consumerProgress", *store_args(stores), "--now-ms", str(NOW_MS + 30_000), *base,
        "--history", str(history), "--max-status", "WARN", "-o", "json",
    )  # fmt: skip
    assert later.exit_code == 10 and f"group {GROUP}, client {A} is STOP" in later.stderr
