"""CommitLog message records (spec rocketmq-store.md 4.1-4.6).

``decode_record`` and ``store_timestamp_at`` are pure functions over any buffer (bytes,
memoryview, mmap); ``CommitLog`` finds the segment holding a physical offset across one or more
commit-log directories and maps it read-only.
"""

from __future__ import annotations

import ipaddress
import mmap
import struct
import zlib
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING

from mqctl.errors import StoreCorruptError, StoreError
from mqctl.records import field, record
from mqctl.store.segments import Segment, close_maps, find_segments

if TYPE_CHECKING:
    from mqctl.model import StoredMessage

__all__ = [
    "BLANK_MAGIC",
    "GONE",
    "UNREADABLE",
    "offset_msg_id",
    "stored_message",
    "MAGIC_V1",
    "MAGIC_V2",
    "CommitLog",
    "MessageRecord",
    "decode_properties",
    "decode_record",
    "store_timestamp_at",
]

MAGIC_V1 = 0xDAA320A7
MAGIC_V2 = 0xDAA320AB
BLANK_MAGIC = 0xCBD43194

# CommitLog.store_time's answers when there is no time (see there).
GONE = -1
UNREADABLE = -2
_FILLER_SIZE = 0x7FFFFFFF  # the consume queue's filler entry (0, 0x7FFFFFFF, 0): no message

BORNHOST_V6_FLAG = 0x10
STOREHOST_V6_FLAG = 0x20

# total, magic (unsigned so it compares with the hex constants), bodyCRC, queueId, flag,
# queueOffset, physicalOffset, sysFlag, bornTimestamp.
_HEAD = struct.Struct(">iIiiiqqiq")
_INT = struct.Struct(">i")
_LONG = struct.Struct(">q")
_SHORT = struct.Struct(">h")
_BYTE = struct.Struct(">b")
_TAIL = struct.Struct(">iqi")  # reconsumeTimes, preparedTransactionOffset, bodyLength
_MAGIC_SYSFLAG = struct.Struct(">4xI28xi")  # magic at 4, sysFlag at 36


@record(frozen=True)
class MessageRecord:
    total_size: int
    magic: int
    body_crc: int
    queue_id: int
    flag: int
    queue_offset: int
    physical_offset: int
    sys_flag: int
    born_timestamp: int
    born_host: str
    store_timestamp: int
    store_host: str
    reconsume_times: int
    prepared_transaction_offset: int
    body: bytes
    topic: str
    properties: dict[str, str] = field(default_factory=dict)

    @property
    def tags(self) -> str | None:
        return self.properties.get("TAGS")

    @property
    def version(self) -> int:
        return 2 if self.magic == MAGIC_V2 else 1


def decode_properties(text: str) -> dict[str, str]:
    """Parse ``name 0x01 value 0x02 ...`` the way MessageDecoder.string2messageProperties does.

    Pairs without a non-empty name and a non-empty value around their first 0x01 are dropped;
    a later duplicate key wins.
    """
    props: dict[str, str] = {}
    for item in text.split("\x02"):
        sep = item.find("\x01")
        if 0 < sep < len(item) - 1:
            props[item[:sep]] = item[sep + 1 :]
    return props


def _host(buf: bytes | memoryview, pos: int, v6: bool) -> tuple[str, int]:
    width = 16 if v6 else 4
    addr = bytes(buf[pos : pos + width])
    (port,) = _INT.unpack_from(buf, pos + width)
    if v6:
        return f"[{ipaddress.IPv6Address(addr)}]:{port}", pos + width + 4
    return f"{ipaddress.IPv4Address(addr)}:{port}", pos + width + 4


def _record_magic(magic: int, pos: int) -> None:
    if magic == BLANK_MAGIC:
        raise StoreCorruptError(f"byte {pos} holds the end-of-segment blank marker, not a message")
    if magic not in (MAGIC_V1, MAGIC_V2):
        raise StoreCorruptError(f"no message at byte {pos}: magic code {magic:#010x}")


