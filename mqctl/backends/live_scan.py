"""Per-message facts over the wire: store times at queue offsets, and exact tag-match counts.

Both read ConsumeQueue units with QUERY_CONSUME_QUEUE (321, the request behind ``mqadmin
queryCq``) and, where the message itself is needed, VIEW_MESSAGE_BY_ID (33) at the unit's
commit-log offset. Counting pages through a span in pages of ``PAGE`` units, many pages in
flight at once; the broker stops a page at the end of a consume-queue file, so a short page is
continued from where it stopped. A unit carries no queue offset: unit ``i`` of a page that
started at ``index`` is offset ``index + i`` (remoting/bodies_queue.py has the facts).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from mqctl.errors import MqctlError
from mqctl.model import QueueOffset, QueueSpan, StoredMessage, SubExpr, TagCount
from mqctl.records import record
from mqctl.remoting.codes import RequestCode, ResponseCode

PAGE = 8_000  # units per request: ~600 KB of JSON, well under the 16 MiB frame cap
ROUND = 48  # requests per round trip of a scan (spread over the brokers' connections)

Ask = Callable[[Sequence[tuple[str, int, Mapping[str, object]]]], list]  # (broker, code, fields) -> results


def _cq_fields(topic: str, queue_id: int, index: int, count: int) -> dict[str, object]:
    return {"topic": topic, "queueId": queue_id, "index": index, "count": count}


def _rounds(items: list, size: int = ROUND) -> list[list]:
    return [items[i : i + size] for i in range(0, len(items), size)]


def store_times(positions: Sequence[QueueOffset], ask: Ask) -> list[int]:
    """Store time of the message at each position (-1 where there is none): the unit (321), then
    the message at its commit-log offset (33); two pipelined rounds whatever the count."""
    from mqctl.remoting.bodies_queue import decode_query_consume_queue, decode_stored_message

    units = ask(
        [
            (
                p.queue.broker_name,
                RequestCode.QUERY_CONSUME_QUEUE,
                _cq_fields(p.queue.topic, p.queue.queue_id, p.offset, 1),
            )
            for p in positions
        ]
    )
    phys: list[int | None] = []
    for p, r in zip(positions, units):
        answer = (
            decode_query_consume_queue(r.body, 0)
            if _has_body(r, p.queue.broker_name, RequestCode.QUERY_CONSUME_QUEUE)
            else None
        )
        phys.append(answer.entries[0].phys_offset if answer and answer.entries else None)
    wanted = [(i, p) for i, (p, off) in enumerate(zip(positions, phys)) if off is not None]
    messages = ask(
        [
            (p.queue.broker_name, RequestCode.VIEW_MESSAGE_BY_ID, {"topic": p.queue.topic, "offset": phys[i]})
            for i, p in wanted
        ]
    )
    out = [-1] * len(positions)
    for (i, p), r in zip(wanted, messages):
        if _has_body(r, p.queue.broker_name, RequestCode.VIEW_MESSAGE_BY_ID):
            out[i] = decode_stored_message(r.body, p.queue.broker_name).store_timestamp
    return out


def message_at(position: QueueOffset, ask: Ask) -> StoredMessage | None:
    """The unit at the position (321), then its message (33); None when either is gone."""
    from mqctl.remoting.bodies_queue import decode_query_consume_queue, decode_stored_message

    q = position.queue
    (unit,) = ask(
        [
            (
                q.broker_name,
                RequestCode.QUERY_CONSUME_QUEUE,
                _cq_fields(q.topic, q.queue_id, position.offset, 1),
            )
        ]
    )
    if not _has_body(unit, q.broker_name, RequestCode.QUERY_CONSUME_QUEUE):
        return None
    entries = decode_query_consume_queue(unit.body, position.offset).entries
    if not entries:
        return None
    (msg,) = ask(
        [
            (
                q.broker_name,
                RequestCode.VIEW_MESSAGE_BY_ID,
                {"topic": q.topic, "offset": entries[0].phys_offset},
            )
        ]
    )
    if not _has_body(msg, q.broker_name, RequestCode.VIEW_MESSAGE_BY_ID):
        return None
    return decode_stored_message(msg.body, q.broker_name)


def _has_body(r: object, broker: str, request: int) -> bool:
    """Whether an answer carries its body. "Nothing there" is an answer too: QUERY_CONSUME_QUEUE
    out of range is code 0 without a body, VIEW_MESSAGE_BY_ID of an expired message is code 1
    ``can not find message``. Any other error code is an error: counting it as zero matches would
    let a gate pass on data that was never read."""
    from mqctl.errors import BrokerResponseError
    from mqctl.remoting.codes import request_name, response_name

    if isinstance(r, MqctlError):
        raise r
    code, remark = getattr(r, "code", 1), getattr(r, "remark", None) or ""
    if code == ResponseCode.SUCCESS:
        return bool(getattr(r, "body", b""))
    if code == ResponseCode.SYSTEM_ERROR and "can not find message" in remark:
        return False
    raise BrokerResponseError(code, remark, broker, request_name(request), code_name=response_name(code))


@record
class _Chunk:
    span: int  # index into the spans
    start: int
    end: int


def count_tag_matches(
    spans: Sequence[QueueSpan],
    expr: SubExpr,
    ask: Ask,
    *,
    verify: bool,
    on_progress: Callable[[int, int], None] | None = None,
) -> list[TagCount]:
    """Exact counts over every unit of each span (no sampling); with ``verify``, each hash match
    confirmed against the message's real TAGS (collisions counted)."""
    from mqctl.remoting.bodies_queue import scan_query_consume_queue

    matched = [0] * len(spans)
    hits: list[list[int]] = [[] for _ in spans]
    pending = [
        _Chunk(i, lo, min(lo + PAGE, s.end))
        for i, s in enumerate(spans)
        if not expr.match_all
        for lo in range(s.start, s.end, PAGE)
    ]
    total, done, hashes = sum(max(s.end - s.start, 0) for s in spans), 0, expr.hashes
    while pending:
        batch, pending = pending[:ROUND], pending[ROUND:]
        results = ask([_page_request(spans[c.span], c) for c in batch])
        for c, r in zip(batch, results):
            if not _has_body(r, spans[c.span].queue.broker_name, RequestCode.QUERY_CONSUME_QUEUE):
                done += c.end - c.start  # nothing there any more (expired since the stats)
                continue
            page = scan_query_consume_queue(r.body, hashes, want_phys=verify)
            matched[c.span] += page.matched
            hits[c.span] += page.matched_phys
            done += page.entries
            if 0 < page.entries < c.end - c.start:
                pending.append(_Chunk(c.span, c.start + page.entries, c.end))  # a file ended mid-page
        if on_progress is not None:
            on_progress(min(done, total), total)
    if expr.match_all:
        return [TagCount(max(s.end - s.start, 0), 0 if verify else None) for s in spans]
    if not verify:
        return [TagCount(m) for m in matched]
    return _verified(spans, hits, expr, ask)


def _page_request(span: QueueSpan, c: _Chunk) -> tuple[str, int, Mapping[str, object]]:
    q = span.queue
    return (
        q.broker_name,
        RequestCode.QUERY_CONSUME_QUEUE,
        _cq_fields(q.topic, q.queue_id, c.start, c.end - c.start),
    )


def _verified(spans: Sequence[QueueSpan], hits: list[list[int]], expr: SubExpr, ask: Ask) -> list[TagCount]:
    from mqctl.remoting.bodies_queue import decode_stored_message

    out = []
    for span, offsets in zip(spans, hits):
        broker, topic = span.queue.broker_name, span.queue.topic
        real = 0
        for group in _rounds(offsets, 256):
            answers = ask(
                [(broker, RequestCode.VIEW_MESSAGE_BY_ID, {"topic": topic, "offset": o}) for o in group]
            )
            real += sum(
                1
                for r in answers
                if _has_body(r, broker, RequestCode.VIEW_MESSAGE_BY_ID)
                and expr.matches(decode_stored_message(r.body, broker).tags)
            )
        out.append(TagCount(real, len(offsets) - real))
    return out
