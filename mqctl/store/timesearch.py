"""Queue offset for a timestamp, as the 5.x broker's getOffsetInQueueByTime answers it (spec 5.1).

The broker's algorithm (ConsumeQueue.binarySearchInQueueByTime after
MappedFileQueue.getConsumeQueueMappedFileByTime, clamped by ConsumeQueueStore) is reproduced
step by step, quirks included, because resetOffsetByTime must land on the offsets the broker
itself would pick. Positions are byte offsets inside one CQ file, as in the broker.
"""

from __future__ import annotations

from mqctl.errors import UsageError
from mqctl.store.commitlog import CommitLog
from mqctl.store.consumequeue import CQ_UNIT, ConsumeQueue

__all__ = ["offset_by_time"]

LOWER = "lower"
UPPER = "upper"


def _jdiv(a: int, b: int) -> int:
    """Java long division (truncates toward zero); matters for the broker's -1 sentinel offsets."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


class _File:
    """One CQ file as the broker's MappedFile sees it: start offset, size, readable bytes."""

    def __init__(self, cq: ConsumeQueue, commitlog: CommitLog, k: int) -> None:
        seg = cq.segments[k]
        self.cq = cq
        self.commitlog = commitlog
        self.start = seg.start
        self.size = seg.size
        last = k == len(cq.segments) - 1
        # A loaded broker marks every file but the last as fully written.
        self.read_pos = cq.valid_in_last * CQ_UNIT if last else seg.size
        self.first_index = seg.start // CQ_UNIT

    def slot(self, pos: int) -> tuple[int, int]:
        phys, size, _ = self.cq.raw_entry(self.first_index + pos // CQ_UNIT)
        return phys, size

    def time_at(self, pos: int) -> int:
        """Store time of the entry at byte ``pos`` (-1 when unreadable), via pickupStoreTimestamp."""
        if not 0 <= pos <= self.size - CQ_UNIT:
            # The broker would throw here (a floor beyond the file); "unreadable" is the closest.
            return -1
        phys, size = self.slot(pos)
        return self.commitlog.store_timestamp(phys, size)

    def edge_time(self, pos: int) -> int:
        """Start/stop time for file choice: needs ``pos + 20 <= read position``; kept only if > 0."""
        if pos + CQ_UNIT > self.read_pos:
            return -1
        t = self.time_at(pos)
        return t if t > 0 else -1


def _choose_file(cq: ConsumeQueue, commitlog: CommitLog, ts: int, boundary: str) -> _File | None:
    n = len(cq.segments)
    if n == 0:
        return None
    if boundary == LOWER:
        for k in range(n - 1):
            f = _File(cq, commitlog, k)
            if f.edge_time(f.size - CQ_UNIT) >= ts:
                return f
        return _File(cq, commitlog, n - 1)
    for k in range(n - 1, -1, -1):
        f = _File(cq, commitlog, k)
        if f.edge_time(0) <= ts:
            return f
    return None


def _search_file(f: _File, ts: int, boundary: str, min_logic: int, cl_min: int) -> int:
    low = min_logic - f.start if min_logic > f.start else 0
    # A file with nothing written (read position 0) is asked for its whole size, which the
    # broker's selectMappedBuffer refuses: the search then yields 0.
    rng = f.read_pos if 0 < f.read_pos < f.size else f.size
    if rng > f.read_pos:
        return 0
    ceiling = rng - CQ_UNIT
    floor = low
    high = ceiling

    t = f.time_at(ceiling)
    if t < ts:
        return _jdiv(f.start + ceiling + (CQ_UNIT if boundary == LOWER else 0), CQ_UNIT)
    t = f.time_at(floor)
    if t > ts:
        return _jdiv(f.start, CQ_UNIT) if boundary == LOWER else 0

    target = left = right = -1
    while high >= low:
        mid = (low + high) // (2 * CQ_UNIT) * CQ_UNIT
        phys, _ = f.slot(mid)
        if phys < cl_min:
            low = mid + CQ_UNIT
            left = mid
            continue
        t = f.time_at(mid)
        if t < 0:
            return 0
        if t == ts:
            target = mid
            break
        if t > ts:
            high = mid - CQ_UNIT
            right = mid
        else:
            low = mid + CQ_UNIT
            left = mid

    if target != -1:
        # One hit found; neighbours may share the store time. Walk to the edge of the run,
        # never past floor (LOWER) or ceiling (UPPER), one commit-log read per step like the broker.
        offset = target
        step = -CQ_UNIT if boundary == LOWER else CQ_UNIT
        while True:
            attempt = offset + step
            if attempt < floor or attempt > ceiling or f.time_at(attempt) != ts:
                break
            offset = attempt
    else:
        offset = right if boundary == LOWER else left
    return _jdiv(f.start + offset, CQ_UNIT)


def offset_by_time(cq: ConsumeQueue, commitlog: CommitLog, ts: int, boundary: str = LOWER) -> int:
    """The queue offset the broker returns for store time ``ts`` ("lower" or "upper" boundary).

    LOWER: the first entry stored at or after ``ts``; UPPER: the last one stored at or before
    it; both clamped into [min_offset, max_offset], so a future time gives max and a time before
    the oldest message gives min. An empty queue gives 0.
    """
    boundary = boundary.lower()
    if boundary not in (LOWER, UPPER):
        raise UsageError(f"boundary must be 'lower' or 'upper', not {boundary!r}")
    lo, hi = cq.min_offset, cq.max_offset
    f = _choose_file(cq, commitlog, ts, boundary)
    raw = 0 if f is None else _search_file(f, ts, boundary, lo * CQ_UNIT, commitlog.min_offset)
    return min(max(raw, lo), hi)
