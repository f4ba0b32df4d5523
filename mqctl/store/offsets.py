"""``config/consumerOffset.json``: decode, encode in the broker's exact style, and load with the
broker's ``.bak`` fallback rule (which a broadcasting client's ``offsets.json`` shares:
``store.clientoffsets``)."""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from mqctl.errors import StoreCorruptError, StoreError
from mqctl.fastjson import dumps_pretty, loads
from mqctl.model.javaorder import string_order
from mqctl.model.queues import JAVA_INT, JAVA_LONG, java_split
from mqctl.records import field, record

if TYPE_CHECKING:
    from mqctl.model import MessageQueue
from mqctl.store.configread import DENIED_HINT, ConfigUnreadable, read_config_bytes

__all__ = [
    "BROADCAST",
    "COMMITTED",
    "CONSUMER_OFFSET_FILE",
    "LoadedConfig",
    "LoadedOffsets",
    "OffsetTable",
    "decode_consumer_offsets",
    "encode_consumer_offsets",
    "load_config_file",
    "load_consumer_offsets",
    "split_offset_key",
]

CONSUMER_OFFSET_FILE = "consumerOffset.json"
TOPIC_GROUP_SEPARATOR = "@"

_INT_TEXT = re.compile(r"-?\d+", re.ASCII)
_INT32, _INT64 = JAVA_INT, JAVA_LONG

T = TypeVar("T")


# ---------------------------------------------------------------------------------------------
# Lenient scalar conversion shared with metadata.py


def as_int(value: Any, what: str, bounds: tuple[int, int] = _INT64) -> int:
    """An int as fastjson would accept it: a number, or a string holding one (``"12"``)."""
    if isinstance(value, int) and not isinstance(value, bool):
        n = value
    elif isinstance(value, str) and _INT_TEXT.fullmatch(value.strip()):
        if len(value.strip()) > 20:  # beyond any int64 (and past int()'s 4,300-digit guard)
            raise StoreCorruptError(f"{what}: {value.strip()[:24]}... is out of range")
        n = int(value.strip())
    else:
        raise StoreCorruptError(f"{what}: expected an integer, got {value!r}")
    if not bounds[0] <= n <= bounds[1]:
        raise StoreCorruptError(f"{what}: {n} is out of range")
    return n


def decode_document(data: bytes, what: str) -> dict[Any, Any]:
    """Bytes -> top-level JSON object; every failure is a ``StoreCorruptError`` naming ``what``."""
    try:
        text = bytes(data).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise StoreCorruptError(f"{what}: not UTF-8 text (byte {exc.start})") from None
    if not text.strip():
        raise StoreCorruptError(f"{what}: empty")
    try:
        doc = loads(text)
    except StoreCorruptError as exc:
        raise StoreCorruptError(f"{what}: {exc.message}") from None
    if not isinstance(doc, dict):
        raise StoreCorruptError(f"{what}: top level is not a JSON object")
    return doc


# ---------------------------------------------------------------------------------------------
# Keys of the offset table

COMMITTED = "committed"
BROADCAST = "broadcast"


def split_offset_key(key: str) -> tuple[str, str, str] | None:
    """``topic@group`` -> (topic, group, "committed"); a 5.x broker's ``topic@group@broadcast``
    (pull offsets of a broadcasting group, not committed offsets) -> (topic, group, "broadcast").

    Topic and group names cannot contain ``@`` (the broker validates them), so the parts are
    exact. Anything else (no ``@``, an empty part, an unknown suffix) is None: not a group's.
    """
    parts = key.split(TOPIC_GROUP_SEPARATOR)
    if len(parts) == 2 and all(parts):
        return parts[0], parts[1], COMMITTED
    if len(parts) == 3 and parts[0] and parts[1] and parts[2] == BROADCAST:
        return parts[0], parts[1], BROADCAST
    return None


