"""Safe writes of consumerOffset.json: locks, refusal rules, .bak, journal, and fault injection.

The oracle for every crash is the broker's own load rule (the file, else ``.bak``), applied by
``load_consumer_offsets`` with no retries, compared with the old and new tables written out
by hand here.
"""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from mqctl.errors import NotFoundError, RefusedError, StoreCorruptError, StoreError
from mqctl.model import BackendTarget
from mqctl.ops import journal
from mqctl.store import safewrite, storelock
from mqctl.store.offsets import decode_consumer_offsets, load_consumer_offsets


def apply_offsets_to_stores(layouts, group, offsets, expected=None, *, force_abort_file=False, now_ms=None):  # type: ignore[no-untyped-def]
    """The two phases as every reset runs them: the store's write entered (checks, locks, re-read),
    the journal record, then commit (ops.journal.apply_journalled). Returns the record as JSON."""
    write = safewrite.StoreWrite(
        layouts, group, offsets, expected, force_abort_file=force_abort_file, now_ms=now_ms
    )
    target = BackendTarget("store", tuple((b, str(Path(p).resolve())) for b, p in layouts.items()))
    rec = journal.apply_journalled(write, target, group, now_ms=now_ms)
    return {**rec.to_json(), "path": str(rec.path)}


# A 5.x broker's file for two groups (spec 2.2 layout, written by hand, not by our encoder).
OLD_TEXT = (
    "{\n"
    '\t"dataVersion":{\n\t\t"counter":7,\n\t\t"stateVersion":0,\n\t\t"timestamp":1700000000000\n\t},\n'
    '\t"groupTopicMap":{\n\t\t"G":["T"],\n\t\t"Other":["T","U"]\n\t},\n'
    '\t"offsetTable":{\n'
    '\t\t"T@G":{0:10,1:20\n\t\t},\n'
    '\t\t"T@Other":{0:5,1:6\n\t\t},\n'
    '\t\t"U@Other":{0:99\n\t\t}\n'
    "\t}\n"
    "}"
)
OLD = {"T@G": {0: 10, 1: 20}, "T@Other": {0: 5, 1: 6}, "U@Other": {0: 99}}
NEW = {"T@G": {0: 3, 1: 20, 2: 0}, "T@Other": {0: 5, 1: 6}, "U@Other": {0: 99}}
CHANGES = {("T", "broker-a", 0): 3, ("T", "broker-a", 1): 20, ("T", "broker-a", 2): 0}
EXPECTED = {("T", "broker-a", 0): 10, ("T", "broker-a", 1): 20, ("T", "broker-a", 2): -1}


def make_store(root: Path, text: str | None = OLD_TEXT, bak: str | None = None) -> Path:
    (root / "config").mkdir(parents=True)
    (root / "commitlog").mkdir()
    (root / "consumequeue").mkdir()
    if text is not None:
        (root / "config" / "consumerOffset.json").write_text(text)
    if bak is not None:
        (root / "config" / "consumerOffset.json.bak").write_text(bak)
    return root


@pytest.fixture(autouse=True)
def _journal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    d = tmp_path / "journal"
    monkeypatch.setenv(journal.JOURNAL_ENV, str(d))
    monkeypatch.setattr(safewrite, "_crash_point", safewrite._no_crash)
    return d


def loaded(root: Path) -> dict:
    return load_consumer_offsets(root / "config", retries=0).table.offsets


def snapshot(root: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted((root / "config").iterdir())}


# ------------------------------------------------------------------------------- happy path


