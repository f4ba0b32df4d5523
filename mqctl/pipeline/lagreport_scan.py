"""The executor side of lagReport's store scan: one Python pass per ConsumeQueue file, all of the
queue's consumers at once (plain Python over Arrow batches; numpy and mqctl.store only).

Per file and consumer it yields one SCAN row: the file's valid end, its first live entry
(ConsumeQueue's own ``valid_count`` / ``first_live`` / ``is_live`` rules), the tag matches in
the unconsumed part, and the store times of the entries at consumerOffset-1 and at the first
unconsumed offset (a few bytes of the commit log each, on the executor).

Files read by the executors themselves (direct mode) are memory-mapped: only the pages a
consumer needs are touched (a file every consumer is past costs its first and last entries),
and nothing is copied out of the page cache.
"""

from __future__ import annotations

import mmap
import os
from collections.abc import Iterator, Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mqctl.model.queues import TIME_UNREADABLE
from mqctl.pipeline import spark_schemas as S
from mqctl.pipeline.inputs import local_path
from mqctl.store.consumequeue import first_live, is_live, valid_count

if TYPE_CHECKING:
    import numpy as np
    import pyarrow as pa

    from mqctl.store.commitlog import CommitLog

__all__ = ["scan_batches"]


def _arrow_schema(schema: object) -> pa.Schema:
    from pyspark.sql.pandas.types import to_arrow_schema

    return to_arrow_schema(schema)  # type: ignore[arg-type]


class _File:
    """One CQ file's entries: memory-mapped (direct: only the pages a consumer needs are read,
    nothing is copied out of the page cache; measured faster than a read into a buffer for a
    whole-file count too) or viewed over the bytes Spark read."""

    def __init__(self, entries: np.ndarray) -> None:
        self.entries = entries

    @classmethod
    def open(cls, uri: str) -> _File:
        import numpy as np

        from mqctl.errors import StoreError
        from mqctl.store.consumequeue import CQ_DTYPE, CQ_UNIT

        local = local_path(uri)
        if local is None:
            raise StoreError(
                f"direct CQ reads need a local or mounted path, got {uri}", "use --cq-read spark"
            )
        with open(local, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            if size < CQ_UNIT:
                return cls(np.empty(0, dtype=CQ_DTYPE))
            # The mapping outlives the descriptor; numpy keeps the mmap object alive.
            m = mmap.mmap(f.fileno(), size - size % CQ_UNIT, access=mmap.ACCESS_READ)
        return cls(np.frombuffer(m, dtype=CQ_DTYPE))


def _first_live(phys: np.ndarray, size: np.ndarray, valid: int, cl_min: int) -> int:
    # Nearly every file starts with a live entry: then first_live's search (which converts the
    # big-endian column) is not needed, and the answer is the same (0).
    if valid and is_live(int(phys[0]), int(size[0]), cl_min):
        return 0
    return first_live(phys, size, valid, cl_min)


class _Stamps:
    """Store times from each broker's commit log, opened once per task."""

    def __init__(self, commitlog_dirs: Mapping[str, Sequence[str]]) -> None:
        self._dirs = commitlog_dirs
        self._logs: dict[str, CommitLog] = {}

    def __call__(self, broker: str, phys: int, size: int) -> int:
        from mqctl.store.commitlog import CommitLog

        log = self._logs.get(broker)
        if log is None:
            log = self._logs[broker] = CommitLog([Path(d) for d in self._dirs[broker]])
        ts = log.store_time(phys, size)
        # Gone (-1, the broker's own rules) reads as 0, as consumerProgress shows it; damage (a
        # record that should be there and cannot be read) stays TIME_UNREADABLE: the report
        # makes its lag time null, never 0.
        return ts if ts > 0 or ts == TIME_UNREADABLE else 0

    def close(self) -> None:
        for log in self._logs.values():
            log.close()


def _scan_file(
    entries: np.ndarray, fs: int, live_min: int, consumers: Sequence[Mapping[str, Any]], stamp: Any
) -> list[tuple[Any, ...]]:
    """Per consumer: (validEnd, liveStart, matched, lastTimestamp, oldestIndex, oldestTimestamp)."""
    from mqctl.store.scan import count_tag_matches

    phys, size = entries["phys"], entries["size"]
    valid = valid_count(phys, size)
    live = _first_live(phys, size, valid, live_min)
    out = []
    for c in consumers:
        lo = max(max(c["committedOffset"], 0) - fs, live)
        matched: int | None = None
        if c["matchAll"] is not None:
            if lo >= valid:
                matched = 0
            elif c["matchAll"]:
                matched = valid - lo
            else:
                matched = count_tag_matches(entries[lo:valid], c["hashes"])
        j = max(c["committedOffset"], 0) - 1 - fs
        last = stamp(int(phys[j]), int(size[j])) if live <= j < valid else None
        oldest = (fs + lo, stamp(int(phys[lo]), int(size[lo]))) if lo < valid else (None, None)
        out.append((fs + valid, fs + live if live < valid else None, matched, last, *oldest))
    return out


def scan_batches(
    batches: Iterator[pa.RecordBatch], cl_min: Mapping[str, int], commitlog_dirs: Mapping[str, Sequence[str]]
) -> Iterator[pa.RecordBatch]:
    """SCAN rows for batches of (CQ file, the consumers of its queue) rows. A row without path
    and bytes is a queue's placeholder: each consumer gets fileStart -1 and validEnd 0."""
    import numpy as np
    import pyarrow as pa

    from mqctl.store.consumequeue import CQ_DTYPE, CQ_UNIT

    schema = _arrow_schema(S.SCAN)
    stamps = _Stamps(commitlog_dirs)
    keys = ("brokerName", "topic", "queueId", "fileStart", "path")
    try:
        for batch in batches:
            rows: list[tuple[Any, ...]] = []
            cols = {n: batch.column(n).to_pylist() for n in keys}
            contents = batch.column("content")
            for i, consumers in enumerate(batch.column("consumers").to_pylist()):
                broker, topic, qid, fs, path = (cols[n][i] for n in keys)
                if contents[i].is_valid:
                    raw = contents[i].as_buffer()  # zero-copy view of the Arrow bytes
                    f = _File(np.frombuffer(raw, dtype=CQ_DTYPE, count=len(raw) // CQ_UNIT))
                elif path is not None:
                    f = _File.open(path)
                else:
                    rows += [(broker, topic, qid, c["group"], c["committedOffset"], c["matchAll"], fs, 0, None,
                              None if c["matchAll"] is None else 0, None, None, None)
                             for c in consumers]  # fmt: skip
                    continue
                found = _scan_file(f.entries, fs, cl_min.get(broker, 0), consumers, partial(stamps, broker))
                rows += [(broker, topic, qid, c["group"], c["committedOffset"], c["matchAll"], fs, *r)
                         for c, r in zip(consumers, found)]  # fmt: skip
            columns = list(zip(*rows)) if rows else [()] * len(S.SCAN.names)
            yield pa.RecordBatch.from_arrays(
                [pa.array(col, type=t) for col, t in zip(columns, schema.types)], schema=schema
            )
    finally:
        stamps.close()
