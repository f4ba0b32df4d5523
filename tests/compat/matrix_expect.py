"""What each version's broker answers for "offset of queue Q at time T", computed independently.

The scenarios know every message's store time (a consumer saw them) and can read the consume
queue files' mtimes from the broker's store; from that they predict what the real broker sets
for ``resetOffsetByTime`` / SEARCH_OFFSET_BY_TIMESTAMP, per version:

- 5.x (spec rocketmq-store.md §5.1, server-side reset spec mqadmin.md §4.4): the first offset
  whose store time >= T; the max offset when every message is older.
- 4.9.7 (docs/rocketmq-versions.md §4.1, ``ConsumeQueue.getOffsetInQueueByTime``): choose the
  first CQ file whose mtime >= T (else the last), binary-search it; an exact hit wins, else the
  nearer neighbour by time (ties: the earlier); after the last message that is max - 1.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from matrix_servers import CQ_FILE_SIZE
from versions import RmqVersion

CQ_UNIT = 20  # bytes per consume-queue entry


def target_5x(stamps: list[int], ts: int) -> int:
    """First offset whose store time >= ts; max offset when all are older."""
    for offset, t in enumerate(stamps):
        if t >= ts:
            return offset
    return len(stamps)


@dataclass(frozen=True)
class CqFile:
    start: int  # first queue offset of the file
    mtime_ms: int  # File.lastModified() as Java 10+ reads it (ms precision)


def cq_files(queue_dir: Path) -> list[CqFile]:
    """The consume-queue files of one queue (names are byte offsets), sorted."""
    files = sorted(p for p in queue_dir.iterdir() if p.is_file() and p.name.isdigit())
    return [CqFile(int(p.name) // CQ_UNIT, p.stat().st_mtime_ns // 1_000_000) for p in files]


def _java_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def target_4x(
    stamps: list[int], ts: int, files: list[CqFile], per_file: int = CQ_FILE_SIZE // CQ_UNIT
) -> int:
    """4.9.7 ``ConsumeQueue.getOffsetInQueueByTime`` over store times ``stamps`` (offset order),
    no expired data (minLogicOffset 0, every commit-log record present)."""
    if not files:
        return 0
    chosen = next((f for f in files if f.mtime_ms >= ts), files[-1])
    readable = max(0, min(len(stamps) - chosen.start, per_file))
    if readable == 0:  # selectMappedBuffer(0) is null for a file with nothing written
        return 0
    low, high = 0, (readable - 1) * CQ_UNIT
    left = right = -1
    left_t = right_t = -1
    while high >= low:
        mid = (low + high) // (2 * CQ_UNIT) * CQ_UNIT
        t = stamps[chosen.start + mid // CQ_UNIT]
        if t == ts:
            return chosen.start + mid // CQ_UNIT
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
    return _java_div(chosen.start * CQ_UNIT + byte, CQ_UNIT)


def expected_target(version: RmqVersion, stamps: list[int], ts: int, queue_dir: Path) -> int:
    """What ``version``'s broker answers for this queue at ``ts`` (``queue_dir``: its CQ files)."""
    if version.legacy:
        return target_4x(stamps, ts, cq_files(queue_dir))
    return target_5x(stamps, ts)
