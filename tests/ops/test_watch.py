"""ops/watch/rules.py: statuses, rates and time to drain from replayed sample sequences. Every expected
value is worked out by hand from the sequence next to it (t in ms, b broker offset, c committed
offset, p pull offset)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mqctl.model import (
    STATUSES,
    BrokerFailure,
    GroupProgress,
    MessageQueue,
    ProgressRow,
    QueuePoint,
    Rules,
    Sample,
)
from mqctl.ops.watch import rules as watch
from mqctl.ops.watch.codec import sample_doc, sample_from_doc, sample_line

A, B = "broker-a", "broker-b"
QA = MessageQueue("T", A, 0)
QB = MessageQueue("T", B, 0)
RULES = Rules(window=10, min_frozen_ms=10_000)


def series(*rows: tuple) -> list[tuple[int, QueuePoint]]:
    """rows of (t, b, c) or (t, b, c, p) for queue QA."""
    out = []
    for row in rows:
        t, b, c, *p = row
        out.append((t, QueuePoint(QA, b, c, p[0] if p else None)))
    return out


def status(*rows: tuple, rules: Rules = RULES) -> str:
    return watch.queue_status(series(*rows), rules)[0]


# ------------------------------------------------------------------------------ the rules


def test_one_sample_is_ok_new() -> None:
    assert watch.queue_status(series((0, 100, 10)), RULES) == ("OK", "new: one sample")


def test_rewind_when_the_committed_offset_goes_back() -> None:
    # c 10 -> 12 -> 8: went back between the 2nd and 3rd sample.
    st, why = watch.queue_status(series((0, 20, 10), (2000, 20, 12), (4000, 20, 8)), RULES)
    assert (st, why) == ("REWIND", "committed went back 12 -> 8")


def test_a_rewind_leaves_with_the_window() -> None:
    rows = [(0, 50, 30), (2000, 50, 10), (4000, 50, 12), (6000, 50, 14)]
    # window 3: the last three points (10, 12, 14) no longer hold the step back; lag 40 -> 36: OK.
    assert status(*rows, rules=Rules(window=10)) == "REWIND"
    assert watch.queue_status(series(*rows)[-3:], RULES) == ("OK", "lag 40 -> 36")


def test_a_forward_reset_in_the_window_is_not_a_stall() -> None:
    # c 10, 10, 60, 60 over 15 s while b grows 100 -> 130: c moved (a skip), so not frozen;
    # lag 90, 100, 60, 70: last (70) < first (90): OK.
    assert status((0, 100, 10), (5000, 110, 10), (10000, 120, 60), (15000, 130, 60)) == "OK"


def test_stall_when_the_committed_offset_stands_and_the_broker_moves() -> None:
    # c 10 for 10 s (= min_frozen_ms), b 20 -> 30: STALL.
    st, why = watch.queue_status(series((0, 20, 10), (5000, 25, 10), (10000, 30, 10)), RULES)
    assert st == "STALL"
    assert why == "committed 10 for 10s while the broker went 20 -> 30"


def test_a_frozen_offset_shorter_than_min_frozen_is_only_a_warning() -> None:
    # The same offsets over 8 s (< 10 s: a consumer persists every 5 s): lag 10 -> 20 grew: WARN.
    assert status((0, 20, 10), (4000, 25, 10), (8000, 30, 10)) == "WARN"


def test_stop_when_nothing_moves() -> None:
    # c 10, b 20 for 12 s, no pull offsets (a store): STOP; lag 10.
    st, why = watch.queue_status(series((0, 20, 10), (6000, 20, 10), (12000, 20, 10)), RULES)
    assert (st, why) == ("STOP", "nothing moved for 12s with 10 unconsumed")


def test_stuck_when_pulls_go_on_while_the_committed_offset_stands() -> None:
    # c 10 for 10 s, p 12 -> 15 -> 18 (inflight 2 -> 8), b 20 constant: STUCK.
    st, why = watch.queue_status(series((0, 20, 10, 12), (5000, 20, 10, 15), (10000, 20, 10, 18)), RULES)
    assert (st, why) == ("STUCK", "committed 10 for 10s while pulls went 12 -> 18")
    # Pulls advancing win over a moving broker offset (STUCK is the more specific diagnosis).
    assert status((0, 20, 10, 12), (5000, 30, 10, 15), (10000, 40, 10, 18)) == "STUCK"


def test_pulls_standing_still_with_inflight_is_a_stall_not_stuck() -> None:
    # Flow control: p stays 30 (inflight 20), b 40 -> 50: STALL.
    assert status((0, 40, 10, 30), (5000, 45, 10, 30), (10000, 50, 10, 30)) == "STALL"


def test_warn_when_lag_grows_while_the_group_commits() -> None:
    # c 10, 12, 14; b 20, 30, 40: lag 10, 18, 26.
    assert watch.queue_status(series((0, 20, 10), (2000, 30, 12), (4000, 40, 14)), RULES) == (
        "WARN",
        "lag grew 10 -> 26 in 4s",
    )


def test_lag_zero_inside_the_window_is_ok() -> None:
    # c 10 for 10 s but lag 0, 5, 10: it was caught up at the first sample.
    assert watch.queue_status(series((0, 10, 10), (5000, 15, 10), (10000, 20, 10)), RULES) == (
        "OK",
        "caught up within the window",
    )
    assert watch.queue_status(series((0, 10, 5), (5000, 12, 12)), RULES) == ("OK", "caught up")


def test_only_the_last_window_points_count() -> None:
    # 12 samples, window 10: the first two (lag 0) fall out; c 10 for 18 s, b growing: STALL.
    rows = [(i * 2000, 10 + i, 10) for i in range(12)]
    view = watch.evaluate([Sample("G", t, (QueuePoint(QA, b, c),)) for t, b, c in rows], RULES)
    (q,) = view.queues
    assert (q.status, q.points, q.span_ms) == ("STALL", 10, 18_000)
    assert q.reason == "committed 10 for 18s while the broker went 12 -> 21"


def test_severity_order_and_max_status() -> None:
    assert STATUSES == ("OK", "WARN", "REWIND", "STOP", "STALL", "STUCK")
    assert watch.worst(["OK", "STOP", "WARN", "REWIND"]) == "STOP"
    assert watch.worst([]) == "OK"
    assert watch.worse_than("STALL", "STOP") and not watch.worse_than("STOP", "STOP")
    assert watch.parse_status(" stall ") == "STALL"
    with pytest.raises(ValueError, match="expected one of OK, WARN"):
        watch.parse_status("ERR")


# ------------------------------------------------------------------------- rates and drain


def test_rates_and_time_to_drain() -> None:
    # 4 s: c 100 -> 130 (7.5/s), b 200 -> 220 (5/s); lag 90 drains at 2.5/s: 36 s.
    r = watch.queue_rates(series((0, 200, 100), (2000, 210, 110), (4000, 220, 130)))
    assert (r.consume, r.produce, r.drain, r.drain_s) == (7.5, 5.0, "draining", 36.0)


def test_falling_behind_never_drains() -> None:
    # 4 s: c 0 -> 4 (1/s), b 10 -> 30 (5/s): lag 26, never.
    r = watch.queue_rates(series((0, 10, 0), (2000, 20, 2), (4000, 30, 4)))
    assert (r.consume, r.produce, r.drain, r.drain_s) == (1.0, 5.0, "never", None)
    # Even: consume = produce = 2/s with lag 10: never either.
    r = watch.queue_rates(series((0, 20, 10), (5000, 30, 20)))
    assert (r.consume, r.produce, r.drain) == (2.0, 2.0, "never")


def test_no_lag_is_drained_and_one_point_is_unknown() -> None:
    r = watch.queue_rates(series((0, 10, 10), (1000, 12, 12)))
    assert (r.consume, r.produce, r.drain, r.drain_s) == (2.0, 2.0, "drained", 0.0)
    assert watch.queue_rates(series((0, 10, 5))).drain == "unknown"
    assert watch.queue_rates(series((0, 10, 10))).drain == "drained"


def test_rates_restart_after_a_rewind() -> None:
    # c 100, 120, 50, 70 (reset back at t=4000); rates from (4000, 50) to (6000, 70): 10/s,
    # produce 0; lag 200 - 70 = 130 drains in 13 s.
    rows = [(0, 200, 100), (2000, 200, 120), (4000, 200, 50), (6000, 200, 70)]
    r = watch.queue_rates(series(*rows))
    assert (r.consume, r.produce, r.drain, r.drain_s) == (10.0, 0.0, "draining", 13.0)


def test_drain_function() -> None:
    assert watch.drain(0, None, None) == ("drained", 0.0)
    assert watch.drain(100, 15.0, 5.0) == ("draining", 10.0)
    assert watch.drain(100, 5.0, 15.0) == ("never", None)
    assert watch.drain(1, None, 1.0) == ("unknown", None)


# ------------------------------------------------------------------ windows over a group


def two_queue_samples() -> list[Sample]:
    """QA: b +10 per 5 s, c +20 per 5 s from lag 100 (draining at 2/s); QB: b +10 per 5 s, c
    frozen at 5 (STALL once the window spans 10 s)."""
    out = []
    for i in range(3):
        t = i * 5000
        out.append(
            Sample("G", t, (QueuePoint(QA, 200 + 10 * i, 100 + 20 * i), QueuePoint(QB, 50 + 10 * i, 5)))
        )
    return out


def test_group_rolls_up_the_worst_and_sums_rates() -> None:
    view = watch.evaluate(two_queue_samples(), RULES)
    qa, qb = view.queues
    assert (qa.status, qb.status, view.status) == ("OK", "STALL", "STALL")
    # QA over 10 s: consume 40/10 = 4/s, produce 20/10 = 2/s, lag 220 - 140 = 80: 40 s.
    assert (qa.rates.consume, qa.rates.produce, qa.rates.drain_s) == (4.0, 2.0, 40.0)
    # QB: consume 0, produce 2/s, lag 70 - 5 = 65: never. The group: 4/s and 4/s, never.
    assert (qb.rates.consume, qb.rates.produce, qb.rates.drain) == (0.0, 2.0, "never")
    assert (view.rates.consume, view.rates.produce, view.rates.drain) == (4.0, 4.0, "never")
    assert (view.lag, view.samples, view.span_ms, view.counts()) == (145, 3, 10_000, {"OK": 1, "STALL": 1})


def test_group_drains_when_its_slowest_queue_does() -> None:
    # QA drains in 36 s (see test_rates_and_time_to_drain); QB: c 50 -> 70 in 4 s (5/s), b still,
    # lag 30: 6 s. The group drains with its slowest queue: 36 s.
    samples = [
        Sample("G", 0, (QueuePoint(QA, 200, 100), QueuePoint(QB, 100, 50))),
        Sample("G", 2000, (QueuePoint(QA, 210, 110), QueuePoint(QB, 100, 60))),
        Sample("G", 4000, (QueuePoint(QA, 220, 130), QueuePoint(QB, 100, 70))),
    ]
    view = watch.evaluate(samples, RULES)
    assert [q.rates.drain_s for q in view.queues] == [36.0, 6.0]
    assert (view.rates.drain, view.rates.drain_s) == ("draining", 36.0)
    assert (view.rates.consume, view.rates.produce) == (12.5, 5.0)


def test_a_broker_missing_from_one_sample_keeps_its_queues_last_status() -> None:
    samples = two_queue_samples()
    before = watch.evaluate(samples, RULES)
    # broker-b does not answer at t=15000: its queue is absent, the sample incomplete.
    samples.append(
        Sample("G", 15000, (QueuePoint(QA, 230, 160),), missing_brokers=(B,)),
    )
    view = watch.evaluate(samples, RULES)
    qa, qb = view.queues
    assert view.incomplete and qb.stale and not qa.stale
    assert (qb.status, qb.reason, qb.point) == (
        before.queues[1].status,
        before.queues[1].reason,
        before.queues[1].point,
    )
    # A queue with lag whose offsets stand still for 5 s, then its broker is gone for two
    # samples: read as "unchanged" the window would span 15 s (a false STOP); its own points
    # span 5 s (< 10 s), lag 10 -> 10: OK, stale.
    quiet = [Sample("G", t, (QueuePoint(QA, 20, 10),)) for t in (0, 5000)]
    quiet += [Sample("G", t, (), missing_brokers=(A,)) for t in (10000, 15000)]
    (q,) = watch.evaluate(quiet, RULES).queues
    assert (q.status, q.reason, q.stale, q.points, q.span_ms) == ("OK", "lag 10 -> 10", True, 2, 5000)


def test_a_new_queue_is_ok_until_it_has_two_samples_and_a_gone_queue_is_dropped() -> None:
    samples = two_queue_samples()
    qc = MessageQueue("T", A, 1)
    samples.append(Sample("G", 15000, (QueuePoint(QA, 230, 160), QueuePoint(qc, 500, 0))))
    view = watch.evaluate(samples, RULES)
    # QB vanished from a complete answer: gone. QC: one point, OK although its lag is 500.
    assert [q.point.queue for q in view.queues] == [QA, qc]
    assert (view.queues[1].status, view.queues[1].reason, view.queues[1].rates.drain) == (
        "OK",
        "new: one sample",
        "unknown",
    )


def test_evaluate_refuses_nothing_and_tiny_windows() -> None:
    with pytest.raises(ValueError):
        watch.evaluate([], RULES)
    with pytest.raises(ValueError):
        watch.evaluate(two_queue_samples(), Rules(window=1))


# ---------------------------------------------------------------- samples in and out


def test_sample_from_progress_store_and_live() -> None:
    rows = [
        ProgressRow("T", A, 0, 100, 40, 0, 0, inflight=7, lag_ms=900),
        ProgressRow("T", A, 1, 10, 0, 0, 0, committed=False),
    ]
    p = GroupProgress("G", rows, 5000, failures=(BrokerFailure(B, "10.0.0.2:10911", "timeout"),))
    live = watch.sample_from_progress(p, "live", "T")
    assert (live.group, live.at_ms, live.missing_brokers, live.topic, live.complete) == (
        "G",
        5000,
        (B,),
        "T",
        False,
    )
    assert live.points[0] == QueuePoint(QA, 100, 40, 47, True, 900, 0)
    assert live.points[1].committed is False and live.points[1].pull_offset == 0
    store = watch.sample_from_progress(p, "store")
    assert [pt.pull_offset for pt in store.points] == [None, None]


def test_sample_document_round_trip() -> None:
    view = watch.evaluate(two_queue_samples(), RULES)
    doc = json.loads(sample_line(view))
    assert doc == sample_doc(view)
    assert doc["schema"] == "mqctl/consumerProgress.sample/v1"
    assert (doc["status"], doc["totals"]["lag"], doc["totals"]["drain"]) == ("STALL", 145, "never")
    assert doc["queues"][1]["status"] == "STALL" and doc["queues"][0]["drainSeconds"] == 40.0
    back = sample_from_doc(doc)
    assert back == view.sample


def test_sample_from_doc_skips_stale_queues_and_rejects_bad_documents() -> None:
    samples = two_queue_samples()
    samples.append(Sample("G", 15000, (QueuePoint(QA, 230, 160),), missing_brokers=(B,)))
    doc = sample_doc(watch.evaluate(samples, RULES))
    assert [q["stale"] for q in doc["queues"]] == [False, True]
    assert sample_from_doc(doc) == samples[-1]  # the stale queue is not a reading
    for bad, msg in (
        ([], "not a JSON object"),
        ({"schema": "x"}, "schema 'x'"),
        ({**doc, "queues": {}}, "must be lists"),
        ({**doc, "atMs": "now"}, "'atMs' must be an integer"),
        ({**doc, "queues": [{"topic": "T"}]}, "'brokerName' must be a string"),
    ):
        with pytest.raises(ValueError, match=msg):
            sample_from_doc(bad)


@pytest.mark.parametrize(
    ("text", "ref"),
    [
        ("broker-a:3", (None, "broker-a", 3)),
        ("Orders/broker-a/0", ("Orders", "broker-a", 0)),
        ("%RETRY%G/b:x/12", ("%RETRY%G", "b:x", 12)),
        (" host:9:1 ", (None, "host:9", 1)),
    ],
)
def test_parse_queue_ref(text: str, ref: tuple) -> None:
    assert watch.parse_queue_ref(text) == ref


@pytest.mark.parametrize("text", ["broker-a", "broker-a:x", ":3", "/b/1", "a/b/c/1", "T/b/-1"])
def test_parse_queue_ref_rejects(text: str) -> None:
    with pytest.raises(ValueError, match="expected BROKER:QID or TOPIC/BROKER/QID"):
        watch.parse_queue_ref(text)


def test_a_failed_history_append_names_the_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A disk that fills between the check and the append: the error says which file and that the
    sample is not recorded, instead of a bare "No space left on device"."""
    import errno

    from mqctl import fsio
    from mqctl.errors import MqctlError
    from mqctl.ops.watch import history

    def full(path: Path, line: str) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(fsio, "append_line", full)
    with pytest.raises(MqctlError) as caught:
        history.append_line(tmp_path / "h.jsonl", "{}")
    assert caught.value.exit_status == 1
    assert str(caught.value.message) == (
        f"--history {tmp_path / 'h.jsonl'}: cannot append the sample: No space left on device; it is not recorded"
    )


def test_outages_say_each_stop_and_return_once() -> None:
    from mqctl.ops.watch.sampler import Outages

    o = Outages("stale meanwhile")
    assert o.lines({}) == []
    down_b = {B: "127.0.0.1:10911: Connection refused"}
    assert o.lines(down_b) == [
        f"broker {B} did not answer: 127.0.0.1:10911: Connection refused; stale meanwhile"
    ]
    assert o.lines(down_b) == []  # the next samples of the same outage: nothing new
    # why changed (refused -> timed out): said again; broker-a joins it
    both = {B: "timed out", A: "Connection reset"}
    assert o.lines(both) == [
        f"broker {A} did not answer: Connection reset; stale meanwhile",
        f"broker {B} did not answer: timed out; stale meanwhile",
    ]
    assert o.lines({A: "Connection reset"}) == [f"broker {B} answers again"]
    assert o.lines({}) == [f"broker {A} answers again"]
    # a second outage with the very same reason is a new outage: said again
    assert o.lines(down_b) == [
        f"broker {B} did not answer: 127.0.0.1:10911: Connection refused; stale meanwhile"
    ]
