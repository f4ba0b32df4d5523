"""File-based ConsumeQueue: 20-byte entries (phys, size, tagsCode) in preallocated segments.

Spec: rocketmq-store.md 1.2 (segment naming), 3.1-3.4 (entries, fillers, min/max offset).
Everything here is read-only; files are memory-mapped lazily and viewed through numpy without
copying, so a queue of millions of entries costs no Python objects per entry.
"""

from __future__ import annotations

import mmap
import os
from collections.abc import Iterator
from pathlib import Path
from types import TracebackType

import numpy as np

from mqctl.errors import StoreCorruptError, StoreError
from mqctl.store.segments import Segment, close_maps, find_segments

__all__ = [
    "CQ_DTYPE",
    "CQ_UNIT",
    "FILLER_SIZE",
    "ConsumeQueue",
    "QueueOffsetError",
    "Segment",
    "find_segments",
    "list_segments",
]

CQ_UNIT = 20
CQ_DTYPE = np.dtype([("phys", ">i8"), ("size", ">i4"), ("tags", ">i8")])
assert CQ_DTYPE.itemsize == CQ_UNIT

# A brand-new queue whose first offset is not 0 is padded with (0, 0x7FFFFFFF, 0) entries (spec 3.3).
FILLER_SIZE = 0x7FFFFFFF

# Entries examined per numpy pass when looking for the end of the last file: the valid prefix has
# to be read anyway, but the zero tail after it (often most of a sparse file) is never touched.
_SCAN_CHUNK = 1 << 16


class QueueOffsetError(StoreError):
    """A queue offset outside the entries the consume queue holds."""


# Why an empty consume-queue file is damage: the broker creates a file only to write an entry into
# it and maps it to its full size at once (DefaultMappedFile.init), so an empty one lost entries.
_EMPTY_CQ = (
    "the broker maps a consume-queue file to its full size when it creates it for an entry, so "
    "entries the commit log holds are missing here and the queue's max offset and lag cannot be read"
)


def list_segments(queue_dir: Path) -> list[Segment]:
    """The consume-queue segment files of one queue directory (see :func:`find_segments`).

    Damage, refused with ``StoreCorruptError`` (the broker would read the queue shorter than its
    commit log, or not at all): a file of another length (MappedFileQueue.doLoad refuses to
    start), a gap in the names (MappedFileQueue.checkSelf: "data is damaged"), an empty file
    (see ``_EMPTY_CQ``), and a file before the last whose last slot is not a valid entry
    (ConsumeQueue.recover stops at the first invalid entry of the last three files and truncates
    everything after it: a hole there shortens the queue; further back it is lost entries).
    """
    segs = find_segments([Path(queue_dir)], CQ_UNIT, empty_last=_EMPTY_CQ)
    for seg in segs[:-1]:
        phys, size = _last_slot(seg)
        if phys < 0 or size <= 0:
            nxt = seg.end // CQ_UNIT
            raise StoreCorruptError(
                f"consume-queue file {seg.path} ends before its successor begins: its last slot "
                f"(queue offset {nxt - 1}) holds no entry (physical offset {phys}, size {size}) "
                "although a later file exists; the broker would cut the queue there on restart "
                "(ConsumeQueue.recover)",
                hint="the queue's max offset and lag cannot be read from this store",
            )
    return segs


def _last_slot(seg: Segment) -> tuple[int, int]:
    """(physical offset, size) of a file's last 20-byte slot, read with one pread."""
    try:
        fd = os.open(seg.path, os.O_RDONLY)
        try:
            raw = os.pread(fd, CQ_UNIT, seg.size - CQ_UNIT)
        finally:
            os.close(fd)
    except OSError as e:
        raise StoreError(f"cannot read consume-queue file {seg.path}: {e.strerror}") from e
    if len(raw) != CQ_UNIT:
        raise StoreCorruptError(f"consume-queue file {seg.path} changed size while read")
    entry = np.frombuffer(raw, dtype=CQ_DTYPE)[0]
    return int(entry["phys"]), int(entry["size"])


def _map_file(seg: Segment) -> mmap.mmap:
    try:
        with open(seg.path, "rb") as f:
            length = os.fstat(f.fileno()).st_size
            if length != seg.size:
                raise StoreCorruptError(f"segment {seg.path} changed size from {seg.size} to {length}")
            return mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    except OSError as e:
        raise StoreCorruptError(f"cannot map segment {seg.path}: {e.strerror}") from e


def valid_count(phys: np.ndarray, size: np.ndarray) -> int:
    """Entries of one file before the first invalid one (phys < 0 or size <= 0): the broker's
    rule for where a queue's written part ends. Only a last file has a zero tail, so a full file
    is recognised by its last slot alone."""
    n = len(phys)
    if n == 0 or (phys[n - 1] >= 0 and size[n - 1] > 0):
        return n
    bad = (phys < 0) | (size <= 0)
    return int(np.argmax(bad)) if bad.any() else n


def is_live(phys: int, size: int, commitlog_min: int) -> bool:
    """An entry whose message still exists: not filler, and at or above the commit-log min."""
    if size <= 0 or (phys == 0 and size == FILLER_SIZE):
        return False
    return phys >= commitlog_min


def first_live(phys: np.ndarray, size: np.ndarray, valid: int, commitlog_min: int) -> int:
    """First entry in [0, valid) of one file that ``is_live`` (valid if none). Physical offsets
    grow along a queue and fillers only pad its start, so a search finds it."""
    i = int(np.searchsorted(phys[:valid], commitlog_min, side="left"))
    while i < valid and not is_live(int(phys[i]), int(size[i]), commitlog_min):
        i += 1
    return i


