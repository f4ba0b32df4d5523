"""Scenario 10: a secured cluster (matrix_secure.py: ACL, and mutual TLS on every call), each
command of mqctl against the real broker and the real mqadmin of its version with the same
accounts. An account with the rights gets mqadmin's numbers; a wrong secret, an unknown access
key, an unsigned request, a missing grant on the group or the topic, an admin request from a
non-admin account each get one line naming the request, its group/topic, the access key and why
(the broker's remark after it, no Java class or frame), exit 8, and mqadmin is refused the same;
a denied reset changes nothing; the secrets appear in nothing mqctl wrote.

Truth: the data set is built here (message i -> queue i % 4, tags by queue offset, the first 40
consumed), so offsets, lag, filtered lag, the message a committed offset waits on and the window
of the lag time follow from the plan; the rest is mqadmin's output with the same account.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from compat_harness import parse_consumer_progress
from matrix_secure import (
    ADMIN,
    APP,
    BROKER,
    GHOST,
    GROUP,
    OUTSIDER,
    QUEUES,
    SECRETS,
    STRANGER,
    TOPIC,
    WRONG,
    Account,
    SecureRocketMQ,
)

pytestmark = pytest.mark.compat

TAGS = ("TagA", "TagB", "TagA", None, "TagC")  # by queue offset: offsets 10..14 hold each once
PHASE1, PHASE2 = 40, 20  # 10 messages per queue consumed, then 5 per queue left as lag
CONSUMED, STORED = PHASE1 // QUEUES, (PHASE1 + PHASE2) // QUEUES
WRITTEN: list[str] = []  # everything mqctl printed in this module (the secrets must be in none)


@dataclass(frozen=True)
class Data:
    phase2_from_ms: int
    phase2_to_ms: int


def _plan(start: int, count: int) -> list[str]:
    lines = []
    for i in range(start, start + count):
        tag = TAGS[(i // QUEUES) % len(TAGS)] or "-"
        lines.append(f"send {tag} sec-{i} {i % QUEUES} {BROKER}")
    return lines


@pytest.fixture(scope="module")
def data(secure: SecureRocketMQ) -> Data:
    secure.produce(TOPIC, _plan(0, PHASE1))
    secure.consume(TOPIC, GROUP, "*", max_messages=PHASE1, idle=5, linger=2)
    t0 = int(time.time() * 1000)
    secure.produce(TOPIC, _plan(PHASE1, PHASE2))
    t1 = int(time.time() * 1000)
    secure.wait_offsets_flushed()
    return Data(t0, t1)


@pytest.fixture(scope="module")
def journal(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("secure-journal")


def mq(secure: SecureRocketMQ, account: Account | None, *args: str, journal: Path | None = None, **kw: Any):  # type: ignore[no-untyped-def]
    """mqctl as ``account``; with ``journal``, its journal and Spark's log go into that directory
    (the last test reads it all)."""
    env = {"MQCTL_JOURNAL_DIR": str(journal), "XDG_STATE_HOME": str(journal / "state")} if journal else {}
    proc = secure.mqctl_as(account, *args, env=env, **kw)
    WRITTEN.extend([proc.stdout, proc.stderr])
    return proc


def mq_json(secure: SecureRocketMQ, account: Account, *args: str, **kw: Any) -> Any:
    proc = mq(secure, account, *args, "--output", "json", **kw)
    assert proc.returncode == 0, (
        f"mqctl {' '.join(args)} as {account.what}: exit {proc.returncode}\n{proc.stderr}"
    )
    return json.loads(proc.stdout)


def _error_line(proc) -> str:  # type: ignore[no-untyped-def]
    lines = [ln for ln in proc.stderr.splitlines() if ln.startswith("mqctl: error: ")]
    assert len(lines) == 1, proc.stderr
    return lines[0]


def _tps_masked(text: str) -> list[str]:
    return ["Consume TPS: <moves>" if ln.startswith("Consume TPS:") else ln for ln in text.splitlines()]


def _offsets(rows: list[dict[str, Any]]) -> dict[int, tuple[int, int]]:
    return {r["queueId"]: (r["brokerOffset"], r["consumerOffset"]) for r in rows if r["topic"] == TOPIC}


# --------------------------------------------------------------------------- reads


@pytest.mark.parametrize("account", [ADMIN, APP], ids=["admin", "app"])
def test_reads_equal_mqadmin_with_the_same_account(secure, data, account, journal, fidelity) -> None:  # type: ignore[no-untyped-def]
    what = f"secure {account.what}"
    real = secure.mqadmin_ok_as(account, "consumerProgress", "-g", GROUP)
    theirs = parse_consumer_progress(real)[0]
    doc = mq_json(secure, account, "consumerProgress", "-g", GROUP)
    plain = mq(secure, account, "consumerProgress", "-g", GROUP, "-o", "plain").stdout
    ok = fidelity.check(f"{what}: consumerProgress -o plain = mqadmin's (TPS masked: it moves)",
                        _tps_masked(plain), _tps_masked(real))  # fmt: skip
    ok &= fidelity.check(f"{what}: consumerProgress rows = mqadmin's",
                        _offsets(doc["rows"]), {r.queue_id: (r.broker_offset, r.consumer_offset) for r in theirs if r.topic == TOPIC})  # fmt: skip
    ok &= fidelity.check(
        f"{what}: offsets from the plan",
        _offsets(doc["rows"]),
        dict.fromkeys(range(QUEUES), (STORED, CONSUMED)),
    )
    ages = [r["oldestUnconsumedTimestamp"] for r in doc["rows"] if r["topic"] == TOPIC]
    ok &= fidelity.check(f"{what}: lag time = the age of a phase-2 message",
                         all(data.phase2_from_ms - 1000 <= t <= data.phase2_to_ms + 1000 for t in ages), True)  # fmt: skip
    tags = mq_json(secure, account, "consumerProgress", "-g", GROUP, "-t", TOPIC, "--tags", "TagA || TagB")
    ok &= fidelity.check(f"{what}: --tags 'TagA || TagB' per queue (3 of offsets 10..14)",
                         {r["queueId"]: r["matchedDiff"] for r in tags["rows"]}, dict.fromkeys(range(QUEUES), 3))  # fmt: skip
    overview = mq_json(secure, account, "consumerProgress")
    groups = {r["group"]: r["diffTotal"] for r in overview["rows"]}
    ok &= fidelity.check(
        f"{what}: overview diff total of {GROUP}", groups.get(GROUP), QUEUES * (STORED - CONSUMED)
    )
    real_overview = {ln.split()[0]: int(ln.split()[-1]) for ln in secure.mqadmin_ok_as(account, "consumerProgress").splitlines()[1:] if ln.strip()}  # fmt: skip
    ok &= fidelity.check(
        f"{what}: overview diff total = mqadmin's", groups.get(GROUP), real_overview.get(GROUP)
    )
    ips = "10.0.0.1,10.0.0.2,10.0.0.3"
    plain = mq(secure, account, "allocateMQ", "-t", TOPIC, "-i", ips, "-o", "plain")
    ok &= fidelity.check(
        f"{what}: allocateMQ = mqadmin's",
        plain.stdout,
        secure.mqadmin_ok_as(account, "allocateMQ", "-t", TOPIC, "-i", ips),
    )
    history = journal / f"history-{account.access_key}.jsonl"
    proc = mq(secure, account, "consumerProgress", "-g", GROUP, "-t", TOPIC, "-w", "500ms", "--samples", "2",
              "--history", str(history), "-o", "json")  # fmt: skip
    samples = [json.loads(line) for line in proc.stdout.splitlines()]
    ok &= fidelity.check(
        f"{what}: --watch, 2 samples, lag each", [s["totals"]["lag"] for s in samples], [20, 20]
    )
    why = mq_json(secure, account, "consumerProgress", "-g", GROUP, "--why", f"{TOPIC}/{BROKER}/1")
    ok &= fidelity.check(
        f"{what}: --why names the message at offset 10 of queue 1",
        why["message"]["keys"],
        f"sec-{PHASE1 + 1}",
    )
    assert ok, "secured reads differ, see the fidelity section"


def test_online_group_connections_and_allocation(secure, data, fidelity, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """consumerConnection and allocateMQ -g with a consumer of the group online, as the app account."""
    from matrix_secure import LIVE_GROUP

    stop = tmp_path / "stop"
    with secure.background_consumer(TOPIC, LIVE_GROUP, stop):
        deadline = time.monotonic() + 90
        while True:
            alloc = mq(secure, APP, "allocateMQ", "-g", LIVE_GROUP, "-o", "json")
            if alloc.returncode == 0 and all(r["status"] == "ok" for r in json.loads(alloc.stdout)["rows"]):
                break
            assert time.monotonic() < deadline, alloc.stderr
            time.sleep(2)
        mine = mq(secure, APP, "consumerConnection", "-g", LIVE_GROUP, "-o", "plain").stdout
        real = secure.mqadmin_ok_as(APP, "consumerConnection", "-g", LIVE_GROUP)
    rows = json.loads(alloc.stdout)["rows"]
    ok = fidelity.check("secure allocateMQ -g: the one client owns every queue",
                        sorted((r["queueId"], len(r["reported"])) for r in rows if r["topic"] == TOPIC),
                        [(q, 1) for q in range(QUEUES)])  # fmt: skip
    ok &= fidelity.check(
        "secure consumerConnection = mqadmin's (port masked)", _mask_port(mine), _mask_port(real)
    )
    assert ok, "secured online views differ, see the fidelity section"


def _mask_port(text: str) -> list[str]:
    import re

    return [re.sub(r"(\d+\.\d+\.\d+\.\d+):\d+", r"\1:<port>", ln) for ln in text.splitlines()]


# --------------------------------------------------------------------------- resets


def test_reset_dry_run_execute_undo_as_the_app_account(secure, data, journal, fidelity) -> None:  # type: ignore[no-untyped-def]
    """Offline group: the dry run's targets are the plan's offsets of the time, --execute puts them
    on the broker (mqadmin, as the admin, shows them), --undo --execute puts back the old ones."""
    at = str(data.phase2_from_ms)  # every phase-2 message is stored at or after this: offset 10
    reset = ("resetOffsetByTime", "-g", GROUP, "-t", TOPIC, "-s", at)
    dry = mq_json(secure, APP, *reset, journal=journal)
    ok = fidelity.check("secure reset dry run: targets", {r["queueId"]: r["targetOffset"] for r in dry["rows"]},
                        dict.fromkeys(range(QUEUES), CONSUMED))  # fmt: skip
    to_latest = ("resetOffsetByTime", "-g", GROUP, "-t", TOPIC, "--to-latest", "--execute")
    assert mq(secure, APP, *to_latest, journal=journal).returncode == 0
    ok &= fidelity.check(
        "secure reset --execute: mqadmin shows the targets",
        _shown(secure),
        dict.fromkeys(range(QUEUES), STORED),
    )
    undo = mq(secure, APP, "resetOffsetByTime", "--undo", "latest", "--execute", journal=journal)
    assert undo.returncode == 0, undo.stderr
    ok &= fidelity.check(
        "secure reset --undo --execute: the old offsets",
        _shown(secure),
        dict.fromkeys(range(QUEUES), CONSUMED),
    )
    assert ok, "secured reset differs, see the fidelity section"


def _shown(secure: SecureRocketMQ) -> dict[int, int]:
    secure.wait_offsets_flushed()
    rows = parse_consumer_progress(secure.mqadmin_ok_as(ADMIN, "consumerProgress", "-g", GROUP))[0]
    return {r.queue_id: r.consumer_offset for r in rows if r.topic == TOPIC}


def test_online_reset(secure, data, journal, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A consumer online: 5.x takes the reset through the broker (exit 0); a 4.x broker cannot
    reset one queue to an offset for online clients: refused (5), not denied (8)."""
    from matrix_secure import LIVE_GROUP

    with secure.background_consumer(TOPIC, LIVE_GROUP, tmp_path / "stop"):
        secure.wait_online(LIVE_GROUP)
        proc = mq(
            secure,
            APP,
            "resetOffsetByTime",
            "-g",
            LIVE_GROUP,
            "-t",
            TOPIC,
            "--to-earliest",
            "--execute",
            journal=journal,
        )
    assert proc.returncode == (5 if secure.version.legacy else 0), proc.stderr


