"""Reset targets on real-format stores, against values computed by hand from the broker's rules
(spec/rocketmq-store.md 5.1: LOWER = first entry with store time >= ts, all older -> max,
all newer -> min, clamped to [min, max]; spec/mqadmin.md 4.4 for queue choice and -o range)."""

from __future__ import annotations

from pathlib import Path

import pytest
from mqctl_testkit.reset_stores import build_stores

from mqctl.backends.store import StoreBackend
from mqctl.errors import NotFoundError, RefusedError, UsageError
from mqctl.ops import reset as ops
from mqctl.ops.reset import Target


@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return build_stores(tmp_path_factory.mktemp("reset"))


def plan(stores, target: Target, **kw):  # type: ignore[no-untyped-def]
    with StoreBackend(stores) as b:
        return ops.plan_reset(b, "G", "T", target, **kw)


def by_queue(p) -> dict:  # type: ignore[no-untyped-def]
    return {(r.broker_name, r.queue_id): r for r in p.rows}


# broker-a queue 0: times 1000,1000,1000,3000,3000 | 3000,5000,5000,7000,9000 (min 0, max 10)
@pytest.mark.parametrize(
    ("ts", "target"),
    [
        (0, 0),  # before everything: min
        (999, 0),
        (1000, 0),  # equal run: the first of the run
        (1001, 3),
        (3000, 3),  # run crossing a CQ file boundary: still its first entry
        (3001, 6),
        (5000, 6),
        (6000, 8),
        (9000, 9),
        (9001, 10),  # after the last message: max
        (10**13, 10),  # future
        (-1, 10),  # negative timestamp: the broker's "max offset"
    ],
)
def test_queue0_targets(stores, ts: int, target: int) -> None:  # type: ignore[no-untyped-def]
    r = by_queue(plan(stores, Target("time", ts)))[("broker-a", 0)]
    assert r.target_offset == target
    assert r.current_offset == 5 and r.delta == target - 5
    times = [1000, 1000, 1000, 3000, 3000, 3000, 5000, 5000, 7000, 9000]
    assert r.target_timestamp == (times[target] if target < 10 else -1)


@pytest.mark.parametrize(
    ("ts", "target", "clamped"),
    [(50, 5, True), (700, 5, False), (750, 6, False), (800, 6, False), (801, 8, False)],
)
def test_expired_queue_min_above_zero(stores, ts: int, target: int, clamped: bool) -> None:  # type: ignore[no-untyped-def]
    r = by_queue(plan(stores, Target("time", ts)))[("broker-a", 2)]
    assert (r.min_offset, r.max_offset) == (5, 8)
    assert r.target_offset == target
    assert ("clamped" in r.warnings) is clamped
    assert "current-below-min" in r.warnings  # committed 2 < min 5


def test_whole_topic_rows_route_order_and_warnings(stores) -> None:  # type: ignore[no-untyped-def]
    p = plan(stores, Target("time", 3000))
    # Route order, as the name server hands it out: a Java HashSet of broker names, where
    # "broker-b" iterates before "broker-a" (checked with a JDK HashSet; the real mqadmin's reset
    # table in tests/compat lists broker-b first too).
    assert [(r.broker_name, r.queue_id, r.current_offset, r.target_offset) for r in p.rows] == [
        ("broker-b", 0, 3, 1),
        ("broker-b", 1, -1, 0),
        ("broker-a", 0, 5, 3),
        ("broker-a", 1, -1, 0),
        ("broker-a", 2, 2, 8),
        ("broker-a", 3, 0, 0),
    ]
    q = by_queue(p)
    assert q[("broker-a", 1)].warnings == ("queue-empty", "no-committed-offset")
    assert q[("broker-a", 1)].delta is None
    assert q[("broker-b", 0)].target_timestamp == 4000
    assert (p.replayed, p.skipped, p.changed) == (4, 6, 5)


def test_force_false_only_moves_backwards(stores) -> None:  # type: ignore[no-untyped-def]
    q = by_queue(plan(stores, Target("time", 3000), force=False))
    assert q[("broker-a", 0)].target_offset == 3  # backwards: allowed
    assert q[("broker-a", 2)].target_offset == 2 and "kept-not-backwards" in q[("broker-a", 2)].warnings
    assert q[("broker-a", 1)].target_offset == 0  # nothing committed: nothing to keep


def test_earliest_latest_offset_shift(stores) -> None:  # type: ignore[no-untyped-def]
    e = by_queue(plan(stores, Target("earliest")))
    assert e[("broker-a", 2)].target_offset == 5 and e[("broker-a", 0)].target_offset == 0
    latest = by_queue(plan(stores, Target("latest")))
    assert latest[("broker-a", 0)].target_offset == 10 and latest[("broker-b", 0)].target_offset == 3
    o = by_queue(plan(stores, Target("offset", 7)))
    assert o[("broker-a", 0)].target_offset == 7 and not o[("broker-a", 0)].warnings
    assert o[("broker-a", 2)].target_offset == 7
    assert o[("broker-b", 0)].target_offset == 3 and "clamped" in o[("broker-b", 0)].warnings
    s = by_queue(plan(stores, Target("shift", -2), broker="broker-a", queue=0))
    assert s[("broker-a", 0)].target_offset == 3
    s = by_queue(plan(stores, Target("shift", 100), broker="broker-a", queue=0))
    assert s[("broker-a", 0)].target_offset == 10 and "clamped" in s[("broker-a", 0)].warnings
    with pytest.raises(UsageError, match="no committed offset"):
        plan(stores, Target("shift", 1))


