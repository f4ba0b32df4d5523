"""A complete round as Prometheus metric families (prometheus-client's custom-collector types):
built once per round by the sampler's thread, then served unchanged until the next round.

Names: prefix ``mqctl_``, base units (seconds, messages), ``_total`` only on counters. Per queue
the labels are ``group, topic, broker, queue_id``; per group ``group``. A queue whose broker did
not answer the round has no per-queue series (``mqctl_broker_up`` says why) and its group's sums
leave it out; statuses keep the window's verdict (a gap in the data is not a STOP).

``compat`` adds rocketmq-exporter's families that Grafana boards use, with its label names:
``rocketmq_group_diff``/``_retrydiff``/``_dlqdiff`` {group, topic, countOfOnlineConsumers,
msgModel} (its computeTotalDiff: the plain sum of broker - consumer offsets, clustering groups
only, msgModel "1"), ``rocketmq_consumer_offset`` and ``rocketmq_group_get_latency_by_storetime``
{cluster, broker, topic, group} (sum of consumer offsets; the largest lag time, in ms, as it has
it), ``rocketmq_producer_offset`` {cluster, broker, topic} (sum of the queues' max offsets, for the
topics some group consumes).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from mqctl.model import RETRY_PREFIX, STATUSES
from mqctl.records import record

if TYPE_CHECKING:
    from mqctl.ops.watch.fleet import FleetRound, GroupTick

DLQ_PREFIX = "%DLQ%"
Q_LABELS = ["group", "topic", "broker", "queue_id"]


@record(frozen=True)
class Shape:
    """How a round is drawn: the series budget (--max-series) and rocketmq-exporter compatibility."""

    max_series: int = 100_000
    compat: bool = False
    cluster: str = ""  # rocketmq-exporter's ``cluster`` label (-c)


def _kind(topic: str) -> str:
    if topic.startswith(RETRY_PREFIX):
        return "retry"
    return "dlq" if topic.startswith(DLQ_PREFIX) else "topic"


# attribute -> (family name, HELP, labels ("q": per queue, "g": per group, or a list), stateset?)
SPECS: dict[str, tuple[str, str, Any, bool]] = {
    "q_lag": (
        "mqctl_queue_lag_messages",
        "Unconsumed messages of the queue: max(broker offset - committed offset, 0), mqadmin's Diff.",
        "q",
        False,
    ),
    "q_lag_s": (
        "mqctl_queue_lag_seconds",
        "Age of the oldest unconsumed message of the queue (0 when none).",
        "q",
        False,
    ),
    "q_consumer": ("mqctl_queue_consumer_offset", "The group's committed offset in the queue.", "q", False),
    "q_broker": (
        "mqctl_queue_broker_offset",
        "The queue's max offset (the next offset to be written).",
        "q",
        False,
    ),
    "q_min": ("mqctl_queue_min_offset", "The queue's min offset (older messages expired).", "q", False),
    "q_inflight": (
        "mqctl_queue_inflight_messages",
        "Pulled by the group's client but not committed yet (live clusters).",
        "q",
        False,
    ),
    "q_filtered": (
        "mqctl_queue_filtered_lag_messages",
        "Unconsumed messages whose tag matches the group's subscription expression (exact count).",
        [*Q_LABELS, "expression"],
        False,
    ),
    "q_status": (
        "mqctl_queue_status",
        "The queue's status over the window (see consumerProgress --watch).",
        "q",
        True,
    ),
    "g_lag": (
        "mqctl_group_lag_messages",
        "Unconsumed messages of the group, retry and DLQ topics left out.",
        "g",
        False,
    ),
    "g_lag_s": (
        "mqctl_group_lag_seconds",
        "Age of the group's oldest unconsumed message (0 when none).",
        "g",
        False,
    ),
    "g_filtered": (
        "mqctl_group_filtered_lag_messages",
        "Unconsumed messages matching the group's subscriptions (exact).",
        "g",
        False,
    ),
    "g_status": ("mqctl_group_status", "The group's status: its worst queue's, over the window.", "g", True),
    "g_members": ("mqctl_group_members_online", "Clients of the group online (live clusters).", "g", False),
    "g_retry": (
        "mqctl_group_retry_lag_messages",
        "Unconsumed messages of the group's retry topic %RETRY%<group>.",
        "g",
        False,
    ),
    "g_dlq": (
        "mqctl_group_dlq_lag_messages",
        "Unconsumed messages of %DLQ%<group> where the group's stats carry it.",
        "g",
        False,
    ),
    "g_unsupported": (
        "mqctl_group_unsupported",
        "A group mqctl does not measure (broadcast: offsets kept by each client): no lag series for it.",
        ["group", "reason"],
        False,
    ),
    "g_unread": ("mqctl_group_unread", "A group whose stats could not be read this round.", "g", False),
}


class _Families:
    """The families of one round (``SPECS``), in a fixed order."""

    q_lag: Any
    q_lag_s: Any
    q_consumer: Any
    q_broker: Any
    q_min: Any
    q_inflight: Any
    q_filtered: Any
    q_status: Any
    g_lag: Any
    g_lag_s: Any
    g_filtered: Any
    g_status: Any
    g_members: Any
    g_retry: Any
    g_dlq: Any
    g_unsupported: Any
    g_unread: Any

    def __init__(self) -> None:
        from prometheus_client.core import GaugeMetricFamily, StateSetMetricFamily

        for attr, (name, doc, labels, stateset) in SPECS.items():
            names = Q_LABELS if labels == "q" else ["group"] if labels == "g" else labels
            kind = StateSetMetricFamily if stateset else GaugeMetricFamily
            setattr(self, attr, kind(name, doc, labels=names))

    def all(self) -> list[Any]:
        return [getattr(self, attr) for attr in SPECS]


def _queue_rows(f: _Families, g: GroupTick) -> tuple[int, int, int, int]:
    """The group's per-queue series; its sums (lag, retry lag, DLQ lag, filtered lag)."""
    assert g.tick is not None
    rows = {r.queue: r for r in g.tick.progress.rows}
    lag = retry = dlq = matched = 0
    for w in g.tick.view.queues:
        r = rows.get(w.point.queue)
        if w.stale or r is None:
            continue
        q = w.point.queue
        labels = [g.group, q.topic, q.broker_name, str(q.queue_id)]
        f.q_lag.add_metric(labels, r.lag)
        if r.lag_ms is not None:
            f.q_lag_s.add_metric(labels, r.lag_ms / 1000)
        f.q_consumer.add_metric(labels, r.consumer_offset)
        f.q_broker.add_metric(labels, r.broker_offset)
        if r.min_offset is not None:
            f.q_min.add_metric(labels, r.min_offset)
        if g.members is not None and not g.tick.progress.inflight_unknown:  # POP: not read, unknown
            f.q_inflight.add_metric(labels, r.inflight)
        f.q_status.add_metric(labels, {s: s == w.status for s in STATUSES})
        if q in g.filtered:
            expr, n = g.filtered[q]
            f.q_filtered.add_metric([*labels, expr], n)
            matched += n
        kind = _kind(q.topic)
        lag += r.lag if kind == "topic" else 0
        retry += r.lag if kind == "retry" else 0
        dlq += r.lag if kind == "dlq" else 0
    return lag, retry, dlq, matched