# --------------------------------------------------------------------------- denials


def _denials(legacy: bool, authorization: bool) -> list[tuple[Account | None, tuple[str, ...], str, str]]:
    """(account, command, the request denied and on what, why) a user sees."""
    progress = ("consumerProgress", "-g", GROUP)
    reset = ("resetOffsetByTime", "-g", GROUP, "-t", TOPIC, "--to-latest", "--execute")
    first = f"GET_CONSUME_STATS on group {GROUP}"
    cases = [
        (WRONG, progress, first, "signature check failed — wrong secret?"),
        (GHOST, progress, first, "unknown access key"),
        (None, progress, first, "the request is not signed"),
    ]
    if legacy:  # a 4.x broker checks grants only on writes (and pulls, sends, heartbeats)
        cases += [
            (
                OUTSIDER,
                reset,
                f"UPDATE_CONSUMER_OFFSET on group {GROUP}, topic {TOPIC}",
                f"no permission on group {GROUP}",
            ),
            (
                STRANGER,
                reset,
                f"UPDATE_CONSUMER_OFFSET on group {GROUP}, topic {TOPIC}",
                f"no permission on topic {TOPIC}",
            ),
        ]
    elif authorization:
        cases += [
            (OUTSIDER, progress, first, f"no permission on group {GROUP}"),
            (
                STRANGER,
                (*progress, "-t", TOPIC),
                f"GET_CONSUME_STATS on group {GROUP}, topic {TOPIC}",
                f"no permission on topic {TOPIC}",
            ),
            (
                OUTSIDER,
                reset,
                f"GET_CONSUME_STATS on group {GROUP}, topic {TOPIC}",
                f"no permission on group {GROUP}",
            ),
        ]
    return cases


