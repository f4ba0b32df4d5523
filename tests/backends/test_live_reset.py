"""resetOffsetByTime --execute -n against the fake cluster of live_scenario.py: what each broker
is asked, what its table holds afterwards, the exit status and what the user reads. Targets are
worked out by hand from the scenario (message i of a queue is stored at base + i minutes); each
test gets its own cluster, since every test writes."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from mqctl_testkit.fakecluster import FakeCluster
from mqctl_testkit.live_scenario import ACCESS_KEY, SECRET, Run, build_model, cli_env, run_here

from mqctl.backends.live_write import _resumed  # noqa: E402

RESET_AT = "2025-12-31#22:05:00:500"  # T0 + 5 min 0.5 s (UTC)
# G1 on Orders before and after: a/0 message 6 is the first stored at or after RESET_AT
# (T0 + 6 min), a/1 message 5 (T0 + 1 s + 5 min), b/0 message 5 (T0 + 2 s + 5 min), b/1 is empty.
G1_BEFORE = {"broker-a": {0: 3, 1: 2}, "broker-b": {0: 8, 1: 0}}
G1_AFTER = {"broker-a": {0: 6, 1: 5}, "broker-b": {0: 5, 1: 0}}
G2_BEFORE = {"broker-a": {0: 3, 1: 1, 2: 0, 3: 3}, "broker-b": {0: 0, 1: 0, 2: 0, 3: 0}}
ALL_AT_3 = {b: dict.fromkeys(range(4), 3) for b in ("broker-a", "broker-b")}  # 3 messages per queue
WRITES = {15, 222}  # UPDATE_CONSUMER_OFFSET, INVOKE_BROKER_TO_RESET_OFFSET


@pytest.fixture
def cluster() -> Iterator[FakeCluster]:
    c = FakeCluster(build_model())
    yield c
    c.close()


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return cli_env(MQCTL_JOURNAL_DIR=str(tmp_path / "journal"))


def offsets(cluster: FakeCluster, group: str, topic: str) -> dict[str, dict[int, int]]:
    return {b.name: dict(b.offsets.get(group, {}).get(topic, {})) for b in cluster.model.brokers}


def codes(cluster: FakeCluster) -> list[int]:
    return [c for s in cluster.brokers.values() for c in s.codes()]


def reset(cluster: FakeCluster, env: dict[str, str], *args: str) -> Run:
    return run_here("resetOffsetByTime", "-n", cluster.ns, *args, env=env)


def test_online_group_takes_each_queues_explicit_offset_and_undo_puts_it_back(cluster, env) -> None:
    assert offsets(cluster, "G1", "Orders") == G1_BEFORE
    run = reset(cluster, env, "-g", "G1", "-t", "Orders", "-s", RESET_AT, "--execute")
    assert run.code == 0, run.err
    # Piped, the output is mqadmin's plain table; the EXECUTED line goes to stderr.
    assert "Path" not in run.out and run.out.startswith("start reset consumer offset by specified")
    first = next(x for x in run.err.splitlines() if x.startswith("EXECUTED"))
    assert "all 4 queue(s) read back at their targets" in first, run.err
    assert offsets(cluster, "G1", "Orders") == G1_AFTER
    assert sorted(codes(cluster)).count(222) == 4 and 15 not in codes(cluster)  # one per queue, no fallback
    for s in cluster.servers():
        s.reset()
    # The journal names the cluster. a/1 was committed at 2, below its min 4 (messages 0-3
    # expired): a broker takes no reset below min, so the write sets it to 4 and says so.
    undo = run_here("resetOffsetByTime", "--undo", "latest", "--execute", env=env)
    assert undo.code == 0, undo.err
    assert offsets(cluster, "G1", "Orders") == {"broker-a": {0: 3, 1: 4}, "broker-b": {0: 8, 1: 0}}
    assert "1 queue(s) targeted below their min offset" in undo.err


def test_offline_group_on_a_broker_without_server_side_reset_gets_offset_updates(cluster, env) -> None:
    for b in cluster.model.brokers:
        b.server_side_reset = False  # 222 answers CONSUMER_NOT_ONLINE for an offline group
    run = reset(cluster, env, "-g", "G2", "-t", "TopicTest", "--to-latest", "--execute", "--output", "json")
    assert run.code == 0, run.err
    assert offsets(cluster, "G2", "TopicTest") == ALL_AT_3
    assert codes(cluster).count(15) == 8
    assert "UPDATE_CONSUMER_OFFSET" in run.err
    assert json.loads(run.out)["executed"] is True


def test_a_broker_before_5_2_is_never_sent_a_per_queue_reset(cluster, env) -> None:
    for s in cluster.brokers.values():
        s.version = 407  # 4.9.7: 222 there resets the whole topic by time through the clients
    online = reset(cluster, env, "-g", "G1", "-t", "Orders", "-s", RESET_AT, "--execute")
    assert online.code == 5
    assert "older than 5.2" in online.error_line()
    assert offsets(cluster, "G1", "Orders") == G1_BEFORE and not WRITES & set(codes(cluster))
    offline = reset(cluster, env, "-g", "G2", "-t", "TopicTest", "--to-latest", "--execute")
    assert offline.code == 0, offline.err
    assert offsets(cluster, "G2", "TopicTest") == ALL_AT_3
    assert 222 not in codes(cluster) and codes(cluster).count(15) == 8


def test_a_queue_that_does_not_take_the_write_fails_the_command(cluster, env) -> None:
    cluster.model.broker("broker-b").drop_writes = True  # says success, keeps nothing
    run = reset(cluster, env, "-g", "G2", "-t", "TopicTest", "--to-latest", "--execute")
    assert run.code == 5, run.err
    assert "4 of 8 queue(s) NOT at their targets" in run.err
    named = [x for x in run.err.splitlines() if x.startswith("mqctl: warning: broker-b TopicTest queue")]
    assert len(named) == 4 and all("target 3, now 0" in x for x in named), run.err
    assert offsets(cluster, "G2", "TopicTest")["broker-a"] == ALL_AT_3["broker-a"]


def test_a_stale_plan_for_an_offline_group_writes_nothing(cluster, env, tmp_path) -> None:
    plan = tmp_path / "plan.json"
    dry = reset(cluster, env, "-g", "G2", "-t", "TopicTest", "--to-latest", "--export", str(plan))
    assert dry.code == 0, dry.err
    cluster.model.broker("broker-a").offsets["G2"]["TopicTest"][1] = 2  # someone moved a queue
    run = reset(cluster, env, "--from-file", str(plan), "--execute")
    assert run.code == 5
    run.error_line()
    assert not WRITES & set(codes(cluster))
    assert offsets(cluster, "G2", "TopicTest")["broker-b"] == G2_BEFORE["broker-b"]


@pytest.mark.parametrize(
    ("before", "target", "now", "resumed"),
    [
        (10, 4, 6, True),  # replayed from 4, consumed 2 since
        (10, 4, 10, False),  # still where it was: the backward reset did not reach it
        (10, 4, 12, False),  # past where it was: never went back
        (4, 10, 12, True),  # skipped ahead to 10, consumed 2 since
        (4, 10, 4, False),  # the forward reset did not take
        (4, 10, 10, False),  # exactly at the target: took, not "resumed"
    ],
)
def test_an_online_consumer_past_its_new_offset_resumed(before, target, now, resumed) -> None:
    assert _resumed(before, target, now) is resumed


def test_a_reset_denied_by_one_broker_is_partial_and_undo_takes_the_rest_back(cluster, env) -> None:
    """broker-b lets the account read G2 but not write it (a 4.x plain ACL checks the group only on
    writes; a 5.x rule with Get and no Update): broker-a takes the reset, broker-b denies it. One
    line names the denial, exit 8 (a denial, not a refusal), the journal keeps broker-a's part and
    --undo puts broker-a back (broker-b never moved)."""
    cluster.set_acl(ACCESS_KEY, SECRET, namesrv=False)
    cluster.broker("broker-b").denied_groups = {"G2"}
    cluster.broker("broker-b").deny_codes = WRITES
    keyed = {**env, "MQCTL_ACCESS_KEY": ACCESS_KEY, "MQCTL_SECRET_KEY": SECRET}
    run = reset(cluster, keyed, "-g", "G2", "-t", "TopicTest", "--to-latest", "--execute")
    assert run.code == 8, run.err  # today: 5
    line = run.error_line()
    assert line.startswith(
        "mqctl: error: 1 of 2 broker(s) did not take the reset (broker-b: broker-b denied "
    )
    assert f"INVOKE_BROKER_TO_RESET_OFFSET on group G2, topic TopicTest for access key {ACCESS_KEY}" in line
    assert "no permission on group G2" in line and "broker-a did (kept in the journal)" in line
    assert offsets(cluster, "G2", "TopicTest") == {
        "broker-a": ALL_AT_3["broker-a"],
        "broker-b": G2_BEFORE["broker-b"],
    }
    undo = run_here("resetOffsetByTime", "--undo", "latest", "--execute", env=keyed)
    assert undo.code == 0, undo.err
    assert offsets(cluster, "G2", "TopicTest") == G2_BEFORE
    assert SECRET not in run.out + run.err + undo.out + undo.err
    journal = Path(env["MQCTL_JOURNAL_DIR"])
    assert all(SECRET not in f.read_text() for f in journal.rglob("*") if f.is_file())


def test_a_reset_every_broker_denies_is_journalled_as_refused_and_undo_has_nothing_to_undo(
    cluster, env
) -> None:
    """Both brokers deny the write: nothing moved, the journal record says ``refused`` (not
    ``partial``) with no broker holding the new offsets, and --undo says there is nothing to undo
    (it checks the cluster, which still holds the offsets from before), writing nothing."""
    cluster.set_acl(ACCESS_KEY, SECRET, namesrv=False)
    for name in ("broker-a", "broker-b"):
        cluster.broker(name).denied_groups = {"G2"}
        cluster.broker(name).deny_codes = WRITES
    keyed = {**env, "MQCTL_ACCESS_KEY": ACCESS_KEY, "MQCTL_SECRET_KEY": SECRET}
    run = reset(cluster, keyed, "-g", "G2", "-t", "TopicTest", "--to-latest", "--execute")
    assert run.code == 8, run.err
    line = run.error_line()
    assert line.startswith("mqctl: error: 2 of 2 broker(s) did not take the reset (")
    assert "broker-a: broker-a denied " in line and "broker-b: broker-b denied " in line
    assert "; none took it (read back: no queue moved); journal " in line, line
    assert line.endswith(" records it as refused"), line
    assert offsets(cluster, "G2", "TopicTest") == G2_BEFORE
    (record,) = Path(env["MQCTL_JOURNAL_DIR"]).glob("*.json")
    doc = json.loads(record.read_text())
    assert (doc["state"], doc.get("appliedBrokers") or []) == ("refused", [])
    undo = run_here("resetOffsetByTime", "--undo", "latest", "--execute", env=keyed)
    assert undo.code == 5, undo.err
    assert undo.error_line().startswith(
        f"mqctl: error: nothing to undo: reset {record.stem} never landed (its "
    )
    assert "every broker refused it" in undo.error_line()
    assert offsets(cluster, "G2", "TopicTest") == G2_BEFORE
