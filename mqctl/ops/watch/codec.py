"""The consumerProgress sample as a JSON document: the one codec of the ``--watch`` pipe output
(``-o json``, one line per sample), the ``--history`` file and ``--why -o json`` (schemas
SAMPLE_SCHEMA and WHY_SCHEMA). Encoded and decoded here, in one place, so what a history reader
reads back is what the writer wrote: the offsets of each queue; everything computed from them
(rates, statuses) is recomputed on reading.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from mqctl.model import (
    SAMPLE_SCHEMA,
    WHY_SCHEMA,
    MessageQueue,
    QueuePoint,
    QueueWatch,
    Rates,
    Sample,
    StoredMessage,
    StuckMessage,
    WatchView,
)

Stuck = Mapping[MessageQueue, StuckMessage]


def _rate(x: float | None) -> float | None:
    return None if x is None else round(x, 3)


def _rates_doc(r: Rates) -> dict[str, Any]:
    secs = None if r.drain_s is None else round(r.drain_s, 1)
    return {
        "consumeRate": _rate(r.consume),
        "produceRate": _rate(r.produce),
        "drain": r.drain,
        "drainSeconds": secs,
    }


def _queue_doc(w: QueueWatch, stuck: StuckMessage | None) -> dict[str, Any]:
    p = w.point
    doc: dict[str, Any] = {
        "topic": p.queue.topic,
        "brokerName": p.queue.broker_name,
        "queueId": p.queue.queue_id,
        "brokerOffset": p.broker_offset,
        "consumerOffset": p.consumer_offset,
        "pullOffset": p.pull_offset,
        "minOffset": p.min_offset,
        "committed": p.committed,
        "lag": p.lag,
        "lagMs": p.lag_ms,
        "inflight": p.inflight,
        "status": w.status,
        "reason": w.reason,
        **_rates_doc(w.rates),
        "points": w.points,
        "spanMs": w.span_ms,
        "stale": w.stale,
    }
    if stuck is not None:
        doc["stuckMessage"] = {
            k: v for k, v in why_doc(stuck).items() if k not in ("schema", "group", "queue")
        }
    return doc


def sample_doc(view: WatchView, stuck: Stuck | None = None) -> dict[str, Any]:
    """One sample with what its window says (schema SAMPLE_SCHEMA; the offsets are what a
    --history reader reads back, the rest is recomputed there)."""
    s = view.sample
    return {
        "schema": SAMPLE_SCHEMA,
        "group": s.group,
        **({"client": s.client} if s.client is not None else {}),
        "topic": s.topic,
        "backend": s.backend,
        "atMs": s.at_ms,
        "complete": s.complete,
        "missingBrokers": list(s.missing_brokers),
        "window": {"samples": view.samples, "of": view.window, "spanMs": view.span_ms},
        "status": view.status,
        "totals": {"lag": view.lag, **_rates_doc(view.rates), "statusCounts": view.counts()},
        "queues": [_queue_doc(w, (stuck or {}).get(w.point.queue)) for w in view.queues],
    }


def sample_line(view: WatchView, stuck: Stuck | None = None) -> str:
    """The sample as one JSON line (no newline)."""
    return json.dumps(sample_doc(view, stuck), ensure_ascii=False, separators=(",", ":"))


def _message_doc(m: StoredMessage) -> dict[str, Any]:
    return {
        "brokerName": m.queue.broker_name,
        "queueId": m.queue.queue_id,
        "queueOffset": m.queue_offset,
        "msgId": m.msg_id,
        "uniqKey": m.unique_key,
        "keys": m.keys,
        "tags": m.tags,
        "storeTimestamp": m.store_timestamp,
        "bornTimestamp": m.born_timestamp,
        "bornHost": m.born_host,
        "storeHost": m.store_host,
        "reconsumeTimes": m.reconsume_times,
        "size": m.size,
    }


def why_doc(stuck: StuckMessage) -> dict[str, Any]:
    q, m = stuck.queue, stuck.message
    message = None if m is None else {**_message_doc(m), "ageMs": stuck.age_ms}
    return {
        "schema": WHY_SCHEMA,
        "group": stuck.group,
        "queue": {"topic": q.topic, "brokerName": q.broker_name, "queueId": q.queue_id},
        "committed": stuck.committed,
        "offset": stuck.offset,
        "nowMs": stuck.now_ms,
        "note": stuck.note,
        "message": message,
        "retry": {
            "topic": stuck.retry_topic,
            "copies": [_message_doc(c) for c in stuck.retry_copies],
            "looked": [
                {"brokerName": s.queue.broker_name, "queueId": s.queue.queue_id, "from": s.start, "to": s.end}
                for s in stuck.retry_scanned
            ],
            "entries": stuck.retry_entries,
            "note": stuck.retry_note,
        },
    }


def _int(doc: Mapping[str, Any], key: str, *, optional: bool = False) -> Any:
    v = doc.get(key)
    if v is None and optional:
        return None
    if not isinstance(v, int) or isinstance(v, bool):
        raise ValueError(f"{key!r} must be an integer")
    return v


def _str(doc: Mapping[str, Any], key: str) -> str:
    v = doc.get(key)
    if not isinstance(v, str):
        raise ValueError(f"{key!r} must be a string")
    return v


def sample_from_doc(doc: Any) -> Sample:
    """A sample back from its JSON document (schema ``SAMPLE_SCHEMA``): the offsets only, every
    computed field (rates, statuses) is recomputed. ValueError says what is wrong."""
    if not isinstance(doc, dict):
        raise ValueError("not a JSON object")
    if doc.get("schema") != SAMPLE_SCHEMA:
        raise ValueError(f"schema {doc.get('schema')!r} is not {SAMPLE_SCHEMA}")
    queues = doc.get("queues")
    missing = doc.get("missingBrokers", [])
    if not isinstance(queues, list) or not isinstance(missing, list):
        raise ValueError("'queues' and 'missingBrokers' must be lists")
    points = []
    for q in queues:
        if not isinstance(q, dict):
            raise ValueError("a queue must be an object")
        if q.get("stale"):
            continue  # a stale queue repeats an older sample's values: not a reading of this one
        points.append(
            QueuePoint(
                MessageQueue(_str(q, "topic"), _str(q, "brokerName"), _int(q, "queueId")),
                _int(q, "brokerOffset"),
                _int(q, "consumerOffset"),
                _int(q, "pullOffset", optional=True),
                bool(q.get("committed", True)),
                None if "lagMs" in q and q["lagMs"] is None else _int(q, "lagMs", optional=True) or 0,
                _int(q, "minOffset", optional=True),
            )
        )
    topic, client = doc.get("topic"), doc.get("client")
    return Sample(
        _str(doc, "group"),
        _int(doc, "atMs"),
        tuple(points),
        tuple(str(b) for b in missing),
        str(doc.get("backend", "store")),
        topic if isinstance(topic, str) else None,
        client if isinstance(client, str) else None,
    )
