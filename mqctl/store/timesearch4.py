"""Queue offset for a timestamp, as a RocketMQ 4.9.7 broker answers it (docs/rocketmq-versions.md 4.1).

A 4.9.7 broker (SEARCH_OFFSET_BY_TIMESTAMP, and resetOffsetByTime through Broker2Client) does not
use 5.x's search (:mod:`mqctl.store.timesearch`). It picks ONE consume-queue file by the file's
modification time, then binary-searches that file for the entry nearest in store time:

* file: the first file whose mtime (ms) >= ts, else the last file; store times play no part;
* search: from the queue's min logic offset (if it lies in that file) to the last readable entry;
  entries pointing below the commit-log min are stepped over; an exact time stops the search at
  whichever equal entry it probes first; otherwise the nearer of the two neighbours wins, ties
  going to the earlier one;
* no clamp into [min, max]: a time after the last message gives max - 1, and a search that saw
  no live entry yields the byte sentinel -1, i.e. ``(file start - 1) / 20`` in Java arithmetic.

The broker is modelled as just loaded from these files: every file but the last is readable to
its end, the last up to its first invalid entry, and minLogicOffset is what the load computes
(:func:`min_logic_offset_4x`). Store times come from :meth:`CommitLog.store_timestamp`, which,
unlike the broker, also calls "unreadable" an entry that points at bytes that are not a record
(the broker reads them as if they were one) or has size <= 0 (the broker throws); both only
happen in a damaged store.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from mqctl.store.commitlog import CommitLog
from mqctl.store.consumequeue import CQ_UNIT, ConsumeQueue

__all__ = ["file_times", "min_logic_offset_4x", "offset_by_time_4x"]


def _java_div(a: int, b: int) -> int:
    """Java long division, truncating toward zero: (-1) / 20 == 0, unlike Python's -1 // 20."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def file_times(cq: ConsumeQueue, *, whole_seconds: bool = False) -> list[int]:
    """Each CQ file's ``File.lastModified()`` in ms, in file order.

    Java 10+ reads the mtime to the millisecond (``st_mtime_ns // 1_000_000``); JDK 8 on Linux
    truncates it to whole seconds (``whole_seconds=True``). A file that cannot be stat'ed reads
    as 0, as in Java.
    """
    times: list[int] = []
    for seg in cq.segments:
        try:
            ms = os.stat(seg.path).st_mtime_ns // 1_000_000
        except OSError:
            ms = 0
        times.append(ms - ms % 1000 if whole_seconds else ms)
    return times


def _readable(cq: ConsumeQueue, k: int) -> int:
    """Bytes of file ``k`` the loaded broker reads: all of a non-last file, the written part of the last."""
    segs = cq.segments
    return cq.valid_in_last * CQ_UNIT if k == len(segs) - 1 else segs[k].size


def _commitlog_min(commitlog: CommitLog) -> int:
    """CommitLog.getMinOffset: the first segment's start, -1 when there is no segment."""
    return commitlog.min_offset if commitlog.segments else -1


def min_logic_offset_4x(cq: ConsumeQueue, commitlog_min: int) -> int:
    """minLogicOffset (bytes) of a 4.9.7 broker just loaded from these files (correctMinOffset).

    The first entry of the FIRST file whose physical offset >= ``commitlog_min``; filler entries
    (physical offset 0) count when the commit log starts at 0. No such entry in that file, or a
    first file with nothing readable: the value is left as it was, 0 after a start. (mqctl's
    ``ConsumeQueue.min_offset`` looks through every file and skips fillers; 4.9.7 does not.)
    Queue min offset = this / 20.
    """
    if not cq.segments:
        return 0
    n = _readable(cq, 0) // CQ_UNIT
    if n == 0:
        return 0
    live = cq.segment_array(0)["phys"][:n] >= commitlog_min
    if not live.any():
        return 0
    return cq.segments[0].start + int(live.argmax()) * CQ_UNIT


def _choose_file(times: Sequence[int], ts: int) -> int:
    """MappedFileQueue.getMappedFileByTime: first file with mtime >= ts, else the last one."""
    for k, mtime in enumerate(times):
        if mtime >= ts:
            return k
    return len(times) - 1


def _search_file(cq: ConsumeQueue, commitlog: CommitLog, k: int, ts: int, min_logic: int) -> int:
    """ConsumeQueue.getOffsetInQueueByTime's search inside file ``k``; returns a queue offset."""
    start = cq.segments[k].start
    readable = _readable(cq, k)
    if readable == 0:
        return 0  # selectMappedBuffer(0) gives nothing for a file with nothing readable
    cl_min = _commitlog_min(commitlog)
    first = start // CQ_UNIT
    low = min_logic - start if min_logic > start else 0
    high = readable - CQ_UNIT
    left = right = -1
    left_t = right_t = -1
    while high >= low:
        mid = (low + high) // (2 * CQ_UNIT) * CQ_UNIT
        phys, size, _ = cq.raw_entry(first + mid // CQ_UNIT)
        if phys < cl_min:
            low, left = mid + CQ_UNIT, mid
            continue
        t = commitlog.store_timestamp(phys, size)
        if t < 0:
            return 0
        if t == ts:
            return _java_div(start + mid, CQ_UNIT)
        if t > ts:
            high, right, right_t = mid - CQ_UNIT, mid, t
        else:
            low, left, left_t = mid + CQ_UNIT, mid, t
    if left_t == -1:
        byte = right
    elif right_t == -1:
        byte = left
    else:
        byte = right if abs(ts - left_t) > abs(ts - right_t) else left
    return _java_div(start + byte, CQ_UNIT)


def offset_by_time_4x(
    cq: ConsumeQueue, commitlog: CommitLog, ts: int, *, mtimes: Sequence[int] | None = None
) -> int:
    """The queue offset a 4.9.7 broker returns for store time ``ts`` (ms) on this queue.

    ``mtimes``: the files' lastModified values in ms, one per ``cq.segments`` entry; default
    :func:`file_times` (Java 10+ precision). No consume-queue file gives 0; an unreadable store
    time on the search path gives 0; otherwise the result is NOT clamped to [min, max] (see the
    module docstring for the sentinel below a file's first entry).
    """
    if not cq.segments:
        return 0
    times = file_times(cq) if mtimes is None else list(mtimes)
    if len(times) != len(cq.segments):
        raise ValueError(f"{len(times)} mtimes for {len(cq.segments)} consume-queue files")
    k = _choose_file(times, ts)
    min_logic = min_logic_offset_4x(cq, _commitlog_min(commitlog))
    return _search_file(cq, commitlog, k, ts, min_logic)
