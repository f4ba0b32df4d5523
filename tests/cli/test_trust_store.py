"""A damaged store speaks up: no gate passes, no time-based plan is made, no path is made up.

The stores are tests/ops/reset_stores.py's (facts written there): broker-a T q0 holds store times
1000,1000,1000,3000,3000 | 3000,5000,5000,7000,9000 (two CQ files), G committed 5; q2 holds
100..500 (expired with commit-log segment 0) | 700,800,800, min 5, G committed 2 (below min);
q1, q3 empty. broker-b T q0: 2000,4000,6000, G committed 3 (no lag). Every live message of
broker-a is in its commit-log segment 00000000000000004096 (segment 0 was expired).
Each damage is done by hand to the bytes the spec describes; the expected values follow from
those facts, never from mqctl's own output.
"""

from __future__ import annotations

import csv
import io
import json
import os
import resource
import shutil
import stat
import struct
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from mqctl_testkit.cli import invoke as mqctl
from mqctl_testkit.cli import store_args
from mqctl_testkit.reset_stores import build_stores
from typer.testing import CliRunner

runner = CliRunner()
ROOT = Path(__file__).resolve().parents[2]
NOW = 100_000  # --now-ms: q0's oldest unconsumed (offset 5, stored 3000) is 97 s old, q2's 99.3 s
SEG_4096 = "commitlog/00000000000000004096"


def errors(stderr: str) -> list[str]:
    assert "Traceback" not in stderr
    return [x for x in stderr.splitlines() if x.startswith("mqctl: error: ")]


def _zero_file(path: Path) -> None:
    path.write_bytes(bytes(path.stat().st_size))


def _cq_entry(a: Path, qid: int, offset: int) -> tuple[int, int]:
    """(phys, size) of T queue ``qid``'s entry ``offset`` from its consume-queue file (5 per file)."""
    f = a / "consumequeue" / "T" / str(qid) / f"{offset // 5 * 100:020d}"
    phys, size, _tags = struct.unpack_from(">qiq", f.read_bytes(), offset % 5 * 20)
    return phys, size


def _zero_record(a: Path, qid: int, offset: int) -> None:
    phys, size = _cq_entry(a, qid, offset)
    with open(a / SEG_4096, "r+b") as f:
        f.seek(phys - 4096)
        f.write(bytes(size))


# (case, damage to broker-a, queues of broker-a whose lag time cannot be read, the file named)
DAMAGE: list[tuple[str, Callable[[Path], None], set[int], str]] = [
    ("zeroed-segment", lambda a: _zero_file(a / SEG_4096), {0, 2}, SEG_4096),
    ("missing-commitlog", lambda a: shutil.rmtree(a / "commitlog"), {0, 2}, "commitlog"),
    ("missing-segment", lambda a: os.remove(a / SEG_4096), {0, 2}, "commitlog"),
    ("zeroed-record-q0-offset-5", lambda a: _zero_record(a, 0, 5), {0}, SEG_4096),
]


