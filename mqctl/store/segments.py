"""Segment files (commit log, consume queue): 20-digit names encoding their start offset.

numpy-free, so that decoding one commit-log record (a live VIEW_MESSAGE_BY_ID answer) does not
pay for numpy's import.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path

from mqctl.errors import StoreCorruptError, StoreError
from mqctl.records import record

__all__ = ["Segment", "close_maps", "find_segments"]

_SEGMENT_NAME = re.compile(r"\d{20}")


@record(frozen=True)
class Segment:
    """One segment file: its path, the byte offset its name encodes, and its length."""

    path: Path
    start: int
    size: int

    @property
    def end(self) -> int:
        return self.start + self.size


def find_segments(
    dirs: Sequence[Path], unit: int, *, contiguous: bool = True, empty_last: str | None = None
) -> list[Segment]:
    """Segment files named by 20 decimal digits across ``dirs``, sorted by start offset.

    The segment size is learnt from the files (the broker refuses to start when lengths differ,
    so we refuse to read such a directory too: MappedFileQueue.doLoad). An empty *last* file is
    ignored, as the broker deletes it on load, unless ``empty_last`` names what such a file means
    (then it is damage: ``StoreCorruptError`` with that text). Other names are skipped. Missing
    directories hold no segments.
    """
    found = _segment_files(dirs)
    if not found:
        return []
    starts = sorted(found)
    try:
        sizes = [found[s].stat().st_size for s in starts]
    except OSError as e:
        raise StoreError(f"cannot read segment {e.filename}: {e.strerror}") from e
    if sizes[-1] == 0 and empty_last is not None:
        raise StoreCorruptError(f"segment {found[starts[-1]]} is empty (0 bytes): {empty_last}")
    if sizes[-1] == 0:
        starts.pop()
        sizes.pop()
        if not starts:
            return []
    where = Path(dirs[0]) if len(dirs) == 1 else found[starts[0]].parent
    return _checked_segments(found, starts, sizes, unit, where, contiguous)


def _segment_files(dirs: Sequence[Path]) -> dict[int, Path]:
    """Every regular file named by 20 digits in ``dirs``, by the start offset its name encodes."""
    found: dict[int, Path] = {}
    for d in dirs:
        try:
            names = os.listdir(d)
        except FileNotFoundError:
            continue
        except OSError as e:
            raise StoreError(f"cannot list segment directory {d}: {e.strerror}") from e
        for name in names:
            if not _SEGMENT_NAME.fullmatch(name):
                continue
            path = Path(d) / name
            try:
                if not path.is_file():
                    continue
            except OSError as e:
                raise StoreError(f"cannot read segment {path}: {e.strerror}") from e
            start = int(name)
            if start in found:
                raise StoreCorruptError(f"segment {name} exists twice: {found[start]} and {path}")
            found[start] = path
    return found


def _checked_segments(
    found: dict[int, Path],
    starts: list[int],
    sizes: list[int],
    unit: int,
    where: Path,
    contiguous: bool,
) -> list[Segment]:
    """The segments, refused as the broker would: one size, a multiple of ``unit``, aligned."""
    size = sizes[0]
    if size == 0 or size % unit:
        raise StoreCorruptError(
            f"segment {found[starts[0]].name} in {where} is {size} bytes, not a positive multiple of {unit}"
        )
    segments: list[Segment] = []
    for i, (start, length) in enumerate(zip(starts, sizes)):
        name = found[start].name
        if length != size:
            raise StoreCorruptError(
                f"segment {name} in {where} is {length} bytes but {found[starts[0]].name} is {size}"
            )
        if start % size:
            raise StoreCorruptError(f"segment {name} in {where} does not start at a multiple of {size}")
        if contiguous and i and start != starts[i - 1] + size:
            raise StoreCorruptError(
                f"segments in {where} are not contiguous: {found[starts[i - 1]].name} then {name}"
            )
        segments.append(Segment(found[start], start, size))
    return segments


def close_maps(maps: dict) -> None:
    """Close and forget every mmap in ``maps`` (shared by the consume-queue and commit-log readers)."""
    for mm in maps.values():
        try:
            mm.close()
        except BufferError:
            # A caller still holds a view; the map is released when that view is collected.
            pass
    maps.clear()
