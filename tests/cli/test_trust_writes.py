"""Writes mqctl must not take on trust (issue 16): a hand-edited plan, a journal record, an output
that fails after the offsets landed, the reset's own inputs, the journal's place, the lock.

Each class is a table run through the real CLI against the two small stores of
tests/ops/reset_stores.py, whose facts are hand-written there: broker-a T q0 min 0 max 10
(committed 5), q1 empty (none), q2 min 5 max 8 (committed 2), q3 empty (committed 0); broker-b T
q0 min 0 max 3 (committed 3), q1 empty (none). A queue takes offsets min..max + 1 (the broker's
resetOffsetInner check), so broker-a q0 takes 0..11 and q2 5..9.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from mqctl_testkit.cli import invoke, snapshot, store_args
from mqctl_testkit.reset_stores import build_stores
from mqctl_testkit.storeparse import quote_int_keys


def mqctl(*args: str):  # type: ignore[no-untyped-def]
    return invoke("resetOffsetByTime", *args)


def error_line(stderr: str) -> str:
    """The one error line (after an optional hint and warnings), never a traceback."""
    errors = [x for x in stderr.splitlines() if x.startswith("mqctl: error: ")]
    assert len(errors) == 1 and "Traceback" not in stderr, stderr
    return errors[0]


def committed(root: Path, key: str = "T@G") -> dict[int, int]:
    """Read with the spec's own recipe (tests/store/_storeparse.py), not mqctl's decoder."""
    doc = json.loads(quote_int_keys((root / "config" / "consumerOffset.json").read_text()))
    return {int(q): o for q, o in doc["offsetTable"].get(key, {}).items()}


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict:
    monkeypatch.setenv("MQCTL_JOURNAL_DIR", str(tmp_path / "journal"))
    stores = build_stores(tmp_path / "stores")
    return {"stores": stores, "S": store_args(stores), "tmp": tmp_path, "journal": tmp_path / "journal"}


def export_plan(env: dict, *target: str) -> dict:
    path = env["tmp"] / "plan.json"
    r = mqctl("-g", "G", "-t", "T", *target, *env["S"], "--export", str(path), "--overwrite")
    assert r.exit_code == 0, r.stderr
    return json.loads(path.read_text())


def row(doc: dict, broker: str, qid: int) -> dict:
    return next(r for r in doc["rows"] if (r["brokerName"], r["queueId"]) == (broker, qid))


# ------------------------------------------------------------------ a hand-edited plan is range-checked

PLAN_EDITS = [
    # (case, broker, queue, edits to that row, exit, what the error names)
    (
        "far-above-max",
        "broker-a",
        0,
        {"targetOffset": 999_999},
        5,
        "broker-a T queue 0: 999999 is outside 0..11",
    ),
    ("above-max-faked", "broker-a", 0, {"targetOffset": 12, "maxOffset": 10**7}, 5, "12 is outside 0..11"),
    ("below-min", "broker-a", 2, {"targetOffset": 4}, 5, "broker-a T queue 2: 4 is outside 5..9"),
    ("below-min-faked", "broker-a", 2, {"targetOffset": 0, "minOffset": 0}, 5, "0 is outside 5..9"),
    ("other-broker", "broker-b", 0, {"targetOffset": 5}, 5, "broker-b T queue 0: 5 is outside 0..4"),
    ("max-plus-one", "broker-a", 0, {"targetOffset": 11}, 0, None),  # after the last message: allowed
    ("min", "broker-a", 2, {"targetOffset": 5}, 0, None),
    # The plan is wrong whatever the cluster holds: exit 2, naming the plan file and the field.
    ("long-overflow", "broker-a", 0, {"targetOffset": 2**63}, 2, "targetOffset 9223372036854775808"),
    ("negative-current", "broker-a", 0, {"currentOffset": -2}, 2, "currentOffset -2"),
    ("int-overflow-queue", "broker-a", 0, {"queueId": 2**31}, 2, "queueId 2147483648"),
]


@pytest.mark.parametrize("execute", [True, False], ids=["execute", "dry-run"])
@pytest.mark.parametrize(
    ("case", "broker", "qid", "edits", "code", "named"), PLAN_EDITS, ids=[c[0] for c in PLAN_EDITS]
)
def test_a_hand_edited_plan_is_range_checked_against_the_store(  # type: ignore[no-untyped-def]
    env, case: str, broker: str, qid: int, edits: dict, code: int, named: str | None, execute: bool
) -> None:
    doc = export_plan(env, "--to-earliest")
    row(doc, broker, qid).update(edits)
    plan = env["tmp"] / "edited.json"
    plan.write_text(json.dumps(doc))
    before = snapshot(*env["stores"].values())
    r = mqctl("--from-file", str(plan), *env["S"], *(["--execute"] if execute else []), "--output", "json")
    assert r.exit_code == code, r.stderr
    if code:
        line = error_line(r.stderr)
        assert named in line and str(plan) in line, line
        assert "nothing written" in line or code == 2
        assert snapshot(*env["stores"].values()) == before
        assert not env["journal"].exists()  # refused before the journal: nothing to undo
    elif execute:
        assert committed(env["stores"][broker])[qid] == edits["targetOffset"]


# ------------------------------------------------------------------ an undo is range-checked, its record validated


def executed(env: dict, *target: str) -> Path:
    r = mqctl("-g", "G", "-t", "T", *target, *env["S"], "--execute", "--output", "json")
    assert r.exit_code == 0, r.stderr
    return Path(json.loads(r.stdout)["journal"]["path"])


def edit_change(doc: dict, broker: str, qid: int, **fields: object) -> None:
    change = next(c for c in doc["changes"] if (c["brokerName"], c["queueId"]) == (broker, qid))
    change.update(fields)


# --to-latest: broker-a q0 5 -> 10, q1 none -> 0, q2 2 -> 8, q3 0 -> 0; broker-b q0 3 -> 3, q1 none -> 0.
JOURNAL_EDITS = [
    # (case, how the record is changed, exit, what the error names besides the file)
    ("before-negative", lambda d: edit_change(d, "broker-a", 0, before=-7), 6, "before -7"),
    ("before-string", lambda d: edit_change(d, "broker-a", 0, before="5"), 6, "before is missing or not int"),
    ("before-bool", lambda d: edit_change(d, "broker-a", 0, before=True), 6, "before is missing or not int"),
    ("before-float", lambda d: edit_change(d, "broker-a", 0, before=5.0), 6, "before"),
    ("queue-negative", lambda d: edit_change(d, "broker-a", 0, queueId=-1), 6, "queueId -1"),
    ("topic-empty", lambda d: edit_change(d, "broker-a", 0, topic=""), 6, "topic is empty"),
    ("unknown-state", lambda d: d.update(state="done"), 6, "state 'done'"),
    ("state-number", lambda d: d.update(state=1), 6, "state"),
    ("no-group", lambda d: d.pop("group"), 6, "group"),
    ("no-changes", lambda d: d.update(changes=[]), 6, "no changes"),
    ("change-not-object", lambda d: d["changes"].append(7), 6, "is not an object"),
    ("queue-twice", lambda d: d["changes"].append(dict(d["changes"][0])), 6, "each queue once"),
    ("unknown-backend", lambda d: d.update(backend="dashboard"), 6, "backend 'dashboard'"),
    ("stores-not-paths", lambda d: d.update(stores={"broker-a": 1}), 6, "stores"),
    ("wrong-schema", lambda d: d.update(schema="mqctl/resetJournal/v0"), 6, "not an mqctl reset journal"),
    ("undo-of-number", lambda d: d.update(undoOf=7), 6, "undoOf"),
    # Valid records whose target lies beyond the queue's end now: refused like any target.
    ("before-beyond-max", lambda d: edit_change(d, "broker-a", 0, before=12), 5, "12 is outside 0..11"),
    ("before-huge", lambda d: edit_change(d, "broker-b", 0, before=2**62), 5, "broker-b T queue 0"),
]


@pytest.mark.parametrize(("case", "edit", "code", "named"), JOURNAL_EDITS, ids=[c[0] for c in JOURNAL_EDITS])
def test_an_undo_trusts_no_journal_record(env, case: str, edit, code: int, named: str) -> None:  # type: ignore[no-untyped-def]
    path = executed(env, "--to-latest")
    doc = json.loads(path.read_text())
    edit(doc)
    path.write_text(json.dumps(doc))
    before = snapshot(*env["stores"].values())
    for args in (["--undo", "latest"], ["--undo", doc.get("id", path.stem), "--execute"]):
        r = mqctl(*args, *env["S"])
        assert r.exit_code == code, (args, r.stderr)
        line = error_line(r.stderr)
        assert named in line and "nothing written" in line, line
        if code == 6:
            assert str(path) in line, line
    assert snapshot(*env["stores"].values()) == before


def test_an_undo_may_still_restore_no_offset_and_an_offset_below_min(env) -> None:  # type: ignore[no-untyped-def]
    # broker-a q2 was committed at 2 below its min 5, q1 and broker-b q1 had no offset: an undo puts
    # exactly that back (the broker reads an offset below min as min at the next pull).
    executed(env, "--to-latest")
    r = mqctl("--undo", "latest", "--execute", *env["S"])
    assert r.exit_code == 0, r.stderr
    assert committed(env["stores"]["broker-a"]) == {0: 5, 2: 2, 3: 0}
    assert committed(env["stores"]["broker-b"]) == {0: 3}


JOURNAL_FILES = [
    # (case, how the record file is replaced)
    ("not-json", lambda p: p.write_text("{")),
    ("not-utf8", lambda p: p.write_bytes(b'{"schema": "\xff"}')),
    ("a-list", lambda p: p.write_text("[]")),
    ("dev-zero", lambda p: (p.unlink(), p.symlink_to("/dev/zero"))),
    ("a-directory", lambda p: (p.unlink(), p.mkdir())),
    ("deep-nesting", lambda p: p.write_text("[" * 100_000 + "]" * 100_000)),
]


@pytest.mark.parametrize(("case", "damage"), JOURNAL_FILES, ids=[c[0] for c in JOURNAL_FILES])
def test_a_journal_file_that_does_not_parse_is_exit_6_naming_it(env, case: str, damage) -> None:  # type: ignore[no-untyped-def]
    path = executed(env, "--to-latest")
    damage(path)
    for ref in ("latest", path.stem):
        r = mqctl("--undo", ref, *env["S"])
        assert r.exit_code == 6, r.stderr
        assert str(path) in error_line(r.stderr)


# ------------------------------------------------------------------ plan errors say what is wrong

PLAN_ERRORS = [
    # (case, edit of the exported --to-earliest plan, exit, the error says, it does not say)
    (
        "unknown-group",
        lambda d: d.update(group="NoSuch"),
        3,
        "consumer group 'NoSuch' not found",
        "does not exist on broker",
    ),
    (
        "queue-99",
        lambda d: row(d, "broker-a", 0).update(queueId=99),
        3,
        "queue 99 does not exist: broker-a T has queues 0..3",
        "topic",
    ),
    (
        "unknown-topic",
        lambda d: [r.update(topic="Nope") for r in d["rows"]],
        3,
        "'Nope' not found on any broker",
        "on broker",
    ),
    (
        "topic-elsewhere",
        lambda d: row(d, "broker-b", 0).update(topic="F"),
        3,
        "topic 'F' does not exist on broker 'broker-b'",
        None,
    ),
    (
        "unknown-broker",
        lambda d: row(d, "broker-b", 0).update(brokerName="broker-z"),
        3,
        "unknown broker 'broker-z'",
        None,
    ),
]


@pytest.mark.parametrize(
    ("case", "edit", "code", "says", "not_says"), PLAN_ERRORS, ids=[c[0] for c in PLAN_ERRORS]
)
def test_plan_errors_say_what_is_really_wrong(
    env, case: str, edit, code: int, says: str, not_says: str | None
) -> None:  # type: ignore[no-untyped-def]
    doc = export_plan(env, "--to-earliest")
    edit(doc)
    plan = env["tmp"] / "edited.json"
    plan.write_text(json.dumps(doc))
    r = mqctl("--from-file", str(plan), *env["S"])
    assert r.exit_code == code, r.stderr
    line = error_line(r.stderr)
    assert says in line and str(plan) in line, line
    assert not_says is None or not_says not in line, line


# ------------------------------------------------------------------ an --execute that landed is never a plain failure


def run_process(args: list[str], env: dict, stdout) -> subprocess.CompletedProcess:  # type: ignore[no-untyped-def]
    proc_env = dict(os.environ, MQCTL_JOURNAL_DIR=str(env["journal"]), COLUMNS="200")
    return subprocess.run(
        [sys.executable, "-m", "mqctl", "resetOffsetByTime", *args, *env["S"]],
        stdout=stdout,
        stderr=subprocess.PIPE,
        text=True,
        env=proc_env,
        timeout=60,
    )


LANDED_THEN_FAILED = [
    # (case, extra flags) — the offsets land, then writing stdout fails
    ("json", ["--output", "json"]),
    ("table", ["--output", "table"]),
    ("plain", ["--output", "plain"]),
    ("csv", ["--output", "csv"]),
    ("export-stdout", ["--export", "-"]),
]


@contextlib.contextmanager
def full_disk():  # type: ignore[no-untyped-def]
    with open("/dev/full", "w") as f:
        yield f


@contextlib.contextmanager
def closed_pipe():  # type: ignore[no-untyped-def]
    """A pipe whose reader is gone before anything is written (`| head` that already left)."""
    r, w = os.pipe()
    os.close(r)
    try:
        yield w
    finally:
        os.close(w)


STDOUTS = [("full-disk", full_disk, "No space left on device"), ("closed-pipe", closed_pipe, "Broken pipe")]


@pytest.mark.parametrize(("stdout", "make", "reason"), STDOUTS, ids=[c[0] for c in STDOUTS])
@pytest.mark.parametrize(("case", "extra"), LANDED_THEN_FAILED, ids=[c[0] for c in LANDED_THEN_FAILED])
def test_output_failing_after_the_write_says_executed_first_and_exits_9(  # type: ignore[no-untyped-def]
    env, case: str, extra: list[str], stdout: str, make, reason: str
) -> None:
    with make() as out:
        p = run_process(
            ["-g", "G", "-t", "T", "--shift-by", "1", "-b", "broker-a", "-q", "0", "--execute", *extra],
            env,
            out,
        )
    assert p.returncode == 9, p.stderr
    first = p.stderr.splitlines()[0]
    (record,) = env["journal"].glob("*.json")
    assert first.startswith("EXECUTED") and record.stem in first, p.stderr
    assert "Traceback" not in p.stderr
    line = error_line(p.stderr)
    assert reason in line, line
    assert f"--undo {record.stem}" in p.stderr  # the way back is named
    assert committed(env["stores"]["broker-a"])[0] == 6  # it did land: a retry would apply it twice


def test_an_export_that_fails_after_the_write_exits_9(env, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    import errno

    from mqctl.ops import planfile

    def full(path: Path, text: str, overwrite: bool) -> None:
        raise OSError(errno.ENOSPC, "No space left on device", str(path))

    monkeypatch.setattr(planfile, "write_export", full)
    out = env["tmp"] / "plan.json"
    r = mqctl(
        "-g", "G", "-t", "T", "--to-latest", *env["S"], "--execute", "--export", str(out), "--output", "json"
    )
    assert r.exit_code == 9, r.stderr
    (record,) = env["journal"].glob("*.json")
    assert r.stderr.splitlines()[0].startswith(f"EXECUTED (journal {record.stem})"), r.stderr
    assert str(out) in error_line(r.stderr)
    assert committed(env["stores"]["broker-a"]) == {0: 10, 1: 0, 2: 8, 3: 0}


EXPORT_PATHS_REFUSED_FIRST = [
    # (case, --export target): checked before anything is planned or written
    ("proc", "/proc/plan.json"),
    ("sys", "/sys/plan.csv"),
    ("a-file-as-directory", "{tmp}/afile/plan.json"),
]


@pytest.mark.parametrize(
    ("case", "target"), EXPORT_PATHS_REFUSED_FIRST, ids=[c[0] for c in EXPORT_PATHS_REFUSED_FIRST]
)
def test_an_export_path_that_cannot_be_written_is_refused_before_the_write(
    env, case: str, target: str
) -> None:  # type: ignore[no-untyped-def]
    (env["tmp"] / "afile").write_text("x")
    before = snapshot(*env["stores"].values())
    r = mqctl(
        "-g", "G", "-t", "T", "--to-latest", *env["S"], "--execute", "--export", target.format(tmp=env["tmp"])
    )
    assert r.exit_code in (1, 2), r.stderr
    assert "nothing written" in error_line(r.stderr) or "does not exist" in r.stderr
    assert snapshot(*env["stores"].values()) == before
    assert not env["journal"].exists()


# ------------------------------------------------------------------ the reset's own inputs

MIN = {
    ("broker-a", 0): 0,
    ("broker-a", 1): 0,
    ("broker-a", 2): 5,
    ("broker-a", 3): 0,
    ("broker-b", 0): 0,
    ("broker-b", 1): 0,
}
MAX = {
    ("broker-a", 0): 10,
    ("broker-a", 1): 0,
    ("broker-a", 2): 8,
    ("broker-a", 3): 0,
    ("broker-b", 0): 3,
    ("broker-b", 1): 0,
}
G = ["-g", "G", "-t", "T"]

INPUTS = [
    # (case, arguments, exit, expected targets {(broker, queue): offset} or the error's words)
    ("offset-zero", [*G, "-b", "broker-a", "-q", "1", "-o", "0"], 0, {("broker-a", 1): 0}),
    (
        "offset-zero-beyond-max",
        [*G, "-b", "broker-a", "-q", "2", "-o", "0"],
        5,
        "0 not in consume queue range",
    ),
    ("epoch-seconds", [*G, "-s", "1795549192"], 2, "looks like epoch seconds (2026-11-24T19:39:52Z)"),
    ("epoch-seconds-negative-kept", [*G, "-s", "-1795549192"], 0, MAX),  # mqadmin: negative = the end
    (
        "epoch-seconds-as-ms",
        [*G, "-s", "1795549192", "--epoch-ms"],
        0,
        MAX,
    ),  # 1970-01-21: after every message
    ("epoch-ms-without-s", [*G, "--to-earliest", "--epoch-ms"], 2, "there is no -s"),
    ("epoch-ms-13-digits", [*G, "-s", "1795549192000"], 0, MAX),
    ("epoch-ms-small", [*G, "-s", "3000"], 0, {("broker-a", 0): 3, ("broker-b", 0): 1}),
    ("year-0001", [*G, "-s", "0001-01-01#00:00:00:000"], 0, MIN),  # before 1970: the earliest, as 1969
    ("year-1969", [*G, "-s", "1969-07-20#20:17:40:000"], 0, MIN),
    ("iso-year-0001", [*G, "-s", "0001-01-01T00:00:00Z"], 0, MIN),
    ("year-0000", [*G, "-s", "0000-01-01#00:00:00:000"], 2, "malformed timestamp"),
    ("duration-bare", [*G, "--by-duration", "5"], 2, "has no unit"),
    ("duration-bare-zero", [*G, "--by-duration", "0"], 2, "has no unit"),
    (
        "duration-with-unit",
        [*G, "--by-duration", "5ms", "--now-ms", "3005"],
        0,
        {("broker-a", 0): 3, ("broker-b", 0): 1},
    ),
]


@pytest.mark.parametrize(("case", "args", "code", "expect"), INPUTS, ids=[c[0] for c in INPUTS])
def test_reset_inputs_mean_what_they_say(env, case: str, args: list[str], code: int, expect) -> None:  # type: ignore[no-untyped-def]
    r = mqctl(*args, *env["S"], "--output", "json")
    assert r.exit_code == code, r.stderr
    if code:
        assert expect in error_line(r.stderr)
        return
    rows = {(x["brokerName"], x["queueId"]): x["targetOffset"] for x in json.loads(r.stdout)["rows"]}
    assert {k: rows[k] for k in expect} == expect


SCOPES = [
    # (case, arguments, exit, the first line (plain: stderr) says, queues in the plan)
    (
        "broker-alone",
        [*G, "-b", "broker-b", "--to-earliest"],
        0,
        "-b broker-b without -q: that broker's queues only",
        2,
    ),
    (
        "q-minus-one-with-b",
        [*G, "-b", "broker-a", "-q", "-1", "--to-earliest"],
        0,
        "-b broker-a keeps to that broker's",
        4,
    ),
    ("q-minus-one", [*G, "-q", "-1", "--to-earliest"], 0, "-q -1 means every queue", 6),
]


@pytest.mark.parametrize(("case", "args", "code", "says", "queues"), SCOPES, ids=[c[0] for c in SCOPES])
def test_a_narrowed_scope_is_said_on_the_first_line(
    env, case: str, args: list[str], code: int, says: str, queues: int
) -> None:  # type: ignore[no-untyped-def]
    r = mqctl(*args, *env["S"], "--output", "plain")
    assert r.exit_code == code, r.stderr
    first = r.stderr.splitlines()[0]
    assert says in first and f"{queues} queue(s)" in first, first


REPLAYED_ALONE = [
    # (case, flags added to --from-file / --undo, the error's words)
    ("broker", ["-b", "broker-a"], "-b/--broker cannot narrow"),
    ("queue", ["-q", "0"], "-q/--queue cannot narrow"),
    ("force-false", ["-f", "false"], "-f false cannot narrow"),
    ("other-topic", ["-t", "U"], "-t/--topic 'U' does not match"),
    ("other-group", ["-g", "Other"], "-g/--group 'Other' does not match"),
]


@pytest.mark.parametrize("source", ["--from-file", "--undo"])
@pytest.mark.parametrize(("case", "flags", "says"), REPLAYED_ALONE, ids=[c[0] for c in REPLAYED_ALONE])
def test_flags_a_plan_file_or_undo_would_ignore_are_refused(
    env, case: str, flags: list[str], says: str, source: str
) -> None:  # type: ignore[no-untyped-def]
    executed(env, "--to-latest")
    export_plan(env, "--to-earliest")
    ref = str(env["tmp"] / "plan.json") if source == "--from-file" else "latest"
    before = snapshot(*env["stores"].values())
    r = mqctl(source, ref, *flags, *env["S"], "--execute")
    assert r.exit_code == 2, r.stderr
    assert says in error_line(r.stderr)
    assert snapshot(*env["stores"].values()) == before
    assert mqctl(source, ref, "-g", "G", "-t", "T", *env["S"]).exit_code == 0  # matching -g/-t are fine


# ------------------------------------------------------------------ the journal never lives in a store

JOURNAL_DIRS = [
    # (case, environment: {variable: path under {a} = broker-a's store root or {tmp}}, exit)
    ("in-config", {"MQCTL_JOURNAL_DIR": "{a}/config"}, 2),
    ("under-config", {"MQCTL_JOURNAL_DIR": "{a}/config/journal"}, 2),
    ("store-root", {"MQCTL_JOURNAL_DIR": "{a}"}, 2),
    ("under-root", {"MQCTL_JOURNAL_DIR": "{a}/mqctl-journal"}, 2),
    ("other-broker", {"MQCTL_JOURNAL_DIR": "{b}/config"}, 2),
    ("via-symlink", {"MQCTL_JOURNAL_DIR": "{tmp}/link/config"}, 2),
    ("via-xdg-state", {"MQCTL_JOURNAL_DIR": "", "XDG_STATE_HOME": "{a}/config"}, 2),
    ("outside", {"MQCTL_JOURNAL_DIR": "{tmp}/elsewhere"}, 0),
]


@pytest.mark.parametrize(("case", "variables", "code"), JOURNAL_DIRS, ids=[c[0] for c in JOURNAL_DIRS])
def test_the_journal_is_refused_inside_a_store(
    env, monkeypatch: pytest.MonkeyPatch, case: str, variables: dict, code: int
) -> None:  # type: ignore[no-untyped-def]
    a, b, tmp = env["stores"]["broker-a"], env["stores"]["broker-b"], env["tmp"]
    (tmp / "link").symlink_to(a)
    for name, value in variables.items():
        monkeypatch.setenv(name, value.format(a=a, b=b, tmp=tmp))
    before = snapshot(a, env["stores"]["broker-b"])
    r = mqctl(*G, "--to-latest", *env["S"], "--execute")
    assert r.exit_code == code, r.stderr
    if code:
        line = error_line(r.stderr)
        assert (
            "refusing to keep the reset journal inside the broker store" in line and "nothing written" in line
        )
        assert snapshot(a, env["stores"]["broker-b"]) == before
    else:
        assert len(list((tmp / "elsewhere").glob("*.json"))) == 1


# ------------------------------------------------------------------ concurrent resets wait for the lock (real processes)

HOLD = """
import fcntl, os, sys, time
fds = [os.open(d, os.O_RDONLY) for d in sys.argv[2:]]
for fd in fds:
    fcntl.flock(fd, fcntl.LOCK_EX)