def test_each_denial_is_one_line_exit_8_and_mqadmin_is_refused_too(secure, data, journal, fidelity) -> None:  # type: ignore[no-untyped-def]
    before = _shown(secure)
    ok = True
    for account, command, request, why in _denials(secure.version.legacy, secure.authorization):
        who = f"for access key {account.access_key}" if account else "to an unsigned request"
        records = set(journal.glob("*.json"))
        proc = mq(secure, account, *command, journal=journal)
        line = _error_line(proc)
        if command[0] == "resetOffsetByTime":
            _refused_and_nothing_to_undo(secure, journal, set(journal.glob("*.json")) - records)
        label = f"secure denial {account.what if account else 'unsigned'} {command[0]}"
        ok &= fidelity.check(f"{label}: exit", proc.returncode, 8)
        ok &= fidelity.check(
            f"{label}: line", f"{BROKER} denied {request} {who}: {why} (broker: " in line, True
        )
        ok &= fidelity.check(
            f"{label}: no Java in it",
            any(s in proc.stderr for s in ("org.apache", ".java:", "Exception")),
            False,
        )
        print(f"{secure.version} {label}:\n  {line}")
        if command[0] == "consumerProgress":
            real = secure.mqadmin_as(account, *command)
            ok &= fidelity.check(
                f"{label}: mqadmin refused the same", _remark(line) in real.stdout + real.stderr, True
            )
    ok &= fidelity.check("secure denials: no offset moved", _shown(secure), before)
    if secure.version.legacy or not secure.authorization:
        # 4.x checks only the signature of a read (and a 5.x broker without authorization checks
        # nothing more): a signed account without a grant on the group reads it, mqadmin too.
        # README, "ACL": an answer is not a permission.
        read = mq(secure, OUTSIDER, "consumerProgress", "-g", GROUP, "--output", "json")
        ok &= fidelity.check("secure 4.x: a signed account without the group reads it", read.returncode, 0)
        ok &= fidelity.check("secure 4.x: ... and so does mqadmin",
                             "Exception" in secure.mqadmin_as(OUTSIDER, "consumerProgress", "-g", GROUP).stderr, False)  # fmt: skip
    assert ok, "secured denials differ, see the fidelity section"