def _cost(g: GroupTick, per_queue: bool) -> int:
    if g.tick is None:
        return 1
    queues = sum(1 for w in g.tick.view.queues if not w.stale)
    return 7 + len(STATUSES) + (queues * (7 + len(STATUSES)) if per_queue else 0)


def build(rnd: FleetRound, shape: Shape) -> tuple[list[Any], int]:
    """The families of ``rnd`` and the number of groups left out (in part) by the series budget.
    Groups go in name order, so which ones the budget leaves out does not change between rounds."""
    f = _Families()
    used, limited = 0, 0
    for g in sorted(rnd.groups, key=lambda t: t.group):
        if g.unsupported is not None:
            f.g_unsupported.add_metric([g.group, g.unsupported], 1)
            used += 1
            continue
        if g.tick is None:
            f.g_unread.add_metric([g.group], 1)
            used += 1
            continue
        per_queue = used + _cost(g, True) <= shape.max_series
        if not per_queue and used + _cost(g, False) > shape.max_series:
            limited += 1
            continue
        limited += 0 if per_queue else 1
        used += _cost(g, per_queue)
        sub = _Families() if not per_queue else f
        lag, retry, dlq, matched = _queue_rows(sub, g)
        _group_rows(f, g, lag, retry, dlq, matched)
    families = f.all()
    if shape.compat:
        families += list(compat_families(rnd, shape.cluster))
    return families, limited


