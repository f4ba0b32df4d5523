"""resetOffsetByTime end to end: dry run / execute / export / from-file / undo, and one table of bad
input asserting the exit status, a single error line on stderr and untouched store files."""

from __future__ import annotations

import csv
import io
import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from mqctl_testkit.cli import snapshot, store_args
from mqctl_testkit.reset_stores import build_stores
from typer.testing import CliRunner

from mqctl.cli.app import app

runner = CliRunner()


def run(args: list[str]):  # type: ignore[no-untyped-def]
    return runner.invoke(app, ["resetOffsetByTime", *args])


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict:
    journal = tmp_path / "journal"
    monkeypatch.setenv("MQCTL_JOURNAL_DIR", str(journal))
    stores = build_stores(tmp_path / "stores")
    return {"stores": stores, "S": store_args(stores), "journal": journal, "tmp": tmp_path}


def committed(stores: dict[str, Path], broker: str, key: str = "T@G") -> dict:
    from mqctl.store.offsets import load_consumer_offsets

    return load_consumer_offsets(stores[broker] / "config", retries=0).table.offsets.get(key, {})


# ------------------------------------------------------------------ happy paths


def test_dry_run_is_default_and_writes_nothing(env) -> None:  # type: ignore[no-untyped-def]
    before = snapshot(*env["stores"].values())
    r = run(["-g", "G", "-t", "T", "-s", "3000", *env["S"], "--output", "plain"])
    assert r.exit_code == 0, r.stderr
    # plain: stdout is mqadmin's table alone (scripts parse it); the dry-run banner is on stderr.
    assert r.stderr.startswith("DRY RUN: nothing written")
    lines = r.stdout.splitlines()
    assert lines[0] == (
        "start reset consumer offset by specified, group[G], topic[T], force[true], "
        "timestamp(string)[3000], timestamp(long)[3000]"
    )
    assert lines[1] == "#brokerName".ljust(40) + "  " + "#queueId".ljust(40) + "  " + "#offset".ljust(40)
    rows = {tuple(x.split()) for x in lines[2:]}
    assert rows == {
        ("broker-a", "0", "3"),
        ("broker-a", "1", "0"),
        ("broker-a", "2", "8"),
        ("broker-a", "3", "0"),
        ("broker-b", "0", "1"),
        ("broker-b", "1", "0"),
    }
    assert all(len(x) == 124 for x in lines[1:])  # three 40-wide columns, trailing spaces kept
    assert snapshot(*env["stores"].values()) == before
    assert not env["journal"].exists()


def test_single_queue_plain_is_mqadmin_path_a(env) -> None:  # type: ignore[no-untyped-def]
    r = run(["-g", "G", "-t", "T", "-s", "5000", "-b", "broker-a", "-q", "0", *env["S"], "--output", "plain"])
    assert r.exit_code == 0, r.stderr
    assert r.stderr.startswith("DRY RUN")
    assert r.stdout.splitlines() == [
        "start reset consumer offset by specified, group[G], topic[T], queueId[0], broker[broker-a], "
        "timestamp(string)[5000], timestamp(long)[5000]",
        "reset consumer offset to 6",
    ]


def test_execute_json_then_undo(env) -> None:  # type: ignore[no-untyped-def]
    r = run(["-g", "G", "-t", "T", "-s", "3000", *env["S"], "--output", "json", "--execute"])
    assert r.exit_code == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["executed"] is True and doc["schema"] == "mqctl/resetOffsetByTime/v1"
    row = next(x for x in doc["rows"] if (x["brokerName"], x["queueId"]) == ("broker-a", 0))
    assert (row["currentOffset"], row["targetOffset"], row["delta"], row["targetTimestamp"]) == (
        5,
        3,
        -2,
        3000,
    )
    assert committed(env["stores"], "broker-a") == {0: 3, 1: 0, 2: 8, 3: 0}
    assert committed(env["stores"], "broker-a", "T@Other") == {0: 7}
    # Undo: dry run first, then execute.
    r = run(["--undo", "latest", "--output", "json"])
    assert r.exit_code == 0, r.stderr
    assert json.loads(r.stdout)["executed"] is False
    assert committed(env["stores"], "broker-a") == {0: 3, 1: 0, 2: 8, 3: 0}
    r = run(["--undo", doc["journal"]["id"], "--execute", "--output", "plain"])
    assert r.exit_code == 0, r.stderr
    assert r.stderr.startswith("EXECUTED: offsets written (undo of ")
    assert r.stdout.startswith("start reset consumer offset by specified")
    assert committed(env["stores"], "broker-a") == {0: 5, 2: 2, 3: 0}
    assert committed(env["stores"], "broker-b") == {0: 3}


