"""Build broker stores in the exact on-disk format a RocketMQ 5.x broker writes.

Used by ``mqctl demo`` and by tests that need a store. Everything here follows the store spec
(sections 1-4 and the checklist of section 9) so that a real 5.3.3 broker can load the result:
segments are preallocated to their configured size, records carry the broker's CRC and
offsets, consume-queue entries carry the Java hash of the tag, and the config files use the
broker's pretty fastjson style with ``.bak`` copies.

The bytes of one record and one consume-queue unit come from ``mqctl.store.encode``. The writer
also records what it wrote (``messages``) so tests can compare a reader's answers with ground
truth computed independently of the reader modules.
"""

from __future__ import annotations

import ipaddress
import os
import struct
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from mqctl.errors import UsageError
from mqctl.fastjson import dumps_pretty
from mqctl.records import record
from mqctl.store.encode import (
    BLANK_MAGIC,
    CQ_UNIT,
    Host,
    encode_cq_entry,
    encode_record,
    file_name,
    host_bytes,
)
from mqctl.store.metadata import default_group_config
from mqctl.store.offsets import OffsetTable, encode_consumer_offsets

__all__ = ["PutResult", "StoreWriter", "WrittenMessage"]

BLANK_HEADER = 8  # the broker always keeps room for this filler at a segment's end
CHECKPOINT_SIZE = 4096
_PENDING_LIMIT = 1 << 20  # bound the memory of buffered commit-log bytes


@record(frozen=True, slots=True)
class PutResult:
    phys: int
    queue_offset: int
    size: int


@record(frozen=True, slots=True)
class WrittenMessage:
    """Ground truth for one record the writer appended."""

    topic: str
    queue_id: int
    queue_offset: int
    phys: int
    size: int
    store_timestamp: int
    tags: str | None
    keys: str | None


@record(slots=True)
class _QueueState:
    directory: Path
    next_offset: int = 0
    # Entries not yet written to the current file; flushed on file roll, flush() and close().
    pending: bytearray | None = None
    pending_from: int = 0  # queue offset of the first pending entry


def _create_preallocated(path: Path, size: int) -> None:
    # truncate() leaves a sparse, zero-filled file of exactly the configured size, which is
    # what the broker's loader insists on.
    with open(path, "xb") as f:
        f.truncate(size)


def _write_at(path: Path, position: int, data: bytes | bytearray) -> None:
    fd = os.open(path, os.O_WRONLY)
    try:
        view = memoryview(data)
        while view:  # a short write (a disk filling up) is not the end: the next one raises ENOSPC
            written = os.pwrite(fd, view, position)
            view, position = view[written:], position + written
    finally:
        os.close(fd)