def broadcast_entries(
    tables: Mapping[str, Mapping[str, Mapping[int, int]]], group: str | None = None
) -> dict[str, dict[MessageQueue, int]]:
    """group -> queue -> pull position: the ``topic@group@broadcast`` entries of each broker's
    offset table (broker name -> table), every group's or ``group``'s."""
    from mqctl.model import MessageQueue

    out: dict[str, dict[MessageQueue, int]] = {}
    for broker, table in tables.items():
        for key, queues in table.items():
            parts = split_offset_key(key)
            if parts is not None and parts[2] == BROADCAST and group in (None, parts[1]):
                mine = out.setdefault(parts[1], {})
                mine.update((MessageQueue(parts[0], broker, qid), off) for qid, off in queues.items())
    return out


# ---------------------------------------------------------------------------------------------
# The table


@record(frozen=True)
class OffsetTable:
    """The persisted part of the broker's ConsumerOffsetManager.

    ``offsets`` maps ``"topic@group"`` to ``{queueId: next offset to consume}`` in the order the
    file held them (the broker's hash order), so a rewrite changes only what was changed.
    ``extra`` holds other top-level properties (e.g. 5.x ``lmqOffsetTable``) to write back.
    """

    offsets: dict[str, dict[int, int]] = field(default_factory=dict)
    data_version: dict[str, Any] | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def with_offsets(
        self, group: str, changes: Mapping[tuple[str, int], int], now_ms: int | None = None
    ) -> OffsetTable:
        """A new table with ``changes`` applied for ``group``; everything else is kept as is.

        Bumps ``dataVersion.counter``: a RocksDB-backed 5.x broker imports the JSON only when
        its counter is greater than its own.
        """
        now = int(time.time() * 1000) if now_ms is None else now_ms
        offsets = {key: dict(queues) for key, queues in self.offsets.items()}
        for (topic, qid), offset in changes.items():
            offsets.setdefault(f"{topic}{TOPIC_GROUP_SEPARATOR}{group}", {})[qid] = offset
        if self.data_version is None:
            version: dict[str, Any] = {"counter": 1, "stateVersion": 0, "timestamp": now}
        else:
            version = dict(self.data_version)
            version["counter"] = as_int(version.get("counter", 0), "dataVersion.counter") + 1
            version["timestamp"] = now
        return OffsetTable(offsets=offsets, data_version=version, extra=dict(self.extra))


def _checked_int_map(key: Any, queues: Any, what: str) -> dict[int, int]:
    """One topic@group entry read and checked queue by queue (a table ``_plain_int_maps`` refused)."""
    if not isinstance(key, str):
        raise StoreCorruptError(f"{what}: offsetTable key {key!r} is not a topic@group string")
    if not isinstance(queues, dict):
        raise StoreCorruptError(f"{what}: offsetTable[{key!r}] is not an object")
    where = f"{what}: {key!r}"
    return {
        as_int(qid, f"{where}: queue id", _INT32): as_int(off, f"{where}: offset")
        for qid, off in queues.items()
    }


def _plain_int_maps(raw_table: dict[Any, Any]) -> dict[str, dict[int, int]] | None:
    """The whole table at once when it is what brokers write: string keys, each to a map of int
    queue ids (int32) to int offsets (int64). The maps are the parser's own, kept as they are. None
    for anything else (``_checked_int_map`` then reads and checks entry by entry, with its errors). A
    table of 1,000 groups: 0.3 ms, where one check per map took 1.6."""
    from itertools import chain

    if not all(type(k) is str and type(v) is dict for k, v in raw_table.items()):
        return None
    ids = list(chain.from_iterable(raw_table.values()))
    offsets = list(chain.from_iterable(m.values() for m in raw_table.values()))
    if not all(type(i) is int for i in ids) or not all(type(o) is int for o in offsets):
        return None
    if ids and not (_INT32[0] <= min(ids) and max(ids) <= _INT32[1]):
        return None
    if offsets and not (_INT64[0] <= min(offsets) and max(offsets) <= _INT64[1]):
        return None
    return raw_table


def _decode_data_version(value: Any, what: str) -> dict[str, Any] | None:
    if value is None:
        return None
    if not isinstance(value, dict):
        raise StoreCorruptError(f"{what}: dataVersion is not an object")
    return {
        k: as_int(v, f"{what}: dataVersion.{k}") if k in ("counter", "stateVersion", "timestamp") else v
        for k, v in value.items()
    }


