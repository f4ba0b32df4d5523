"""The tag scan kernel shared by ``consumerProgress --tags`` and the Spark ``lagReport``.

Counting the CQ entries whose tagsCode is one of a subscription's tag hashes is the only
per-entry work mqctl does, so it is one vectorised pass per hash over the raw bytes: the
big-endian tags column is reinterpreted as native int64 (no byte swap of the column, no copy of
a strided mmap view) and compared with the hashes byte-swapped once instead.

numpy only: this module must stay importable inside Spark executors without anything else.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

import numpy as np

from mqctl.errors import StoreCorruptError

if TYPE_CHECKING:
    from mqctl.store.consumequeue import ConsumeQueue

__all__ = [
    "count_tag_matches",
    "kernel_baseline",
    "matching_indices",
    "matching_positions",
    "scan_range",
]

# Same layout as mqctl.store.consumequeue.CQ_DTYPE, repeated so executors need only numpy.
_CQ_DTYPE = np.dtype([("phys", ">i8"), ("size", ">i4"), ("tags", ">i8")])
_UNIT = 20
# Up to this many hashes, ORed == passes beat np.isin's sort-based path.
_MAX_EQ_PASSES = 4


def _as_entries(entries: np.ndarray | bytes | bytearray | memoryview) -> np.ndarray:
    if isinstance(entries, np.ndarray) and entries.dtype.names is not None:
        if entries.dtype != _CQ_DTYPE:
            raise StoreCorruptError(f"consume-queue entries have dtype {entries.dtype}, expected {_CQ_DTYPE}")
        return entries
    raw = np.frombuffer(entries, dtype=np.uint8) if not isinstance(entries, np.ndarray) else entries
    if raw.dtype != np.uint8 or raw.ndim != 1:
        raise StoreCorruptError(f"expected CQ entries or a flat uint8 buffer, got {raw.dtype} x {raw.shape}")
    if raw.size % _UNIT:
        raise StoreCorruptError(f"{raw.size} bytes is not a whole number of 20-byte consume-queue entries")
    if not raw.flags.c_contiguous:
        raw = np.ascontiguousarray(raw)
    return raw.view(_CQ_DTYPE)


def _native_tags(entries: np.ndarray) -> np.ndarray:
    # Same bytes, native int64 interpretation: a strided view, never a converted copy.
    return entries["tags"].view(np.int64)


def _swapped(hashes: Iterable[int]) -> np.ndarray:
    # The big-endian encoding of each hash, read back natively: equal to _native_tags exactly
    # where the stored tagsCode equals the hash (tag hashes are sign-extended ints, spec 3.2).
    return np.array(sorted(set(hashes)), dtype=">i8").view(np.int64)


def _mask(entries: np.ndarray | bytes | bytearray | memoryview, hashes: Iterable[int]) -> np.ndarray:
    arr = _as_entries(entries)
    keys = _swapped(hashes)
    col = _native_tags(arr)
    if keys.size == 0:
        return np.zeros(col.shape, dtype=bool)
    if keys.size == 1:
        return col == keys[0]
    # Several passes: gather the strided column once (a plain 8-byte copy, still no byte swap);
    # each compare over contiguous int64 then costs a fraction of one over the 20-byte stride.
    col = np.ascontiguousarray(col)
    if keys.size > _MAX_EQ_PASSES:
        return np.isin(col, keys)
    mask = col == keys[0]
    tmp = np.empty_like(mask)
    for k in keys[1:]:
        np.equal(col, k, out=tmp)
        mask |= tmp
    return mask


# Entries per chunk: the contiguous copy of a chunk's tags column (8 bytes/entry) and its
# masks stay in L2, so the second and later hash compares do not go back to memory.
_CHUNK = 16384


def count_tag_matches(entries: np.ndarray | bytes | bytearray | memoryview, hashes: Iterable[int]) -> int:
    """Number of entries whose tagsCode equals one of ``hashes`` (a pre-filter: Aa/BB collide).

    One strided read of the tags column per chunk into a reused contiguous buffer, then one
    contiguous compare per hash on that cache-resident copy.
    """
    arr = _as_entries(entries)
    keys = _swapped(hashes)
    if keys.size == 0 or arr.size == 0:
        return 0
    col = _native_tags(arr)
    if keys.size > _MAX_EQ_PASSES:
        return int(np.count_nonzero(np.isin(col, keys)))
    n = col.size
    chunk = min(_CHUNK, n)
    tmp = np.empty(chunk, dtype=np.int64)
    mask = np.empty(chunk, dtype=bool)
    other = np.empty(chunk, dtype=bool)
    total = 0
    for lo in range(0, n, chunk):
        k = min(chunk, n - lo)
        t, m = tmp[:k], mask[:k]
        np.copyto(t, col[lo : lo + k])
        np.equal(t, keys[0], out=m)
        for key in keys[1:]:
            o = other[:k]
            np.equal(t, key, out=o)
            np.logical_or(m, o, out=m)
        total += int(np.count_nonzero(m))
    return total


def matching_positions(
    entries: np.ndarray | bytes | bytearray | memoryview, hashes: Iterable[int]
) -> np.ndarray:
    """Indices (into ``entries``) of the entries whose tagsCode is one of ``hashes``, ascending."""
    return np.flatnonzero(_mask(entries, hashes))


matching_indices = matching_positions


def scan_range(cq: ConsumeQueue, start: int, end: int, hashes: Iterable[int]) -> int:
    """Matching entries in queue offsets [start, end), one segment view at a time (no copies)."""
    keys = list(hashes)
    if not keys or end <= start:
        return 0
    return sum(count_tag_matches(view, keys) for _, view in cq.segment_views(start, end))


def kernel_baseline(buf: np.ndarray | bytes | bytearray | memoryview) -> int:
    """A plain one-pass numpy reduction over the same bytes: the floor the benchmark compares to."""
    raw = (
        np.frombuffer(buf, dtype=np.uint8)
        if not isinstance(buf, np.ndarray)
        else buf.reshape(-1).view(np.uint8)
    )
    n = raw.size // 8 * 8
    return int(raw[:n].view(np.uint64).sum(dtype=np.uint64))
