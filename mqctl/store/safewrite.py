"""Safe writes of a stopped broker's ``config/consumerOffset.json``, and the reset journal.

The rules (DESIGN.md "Safety rules for writes", spec/rocketmq-store.md 1.4 and 2.6):

1. Refuse while another process holds the broker's store ``lock`` (fcntl on byte 0): a live
   broker rewrites the file from memory every few seconds and would undo the change. An
   ``abort`` file without a held lock (crashed broker, or one running where our lock cannot
   see it) also refuses, unless the caller passes ``force_abort_file``. Nothing overrides a
   held lock.
2. Take mqctl's own lock (``flock`` on the config directory: no file is added to the store)
   so two resets cannot interleave.
3. Re-read the file under that lock; refuse when it does not parse, and refuse when any
   offset differs from what the plan was computed from.
4. Journal the change (outside the store) before touching the store, then: copy the current
   file to ``.bak`` (temp + fsync + rename), write the new text to a temp file in the same
   directory, fsync, rename it over the file, fsync the directory.

Whatever step fails or is killed, the broker's load rule (the file, else ``.bak``) finds the
complete old table or the complete new one. ``_crash_point`` is called between steps so tests
can fail or kill the process at each of them (``CRASH_POINTS``).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import secrets
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

from mqctl.errors import (
    NotFoundError,
    RefusedError,
    StoreCorruptError,
    StoreError,
    StoreUnsupportedError,
    UsageError,
)

__all__ = [
    "CRASH_POINTS",
    "JOURNAL_ENV",
    "apply_offsets_to_stores",
    "broker_lock_held",
    "journal_dir",
    "list_journal",
    "read_journal",
]

OFFSET_FILE = "consumerOffset.json"
TMP_SUFFIX = ".mqctl-tmp"
JOURNAL_ENV = "MQCTL_JOURNAL_DIR"
JOURNAL_SCHEMA = "mqctl/resetJournal/v1"

# Every point between two steps of one broker's write, in order (journal points come first).
CRASH_POINTS = (
    "locked",
    "journal-written",
    "bak-partial",
    "bak-written",
    "bak-fsynced",
    "bak-renamed",
    "temp-partial",
    "temp-written",
    "temp-fsynced",
    "renamed",
    "dir-fsynced",
)


def _no_crash(name: str) -> None:
    return None


# Test hook: called with each CRASH_POINTS name; tests make it raise or kill the process.
_crash_point: Callable[[str], None] = _no_crash

Key = tuple[str, str, int]  # (topic, brokerName, queueId)


# --------------------------------------------------------------------------------- locks


def _root_of(layout: Any) -> Path:
    # A plain path (tests, undo from a journal) or a StoreLayout (its .root).
    return Path(layout) if isinstance(layout, (str, os.PathLike)) else Path(layout.root)


def _config_dir(layout: Any) -> Path:
    config = None if isinstance(layout, (str, os.PathLike)) else getattr(layout, "config_dir", None)
    return Path(config) if config is not None else _root_of(layout) / "config"


def broker_lock_held(root: Path) -> bool:
    """True when another process holds the broker's lock on byte 0 of ``<root>/lock``."""
    path = Path(root) / "lock"
    try:
        fd = os.open(path, os.O_RDWR)
    except FileNotFoundError:
        return False
    except OSError:
        # Cannot open it read-write (another user's broker): we cannot prove it is free.
        return True
    try:
        try:
            fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, 0)
        except OSError as exc:
            if exc.errno in (errno.EACCES, errno.EAGAIN):
                return True
            raise
        fcntl.lockf(fd, fcntl.LOCK_UN, 1, 0)
        return False
    finally:
        os.close(fd)


@contextlib.contextmanager
def _mqctl_lock(config_dir: Path, broker: str) -> Iterator[None]:
    # flock (not fcntl) on the directory: independent of the broker's fcntl lock, and it
    # conflicts between two open descriptions even inside one process.
    fd = os.open(config_dir, os.O_RDONLY)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                raise RefusedError(
                    f"{broker}: another mqctl reset holds the lock on {config_dir}; nothing written"
                ) from None
            raise
        yield
    finally:
        os.close(fd)  # closing releases the flock


