"""The promises of the README under bad, hostile and newcomer input: one test per class of input.

Each class is a table; every row runs the real CLI (CliRunner in process, or a subprocess where
the process itself matters) against small stores whose facts are written down where they are
built (tests/ops/reset_stores.py: broker-a T q0 min 0 max 10, q2 min 5 max 8, ...).
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from mqctl_testkit.cli import invoke as mqctl
from mqctl_testkit.cli import snapshot, store_args
from mqctl_testkit.reset_stores import build_stores
from typer.testing import CliRunner

from mqctl.store.writer import StoreWriter

runner = CliRunner()
ROOT = Path(__file__).resolve().parents[2]


def one_error_line(stderr: str) -> str:
    lines = [x for x in stderr.splitlines() if not x.startswith("mqctl: warning: ")]
    errors = [x for x in lines if x.startswith("mqctl: error: ")]
    assert len(errors) == 1 and all(x in errors or x.startswith("hint: ") for x in lines), stderr
    assert "Traceback" not in stderr
    return errors[0]


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict:
    monkeypatch.setenv("MQCTL_JOURNAL_DIR", str(tmp_path / "journal"))
    stores = build_stores(tmp_path / "stores")
    return {"stores": stores, "S": store_args(stores), "tmp": tmp_path, "journal": tmp_path / "journal"}


# ------------------------------------------------------------------ a dry run never writes where it should not

EXPORT_REFUSED = [
    # (case, export target relative to {a} = broker-a's store root / {tmp}, extra flags)
    ("store-offsets-file", "{a}/config/consumerOffset.json", []),
    ("store-offsets-file-overwrite", "{a}/config/consumerOffset.json", ["--overwrite"]),
    ("store-root", "{a}/plan.json", []),
    ("store-subdir", "{a}/consumequeue/plan.csv", ["--overwrite"]),
    ("via-symlink", "{tmp}/link/config/plan.json", []),
    ("existing-file", "{tmp}/exists.json", []),
    ("existing-file-execute", "{tmp}/exists.json", ["--execute"]),
    ("no-such-dir", "{tmp}/nodir/plan.json", []),
    ("bad-extension", "{tmp}/plan.txt", []),
]


@pytest.mark.parametrize(("case", "target", "extra"), EXPORT_REFUSED, ids=[c[0] for c in EXPORT_REFUSED])
def test_export_never_lands_in_a_store_or_over_a_file(env, case: str, target: str, extra: list[str]) -> None:  # type: ignore[no-untyped-def]
    tmp, a = env["tmp"], env["stores"]["broker-a"]
    (tmp / "link").symlink_to(a)
    (tmp / "exists.json").write_text("keep me")
    before = snapshot(*env["stores"].values(), tmp / "exists.json")
    path = target.format(a=a, tmp=tmp)
    r = mqctl("resetOffsetByTime", "-g", "G", "-t", "T", "-s", "3000", *env["S"], "--export", path, *extra)
    assert r.exit_code == 2, (case, r.stdout, r.stderr)
    one_error_line(r.stderr)
    assert r.stdout == ""
    assert snapshot(*env["stores"].values(), tmp / "exists.json") == before
    assert not env["journal"].exists()


def test_export_is_atomic_and_the_summary_names_it(env) -> None:  # type: ignore[no-untyped-def]
    plan = env["tmp"] / "plan.json"
    r = mqctl(
        "resetOffsetByTime",
        "-g",
        "G",
        "-t",
        "T",
        "-s",
        "3000",
        *env["S"],
        "--export",
        str(plan),
        "--output",
        "table",
    )
    assert r.exit_code == 0, r.stderr
    first = r.stdout.splitlines()[0]
    assert first.startswith("DRY RUN: offsets unchanged") and f"plan exported to {plan}" in first
    assert json.loads(plan.read_text())["executed"] is False
    assert [p.name for p in env["tmp"].iterdir() if "mqctl-tmp" in p.name] == []
    # Replacing needs --overwrite; then the new plan replaces the old one.
    r = mqctl("resetOffsetByTime", "-g", "G", "-t", "T", "--to-latest", *env["S"], "--export", str(plan))
    assert r.exit_code == 2 and json.loads(plan.read_text())["target"]["kind"] == "time"
    r = mqctl(
        "resetOffsetByTime",
        "-g",
        "G",
        "-t",
        "T",
        "--to-latest",
        *env["S"],
        "--export",
        str(plan),
        "--overwrite",
    )
    assert r.exit_code == 0 and json.loads(plan.read_text())["target"]["kind"] == "latest"


def test_export_to_stdout(env) -> None:  # type: ignore[no-untyped-def]
    r = mqctl("resetOffsetByTime", "-g", "G", "-t", "T", "-s", "3000", *env["S"], "--export", "-")
    assert r.exit_code == 0, r.stderr
    doc = json.loads(r.stdout)  # stdout is the plan document and nothing else
    assert doc["schema"] == "mqctl/resetOffsetByTime/v1" and len(doc["rows"]) == 6
    assert r.stderr.startswith("DRY RUN: nothing written")


def test_refused_execute_writes_no_export(env) -> None:  # type: ignore[no-untyped-def]
    (env["stores"]["broker-a"] / "abort").write_text("")  # a broker that did not stop cleanly
    plan = env["tmp"] / "plan.json"
    r = mqctl(
        "resetOffsetByTime", "-g", "G", "-t", "T", "-s", "3000", *env["S"], "--export", str(plan), "--execute"
    )
    assert r.exit_code == 5
    assert "nothing written" in one_error_line(r.stderr)
    assert not plan.exists()  # "nothing written" is true of every file


# ------------------------------------------------------------------ times before the data reach the earliest offset

# Every way of naming an instant before 1970 (or before the data): each queue goes to its min.
BEFORE_DATA = [
    ("mqadmin-date-1969", ["-s", "1969-12-31#23:59:59:000"]),
    ("iso-1900", ["-s", "1900-01-01T00:00:00Z"]),
    ("iso-year-1", ["-s", "0001-01-01T00:00:00+00:00"]),
    ("epoch-zero", ["-s", "0"]),
    ("duration-100-years", ["--by-duration", "36500d"]),
    ("duration-iso-1000-years", ["--by-duration", "P365000D"]),
    ("duration-weeks", ["--by-duration", "10000w"]),
]


@pytest.mark.parametrize(("case", "flags"), BEFORE_DATA, ids=[c[0] for c in BEFORE_DATA])
def test_times_before_the_data_replay_everything(env, case: str, flags: list[str]) -> None:  # type: ignore[no-untyped-def]
    r = mqctl("resetOffsetByTime", "-g", "G", "-t", "T", *flags, *env["S"], "--output", "json")
    assert r.exit_code == 0, (case, r.stderr)
    targets = {(x["brokerName"], x["queueId"]): x["targetOffset"] for x in json.loads(r.stdout)["rows"]}
    # Each queue's min offset (reset_stores.py): never its max, which is what a wrap to "now" gives.
    assert targets == {
        ("broker-a", 0): 0,
        ("broker-a", 1): 0,
        ("broker-a", 2): 5,
        ("broker-a", 3): 0,
        ("broker-b", 0): 0,
        ("broker-b", 1): 0,
    }


ABSURD_TIMES = [
    ("duration-beyond-10000-years", ["--by-duration", "4000000d"]),
    ("duration-huge-number", ["--by-duration", "99999999999999999999999"]),
    ("timestamp-after-9999", ["-s", "999999999999999"]),
    ("iso-year-10000", ["-s", "10000-01-01T00:00:00Z"]),
]


@pytest.mark.parametrize(("case", "flags"), ABSURD_TIMES, ids=[c[0] for c in ABSURD_TIMES])
def test_absurd_times_are_usage_errors(env, case: str, flags: list[str]) -> None:  # type: ignore[no-untyped-def]
    before = snapshot(*env["stores"].values())
    r = mqctl("resetOffsetByTime", "-g", "G", "-t", "T", *flags, *env["S"], "--execute")
    assert r.exit_code == 2, (case, r.stdout, r.stderr)
    one_error_line(r.stderr)
    assert snapshot(*env["stores"].values()) == before


# ------------------------------------------------------------------ data that cannot be read is never "no lag"

CORRUPT_FILES = [
    ("offsets-garbage", "consumerOffset.json", b"{garbage"),
    ("offsets-truncated", "consumerOffset.json", b'{"offsetTable":{"T@G":{0:5'),
    ("offsets-not-utf8", "consumerOffset.json", b"\xff\xfe{}"),
    ("topics-garbage", "topics.json", b"[1,2"),
    ("groups-garbage", "subscriptionGroup.json", b'{"subscriptionGroupTable":'),
]
OFFSETS, TOPICS, GROUPS = "consumerOffset.json", "topics.json", "subscriptionGroup.json"
# (case, args, the files the command needs to read for its answer)
COMMANDS = [
    (
        "progress-group-gate",
        ["consumerProgress", "-g", "G", "--max-lag", "0", "-o", "json"],
        {OFFSETS, TOPICS, GROUPS},
    ),
    ("progress-unknown-group", ["consumerProgress", "-g", "NoSuch"], {OFFSETS, TOPICS, GROUPS}),
    ("progress-overview", ["consumerProgress", "-o", "json"], {OFFSETS, TOPICS, GROUPS}),
    ("progress-overview-gate", ["consumerProgress", "--max-lag", "1000000"], {OFFSETS, TOPICS, GROUPS}),
    ("reset-dry-run", ["resetOffsetByTime", "-g", "G", "-t", "T", "-s", "now"], {OFFSETS, TOPICS, GROUPS}),
    (
        "reset-unknown-group",
        ["resetOffsetByTime", "-g", "NoSuch", "-t", "T", "-s", "now"],
        {OFFSETS, TOPICS, GROUPS},
    ),
    # allocateMQ -i needs only the topic's queues: a damaged offsets or group file does not stop it
    ("allocate", ["allocateMQ", "-t", "T", "-i", "a,b"], {TOPICS}),
]


@pytest.mark.parametrize(("fcase", "name", "data"), CORRUPT_FILES, ids=[c[0] for c in CORRUPT_FILES])
@pytest.mark.parametrize(("ccase", "args", "reads"), COMMANDS, ids=[c[0] for c in COMMANDS])
def test_unparsable_file_is_exit_6_naming_it(tmp_path, fcase, name, data, ccase, args, reads) -> None:  # type: ignore[no-untyped-def]
    stores = build_stores(tmp_path / "stores")
    (stores["broker-a"] / "config" / name).write_bytes(data)
    (stores["broker-a"] / "config" / f"{name}.bak").unlink(missing_ok=True)  # no usable backup
    r = mqctl(*args, *store_args(stores))
    if name not in reads:  # a file the answer does not rest on: the command answers anyway
        assert r.exit_code == 0, (fcase, ccase, r.stderr)
        return
    assert r.exit_code == 6, (fcase, ccase, r.stdout, r.stderr)
    assert name in one_error_line(r.stderr)
    assert r.stdout == ""


@pytest.mark.parametrize("content", [None, b"", b"\n  \n"], ids=["missing", "empty", "blank"])
def test_missing_or_empty_offsets_file_is_a_fresh_broker(tmp_path: Path, content: bytes | None) -> None:
    stores = build_stores(tmp_path / "stores")
    f = stores["broker-b"] / "config" / "consumerOffset.json"
    f.unlink()
    f.with_name(f.name + ".bak").unlink(missing_ok=True)
    if content is not None:
        f.write_bytes(content)
    r = mqctl("consumerProgress", "-g", "G", *store_args(stores), "-o", "json")
    assert r.exit_code == 0, r.stderr
    assert "consumerOffset.json" in r.stderr  # said on stderr, not silently
    brokers = {x["brokerName"] for x in json.loads(r.stdout)["rows"]}
    assert brokers == {"broker-a"}  # broker-b holds no committed offsets for G now


# ------------------------------------------------------------------ lag that cancels out


@pytest.fixture
def above_max(tmp_path: Path) -> list[str]:
    """broker-a T: q0 has 10 messages, committed 4 (lag 6); q1 has 3, committed 50 (above max)."""
    w = StoreWriter(tmp_path / "a", broker_name="broker-a", commitlog_file_size=4096, cq_file_size=100)
    w.create_topic("T", queues=2)
    w.create_group("G")
    for i in range(10):
        w.put("T", 0, b"m", store_timestamp=1000 + i)
    for i in range(3):
        w.put("T", 1, b"m", store_timestamp=2000 + i)
    w.commit_offset("G", "T", 0, 4)
    w.commit_offset("G", "T", 1, 50)
    w.close()
    return ["--store", f"broker-a={tmp_path / 'a'}"]


@pytest.mark.parametrize(
    ("args", "status"),
    [
        (["-g", "G", "--max-lag", "5"], 10),  # real lag 6 > 5: the -47 of q1 must not hide it
        (["-g", "G", "--max-lag", "6"], 0),
        (["--max-lag", "5"], 10),  # the fleet-wide gate counts the same way
        (["--max-lag", "6"], 0),
    ],
)
def test_negative_diff_never_cancels_lag(above_max: list[str], args: list[str], status: int) -> None:
    r = mqctl("consumerProgress", *args, *above_max, "--now-ms", "5000", "-o", "json")
    assert r.exit_code == status, (r.stdout, r.stderr)
    doc = json.loads(r.stdout)
    if "-g" in args:
        assert doc["totals"]["diff"] == 6
        q1 = next(x for x in doc["rows"] if x["queueId"] == 1)
        assert (q1["diff"], q1["lag"], q1["aboveMax"]) == (-47, 0, True)
    else:
        assert doc["rows"][0]["diffTotal"] == 6
    assert "above" in r.stderr  # the odd queue is named on stderr


def test_plain_keeps_mqadmins_arithmetic(above_max: list[str]) -> None:
    # plain is mqadmin's output byte for byte: its total is the plain sum (6 - 47).
    r = mqctl("consumerProgress", "-g", "G", *above_max, "--now-ms", "5000", "-o", "plain")
    assert "Consume Diff Total: -41" in r.stdout.splitlines()


# ------------------------------------------------------------------ a journal that remembers resets that never happened


def _killed_reset(stores: dict[str, Path], journal: Path, point: str, occurrence: int = 1) -> None:
    """Run a reset in a child process that is SIGKILLed at a step of the safe write (the n-th time
    that step is reached: brokers are written one after the other, in name order)."""
    script = textwrap.dedent(
        f"""
        import os, signal, sys
        from mqctl.store import safewrite
        seen = []
        def hook(name):
            seen.append(name)
            if name == {point!r} and seen.count(name) == {occurrence}:
                os.kill(os.getpid(), signal.SIGKILL)
        safewrite._crash_point = hook
        from mqctl.cli.app import main
        sys.argv = ["mqctl", "resetOffsetByTime", "-g", "G", "-t", "T", "--to-latest", "--execute",
                    {", ".join(repr(a) for a in store_args(stores))}]
        main()
        """
    )
    env = {**os.environ, "MQCTL_JOURNAL_DIR": str(journal)}
    proc = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True)
    assert proc.returncode == -signal.SIGKILL, proc.stderr


def test_undo_of_a_reset_killed_before_its_write(env) -> None:  # type: ignore[no-untyped-def]
    before = snapshot(*env["stores"].values())
    _killed_reset(env["stores"], env["journal"], "journal-written")
    record = json.loads(next(env["journal"].glob("*.json")).read_text())
    assert record["state"] == "pending"
    assert {k: v for k, v in snapshot(*env["stores"].values()).items() if "mqctl-tmp" not in k} == before
    r = mqctl("resetOffsetByTime", "--undo", "latest", *env["S"])
    assert r.exit_code == 5
    assert "never landed" in one_error_line(r.stderr)


def test_undo_of_a_reset_killed_between_brokers(env) -> None:  # type: ignore[no-untyped-def]
    # Brokers are written in name order: killed after broker-a's write landed, before broker-b's.
    _killed_reset(env["stores"], env["journal"], "dir-fsynced")
    record = json.loads(next(env["journal"].glob("*.json")).read_text())
    assert record["state"] == "pending"  # killed before the record was marked applied
    r = mqctl("resetOffsetByTime", "--undo", "latest", *env["S"], "--execute", "--output", "json")
    assert r.exit_code == 0, r.stderr
    # Undo puts back what landed (broker-a) and leaves broker-b, which never changed.
    rows = {(x["brokerName"], x["queueId"]): x["targetOffset"] for x in json.loads(r.stdout)["rows"]}
    assert rows == {("broker-a", 0): 5, ("broker-a", 1): -1, ("broker-a", 2): 2}
    from mqctl.store.offsets import load_consumer_offsets

    def committed(b: str) -> dict:
        return load_consumer_offsets(env["stores"][b] / "config", retries=0).table.offsets["T@G"]

    assert committed("broker-a") == {0: 5, 2: 2, 3: 0} and committed("broker-b") == {0: 3}


def test_undo_of_a_reset_killed_after_every_write(env) -> None:  # type: ignore[no-untyped-def]
    # Killed on the last broker's last step: every write landed, only "applied" was never recorded.
    _killed_reset(env["stores"], env["journal"], "dir-fsynced", occurrence=2)
    assert json.loads(next(env["journal"].glob("*.json")).read_text())["state"] == "pending"
    r = mqctl("resetOffsetByTime", "--undo", "latest", *env["S"], "--output", "json")
    assert r.exit_code == 0, r.stderr
    rows = {(x["brokerName"], x["queueId"]): x["targetOffset"] for x in json.loads(r.stdout)["rows"]}
    assert rows == {("broker-a", 0): 5, ("broker-a", 1): -1, ("broker-a", 2): 2, ("broker-b", 1): -1}


def test_completed_reset_is_journalled_as_applied(env) -> None:  # type: ignore[no-untyped-def]
    r = mqctl("resetOffsetByTime", "-g", "G", "-t", "T", "--to-latest", *env["S"], "--execute")
    assert r.exit_code == 0, r.stderr
    assert json.loads(next(env["journal"].glob("*.json")).read_text())["state"] == "applied"


def test_undo_without_cluster_flags_takes_a_live_flag(env) -> None:  # type: ignore[no-untyped-def]
    """The journal names the cluster: a --timeout beside it is no reason to ask for one (the
    warning about live flags on store files looks for the cluster the flags name)."""
    assert (
        mqctl("resetOffsetByTime", "-g", "G", "-t", "T", "--to-latest", *env["S"], "--execute").exit_code == 0
    )
    r = mqctl("resetOffsetByTime", "--undo", "latest", "--timeout", "30", "--output", "json")
    assert r.exit_code == 0, r.stderr
    assert json.loads(r.stdout)["undoOf"]


def _offset_tables(files: dict[str, bytes]) -> dict[str, dict]:
    """Each store's committed offsets (its dataVersion is bumped by every write)."""
    from mqctl.store.offsets import decode_consumer_offsets

    names = [k for k in files if k.endswith("config/consumerOffset.json")]
    return {k: decode_consumer_offsets(files[k]).offsets for k in names}


