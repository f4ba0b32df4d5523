"""The journal of resets written into broadcasting clients' offsets.json files.

Records sit in the broker resets' journal directory (``ops.journal.journal_dir``) under ids of
the same form (a UTC timestamp first), so ``--undo latest`` is the latest reset of either kind
and ``--undo ID`` finds both; the schema (``CLIENT_JOURNAL_SCHEMA``) tells them apart. A record
names the brokers the targets were range-checked against (undo checks again) and, per client
file, its bytes before and after (base64: a 4.x client writes the platform charset) with the
per-queue changes. Written ``pending`` before any file, ``applied`` once every file took its new
bytes, ``partial`` (naming the files written) when a write stopped part-way.
"""

from __future__ import annotations

import base64
import binascii
import json
import secrets
import time
from pathlib import Path
from typing import Any

from mqctl import fsio
from mqctl.errors import NotFoundError, StoreError, UsageError
from mqctl.model import BackendKind, BackendTarget, MessageQueue, OffsetChange
from mqctl.model.broadcast import CLIENT_JOURNAL_SCHEMA, ClientJournal, ClientWrite
from mqctl.model.queues import JAVA_LONG

_LONG = (-1, JAVA_LONG[1])  # an offset, or -1: none


def new_id(group: str, now_ms: int) -> str:
    """``YYYYmmddTHHMMSSmmmZ-group-hex``: the broker journal's form, so both kinds sort by time."""
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime(now_ms / 1000)) + f"{now_ms % 1000:03d}Z"
    safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in group)[:60]
    return f"{stamp}-{safe}-{secrets.token_hex(3)}"


def _path_of(ref: str, directory: Path) -> Path | None:
    from mqctl.ops.journal import list_journal

    if ref == "latest":
        files = list_journal(directory)
        return files[-1] if files else None
    candidate = Path(ref)
    path = candidate if candidate.suffix == ".json" and candidate.exists() else directory / f"{ref}.json"
    return path if path.is_file() else None


def _schema(path: Path) -> object:
    try:
        with open(path, "rb") as f:
            head = f.read(256)
    except OSError:
        return None
    text = head.decode("utf-8", errors="replace")
    return CLIENT_JOURNAL_SCHEMA if f'"schema": "{CLIENT_JOURNAL_SCHEMA}"' in text else None


def is_client_journal(ref: str, directory: Path | None = None) -> bool:
    """Whether ``--undo ref`` names a reset of client files (else a broker reset, or nothing)."""
    from mqctl.ops.journal import journal_dir

    path = _path_of(ref.strip(), journal_dir() if directory is None else directory)
    return path is not None and _schema(path) == CLIENT_JOURNAL_SCHEMA


def _doc(record: ClientJournal) -> dict[str, Any]:
    t = record.target
    doc: dict[str, Any] = {
        "schema": CLIENT_JOURNAL_SCHEMA,
        "id": record.id,
        "createdMs": record.created_ms,
        "state": record.state,
        "group": record.group,
        "topic": record.topic,
        "persistIntervalMs": record.persist_interval_ms,
        **({"undoOf": record.undo_of} if record.undo_of is not None else {}),
        "backend": t.kind.value,
        **({"stores": dict(t.stores)} if t.kind.reads_files else {"namesrv": t.namesrv}),
        "clients": [],
    }
    for c in record.clients:
        doc["clients"].append(
            {
                "path": c.path,
                "clientId": c.client_id,
                "host": c.host,
                "written": c.written,
                "beforeBase64": base64.b64encode(c.before).decode("ascii"),
                "afterBase64": base64.b64encode(c.after).decode("ascii"),
                "changes": [
                    {
                        "topic": x.queue.topic,
                        "brokerName": x.queue.broker_name,
                        "queueId": x.queue.queue_id,
                        "before": x.before,
                        "after": x.after,
                    }
                    for x in c.changes
                ],
            }
        )
    return doc