class StoreWriter:
    """Append messages, topics, groups and offsets; ``close()`` writes config and checkpoint.

    Not thread-safe; one writer per directory. The directory must not hold a store already
    (``UsageError``). API misuse (unknown topic, decreasing store time) raises ``ValueError``.
    """

    def __init__(
        self,
        root: Path,
        *,
        broker_name: str = "broker-a",
        cluster_name: str = "DefaultCluster",
        commitlog_file_size: int = 1024 * 1024,
        cq_file_size: int = 300 * 20,
        store_host: Host = ("127.0.0.1", 10911),
        born_host: Host = ("127.0.0.1", 50000),
    ) -> None:
        if commitlog_file_size < 4096:
            raise ValueError("commitlog_file_size must be at least 4096 bytes")
        if cq_file_size < CQ_UNIT:
            raise ValueError("cq_file_size must hold at least one entry")
        self.root = Path(root)
        self.broker_name = broker_name
        self.cluster_name = cluster_name
        self.commitlog_file_size = commitlog_file_size
        # MessageStoreConfig.getMappedFileSizeConsumeQueue rounds up to whole entries.
        self.cq_file_size = -(-cq_file_size // CQ_UNIT) * CQ_UNIT
        self.store_host = store_host
        self.born_host = born_host
        host_bytes(store_host)
        host_bytes(born_host)

        self.messages: list[WrittenMessage] = []
        self.topics: dict[str, dict[str, Any]] = {}
        self.groups: dict[str, dict[str, Any]] = {}
        self.offsets: dict[str, dict[int, int]] = {}  # "topic@group" -> {qid: next offset}

        self._queues: dict[tuple[str, int], _QueueState] = {}
        self._segment_start = 0  # start offset of the segment being written
        self._segment_pos = 0
        # Records not yet written to the current segment, which start at _pending_pos.
        self._pending = bytearray()
        self._pending_pos = 0
        self._uniq_prefix = ipaddress.ip_address(born_host[0]).packed
        self._commitlog_min = 0
        self._last_store_ts: int | None = None
        self._uniq_counter = 0
        self._closed = False

        if (self.root / "commitlog").exists() or (self.root / "config").exists():
            raise UsageError(f"{self.root} already holds a store", hint="choose a new or empty directory")
        for sub in ("commitlog", "consumequeue", "config", "index"):
            (self.root / sub).mkdir(parents=True, exist_ok=True)
        _create_preallocated(self._segment_path(0), self.commitlog_file_size)

    # ----------------------------------------------------------------- metadata

    def create_topic(
        self,
        name: str,
        queues: int = 4,
        perm: int = 6,
        order: bool = False,
        *,
        attributes: Mapping[str, str] | None = None,
    ) -> None:
        if name in self.topics:
            raise ValueError(f"topic {name} exists")
        if queues < 1 or not 0 <= perm < 8:
            raise ValueError("queues must be >= 1 and perm in 0..7")
        # Bean properties in fastjson's alphabetical order.
        self.topics[name] = {
            "attributes": dict(attributes or {}),
            "order": order,
            "perm": perm,
            "readQueueNums": queues,
            "topicFilterType": "SINGLE_TAG",
            "topicName": name,
            "topicSysFlag": 0,
            "writeQueueNums": queues,
        }

    def create_group(self, name: str, **fields: Any) -> None:
        """Add a subscription group; ``fields`` override the defaults by their JSON (camelCase) names."""
        if name in self.groups:
            raise ValueError(f"group {name} exists")
        defaults = default_group_config(name)
        unknown = set(fields) - set(defaults) - {"subscriptionDataSet"}
        if unknown:
            raise ValueError(f"unknown subscription group fields: {sorted(unknown)}")
        config = {**defaults, **fields, "groupName": name}
        self.groups[name] = dict(sorted(config.items()))

    def commit_offset(self, group: str, topic: str, queue_id: int, offset: int) -> None:
        """Record a committed offset (the next message to consume) as the broker would persist it."""
        self.offsets.setdefault(f"{topic}@{group}", {})[queue_id] = offset

    # ----------------------------------------------------------------- messages

    def put(
        self,
        topic: str,
        queue_id: int,
        body: bytes,
        *,
        tags: str | None = None,
        keys: str | Iterable[str] | None = None,
        store_timestamp: int,
        born_timestamp: int | None = None,
        properties: Mapping[str, str | None] | None = None,
        reconsume_times: int = 0,
    ) -> PutResult:
        """Append one message to the commit log and its consume queue."""
        self._check_put(topic, queue_id, store_timestamp)
        if keys is not None and not isinstance(keys, str):
            keys = " ".join(keys)
        born_ts = store_timestamp if born_timestamp is None else born_timestamp
        queue = self._queue(topic, queue_id)
        record = encode_record(
            topic=topic,
            queue_id=queue_id,
            queue_offset=queue.next_offset,
            phys=0,
            body=body,
            store_timestamp=store_timestamp,
            born_timestamp=born_ts,
            born_host=self.born_host,
            store_host=self.store_host,
            properties=self._properties(tags, keys, born_ts, properties),
            reconsume_times=reconsume_times,
        )
        phys, size = self._append_record(record)
        queue_offset = queue.next_offset
        self._append_cq(queue, encode_cq_entry(phys, size, tags))
        self._last_store_ts = store_timestamp
        self.messages.append(
            WrittenMessage(
                topic, queue_id, queue_offset, phys, size, store_timestamp, tags or None, keys or None
            )
        )
        return PutResult(phys, queue_offset, size)

    def _check_put(self, topic: str, queue_id: int, store_timestamp: int) -> None:
        self._check_open()
        config = self.topics.get(topic)
        if config is None:
            raise ValueError(f"unknown topic {topic}; create_topic first")
        if not 0 <= queue_id < max(config["readQueueNums"], config["writeQueueNums"]):
            raise ValueError(f"queue {queue_id} does not exist in {topic}")
        if self._last_store_ts is not None and store_timestamp < self._last_store_ts:
            # The broker stamps under the put lock, so store times never go back in log order;
            # readers' time search relies on it.
            raise ValueError(
                f"store timestamp {store_timestamp} is before the previous {self._last_store_ts}"
            )

    def _properties(
        self, tags: str | None, keys: str | None, born_ts: int, properties: Mapping[str, str | None] | None
    ) -> dict[str, str | None]:
        props: dict[str, str | None] = {"TAGS": tags or None, "KEYS": keys or None}
        extra = dict(properties or {})
        if "TAGS" in extra or "KEYS" in extra:
            raise ValueError("pass TAGS and KEYS as tags= and keys=, so the recorded truth matches")
        props["UNIQ_KEY"] = extra.pop("UNIQ_KEY", None) or self._uniq_key(born_ts)
        props["WAIT"] = extra.pop("WAIT", None) or "true"
        props.update(extra)
        return props

    def _append_record(self, record: bytes) -> tuple[int, int]:
        """The record into the commit log (a new segment first when it does not fit): its
        physical offset, patched into the record as the broker does, and its size."""
        size = len(record)
        if size + BLANK_HEADER > self.commitlog_file_size:
            raise ValueError(f"record of {size} bytes does not fit a {self.commitlog_file_size}-byte segment")
        remaining = self.commitlog_file_size - self._segment_pos
        if size + BLANK_HEADER > remaining:
            self._roll_segment(remaining)
        phys = self._segment_start + self._segment_pos
        start = len(self._pending)
        self._pending += record
        struct.pack_into(">q", self._pending, start + 28, phys)
        self._segment_pos += size
        if len(self._pending) >= _PENDING_LIMIT:
            self._flush_commitlog()
        return phys, size

    def _uniq_key(self, born_ts: int) -> str:
        # Shape of MessageClientIDSetter: client IP, pid, class-loader hash, ms since a fixed
        # base, counter. Deterministic so demo stores are reproducible.
        self._uniq_counter = (self._uniq_counter + 1) & 0xFFFF
        tail = struct.pack(">hiIH", 0x1234, 0x6D71C7F1, born_ts & 0xFFFFFFFF, self._uniq_counter)
        return (self._uniq_prefix + tail).hex().upper()

    def _roll_segment(self, remaining: int) -> None:
        # The broker's end-of-file filler: total size = the rest of the file, blank magic.
        self._pending += struct.pack(">ii", remaining, BLANK_MAGIC)
        self._flush_commitlog()
        self._segment_start += self.commitlog_file_size
        self._segment_pos = 0
        self._pending_pos = 0
        _create_preallocated(self._segment_path(self._segment_start), self.commitlog_file_size)

    def _flush_commitlog(self) -> None:
        if self._pending:
            _write_at(self._segment_path(self._segment_start), self._pending_pos, self._pending)
            self._pending = bytearray()
        self._pending_pos = self._segment_pos

    def _segment_path(self, start: int) -> Path:
        return self.root / "commitlog" / file_name(start)

    def _queue(self, topic: str, queue_id: int) -> _QueueState:
        state = self._queues.get((topic, queue_id))
        if state is None:
            directory = self.root / "consumequeue" / topic / str(queue_id)
            directory.mkdir(parents=True, exist_ok=True)
            state = _QueueState(directory)
            self._queues[(topic, queue_id)] = state
        return state

    def _append_cq(self, queue: _QueueState, entry: bytes) -> None:
        byte_pos = queue.next_offset * CQ_UNIT
        file_start = byte_pos - byte_pos % self.cq_file_size
        if byte_pos == file_start:
            self._flush_queue(queue)
            _create_preallocated(queue.directory / file_name(file_start), self.cq_file_size)
        if queue.pending is None:
            queue.pending = bytearray()
            queue.pending_from = queue.next_offset
        queue.pending += entry
        queue.next_offset += 1

    def _flush_queue(self, queue: _QueueState) -> None:
        if not queue.pending:
            return
        byte_pos = queue.pending_from * CQ_UNIT
        file_start = byte_pos - byte_pos % self.cq_file_size
        _write_at(queue.directory / file_name(file_start), byte_pos - file_start, queue.pending)
        queue.pending = None

    # ----------------------------------------------------------------- expiry

    def expire_commitlog_before(self, segment_count: int) -> None:
        """Delete commit-log segments numbered below ``segment_count``, as the broker's cleaner does.

        The commit-log min becomes ``segment_count * commitlog_file_size``. Then, per queue,
        consume-queue files are deleted oldest first while the last entry of the file points
        below that min, never the queue's last file (``deleteExpiredFileByOffset``).
        """
        self._check_open()
        new_min = segment_count * self.commitlog_file_size
        if new_min > self._segment_start:
            raise ValueError("the segment being written cannot expire")
        if new_min <= self._commitlog_min:
            return
        self.flush()
        for start in range(self._commitlog_min, new_min, self.commitlog_file_size):
            self._segment_path(start).unlink()
        self._commitlog_min = new_min
        for queue in self._queues.values():
            files = sorted(p for p in queue.directory.iterdir() if p.name.isdigit())
            for path in files[:-1]:
                with open(path, "rb") as f:
                    f.seek(self.cq_file_size - CQ_UNIT)
                    (last_phys,) = struct.unpack(">q", f.read(8))
                if last_phys >= new_min:
                    break
                path.unlink()

    # ----------------------------------------------------------------- truth

    @property
    def commitlog_min_offset(self) -> int:
        return self._commitlog_min

    @property
    def commitlog_max_offset(self) -> int:
        return self._segment_start + self._segment_pos

    def truth_max_offset(self, topic: str, queue_id: int) -> int:
        """Next queue offset to be written = number of messages ever put in the queue."""
        return sum(1 for m in self.messages if m.topic == topic and m.queue_id == queue_id)

    def truth_min_offset(self, topic: str, queue_id: int) -> int:
        """First queue offset whose record is still in the commit log (max when none is)."""
        live = [
            m.queue_offset
            for m in self.messages
            if m.topic == topic and m.queue_id == queue_id and m.phys >= self._commitlog_min
        ]
        return min(live) if live else self.truth_max_offset(topic, queue_id)

    def broker_conf_lines(self) -> list[str]:
        """``broker.conf`` settings a real broker needs to load this store as written."""
        return [
            f"brokerClusterName={self.cluster_name}",
            f"brokerName={self.broker_name}",
            f"storePathRootDir={self.root}",
            f"storePathCommitLog={self.root / 'commitlog'}",
            f"mappedFileSizeCommitLog={self.commitlog_file_size}",
            f"mappedFileSizeConsumeQueue={self.cq_file_size}",
        ]

    # ----------------------------------------------------------------- close

    def flush(self) -> None:
        """Write buffered records and consume-queue entries to their files."""
        self._flush_commitlog()
        for queue in self._queues.values():
            self._flush_queue(queue)

    def close(self, *, data_version_timestamp: int | None = None) -> None:
        """Flush queues, write the config files (+ ``.bak``) and the checkpoint. Idempotent."""
        if self._closed:
            return
        self.flush()
        stamp = data_version_timestamp if data_version_timestamp is not None else (self._last_store_ts or 0)
        config = self.root / "config"
        topics = {
            "dataVersion": _data_version(len(self.topics), stamp),
            "topicConfigTable": self.topics,
        }
        groups = {
            "dataVersion": _data_version(len(self.groups), stamp),
            "forbiddenTable": {},
            "subscriptionGroupTable": self.groups,
        }
        _persist(config / "topics.json", dumps_pretty(topics))
        _persist(config / "subscriptionGroup.json", dumps_pretty(groups))
        _persist(config / "consumerOffset.json", self._encode_offsets(stamp))
        self._write_checkpoint()
        self._closed = True

    def _encode_offsets(self, stamp: int) -> str:
        table = OffsetTable(
            offsets={k: dict(sorted(v.items())) for k, v in self.offsets.items()},
            data_version=_data_version(0, stamp),
        )
        return encode_consumer_offsets(table).decode("utf-8")

    def _write_checkpoint(self) -> None:
        newest = self._last_store_ts or 0
        end = self.commitlog_max_offset
        # Timestamps >= the newest record keep abnormal recovery from rewinding; offsets = log end.
        head = struct.pack(">qqqqq", newest, newest, newest, end, end)
        (self.root / "checkpoint").write_bytes(head + bytes(CHECKPOINT_SIZE - len(head)))

    def _check_open(self) -> None:
        if self._closed:
            raise ValueError("writer is closed")

    def __enter__(self) -> StoreWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _data_version(counter: int, timestamp: int) -> dict[str, int]:
    return {"counter": counter, "stateVersion": 0, "timestamp": timestamp}


def _persist(path: Path, text: str) -> None:
    # 5.1-5.3.3 ConfigManager.persist: copy the current file to .bak, then rewrite it. A broker
    # that has run for a while has persisted the same content at least twice, so .bak == file.
    data = text.encode("utf-8")
    path.write_bytes(data)
    path.with_name(path.name + ".bak").write_bytes(data)