def _refused_and_nothing_to_undo(secure, journal, new: set[Path]) -> None:  # type: ignore[no-untyped-def]
    """A reset denied before any write (5.x: its plan could not be read) leaves no record; one the
    broker denied at the write (4.x) leaves one in state ``refused``, and --undo of it writes
    nothing and says there is nothing to undo."""
    if not new:
        return
    (record,) = new
    assert json.loads(record.read_text())["state"] == "refused", record.read_text()
    undo = mq(secure, ADMIN, "resetOffsetByTime", "--undo", record.stem, "--execute", journal=journal)
    assert undo.returncode == 5 and "nothing to undo" in _error_line(undo), undo.stderr


def _remark(line: str) -> str:
    """The broker's remark as mqctl quotes it (mqadmin prints it inside its exception)."""
    return line.rsplit("(broker: ", 1)[1][:-1]


def test_an_admin_request_from_a_non_admin_account(secure, data) -> None:  # type: ignore[no-untyped-def]
    """mqctl sends no admin request (a 4.x ADMIN_CODE, a 5.x rule on the cluster): asked through
    its client, the broker's answer to one reads as such."""
    from matrix_secure import SECURE_CLUSTER

    from mqctl.errors import AccessDeniedError

    if not secure.authorization:
        pytest.skip(f"RocketMQ {secure.version}: authentication only (matrix_secure.py says why)")
    err = secure.admin_request_as(APP)
    assert isinstance(err, AccessDeniedError), err
    want = "an admin request, and appuser1 is not an admin account" if secure.version.legacy else (
        f"an admin request: appuser1 has no permission on the cluster {SECURE_CLUSTER}")  # fmt: skip
    assert want in err.message and err.message.startswith(f"{BROKER} denied "), err.message
    print(f"{secure.version} admin request as {APP.what}:\n  {err.message}")
    WRITTEN.append(err.message)


