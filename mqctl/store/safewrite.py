"""Safe writes of a stopped broker's ``config/consumerOffset.json``, in two phases.

The rules (DESIGN.md "Safety rules for writes", spec/rocketmq-store.md 1.4 and 2.6):

1. Refuse while another process holds the broker's store ``lock`` (fcntl on byte 0): a live
   broker rewrites the file from memory every few seconds and would undo the change. An
   ``abort`` file without a held lock (crashed broker, or one running where our lock cannot
   see it) also refuses, unless the caller passes ``force_abort_file``. Nothing overrides a
   held lock.
2. Take mqctl's own lock (``flock`` on the config directory: no file is added to the store)
   so two resets cannot interleave; one that finds it held waits up to ``lock_timeout`` seconds.
3. Re-read the file under that lock; refuse when it does not parse, and refuse when any
   offset differs from what the plan was computed from.
4. ``StoreWrite`` does 1-3 on entering (phase one: ``changes`` are known, nothing written);
   the caller journals the change (outside the store, ``mqctl.ops.journal``), then ``commit``
   re-checks that the broker is still stopped and, per broker: copies the current file to
   ``.bak`` (temp + fsync + rename), writes the new text to a temp file in the same directory,
   fsyncs, renames it over the file, fsyncs the directory. A failure rolls back the brokers
   already written; what cannot be rolled back is named (``PartialWriteError``).

Whatever step fails or is killed, the broker's load rule (the file, else ``.bak``) finds the
complete old table or the complete new one. ``_crash_point`` is called between steps so tests
can fail or kill the process at each of them (``CRASH_POINTS``).
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from mqctl import fsio
from mqctl.errors import (
    ExitStatus,
    NotFoundError,
    PartialWriteError,
    RefusedError,
    StoreCorruptError,
    StoreError,
    StoreUnsupportedError,
    UsageError,
)
from mqctl.model import MessageQueue, OffsetChange
from mqctl.store.storelock import broker_lock_held, check_broker_stopped, mqctl_lock

__all__ = ["CRASH_POINTS", "StoreWrite", "broker_lock_held"]

OFFSET_FILE = "consumerOffset.json"
TMP_SUFFIX = ".mqctl-tmp"

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


# --------------------------------------------------------------------------------- layouts


def _root_of(layout: Any) -> Path:
    # A plain path (tests, undo from a journal) or a StoreLayout (its .root).
    return Path(layout) if isinstance(layout, (str, os.PathLike)) else Path(layout.root)


def _config_dir(layout: Any) -> Path:
    config = None if isinstance(layout, (str, os.PathLike)) else getattr(layout, "config_dir", None)
    return Path(config) if config is not None else _root_of(layout) / "config"


# --------------------------------------------------------------------------------- reading


def _read_current(config_dir: Path, broker: str) -> tuple[bytes | None, Any]:
    """(bytes, OffsetTable) of the live file; refuses anything we could not read cleanly."""
    from mqctl.store.configread import read_config_bytes
    from mqctl.store.offsets import OffsetTable, decode_consumer_offsets

    main = config_dir / OFFSET_FILE
    bak = config_dir / (OFFSET_FILE + ".bak")
    # Bounded, regular files only; a file that cannot be read is a StoreError naming it.
    data = read_config_bytes(main)
    if data is None:
        if bak.exists() and bak.stat().st_size > 0:
            raise StoreError(
                f"{broker}: {main} is missing but {bak.name} exists (an interrupted broker write?); "
                "refusing to write: restore the file first"
            )
        return None, OffsetTable()
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


def _write_synced(path: Path, data: bytes, mode: int | None, prefix: str) -> None:
    """Write a fresh file in two halves (a crash point between them), then fsync it."""
    fsio.write_synced(
        path,
        data,
        mode=0o644 if mode is None else mode,
        on_step=lambda step: _crash_point(f"{prefix}-{step}"),
    )


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


# --------------------------------------------------------------------------------- entry point


class StoreWrite:
    """Phase one on entering (checks, locks, re-read, refusal when offsets moved), ``commit`` for
    phase two; leaving the ``with`` block releases the locks whether or not it committed.

    ``layouts`` maps broker name to a StoreLayout (or a store root path); ``offsets`` are
    ``{(topic, broker, queueId): offset}``, a negative one removing the queue's entry (undo of a
    first commit); ``expected`` the offsets the plan was computed from (-1 = none).
    """

    def __init__(
        self,
        layouts: Mapping[str, Any],
        group: str,
        offsets: Mapping[Key, int],
        expected: Mapping[Key, int] | None = None,
        *,
        force_abort_file: bool = False,
        now_ms: int | None = None,
        lock_timeout: float = 0.0,
        on_lock_wait: Callable[[str], None] | None = None,
    ) -> None:
        self.group = group
        self._force = force_abort_file
        self._lock_timeout = lock_timeout
        self._on_lock_wait = on_lock_wait
        self._said_wait = False
        self._now = int(time.time() * 1000) if now_ms is None else now_ms
        self._by_broker: dict[str, dict[tuple[str, int], int]] = {}
        for (topic, broker, qid), off in offsets.items():
            self._by_broker.setdefault(broker, {})[(topic, qid)] = off
        if not self._by_broker:
            raise UsageError("nothing to write: the plan has no queues")
        for broker in self._by_broker:
            if broker not in layouts:
                raise NotFoundError(f"unknown broker {broker!r} (known: {', '.join(layouts) or 'none'})")
        self._names = sorted(self._by_broker)
        self._roots = {b: _root_of(layouts[b]) for b in self._names}
        self._configs = {b: _config_dir(layouts[b]) for b in self._names}
        self._expected = expected
        self._stack = contextlib.ExitStack()
        self._olds: dict[str, bytes | None] = {}
        self._news: dict[str, bytes] = {}
        self.changes: list[OffsetChange] = []

    def __enter__(self) -> StoreWrite:
        for b in self._names:
            if not self._configs[b].is_dir():
                raise StoreError(f"{b}: {self._roots[b]} is not a broker store (no config/ directory)")
            check_broker_stopped(b, self._roots[b], self._force)
            _refuse_rocksdb_offsets(b, self._configs[b])
        try:
            for b in self._names:  # in name order: two resets never hold one lock each
                self._stack.enter_context(mqctl_lock(self._configs[b], b, self._lock_timeout, self._waiting))
            _crash_point("locked")
            self._read_all()
        except BaseException:
            self._stack.close()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self._stack.close()

    def _waiting(self, message: str) -> None:
        """Say once per write that it waits (one lock per broker, each may be held)."""
        if not self._said_wait and self._on_lock_wait is not None:
            self._said_wait = True
            self._on_lock_wait(message)

    def _read_all(self) -> None:
        mismatches: list[str] = []
        for b in self._names:
            _remove_stale_temps(self._configs[b])
            old_bytes, table = _read_current(self._configs[b], b)
            for (topic, qid), target in self._by_broker[b].items():
                before = _current(table, self.group, topic, qid)
                want = None if self._expected is None else self._expected.get((topic, b, qid))
                if want is not None and want != before:
                    mismatches.append(f"{b} {topic} queue {qid} is {before}, plan expected {want}")
                self.changes.append(OffsetChange(MessageQueue(topic, b, qid), before, target))
            self._olds[b] = old_bytes
            self._news[b] = _encode_checked(table, self.group, self._by_broker[b], self._now, b)
        if mismatches:
            more = f" (and {len(mismatches) - 3} more)" if len(mismatches) > 3 else ""
            raise RefusedError(
                "offsets moved since the plan was made: "
                + "; ".join(mismatches[:3])
                + more
                + "; nothing written"
            )

    def commit(self) -> list[str]:
        """Write every broker's file; returns the brokers written, in order."""
        # The caller journals between entering and committing (the change is on record first).
        _crash_point("journal-written")
        # Re-check right before the commit point: a broker started since the first check wins.
        for b in self._names:
            check_broker_stopped(b, self._roots[b], self._force)
        done: list[str] = []
        try:
            for b in self._names:
                _commit_file(self._configs[b], self._olds[b], self._news[b])
                done.append(b)
                _crash_point("renamed")
                fsio.fsync_dir(self._configs[b])
                _crash_point("dir-fsynced")
        except Exception as exc:
            still_new = _after_failure(done, self._olds, self._configs)
            if still_new:
                raise PartialWriteError(
                    f"write failed ({exc}) and could not be rolled back on {', '.join(still_new)}: those "
                    "brokers hold the new offsets (kept in the journal); the others are unchanged",
                    still_new,
                    ExitStatus.STORE_DATA,
                ) from exc
            raise
        return done


def _refuse_rocksdb_offsets(broker: str, config: Path) -> None:
    rocks = [d for d in ("consumerOffsets", "rdb") if (config / d).is_dir()]
    if rocks:
        # The broker reads offsets from RocksDB; it imports the JSON only on its own terms.
        raise StoreUnsupportedError(
            f"{broker}: consumer offsets live in RocksDB (config/{rocks[0]}/); editing consumerOffset.json "
            "would not reliably reach the broker; nothing written"
        )


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
    done: list[str], olds: Mapping[str, bytes | None], configs: Mapping[str, Path]
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
            fsio.fsync_dir(configs[b])
        except Exception:  # noqa: BLE001 - reported below, the original error is re-raised
            failed.append(b)
    return failed