def decode_record(
    buf: bytes | bytearray | memoryview | mmap.mmap, pos: int = 0, *, check_crc: bool = True
) -> MessageRecord:
    """Decode the message record starting at ``buf[pos]``.

    Raises StoreCorruptError for a bad magic, a truncated record, negative lengths, a TOTALSIZE
    that differs from the sum of the field lengths, non-UTF-8 text, or (with ``check_crc``) a
    body whose masked CRC-32 differs from BODYCRC.
    """
    try:
        return _decode(buf, pos, check_crc)
    except struct.error as e:
        raise StoreCorruptError(f"truncated message record at byte {pos}") from e
    except UnicodeDecodeError as e:
        raise StoreCorruptError(f"message record at byte {pos} holds text that is not UTF-8") from e


def _decode(buf: bytes | bytearray | memoryview | mmap.mmap, pos: int, check_crc: bool) -> MessageRecord:
    if pos < 0:
        raise StoreCorruptError(f"negative record position {pos}")
    total, magic, body_crc, queue_id, flag, queue_offset, phys, sys_flag, born_ts = _HEAD.unpack_from(
        buf, pos
    )
    _record_magic(magic, pos)
    if total <= 0 or pos + total > len(buf):
        raise StoreCorruptError(f"message record at byte {pos} claims {total} bytes, {len(buf) - pos} remain")
    # Parse only within the record's own bytes, so a short TOTALSIZE cannot read the next record.
    rec = memoryview(buf)[pos : pos + total]
    p = _HEAD.size
    born_host, p = _host(rec, p, bool(sys_flag & BORNHOST_V6_FLAG))
    (store_ts,) = _LONG.unpack_from(rec, p)
    store_host, p = _host(rec, p + 8, bool(sys_flag & STOREHOST_V6_FLAG))
    reconsume, prepared, body_len = _TAIL.unpack_from(rec, p)
    p += _TAIL.size
    if body_len < 0 or p + body_len > total:
        raise StoreCorruptError(f"message record at byte {pos}: body length {body_len} does not fit")
    body = bytes(rec[p : p + body_len])
    p += body_len
    if magic == MAGIC_V2:
        (topic_len,) = _SHORT.unpack_from(rec, p)
        p += 2
    else:
        (topic_len,) = _BYTE.unpack_from(rec, p)
        p += 1
    if topic_len < 0 or p + topic_len > total:
        raise StoreCorruptError(f"message record at byte {pos}: topic length {topic_len} does not fit")
    topic = bytes(rec[p : p + topic_len]).decode("utf-8")
    p += topic_len
    (prop_len,) = _SHORT.unpack_from(rec, p)
    p += 2
    if prop_len < 0 or p + prop_len != total:
        raise StoreCorruptError(
            f"message record at byte {pos}: TOTALSIZE {total} differs from the field lengths "
            f"({p + max(prop_len, 0)})"
        )
    props = decode_properties(bytes(rec[p : p + prop_len]).decode("utf-8"))
    if check_crc and zlib.crc32(body) & 0x7FFFFFFF != body_crc:
        raise StoreCorruptError(f"message record at byte {pos}: body CRC mismatch")
    return MessageRecord(
        total_size=total,
        magic=magic,
        body_crc=body_crc,
        queue_id=queue_id,
        flag=flag,
        queue_offset=queue_offset,
        physical_offset=phys,
        sys_flag=sys_flag,
        born_timestamp=born_ts,
        born_host=born_host,
        store_timestamp=store_ts,
        store_host=store_host,
        reconsume_times=reconsume,
        prepared_transaction_offset=prepared,
        body=body,
        topic=topic,
        properties=props,
    )