def _group_rows(f: _Families, g: GroupTick, lag: int, retry: int, dlq: int, matched: int) -> None:
    assert g.tick is not None
    view = g.tick.view
    fresh = [w for w in view.queues if not w.stale and _kind(w.point.queue.topic) == "topic"]
    f.g_lag.add_metric([g.group], lag)
    f.g_lag_s.add_metric([g.group], max((w.point.lag_ms or 0 for w in fresh), default=0) / 1000)
    if g.filtered:
        f.g_filtered.add_metric([g.group], matched)
    f.g_status.add_metric([g.group], {s: s == view.status for s in STATUSES})
    if g.members is not None:
        f.g_members.add_metric([g.group], g.members)
    f.g_retry.add_metric([g.group], retry)
    if any(_kind(w.point.queue.topic) == "dlq" for w in view.queues):
        f.g_dlq.add_metric([g.group], dlq)


def compat_families(rnd: FleetRound, cluster: str) -> Iterator[Any]:
    from prometheus_client.core import GaugeMetricFamily

    diff_labels = ["group", "topic", "countOfOnlineConsumers", "msgModel"]
    per_broker = ["cluster", "broker", "topic", "group"]
    fams = {
        "topic": GaugeMetricFamily(
            "rocketmq_group_diff", "GroupDiff (rocketmq-exporter compatible)", labels=diff_labels
        ),
        "retry": GaugeMetricFamily(
            "rocketmq_group_retrydiff", "GroupRetryDiff (rocketmq-exporter compatible)", labels=diff_labels
        ),
        "dlq": GaugeMetricFamily(
            "rocketmq_group_dlqdiff", "GroupDLQDiff (rocketmq-exporter compatible)", labels=diff_labels
        ),
    }
    offset = GaugeMetricFamily(
        "rocketmq_consumer_offset", "GroupBrokerTotalOffset (rocketmq-exporter compatible)", labels=per_broker
    )
    latency = GaugeMetricFamily(
        "rocketmq_group_get_latency_by_storetime",
        "GroupGetLatencyByStoreTime in ms (rocketmq-exporter compatible)",
        labels=per_broker,
    )
    produced: dict[tuple[str, str], dict[int, int]] = {}
    for g in sorted(rnd.groups, key=lambda t: t.group):
        if g.tick is None:
            continue
        diff: dict[str, int] = {}
        offsets: dict[tuple[str, str], int] = {}
        lat: dict[tuple[str, str], int] = {}
        for r in g.tick.progress.rows:
            diff[r.topic] = diff.get(r.topic, 0) + r.diff
            offsets[(r.broker_name, r.topic)] = offsets.get((r.broker_name, r.topic), 0) + r.consumer_offset
            lat[(r.broker_name, r.topic)] = max(lat.get((r.broker_name, r.topic), 0), r.lag_ms or 0)
            produced.setdefault((r.broker_name, r.topic), {})[r.queue_id] = r.broker_offset
        online = str(g.members or 0)
        for topic, d in diff.items():
            fams[_kind(topic)].add_metric([g.group, topic, online, "1"], d)
        for (broker, topic), v in offsets.items():
            offset.add_metric([cluster, broker, topic, g.group], v)
            latency.add_metric([cluster, broker, topic, g.group], lat[(broker, topic)])
    producer = GaugeMetricFamily(
        "rocketmq_producer_offset",
        "TopicOffset (rocketmq-exporter compatible)",
        labels=["cluster", "broker", "topic"],
    )
    for (broker, topic), queues in sorted(produced.items()):
        if _kind(topic) == "topic":
            producer.add_metric([cluster, broker, topic], sum(queues.values()))
    yield from (*fams.values(), offset, latency, producer)
