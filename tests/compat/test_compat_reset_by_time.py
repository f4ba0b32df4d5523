"""Scenario 3: ``mqctl resetOffsetByTime`` dry-run targets equal the offsets the real broker sets
for ``mqadmin resetOffsetByTime``, for times before, inside (incl. runs of equal store times)
and after the data."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections import defaultdict
from dataclasses import dataclass

import matrix_expect
import pytest
from compat_harness import REPO, Received, RocketMQ, parse_reset_table

pytestmark = pytest.mark.compat

TOPIC, GROUP = "TopicTime", "GroupReset"
QUEUES = [(b, q) for b in ("broker-a", "broker-b") for q in range(2)]
ROUNDS, BATCH = 5, 8


@dataclass(frozen=True)
class TimeData:
    # (broker, qid) -> store timestamps by queue offset (the real broker's, seen by a consumer)
    stamps: dict[tuple[str, int], list[int]]
    batch_times: list[int]  # store times shared by a whole batch (equal-time runs)


@pytest.fixture(scope="module")
def time_data(cluster: RocketMQ) -> TimeData:
    # Per round and queue: one batch (BATCH messages, one store timestamp) then a single send;
    # 5 rounds = 45 messages per queue, two 30-entry CQ files.
    plan = []
    for r in range(ROUNDS):
        for b, q in QUEUES:
            plan.append(f"batch {BATCH} TagT batch-{r} {q} {b}")
            plan.append(f"send TagS single-{r} {q} {b}")
        plan.append("sleep 25")
    sent = cluster.produce(TOPIC, plan)
    assert len(sent) == ROUNDS * len(QUEUES) * (BATCH + 1)
    # stop at the expected count; the long idle only guards against a slow first rebalance
    total = ROUNDS * len(QUEUES) * (BATCH + 1)
    got: list[Received] = cluster.consume(
        TOPIC, "compat-scan-time", "*", max_messages=total, idle=30, linger=1
    )
    by_queue: dict[tuple[str, int], dict[int, int]] = defaultdict(dict)
    for m in got:
        by_queue[(m.broker, m.queue_id)][m.offset] = m.store_timestamp
    stamps = {k: [v[i] for i in range(len(v))] for k, v in by_queue.items()}
    assert set(stamps) == set(QUEUES) and all(len(s) == ROUNDS * (BATCH + 1) for s in stamps.values())
    # the broker stamps a whole batch with one store time (the point of the batch)
    a0 = stamps[("broker-a", 0)]
    batch_times = [a0[r * (BATCH + 1)] for r in range(ROUNDS)]
    for r, t in enumerate(batch_times):
        assert a0[r * (BATCH + 1) : r * (BATCH + 1) + BATCH] == [t] * BATCH
    return TimeData(stamps, batch_times)


def expected_target(cluster: RocketMQ, key: tuple[str, int], stamps: list[int], ts: int) -> int:
    """Spec 4.4 (5.x server-side reset): first offset whose store time >= ts; max when all older.
    4.x (docs/rocketmq-versions.md §4.1): the nearer neighbour in the CQ file chosen by mtime."""
    queue_dir = cluster.brokers[key[0]].store / "consumequeue" / TOPIC / str(key[1])
    return matrix_expect.expected_target(cluster.version, stamps, ts, queue_dir)


@dataclass(frozen=True)
class ResetRun:
    label: str
    ts: int
    json_proc: subprocess.CompletedProcess[str]  # mqctl dry run, --output json
    plain_proc: subprocess.CompletedProcess[str]  # mqctl dry run, --output plain
    live_proc: subprocess.CompletedProcess[str]  # mqctl -n dry run, --output json (the broker searches)
    mqadmin_stdout: str  # the real reset, run after both dry runs


@pytest.fixture(scope="module")
def reset_runs(cluster: RocketMQ, time_data: TimeData) -> list[ResetRun]:
    all_times = sorted(t for s in time_data.stamps.values() for t in s)
    tmin, tmax = all_times[0], all_times[-1]
    mid_batch = time_data.batch_times[2]
    cases = {
        "zero": 0,
        "before the data": tmin - 1,
        "first store time": tmin,
        "an equal-time batch": mid_batch,
        "just after that batch": mid_batch + 1,
        "last store time": tmax,
        "after the data": tmax + 1,
        "one hour ahead": int(time.time() * 1000) + 3_600_000,
    }
    if cluster.version.offline_reset_path == "C":
        # A 4.x broker refuses to reset a group without a committed offset on every queue:
        # give GroupReset the scan group's (the max offsets), as a consumer that ran before would.
        cluster.admin(f"clone:compat-scan-time:{GROUP}:{TOPIC}")
    runs = []
    for label, ts in cases.items():
        # mqctl first (a dry run only reads), then the real reset moves the group
        args = ("resetOffsetByTime", "-g", GROUP, "-t", TOPIC, "-s", str(ts))
        if cluster.version.offline_reset_path == "C":
            # 4.x's table shows each queue's current offset: the store holds the previous case's
            # reset only once the broker flushed it (a store is as fresh as its last flush)
            cluster.wait_offsets_flushed()
        as_json = cluster.mqctl(*args, "--output", "json")
        as_plain = cluster.mqctl(*args, "--output", "plain")
        live = cluster.run(
            [
                sys.executable,
                "-m",
                "mqctl",
                *args,
                "--output",
                "json",
                "-n",
                cluster.namesrv_addr,
                "--timeout",
                "60",
            ],
            cwd=REPO,
        )
        runs.append(ResetRun(label, ts, as_json, as_plain, live, cluster.mqadmin_ok(*args)))
    return runs


def test_dry_run_targets_equal_broker_reset(
    cluster: RocketMQ, reset_runs: list[ResetRun], time_data: TimeData, fidelity
) -> None:
    ok = True
    spec_errors = []
    for run in reset_runs:
        what = f"resetOffsetByTime -s {run.ts} ({run.label})"
        ok &= fidelity.check(f"{what} exit", run.json_proc.returncode, 0)
        ours: dict[tuple[str, int], int] = {}
        if run.json_proc.returncode == 0:
            doc = json.loads(run.json_proc.stdout)
            assert doc["schema"] == "mqctl/resetOffsetByTime/v1" and doc["executed"] is False
            ours = {
                (r["brokerName"], r["queueId"]): r["targetOffset"] for r in doc["rows"] if r["topic"] == TOPIC
            }
        theirs = parse_reset_table(run.mqadmin_stdout, cluster.version.offline_reset_path)
        ok &= fidelity.check(f"{what} queues", sorted(ours), sorted(theirs))
        for key in sorted(theirs):
            ok &= fidelity.check(f"{what} {key} target", ours.get(key), theirs[key])
            spec = expected_target(cluster, key, time_data.stamps[key], run.ts)
            if spec != theirs[key]:
                spec_errors.append(
                    f"-s {run.ts} ({run.label}) {key}: spec says {spec}, broker set {theirs[key]}"
                )
    assert not spec_errors, "the broker disagrees with spec 4.4: " + "; ".join(spec_errors)
    assert ok, "mqctl's targets differ from the broker's, see the fidelity section"


def test_dry_run_plain_equals_mqadmin_table(reset_runs: list[ResetRun], fidelity) -> None:
    """``--output plain`` prints mqadmin's table (spec 4.3), rows in its HashMap order (spec 8.4),
    alone on stdout; the line saying it was a dry run goes to stderr."""
    ok = True
    for run in reset_runs:
        what = f"resetOffsetByTime -s {run.ts} -o plain"
        notice = [x for x in run.plain_proc.stderr.splitlines() if not x.startswith("mqctl: warning: ")]
        ok &= fidelity.check(f"{what} dry-run notice on stderr", notice[:1] and notice[0][:7], "DRY RUN")
        ok &= fidelity.check(f"{what} table", run.plain_proc.stdout, run.mqadmin_stdout)
    assert ok, "plain output differs from mqadmin's table, see the fidelity section"


def test_live_dry_run_targets_equal_broker_reset(
    cluster: RocketMQ, reset_runs: list[ResetRun], fidelity
) -> None:
    """The same times planned live (-n: the brokers search by time, SEARCH_OFFSET_BY_TIMESTAMP
    with 5.x's LOWER boundary; 4.x's own search) against the offsets mqadmin's reset set."""
    ok = True
    for run in reset_runs:
        what = f"live resetOffsetByTime -n -s {run.ts} ({run.label})"
        ok &= fidelity.check(f"{what} exit", run.live_proc.returncode, 0)
        ours: dict[tuple[str, int], int] = {}
        if run.live_proc.returncode == 0:
            doc = json.loads(run.live_proc.stdout)
            assert doc["executed"] is False
            ours = {
                (r["brokerName"], r["queueId"]): r["targetOffset"] for r in doc["rows"] if r["topic"] == TOPIC
            }
        theirs = parse_reset_table(run.mqadmin_stdout, cluster.version.offline_reset_path)
        ok &= fidelity.check(f"{what} targets", ours, theirs)
    assert ok, "mqctl's live targets differ from the broker's, see the fidelity section"