def store_timestamp_at(buf: bytes | bytearray | memoryview | mmap.mmap, pos: int = 0) -> int:
    """STORETIMESTAMP of the record at ``buf[pos]``, reading only magic, sysFlag and the time.

    The time sits at 56 after an IPv4 born host and at 68 after an IPv6 one (spec 4.1).
    """
    if pos < 0:
        raise StoreCorruptError(f"negative record position {pos}")
    try:
        magic, sys_flag = _MAGIC_SYSFLAG.unpack_from(buf, pos)
        _record_magic(magic, pos)
        at = pos + (68 if sys_flag & BORNHOST_V6_FLAG else 56)
        return _LONG.unpack_from(buf, at)[0]
    except struct.error as e:
        raise StoreCorruptError(f"truncated message record at byte {pos}") from e


class CommitLog:
    """Read-only commit log over one or more directories (``storePathCommitLog`` may list several).

    Gaps between segments are tolerated (reads there are damage, see :meth:`store_time`): a
    reader degrades like the broker, which only logs them (``MappedFileQueue.checkSelf``), rather
    than refuse the store. Old segments are deleted from the front, so the first one's name is
    the min: below it a message is gone, not damaged.
    """

    def __init__(self, dirs: Sequence[Path]) -> None:
        self.dirs = [Path(d) for d in dirs]
        self._segments: list[Segment] | None = None
        self._by_start: dict[int, Segment] = {}
        self._maps: dict[int, mmap.mmap] = {}
        # Reads that found damage: how many, and the first reason per file (path -> reason).
        self.damage_reads = 0
        self.damage: dict[str, str] = {}

    def __enter__(self) -> CommitLog:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        close_maps(self._maps)

    @property
    def segments(self) -> list[Segment]:
        if self._segments is None:
            self._segments = find_segments(self.dirs, 1, contiguous=False)
            self._by_start = {s.start: s for s in self._segments}
        return self._segments

    @property
    def file_size(self) -> int:
        segs = self.segments
        return segs[0].size if segs else 0

    @property
    def min_offset(self) -> int:
        segs = self.segments
        return segs[0].start if segs else 0

    def _segment_for(self, phys: int) -> tuple[mmap.mmap, int] | None:
        size = self.file_size
        if not size or phys < self.min_offset:
            return None
        start = phys - phys % size
        seg = self._by_start.get(start)
        if seg is None:
            return None
        mm = self._maps.get(start)
        if mm is None:
            try:
                with open(seg.path, "rb") as f:
                    mm = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
            except (OSError, ValueError) as e:
                reason = e.strerror if isinstance(e, OSError) and e.strerror else str(e)
                raise StoreCorruptError(f"cannot map commit-log segment {seg.path}: {reason}") from e
            self._maps[start] = mm
        return mm, phys - start

    def store_timestamp(self, phys: int, size: int | None = None) -> int:
        """Store time of the record at ``phys``, or -1 when it is gone or not a record.

        Like the broker's pickupStoreTimestamp: below the commit-log min or in a missing segment
        gives -1; beyond the written data the bytes are zeros, which fail the magic check.
        ``size`` (the CQ entry's size) must also fit inside the segment. A -1 that is damage
        rather than "gone" (see :meth:`store_time`) is also recorded in ``damage``.
        """
        t = self.store_time(phys, size)
        return t if t >= 0 else -1

    def store_time(self, phys: int, size: int | None = None) -> int:
        """Store time of the record a consume-queue entry (``phys``, ``size``) points at, or why not:

        * ``GONE`` (-1): no message by the broker's own rules: below the commit-log min (deleted by
          retention, which removes segments from the front only), or a filler entry;
        * ``UNREADABLE`` (-2): damage: the message should be there and is not: no commit log at
          all, a missing segment in the middle or past the end, zeros or a record that does not
          parse where the entry points. The file is remembered in ``damage`` (first reason each).
        """
        if size is not None and phys == 0 and size == _FILLER_SIZE:
            return GONE
        if phys < 0:
            return self._damaged(phys, None, "a negative physical offset")
        if self.segments and phys < self.min_offset:
            return GONE
        found = self._segment_for(phys)
        if found is None:
            return self._damaged(phys, None, "no commit-log segment holds it")
        mm, pos = found
        if size is not None and (size <= 0 or pos + size > len(mm)):
            return self._damaged(phys, pos, f"a record of {size} bytes does not fit in the segment")
        try:
            return store_timestamp_at(mm, pos)
        except StoreCorruptError as exc:
            return self._damaged(phys, pos, exc.message)

    def _damaged(self, phys: int, pos: int | None, reason: str) -> int:
        self.damage_reads += 1
        size = self.file_size
        if not size:
            where = f"{' and '.join(str(d) for d in self.dirs)} (no commit-log segment)"
        else:
            start = phys - phys % size
            seg = self._by_start.get(start)
            where = str(seg.path) if seg is not None else str(self.dirs[0] / f"{start:020d}") + " (missing)"
        at = f" at byte {pos}" if pos is not None else ""
        self.damage.setdefault(where, f"physical offset {phys}{at}: {reason}")
        return UNREADABLE

    def record(self, phys: int, *, check_crc: bool = True) -> MessageRecord:
        found = self._segment_for(phys)
        if found is None:
            raise StoreError(
                f"no commit-log segment holds physical offset {phys} (min {self.min_offset})",
                hint="the message was probably deleted by the broker's retention",
            )
        mm, pos = found
        return decode_record(mm, pos, check_crc=check_crc)

    def message(self, phys: int, broker_name: str) -> StoredMessage | None:
        """The stored message at ``phys``; None when the broker's retention removed it."""
        found = self._segment_for(phys)
        if found is None:
            return None
        mm, pos = found
        return stored_message(mm, pos, broker_name)

    def tags(self, phys: int) -> str | None:
        """TAGS property of the record at ``phys`` (None when it has none)."""
        return self.record(phys, check_crc=False).tags