@pytest.fixture
def stores(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    monkeypatch.setenv("MQCTL_JOURNAL_DIR", str(tmp_path / "journal"))
    return build_stores(tmp_path / "stores")


def _rows(stdout: str) -> dict[tuple[str, int], dict]:
    return {(r["brokerName"], r["queueId"]): r for r in json.loads(stdout)["rows"]}


@pytest.mark.parametrize(("case", "damage", "unknown", "named"), DAMAGE, ids=[d[0] for d in DAMAGE])
def test_unreadable_store_times_are_null_and_exit_6(stores, case, damage, unknown, named) -> None:  # type: ignore[no-untyped-def]
    damage(stores["broker-a"])
    r = mqctl("consumerProgress", "-g", "G", "-o", "json", "--now-ms", str(NOW), *store_args(stores))
    assert r.exit_code == 6, (r.exit_code, r.stderr)
    rows = _rows(r.stdout)  # the rows are still printed
    for qid in (0, 1, 2, 3):
        row = rows[("broker-a", qid)]
        if qid in unknown:
            assert row["lagMs"] is None and row["oldestUnconsumedTimestamp"] is None, (qid, row)
        else:
            assert row["lagMs"] is not None, (qid, row)
    if 2 not in unknown:
        assert rows[("broker-a", 2)]["lagMs"] == NOW - 700  # an intact queue keeps its lag time
    # broker-b is intact: nothing unconsumed, last consumed stored at 6000.
    assert rows[("broker-b", 0)]["lagMs"] == 0 and rows[("broker-b", 0)]["lastTimestamp"] == 6000
    if case == "zeroed-record-q0-offset-5":
        assert rows[("broker-a", 0)]["lastTimestamp"] == 3000  # offset 4 is intact
    elif case == "zeroed-segment":
        assert rows[("broker-a", 0)]["lastTimestamp"] is None  # offset 4 was zeroed too
        assert rows[("broker-a", 2)]["lastTimestamp"] == 0  # offset 1: expired, "none", not damage
    assert json.loads(r.stdout)["totals"]["maxLagMs"] is None
    warnings = [x for x in r.stderr.splitlines() if x.startswith("mqctl: warning: ")]
    assert any(named in w and "commit log damaged" in w for w in warnings), r.stderr
    (err,) = errors(r.stderr)
    assert "cannot be read" in err and "broker-a T queue 0" in err


@pytest.mark.parametrize(("case", "damage", "unknown", "named"), DAMAGE, ids=[d[0] for d in DAMAGE])
def test_gates_and_time_plans_never_pass_on_damage(stores, case, damage, unknown, named) -> None:  # type: ignore[no-untyped-def]
    S = store_args(stores)
    gate = ["consumerProgress", "-g", "G", "--max-lag-time", "1m", "--now-ms", str(NOW), "-o", "json"]
    # The intact store trips the gate (97 s and 99.3 s > 60 s).
    assert mqctl(*gate, *S).exit_code == 10
    plans = [
        ["resetOffsetByTime", "-g", "G", "-t", "T", "--by-duration", "30m", "--output", "json"],
        ["resetOffsetByTime", "-g", "G", "-t", "T", "-s", "4000", "--output", "json"],
    ]
    for args in plans:
        assert mqctl(*args, *S).exit_code == 0
    damage(stores["broker-a"])
    # Where q2 is still intact its 99.3 s trips the gate for real (10); where every lagging
    # queue's time is unknown the gate cannot pass (6). Never 0.
    assert mqctl(*gate, *S).exit_code == (6 if 2 in unknown else 10)
    overview = mqctl("consumerProgress", "-o", "json", "--now-ms", str(NOW), *S)
    assert overview.exit_code == 6, overview.stderr
    g = next(x for x in json.loads(overview.stdout)["rows"] if x["group"] == "G")
    assert g["maxLagMs"] is None
    fleet = mqctl("consumerProgress", "--max-lag-time", "1d", "--now-ms", str(NOW), "-o", "json", *S)
    assert fleet.exit_code == 6
    for args in plans:
        r = mqctl(*args, *S)
        if case == "zeroed-record-q0-offset-5" and "--by-duration" in args:
            # Refused only where the search reads a time it cannot: 30 minutes ago lies after
            # q0's last message (offset 9, stored 9000), which the search reads first and which
            # is intact, so max is the right answer and offset 5 is never needed.
            assert r.exit_code == 0, r.stderr
            targets = {
                (x["brokerName"], x["queueId"]): x["targetOffset"] for x in json.loads(r.stdout)["rows"]
            }
            assert targets[("broker-a", 0)] == 10
            continue
        assert r.exit_code == 6, (args, r.stdout, r.stderr)
        assert r.stdout == ""  # no plan printed: every queue at max would skip the backlog
        (err,) = errors(r.stderr)
        assert "broker-a T queue 0" in err and named in err
    # A target that needs no store time is still planned (the warning names the file).
    r = mqctl("resetOffsetByTime", "-g", "G", "-t", "T", "--to-earliest", "--output", "json", *S)
    assert r.exit_code == 0, r.stderr


def test_unknown_times_in_every_format(stores) -> None:  # type: ignore[no-untyped-def]
    _zero_file(stores["broker-a"] / SEG_4096)
    S = store_args(stores)
    r = mqctl("consumerProgress", "-g", "G", "-o", "csv", "--now-ms", str(NOW), *S)
    assert r.exit_code == 6
    rows = {(x["brokerName"], x["queueId"]): x for x in csv.DictReader(io.StringIO(r.stdout))}
    assert rows[("broker-a", "0")]["lagMs"] == "" and rows[("broker-a", "0")]["lastTimestamp"] == ""
    assert rows[("broker-a", "1")]["lagMs"] == "0"
    r = mqctl("consumerProgress", "-g", "G", "-o", "table", "--now-ms", str(NOW), *S)
    assert r.exit_code == 6 and "unknown" in r.stdout
    # plain is mqadmin's: the broker sends 0 for a time it cannot read, mqadmin prints N/A.
    r = mqctl("consumerProgress", "-g", "G", "-o", "plain", "--now-ms", str(NOW), *S)
    assert r.exit_code == 6
    q0 = next(x for x in r.stdout.splitlines() if x.startswith("T ") and x.split()[1:3] == ["broker-a", "0"])
    assert q0.rstrip().endswith("N/A") and "unknown" not in r.stdout


# --------------------------------------------------------------------- consume-queue segment damage


def _empty_last_file(a: Path) -> None:
    (a / "consumequeue" / "T" / "0" / f"{100:020d}").write_bytes(b"")


def _hole(a: Path) -> None:
    with open(a / "consumequeue" / "T" / "0" / f"{0:020d}", "r+b") as f:
        f.seek(80)  # the first file's last slot (offset 4)
        f.write(bytes(20))


SEGMENT_DAMAGE = [
    # q0's second file (offsets 5..9) emptied: today max reads 5 instead of 10, lag 0 instead of 5.
    ("empty-last-file", _empty_last_file, f"{100:020d}"),
    ("hole-before-last-file", _hole, f"{0:020d}"),
]


@pytest.mark.parametrize(("case", "damage", "named"), SEGMENT_DAMAGE, ids=[d[0] for d in SEGMENT_DAMAGE])
def test_consume_queue_damage_is_exit_6(stores, case, damage, named) -> None:  # type: ignore[no-untyped-def]
    damage(stores["broker-a"])
    for args in (
        ["consumerProgress", "-g", "G", "-o", "json"],
        ["consumerProgress", "--max-lag", "1000000"],
        ["resetOffsetByTime", "-g", "G", "-t", "T", "--to-latest"],
    ):
        r = mqctl(*args, *store_args(stores))
        assert r.exit_code == 6, (args, r.stdout, r.stderr)
        assert r.stdout == ""
        (err,) = errors(r.stderr)
        assert str(stores["broker-a"] / "consumequeue" / "T" / "0" / named) in err


# ------------------------------------------------------------------------------------ config files

CONFIG_DAMAGE = [
    # (case, file, content (None: symlink to /dev/zero), remove the .bak, expected exit, words)
    (
        "offsets-without-offsetTable",
        "consumerOffset.json",
        b'{"dataVersion":{"counter":1}}',
        True,
        6,
        "offsetTable",
    ),
    ("offsets-without-offsetTable-bak", "consumerOffset.json", b"{}", False, 0, "consumerOffset.json.bak"),
    (
        "groups-corrupt-no-bak",
        "subscriptionGroup.json",
        b'{"subscriptionGroupTable":',
        True,
        6,
        "subscriptionGroup",
    ),
    (
        "groups-corrupt-bak",
        "subscriptionGroup.json",
        b'{"subscriptionGroupTable":',
        False,
        0,
        "subscriptionGroup.json.bak",
    ),
    ("offsets-dev-zero", "consumerOffset.json", None, True, 6, "not a regular file"),
    ("groups-dev-zero", "subscriptionGroup.json", None, True, 6, "not a regular file"),
]


def _limited() -> None:  # a subprocess may not grow past 2 GiB: the old code read /dev/zero forever
    resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))