@pytest.mark.parametrize("ext", ["json", "csv"])
def test_export_review_apply_from_file(env, ext: str) -> None:  # type: ignore[no-untyped-def]
    plan = env["tmp"] / f"plan.{ext}"
    r = run(["-g", "G", "-t", "T", "--to-earliest", *env["S"], "--export", str(plan), "--output", "csv"])
    assert r.exit_code == 0, r.stderr
    assert r.stderr.startswith("DRY RUN")
    rows = list(csv.DictReader(io.StringIO(r.stdout)))
    assert {x["executed"] for x in rows} == {"false"} and len(rows) == 6
    r = run(["--from-file", str(plan), *env["S"], "--execute", "--output", "json"])
    assert r.exit_code == 0, r.stderr
    assert committed(env["stores"], "broker-a")[2] == 5


def test_from_file_refuses_when_offsets_moved(env) -> None:  # type: ignore[no-untyped-def]
    plan = env["tmp"] / "plan.json"
    assert run(["-g", "G", "-t", "T", "--to-latest", *env["S"], "--export", str(plan)]).exit_code == 0
    assert (
        run(["-g", "G", "-t", "T", "-b", "broker-b", "--to-earliest", *env["S"], "--execute"]).exit_code == 0
    )
    before = snapshot(*env["stores"].values())
    r = run(["--from-file", str(plan), *env["S"], "--execute"])
    assert r.exit_code == 5
    assert "moved since the plan was exported" in r.stderr
    assert snapshot(*env["stores"].values()) == before


def test_refuses_while_broker_holds_lock(env) -> None:  # type: ignore[no-untyped-def]
    lock = env["stores"]["broker-a"] / "lock"
    code = textwrap.dedent(
        f"""
        import fcntl, os, time
        fd = os.open({str(lock)!r}, os.O_RDWR | os.O_CREAT)
        fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, 0)
        print("locked", flush=True)
        time.sleep(60)
        """
    )
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "locked"
        before = snapshot(*env["stores"].values())
        r = run(["-g", "G", "-t", "T", "-s", "now", *env["S"], "--execute", "--unsafe-ignore-abort-file"])
        assert r.exit_code == 5 and "store lock" in r.stderr
        assert snapshot(*env["stores"].values()) == before
    finally:
        proc.kill()
        proc.wait()


# ------------------------------------------------------------------ bad input, one table

GOOD = ["-g", "G", "-t", "T"]
BAD_INPUT = [
    # malformed timestamps and flags: usage (2)
    ("month-13", [*GOOD, "-s", "2026-13-01#00:00:00:000"], 2),
    ("day-30-feb", [*GOOD, "-s", "2026-02-30#00:00:00:000"], 2),
    ("no-millis", [*GOOD, "-s", "2026-11-20#10:00:00"], 2),
    ("space-date", [*GOOD, "-s", "2026-11-20 10:00:00"], 2),
    ("trailing-text", [*GOOD, "-s", "2026-11-20#10:00:00:000x"], 2),
    ("iso-no-offset", [*GOOD, "-s", "2026-11-20T10:00:00"], 2),
    ("iso-bad-hour", [*GOOD, "-s", "2026-11-20T25:00:00Z"], 2),
    ("word", [*GOOD, "-s", "yesterday"], 2),
    ("NOW-upper", [*GOOD, "-s", "NOW"], 2),
    ("empty", [*GOOD, "-s", ""], 2),
    ("float-ms", [*GOOD, "-s", "1.7e12"], 2),
    ("too-long", [*GOOD, "-s", "99999999999999999999"], 2),
    ("force-maybe", [*GOOD, "-s", "now", "-f", "maybe"], 2),
    ("queue-text", [*GOOD, "-s", "now", "-b", "broker-a", "-q", "x"], 2),
    ("offset-float", [*GOOD, "-b", "broker-a", "-q", "0", "-o", "1.5"], 2),
    ("offset-no-queue", [*GOOD, "-o", "5"], 2),
    ("no-target", [*GOOD], 2),
    ("two-targets", [*GOOD, "-s", "now", "--to-latest"], 2),
    ("bad-duration", [*GOOD, "--by-duration", "1x"], 2),
    ("bad-shift", [*GOOD, "--shift-by", "abc"], 2),
    ("shift-no-commit", [*GOOD, "--shift-by", "1"], 2),
    ("no-group", ["-t", "T", "-s", "now"], 2),
    ("no-topic", ["-g", "G", "-s", "now"], 2),
    ("export-ext", [*GOOD, "-s", "now", "--export", "{tmp}/plan.txt"], 2),
    ("q-needs-b", [*GOOD, "-s", "now", "-q", "0"], 2),
    # unknown names: not found (3)
    ("unknown-group", ["-g", "Nope", "-t", "T", "-s", "now"], 3),
    ("unknown-topic", ["-g", "G", "-t", "Nope", "-s", "now"], 3),
    ("unknown-broker", [*GOOD, "-s", "now", "-b", "broker-x", "-q", "0"], 3),
    ("unknown-queue", [*GOOD, "-s", "now", "-b", "broker-a", "-q", "4"], 3),
    ("queue-on-b", [*GOOD, "-s", "now", "-b", "broker-b", "-q", "2"], 3),
    ("unknown-journal", ["--undo", "nosuchid"], 3),
    # -o outside [min, max + 1] of broker-a q2 = [5, 9]: refused (5)
    ("offset-below-min", [*GOOD, "-b", "broker-a", "-q", "2", "-o", "4"], 5),
    ("offset-above-max1", [*GOOD, "-b", "broker-a", "-q", "2", "-o", "10"], 5),
    ("offset-negative", [*GOOD, "-b", "broker-a", "-q", "2", "-o", "-1"], 5),
    ("stale-plan", ["--from-file", "{tmp}/stale.json"], 5),
    # unparsable plan files: usage (2)
    ("plan-not-json", ["--from-file", "{tmp}/garbage.json"], 2),
    ("plan-wrong-schema", ["--from-file", "{tmp}/schema.json"], 2),
    ("plan-missing", ["--from-file", "{tmp}/missing.json"], 2),
    ("plan-bad-queue", ["--from-file", "{tmp}/badqueue.json"], 2),
    ("plan-csv-columns", ["--from-file", "{tmp}/columns.csv"], 2),
    ("plan-ext", ["--from-file", "{tmp}/plan.xml"], 2),
    ("plan-group-mismatch", ["-g", "Other", "--from-file", "{tmp}/stale.json"], 2),
    # not a store / unreadable store data (6)
    ("not-a-store", [*GOOD, "-s", "now", "--store", "broker-a={tmp}/empty"], 6),
    ("no-such-dir", [*GOOD, "-s", "now", "--store", "broker-a={tmp}/nonexistent"], 6),
    ("corrupt-offsets", [*GOOD, "-s", "now", "--store", "broker-a={tmp}/corrupt"], 6),
    ("store-spec", [*GOOD, "-s", "now", "--store", "justaname"], 2),
]