def decode_consumer_offsets(data: bytes, what: str = CONSUMER_OFFSET_FILE) -> OffsetTable:
    """Decode consumerOffset.json (4.x or 5.x, pretty or compact, fastjson-lenient)."""
    doc = decode_document(data, what)
    raw_table = doc.get("offsetTable")
    if raw_table is None:
        # Every broker writes "offsetTable" (empty: {}); a document without it is not a broker's
        # consumerOffset.json. The broker would load it as "no offsets", which reads as no lag.
        raise StoreCorruptError(f"{what}: no offsetTable (not a consumerOffset.json a broker wrote)")
    if not isinstance(raw_table, dict):
        raise StoreCorruptError(f"{what}: offsetTable is not an object")
    offsets = _plain_int_maps(raw_table)
    if offsets is None:
        offsets = {key: _checked_int_map(key, queues, what) for key, queues in raw_table.items()}
    extra = {k: v for k, v in doc.items() if k not in ("offsetTable", "dataVersion", "groupTopicMap")}
    return OffsetTable(offsets, _decode_data_version(doc.get("dataVersion"), what), extra)


def java_topic_and_group(key: str) -> tuple[str, str] | None:
    """(topic, group) when Java's ``key.split("@")`` gives exactly two parts, as the broker reads
    its own keys (getGroupTopicMap, whichTopicByConsumer); None otherwise. Unlike
    ``split_offset_key`` an empty topic counts, as it does for the broker."""
    parts = java_split(key, TOPIC_GROUP_SEPARATOR)
    return (parts[0], parts[1]) if len(parts) == 2 else None


def _group_topic_map(offsets: Mapping[str, Any]) -> dict[str, tuple[str, ...]]:
    # As the broker's getGroupTopicMap.
    by_group: dict[str, list[str]] = {}
    for key in offsets:
        pair = java_topic_and_group(key)
        if pair is not None:
            by_group.setdefault(pair[1], []).append(pair[0])
    return {g: tuple(string_order(by_group[g], 8)) for g in string_order(by_group, 128)}


def encode_consumer_offsets(table: OffsetTable) -> bytes:
    """The broker's own pretty text (``ConsumerOffsetManager.encode(true)``), UTF-8."""
    props: dict[str, Any] = dict(table.extra)
    if table.data_version is not None:
        props["dataVersion"] = table.data_version
    props["groupTopicMap"] = _group_topic_map(table.offsets)
    props["offsetTable"] = table.offsets
    # fastjson writes bean properties alphabetically, extras (lmqOffsetTable) included.
    return dumps_pretty({k: props[k] for k in sorted(props)}).encode("utf-8")


# ---------------------------------------------------------------------------------------------
# Loading with the broker's fallback rule (spec 2.6)


@record(frozen=True)
class LoadedConfig(Generic[T]):
    """A config file as the broker would load it: ``value`` None means "start empty"."""

    value: T | None
    path: Path | None
    fell_back: bool
    warning: str | None


def _exists(path: Path) -> bool:
    try:
        return path.exists()
    except OSError as exc:
        raise StoreError(f"cannot read {path}: {exc.strerror or exc}", DENIED_HINT) from None


# How long a reader waits before re-reading a config file a broker (or client) may be rewriting in
# place. Looked up at each load, so a test can take the wait out without taking the retries out.
RETRY_DELAY_S = 0.05