def write(record: ClientJournal, directory: Path) -> Path:
    """The record, whole or absent (temp, fsync, rename, directory fsync)."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
        path = directory / f"{record.id}.json"
        data = (json.dumps(_doc(record), indent=2, ensure_ascii=False) + "\n").encode("utf-8")
        fsio.atomic_write(path, data, mode=0o600)
    except OSError as exc:
        from mqctl.ops.journal import JOURNAL_ENV

        raise StoreError(
            f"cannot write the undo journal in {directory}: {exc.strerror or exc}; nothing written "
            f"(set {JOURNAL_ENV} to a writable directory)"
        ) from None
    return path


def _get(d: Any, key: str, kind: type) -> Any:
    v = d.get(key) if isinstance(d, dict) else None
    if isinstance(v, bool) and kind is not bool or not isinstance(v, kind):
        raise ValueError(f"{key} is missing or not {kind.__name__}")
    return v


def _change(c: Any) -> OffsetChange:
    mq = MessageQueue(_get(c, "topic", str), _get(c, "brokerName", str), _get(c, "queueId", int))
    before, after = _get(c, "before", int), _get(c, "after", int)
    if not (_LONG[0] <= before <= _LONG[1] and _LONG[0] <= after <= _LONG[1]) or mq.queue_id < 0:
        raise ValueError(f"change of {mq.topic}/{mq.broker_name}/{mq.queue_id} out of range")
    return OffsetChange(mq, before, after)


def _client(c: Any) -> ClientWrite:
    try:
        before = base64.b64decode(_get(c, "beforeBase64", str), validate=True)
        after = base64.b64decode(_get(c, "afterBase64", str), validate=True)
    except binascii.Error:
        raise ValueError("beforeBase64/afterBase64 is not base64") from None
    cid, host = c.get("clientId"), c.get("host")
    return ClientWrite(
        path=_get(c, "path", str),
        client_id=cid if isinstance(cid, str) else None,
        host=host if isinstance(host, str) else None,
        before=before,
        after=after,
        changes=tuple(_change(x) for x in _get(c, "changes", list)),
        written=bool(c.get("written")),
    )


def _target(doc: dict[str, Any]) -> BackendTarget:
    kind = BackendKind(_get(doc, "backend", str))
    if kind.reads_files:
        stores = _get(doc, "stores", dict)
        if not stores or not all(isinstance(k, str) and isinstance(v, str) for k, v in stores.items()):
            raise ValueError("stores is not a map of broker names to store roots")
        return BackendTarget(kind, tuple(stores.items()))
    return BackendTarget(kind, namesrv=_get(doc, "namesrv", str))


def read(ref: str, directory: Path | None = None) -> ClientJournal:
    """A client-files record by id, path or ``latest``; a record that does not parse is exit 2
    naming it (as a broker reset's journal)."""
    from mqctl.ops.journal import journal_dir

    d = journal_dir() if directory is None else directory
    path = _path_of(ref.strip(), d)
    if path is None:
        raise NotFoundError(f"no reset journal {ref!r} in {d}")
    try:
        doc = json.loads(path.read_text("utf-8"))
        if _get(doc, "schema", str) != CLIENT_JOURNAL_SCHEMA:
            raise ValueError("not a reset journal of client files")
        undo_of = doc.get("undoOf")
        if undo_of is not None and not isinstance(undo_of, str):
            raise ValueError("undoOf is not a journal id")
        record = ClientJournal(
            id=_get(doc, "id", str),
            created_ms=_get(doc, "createdMs", int),
            state=_get(doc, "state", str),
            group=_get(doc, "group", str),
            topic=_get(doc, "topic", str),
            target=_target(doc),
            clients=tuple(_client(c) for c in _get(doc, "clients", list)),
            persist_interval_ms=_get(doc, "persistIntervalMs", int),
            undo_of=undo_of,
            path=path,
        )
    except (OSError, ValueError, AttributeError, TypeError) as exc:
        raise UsageError(f"journal {path} is unreadable: {exc}") from None
    from mqctl.ops.journal import refuse_redo

    refuse_redo(ref, record.id, record.undo_of)
    return record
