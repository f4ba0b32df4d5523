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
import stat
import time
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mqctl import fsio
from mqctl.errors import NotFoundError, PartialWriteError, RefusedError, StoreError, UsageError
from mqctl.model import JOURNAL_SCHEMA, BackendKind, BackendTarget, JournalRecord, MessageQueue, OffsetChange
from mqctl.model.queues import JAVA_INT, JAVA_LONG
from mqctl.records import replace

if TYPE_CHECKING:
    from mqctl.backends.base import OffsetWrite

JOURNAL_ENV = "MQCTL_JOURNAL_DIR"
_TMP_SUFFIX = ".mqctl-tmp"

PENDING, APPLIED, PARTIAL, REFUSED = "pending", "applied", "partial", "refused"
STATES = (PENDING, APPLIED, PARTIAL, REFUSED)
_MAX_JOURNAL_BYTES = 256 << 20  # ~1.5 million queues; a file larger than this is not a record


def _get(doc: dict, key: str, kind: type | tuple[type, ...], default: Any = ...) -> Any:
    """``doc[key]`` of type ``kind`` (never a bool for an int), else ValueError naming the key."""
    if key not in doc and default is not ...:
        return default
    value = doc.get(key)
    if isinstance(value, bool) or not isinstance(value, kind):
        names = " or ".join(k.__name__ for k in (kind if isinstance(kind, tuple) else (kind,)))
        raise ValueError(f"{key} is missing or not {names}")
    if isinstance(value, str) and not value.strip():
        raise ValueError(f"{key} is empty")
    return value


def _change(c: Any, n: int) -> OffsetChange:
    if not isinstance(c, dict):
        raise ValueError(f"change {n} is not an object")
    try:
        topic, broker = _get(c, "topic", str), _get(c, "brokerName", str)
        qid, before, after = _get(c, "queueId", int), _get(c, "before", int), _get(c, "after", int)
    except ValueError as exc:
        raise ValueError(f"change {n}: {exc}") from None
    # -1 is "no committed offset" (before a first commit; after an undo that removed one).
    for key, value, low, high in (
        ("queueId", qid, 0, JAVA_INT[1]),
        ("before", before, -1, JAVA_LONG[1]),
        ("after", after, -1, JAVA_LONG[1]),
    ):
        if not low <= value <= high:
            raise ValueError(f"change {n}: {key} {value} is not in [{low}, {high}]")
    return OffsetChange(MessageQueue(topic, broker, qid), before, after)


def _target(doc: dict) -> BackendTarget:
    kind = _get(doc, "backend", str, "store")  # records from before live resets name stores only
    if kind not in {k.value for k in BackendKind}:
        raise ValueError(f"backend {kind!r} is not one of {', '.join(k.value for k in BackendKind)}")
    if BackendKind(kind).reads_files:
        stores = _get(doc, "stores", dict)
        if not stores or not all(
            isinstance(k, str) and k and isinstance(v, str) and v for k, v in stores.items()
        ):
            raise ValueError("stores must map broker names to store roots")
        return BackendTarget(BackendKind(kind), tuple(stores.items()))
    return BackendTarget(BackendKind(kind), namesrv=_get(doc, "namesrv", str))