@pytest.fixture(scope="module")
def bad_env(tmp_path_factory: pytest.TempPathFactory) -> dict:
    tmp = tmp_path_factory.mktemp("bad")
    stores = build_stores(tmp / "stores")
    (tmp / "empty").mkdir()
    corrupt = tmp / "corrupt"
    shutil.copytree(stores["broker-a"], corrupt)
    (corrupt / "config" / "consumerOffset.json").write_text("{garbage")
    (corrupt / "config" / "consumerOffset.json.bak").write_text("{garbage too")
    row = {"brokerName": "broker-a", "queueId": 0, "topic": "T", "currentOffset": 4, "targetOffset": 1}
    doc = {"schema": "mqctl/resetOffsetByTime/v1", "group": "G", "topic": "T", "rows": [row]}
    (tmp / "stale.json").write_text(json.dumps(doc))
    (tmp / "garbage.json").write_text("{")
    (tmp / "schema.json").write_text(json.dumps({**doc, "schema": "other"}))
    (tmp / "badqueue.json").write_text(json.dumps({**doc, "rows": [{**row, "queueId": "x"}]}))
    (tmp / "columns.csv").write_text("group,topic,brokerName\nG,T,broker-a\n")
    (tmp / "plan.xml").write_text("<plan/>")
    return {"tmp": tmp, "stores": stores}


@pytest.mark.parametrize(("case", "args", "status"), BAD_INPUT, ids=[c[0] for c in BAD_INPUT])
def test_bad_input(bad_env, monkeypatch, case: str, args: list[str], status: int) -> None:  # type: ignore[no-untyped-def]
    tmp = bad_env["tmp"]
    monkeypatch.setenv("MQCTL_JOURNAL_DIR", str(tmp / "journal"))
    args = [a.replace("{tmp}", str(tmp)) for a in args]
    if "--store" not in args:
        args += store_args(bad_env["stores"])
    roots = [*bad_env["stores"].values(), tmp / "corrupt"]
    before = snapshot(*roots)
    r = run([*args, "--execute"])
    assert r.exit_code == status, (case, r.stdout, r.stderr)
    lines = r.stderr.splitlines()
    errors = [x for x in lines if x.startswith("mqctl: error: ")]
    assert len(errors) == 1, lines
    assert all(x in errors or x.startswith("hint: ") for x in lines), lines
    assert len(lines) <= 2 and "Traceback" not in r.stderr
    assert r.stdout == ""
    assert snapshot(*roots) == before
    assert not (tmp / "journal").exists()


def test_bad_input_table_size() -> None:
    assert len(BAD_INPUT) >= 30


def test_malformed_timestamp_names_accepted_formats(env) -> None:  # type: ignore[no-untyped-def]
    r = run([*GOOD, "-s", "2026-13-01#00:00:00:000", *env["S"]])
    assert r.exit_code == 2
    assert "yyyy-MM-dd#HH:mm:ss:SSS" in r.stderr and "ISO 8601" in r.stderr and "now" in r.stderr