def test_debug_adds_a_traceback_and_keeps_exit_8(secure, data) -> None:  # type: ignore[no-untyped-def]
    proc = mq(secure, WRONG, "--debug", "consumerProgress", "-g", GROUP)
    assert proc.returncode == 8 and "Traceback (most recent call last)" in proc.stderr, proc.stderr


@pytest.mark.spark
def test_lagreport_as_the_app_account(secure, data, journal) -> None:  # type: ignore[no-untyped-def]
    out = journal / "lag"  # the dataset, read by the last test with Spark's log
    doc = mq_json(secure, APP, "lagReport", "--lag-time", "--out", str(out), "--format", "json", "--top", "5",
                  journal=journal, timeout=600)  # fmt: skip
    top = {g["group"]: (g["diffTotal"], g["maxLagMs"] > 0) for g in doc["top"]}
    assert top.get(GROUP) == (QUEUES * (STORED - CONSUMED), True), doc


def test_no_secret_in_anything_mqctl_wrote(secure, journal) -> None:  # type: ignore[no-untyped-def]
    """Last: every stdout and stderr of this module's mqctl runs (--debug traces included), the
    journal, the --history files, the lagReport dataset and Spark's log hold no secret."""
    files = [f for f in journal.rglob("*") if f.is_file()]
    texts = WRITTEN + [f.read_text(errors="replace") for f in files]
    assert any(f.suffix == ".jsonl" for f in files) and any(t for t in WRITTEN)
    leaks = [(s, t[:200]) for s in SECRETS for t in texts if s in t]
    assert not leaks, leaks