print("held", flush=True)
time.sleep(float(sys.argv[1]))
"""


def proc_env(env: dict) -> dict[str, str]:
    return dict(os.environ, MQCTL_JOURNAL_DIR=str(env["journal"]), COLUMNS="200")


LOCK_WAITS = [
    # (case, seconds another holder keeps mqctl's lock, extra flags, exit, says it waits, elapsed (min, max))
    # the holder keeps the lock far longer than mqctl could take to start on a loaded machine
    ("times-out", 30.0, ["--lock-timeout", "1"], 5, True, (0.9, 25)),
    ("no-wait", 30.0, ["--lock-timeout", "0"], 5, False, (0, 25)),
]


@pytest.mark.parametrize(
    ("case", "hold", "extra", "code", "waits", "elapsed"), LOCK_WAITS, ids=[c[0] for c in LOCK_WAITS]
)
def test_a_reset_waits_a_bounded_time_for_another_resets_lock(  # type: ignore[no-untyped-def]
    env, case: str, hold: float, extra: list[str], code: int, waits: bool, elapsed: tuple[float, float]
) -> None:
    import time

    config = env["stores"]["broker-a"] / "config"
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(hold), str(config)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        before = snapshot(*env["stores"].values())
        start = time.monotonic()
        p = run_process([*G, "--to-latest", "--execute", "--output", "json", *extra], env, subprocess.PIPE)
        took = time.monotonic() - start
    finally:
        holder.kill()
        holder.wait()
    assert p.returncode == code, p.stderr
    said = [x for x in p.stderr.splitlines() if "waiting up to" in x]
    assert len(said) == (1 if waits else 0), p.stderr
    if waits:
        assert (
            said[0]
            == f"mqctl: broker-a: another mqctl reset holds the lock on {config}; waiting up to {30 if not extra else 1} s (--lock-timeout)"
        )
    assert elapsed[0] <= took <= elapsed[1], took
    if code:
        assert "still holds the lock" in error_line(p.stderr) and "nothing written" in p.stderr
        assert snapshot(*env["stores"].values()) == before
    else:
        assert committed(env["stores"]["broker-a"]) == {0: 10, 1: 0, 2: 8, 3: 0}


def test_a_reset_that_waited_for_the_lock_writes_once_it_is_released(env) -> None:  # type: ignore[no-untyped-def]
    """The holder lets go only once mqctl has said that it waits (no race with mqctl's start-up on
    a loaded machine); the reset then writes, exit 0."""
    config = env["stores"]["broker-a"] / "config"
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, "120", str(config)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        p = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "mqctl",
                "resetOffsetByTime",
                *G,
                "--to-latest",
                "--execute",
                "--output",
                "json",
                *env["S"],
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=proc_env(env),
        )
        assert p.stderr is not None
        first = p.stderr.readline()  # blocks until mqctl says it waits (or ends without saying so)
        holder.kill()
        out, rest = p.communicate(timeout=60)
    finally:
        holder.kill()
        holder.wait()
    expected = f"mqctl: broker-a: another mqctl reset holds the lock on {config}; waiting up to 30 s (--lock-timeout)"
    assert first.rstrip("\n") == expected, first + rest
    assert p.returncode == 0, rest
    assert committed(env["stores"]["broker-a"]) == {0: 10, 1: 0, 2: 8, 3: 0}


@pytest.mark.parametrize("value", ["nan", "-1", "inf"])
def test_a_lock_timeout_that_is_not_a_number_of_seconds_is_a_usage_error(env, value: str) -> None:  # type: ignore[no-untyped-def]
    r = mqctl(*G, "--to-latest", *env["S"], "--execute", "--lock-timeout", value)
    assert r.exit_code == 2 and "expected a number of seconds, 0 or more" in error_line(r.stderr), r.stderr


@pytest.mark.slow  # ten interpreters at once
def test_ten_resets_of_ten_groups_at_once_all_land(tmp_path: Path) -> None:
    """The issue's scenario: 10 processes reset 10 different groups of one store at the same
    moment; each waits its turn for the store's lock, none is refused, none loses another's write."""
    from mqctl.store.writer import StoreWriter

    root = tmp_path / "store"
    w = StoreWriter(root, broker_name="broker-a")
    w.create_topic("T", queues=2)
    for i in range(10):
        w.put("T", i % 2, b"m", store_timestamp=1000 + i)  # 5 messages per queue: max 5
    groups = [f"G{i}" for i in range(10)]
    for g in groups:
        w.create_group(g)
        w.commit_offset(g, "T", 0, 1)
        w.commit_offset(g, "T", 1, 2)
    w.close()
    env = dict(os.environ, MQCTL_JOURNAL_DIR=str(tmp_path / "journal"))
    args = ["--store", f"broker-a={root}", "-t", "T", "--to-latest", "--execute", "--output", "json"]
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "mqctl", "resetOffsetByTime", "-g", g, *args],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for g in groups
    ]
    results = [(p.wait(timeout=120), p.stderr.read() if p.stderr else "") for p in procs]
    for p in procs:
        if p.stderr:
            p.stderr.close()
    assert [code for code, _err in results] == [0] * 10, results
    doc = json.loads(quote_int_keys((root / "config" / "consumerOffset.json").read_text()))
    assert {k: v for k, v in doc["offsetTable"].items() if k.startswith("T@")} == {
        f"T@{g}": {"0": 5, "1": 5} for g in groups
    }
    assert len(list((tmp_path / "journal").glob("*.json"))) == 10
