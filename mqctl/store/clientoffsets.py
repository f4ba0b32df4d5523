"""A broadcasting consumer's ``offsets.json`` (``LocalFileOffsetStore``): decode it as every client
line writes it, encode it byte for byte as the client would, load it with the client's ``.bak``
rule, and write it safely while the client is stopped.

The file (spec rocketmq-store.md 2.7; what each version does: the project's broadcast notes) is
``<dir>/<clientId>/<group>/offsets.json``; its text is ``OffsetSerializeWrapper.toJson(true)``: one
property ``offsetTable``, a map whose keys are MessageQueue objects (``brokerName``, ``queueId``,
``topic``) and whose values are the next offset to consume. Two layouts exist:

* ``fastjson`` (clients 4.x to 5.3, fastjson 1): ``{`` newline, TAB ``"offsetTable":{{`` ... each
  key object opens right after the ``{`` or ``,`` before it, its fields one per line three TABs in,
  ``}:OFFSET`` two TABs in; an empty table is ``{}``.
* ``fastjson2`` (clients 5.5, fastjson2): every key object starts on a line of its own, two TABs
  in, and each ``}:OFFSET,`` ends its line.

Neither ends with a newline. Entries follow the client's ConcurrentHashMap iteration order
(:func:`client_order`).

The client reads the file (readLocalOffset) whole; when it is missing, empty or unparsable it reads
``offsets.json.bak`` (readLocalOffsetBak); a ``.bak`` that does not parse stops the client's start
(MQClientException). mqctl applies the same rule (``load_client_offsets``) except that it never
reads a file it could not parse as "no offsets": that is a ``StoreCorruptError`` naming the file.
Writing it while its client is stopped: ``store.clientwrite``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from mqctl.errors import StoreCorruptError, StoreError
from mqctl.fastjson import FrozenKey, dumps_compact, loads
from mqctl.model import MessageQueue
from mqctl.model.javaorder import concurrent_hashmap_order, message_queue_hash
from mqctl.model.queues import JAVA_INT
from mqctl.records import record, replace
from mqctl.store.offsets import LoadedConfig, as_int, decode_document, load_config_file

__all__ = [
    "BAK_SUFFIX",
    "CLIENT_OFFSETS_FILE",
    "DEFAULT_STORE_DIR",
    "DIALECTS",
    "FASTJSON",
    "FASTJSON2",
    "MAX_CLIENT_OFFSETS_BYTES",
    "PERSIST_INTERVAL_MS",
    "ClientOffsetTable",
    "client_order",
    "decode_client_offsets",
    "detect_dialect",
    "encode_client_offsets",
    "load_client_offsets",
]

CLIENT_OFFSETS_FILE = "offsets.json"
BAK_SUFFIX = ".bak"
DEFAULT_STORE_DIR = ".rocketmq_offsets"  # under the client's user.home
PERSIST_INTERVAL_MS = 5000  # ClientConfig.persistConsumerOffsetInterval's default

# A client keeps one entry (about 100 bytes) per queue of the topics it subscribes to: a million
# queues stay under this. Anything larger is not a client's offsets.json.
MAX_CLIENT_OFFSETS_BYTES = 128 * 1024 * 1024

FASTJSON = "fastjson"
FASTJSON2 = "fastjson2"
DIALECTS = {
    FASTJSON: "RocketMQ clients 4.x to 5.3 (fastjson 1)",
    FASTJSON2: "RocketMQ clients 5.5 (fastjson2)",
}

_INT32 = JAVA_INT
_MQ_FIELDS = ("brokerName", "queueId", "topic")


@record(frozen=True)
class ClientOffsetTable:
    """The decoded file: (queue, next offset) in the file's order, and the layout it was written in
    (None when the text does not tell, e.g. compact or hand-written JSON)."""

    entries: tuple[tuple[MessageQueue, int], ...]
    dialect: str | None = None

    def as_dict(self) -> dict[MessageQueue, int]:
        return dict(self.entries)


# ---------------------------------------------------------------------------------------------
# Decode


def detect_dialect(data: bytes) -> str | None:
    """Which client layout wrote ``data`` (``FASTJSON`` / ``FASTJSON2``), None when neither."""
    if data.startswith(b'{\n\t"offsetTable":{{\n') or data == b'{\n\t"offsetTable":{}\n}':
        return FASTJSON
    if data.startswith(b'{\n\t"offsetTable":{\n\t\t{\n'):
        return FASTJSON2
    return None


def _queue_of(key: Any, what: str) -> MessageQueue:
    if isinstance(key, str):
        # fastjson also accepts a key written as a string holding the object's JSON.
        try:
            key = loads(key)
        except StoreCorruptError:
            raise StoreCorruptError(f"{what}: offsetTable key {key!r} is not a MessageQueue object") from None
        key = FrozenKey(key) if isinstance(key, dict) else key
    if not isinstance(key, FrozenKey):
        raise StoreCorruptError(f"{what}: offsetTable key {key!r} is not a MessageQueue object")
    topic, broker = key.get("topic"), key.get("brokerName")
    if not isinstance(topic, str) or not topic or not isinstance(broker, str) or not broker:
        raise StoreCorruptError(f"{what}: MessageQueue key {key!r} lacks its topic or brokerName")
    if key.get("queueId") is None:
        raise StoreCorruptError(f"{what}: MessageQueue key {key!r} lacks its queueId")
    qid = as_int(key.get("queueId"), f"{what}: queueId of {topic}/{broker}", _INT32)
    if qid < 0:
        raise StoreCorruptError(f"{what}: negative queueId {qid} for {topic}/{broker}")
    return MessageQueue(topic, broker, qid)


def decode_client_offsets(data: bytes, what: str = CLIENT_OFFSETS_FILE) -> ClientOffsetTable:
    """Decode ``offsets.json`` as any client line writes it (fastjson-lenient: quoted numbers,
    fields in any order, compact or pretty); ``StoreCorruptError`` naming ``what`` otherwise."""
    doc = decode_document(data, what)
    raw = doc.get("offsetTable")
    if raw is None:
        # Every client writes "offsetTable" (empty: {}); a document without it is not its file.
        raise StoreCorruptError(f"{what}: no offsetTable (not an offsets.json a RocketMQ client wrote)")
    if not isinstance(raw, dict):
        raise StoreCorruptError(f"{what}: offsetTable is not an object")
    entries: dict[MessageQueue, int] = {}
    for key, value in raw.items():
        mq = _queue_of(key, what)
        if value is None:
            raise StoreCorruptError(f"{what}: no offset for {mq.topic}/{mq.broker_name}/{mq.queue_id}")
        entries[mq] = as_int(value, f"{what}: offset of {mq.topic}/{mq.broker_name}/{mq.queue_id}")
    return ClientOffsetTable(tuple(entries.items()), detect_dialect(bytes(data)))


# ---------------------------------------------------------------------------------------------
# Encode


def client_order(entries: Iterable[tuple[MessageQueue, int]]) -> list[tuple[MessageQueue, int]]:
    """The order the client writes ``entries`` in: its ConcurrentHashMap's (buckets of
    ``MessageQueue.hashCode``); entries sharing a bucket keep the order given (the client's is
    the order it first learnt them in, which a file's own order reflects)."""
    return concurrent_hashmap_order(entries, message_queue_hash)


def _key_lines(mq: MessageQueue, indent: str) -> list[str]:
    return [
        f"{indent}{dumps_compact('brokerName')}:{dumps_compact(mq.broker_name)},",
        f"{indent}{dumps_compact('queueId')}:{mq.queue_id},",
        f"{indent}{dumps_compact('topic')}:{dumps_compact(mq.topic)}",
    ]


def encode_client_offsets(entries: Sequence[tuple[MessageQueue, int]], dialect: str = FASTJSON) -> bytes:
    """The client's own text for ``entries`` (in the order given), UTF-8, in ``dialect``'s layout."""
    if dialect not in DIALECTS:
        raise ValueError(f"unknown offsets.json dialect {dialect!r}")
    if not entries:
        return b'{\n\t"offsetTable":{}\n}'
    parts = ['{\n\t"offsetTable":{']
    for i, (mq, offset) in enumerate(entries):
        if dialect == FASTJSON:
            parts.append("{\n" if i == 0 else ",{\n")
        else:
            parts.append("\n\t\t{\n" if i == 0 else ",\n\t\t{\n")
        parts.append("\n".join(_key_lines(mq, "\t\t\t")))
        parts.append(f"\n\t\t}}:{int(offset)}")
    parts.append("\n\t}\n}")
    return "".join(parts).encode("utf-8")


# ---------------------------------------------------------------------------------------------
# Load with the client's .bak rule


def load_client_offsets(
    path: Path, *, retries: int = 3, retry_delay: float | None = None
) -> LoadedConfig[ClientOffsetTable]:
    """``path`` (an offsets.json) as the client's readLocalOffset would load it: the file, else its
    ``.bak`` when the file is missing, empty or unparsable (re-read a few times first: a running
    5.x client truncates and rewrites it in place). ``value`` None: neither holds anything, the
    client starts afresh. A file that stays unparsable with no usable ``.bak``, or a ``.bak`` that
    does not parse when it is needed, is a ``StoreCorruptError`` naming the file."""
    path = Path(path)
    try:
        loaded = load_config_file(
            path,
            decode_client_offsets,
            retries=retries,
            retry_delay=retry_delay,
            owner="client",
            limit=MAX_CLIENT_OFFSETS_BYTES,
        )
    except StoreError as exc:
        if str(path) in exc.message:
            raise
        # Every client's file has the same name: the message names the one that refuses.
        raise type(exc)(f"{path}: {exc.message}", exc.hint) from None
    if loaded.warning is not None and str(path) not in loaded.warning:
        loaded = replace(loaded, warning=f"{path.parent}: {loaded.warning}")
    return loaded
