"""The write seam (ops.reset.apply_plan) against the in-memory backend: every target is checked
against the backend's [min, max] right before the write, whatever produced it, and a write
every broker refused is journalled as refused."""

from __future__ import annotations

from pathlib import Path

import pytest
from mqctl_testkit.memory_backend import MemoryBackend, MemoryWrite, Queue

from mqctl.errors import ExitStatus, PartialWriteError, RefusedError
from mqctl.model import Target, TopicConfig
from mqctl.ops import reset
from mqctl.ops.journal import read_journal

A, B, T = "broker-a", "broker-b", "Orders"


def cluster() -> MemoryBackend:
    """broker-a Orders q0 = 6 messages (min 0, max 6), q1 empty; broker-b Orders q0 = 3 messages
    (max 3; G committed 5, above it), q1 = offsets 2..5 (min 2, max 6). G committed a/q0=2,
    b/q0=5, b/q1=3."""
    topics = {A: {T: TopicConfig(T, 2, 2)}, B: {T: TopicConfig(T, 2, 2)}}
    queues = {
        (A, T, 0): Queue([(t, None) for t in (10, 20, 30, 40, 50, 60)]),
        (A, T, 1): Queue(),
        (B, T, 0): Queue([(15, None), (25, None), (35, None)]),
        (B, T, 1): Queue([(45, None), (55, None), (65, None), (75, None)], min=2),
    }
    return MemoryBackend(topics, queues, {"G": {(A, T, 0): 2, (B, T, 0): 5, (B, T, 1): 3}})


@pytest.fixture(autouse=True)
def _journal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MQCTL_JOURNAL_DIR", str(tmp_path / "journal"))


def expire_first(b) -> None:  # type: ignore[no-untyped-def]
    q = b.queues[(B, T, 1)]  # offsets 2..5 -> 3..5: min 3, max 6
    q.messages.pop(0)
    q.min += 1


def drop_last_two(b) -> None:  # type: ignore[no-untyped-def]
    del b.queues[(A, T, 0)].messages[-2:]  # max 6 -> 4 (a queue recreated shorter)


SEAM = [
    # (case, plan target and scope, what changes in the cluster between plan and write, refused queue)
    ("min-grew", (Target("earliest"), B, 1), expire_first, "broker-b Orders queue 1: 2 is outside 3..7"),
    ("max-shrank", (Target("latest"), A, 0), drop_last_two, "broker-a Orders queue 0: 6 is outside 0..5"),
    ("unchanged", (Target("latest"), A, 0), lambda b: None, None),
]


@pytest.mark.parametrize(("case", "plan", "change", "refused"), SEAM, ids=[c[0] for c in SEAM])
def test_targets_are_checked_against_the_cluster_at_the_write_not_at_the_plan(
    case, plan, change, refused
) -> None:  # type: ignore[no-untyped-def]
    b = cluster()
    target, broker, qid = plan
    p = reset.plan_reset(b, "G", T, target, broker=broker, queue=qid)
    before = {g: dict(o) for g, o in b.committed.items()}
    change(b)
    if refused is None:
        reset.apply_plan(b, p)
        assert b.writes
        return
    with pytest.raises(RefusedError, match=refused):
        reset.apply_plan(b, p)
    assert b.committed == before and not b.writes and b.calls["begin_offsets_write"] == 0


def test_an_undo_never_writes_beyond_max_plus_one() -> None:
    # G's b/q0 was committed at 5 while the queue ends at 3: --to-latest moves it to 3, and the
    # undo would write 5 back, beyond the end (a queue takes 0..4).
    b = cluster()
    rec = reset.apply_plan(b, reset.plan_reset(b, "G", T, Target("latest"), broker=B))
    writes = len(b.writes)
    with pytest.raises(RefusedError, match="broker-b Orders queue 0: 5 is outside 0..4"):
        reset.plan_undo(b, read_journal(rec.id))
    assert len(b.writes) == writes


def test_a_write_every_broker_refused_is_journalled_as_refused_and_has_nothing_to_undo(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def refuse(self: MemoryWrite) -> None:
        raise PartialWriteError(
            "2 of 2 broker(s) did not take the reset", [], ExitStatus.REFUSED, landed=False
        )

    monkeypatch.setattr(MemoryWrite, "commit", refuse)
    b = cluster()
    with pytest.raises(PartialWriteError) as exc:
        reset.apply_plan(b, reset.plan_reset(b, "G", T, Target("latest")))
    rec = read_journal("latest")
    assert rec.state == "refused" and f"journal {rec.id} records it as refused" in exc.value.message
    with pytest.raises(RefusedError, match="nothing to undo"):
        reset.plan_undo(b, rec)