def test_undo_latest_never_redoes(env) -> None:  # type: ignore[no-untyped-def]
    """`--undo latest --execute` run twice (the shell's up-arrow) used to re-apply the reset the
    first one undid: the newest record is then an undo, and "latest" refuses it. By its id it can
    still be undone (a redo, said in the first line)."""
    first = mqctl("resetOffsetByTime", "-g", "G", "-t", "T", "--to-latest", *env["S"], "--execute")
    assert first.exit_code == 0, first.stderr
    reset_id = next(env["journal"].glob("*.json")).stem
    before = snapshot(*env["stores"].values())
    undo = mqctl("resetOffsetByTime", "--undo", "latest", *env["S"], "--execute", "--output", "json")
    assert undo.exit_code == 0, undo.stderr
    undo_id = json.loads(undo.stdout)["journal"]["id"]
    assert json.loads((env["journal"] / f"{undo_id}.json").read_text())["undoOf"] == reset_id
    undone = snapshot(*env["stores"].values())
    assert undone != before
    for extra in ([], ["--execute"]):
        r = mqctl("resetOffsetByTime", "--undo", "latest", *env["S"], *extra)
        assert r.exit_code == 5, r.stderr
        assert one_error_line(r.stderr) == (
            f"mqctl: error: --undo latest: the latest reset, {undo_id}, is the undo of {reset_id}: undoing it "
            f"would apply {reset_id} again; nothing planned"
        )
        assert f"hint: to apply {reset_id} again, name the undo: --undo {undo_id}" in r.stderr
        assert snapshot(*env["stores"].values()) == undone and r.stdout == ""
    redo = mqctl("resetOffsetByTime", "--undo", undo_id, *env["S"], "--execute", "--output", "json")
    assert redo.exit_code == 0, redo.stderr
    assert json.loads(redo.stdout)["undoOf"] == undo_id
    assert _offset_tables(snapshot(*env["stores"].values())) == _offset_tables(before)


