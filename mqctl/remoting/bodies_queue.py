"""Bodies about single queue entries and messages: QUERY_CONSUME_QUEUE (321), VIEW_MESSAGE_BY_ID (33).

QUERY_CONSUME_QUEUE (request code 321; the request behind ``mqadmin queryCq``)
================================================================================

Read from apache/rocketmq tags ``rocketmq-all-5.3.3`` and ``rocketmq-all-4.9.7``:
``broker/.../processor/AdminBrokerProcessor.java`` (``queryConsumeQueue``),
``QueryConsumeQueueRequestHeader.java`` (5.3.3 ``remoting/.../protocol/header/``, 4.9.7
``common/.../protocol/header/``), ``QueryConsumeQueueResponseBody.java`` and
``ConsumeQueueData.java`` (``.../protocol/body/``), ``store/.../ConsumeQueue.java``
(``getIndexBuffer``, 5.3.3 ``iterateFrom``), ``store/.../queue/RocksDBConsumeQueue.java`` (5.3.3),
``tools/.../command/queue/QueryConsumeQueueCommand.java``, ``client/.../MQClientAPIImpl.java``.

Request ``extFields`` (names exactly as the broker reads them): ``topic`` (string), ``queueId``
(int), ``index`` (long: the first queue offset wanted), ``count`` (int), ``consumerGroup``
(string, optional). None is declared mandatory: a missing number stays 0. 5.3.3 inherits the
optional ``lo``, ``ns``, ``nsd``, ``bname``, ``oway`` of TopicQueueRequestHeader/RpcRequestHeader.
mqadmin sends ``count`` 10 unless ``-c`` is given.

Limits. The broker puts no cap on ``count``; it stops at ``count`` entries, at the end of the
written part of the consume-queue *file* holding ``index`` (a file holds 300 000 entries by
default, ``mappedFileSizeConsumeQueue``), and at the queue's max offset, whichever comes first, so
a reader paging through a queue must continue from ``index + len(entries)``. ``count <= 0``
gives an empty ``queueData``. 4.9.7 compares bytes against ``count * 20`` in 32-bit arithmetic,
so a ``count`` above 107 374 182 wraps (usually to no entries). Keep ``count`` well below
~200 000: each entry is ~70 bytes of JSON and a frame over 16 MiB is refused.

Answers:

* unknown topic/queue (no consume queue loaded for it): code 1 (SYSTEM_ERROR), remark
  ``<queueId>@<topic> is not exist!``;
* ``index`` below the queue's min offset, or at or past the written end of its file (for the
  last file: ``index >= max offset``): code **0 with no body**, remark
  ``Index <index> of <queueId>@<topic> is not exist!`` (mqadmin then dies of a
  NullPointerException on the missing body).
  5.3.3 with the RocksDB consume queue answers that only for ``index >= max``; an index below
  the min there ends in a NullPointerException, i.e. code 1 with the exception as remark;
* otherwise code 0 and a ``QueryConsumeQueueResponseBody``:
  ``{"filterData"?, "maxQueueIndex", "minQueueIndex", "queueData":[ConsumeQueueData...],
  "subscriptionData"?}``. ``maxQueueIndex``/``minQueueIndex`` are the queue's max (next offset
  to be written) and min offsets. ``subscriptionData``/``filterData`` appear only when
  ``consumerGroup`` was sent (``filterData`` = ``<group>@<topic> is not online!`` when the
  group has no live subscription to the topic). ConsumeQueueData: ``physicOffset`` (long),
  ``physicSize`` (int), ``tagsCode`` (long), ``eval`` (bool, always written), and only for
  entries pointing into a ``ConsumeQueueExt`` file: ``extendDataJson``, ``bitMap``, ``msg``
  (``Cq extend not exist!addr: ...``). 5.3.3 replaces an ext address in ``tagsCode`` by the
  ext unit's real tags hash; 4.9.7 leaves the address there.
* the generic answers of remoting.md 4 (2, 3, 16, 1 for an unparsable header).

The entries carry no queue offset: entry ``i`` is the unit at ``index + i`` (that is also how
mqadmin numbers them). This holds for the file and RocksDB consume queues; a
``BatchConsumeQueue`` (5.x batch topics) steps by each unit's batch size instead, which the
body does not show.
"""

from __future__ import annotations

import re

from mqctl.errors import ProtocolError, StoreError
from mqctl.model import StoredMessage
from mqctl.records import record
from mqctl.remoting.bodies_json import INT32, as_list, bean, check_depth, get_int, parse_object

__all__ = [
    "CqAnswer",
    "CqEntry",
    "CqScan",
    "decode_query_consume_queue",
    "decode_stored_message",
    "scan_query_consume_queue",
]


@record(frozen=True, slots=True)
class CqEntry:
    """One consume-queue unit: its queue offset, and where its message sits in the commit log."""

    offset: int
    phys_offset: int
    size: int
    tags_code: int


@record(frozen=True, slots=True)
class CqAnswer:
    """A QUERY_CONSUME_QUEUE answer: the entries from the asked index, and the queue's bounds."""

    entries: tuple[CqEntry, ...]
    min_offset: int
    max_offset: int