def _check_broker_stopped(broker: str, root: Path, force_abort_file: bool) -> None:
    if broker_lock_held(root):
        raise RefusedError(
            f"{broker}: the broker holds its store lock ({root / 'lock'}): it is running and would "
            "overwrite the change from memory within seconds; stop it first (nothing written)"
        )
    if (root / "abort").exists() and not force_abort_file:
        raise RefusedError(
            f"{broker}: {root / 'abort'} exists: the broker did not shut down cleanly or runs where its "
            "lock is not visible; if it is certainly stopped, pass --unsafe-ignore-abort-file (nothing written)"
        )


# --------------------------------------------------------------------------------- reading


def _read_current(config_dir: Path, broker: str) -> tuple[bytes | None, Any]:
    """(bytes, OffsetTable) of the live file; refuses anything we could not read cleanly."""
    from mqctl.store.offsets import OffsetTable, decode_consumer_offsets

    main = config_dir / OFFSET_FILE
    bak = config_dir / (OFFSET_FILE + ".bak")
    try:
        data = main.read_bytes()
    except FileNotFoundError:
        if bak.exists() and bak.stat().st_size > 0:
            raise StoreError(
                f"{broker}: {main} is missing but {bak.name} exists (an interrupted broker write?); "
                "refusing to write: restore the file first"
            ) from None
        return None, OffsetTable()
    except OSError as exc:
        raise StoreError(f"{broker}: cannot read {main}: {exc.strerror or exc}") from None
    if not data.strip():
        raise StoreCorruptError(f"{broker}: {main} is empty; refusing to write over it")
    try:
        return data, decode_consumer_offsets(data, str(main))
    except StoreCorruptError as exc:
        raise StoreCorruptError(f"{broker}: refusing to write: {exc.message}") from None


def _current(table: Any, group: str, topic: str, qid: int) -> int:
    return table.offsets.get(f"{topic}@{group}", {}).get(qid, -1)


def _new_table(table: Any, group: str, changes: Mapping[tuple[str, int], int], now_ms: int) -> Any:
    from mqctl.store.offsets import OffsetTable

    bumped = table.with_offsets(group, {k: v for k, v in changes.items() if v >= 0}, now_ms=now_ms)
    removals = [k for k, v in changes.items() if v < 0]
    if not removals:
        return bumped
    # A negative target (undo of a queue that had no committed offset) removes the entry again.
    offsets = {key: dict(queues) for key, queues in bumped.offsets.items()}
    for topic, qid in removals:
        key = f"{topic}@{group}"
        offsets.get(key, {}).pop(qid, None)
        if key in offsets and not offsets[key]:
            del offsets[key]
    return OffsetTable(offsets=offsets, data_version=bumped.data_version, extra=bumped.extra)


# --------------------------------------------------------------------------------- writing


