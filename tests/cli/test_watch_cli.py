"""consumerProgress --watch / --history / --status-from / --max-status / --why on a real-format
store (tests/cli/watch_store.py says what it holds). In-process (typer's runner) where a pipe is
enough; one subprocess for the store re-read between samples."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from mqctl_testkit.cli import ctrl_c_default
from mqctl_testkit.watch_store import T0, WatchStore, build
from typer.testing import CliRunner

from mqctl.cli.app import app

NOW = T0 + 60_000
ENV = {"MQCTL_CONFIG": "/dev/null", "NAMESRV_ADDR": ""}


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> WatchStore:
    return build(tmp_path_factory.mktemp("watch") / "a")


def mqctl(*args: str):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(app, ["consumerProgress", *args], env=ENV)


def lines(out: str) -> list[dict]:
    return [json.loads(line) for line in out.splitlines() if line.strip()]


# ------------------------------------------------------------------------------ pipe mode


def test_pipe_prints_one_json_line_per_sample(store: WatchStore) -> None:
    r = mqctl("-g", "G", *store.args(), "--watch", "0.1", "--samples", "3", "--now-ms", str(NOW))
    assert r.exit_code == 0, r.stderr
    docs = lines(r.stdout)
    assert [d["schema"] for d in docs] == ["mqctl/consumerProgress.sample/v1"] * 3
    # The fake clock steps by the interval: 100 ms.
    assert [(d["atMs"], d["window"]["samples"], d["complete"]) for d in docs] == [
        (NOW, 1, True),
        (NOW + 100, 2, True),
        (NOW + 200, 3, True),
    ]
    q0, q1 = docs[-1]["queues"]
    assert (q0["topic"], q0["queueId"], q0["brokerOffset"], q0["consumerOffset"], q0["lag"]) == (
        "Orders",
        0,
        8,
        3,
        5,
    )
    assert (q1["consumerOffset"], q1["lag"], q1["status"], q1["drain"]) == (5, 0, "OK", "drained")
    # Nothing moved in 200 ms (< 10 s: not frozen long enough), lag 5 -> 5: OK; rates 0/s: never.
    assert (q0["status"], q0["consumeRate"], q0["produceRate"], q0["drain"]) == ("OK", 0.0, 0.0, "never")
    assert q0["pullOffset"] is None and docs[-1]["backend"] == "store"
    assert docs[-1]["totals"] == {
        "lag": 5,
        "consumeRate": 0.0,
        "produceRate": 0.0,
        "drain": "never",
        "drainSeconds": None,
        "statusCounts": {"OK": 2},
    }
    assert r.stderr.count("rates are coarse") == 1  # the store note, once


@pytest.mark.parametrize(
    "watch",
    [["-w"], ["--watch"], ["--watch=0.1"], ["-w", "100ms"], ["-w0.1"]],
    ids=["short", "long", "equals", "duration", "attached"],
)
def test_the_interval_is_optional(store: WatchStore, watch: list[str]) -> None:
    # -w followed by another option: the default interval (2 s; one sample, so no wait).
    r = mqctl(*watch, "-g", "G", *store.args(), "--samples", "1")
    assert r.exit_code == 0, r.stderr
    assert len(lines(r.stdout)) == 1
    r = mqctl("-g", "G", *store.args(), "--samples", "1", *watch)  # -w last
    assert r.exit_code == 0, r.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["-w"], "need -g/--groupName"),
        (["-g", "G", "-w", "-o", "plain"], "prints a table or JSON lines"),
        (["-g", "G", "-w", "0"], "expected a positive number of seconds"),
        (["-g", "G", "-w", "-1"], "--watch -1: expected a positive number of seconds"),
        (["-g", "G", "-w", "-.5"], "--watch -.5: expected a positive number of seconds"),
        (["-g", "G", "--watch", "-0.5"], "--watch -0.5: expected a positive number of seconds"),
        # '-w 0.001' (a typo for '-w 1') would ask every broker hundreds of times a second
        (["-g", "G", "-w", "0.001"], "--watch 0.001: at least 0.1 s between samples"),
        (["-g", "G", "--watch=10ms"], "--watch 10ms: at least 0.1 s between samples"),
        (["-g", "G", "-w", "--window", "1"], "at least 2 samples"),
        (["-g", "G", "-w", "--max-status", "ERR"], "expected one of OK, WARN, REWIND, STOP, STALL, STUCK"),
        (["-g", "G", "--max-status", "WARN"], "--max-status needs a window"),
        (["-g", "G", "-w", "--why", "broker-a:0"], "cannot be combined"),
        (["-g", "G", "-w", "--tags", "TagA"], "belong to the one-shot read"),
        (["-g", "G", "--why", "nonsense"], "expected BROKER:QID or TOPIC/BROKER/QID"),
    ],
)
def test_usage_errors(store: WatchStore, args: list[str], message: str) -> None:
    r = mqctl(*args, *store.args(), "--samples", "1")
    assert r.exit_code == 2, r.stdout
    assert message in r.stderr


def test_store_is_reread_each_sample(tmp_path: Path) -> None:
    """A real process on a pipe: the test moves the committed offset between samples (as a broker's
    flush rewrites consumerOffset.json); Ctrl-C (SIGINT) ends it with 130."""
    s = build(tmp_path / "a")
    p = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "mqctl",
            "consumerProgress",
            "-g",
            "G",
            *s.args(),
            "-w",
            "0.1",
            "--samples",
            "300",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**ENV, "PATH": "/usr/bin:/bin"},
        preexec_fn=ctrl_c_default,  # SIGINT below must be Ctrl-C whoever started the tests
    )
    try:
        first = json.loads(p.stdout.readline())  # type: ignore[union-attr]
        assert first["queues"][0]["consumerOffset"] == 3
        s.commit(6)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            doc = json.loads(p.stdout.readline())  # type: ignore[union-attr]
            if doc["queues"][0]["consumerOffset"] == 6:
                break
        else:
            pytest.fail("the new committed offset never showed")
        q0 = doc["queues"][0]
        assert (q0["lag"], q0["consumeRate"] > 0) == (2, True)
        p.send_signal(signal.SIGINT)
        _out, err = p.communicate(timeout=20)
    finally:
        p.kill()
    assert p.returncode == 130, err
    assert "mqctl: interrupted" in err


# ----------------------------------------------------------- --history, --status-from, gates


def test_history_then_status_from_and_max_status(store: WatchStore, tmp_path: Path) -> None:
    h = tmp_path / "h.jsonl"
    one = mqctl("-g", "G", *store.args(), "--history", str(h), "--now-ms", str(NOW), "-o", "json")
    assert one.exit_code == 0, one.stderr
    assert json.loads(one.stdout)["schema"] == "mqctl/consumerProgress/v1"  # the usual output
    # 15 s later, nothing moved: q0 (lag 5, committed 3 for 15 s, broker 8 -> 8) is STOP > WARN.
    two = mqctl(
        "-g", "G", *store.args(), "--history", str(h), "--now-ms", str(NOW + 15_000), "--max-status", "WARN"
    )
    assert two.exit_code == 10
    assert "Orders" in two.stdout  # printed first (plain)
    assert (
        "--max-status WARN exceeded: group G is STOP (Orders/broker-a/0 STOP: nothing moved for 15s"
        in two.stderr
    )
    samples = lines(h.read_text())
    assert [d["atMs"] for d in samples] == [NOW, NOW + 15_000]
    assert [d["status"] for d in samples] == ["OK", "STOP"]  # each line judged with the file's window

    r = mqctl("-g", "G", "--status-from", str(h), "-o", "json")
    assert r.exit_code == 0, r.stderr
    (doc,) = lines(r.stdout)
    q0, q1 = doc["queues"]
    assert (doc["status"], doc["window"], doc["atMs"]) == (
        "STOP",
        {"samples": 2, "of": 10, "spanMs": 15_000},
        NOW + 15_000,
    )
    assert (q0["status"], q0["reason"], q0["consumeRate"], q0["drain"]) == (
        "STOP",
        "nothing moved for 15s with 5 unconsumed",
        0.0,
        "never",
    )
    assert (q1["status"], q1["reason"]) == ("OK", "caught up")
    assert mqctl("-g", "G", "--status-from", str(h), "--max-status", "STOP").exit_code == 0
    assert mqctl("-g", "G", "--status-from", str(h), "--max-status", "REWIND").exit_code == 10
    table = mqctl("-g", "G", "--status-from", str(h), "-o", "table")
    assert "STOP" in table.stdout and "Group G: STOP (1 STOP, 1 OK)" in table.stdout


def test_watch_is_seeded_by_its_history_and_stops_at_max_status(store: WatchStore, tmp_path: Path) -> None:
    h = tmp_path / "h.jsonl"
    assert mqctl("-g", "G", *store.args(), "--history", str(h), "--now-ms", str(NOW)).exit_code == 0
    r = mqctl(
        "-g", "G", *store.args(), "-w", "0.1", "--samples", "5", "--history", str(h),
        "--now-ms", str(NOW + 12_000), "--max-status", "OK",
    )  # fmt: skip
    # The first sample already spans 12 s with the seed: STOP; printed, then exit 10.
    assert r.exit_code == 10
    assert [d["status"] for d in lines(r.stdout)] == ["STOP"]
    assert len(lines(h.read_text())) == 2


def test_status_from_refuses_bad_files(store: WatchStore, tmp_path: Path) -> None:
    h = tmp_path / "h.jsonl"
    assert mqctl("-g", "G", *store.args(), "--history", str(h), "--now-ms", str(NOW)).exit_code == 0
    other = mqctl("-g", "Other", "--status-from", str(h))
    assert (other.exit_code, other.stderr.splitlines()[0]) == (
        2,
        f"mqctl: error: {h} has no samples of group Other (it holds: G)",
    )
    corrupt = tmp_path / "corrupt.jsonl"
    corrupt.write_text(h.read_text() + "{oops\n")
    r = mqctl("-g", "G", "--status-from", str(corrupt))
    assert r.exit_code == 6 and f"{corrupt}: line 2 is not a consumerProgress sample (not JSON)" in r.stderr
    foreign = tmp_path / "foreign.json"
    foreign.write_text(mqctl("-g", "G", *store.args(), "-o", "json").stdout)
    r = mqctl("-g", "G", "--status-from", str(foreign))
    assert r.exit_code == 2 and "is not a consumerProgress history" in r.stderr
    assert mqctl("-g", "G", "--status-from", str(tmp_path / "none.jsonl")).exit_code == 2
    # A line cut short by a killed run: skipped with a warning; the next append starts a new line.
    cut = tmp_path / "cut.jsonl"
    cut.write_text(h.read_text() + '{"schema":"mqctl/cons')
    r = mqctl("-g", "G", "--status-from", str(cut), "-o", "json")
    assert r.exit_code == 0 and f"{cut}: line 2 is cut short" in r.stderr
    assert mqctl("-g", "G", *store.args(), "--history", str(cut), "--now-ms", str(NOW + 1)).exit_code == 0
    text = cut.read_text().splitlines()  # the append started a new line after the cut one
    assert len(text) == 3 and text[1] == '{"schema":"mqctl/cons' and json.loads(text[2])["atMs"] == NOW + 1
    r = mqctl("-g", "G", "--status-from", str(cut), "-o", "json")  # the cut line, now inside: still skipped
    assert r.exit_code == 0 and lines(r.stdout)[0]["window"]["samples"] == 2


def test_history_is_never_written_into_a_store(store: WatchStore) -> None:
    r = mqctl("-g", "G", *store.args(), "--history", str(store.root / "h.jsonl"))
    assert r.exit_code == 2 and "refusing to write inside the broker store" in r.stderr
    assert not (store.root / "h.jsonl").exists()


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="no /proc")
@pytest.mark.parametrize("target", ["/proc/mqctl-h.jsonl", "/proc/self/status"])
def test_history_that_cannot_be_appended_to_is_refused_before_the_read(
    store: WatchStore, target: str
) -> None:
    """/proc takes no new file: said before the cluster is read. /proc/self/status takes no
    write (root may open it for one) and no seek to its end: whichever step refuses names it."""
    r = mqctl("-g", "G", *store.args(), "--history", target)
    assert r.exit_code == 1, r.stderr
    (line,) = [x for x in r.stderr.splitlines() if x.startswith("mqctl: error: ")]
    if target == "/proc/mqctl-h.jsonl" or os.geteuid() != 0:
        assert line.startswith(f"mqctl: error: --history {target}: cannot append to it")
        assert line.endswith("nothing read")  # refused by the check, before the read
    else:
        assert line.startswith(f"mqctl: error: {target}: cannot read it as a history file")


# ------------------------------------------------------------------------------------ --why


def test_why_shows_the_message_at_the_committed_offset(store: WatchStore) -> None:
    r = mqctl("-g", "G", *store.args(), "--why", "broker-a:0", "-o", "json", "--now-ms", str(NOW))
    assert r.exit_code == 0, r.stderr
    doc = json.loads(r.stdout)
    m = doc["message"]
    # Offset 3 of Orders q0: what the writer put there.
    assert (doc["committed"], doc["offset"], m["queueOffset"]) == (3, 3, 3)
    assert (m["msgId"], m["uniqKey"], m["keys"], m["tags"]) == (
        store.msg_ids[3],
        "UNIQ0003",
        "order-3",
        "TagB",
    )
    assert (m["storeTimestamp"], m["ageMs"], m["bornHost"], m["reconsumeTimes"]) == (
        T0 + 3000,
        NOW - T0 - 3000,
        "127.0.0.1:50000",
        0,
    )
    # The retry queue's 4 entries were read; the copy at offset 2 names the original.
    retry = doc["retry"]
    assert [(c["queueOffset"], c["reconsumeTimes"]) for c in retry["copies"]] == [(2, 2)]
    assert (retry["topic"], retry["entries"], retry["looked"]) == (
        "%RETRY%G",
        4,
        [{"brokerName": "broker-a", "queueId": 0, "from": 0, "to": 4}],
    )
    text = mqctl("-g", "G", *store.args(), "--why", "Orders/broker-a/0", "--now-ms", str(NOW)).stdout
    assert f"msgId {store.msg_ids[3]}" in text and "keys order-3  tags TagB" in text
    assert "1 copy(ies) in %RETRY%G" in text and "looked at the last 4 entries of 1 queue(s)" in text


def test_why_retry_scan_bound_and_errors(store: WatchStore) -> None:
    r = mqctl("-g", "G", *store.args(), "--why", "broker-a:0", "--retry-scan", "1", "-o", "json")
    retry = json.loads(r.stdout)["retry"]
    assert (retry["copies"], retry["entries"], retry["looked"][0]["from"]) == ([], 1, 3)
    caught_up = json.loads(mqctl("-g", "G", *store.args(), "--why", "broker-a:1", "-o", "json").stdout)
    assert (caught_up["message"], caught_up["note"]) == (None, "nothing unconsumed: committed = max")
    missing = mqctl("-g", "G", *store.args(), "--why", "broker-a:7")
    assert missing.exit_code == 3 and "group G has no queue broker-a:7" in missing.stderr


def test_watch_shows_the_stuck_message_of_a_stalled_queue(store: WatchStore, tmp_path: Path) -> None:
    # A hand-written history line: 12 s earlier, Orders q0 was at max 6, committed 3 (only the
    # offsets are read back). Now max 8, committed 3 still: STALL (frozen 12 s >= 10 s, broker
    # 6 -> 8), and the line carries the message at offset 3 with its retried copy.
    h = tmp_path / "h.jsonl"
    queues = [
        {"topic": "Orders", "brokerName": "broker-a", "queueId": 0, "brokerOffset": 6, "consumerOffset": 3},
        {"topic": "Orders", "brokerName": "broker-a", "queueId": 1, "brokerOffset": 5, "consumerOffset": 5},
    ]
    h.write_text(
        json.dumps(
            {"schema": "mqctl/consumerProgress.sample/v1", "group": "G", "atMs": NOW, "queues": queues}
        )
        + "\n"
    )
    r = mqctl(
        "-g",
        "G",
        *store.args(),
        "-w",
        "0.1",
        "--samples",
        "1",
        "--history",
        str(h),
        "--now-ms",
        str(NOW + 12_000),
    )
    assert r.exit_code == 0, r.stderr
    (doc,) = lines(r.stdout)
    q0, q1 = doc["queues"]
    assert (doc["status"], q0["status"], q1["status"]) == ("STALL", "STALL", "OK")
    assert q0["reason"] == "committed 3 for 12s while the broker went 6 -> 8"
    # consume 0/s, produce 2 messages in 12 s.
    assert (q0["consumeRate"], q0["produceRate"], q0["drain"]) == (0.0, round(2 / 12, 3), "never")
    stuck = q0["stuckMessage"]
    assert (stuck["offset"], stuck["message"]["msgId"], stuck["message"]["keys"]) == (
        3,
        store.msg_ids[3],
        "order-3",
    )
    assert [c["queueOffset"] for c in stuck["retry"]["copies"]] == [2]
    assert "stuckMessage" not in q1
    assert len(lines(h.read_text())) == 2
