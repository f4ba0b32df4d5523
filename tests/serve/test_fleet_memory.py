"""The fleet sampler and the families on the in-memory backend: broadcast groups get one explicit
unsupported series and no numbers, POP groups their lag without an in-flight series, filtered lag kept exact round after round while only
the changed entries are read, --max-series, allow/deny regexes, deleted groups disappearing, and
the thresholds table. Expected values are worked out from the cluster set up here."""

from __future__ import annotations

import re

import pytest
from mqctl_testkit.memory_backend import MemoryBackend, Queue

from mqctl.errors import UsageError
from mqctl.model import ConsumerConnection, MessageQueue, Rules, Subscription, TopicConfig
from mqctl.ops.alertrules import A_LAG, A_STATUS, AlertBook, parse_config
from mqctl.ops.watch.fleet import FleetFilter, FleetSampler

pytest.importorskip("prometheus_client")

from prometheus_client.exposition import generate_latest  # noqa: E402

from mqctl.serve.families import Shape  # noqa: E402
from mqctl.serve.metrics import RoundCollector, registry_for  # noqa: E402

A, T = "broker-a", "Orders"
TAGS = ("TagA", "TagB", "TagC", "TagD")  # message i carries TAGS[i % 4]


def backend() -> MemoryBackend:
    topics = {
        A: {
            T: TopicConfig(T, 2, 2),
            "Audit": TopicConfig("Audit", 1, 1),
            "%RETRY%Push": TopicConfig("%RETRY%Push", 1, 1),
        }
    }
    queues = {
        (A, T, 0): Queue([(1000 + i, TAGS[i % 4]) for i in range(40)]),
        (A, T, 1): Queue([(2000 + i, TAGS[i % 4]) for i in range(20)]),
        (A, "Audit", 0): Queue([(3000 + i, None) for i in range(5)]),
    }
    committed = {
        "Push": {(A, T, 0): 10, (A, T, 1): 20},
        "Bcast": {(A, T, 0): 0},
        "Pop": {(A, T, 0): 0},
        "AuditG": {(A, "Audit", 0): 1},
    }
    conns = {
        "Push": ConsumerConnection(
            "Push", (), (Subscription(T, "TagA || TagC"),), "CONSUME_PASSIVELY", "CLUSTERING"
        ),
        "Bcast": ConsumerConnection(
            "Bcast", (), (Subscription(T, "*"),), "CONSUME_PASSIVELY", "BROADCASTING"
        ),
        "Pop": ConsumerConnection("Pop", (), (Subscription(T, "*"),), "CONSUME_POP", "CLUSTERING"),
    }
    return MemoryBackend(topics, queues, committed, connections=conns)


def text(rnd, shape: Shape = Shape()) -> str:  # type: ignore[no-untyped-def]
    c = RoundCollector(shape, "t")
    c.publish(rnd)
    return generate_latest(registry_for(c)).decode()


def test_broadcast_is_unsupported_never_a_number() -> None:
    out = text(FleetSampler(backend(), Rules()).take(now_ms=10_000))
    assert 'mqctl_group_unsupported{group="Bcast",reason="broadcast"} 1.0' in out
    assert not re.search(r'^mqctl_(queue|group)_(?!unsupported)\w+\{[^}]*group="Bcast"', out, re.M)


def test_a_pop_group_is_measured_without_an_inflight_it_cannot_know() -> None:
    """Pop's client is CONSUME_POP: its committed offset moves at pop time, so the lag is the
    messages not popped yet (queue 0: 40 - 0; queue 1: 20, no offset of Pop there, read as 0); in
    flight (popped, not acknowledged) is not read by a round: no series rather than the pull offsets' 0."""
    out = text(FleetSampler(backend(), Rules()).take(now_ms=10_000))
    assert 'mqctl_queue_lag_messages{broker="broker-a",group="Pop",queue_id="0",topic="Orders"} 40.0' in out
    assert 'mqctl_queue_lag_messages{broker="broker-a",group="Pop",queue_id="1",topic="Orders"} 20.0' in out
    assert 'mqctl_group_lag_messages{group="Pop"} 60.0' in out
    assert not re.search(r'^mqctl_queue_inflight_messages\{[^}]*group="Pop"', out, re.M)
    assert re.search(r'^mqctl_queue_inflight_messages\{[^}]*group="Push"', out, re.M)  # a classic one has it
    assert 'group="Pop"' not in "".join(line for line in out.splitlines() if "unsupported" in line)