@pytest.mark.parametrize(
    ("case", "name", "data", "no_bak", "status", "words"), CONFIG_DAMAGE, ids=[c[0] for c in CONFIG_DAMAGE]
)
def test_config_damage(stores, case, name, data, no_bak, status, words) -> None:  # type: ignore[no-untyped-def]
    config = stores["broker-a"] / "config"
    (config / name).unlink()
    if data is None:
        (config / name).symlink_to("/dev/zero")
    else:
        (config / name).write_bytes(data)
    if no_bak:
        (config / f"{name}.bak").unlink()
    args = ["consumerProgress", "-g", "G", "-o", "json", *store_args(stores)]
    r = subprocess.run(
        [sys.executable, "-m", "mqctl", *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        preexec_fn=_limited,
    )
    assert r.returncode == status, (r.returncode, r.stderr[-500:])
    assert words in r.stderr and name in r.stderr
    if status:
        (err,) = errors(r.stderr)
        assert name in err and words in err
        assert r.stdout == ""
    else:
        assert json.loads(r.stdout)["rows"]  # read from the .bak, said on stderr


# ------------------------------------------------------------------------------------- permissions


def _as_other_user() -> list[str] | None:
    """A command prefix that runs as a user the store's modes really apply to: root ignores
    chmod 000 for reads, so root switches to ``nobody`` with setpriv; anyone else is already such
    a user. None when neither works here."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        return None
    return [setpriv, "--reuid=nobody", "--regid=nogroup", "--clear-groups"]


@pytest.fixture
def shared_stores() -> Iterator[dict[str, Path]]:
    """The stores under a directory another user can traverse (pytest's tmp_path is 0700)."""
    base = Path(tempfile.mkdtemp(prefix="mqctl-perm-"))
    try:
        base.chmod(0o755)
        stores = build_stores(base / "stores")
        for p in [base / "stores", *(base / "stores").rglob("*")]:
            p.chmod(p.stat().st_mode | stat.S_IROTH | (stat.S_IXOTH if p.is_dir() else 0))
        yield stores
    finally:
        for p in [base, *base.rglob("*")]:
            if not p.is_symlink():
                p.chmod(0o755 if p.is_dir() else 0o644)
        shutil.rmtree(base)


PERMISSIONS = [
    # (case, path made unreadable (mode 000), relative to broker-a's root; the path the error names)
    ("store-root", ".", "."),
    ("config-dir", "config", "config"),
    ("offsets-file", "config/consumerOffset.json", "config/consumerOffset.json"),
    ("groups-file", "config/subscriptionGroup.json", "config/subscriptionGroup.json"),
    ("queue-dir", "consumequeue/T/0", "consumequeue/T/0"),
    ("commitlog-dir", "commitlog", "commitlog"),
    ("commitlog-segment", SEG_4096, SEG_4096),
]


@pytest.mark.parametrize(("case", "denied", "named"), PERMISSIONS, ids=[p[0] for p in PERMISSIONS])
def test_permission_errors_are_exit_6_naming_the_real_path(shared_stores, case, denied, named) -> None:  # type: ignore[no-untyped-def]
    prefix = _as_other_user()
    if prefix is None:
        pytest.skip("running as root without setpriv: chmod 000 cannot deny a read here")
    a = shared_stores["broker-a"]
    target = (a / denied).resolve()
    target.chmod(0)
    args = ["consumerProgress", "-g", "G", "-o", "json", *store_args(shared_stores)]
    r = subprocess.run(
        [*prefix, sys.executable, "-m", "mqctl", *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd="/",
        env={**os.environ, "HOME": "/nonexistent", "PYTHONPATH": str(ROOT)},
    )
    assert r.returncode == 6, (r.returncode, r.stderr)
    (err,) = errors(r.stderr)
    expected = str((a / named).resolve()) if named != "." else str(a)
    assert expected in err and "Permission denied" in err, err
    assert "consumerOffsets" not in err  # never a path that does not exist
