"""Tables and overviews a user can trust (issue 16): --watch on a dumb terminal, lagReport's
--out checked before the job, lagReport and the overview agreeing on the groups, and the
overview's plain output holding exactly the groups mqadmin lists."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from mqctl_testkit.cli import error_lines, snapshot
from mqctl_testkit.cli import invoke as mqctl
from mqctl_testkit.watch_store import build

from mqctl.store.demo import DemoSummary
from mqctl.store.writer import StoreWriter


def error_line(stderr: str) -> str:
    (line,) = error_lines(stderr)
    return line


# --- --watch on TERM=dumb -----------------------------------------------------------------------


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
def test_watch_on_a_dumb_terminal_shows_every_sample(tmp_path: Path) -> None:
    """rich's Live shows nothing on TERM=dumb until it stops: each sample must print instead."""
    store = build(tmp_path / "a")
    sock = f"mqctl-dumb-{os.getpid()}"

    def tmux(*args: str) -> str:
        return subprocess.run(["tmux", "-L", sock, *args], capture_output=True, text=True, timeout=30).stdout

    env = f"env -i PATH=/usr/bin:/bin HOME={shlex.quote(str(tmp_path))} TERM=dumb MQCTL_CONFIG=/dev/null"
    cmd = (
        f"{env} {shlex.quote(sys.executable)} -m mqctl consumerProgress -g G "
        f"--store broker-a={shlex.quote(str(store.root))} -w 0.5; echo EXIT=$?; sleep 60"
    )
    tmux("new-session", "-d", "-s", "w", "-x", "100", "-y", "50", cmd)
    try:
        deadline, screen = time.monotonic() + 30, ""
        while time.monotonic() < deadline:
            screen = tmux("capture-pane", "-p", "-t", "w")
            if screen.count("Group G:") >= 2:
                break
            time.sleep(0.2)
        assert screen.count("Group G:") >= 2, f"no table while the watch runs:\n{screen}"
        assert "EXIT=" not in screen  # still running: the tables came before the end
        assert "cannot redraw" in screen  # and the user is told why tables stack up
        # the terminal's own width (100), not rich's 80 for a dumb terminal: nothing hidden
        assert "Hidden to fit" not in screen and "Consumer" in screen
        tmux("send-keys", "-t", "w", "C-c")
    finally:
        subprocess.run(["tmux", "-L", sock, "kill-server"], capture_output=True)


# --- lagReport --out / --history, checked before Spark starts -----------------------------------


def test_lag_report_out_that_exists_is_refused_before_the_job(
    demo_store: DemoSummary, tmp_path: Path
) -> None:
    out = tmp_path / "report"
    out.mkdir()
    (out / "part-0.parquet").write_bytes(b"x")
    started = time.monotonic()
    r = mqctl("lagReport", "-S", f"broker-a={demo_store.root}", "--out", str(out))
    assert r.exit_code == 2, r.stderr
    line = error_line(r.stderr)
    assert f"--out {out}" in line and "exists" in line
    assert "--overwrite" in r.stderr and 'overwrite"' not in r.stderr  # not Spark's Set mode as "overwrite"
    assert time.monotonic() - started < 10, "refused after the job instead of before it"
    assert (out / "part-0.parquet").read_bytes() == b"x"


def test_lag_report_status_out_that_exists_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "statuses"
    out.mkdir()
    (tmp_path / "history").mkdir()
    r = mqctl("lagReport", "--status", "--history", str(tmp_path / "history"), "--out", str(out))
    assert r.exit_code == 2, r.stderr
    assert "--overwrite" in r.stderr and f"--out {out}" in error_line(r.stderr)


@pytest.mark.parametrize("flag", ["--out", "--history"])
@pytest.mark.parametrize("inside", ["", "config", "consumequeue/new"])
def test_lag_report_never_writes_inside_a_store(flag: str, inside: str, tmp_path: Path) -> None:
    w = StoreWriter(tmp_path / "a", broker_name="broker-a")
    w.create_topic("T", queues=1)
    w.commit_offset("G", "T", 0, 0)
    w.close()
    before = snapshot(tmp_path / "a")
    target = tmp_path / "a" / inside if inside else tmp_path / "a"
    extra = ["--overwrite"] if flag == "--out" else []
    r = mqctl("lagReport", "-S", f"broker-a={tmp_path / 'a'}", flag, str(target), *extra)
    assert r.exit_code == 2, r.stderr
    assert "refusing to write inside the broker store" in error_line(r.stderr)
    assert snapshot(tmp_path / "a") == before


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="no /proc")
@pytest.mark.parametrize("flag", ["--out", "--history"])
@pytest.mark.parametrize("where", ["proc", "under-a-file"])
def test_lag_report_target_that_cannot_be_created_is_refused_before_the_job(
    flag: str, where: str, demo_store: DemoSummary, tmp_path: Path
) -> None:
    """Spark, started locally, would fail on these only at its write, after the whole job: /proc
    takes no new directory (not even root's), and a path under a regular file has no directory."""
    (tmp_path / "a-file").write_text("x")
    target = "/proc/mqctl-report" if where == "proc" else str(tmp_path / "a-file" / "report")
    started = time.monotonic()
    r = mqctl("lagReport", "-S", f"broker-a={demo_store.root}", flag, target)
    line = error_line(r.stderr)
    if where == "proc":
        assert r.exit_code == 1, r.stderr
        assert f"{flag} {target}: cannot create anything in /proc" in line
        assert "this user can write to" in r.stderr
    else:
        assert r.exit_code == 2, r.stderr
        assert f"{flag} {target}: {tmp_path / 'a-file'} is not a directory" in line
    assert "nothing computed, nothing written" in line and "Spark" not in r.stderr
    assert time.monotonic() - started < 10, "refused after the job instead of before it"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a-file"]