# ------------------------------------------------------------------ OS errors: the path and the reason


def test_unwritable_journal_dir(env, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("MQCTL_JOURNAL_DIR", "/proc/mqctl-journal")  # not creatable, even for root
    before = snapshot(*env["stores"].values())
    r = mqctl("resetOffsetByTime", "-g", "G", "-t", "T", "--to-latest", *env["S"], "--execute")
    assert r.exit_code == 6
    assert "/proc/mqctl-journal" in one_error_line(r.stderr)
    assert snapshot(*env["stores"].values()) == before


@pytest.mark.parametrize("errno_name", ["EROFS", "ENOSPC", "EACCES"])
def test_store_write_os_errors(env, monkeypatch, errno_name: str) -> None:  # type: ignore[no-untyped-def]
    import errno

    from mqctl.store import safewrite

    def fail(name: str) -> None:
        if name == "temp-partial":
            code = getattr(errno, errno_name)
            raise OSError(code, os.strerror(code), "consumerOffset.json.tmp")

    monkeypatch.setattr(safewrite, "_crash_point", fail)
    before = snapshot(*env["stores"].values())
    r = mqctl("resetOffsetByTime", "-g", "G", "-t", "T", "--to-latest", *env["S"], "--execute")
    assert r.exit_code == 6, r.stderr
    line = one_error_line(r.stderr)
    assert os.strerror(getattr(errno, errno_name)) in line and "internal error" not in line
    assert {k: v for k, v in snapshot(*env["stores"].values()).items() if not k.endswith(".bak")} == {
        k: v for k, v in before.items() if not k.endswith(".bak")
    }


def test_export_os_error_names_the_path(env) -> None:  # type: ignore[no-untyped-def]
    r = mqctl(
        "resetOffsetByTime", "-g", "G", "-t", "T", "-s", "3000", *env["S"], "--export", "/proc/self/plan.json"
    )
    assert r.exit_code == 1
    line = one_error_line(r.stderr)
    assert "/proc/self" in line and "internal error" not in line


# ------------------------------------------------------------------ one usage-error format

USAGE = [
    (["consumerProgress", "--bogus"], "No such option"),
    (["consumerProgress", "-o", "jsn"], "'jsn' is not one of"),
    (["consumerConnection"], "Missing option"),
    (["nosuchcommand"], "No such command"),
    (["resetOffsetByTime", "-g", "G", "-t", "T", "-s", "now", "-o", "json"], "-o/--offset"),
    (["resetOffsetByTime", "-g", "G", "-t", "T", "-s", "now", "--execute", "--dry-run"], "contradict"),
    (["consumerProgress", "--sort", "size"], "--sort"),
]


@pytest.mark.parametrize(("args", "needle"), USAGE, ids=[" ".join(a)[:40] for a, _ in USAGE])
def test_every_usage_error_is_one_line(args: list[str], needle: str) -> None:
    r = subprocess.run(
        [sys.executable, "-m", "mqctl", *args, "-S", "a=/nonexistent"], capture_output=True, text=True
    )
    assert r.returncode == 2, r.stderr
    assert needle in one_error_line(r.stderr)
    assert "Usage:" not in r.stderr and r.stdout == ""


def test_output_flag_hint_in_reset() -> None:
    r = mqctl("resetOffsetByTime", "-g", "G", "-t", "T", "-s", "now", "-o", "json", "-S", "a=/x")
    assert "hint: here -o is mqadmin's --offset; the output format is --output json" in r.stderr


# ------------------------------------------------------------------ the overview as mqadmin sees it


@pytest.fixture
def overview(tmp_path: Path) -> list[str]:
    """One broker: G (retry topic + offsets), PullOnly (retry topic, no offsets: mqadmin lists it),
    H (offsets only), B (broadcast pull offsets only: T@B@broadcast)."""
    w = StoreWriter(tmp_path / "a", broker_name="broker-a", commitlog_file_size=4096, cq_file_size=100)
    w.create_topic("T", queues=1)
    for g in ("G", "PullOnly"):
        w.create_topic(f"%RETRY%{g}", queues=1)
    for i in range(5):
        w.put("T", 0, b"m", store_timestamp=1000 + i)
    w.commit_offset("G", "T", 0, 1)
    w.commit_offset("H", "T", 0, 3)
    w.offsets["T@B@broadcast"] = {0: 2}
    w.offsets["T@G@broadcast"] = {0: 0}
    w.close()
    return ["--store", f"broker-a={tmp_path / 'a'}"]


def test_overview_lists_what_mqadmin_lists_and_more(overview: list[str]) -> None:
    r = mqctl("consumerProgress", *overview, "-o", "json", "--sort", "name")
    assert r.exit_code == 0, r.stderr
    rows = {x["group"]: x for x in json.loads(r.stdout)["rows"]}
    assert set(rows) == {"G", "H", "PullOnly"}  # no group called "broadcast", no "B" (not committed)
    assert rows["G"]["foundIn"] == ["retryTopic", "offsets"] and rows["G"]["diffTotal"] == 4
    assert rows["PullOnly"]["foundIn"] == ["retryTopic"] and rows["PullOnly"]["diffTotal"] == 0
    assert rows["H"]["foundIn"] == ["offsets"]
    doc = json.loads(mqctl("consumerProgress", *overview, "-o", "json").stdout)
    assert [x["group"] for x in doc["rows"]] == ["G", "H", "PullOnly"]  # by lag: 4, 2, 0
    assert doc["totals"]["diffTotal"] == 6
    plain = mqctl("consumerProgress", *overview, "-o", "plain").stdout.splitlines()
    # mqadmin's rows only (its retry topics): the offsets-only group is in table/JSON/CSV, not plain.
    assert sorted(x.split()[0] for x in plain[1:]) == ["G", "PullOnly"]


def test_overview_csv_carries_the_json_fields(overview: list[str]) -> None:
    doc = json.loads(mqctl("consumerProgress", *overview, "-o", "json").stdout)
    csv_text = mqctl("consumerProgress", *overview, "-o", "csv").stdout
    assert csv_text.splitlines()[0].split(",") == list(doc["rows"][0])


def test_group_without_committed_offsets_says_why(overview: list[str]) -> None:
    r = mqctl("consumerProgress", "-g", "PullOnly", *overview, "-o", "json")
    assert r.exit_code == 0 and json.loads(r.stdout)["rows"] == []
    assert "no committed offsets" in r.stderr


# ------------------------------------------------------------------ what a newcomer types


def test_dry_run_flag_is_the_default(env) -> None:  # type: ignore[no-untyped-def]
    a = mqctl("resetOffsetByTime", "-g", "G", "-t", "T", "-s", "3000", *env["S"], "--output", "json")
    b = mqctl(
        "resetOffsetByTime", "-g", "G", "-t", "T", "-s", "3000", *env["S"], "--output", "json", "--dry-run"
    )
    assert a.exit_code == b.exit_code == 0 and a.stdout == b.stdout


def test_no_headers(env) -> None:  # type: ignore[no-untyped-def]
    args = ["consumerProgress", "-g", "G", *env["S"], "--now-ms", "10000"]
    with_h = mqctl(*args, "-o", "csv").stdout.splitlines()
    without = mqctl(*args, "-o", "csv", "--no-headers").stdout.splitlines()
    assert without == with_h[1:]
    plain_h = mqctl(*args, "-o", "plain").stdout.splitlines()
    plain = mqctl(*args, "-o", "plain", "--no-headers").stdout.splitlines()
    assert plain == plain_h[1:] and not plain[0].startswith("#")


def test_q_minus_one_says_every_queue(env) -> None:  # type: ignore[no-untyped-def]
    r = mqctl(
        "resetOffsetByTime",
        "-g",
        "G",
        "-t",
        "T",
        "-s",
        "3000",
        "-b",
        "broker-a",
        "-q",
        "-1",
        *env["S"],
        "--output",
        "table",
    )
    assert r.exit_code == 0, r.stderr
    first = r.stdout.splitlines()[0]
    assert "every queue" in first and "4 queue(s)" in first


def test_demo_prints_commands_that_run(tmp_path: Path) -> None:
    venv_mqctl = Path(sys.executable).parent / "mqctl"
    if not venv_mqctl.exists():
        pytest.skip("no mqctl entry point next to this interpreter")
    # As the README runs it: the venv's script by relative path, the venv not activated.
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "MQCTL_JOURNAL_DIR": str(tmp_path / "j")}
    rel = os.path.relpath(venv_mqctl, tmp_path)
    out = subprocess.run([rel, "demo", "store"], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    tries = out.stdout.split("\ntry:\n", 1)[1].strip().splitlines()
    assert len(tries) == 4
    for line in tries:
        r = subprocess.run(
            shlex.split(line) + ["-o", "json"]
            if "resetOffset" not in line
            else shlex.split(line) + ["--output", "json"],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
        )
        assert r.returncode == 0, (line, r.stderr)
    # The printed commands name the script as it was started, never a bare `mqctl` the PATH
    # would have to find (this PATH has none: a system mqctl would make the test meaningless).
    assert shutil.which("mqctl", path=env["PATH"]) is None
    assert all(shlex.split(line)[0] == rel for line in tries), tries


def test_demo_summary_agrees_with_the_overview(tmp_path: Path) -> None:
    r = mqctl("demo", str(tmp_path / "store"))
    groups_line = next(x for x in r.stdout.splitlines() if " groups (" in x)
    count = int(groups_line.split(" groups (")[0].rsplit(" ", 1)[1])
    doc = json.loads(mqctl("consumerProgress", "-S", f"broker-a={tmp_path / 'store'}", "-o", "json").stdout)
    assert len(doc["rows"]) == count


def test_narrow_terminal_never_cuts_numbers() -> None:
    import io

    from mqctl.render.table import Column, TableSpec, write_table

    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    out = Tty()
    big = 123456789012345
    spec = TableSpec(
        [
            Column("Topic"),
            Column("Broker Offset", "right", kind="number"),
            Column("Consumer Offset", "right", kind="number"),
            Column("Notes", kind="text", optional=True),
            Column("Last Consumed", kind="text", optional=True),
        ],
        [["a-rather-long-topic-name-for-this-terminal", big, big - 1, "x" * 30, "2026-01-01 00:00:00.000"]],
    )
    old = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = "80"
    try:
        write_table(spec, out)
    finally:
        if old is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = old
    import re

    text = re.sub(r"\x1b\[[0-9;]*m", "", out.getvalue())
    assert str(big) in text and str(big - 1) in text and "…" not in text
    assert "Hidden to fit 80 columns" in text
    assert all(len(line) <= 80 for line in text.splitlines())