class ConsumeQueue:
    """Read-only view of one queue's consume-queue files.

    ``commitlog_min`` is the start offset of the first commit-log segment: entries pointing below
    it refer to deleted messages and lie before the queue's min offset (spec 3.4).
    """

    def __init__(self, queue_dir: Path, commitlog_min: int = 0) -> None:
        self.queue_dir = Path(queue_dir)
        self.commitlog_min = commitlog_min
        self._segments: list[Segment] | None = None
        self._maps: dict[int, mmap.mmap] = {}
        self._arrays: dict[int, np.ndarray] = {}
        self._valid_in_last: int | None = None
        self._min: int | None = None

    # -- lifecycle ---------------------------------------------------------------------------
    def __enter__(self) -> ConsumeQueue:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        self._arrays.clear()
        close_maps(self._maps)

    # -- segments ----------------------------------------------------------------------------
    @property
    def segments(self) -> list[Segment]:
        if self._segments is None:
            self._segments = list_segments(self.queue_dir)
        return self._segments

    @property
    def entries_per_file(self) -> int:
        segs = self.segments
        return segs[0].size // CQ_UNIT if segs else 0

    @property
    def first_index(self) -> int:
        """Queue offset of the first entry still on disk (the first file's name / 20)."""
        segs = self.segments
        return segs[0].start // CQ_UNIT if segs else 0

    def segment_array(self, k: int) -> np.ndarray:
        """All slots of segment ``k`` (including any zero tail) as a zero-copy CQ_DTYPE array."""
        arr = self._arrays.get(k)
        if arr is None:
            mm = _map_file(self.segments[k])
            self._maps[k] = mm
            arr = np.frombuffer(mm, dtype=CQ_DTYPE)
            self._arrays[k] = arr
        return arr

    @property
    def valid_in_last(self) -> int:
        """Valid entries in the last file: up to the first entry with phys < 0 or size <= 0."""
        if self._valid_in_last is None:
            segs = self.segments
            if not segs:
                self._valid_in_last = 0
            else:
                arr = self.segment_array(len(segs) - 1)
                n = len(arr)
                valid = n
                # Chunks grow from one page's worth: a short queue touches a few pages of its
                # preallocated file instead of a whole chunk of zeros.
                lo, step = 0, 256
                while lo < n:
                    chunk = arr[lo : lo + step]
                    in_chunk = valid_count(chunk["phys"], chunk["size"])
                    if in_chunk < len(chunk):
                        valid = lo + in_chunk
                        break
                    lo += step
                    step = min(step * 4, _SCAN_CHUNK)
                self._valid_in_last = valid
        return self._valid_in_last

    # -- offsets -----------------------------------------------------------------------------
    @property
    def max_offset(self) -> int:
        """One past the last entry: (start of last file + valid bytes in it) / 20; 0 without files."""
        segs = self.segments
        if not segs:
            return 0
        return segs[-1].start // CQ_UNIT + self.valid_in_last

    @property
    def min_offset(self) -> int:
        """First entry that is not filler and points at or above the commit-log min (max if none).

        Physical offsets grow along a queue and fillers only pad its start, so "live" is a
        monotone predicate over the entries and a binary search finds its first true index.
        """
        if self._min is None:
            lo, hi = self.first_index, self.max_offset
            while lo < hi:
                mid = (lo + hi) // 2
                if self._live(mid):
                    hi = mid
                else:
                    lo = mid + 1
            self._min = lo
        return self._min

    def _live(self, i: int) -> bool:
        phys, size, _ = self.raw_entry(i)
        return is_live(phys, size, self.commitlog_min)

    # -- entries -----------------------------------------------------------------------------
    def _locate(self, i: int) -> tuple[int, int]:
        per = self.entries_per_file
        if not per:
            raise QueueOffsetError(f"queue offset {i}: {self.queue_dir} has no consume-queue files")
        return i // per - self.first_index // per, i % per

    def raw_entry(self, i: int) -> tuple[int, int, int]:
        """Entry ``i`` without the [first, max) check: any slot of the files, zero tail included."""
        k, pos = self._locate(i)
        if not 0 <= k < len(self.segments):
            raise QueueOffsetError(f"queue offset {i} is in no consume-queue file of {self.queue_dir}")
        e = self.segment_array(k)[pos]
        return int(e["phys"]), int(e["size"]), int(e["tags"])

    def _check_range(self, start: int, end: int) -> None:
        lo, hi = self.first_index, self.max_offset
        if not (lo <= start <= end <= hi):
            raise QueueOffsetError(
                f"queue offsets [{start}, {end}) outside the entries on disk [{lo}, {hi}) of {self.queue_dir}"
            )

    def entry(self, i: int) -> tuple[int, int, int]:
        """(physical offset, size, tagsCode) of queue offset ``i``."""
        self._check_range(i, i + 1)
        return self.raw_entry(i)

    def segment_views(
        self, start: int | None = None, end: int | None = None
    ) -> Iterator[tuple[int, np.ndarray]]:
        """Yield (first queue offset, zero-copy CQ_DTYPE view) per segment covering [start, end).

        Defaults to [min_offset, max_offset).
        """
        start = self.min_offset if start is None else start
        end = self.max_offset if end is None else end
        self._check_range(start, end)
        per = self.entries_per_file
        i = start
        while i < end:
            k, pos = self._locate(i)
            take = min(per - pos, end - i)
            yield i, self.segment_array(k)[pos : pos + take]
            i += take

    def entries(self, start: int, end: int) -> np.ndarray:
        """Entries [start, end) as CQ_DTYPE: a view within one segment, a copy across segments."""
        parts = [view for _, view in self.segment_views(start, end)]
        if not parts:
            return np.empty(0, dtype=CQ_DTYPE)
        if len(parts) == 1:
            return parts[0]
        return np.concatenate(parts)