# --- lagReport and the overview agree on the groups ---------------------------------------------


def test_lag_report_names_the_overview_groups_it_has_no_rows_for(demo_store: DemoSummary) -> None:
    """The demo's refund-service has a retry topic and no committed offset: the overview lists it
    (diff 0), the report has no row for it and says so."""
    from mqctl.pipeline.inputs import consumer_queues, load_broker_input, unreported_groups

    overview = json.loads(mqctl("consumerProgress", "-S", f"broker-a={demo_store.root}", "-o", "json").stdout)
    listed = {g["group"] for g in overview["rows"]}
    brokers = [load_broker_input("broker-a", demo_store.root)]
    queues = consumer_queues(brokers, None)
    reported = {q.group for q in queues}
    assert "refund-service" in listed and "refund-service" not in reported
    assert unreported_groups(brokers, queues) == sorted(listed - reported) == ["refund-service"]
    no_rows = {g["group"] for g in overview["rows"] if g["queues"] == 0}
    assert no_rows == {"refund-service"}


def test_lag_report_table_says_which_groups_are_not_in_it() -> None:
    import io

    from mqctl.model import LagReportSummary
    from mqctl.render.lagreport import report_doc, report_table

    row = {"group": "G", "diffTotal": 3, "matchedDiffTotal": None, "maxLagMs": 0, "queues": 1,
           "queuesBelowMin": 0, "queuesAboveMax": 0}  # fmt: skip
    summary = LagReportSummary(
        1, "store", 0, None, "parquet", None, [row], groups_without_rows=["refund-service"]
    )
    out = io.StringIO()
    report_table(summary, out)
    flat = " ".join(out.getvalue().split())
    assert "Not in the report: 1 group(s) with no committed offset" in flat and "refund-service" in flat
    assert report_doc(summary)["groupsWithoutRows"] == ["refund-service"]


# --- the overview: plain is mqadmin's groups, the others are marked -----------------------------


@pytest.fixture
def groups_store(tmp_path: Path) -> list[str]:
    """G: retry topic + offsets (mqadmin lists it); H: offsets only; Idle: a subscription group
    only (mqadmin's overview lists neither); SELF_TEST_C_GROUP: the broker's own, never listed."""
    w = StoreWriter(tmp_path / "a", broker_name="broker-a", commitlog_file_size=4096, cq_file_size=100)
    w.create_topic("T", queues=1)
    w.create_topic("%RETRY%G", queues=1)
    for i in range(4):
        w.put("T", 0, b"m", store_timestamp=1000 + i)
    w.commit_offset("G", "T", 0, 1)
    w.commit_offset("H", "T", 0, 2)
    w.create_group("G")
    w.create_group("Idle")
    w.create_group("SELF_TEST_C_GROUP")
    w.close()
    return ["--store", f"broker-a={tmp_path / 'a'}"]


def test_overview_plain_lists_only_what_mqadmin_lists(groups_store: list[str]) -> None:
    plain = mqctl("consumerProgress", *groups_store, "-o", "plain")
    assert plain.exit_code == 0, plain.stderr
    lines = plain.stdout.splitlines()
    assert lines[0].startswith("#Group") and [x.split()[0] for x in lines[1:]] == ["G"]


def test_store_overview_lists_subscription_group_only_groups(groups_store: list[str]) -> None:
    doc = json.loads(mqctl("consumerProgress", *groups_store, "-o", "json", "--sort", "name").stdout)
    found = {g["group"]: g["foundIn"] for g in doc["rows"]}
    assert found == {"G": ["retryTopic", "offsets"], "H": ["offsets"], "Idle": ["subscriptionGroup"]}
    csv_rows = mqctl("consumerProgress", *groups_store, "-o", "csv", "--sort", "name").stdout.splitlines()
    assert [r.split(",")[0] for r in csv_rows[1:]] == ["G", "H", "Idle"]
    table = mqctl("consumerProgress", *groups_store, "-o", "table", "--sort", "name").stdout
    assert "Idle *" in table and "H *" in table and "G *" not in table
    assert "mqadmin and -o plain do not list it" in " ".join(table.split())