def test_apply_writes_new_table_keeps_others_and_bak(tmp_path: Path, _journal: Path) -> None:
    root = make_store(tmp_path / "s")
    rec = apply_offsets_to_stores({"broker-a": root}, "G", CHANGES, EXPECTED, now_ms=1_800_000_000_000)
    cfg = root / "config"
    assert (cfg / "consumerOffset.json.bak").read_text() == OLD_TEXT
    new = decode_consumer_offsets((cfg / "consumerOffset.json").read_bytes())
    assert new.offsets == NEW
    # Other groups' entries keep their values and their order in the file.
    assert list(new.offsets)[:3] == ["T@G", "T@Other", "U@Other"]
    assert new.data_version == {"counter": 8, "stateVersion": 0, "timestamp": 1_800_000_000_000}
    assert sorted(p.name for p in cfg.iterdir()) == ["consumerOffset.json", "consumerOffset.json.bak"]
    # The journal lives outside the store and records before/after.
    files = list(_journal.glob("*.json"))
    assert [f.name for f in files] == [rec["id"] + ".json"]
    doc = json.loads(files[0].read_text())
    assert doc["group"] == "G" and doc["stores"] == {"broker-a": str(root.resolve())}
    assert {(c["queueId"], c["before"], c["after"]) for c in doc["changes"]} == {
        (0, 10, 3),
        (1, 20, 20),
        (2, -1, 0),
    }
    assert journal.read_journal("latest").id == rec["id"]


def test_negative_target_removes_entry_for_undo(tmp_path: Path) -> None:
    root = make_store(tmp_path / "s")
    apply_offsets_to_stores(
        {"broker-a": root}, "G", {("T", "broker-a", 0): -1, ("T", "broker-a", 1): -1}, None
    )
    assert loaded(root) == {"T@Other": {0: 5, 1: 6}, "U@Other": {0: 99}}


def test_file_missing_everywhere_creates_it(tmp_path: Path) -> None:
    root = make_store(tmp_path / "s", text=None)
    apply_offsets_to_stores({"broker-a": root}, "G", {("T", "broker-a", 0): 4}, {("T", "broker-a", 0): -1})
    assert loaded(root) == {"T@G": {0: 4}}
    assert not (root / "config" / "consumerOffset.json.bak").exists()


# ------------------------------------------------------------------------------- refusals


def _hold_lock(path: Path) -> subprocess.Popen:
    code = textwrap.dedent(
        f"""
        import fcntl, os, sys, time
        fd = os.open({str(path)!r}, os.O_RDWR | os.O_CREAT)
        fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, 0)
        os.write(fd, b"lock")
        print("locked", flush=True)
        time.sleep(60)
        """
    )
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "locked"
    return proc


def test_refuses_while_broker_holds_lock_even_with_abort_override(tmp_path: Path) -> None:
    root = make_store(tmp_path / "s")
    (root / "abort").write_text("1234")
    before = snapshot(root)
    proc = _hold_lock(root / "lock")
    try:
        assert safewrite.broker_lock_held(root)
        with pytest.raises(RefusedError, match="store lock"):
            apply_offsets_to_stores({"broker-a": root}, "G", CHANGES, EXPECTED, force_abort_file=True)
    finally:
        proc.kill()
        proc.wait()
    assert snapshot(root) == before
    assert not safewrite.broker_lock_held(root)


def test_lock_file_without_holder_is_free(tmp_path: Path) -> None:
    root = make_store(tmp_path / "s")
    (root / "lock").write_bytes(b"lock")
    apply_offsets_to_stores({"broker-a": root}, "G", CHANGES, EXPECTED)
    assert loaded(root) == NEW


def test_abort_file_refuses_unless_overridden(tmp_path: Path) -> None:
    root = make_store(tmp_path / "s")
    (root / "abort").write_text("4242")
    before = snapshot(root)
    with pytest.raises(RefusedError, match="unsafe-ignore-abort-file"):
        apply_offsets_to_stores({"broker-a": root}, "G", CHANGES, EXPECTED)
    assert snapshot(root) == before
    apply_offsets_to_stores({"broker-a": root}, "G", CHANGES, EXPECTED, force_abort_file=True)
    assert loaded(root) == NEW


def test_own_lock_prevents_interleaving(tmp_path: Path) -> None:
    root = make_store(tmp_path / "s")
    before = snapshot(root)
    with storelock.mqctl_lock(root / "config", "broker-a"):
        with pytest.raises(RefusedError, match="another mqctl reset"):
            apply_offsets_to_stores({"broker-a": root}, "G", CHANGES, EXPECTED)
    assert snapshot(root) == before


