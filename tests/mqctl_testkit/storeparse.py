"""An independent reader of store files, written with ``struct`` straight from the spec tables.

Used to check what ``mqctl.store.writer`` wrote. It shares no code with ``mqctl.store`` (not
even the Java hash), so a bug in the writer cannot be hidden by the same bug in a reader, and
it asserts every layout rule it relies on (spec 1.2, 3.1, 3.3, 4.1, 4.5, 4.6).
"""

from __future__ import annotations

import ipaddress
import re
import zlib
from dataclasses import dataclass
from pathlib import Path
from struct import unpack_from

V1 = 0xDAA320A7
V2 = 0xDAA320AB
BLANK = 0xCBD43194

NAME = re.compile(r"^\d{20}$")


def java_hash(s: str) -> int:
    """Spec 7 recipe: fold UTF-16 code units with 32-bit wrap-around, then make it signed."""
    h = 0
    data = s.encode("utf-16-be")
    for i in range(0, len(data), 2):
        h = (h * 31 + int.from_bytes(data[i : i + 2], "big")) % 2**32
    return h - 2**32 if h >= 2**31 else h


@dataclass(frozen=True)
class Record:
    phys: int  # where the record was found
    total: int
    magic: int
    body_crc: int
    queue_id: int
    flag: int
    queue_offset: int
    phys_field: int
    sys_flag: int
    born_ts: int
    born_host: tuple[str, int]
    store_ts: int
    store_host: tuple[str, int]
    reconsume: int
    prepared: int
    body: bytes
    topic: str
    properties: dict[str, str]


def _host(buf: bytes, pos: int, v6: bool) -> tuple[tuple[str, int], int]:
    width = 16 if v6 else 4
    address = str(ipaddress.ip_address(bytes(buf[pos : pos + width])))
    (port,) = unpack_from(">i", buf, pos + width)
    return (address, port), pos + width + 4


def parse_record(buf: bytes, pos: int, phys: int) -> Record:
    total, magic, crc, qid, flag, qoff, phys_field, sysflag, born_ts = unpack_from(">iIiiiqqiq", buf, pos)
    assert magic in (V1, V2), hex(magic)
    p = pos + 48
    born, p = _host(buf, p, bool(sysflag & 0x10))
    (store_ts,) = unpack_from(">q", buf, p)
    store, p = _host(buf, p + 8, bool(sysflag & 0x20))
    reconsume, prepared, body_len = unpack_from(">iqi", buf, p)
    p += 16
    body = bytes(buf[p : p + body_len])
    p += body_len
    if magic == V2:
        (topic_len,) = unpack_from(">h", buf, p)
        p += 2
    else:
        (topic_len,) = unpack_from(">b", buf, p)
        p += 1
    topic = bytes(buf[p : p + topic_len]).decode()
    p += topic_len
    (prop_len,) = unpack_from(">h", buf, p)
    p += 2
    raw = bytes(buf[p : p + prop_len]).decode()
    p += prop_len
    # Spec 4.1: TOTALSIZE must equal the sum of the parts.
    assert p - pos == total, (p - pos, total)
    # Spec 4.4: every pair, the last included, ends with 0x02.
    assert raw == "" or raw.endswith("\x02")
    props = dict(item.split("\x01", 1) for item in raw.split("\x02") if item)
    assert crc == zlib.crc32(body) & 0x7FFFFFFF
    return Record(
        phys, total, magic, crc, qid, flag, qoff, phys_field, sysflag, born_ts, born, store_ts, store,
        reconsume, prepared, body, topic, props,
    )  # fmt: skip


def segment_files(directory: Path, size: int) -> list[tuple[int, Path]]:
    """20-digit names, contiguous, every file exactly ``size`` bytes (spec 1.2)."""
    files = sorted(directory.iterdir())
    assert files, directory
    out = []
    for path in files:
        assert NAME.match(path.name), path.name
        assert path.stat().st_size == size, (path, path.stat().st_size)
        out.append((int(path.name), path))
    starts = [s for s, _ in out]
    assert all(s % size == 0 for s in starts)
    assert starts == list(range(starts[0], starts[0] + size * len(starts), size)), starts
    return out


def scan_commitlog(directory: Path, size: int) -> list[Record]:
    """Every record, checking blank headers at segment ends and zeros after the data (spec 4.6)."""
    segments = segment_files(directory, size)
    records: list[Record] = []
    for n, (start, path) in enumerate(segments):
        data = path.read_bytes()
        pos = 0
        while True:
            total, magic = unpack_from(">iI", data, pos)
            if magic == BLANK:
                assert n < len(segments) - 1, "blank header in the last segment"
                assert total == size - pos, "blank header must reach the end of the file"
                assert pos + 8 <= size
                assert data[pos + 8 :] == bytes(size - pos - 8)
                break
            if total == 0 and magic == 0:
                assert n == len(segments) - 1, f"segment {path.name} ends without a blank header"
                assert data[pos:] == bytes(size - pos)
                break
            record = parse_record(data, pos, start + pos)
            # The broker keeps room for a blank header after every record.
            assert pos + total + 8 <= size
            assert record.phys_field == start + pos
            records.append(record)
            pos += total
    return records


@dataclass(frozen=True)
class CQEntry:
    index: int
    phys: int
    size: int
    tags_code: int


def read_cq(queue_dir: Path, size: int) -> list[CQEntry]:
    """Entries of one consume queue (spec 3.1), checking zero tails and file sizes."""
    assert size % 20 == 0
    entries: list[CQEntry] = []
    segments = segment_files(queue_dir, size)
    for n, (start, path) in enumerate(segments):
        data = path.read_bytes()
        for pos in range(0, size, 20):
            phys, length, tags = unpack_from(">qiq", data, pos)
            if length == 0:
                assert n == len(segments) - 1, "a non-last CQ file must be full"
                assert data[pos:] == bytes(size - pos)
                break
            entries.append(CQEntry((start + pos) // 20, phys, length, tags))
    return entries


def queue_bounds(queue_dir: Path, size: int, commitlog_min: int) -> tuple[int, int]:
    """Spec 3.4 recipe: max = one past the last entry; min = first entry at or above the log min."""
    entries = read_cq(queue_dir, size)
    if not entries:
        return 0, 0
    hi = entries[-1].index + 1
    live = [e.index for e in entries if e.phys >= commitlog_min]
    return (live[0] if live else hi), hi


def quote_int_keys(text: str) -> str:
    """Spec 2.8 regex: fastjson's bare integer keys become quoted so ``json`` can parse the file."""
    return re.sub(r"(?<=[{,])\s*(-?\d+)\s*:", r'"\1":', text)