def test_filtered_lag_stays_exact_and_reads_only_what_changed() -> None:
    b = backend()
    sampler = FleetSampler(b, Rules())
    rnd = sampler.take(now_ms=10_000)
    push = next(g for g in rnd.groups if g.group == "Push")
    q0, q1 = MessageQueue(T, A, 0), MessageQueue(T, A, 1)
    # q0: offsets 10..39, TagA or TagC at even i: 15; q1: committed 20 = max: 0
    assert push.filtered == {q0: ("TagA || TagC", 15), q1: ("TagA || TagC", 0)}
    spans: list = []
    real = b.count_tag_matches

    def spy(s, expr, **kw):  # type: ignore[no-untyped-def]
        spans.extend(s)
        return real(s, expr, **kw)

    b.count_tag_matches = spy  # type: ignore[method-assign]
    b.queues[(A, T, 0)].messages += [(5000 + i, TAGS[i % 4]) for i in range(40, 48)]  # 40..47: 4 match
    b.committed["Push"][(A, T, 0)] = 13  # consumed 10, 11, 12: TagA at 12... and 10: 2 match
    rnd = sampler.take(now_ms=11_000)
    push = next(g for g in rnd.groups if g.group == "Push")
    assert push.filtered[q0] == ("TagA || TagC", 15 - 2 + 4)  # = even i in 13..47: 17
    assert sorted((s.start, s.end) for s in spans if s.queue == q0) == [(10, 13), (40, 48)]


def test_max_series_allow_deny_and_deleted_groups() -> None:
    b = backend()
    only = FleetFilter(group_deny=re.compile("^(Bcast|Pop)$"), topic_deny=re.compile("^%RETRY%"))
    sampler = FleetSampler(b, Rules(), only=only)
    rnd = sampler.take(now_ms=1)
    assert sorted(g.group for g in rnd.groups) == ["AuditG", "Push"]
    out = text(rnd, Shape(max_series=40))  # AuditG whole: 13 + 13 series; Push (2 queues) only its 13
    assert 'mqctl_queue_lag_messages{broker="broker-a",group="AuditG",queue_id="0",topic="Audit"} 4.0' in out
    assert 'group="Push",queue_id' not in out
    assert 'mqctl_group_lag_messages{group="Push"} 30.0' in out
    assert "mqctl_series_limited_groups 1.0" in out
    del b.committed["AuditG"]
    rnd = sampler.take(now_ms=2)
    assert [g.group for g in rnd.groups] == ["Push"] and "AuditG" not in sampler.windows


def test_thresholds_table_and_alerts() -> None:
    cfg = parse_config(
        {
            "defaults": {"max_status": "STOP", "for": "2s", "labels": {"team": "core"}},
            "groups": {"Push": {"max_lag": 25, "max_lag_time": 60, "severity": "page"}},
        }
    )
    assert cfg.of("Push").max_lag == 25 and cfg.of("Push").for_s == 2.0 and cfg.of("Other").max_lag is None
    book = AlertBook(cfg)
    sampler = FleetSampler(backend(), Rules(window=3, min_frozen_ms=0))
    book.update(sampler.take(now_ms=1_000))
    assert book.current() == []  # over the limit, but not for 2 s yet
    book.update(sampler.take(now_ms=3_500))
    names = {(dict(a.labels)["alertname"], dict(a.labels)["group"]) for a in book.current()}
    # Push: lag 30 > 25 (q0 30, q1 0); its store times (1010..) are ~3 s old, under 60 s
    assert (A_LAG, "Push") in names and all(dict(a.labels)["team"] == "core" for a in book.current())
    assert (A_STATUS, "AuditG") not in names  # nothing moves: STOP, not worse than max_status STOP
    lag = next(a for a in book.current() if dict(a.labels)["alertname"] == A_LAG)
    assert dict(lag.labels)["severity"] == "page" and dict(lag.annotations)["lag_messages"] == "30"


@pytest.mark.parametrize(
    "table, message",
    [
        ({"defaults": {"max_lagg": 1}}, "unknown key(s) max_lagg"),
        ({"defaults": {"max_lag": -1}}, "max_lag: expected a whole number"),
        ({"groups": {"G": {"max_status": "BAD"}}}, "max_status: unknown status"),
        ({"groups": {"G": {"for": "soon"}}}, "for: expected seconds or a duration"),
        ({"groups": {"G": {"subscriptions": {"T": 1}}}}, "subscriptions: expected topic"),
    ],
)
def test_bad_thresholds_are_usage_errors(table: dict, message: str) -> None:
    with pytest.raises(UsageError, match=re.escape(message)):
        parse_config(table)


def test_a_stall_alert_names_the_stuck_message() -> None:
    """AuditG's committed offset stays at 1 while producers append: STALL; the alert carries the
    message at offset 1 (the memory backend's id MEM..01, its store time 3001 ms)."""
    b = backend()
    book = AlertBook(parse_config({"defaults": {"max_status": "STOP"}}))
    sampler = FleetSampler(
        b, Rules(window=3, min_frozen_ms=1_000), only=FleetFilter(group_allow=re.compile("^AuditG$"))
    )
    for i, t in enumerate((10_000, 11_000, 12_000)):
        b.queues[(A, "Audit", 0)].messages.append((4000 + i, None))
        book.update(sampler.take(now_ms=t))
    (alert,) = book.current()
    notes = dict(alert.annotations)
    assert dict(alert.labels)["alertname"] == A_STATUS and notes["status"] == "STALL"
    assert (notes["stuck_queue"], notes["stuck_offset"], notes["stuck_msg_id"]) == (
        "Audit/broker-a/0",
        "1",
        f"MEM{1:029X}",
    )
    assert notes["stuck_store_time"] == "1970-01-01T00:00:03.001+00:00"