@pytest.mark.parametrize(
    ("offset", "ok"), [(4, False), (5, True), (8, True), (9, True), (10, False), (-1, False)]
)
def test_explicit_offset_range_is_min_to_max_plus_one(stores, offset: int, ok: bool) -> None:  # type: ignore[no-untyped-def]
    if ok:
        r = plan(stores, Target("explicit", offset), broker="broker-a", queue=2).rows
        assert [(x.queue_id, x.target_offset) for x in r] == [(2, offset)]
        assert ("beyond-max" in r[0].warnings) is (offset == 9)
    else:
        with pytest.raises(RefusedError, match=r"not in consume queue range \[5-8\]"):
            plan(stores, Target("explicit", offset), broker="broker-a", queue=2)


def test_single_queue_by_time(stores) -> None:  # type: ignore[no-untyped-def]
    p = plan(stores, Target("time", 5000), broker="broker-a", queue=0)
    assert p.single_queue and [(r.queue_id, r.target_offset) for r in p.rows] == [(0, 6)]


@pytest.mark.parametrize(
    ("group", "topic", "kw", "error"),
    [
        ("Nope", "T", {}, NotFoundError),
        ("G", "Nope", {}, NotFoundError),
        ("G", "T", {"broker": "broker-x"}, NotFoundError),
        ("G", "T", {"broker": "broker-a", "queue": 4}, NotFoundError),
        ("G", "T", {"broker": "broker-b", "queue": 2}, NotFoundError),
        ("G", "T", {"queue": 0}, UsageError),  # two brokers have T: -q needs -b
        ("G", "U", {"broker": "broker-b"}, NotFoundError),
    ],
)
def test_not_found(stores, group, topic, kw, error) -> None:  # type: ignore[no-untyped-def]
    with StoreBackend(stores) as b, pytest.raises(error):
        ops.plan_reset(b, group, topic, Target("time", 0), **kw)


def test_group_known_only_by_subscription_is_found(stores) -> None:  # type: ignore[no-untyped-def]
    with StoreBackend({"broker-b": stores["broker-b"]}) as b:
        assert len(ops.plan_reset(b, "G", "T", Target("latest")).rows) == 2


# ------------------------------------------------------------------ apply, plan files, undo


@pytest.fixture
def fresh(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    monkeypatch.setenv("MQCTL_JOURNAL_DIR", str(tmp_path / "journal"))
    return build_stores(tmp_path / "stores")


def committed(stores, group="G") -> dict:  # type: ignore[no-untyped-def]
    # Read straight from each store's file (not through the backend under test).
    from mqctl.store.offsets import load_consumer_offsets

    out = {}
    for br, root in stores.items():
        for key, qs in load_consumer_offsets(root / "config", retries=0).table.offsets.items():
            t, _, g = key.partition("@")
            if g == group:
                out.update({(br, t, q): o for q, o in qs.items()})
    return out


def test_apply_then_undo_restores_exactly(fresh) -> None:  # type: ignore[no-untyped-def]
    before = committed(fresh)
    other = committed(fresh, "Other")
    with StoreBackend(fresh) as b:
        p = ops.plan_reset(b, "G", "T", Target("time", 3000))
        rec = ops.apply_plan(b, p)
    after = committed(fresh)
    assert after[("broker-a", "T", 0)] == 3 and after[("broker-a", "T", 1)] == 0
    assert committed(fresh, "Other") == other
    from mqctl.ops.journal import read_journal

    with StoreBackend(fresh) as b:
        u = ops.plan_undo(b, read_journal(rec.id))
        assert u.undo_of == rec.id
        ops.apply_plan(b, u)
    assert committed(fresh) == before  # including queues that had no offset before


def test_undo_refuses_when_offsets_moved(fresh) -> None:  # type: ignore[no-untyped-def]
    from mqctl.ops.journal import read_journal

    with StoreBackend(fresh) as b:
        rec = ops.apply_plan(b, ops.plan_reset(b, "G", "T", Target("latest")))
    with StoreBackend(fresh) as b:
        ops.apply_plan(b, ops.plan_reset(b, "G", "T", Target("earliest"), broker="broker-b"))
    with StoreBackend(fresh) as b, pytest.raises(RefusedError, match="moved since it was applied"):
        ops.plan_undo(b, read_journal(rec.id))


def test_stale_plan_is_refused_at_apply(fresh) -> None:  # type: ignore[no-untyped-def]
    with StoreBackend(fresh) as b:
        p = ops.plan_reset(b, "G", "T", Target("latest"))
    with StoreBackend(fresh) as b:
        ops.apply_plan(b, ops.plan_reset(b, "G", "T", Target("earliest")))
    snap = {p_.name: p_.read_bytes() for p_ in (fresh["broker-a"] / "config").iterdir()}
    with StoreBackend(fresh) as b, pytest.raises(RefusedError, match="moved"):
        ops.apply_plan(b, p)
    assert {p_.name: p_.read_bytes() for p_ in (fresh["broker-a"] / "config").iterdir()} == snap