def _fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _write_synced(path: Path, data: bytes, mode: int | None, prefix: str) -> None:
    """Write a fresh file in two halves (a crash point between them), then fsync it."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644 if mode is None else mode)
    try:
        half = len(data) // 2
        view = memoryview(data)
        _write_all(fd, view[:half])
        _crash_point(f"{prefix}-partial")
        _write_all(fd, view[half:])
        _crash_point(f"{prefix}-written")
        os.fsync(fd)
    finally:
        os.close(fd)
    _crash_point(f"{prefix}-fsynced")


def _write_all(fd: int, view: memoryview) -> None:
    while view:
        n = os.write(fd, view)
        view = view[n:]


def _copy_owner(src: Path, dst: Path) -> None:
    # The broker may run as another user: keep the file's owner where we are allowed to.
    try:
        st = src.stat()
        os.chown(dst, st.st_uid, st.st_gid)
    except OSError:
        pass


def _commit_file(config_dir: Path, old: bytes | None, new: bytes) -> None:
    """One broker: old -> .bak, new -> temp -> rename over the file (the commit point)."""
    main = config_dir / OFFSET_FILE
    bak = config_dir / (OFFSET_FILE + ".bak")
    tag = f".{os.getpid()}{TMP_SUFFIX}"
    mode = main.stat().st_mode & 0o7777 if old is not None else None
    temps = [bak.with_name(bak.name + tag), main.with_name(main.name + tag)]
    try:
        if old is not None:
            _write_synced(temps[0], old, mode, "bak")
            _copy_owner(main, temps[0])
            os.replace(temps[0], bak)
            _crash_point("bak-renamed")
        _write_synced(temps[1], new, mode, "temp")
        if old is not None:
            _copy_owner(main, temps[1])
        os.replace(temps[1], main)
    except BaseException:
        for t in temps:
            with contextlib.suppress(OSError):
                t.unlink()
        raise


def _remove_stale_temps(config_dir: Path) -> None:
    # Left by a killed mqctl; the broker ignores them, but they must not pile up.
    for p in config_dir.glob(f"{OFFSET_FILE}*{TMP_SUFFIX}"):
        with contextlib.suppress(OSError):
            p.unlink()


# --------------------------------------------------------------------------------- journal


def journal_dir() -> Path:
    """$MQCTL_JOURNAL_DIR, else $XDG_STATE_HOME/mqctl/journal, else ~/.local/state/mqctl/journal."""
    explicit = os.environ.get(JOURNAL_ENV)
    if explicit:
        return Path(explicit).expanduser()
    state = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(state).expanduser() / "mqctl" / "journal"


def _journal_id(group: str, now_ms: int) -> str:
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime(now_ms / 1000)) + f"{now_ms % 1000:03d}Z"
    safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in group)[:60]
    return f"{stamp}-{safe}-{secrets.token_hex(3)}"


def _write_journal(record: dict, directory: Path) -> Path:
    try:
        directory.mkdir(parents=True, exist_ok=True)
        path = directory / f"{record['id']}.json"
        tmp = path.with_name(path.name + TMP_SUFFIX)
        data = (json.dumps(record, indent=2, ensure_ascii=False) + "\n").encode("utf-8")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            _write_all(fd, memoryview(data))
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
        _fsync_dir(directory)
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
    return sorted(p for p in d.glob("*.json") if not p.name.endswith(TMP_SUFFIX))


def read_journal(ref: str, directory: Path | None = None) -> dict:
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
        record = json.loads(path.read_text("utf-8"))
        if record.get("schema") != JOURNAL_SCHEMA or not isinstance(record.get("changes"), list):
            raise ValueError("not an mqctl reset journal")
        for c in record["changes"]:
            for k, t in (
                ("topic", str),
                ("brokerName", str),
                ("queueId", int),
                ("before", int),
                ("after", int),
            ):
                if not isinstance(c.get(k), t):
                    raise ValueError(f"change without {k}")
    except (OSError, ValueError, AttributeError, TypeError) as exc:
        raise UsageError(f"journal {path} is unreadable: {exc}") from None
    return record


# --------------------------------------------------------------------------------- entry point


def apply_offsets_to_stores(
    layouts: Mapping[str, Any],
    group: str,
    offsets: Mapping[Key, int],
    expected: Mapping[Key, int] | None = None,
    *,
    force_abort_file: bool = False,
    journal: Path | None = None,
    now_ms: int | None = None,
    note: str | None = None,
) -> dict:
    """Write ``{(topic, broker, queueId): offset}`` for ``group`` into the brokers' stores.

    ``layouts`` maps broker name to a StoreLayout (or a store root path). ``expected`` holds
    the offsets the plan was computed from (-1 = no committed offset); any difference refuses
    the whole write. A negative offset removes the queue's entry (undo of a first commit).
    Returns the journal record (``id``, ``path``, ``changes`` with before/after).
    """
    now = int(time.time() * 1000) if now_ms is None else now_ms
    by_broker: dict[str, dict[tuple[str, int], int]] = {}
    for (topic, broker, qid), off in offsets.items():
        by_broker.setdefault(broker, {})[(topic, qid)] = off
    if not by_broker:
        raise UsageError("nothing to write: the plan has no queues")
    for broker in by_broker:
        if broker not in layouts:
            raise NotFoundError(f"unknown broker {broker!r} (known: {', '.join(layouts) or 'none'})")
    names = sorted(by_broker)
    roots = {b: _root_of(layouts[b]) for b in names}
    configs = {b: _config_dir(layouts[b]) for b in names}
    for b in names:
        if not configs[b].is_dir():
            raise StoreError(f"{b}: {roots[b]} is not a broker store (no config/ directory)")
        _check_broker_stopped(b, roots[b], force_abort_file)
        rocks = [d for d in ("consumerOffsets", "rdb") if (configs[b] / d).is_dir()]
        if rocks:
            # The broker reads offsets from RocksDB; it imports the JSON only on its own terms.
            raise StoreUnsupportedError(
                f"{b}: consumer offsets live in RocksDB (config/{rocks[0]}/); editing consumerOffset.json "
                "would not reliably reach the broker; nothing written"
            )

    with contextlib.ExitStack() as stack:
        for b in names:
            stack.enter_context(_mqctl_lock(configs[b], b))
        _crash_point("locked")
        olds: dict[str, bytes | None] = {}
        news: dict[str, bytes] = {}
        changes: list[dict] = []
        mismatches: list[str] = []
        for b in names:
            _remove_stale_temps(configs[b])
            old_bytes, table = _read_current(configs[b], b)
            for (topic, qid), target in by_broker[b].items():
                before = _current(table, group, topic, qid)
                want = None if expected is None else expected.get((topic, b, qid))
                if want is not None and want != before:
                    mismatches.append(f"{b} {topic} queue {qid} is {before}, plan expected {want}")
                changes.append(
                    {"topic": topic, "brokerName": b, "queueId": qid, "before": before, "after": target}
                )
            olds[b] = old_bytes
            news[b] = _encode_checked(table, group, by_broker[b], now, b)
        if mismatches:
            more = f" (and {len(mismatches) - 3} more)" if len(mismatches) > 3 else ""
            raise RefusedError(
                "offsets moved since the plan was made: "
                + "; ".join(mismatches[:3])
                + more
                + "; nothing written"
            )

        record = {
            "schema": JOURNAL_SCHEMA,
            "id": _journal_id(group, now),
            "createdMs": now,
            # Pending until every broker's rename landed: a reset killed in between must not
            # look applied (undo checks what the store holds for a pending record).
            "state": "pending",
            "group": group,
            "note": note,
            "stores": {b: str(roots[b].resolve()) for b in names},
            "changes": changes,
        }
        jdir = journal_dir() if journal is None else journal
        jpath = _write_journal(record, jdir)
        _crash_point("journal-written")
        # Re-check right before the commit point: a broker started since the first check wins.
        for b in names:
            _check_broker_stopped(b, roots[b], force_abort_file)

        done: list[str] = []
        try:
            for b in names:
                _commit_file(configs[b], olds[b], news[b])
                done.append(b)
                _crash_point("renamed")
                _fsync_dir(configs[b])
                _crash_point("dir-fsynced")
        except Exception as exc:
            still_new = _after_failure(done, olds, configs, jpath)
            if still_new:
                raise StoreError(
                    f"write failed ({exc}) and could not be rolled back on {', '.join(still_new)}: those "
                    f"brokers hold the new offsets (journal {jpath.name}); the others are unchanged"
                ) from exc
            raise
    record["state"] = "applied"
    try:
        _write_journal(record, jdir)
    except StoreError:
        # The offsets are written; a record left "pending" is resolved by undo, which looks at
        # what the store holds. Failing the command now would report a landed write as failed.
        record["state"] = "pending"
    record["path"] = str(jpath)
    return record


def _encode_checked(
    table: Any, group: str, changes: Mapping[tuple[str, int], int], now: int, broker: str
) -> bytes:
    from mqctl.store.offsets import decode_consumer_offsets, encode_consumer_offsets

    new_table = _new_table(table, group, changes, now)
    data = encode_consumer_offsets(new_table)
    # Never write what we could not read back: decode our own bytes and compare.
    if decode_consumer_offsets(data).offsets != new_table.offsets:
        raise StoreError(
            f"{broker}: the encoded offset table does not read back identically; nothing written"
        )
    return data


def _after_failure(
    done: list[str], olds: Mapping[str, bytes | None], configs: Mapping[str, Path], jpath: Path
) -> list[str]:
    """Several brokers are not one atomic file: put back the ones already written.

    Returns the brokers that could not be put back (they keep the new offsets)."""
    failed: list[str] = []
    for b in done:
        old = olds[b]
        try:
            if old is None:
                (configs[b] / OFFSET_FILE).unlink()
            else:
                _commit_file(configs[b], None, old)
            _fsync_dir(configs[b])
        except Exception:  # noqa: BLE001 - reported below, the original error is re-raised
            failed.append(b)
    if not failed:
        with contextlib.suppress(OSError):
            jpath.unlink()  # nothing stayed applied: an undo record would only mislead
    return failed