# Record offsets (remoting.md 7.14): sysFlag at 36, the born host from 48.
_SYSFLAG_AT = 36
_BORN_HOST_AT = 48
_BORN_V6 = 0x10
_STORE_V6 = 0x20
_PHYS = struct.Struct(">q")
_SYSFLAG = struct.Struct(">i")


def offset_msg_id(record: bytes | memoryview, physical_offset: int, at: int = 0) -> str:
    """The offset message id of a well-formed record: store host IP + port (int32) + commit-log
    offset (int64), upper-case hex (MessageDecoder.createMessageId)."""
    (sys_flag,) = _SYSFLAG.unpack_from(record, at + _SYSFLAG_AT)
    store_at = at + _BORN_HOST_AT + (20 if sys_flag & _BORN_V6 else 8) + 8  # born host+port, store time
    store_len = (16 if sys_flag & _STORE_V6 else 4) + 4
    return (bytes(record[store_at : store_at + store_len]) + _PHYS.pack(physical_offset)).hex().upper()


def stored_message(buf: bytes | memoryview | mmap.mmap, pos: int, broker_name: str) -> StoredMessage:
    """The record at ``pos`` as an operator looks at it (ids, keys, tags, times, hosts, retries)."""
    from mqctl.model import MessageQueue, StoredMessage

    rec = decode_record(buf, pos, check_crc=False)
    props = rec.properties
    return StoredMessage(
        queue=MessageQueue(rec.topic, broker_name, rec.queue_id),
        queue_offset=rec.queue_offset,
        physical_offset=rec.physical_offset,
        msg_id=offset_msg_id(buf, rec.physical_offset, pos),  # type: ignore[arg-type]
        store_timestamp=rec.store_timestamp,
        born_timestamp=rec.born_timestamp,
        born_host=rec.born_host,
        store_host=rec.store_host,
        reconsume_times=rec.reconsume_times,
        size=rec.total_size,
        tags=props.get("TAGS"),
        keys=props.get("KEYS"),
        unique_key=props.get("UNIQ_KEY"),
        properties=tuple(props.items()),
    )
