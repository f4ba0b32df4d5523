"""lagReport -n: the live cluster's answers fetched on the driver, handed to the pipeline as model objects.

Everything is asked in a handful of pipelined rounds whatever the number of groups (the
pipeline must not talk to the cluster: only this CLI layer opens a backend):

1. the live backend's groups overview: every group from the name server's retry topics and the
   brokers' tables, with GET_CONSUME_STATS for every (group, broker) and a connection list per
   group, pipelined;
2. GET_TOPIC_STATS_INFO per (broker, topic) for the min offsets, and GET_ALL_CONSUMER_OFFSET per
   broker: a queue absent from the offset table has no committed offset (the consume stats say 0
   either way);
3. with --lag-time: the store time of the first unconsumed message of every lagging queue
   (QUERY_CONSUME_QUEUE + VIEW_MESSAGE_BY_ID, two rounds), once per distinct position.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mqctl.cli.errors import warn
from mqctl.errors import BrokersFailedError, MqctlError

if TYPE_CHECKING:
    from mqctl.backends.live import LiveBackend
    from mqctl.model import BackendTarget
    from mqctl.pipeline.inputs import LiveSnapshot

__all__ = ["live_fetch", "live_snapshot"]


def live_fetch(target: BackendTarget, options: Any, lag_time: bool) -> tuple[LiveSnapshot, MqctlError | None]:
    """Open the cluster ``target`` names, take its snapshot, print the backend's warnings."""
    from mqctl.backends.open import open_backend

    with open_backend(target, options) as backend:
        snapshot, failure = live_snapshot(backend, lag_time=lag_time)  # type: ignore[arg-type]
        for w in backend.take_warnings():
            warn(str(w))
    return snapshot, failure


def live_snapshot(backend: LiveBackend, *, lag_time: bool) -> tuple[LiveSnapshot, MqctlError | None]:
    """The cluster for lagReport -n: the overview (GET_CONSUME_STATS for every group and broker),
    then one round for min offsets (202 per broker and topic) and offset tables (43 per broker),
    then with ``lag_time`` the store times of the lagging queues' first unconsumed messages
    (321 + 33 per distinct position). Returns the snapshot and the error to exit with when
    brokers did not answer (their rows are missing)."""
    from dataclasses import replace

    from mqctl.model import QueueOffset
    from mqctl.pipeline.inputs import LiveSnapshot

    overviews = list(backend.groups_overview())
    mins, tables = _mins_and_tables(
        backend, [q.queue for ov in overviews if ov.stats for q in ov.stats.queues]
    )
    filled = []
    for ov in overviews:
        if ov.stats is not None:
            queues = tuple(
                replace(q, min_offset=mins.get(q.queue), committed=_committed(tables, ov.ref.name, q.queue))
                for q in ov.stats.queues
            )
            ov = replace(ov, stats=replace(ov.stats, queues=queues))
        filled.append(ov)
    oldest = None
    if lag_time:
        positions = list(
            dict.fromkeys(
                QueueOffset(q.queue, start)
                for ov in filled
                for q in (ov.stats.queues if ov.stats is not None else ())
                if (start := max(q.consumer_offset, q.min_offset or 0)) < q.broker_offset
            )
        )  # one request pair per distinct position: groups at the same offset share it
        times = backend.store_times(positions)
        oldest = {(p.queue, p.offset): t for p, t in zip(positions, times) if t > 0}
    return LiveSnapshot(filled, oldest), _failures(filled)


def _mins_and_tables(backend: LiveBackend, queues: list) -> tuple[dict, dict]:
    """Min offset per queue (GET_TOPIC_STATS_INFO per broker and topic) and each broker's offset
    table (GET_ALL_CONSUMER_OFFSET), in one pipelined round. A broker that does not answer leaves
    its queues' min offsets None and its table absent (a warning)."""
    from mqctl.remoting.bodies import decode_consumer_offsets_body, decode_topic_stats
    from mqctl.remoting.codes import RequestCode

    pairs = list(dict.fromkeys((q.broker_name, q.topic) for q in queues))
    brokers = list(dict.fromkeys(b for b, _t in pairs))
    requests = [(b, RequestCode.GET_TOPIC_STATS_INFO, {"topic": t}) for b, t in pairs]
    requests += [(b, RequestCode.GET_ALL_CONSUMER_OFFSET, {}) for b in brokers]
    mins: dict = {}
    tables: dict = {}
    for (b, code, fields), r in zip(requests, backend.ask(requests)):
        try:
            body = backend.net.ok(r, backend.net.broker_addr(b), code).body
            if code == RequestCode.GET_TOPIC_STATS_INFO:
                mins.update({mq: o.min_offset for mq, o in decode_topic_stats(body).items()})
            else:
                tables[b] = decode_consumer_offsets_body(body)
        except MqctlError as exc:
            what = (
                f"min offsets of {fields['topic']}" if fields else "offset table (noCommittedOffset is null)"
            )
            warn(f"{b}: no {what}: {exc.message}")
    return mins, tables


def _committed(tables: dict, group: str, mq: Any) -> bool | None:
    table = tables.get(mq.broker_name)
    return None if table is None else mq.queue_id in table.get(f"{mq.topic}@{group}", {})


def _failures(overviews: list) -> MqctlError | None:
    """Brokers that did not answer GET_CONSUME_STATS: the rows are written without theirs, exit 4."""
    failures = [f for ov in overviews for f in (ov.stats.failures if ov.stats is not None else ())]
    unread = sum(1 for ov in overviews if ov.failure)
    if not failures and not unread:
        return None
    return BrokersFailedError(failures, "their rows are missing", unread_groups=unread)
