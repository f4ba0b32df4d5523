"""Hand-rolled store bytes for codec tests, built with struct straight from the spec tables.

Deliberately independent of ``mqctl.store.writer``: these helpers encode spec 4.1 (record) and
3.1 (CQ entry) field by field, so a bug shared by our writer and our reader cannot hide.
"""

from __future__ import annotations

import ipaddress
import struct
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from mqctl.model import java_string_hash

MAGIC_V1 = 0xDAA320A7
MAGIC_V2 = 0xDAA320AB
BLANK_MAGIC = 0xCBD43194


def _host(host: str, port: int) -> bytes:
    return ipaddress.ip_address(host).packed + struct.pack(">i", port)


def props_bytes(props: Sequence[tuple[str, str]]) -> bytes:
    return "".join(f"{k}\x01{v}\x02" for k, v in props).encode()


def build_record(
    *,
    topic: str = "TopicTest",
    body: bytes = b"Hello",
    props: Sequence[tuple[str, str]] | bytes = (),
    queue_id: int = 0,
    flag: int = 0,
    queue_offset: int = 0,
    phys: int = 0,
    sys_flag: int = 0,
    born_ts: int = 1_700_000_000_000,
    born: tuple[str, int] = ("192.168.1.10", 51234),
    store_ts: int = 1_700_000_000_123,
    store: tuple[str, int] = ("10.0.0.5", 10911),
    reconsume: int = 0,
    prepared: int = 0,
    v2: bool | None = None,
    body_crc: int | None = None,
) -> bytes:
    """One message record, spec 4.1 rows 1-17 in order."""
    topic_b = topic.encode()
    prop_b = props if isinstance(props, bytes) else props_bytes(props)
    if v2 is None:
        v2 = len(topic) > 127
    if ":" in born[0]:
        sys_flag |= 0x10
    if ":" in store[0]:
        sys_flag |= 0x20
    born_b = _host(*born)
    store_b = _host(*store)
    total = 72 + len(born_b) + len(store_b) + len(body) + (2 if v2 else 1) + len(topic_b) + 2 + len(prop_b)
    crc = zlib.crc32(body) & 0x7FFFFFFF if body_crc is None else body_crc
    out = struct.pack(
        ">iIiiiqqiq",
        total,
        MAGIC_V2 if v2 else MAGIC_V1,
        crc,
        queue_id,
        flag,
        queue_offset,
        phys,
        sys_flag,
        born_ts,
    )
    out += born_b + struct.pack(">q", store_ts) + store_b
    out += struct.pack(">iqi", reconsume, prepared, len(body)) + body
    out += (struct.pack(">h", len(topic_b)) if v2 else struct.pack(">b", len(topic_b))) + topic_b
    out += struct.pack(">h", len(prop_b)) + prop_b
    assert len(out) == total
    return out


def cq_entry(phys: int, size: int, tags: int) -> bytes:
    return struct.pack(">qiq", phys, size, tags)


def seg_name(start: int) -> str:
    return f"{start:020d}"


def write_segments(directory: Path, data: bytes, seg_size: int, first_start: int = 0) -> list[Path]:
    """Split ``data`` (the stream from ``first_start``) into zero-padded segment files."""
    directory.mkdir(parents=True, exist_ok=True)
    paths = []
    for off in range(0, max(len(data), 1), seg_size):
        chunk = data[off : off + seg_size]
        p = directory / seg_name(first_start + off)
        p.write_bytes(chunk + bytes(seg_size - len(chunk)))
        paths.append(p)
    return paths


@dataclass(frozen=True)
class MiniStore:
    cq_dir: Path
    cl_dir: Path
    phys: list[int]
    sizes: list[int]


def build_store(
    root: Path,
    times: Sequence[int],
    *,
    cq_entries_per_file: int = 5,
    cl_seg_size: int = 1024,
    tags: Sequence[str | None] | None = None,
) -> MiniStore:
    """A commit log holding one record per store time, and the CQ of one queue pointing at them.

    Records never span commit-log segments: a segment is closed with the 8-byte blank header
    (total = remaining, BLANK_MAGIC) when the next record plus 8 does not fit (spec 4.6).
    """
    cl_dir = root / "commitlog"
    cq_dir = root / "consumequeue" / "T" / "0"
    stream = bytearray()
    phys: list[int] = []
    sizes: list[int] = []
    cq = bytearray()
    for i, ts in enumerate(times):
        tag = tags[i] if tags else None
        props = [("TAGS", tag)] if tag else []
        probe = build_record(topic="T", props=props, queue_offset=i, store_ts=ts)
        remaining = cl_seg_size - len(stream) % cl_seg_size
        if len(probe) + 8 > remaining:
            stream += struct.pack(">iI", remaining, BLANK_MAGIC) + bytes(remaining - 8)
        p = len(stream)
        rec = build_record(topic="T", props=props, queue_offset=i, phys=p, store_ts=ts)
        stream += rec
        phys.append(p)
        sizes.append(len(rec))
        cq += cq_entry(p, len(rec), java_string_hash(tag) if tag else 0)
    write_segments(cl_dir, bytes(stream), cl_seg_size)
    if times:
        write_segments(cq_dir, bytes(cq), cq_entries_per_file * 20)
    else:
        cq_dir.mkdir(parents=True, exist_ok=True)
    return MiniStore(cq_dir, cl_dir, phys, sizes)
