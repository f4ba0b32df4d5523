"""One commit-log record and one consume-queue unit, byte for byte as a RocketMQ broker writes them.

``StoreWriter`` appends what these functions encode; tests encode single records with them
(spec 4.1 for the record, 3.1 for the consume-queue unit).
"""

from __future__ import annotations

import functools
import ipaddress
import struct
import zlib
from collections.abc import Mapping

from mqctl.model import java_string_hash

MAGIC_V1 = -626843481  # 0xDAA320A7
MAGIC_V2 = -626843477  # 0xDAA320AB, 2-byte topic length
BLANK_MAGIC = -875286124  # 0xCBD43194, end-of-segment filler
CQ_UNIT = 20

SYSFLAG_BORNHOST_V6 = 0x10
SYSFLAG_STOREHOST_V6 = 0x20

_FIXED_HEAD = struct.Struct(">iiiiiqqiq")  # size, magic, bodyCRC, qid, flag, qoffset, phys, sysflag, born
_CQ_ENTRY = struct.Struct(">qiq")

Host = tuple[str, int]


def file_name(start: int) -> str:
    """Segment name: the start offset as exactly 20 decimal digits (``UtilAll.offset2FileName``)."""
    return f"{start:020d}"


def _java_length(s: str) -> int:
    # String.length() counts UTF-16 code units; the broker's v2 switch compares that, not bytes.
    return len(s.encode("utf-16-le", "surrogatepass")) // 2


@functools.lru_cache(maxsize=64)
def host_bytes(host: Host) -> tuple[bytes, bool]:
    address, port = host
    ip = ipaddress.ip_address(address)
    if not 0 <= port <= 0xFFFF:
        raise ValueError(f"port out of range: {port}")
    return ip.packed + struct.pack(">i", port), ip.version == 6


def encode_properties(properties: Mapping[str, str | None]) -> bytes:
    """``name 0x01 value 0x02`` for every pair (the last one included); ``None`` values are skipped."""
    parts: list[str] = []
    for name, value in properties.items():
        if value is None:
            continue
        if not name or "\x01" in name or "\x02" in name or "\x01" in value or "\x02" in value:
            raise ValueError(f"property {name!r} cannot be encoded")
        parts.append(f"{name}\x01{value}\x02")
    return "".join(parts).encode("utf-8")


def _topic_field(topic: str) -> tuple[bool, bytes, bytes]:
    """(magic v2?, the topic's bytes, its length field): v2 records carry a 2-byte length, for
    topics longer than 127 characters."""
    topic_bytes = topic.encode("utf-8")
    v2 = _java_length(topic) > 127
    if len(topic_bytes) > (0x7FFF if v2 else 0x7F):
        raise ValueError(f"topic too long for the record format: {len(topic_bytes)} bytes")
    return v2, topic_bytes, struct.pack(">h" if v2 else ">b", len(topic_bytes))


def encode_record(
    *,
    topic: str,
    queue_id: int,
    queue_offset: int,
    phys: int,
    body: bytes,
    store_timestamp: int,
    born_timestamp: int,
    born_host: Host,
    store_host: Host,
    properties: Mapping[str, str | None] | bytes = b"",
    flag: int = 0,
    sys_flag: int = 0,
    reconsume_times: int = 0,
    prepared_transaction_offset: int = 0,
) -> bytes:
    """One commit-log record, byte for byte as ``MessageExtEncoder`` lays it out (spec 4.1)."""
    born, born_v6 = host_bytes(born_host)
    store, store_v6 = host_bytes(store_host)
    # The host flags are derived from the addresses so the widths can never disagree with them.
    sys_flag &= ~(SYSFLAG_BORNHOST_V6 | SYSFLAG_STOREHOST_V6)
    sys_flag |= (SYSFLAG_BORNHOST_V6 if born_v6 else 0) | (SYSFLAG_STOREHOST_V6 if store_v6 else 0)
    v2, topic_bytes, topic_len = _topic_field(topic)
    props = properties if isinstance(properties, bytes) else encode_properties(properties)
    if len(props) > 0x7FFF:
        raise ValueError(f"properties too long: {len(props)} bytes (max 32767)")
    total = _FIXED_HEAD.size + len(born) + 8 + len(store) + 16 + len(body) + len(topic_len)
    total += len(topic_bytes) + 2 + len(props)
    body_crc = zlib.crc32(body) & 0x7FFFFFFF
    parts = [
        _FIXED_HEAD.pack(
            total,
            MAGIC_V2 if v2 else MAGIC_V1,
            body_crc,
            queue_id,
            flag,
            queue_offset,
            phys,
            sys_flag,
            born_timestamp,
        ),
        born,
        struct.pack(">q", store_timestamp),
        store,
        struct.pack(">iqi", reconsume_times, prepared_transaction_offset, len(body)),
        body,
        topic_len,
        topic_bytes,
        struct.pack(">h", len(props)),
        props,
    ]
    record = b"".join(parts)
    assert len(record) == total
    return record


def encode_cq_entry(phys: int, size: int, tags: str | None) -> bytes:
    """20-byte consume-queue unit; tagsCode is the sign-extended Java hash of TAGS, 0 without tags."""
    tags_code = java_string_hash(tags) if tags else 0
    return _CQ_ENTRY.pack(phys, size, tags_code)
