"""The reset journal: every applied offset write is recorded so ``--undo`` can put it back.

A record names the backend it applies to (the stores' roots, or a live cluster's name servers)
so undo reopens it through the same ``open_backend`` the CLI uses, whatever the backend. It is
written before the offsets are (state ``pending``) and marked ``applied`` once every broker took
them; a write that stopped part-way is ``partial`` and names the brokers that hold the new
offsets; one that no broker took (each refused or denied it) is ``refused``. Journals live
outside any broker store: ``$MQCTL_JOURNAL_DIR``, else ``$XDG_STATE_HOME/mqctl/journal``, else
``~/.local/state/mqctl/journal``.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import time
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mqctl import fsio
from mqctl.errors import NotFoundError, PartialWriteError, StoreError, UsageError
from mqctl.model import JOURNAL_SCHEMA, BackendKind, BackendTarget, JournalRecord, MessageQueue, OffsetChange

if TYPE_CHECKING:
    from mqctl.backends.base import OffsetWrite

JOURNAL_ENV = "MQCTL_JOURNAL_DIR"
_TMP_SUFFIX = ".mqctl-tmp"

PENDING, APPLIED, PARTIAL, REFUSED = "pending", "applied", "partial", "refused"


def _from_json(doc: Any, path: Path) -> JournalRecord:
    if (
        not isinstance(doc, dict)
        or doc.get("schema") != JOURNAL_SCHEMA
        or not isinstance(doc.get("changes"), list)
    ):
        raise ValueError("not an mqctl reset journal")
    changes = []
    for c in doc["changes"]:
        for k, t in (("topic", str), ("brokerName", str), ("queueId", int), ("before", int), ("after", int)):
            if not isinstance(c.get(k), t):
                raise ValueError(f"change without {k}")
        changes.append(
            OffsetChange(MessageQueue(c["topic"], c["brokerName"], c["queueId"]), c["before"], c["after"])
        )
    kind = doc.get("backend", "store")  # records written before live resets existed name stores only
    if kind == "store":
        stores = doc.get("stores")
        if not isinstance(stores, dict) or not all(isinstance(v, str) for v in stores.values()):
            raise ValueError("no stores")
        target = BackendTarget(BackendKind.STORE, tuple(stores.items()))
    else:
        target = BackendTarget(kind, namesrv=str(doc.get("namesrv") or ""))
    return JournalRecord(
        id=str(doc.get("id")),
        created_ms=int(doc.get("createdMs") or 0),
        state=str(doc.get("state", APPLIED)),  # records from before the state existed were applied
        group=str(doc["group"]),
        target=target,
        changes=tuple(changes),
        note=doc.get("note"),
        applied_brokers=tuple(doc.get("appliedBrokers") or ()),
        path=path,
    )


# --------------------------------------------------------------------------------- files


def journal_dir() -> Path:
    """$MQCTL_JOURNAL_DIR, else $XDG_STATE_HOME/mqctl/journal, else ~/.local/state/mqctl/journal."""
    explicit = os.environ.get(JOURNAL_ENV)
    if explicit:
        return Path(explicit).expanduser()
    state = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(state).expanduser() / "mqctl" / "journal"


def _new_id(group: str, now_ms: int) -> str:
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime(now_ms / 1000)) + f"{now_ms % 1000:03d}Z"
    safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in group)[:60]
    return f"{stamp}-{safe}-{secrets.token_hex(3)}"


def _write(record: JournalRecord, directory: Path) -> Path:
    """Temp file, fsync, rename, fsync the directory: a record is whole or absent."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
        path = directory / f"{record.id}.json"
        data = (json.dumps(record.to_json(), indent=2, ensure_ascii=False) + "\n").encode("utf-8")
        fsio.atomic_write(path, data, mode=0o600, tmp_tag=_TMP_SUFFIX)
    except OSError as exc:
        raise StoreError(
            f"cannot write the undo journal in {directory}: {exc.strerror or exc}; nothing written "
            f"(set {JOURNAL_ENV} to a writable directory)"
        ) from None
    return path


def list_journal(directory: Path | None = None) -> list[Path]:
    """Journal files, oldest first (ids start with a UTC timestamp, so names sort by time)."""
    d = journal_dir() if directory is None else directory
    if not d.is_dir():
        return []
    return sorted(p for p in d.glob("*.json") if not p.name.endswith(_TMP_SUFFIX))


def read_journal(ref: str, directory: Path | None = None) -> JournalRecord:
    """A journal record by id (or file path), or ``latest``."""
    d = journal_dir() if directory is None else directory
    if ref == "latest":
        files = list_journal(d)
        if not files:
            raise NotFoundError(f"no reset journal in {d}")
        path = files[-1]
    else:
        candidate = Path(ref)
        path = candidate if candidate.suffix == ".json" and candidate.exists() else d / f"{ref}.json"
        if not path.is_file():
            raise NotFoundError(f"no reset journal {ref!r} in {d}")
    try:
        return _from_json(json.loads(path.read_text("utf-8")), path)
    except (OSError, ValueError, AttributeError, TypeError, KeyError) as exc:
        raise UsageError(f"journal {path} is unreadable: {exc}") from None


# --------------------------------------------------------------------------------- applying


def apply_journalled(
    write: OffsetWrite,
    target: BackendTarget,
    group: str,
    *,
    now_ms: int | None = None,
    note: str | None = None,
    directory: Path | None = None,
) -> JournalRecord:
    """Phase one (``write`` entered: locks held, offsets re-read), the journal record, phase two.

    The record is on disk before any offset is: a process killed mid-write leaves it
    ``pending``, which undo resolves by looking at what the cluster holds. A write rolled back
    completely leaves no record (an undo of it would only mislead).
    """
    now = int(time.time() * 1000) if now_ms is None else now_ms
    d = journal_dir() if directory is None else directory
    with write:
        record = JournalRecord(_new_id(group, now), now, PENDING, group, target, tuple(write.changes), note)
        path = _write(record, d)
        try:
            result = write.commit()
        except PartialWriteError as exc:
            state = PARTIAL if exc.applied else REFUSED  # refused: no broker took it
            partial = replace(record, state=state, applied_brokers=tuple(exc.applied))
            with contextlib.suppress(StoreError):
                _write(partial, d)
            raise
        except BaseException:
            with contextlib.suppress(OSError):
                path.unlink()
            raise
    applied = replace(record, state=APPLIED, path=path)
    try:
        _write(applied, d)
    except StoreError:
        # The offsets are written; a record left pending is resolved by undo, which looks at the
        # cluster. Failing now would report a landed write as failed.
        return replace(record, path=path, result=result)
    return replace(applied, result=result)