def test_reread_under_lock_refuses_when_offsets_moved(tmp_path: Path, _journal: Path) -> None:
    root = make_store(tmp_path / "s")
    before = snapshot(root)
    moved = dict(EXPECTED)
    moved[("T", "broker-a", 0)] = 11
    with pytest.raises(RefusedError, match="queue 0 is 10, plan expected 11"):
        apply_offsets_to_stores({"broker-a": root}, "G", CHANGES, moved)
    assert snapshot(root) == before
    assert not list(_journal.glob("*.json"))


@pytest.mark.parametrize(
    ("text", "bak", "error"),
    [
        ("{not json", None, StoreCorruptError),
        ("", OLD_TEXT, StoreCorruptError),
        ('{"offsetTable":{"T@G":{0:"x"}}}', None, StoreCorruptError),
        (None, OLD_TEXT, StoreError),
    ],
)
def test_refuses_to_write_what_it_cannot_read(tmp_path: Path, text, bak, error) -> None:  # type: ignore[no-untyped-def]
    root = make_store(tmp_path / "s", text=text, bak=bak)
    before = snapshot(root)
    with pytest.raises(error):
        apply_offsets_to_stores({"broker-a": root}, "G", CHANGES, None)
    assert snapshot(root) == before


def test_not_a_store_and_unknown_broker(tmp_path: Path) -> None:
    (tmp_path / "plain").mkdir()
    with pytest.raises(StoreError, match="not a broker store"):
        apply_offsets_to_stores({"broker-a": tmp_path / "plain"}, "G", CHANGES, None)
    with pytest.raises(NotFoundError):
        apply_offsets_to_stores({"broker-b": tmp_path / "plain"}, "G", CHANGES, None)