def load_config_file(
    path: Path,
    decode: Callable[[bytes, str], T],
    *,
    retries: int = 3,
    retry_delay: float | None = None,
    sleep: Callable[[float], None] = time.sleep,
    owner: str = "broker",
    limit: int | None = None,
) -> LoadedConfig[T]:
    """Load ``path`` like ``ConfigManager.load``: the file, else ``path.bak``, else nothing.

    A running 5.1-5.3 broker truncates and rewrites the file in place every few seconds (4.x
    and develop briefly remove it), so an empty, missing or unparsable main file is re-read a
    few times before falling back. A ``.bak`` that exists but does not parse is fatal, as it
    is for the broker's startup; so is a main file that stays unparsable with no usable
    ``.bak`` (mqctl never reads data it could not parse as "no offsets").

    A broadcasting client's ``offsets.json`` follows the same rule (``LocalFileOffsetStore``'s
    readLocalOffset / readLocalOffsetBak): ``owner`` names who writes the file in the messages,
    ``limit`` bounds the bytes read.
    """
    bak = path.with_name(path.name + ".bak")
    delay = RETRY_DELAY_S if retry_delay is None else retry_delay
    outcome = _read_main_file(path, bak, decode, retries, delay, sleep, limit)
    if isinstance(outcome, LoadedConfig):
        return outcome
    return _fall_back_to_bak(path, bak, outcome, decode, owner, limit)


def _read_main_file(
    path: Path,
    bak: Path,
    decode: Callable[[bytes, str], T],
    retries: int,
    retry_delay: float,
    sleep: Callable[[float], None],
    limit: int | None,
) -> LoadedConfig[T] | str:
    """The main file decoded, re-read while it may be mid-rewrite; else why it was not usable."""
    reason = ""
    for attempt in range(retries + 1):
        try:
            data = read_config_bytes(path, limit)
        except ConfigUnreadable as exc:
            # Not a regular file, or too big: the broker's file2String reads such a file as empty
            # (a device's length is 0) or fails (>= 2 GiB); either way it loads the .bak.
            return f"unreadable ({exc.why})"
        if data is None:
            reason = "missing"
            if not _exists(bak):
                break  # nothing is being rewritten: a fresh store
        elif not data.strip():
            reason = "empty"
        else:
            try:
                return LoadedConfig(decode(data, path.name), path, False, None)
            except StoreCorruptError as exc:
                reason = f"unparsable ({exc.message})"
        if attempt < retries:
            sleep(retry_delay)
    return reason


def _fall_back_to_bak(
    path: Path,
    bak: Path,
    reason: str,
    decode: Callable[[bytes, str], T],
    owner: str,
    limit: int | None,
) -> LoadedConfig[T]:
    """The broker's fallback once the main file gave ``reason``: the ``.bak``, else empty."""
    bak_data = read_config_bytes(bak, limit)
    if bak_data is None or not bak_data.strip():
        state = "missing" if bak_data is None else "empty"
        if reason.startswith(("unparsable", "unreadable")):
            # The file is there but cannot be read: reading it as empty would show "no lag" and
            # pass every gate. (A missing or empty file is a fresh broker: that is empty.)
            raise StoreCorruptError(
                f"{path} is {reason} and {bak.name} is {state}",
                hint=f"the data cannot be read; restore the file (or its .bak) from the {owner}",
            )
        return LoadedConfig(
            None,
            None,
            False,
            f"{path.name} is {reason} and {bak.name} is {state}: reading it as empty, as the {owner} would",
        )
    try:
        value = decode(bak_data, bak.name)
    except StoreCorruptError as exc:
        raise StoreCorruptError(
            f"{path.name} is {reason} and its backup {bak.name} is corrupt too: {exc.message}",
            hint=f"the {owner} would refuse to start on it; restore the file by hand",
        ) from None
    return LoadedConfig(
        value, bak, True, f"{path.name} is {reason}; using {bak.name}, the {owner}'s fallback"
    )


@record(frozen=True)
class LoadedOffsets:
    table: OffsetTable
    path: Path | None
    fell_back: bool
    warning: str | None


def load_consumer_offsets(
    config_dir: Path, *, retries: int = 3, retry_delay: float | None = None
) -> LoadedOffsets:
    loaded = load_config_file(
        Path(config_dir) / CONSUMER_OFFSET_FILE,
        decode_consumer_offsets,
        retries=retries,
        retry_delay=retry_delay,
    )
    table = loaded.value if loaded.value is not None else OffsetTable()
    return LoadedOffsets(table, loaded.path, loaded.fell_back, loaded.warning)
