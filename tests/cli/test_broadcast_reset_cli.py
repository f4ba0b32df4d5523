"""resetOffsetByTime --client-offsets on real-format stores and client files
(mqctl_testkit.broadcast_store: message i of a queue stored at T0 + i min): the dry run, the
write (the client's layout, .bak first), the journal and a byte-equal --undo, and the refusals."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
from mqctl_testkit.broadcast_store import (
    A0,
    A1,
    A2,
    B0,
    B1,
    GROUP,
    MINUTE,
    T0,
    TOPIC,
    build_stores,
    clients,
)
from mqctl_testkit.cli import error_lines, invoke, snapshot, store_args

from mqctl.store.clientoffsets import decode_client_offsets

AT = str(T0 + 4 * MINUTE)  # the message at offset 4 of a0, a1, b0, b1


@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return build_stores(tmp_path_factory.mktemp("bcr") / "stores")


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    out = clients(tmp_path / "hosts")
    old = time.time() - 60  # written a minute ago: the clients are stopped
    for p in out.values():
        os.utime(p, (old, old))
    return out


@pytest.fixture(autouse=True)
def journal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    d = tmp_path / "journal"
    monkeypatch.setenv("MQCTL_JOURNAL_DIR", str(d))
    return d


def reset(stores: dict[str, Path], *args: str):  # type: ignore[no-untyped-def]
    return invoke("resetOffsetByTime", *store_args(stores), *args)


def test_the_dry_run_plans_each_client_on_its_own_offsets(
    stores: dict[str, Path], files: dict[str, Path]
) -> None:
    before = snapshot(files["bcA"].parents[4])
    r = reset(
        stores,
        "-g",
        GROUP,
        "-t",
        TOPIC,
        "-s",
        AT,
        "--client-offsets",
        str(files["bcA"].parents[4]),
        "--output",
        "json",
    )
    assert r.exit_code == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["schema"] == "mqctl/resetOffsetByTime.clientOffsets/v1" and doc["executed"] is False
    plans = {
        c["client"]: {
            (x["brokerName"], x["queueId"]): (x["currentOffset"], x["targetOffset"]) for x in c["rows"]
        }
        for c in doc["clients"]
    }
    assert plans["hostA/192.0.2.2@bcA"] == {
        ("broker-a", 0): (1, 4),
        ("broker-a", 1): (1, 4),
        ("broker-a", 2): (-1, 0),
        ("broker-b", 0): (8, 4),
        ("broker-b", 1): (8, 4),
    }
    assert plans["hostB/192.0.2.2@bcB"][("broker-b", 0)] == (10, 4)
    assert snapshot(files["bcA"].parents[4]) == before


def test_execute_then_undo_restores_the_file_byte_for_byte(
    stores: dict[str, Path], files: dict[str, Path], journal: Path
) -> None:
    a, b = files["bcA"], files["bcB"]
    a_before, b_before = a.read_bytes(), b.read_bytes()
    args = ["-g", GROUP, "-t", TOPIC, "-s", AT, "--client-offsets", str(a), "--persist-interval", "10ms"]
    r = reset(stores, *args, "--execute", "--output", "json")
    assert r.exit_code == 0, r.stderr
    assert decode_client_offsets(a.read_bytes()).as_dict() == {A0: 4, A1: 4, A2: 0, B0: 4, B1: 4}
    assert a.read_bytes().startswith(b'{\n\t"offsetTable":{\n\t\t{\n')  # the 5.5 client's layout, kept
    assert a.with_name("offsets.json.bak").read_bytes() == a_before  # .bak first, as the client does
    assert b.read_bytes() == b_before  # the other client untouched
    doc = json.loads(r.stdout)
    (record,) = list(journal.glob("*.json"))
    assert doc["executed"] and doc["journal"]["id"] == record.stem
    time.sleep(0.05)
    dry = reset(stores, "--undo", "latest", "--output", "json")
    assert dry.exit_code == 0 and json.loads(dry.stdout)["undoOf"] == record.stem
    undo = reset(stores, "--undo", "latest", "--execute", "--output", "json")
    assert undo.exit_code == 0, undo.stderr
    assert a.read_bytes() == a_before
    # the same command again would re-apply the reset: the newest record is an undo, refused
    undo_id = json.loads(undo.stdout)["journal"]["id"]
    again = reset(stores, "--undo", "latest", "--execute", "--output", "json")
    assert again.exit_code == 5 and a.read_bytes() == a_before
    assert error_lines(again.stderr) == [
        f"mqctl: error: --undo latest: the latest reset, {undo_id}, is the undo of {record.stem}: undoing it "
        f"would apply {record.stem} again; nothing planned"
    ]


def test_a_client_that_wrote_its_file_moments_ago_is_running(
    stores: dict[str, Path], files: dict[str, Path]
) -> None:
    a = files["bcA"]
    os.utime(a)  # just now
    before = a.read_bytes()
    r = reset(stores, "-g", GROUP, "-t", TOPIC, "--to-earliest", "--client-offsets", str(a), "--execute")
    assert r.exit_code == 5 and a.read_bytes() == before
    (line,) = error_lines(r.stderr)
    assert "may be running" in line and not a.with_name("offsets.json.bak").exists()
    dry = reset(
        stores, "-g", GROUP, "-t", TOPIC, "--to-earliest", "--client-offsets", str(a), "--output", "table"
    )
    assert dry.exit_code == 0 and "look running" in dry.stdout


def test_the_brokers_range_rule_holds_for_client_files(
    stores: dict[str, Path], files: dict[str, Path]
) -> None:
    a = files["bcA"]
    before = a.read_bytes()
    base = ["-g", GROUP, "-t", TOPIC, "--client-offsets", str(a), "-b", "broker-a", "-q", "0"]
    ok = reset(stores, *base, "-o", "11", "--output", "json")  # max + 1: after the last message
    assert ok.exit_code == 0 and json.loads(ok.stdout)["clients"][0]["rows"][0]["targetOffset"] == 11
    beyond = reset(stores, *base, "-o", "12", "--execute")
    assert beyond.exit_code == 5 and a.read_bytes() == before


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--export", "plan.json"], "not --client-offsets"),
        (["--persist-interval", "0s"], "positive"),
    ],
)
def test_what_a_reset_of_client_files_does_not_take(
    stores: dict[str, Path], files: dict[str, Path], args: list[str], message: str
) -> None:
    r = reset(stores, "-g", GROUP, "-t", TOPIC, "--to-earliest", "--client-offsets", str(files["bcA"]), *args)
    assert r.exit_code == 2 and message in r.stderr


def test_persist_interval_alone_is_a_usage_error(stores: dict[str, Path]) -> None:
    r = reset(stores, "-g", GROUP, "-t", TOPIC, "--to-earliest", "--persist-interval", "5s")
    assert r.exit_code == 2 and "--persist-interval needs --client-offsets" in r.stderr