def decode_query_consume_queue(body: bytes, start_index: int) -> CqAnswer:
    """QueryConsumeQueueResponseBody; entry ``i`` gets queue offset ``start_index + i``.

    An empty body is a ``ProtocolError``: the broker sends none when ``index`` is out of range
    (code 0, remark ``Index ... is not exist!``), which the caller must check first.
    """
    what = "consume queue answer"
    doc = _fast_object(body) or parse_object(body, what)
    entries = []
    for i, raw in enumerate(as_list(doc.get("queueData"), f"{what}: queueData")):
        w = f"{what}: queueData[{i}]"
        unit = bean(raw, w)
        entries.append(
            CqEntry(
                offset=start_index + i,
                phys_offset=get_int(unit, "physicOffset", w),
                size=get_int(unit, "physicSize", w, 0, INT32),
                tags_code=get_int(unit, "tagsCode", w),
            )
        )
    return CqAnswer(
        entries=tuple(entries),
        min_offset=get_int(doc, "minQueueIndex", what),
        max_offset=get_int(doc, "maxQueueIndex", what),
    )


def _fast_object(body: bytes) -> dict | None:
    """The answer is standard JSON (no map keys that are not strings): the stdlib's C parser reads
    a 10,000-entry page several times faster than the lenient one, which remains the fallback
    (and keeps the depth guard for anything it accepts)."""
    from mqctl import cjson

    try:
        text = bytes(body).decode("utf-8")
        check_depth(text, "consume queue answer")
        doc = cjson.loads(text, explain=False)
    except (ValueError, RecursionError):
        return None
    return doc if isinstance(doc, dict) else None


@record(frozen=True, slots=True)
class CqScan:
    """A QUERY_CONSUME_QUEUE page reduced to what tag counting needs: how many units it held,
    how many matched, the matches' commit-log offsets (when asked) and the queue's bounds."""

    entries: int
    matched: int
    matched_phys: tuple[int, ...]
    min_offset: int
    max_offset: int


# fastjson writes ConsumeQueueData's properties sorted and compact, so each unit carries these
# three adjacent; the count of "physicSize" keys confirms no unit was missed, else full decode.
_UNIT = re.compile(rb'"physicOffset":(-?\d{1,19}),"physicSize":(-?\d{1,10}),"tagsCode":(-?\d{1,19})')
_BOUND = re.compile(rb'"(max|min)QueueIndex":(-?\d{1,19})')
_TAGS_CODE = re.compile(rb'"tagsCode":(-?\d{1,19})\}')


def scan_query_consume_queue(body: bytes, tag_hashes: frozenset[int], want_phys: bool = False) -> CqScan:
    """Count the units of a page whose tagsCode is one of ``tag_hashes``, without building an
    object per unit (a live exact-filtered-lag scan reads millions of them)."""
    bounds = dict(_BOUND.findall(body))
    if not want_phys and set(bounds) == {b"max", b"min"}:
        # Counting only: the tags codes alone, each closing its unit (tagsCode sorts last).
        codes = _TAGS_CODE.findall(body)
        if len(codes) == body.count(b'"tagsCode"') == body.count(b'"physicSize"'):
            wanted_codes = {str(h).encode() for h in tag_hashes}
            matched = sum(1 for c in codes if c in wanted_codes)
            return CqScan(len(codes), matched, (), int(bounds[b"min"]), int(bounds[b"max"]))
    units = _UNIT.findall(body)
    if len(units) != body.count(b'"physicSize"') or set(bounds) != {b"max", b"min"}:
        answer = decode_query_consume_queue(body, 0)
        hits = [e.phys_offset for e in answer.entries if e.tags_code in tag_hashes]
        return CqScan(
            len(answer.entries),
            len(hits),
            tuple(hits) if want_phys else (),
            answer.min_offset,
            answer.max_offset,
        )
    wanted = {str(h).encode() for h in tag_hashes}
    hits = [phys for phys, _size, tags in units if tags in wanted]
    return CqScan(
        len(units),
        len(hits),
        tuple(int(p) for p in hits) if want_phys else (),
        int(bounds[b"min"]),
        int(bounds[b"max"]),
    )


# ---------------------------------------------------------------------------------------------
# VIEW_MESSAGE_BY_ID (33)


def decode_stored_message(body: bytes, broker_name: str) -> StoredMessage:
    """One commit-log record (the VIEW_MESSAGE_BY_ID body) -> StoredMessage (store/commitlog reads
    the same record from a store's files). The body CRC is not checked, as the Java client does
    not either; bytes after the record's TOTALSIZE are ignored likewise."""
    from mqctl.store.commitlog import stored_message

    if not isinstance(body, (bytes, bytearray, memoryview)):
        raise ProtocolError(f"stored message: expected bytes, got {type(body).__name__}")
    try:
        return stored_message(bytes(body), 0, broker_name)
    except StoreError as exc:
        raise ProtocolError(f"stored message: {exc.message}") from None