def test_unwritable_journal_refuses_before_touching_store(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    root = make_store(tmp_path / "s")
    blocker = tmp_path / "file"
    blocker.write_text("x")
    monkeypatch.setenv(journal.JOURNAL_ENV, str(blocker / "journal"))
    before = snapshot(root)
    with pytest.raises(StoreError, match="journal"):
        apply_offsets_to_stores({"broker-a": root}, "G", CHANGES, EXPECTED)
    assert snapshot(root) == before


def test_journal_dir_resolution(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv(journal.JOURNAL_ENV, raising=False)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    assert journal.journal_dir() == tmp_path / "state" / "mqctl" / "journal"
    monkeypatch.delenv("XDG_STATE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert journal.journal_dir() == tmp_path / "home" / ".local" / "state" / "mqctl" / "journal"


def test_read_journal_errors(tmp_path: Path, _journal: Path) -> None:
    with pytest.raises(NotFoundError):
        journal.read_journal("latest")
    with pytest.raises(NotFoundError):
        journal.read_journal("nope")
    _journal.mkdir()
    (_journal / "bad.json").write_text("{")
    with pytest.raises(StoreError, match="cannot be used"):  # exit 6, naming the file
        journal.read_journal("bad")


# ------------------------------------------------------------------------------- fault injection

WRITE_POINTS = [p for p in safewrite.CRASH_POINTS]
BEFORE_COMMIT = {"locked", "journal-written", "bak-partial", "bak-written", "bak-fsynced", "bak-renamed"} | {
    "temp-partial",
    "temp-written",
    "temp-fsynced",
}


class Boom(Exception):
    pass


def _raise_at(point: str, exc: BaseException):  # type: ignore[no-untyped-def]
    fired = []

    def hook(name: str) -> None:
        if name == point and not fired:
            fired.append(name)
            raise exc

    return hook, fired


@pytest.mark.parametrize("point", WRITE_POINTS)
@pytest.mark.parametrize("kind", ["exception", "disk-full"])
def test_failure_at_every_step_leaves_old_or_new(tmp_path: Path, monkeypatch, point: str, kind: str) -> None:  # type: ignore[no-untyped-def]
    root = make_store(tmp_path / "s", bak=OLD_TEXT)
    exc: BaseException = (
        Boom(point) if kind == "exception" else OSError(errno.ENOSPC, "No space left on device")
    )
    hook, fired = _raise_at(point, exc)
    monkeypatch.setattr(safewrite, "_crash_point", hook)
    try:
        apply_offsets_to_stores({"broker-a": root}, "G", CHANGES, EXPECTED)
        raised = False
    except (Boom, OSError):
        raised = True
    assert fired == [point]
    state = loaded(root)
    # An error raised in-process anywhere, even after the rename, ends in the complete old table
    # (the rename is rolled back) and no journal record that would mislead an undo.
    assert raised and state == OLD, point
    # No temp files stay behind after an in-process failure.
    assert not [p for p in (root / "config").iterdir() if p.name.endswith(safewrite.TMP_SUFFIX)]


def test_failure_on_second_broker_rolls_back_first(tmp_path: Path, monkeypatch, _journal: Path) -> None:  # type: ignore[no-untyped-def]
    a = make_store(tmp_path / "a")
    b = make_store(tmp_path / "b")
    calls = []

    def hook(name: str) -> None:
        calls.append(name)
        if name == "temp-written" and calls.count("renamed") == 1 and "boom" not in calls:
            calls.append("boom")
            raise Boom("second broker")

    monkeypatch.setattr(safewrite, "_crash_point", hook)
    changes = {("T", "broker-a", 0): 1, ("T", "broker-b", 0): 2}
    with pytest.raises(Boom):
        apply_offsets_to_stores({"broker-a": a, "broker-b": b}, "G", changes, None)
    assert loaded(a) == OLD and loaded(b) == OLD
    assert not list(_journal.glob("*.json"))


KILL_SCRIPT = """
import os, signal, sys
from pathlib import Path
from mqctl.store import safewrite
point = sys.argv[2]
def hook(name):
    if name == point:
        os.kill(os.getpid(), signal.SIGKILL)
safewrite._crash_point = hook
from mqctl.model import BackendTarget
from mqctl.ops.journal import apply_journalled
root = Path(sys.argv[1])
write = safewrite.StoreWrite(
    {"broker-a": root}, "G",
    {("T", "broker-a", 0): 3, ("T", "broker-a", 1): 20, ("T", "broker-a", 2): 0},
    {("T", "broker-a", 0): 10, ("T", "broker-a", 1): 20, ("T", "broker-a", 2): -1},
)
apply_journalled(write, BackendTarget("store", (("broker-a", str(root)),)), "G")
print("finished")
"""


@pytest.mark.parametrize("point", WRITE_POINTS)
def test_sigkill_at_every_step_leaves_old_or_new(tmp_path: Path, point: str, _journal: Path) -> None:
    root = make_store(tmp_path / "s", bak=OLD_TEXT)
    repo = Path(__file__).resolve().parents[2]
    env = dict(os.environ, PYTHONPATH=str(repo))
    proc = subprocess.run(
        [sys.executable, "-c", KILL_SCRIPT, str(root), point], env=env, capture_output=True, text=True
    )
    assert proc.returncode == -9, proc.stderr
    state = loaded(root)
    expected_state = OLD if point in BEFORE_COMMIT else NEW
    assert state == expected_state, point
    # Journal first: whenever the new table is in place, the undo record exists.
    if state == NEW:
        assert list(_journal.glob("*.json"))
    # The next run cleans the killed run's temp files and applies normally.
    changes = {("T", "broker-a", 0): 7}
    apply_offsets_to_stores({"broker-a": root}, "G", changes, None)
    assert loaded(root)["T@G"][0] == 7
    assert not [p for p in (root / "config").iterdir() if p.name.endswith(safewrite.TMP_SUFFIX)]


def test_crash_point_count() -> None:
    # 11 points x (exception, disk full, SIGKILL) = 33 crash scenarios for one broker.
    assert len(safewrite.CRASH_POINTS) == 11