def _from_json(doc: Any, path: Path) -> JournalRecord:
    """A record, validated field by field: undo writes what it says, so nothing is taken on trust."""
    if not isinstance(doc, dict) or doc.get("schema") != JOURNAL_SCHEMA:
        raise ValueError(f"not an mqctl reset journal (schema {JOURNAL_SCHEMA})")
    state = _get(doc, "state", str, APPLIED)  # records from before the state existed were applied
    if state not in STATES:
        raise ValueError(f"state {state!r} is not one of {', '.join(STATES)}")
    raw = _get(doc, "changes", list)
    changes = tuple(_change(c, n) for n, c in enumerate(raw, 1))
    if not changes or len({c.queue for c in changes}) != len(changes):
        raise ValueError("changes must list each queue once" if changes else "no changes")
    brokers = _get(doc, "appliedBrokers", list, [])
    if not all(isinstance(b, str) for b in brokers):
        raise ValueError("appliedBrokers must list broker names")
    created = _get(doc, "createdMs", int, 0)
    if created < 0:
        raise ValueError(f"createdMs {created} is negative")
    return JournalRecord(
        id=_get(doc, "id", str),
        created_ms=created,
        state=state,
        group=_get(doc, "group", str),
        target=_target(doc),
        changes=changes,
        note=_get(doc, "note", (str, type(None)), None),
        applied_brokers=tuple(brokers),
        undo_of=_get(doc, "undoOf", (str, type(None)), None),
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


def check_journal_dir(protected: Iterable[Path], directory: Path | None = None) -> Path:
    """Refuse a journal directory inside a broker store (as --export and --history are): the
    broker owns everything there, and a journal under config/ could sit beside, or replace, its
    own files. Checked before anything is written."""
    d = journal_dir() if directory is None else directory
    resolved = d.resolve()
    for root in protected:
        r = root.resolve()
        if resolved == r or resolved.is_relative_to(r):
            source = f"${JOURNAL_ENV}" if os.environ.get(JOURNAL_ENV) else "the journal directory"
            raise UsageError(
                f"{source} {d}: refusing to keep the reset journal inside the broker store {root}; nothing written",
                f"set {JOURNAL_ENV} to a directory outside every store (e.g. ~/.local/state/mqctl/journal)",
            )
    return d


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
        if not (path.exists() or path.is_symlink()):
            raise NotFoundError(f"no reset journal {ref!r} in {d}")
    try:
        record = _from_json(json.loads(_read_bounded(path)), path)
    except (OSError, ValueError, RecursionError) as exc:
        why = (exc.strerror or str(exc)) if isinstance(exc, OSError) else str(exc)
        raise StoreError(
            f"journal {path} cannot be used: {why}; nothing written",
            "an undo writes what its record says, so a damaged record is never guessed at: restore the "
            "file, or reset the queues explicitly (--to-offset, --from-file)",
        ) from None
    refuse_redo(ref, record.id, record.undo_of)
    return record


def refuse_redo(ref: str, record_id: str, undo_of: str | None) -> None:
    """``--undo latest`` takes the newest record. When that record is itself an undo, taking it
    back would redo the reset it undid (a second ``--undo latest --execute``, up-arrow and
    Enter): refused. Named by its id, an undo can still be undone."""
    if ref.strip() == "latest" and undo_of is not None:
        raise RefusedError(
            f"--undo latest: the latest reset, {record_id}, is the undo of {undo_of}: undoing it "
            f"would apply {undo_of} again; nothing planned",
            f"to apply {undo_of} again, name the undo: --undo {record_id}",
        )


def _read_bounded(path: Path) -> str:
    """The record's text: a regular file of sane size only (never /dev/zero behind a symlink)."""
    with open(path, "rb") as f:
        st = os.fstat(f.fileno())
        if not stat.S_ISREG(st.st_mode):
            raise ValueError("not a regular file")
        if st.st_size > _MAX_JOURNAL_BYTES:
            raise ValueError(f"{st.st_size} bytes, more than any record ({_MAX_JOURNAL_BYTES} at most)")
        return f.read(_MAX_JOURNAL_BYTES + 1).decode("utf-8")


# --------------------------------------------------------------------------------- applying


def apply_journalled(
    write: OffsetWrite,
    target: BackendTarget,
    group: str,
    *,
    now_ms: int | None = None,
    note: str | None = None,
    undo_of: str | None = None,
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
        changes = tuple(write.changes)
        record = JournalRecord(
            _new_id(group, now), now, PENDING, group, target, changes, note, undo_of=undo_of
        )
        path = _write(record, d)
        try:
            result = write.commit()
        except PartialWriteError as exc:
            # Refused everywhere (read back: nothing moved) is kept as what happened, not as a
            # partial write an undo would have to look into.
            state = PARTIAL if exc.landed else REFUSED
            with contextlib.suppress(StoreError):
                _write(replace(record, state=state, applied_brokers=tuple(exc.applied)), d)
            exc.message += f"; journal {record.id} records it as {state}"
            if exc.landed:
                exc.hint = exc.hint or f"--undo {record.id} puts back the queues that moved"
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
