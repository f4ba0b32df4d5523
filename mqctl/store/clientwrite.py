"""Writing a broadcasting client's ``offsets.json`` while that client is stopped (DESIGN: "A
client's offsets.json is written as the client writes it, and only while that client is
stopped"): the running check, mqctl's lock, the re-read, and the client's sequence (``.bak``
first, then the file), each file written atomically (temp, fsync, rename, directory fsync).

How a running client is told (decided for mqctl, the client itself takes no lock): it rewrites
its file every persistConsumerOffsetInterval (5 s by default) whether or not an offset moved, so a
file modified within two intervals is taken as its client's, running; a process holding the file
open (``/proc/*/fd``, Linux) is one too. What cannot be told: a client started less than 10 s ago
(its first write comes 10 s after start) has already read the file and will overwrite it; a
client on another host writing a shared file system.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

from mqctl import fsio
from mqctl.errors import NotFoundError, RefusedError, StoreCorruptError
from mqctl.model import MessageQueue
from mqctl.store.clientoffsets import (
    BAK_SUFFIX,
    FASTJSON,
    MAX_CLIENT_OFFSETS_BYTES,
    PERSIST_INTERVAL_MS,
    ClientOffsetTable,
    client_order,
    decode_client_offsets,
    encode_client_offsets,
)

__all__ = ["ClientOffsetsWrite", "busy_reason", "holders"]

# ---------------------------------------------------------------------------------------------
# Is a client writing it?


def _paths(path: Path) -> tuple[Path, Path, Path]:
    # The file, its .bak and the 4.x client's temporary file (MixAll.string2File before 5.1).
    return path, path.with_name(path.name + BAK_SUFFIX), path.with_name(path.name + ".tmp")


def holders(path: Path, proc_root: Path = Path("/proc")) -> list[int]:
    """Ids of the processes that hold ``path`` (or its ``.bak``/``.tmp``) open, from
    ``/proc/*/fd`` (Linux; other users' processes are visible to root only). A client opens the
    file only for the moment of a read or a write, so this catches a write in progress, not a
    client between two writes: :func:`busy_reason` also looks at the modification time."""
    wanted = set()
    for p in _paths(path):
        with contextlib.suppress(OSError):
            wanted.add(os.path.realpath(p))
    found: list[int] = []
    try:
        pids = [d for d in os.listdir(proc_root) if d.isdigit()]
    except OSError:
        return found
    for pid in pids:
        fd_dir = proc_root / pid / "fd"
        try:
            fds = os.listdir(fd_dir)
        except OSError:  # gone, or another user's
            continue
        for fd in fds:
            with contextlib.suppress(OSError):
                if os.readlink(fd_dir / fd) in wanted:
                    found.append(int(pid))
                    break
    return found


def busy_reason(
    path: Path,
    *,
    persist_interval_ms: int = PERSIST_INTERVAL_MS,
    now_ms: int | None = None,
    proc_root: Path = Path("/proc"),
) -> str | None:
    """Why ``path`` looks written by a running client, or None.

    A running client rewrites its file every persistConsumerOffsetInterval (5 s by default,
    whether or not an offset moved) and on shutdown, so a file (or ``.bak``/``.tmp``) modified
    within two intervals of now (or in the future) belongs to a client that may still run; so
    does one a process holds open. A client that has just started and not yet written (its first
    write comes 10 s after start) cannot be seen: it has already read the file and will overwrite it.
    """
    now = int(time.time() * 1000) if now_ms is None else now_ms
    window = 2 * persist_interval_ms
    for p in _paths(path):
        try:
            mtime = os.stat(p).st_mtime_ns // 1_000_000
        except FileNotFoundError:
            continue
        if mtime > now - window:
            age = (now - mtime) / 1000
            return (
                f"{p} was modified {age:.1f} s ago, within two persist intervals "
                f"({window / 1000:g} s): its client may be running and would overwrite it from memory"
            )
    pids = holders(path, proc_root)
    if pids:
        return f"{path} is open in process {', '.join(map(str, pids))}: its client is running"
    return None


# ---------------------------------------------------------------------------------------------
# Safe write


def _no_crash(name: str) -> None:
    return None


# Test hook: called between the steps of a write with "locked", "bak-<step>", "main-<step>"
# (steps of fsio.atomic_write); tests make it raise to check what a crash there leaves.
_crash_point: Callable[[str], None] = _no_crash


def _steps(tag: str) -> Callable[[str], None]:
    def step(name: str) -> None:
        _crash_point(f"{tag}-{name}")

    return step


@contextlib.contextmanager
def _dir_lock(directory: Path) -> Iterator[None]:
    fd = os.open(directory, os.O_RDONLY)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                raise RefusedError(
                    f"another mqctl write holds the lock on {directory}; nothing written"
                ) from None
            raise
        yield
    finally:
        os.close(fd)


def _read_clean(path: Path) -> tuple[bytes, ClientOffsetTable]:
    from mqctl.store.configread import read_config_bytes

    data = read_config_bytes(path, MAX_CLIENT_OFFSETS_BYTES)
    if data is None:
        raise NotFoundError(
            f"{path} does not exist; nothing written", hint="give the client's own offsets.json"
        )
    try:
        return data, decode_client_offsets(data, str(path))
    except StoreCorruptError as exc:
        raise StoreCorruptError(
            f"refusing to write: {exc.message}", hint="restore the file (or copy its .bak over it) first"
        ) from None


def _present(offset: int | None) -> int | None:
    return None if offset is None or offset < 0 else offset


def _apply(table: ClientOffsetTable, changes: Mapping[MessageQueue, int]) -> list[tuple[MessageQueue, int]]:
    entries = dict(table.entries)
    for mq, offset in changes.items():
        if offset < 0:
            entries.pop(mq, None)  # no offset: the client starts the queue by its consumeFromWhere
        else:
            entries[mq] = offset
    return client_order(entries.items())


class ClientOffsetsWrite:
    """Two-phase write of one client's ``offsets.json``, as ``store.safewrite.StoreWrite`` is for a
    broker's file. Entering takes mqctl's lock on the file's directory, refuses when the client
    looks alive (:func:`busy_reason`), re-reads the file (it must parse cleanly) and refuses when an
    ``expected`` offset differs. ``commit`` re-checks, then writes the client's sequence, each file
    atomically: the current text into ``offsets.json.bak`` (temp, fsync, rename, directory fsync),
    then the new text over ``offsets.json`` the same way, in the file's own layout and order. A
    crash leaves the old file or the new one, and the ``.bak`` the client falls back to."""

    def __init__(
        self,
        path: Path,
        *,
        expected: Mapping[MessageQueue, int | None] | None = None,
        persist_interval_ms: int = PERSIST_INTERVAL_MS,
        proc_root: Path = Path("/proc"),
    ) -> None:
        self.path = Path(path)
        self.expected = dict(expected or {})
        self.persist_interval_ms = persist_interval_ms
        self.proc_root = proc_root
        self.data = b""
        self.table = ClientOffsetTable(())
        self._lock: contextlib.ExitStack | None = None

    def _check_stopped(self) -> None:
        why = busy_reason(self.path, persist_interval_ms=self.persist_interval_ms, proc_root=self.proc_root)
        if why is not None:
            raise RefusedError(
                f"{why}; nothing written", hint="stop the client first, then run the command again"
            )

    def __enter__(self) -> ClientOffsetsWrite:
        stack = contextlib.ExitStack()
        try:
            stack.enter_context(_dir_lock(self.path.parent))
            _crash_point("locked")
            self._check_stopped()
            self.data, self.table = _read_clean(self.path)
            current = self.table.as_dict()
            stale = [mq for mq, off in self.expected.items() if current.get(mq) != _present(off)]
            if stale:
                mq = stale[0]
                raise RefusedError(
                    f"{self.path}: {mq.topic}/{mq.broker_name}/{mq.queue_id} holds {current.get(mq)}, "
                    f"not {self.expected[mq]} as planned; nothing written",
                    hint="the client ran since the plan was made: plan again",
                )
        except BaseException:
            stack.close()
            raise
        self._lock = stack
        return self

    def __exit__(self, *exc: object) -> None:
        if self._lock is not None:
            self._lock.close()
            self._lock = None

    def render(self, changes: Mapping[MessageQueue, int]) -> bytes:
        """The text ``commit(changes)`` would write (the file's layout; fastjson when unknown)."""
        return encode_client_offsets(_apply(self.table, changes), self.table.dialect or FASTJSON)

    def commit(self, changes: Mapping[MessageQueue, int]) -> bytes:
        """Write the changed table (an offset < 0 removes the queue); returns the bytes written."""
        return self.replace(self.render(changes))

    def replace(self, data: bytes) -> bytes:
        """Write ``data`` (it must decode) as the file's whole text: undo restores the old bytes."""
        if self._lock is None:
            raise RuntimeError("ClientOffsetsWrite.replace outside its with-block")
        decode_client_offsets(data, f"new text for {self.path}")
        self._check_stopped()
        st = os.stat(self.path)
        bak = self.path.with_name(self.path.name + BAK_SUFFIX)
        for target, text, tag in ((bak, self.data, "bak"), (self.path, data, "main")):
            fsio.atomic_write(target, text, mode=st.st_mode & 0o777, on_step=_steps(tag))
            if (os.stat(target).st_uid, os.stat(target).st_gid) != (st.st_uid, st.st_gid):
                with contextlib.suppress(PermissionError):
                    os.chown(target, st.st_uid, st.st_gid)  # the client must be able to rewrite it
        self.data = data
        self.table = decode_client_offsets(data, str(self.path))
        return data
