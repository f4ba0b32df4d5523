"""Live writes mqctl must not take on trust (issue 16, issue 21), against the fake cluster of
live_scenario.py: a hand-edited plan and an edited journal are range-checked before any write
request leaves, and a reset every broker refused is journalled as refused, not as partial.

Facts of the scenario (live_scenario.py): TopicTest has 4 queues of 3 messages on each broker
(min 0, max 3: a queue takes 0..4); G2 is offline with a/0=3, a/1=1, a/2=0, a/3=3 and every
broker-b queue at 0."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from mqctl_testkit.fakecluster import FakeCluster
from mqctl_testkit.live_scenario import build_model, cli_env, run_here

WRITES = {15, 222}  # UPDATE_CONSUMER_OFFSET, INVOKE_BROKER_TO_RESET_OFFSET
G2_BEFORE = {"broker-a": {0: 3, 1: 1, 2: 0, 3: 3}, "broker-b": {0: 0, 1: 0, 2: 0, 3: 0}}


@pytest.fixture
def cluster() -> Iterator[FakeCluster]:
    c = FakeCluster(build_model())
    yield c
    c.close()


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return cli_env(MQCTL_JOURNAL_DIR=str(tmp_path / "journal"))


def offsets(cluster: FakeCluster) -> dict[str, dict[int, int]]:
    return {b.name: dict(b.offsets.get("G2", {}).get("TopicTest", {})) for b in cluster.model.brokers}


def writes_sent(cluster: FakeCluster) -> set[int]:
    return WRITES & {c for s in cluster.brokers.values() for c in s.codes()}


def records(env: dict[str, str]) -> list[dict]:
    return [json.loads(p.read_text()) for p in sorted(Path(env["MQCTL_JOURNAL_DIR"]).glob("*.json"))]


PLAN_EDITS = [
    # (case, broker, queue, new targetOffset, what the error names)
    ("above-max-plus-one", "broker-a", 1, 5, "broker-a TopicTest queue 1: 5 is outside 0..4"),
    ("far-above", "broker-b", 3, 999_999, "broker-b TopicTest queue 3: 999999 is outside 0..4"),
]


@pytest.mark.parametrize(
    ("case", "broker", "qid", "target", "named"), PLAN_EDITS, ids=[c[0] for c in PLAN_EDITS]
)
def test_a_hand_edited_plan_never_reaches_a_broker(
    cluster, env, tmp_path, case, broker, qid, target, named
) -> None:  # type: ignore[no-untyped-def]
    plan = tmp_path / "plan.json"
    dry = run_here(
        "resetOffsetByTime",
        "-n",
        cluster.ns,
        "-g",
        "G2",
        "-t",
        "TopicTest",
        "--to-earliest",
        "--export",
        str(plan),
        env=env,
    )
    assert dry.code == 0, dry.err
    doc = json.loads(plan.read_text())
    row = next(r for r in doc["rows"] if (r["brokerName"], r["queueId"]) == (broker, qid))
    row.update(targetOffset=target, maxOffset=10**7)  # a faked range changes nothing
    plan.write_text(json.dumps(doc))
    run = run_here("resetOffsetByTime", "-n", cluster.ns, "--from-file", str(plan), "--execute", env=env)
    assert run.code == 5, run.err
    assert named in run.error_line() and "nothing written" in run.error_line()
    assert not writes_sent(cluster) and offsets(cluster) == G2_BEFORE
    assert records(env) == []


def test_an_edited_undo_never_reaches_a_broker(cluster, env) -> None:  # type: ignore[no-untyped-def]
    run = run_here(
        "resetOffsetByTime",
        "-n",
        cluster.ns,
        "-g",
        "G2",
        "-t",
        "TopicTest",
        "--to-latest",
        "--execute",
        env=env,
    )
    assert run.code == 0, run.err
    (path,) = Path(env["MQCTL_JOURNAL_DIR"]).glob("*.json")
    doc = json.loads(path.read_text())
    change = next(c for c in doc["changes"] if (c["brokerName"], c["queueId"]) == ("broker-a", 0))
    change["before"] = 9  # max 3: a queue takes 0..4
    path.write_text(json.dumps(doc))
    for s in cluster.servers():
        s.reset()
    undo = run_here("resetOffsetByTime", "--undo", "latest", "--execute", env=env)
    assert undo.code == 5, undo.err
    assert "broker-a TopicTest queue 0: 9 is outside 0..4" in undo.error_line()
    assert not writes_sent(cluster)
    assert offsets(cluster) == {
        "broker-a": dict.fromkeys(range(4), 3),
        "broker-b": dict.fromkeys(range(4), 3),
    }


REFUSALS = [
    # (case, the brokers that deny every offset write (NO_PERMISSION: exit 8, access denied),
    # exit, journal state, undo exit, undo says)
    ("every-broker", ("broker-a", "broker-b"), 8, "refused", 5, "nothing to undo"),
    ("one-broker", ("broker-b",), 8, "partial", 0, "partial journal record"),
]


@pytest.mark.parametrize(
    ("case", "refusing", "code", "state", "undo_code", "undo_says"), REFUSALS, ids=[c[0] for c in REFUSALS]
)
def test_a_reset_refused_everywhere_is_journalled_as_refused(  # type: ignore[no-untyped-def]
    cluster, env, case, refusing, code, state, undo_code, undo_says
) -> None:
    for name in refusing:
        cluster.broker(name).errors = {
            222: (16, "no permission to reset"),
            15: (16, "no permission to update"),
        }
    run = run_here(
        "resetOffsetByTime",
        "-n",
        cluster.ns,
        "-g",
        "G2",
        "-t",
        "TopicTest",
        "--to-latest",
        "--execute",
        env=env,
    )
    assert run.code == code, run.err
    (record,) = records(env)
    assert record["state"] == state
    assert f"journal {record['id']} records it as {state}" in run.error_line()
    for name in refusing:
        assert offsets(cluster)[name] == G2_BEFORE[name]
    for s in cluster.servers():
        s.reset()
    undo = run_here("resetOffsetByTime", "--undo", "latest", "--execute", env=env)
    assert undo.code == undo_code, undo.err
    assert undo_says in (undo.error_line() if undo_code else undo.out + undo.err)
    assert offsets(cluster) == G2_BEFORE  # nothing was written, or what was is put back
