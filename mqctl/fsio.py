"""The one atomic file write and the one synced append, for every file mqctl writes: a store's
consumerOffset.json (store/safewrite), the undo journal, plan exports, --history lines, Spark's
log configuration, a broadcasting client's offsets.json; and the probe that a directory takes a
new file at all, made before the work whose result goes there.

An atomic write goes to a temporary file next to the target, is fsynced, renamed over the target
(or linked to it without clobbering), and the directory is fsynced: a reader, and a crash at any
point, sees the old file or the new one, never a mix. ``on_step`` names each step as it is done
(the safe write's crash points, for fault-injection tests). Imports no other mqctl module.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from pathlib import Path

Step = Callable[[str], None]


def _no_step(_name: str) -> None:
    pass


def write_all(fd: int, data: bytes | memoryview) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_synced(
    path: Path, data: bytes, *, mode: int = 0o644, exclusive: bool = False, on_step: Step = _no_step
) -> None:
    """Write ``data`` as the whole of a new file (``exclusive``: it must not exist) and fsync it;
    the steps are "partial" (half written), "written", "fsynced"."""
    flags = os.O_WRONLY | os.O_CREAT | (os.O_EXCL if exclusive else os.O_TRUNC)
    fd = os.open(path, flags, mode)
    try:
        half = len(data) // 2
        write_all(fd, memoryview(data)[:half])
        on_step("partial")
        write_all(fd, memoryview(data)[half:])
        on_step("written")
        os.fsync(fd)
    finally:
        os.close(fd)
    on_step("fsynced")


def atomic_write(
    path: Path,
    data: bytes,
    *,
    mode: int = 0o644,
    replace: bool = True,
    tmp_tag: str = ".mqctl-tmp",
    on_step: Step = _no_step,
) -> None:
    """``path`` holds ``data`` afterwards, or (on any failure) what it held before; the temporary
    file never stays behind. ``replace`` False: FileExistsError when ``path`` exists (it is never
    replaced, even when it appeared after a caller's check)."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}{tmp_tag}")
    try:
        write_synced(tmp, data, mode=mode, exclusive=True, on_step=on_step)
        if replace:
            os.replace(tmp, path)
        else:
            os.link(tmp, path)
        on_step("renamed")
        fsync_dir(path.parent)
        on_step("dir-fsynced")
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()


def probe_create(directory: Path) -> None:
    """Create and remove an empty file in ``directory``: raises the OSError of a directory that
    takes no new entry (/proc, a read-only mount, no permission), so a command can refuse a
    target before its work rather than fail at the write after it."""
    probe = directory / f".mqctl-probe.{os.getpid()}"
    os.close(os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    os.unlink(probe)


def append_line(path: Path, line: str, *, mode: int = 0o644) -> None:
    """Append one line in one ``write`` on an O_APPEND descriptor (concurrent appenders never
    interleave), starting on a new line when the file ends in a line cut short, then fsync."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, mode)
    try:
        size = os.fstat(fd).st_size
        lead = b""
        if size:
            with open(path, "rb") as f:
                f.seek(size - 1)
                lead = b"" if f.read(1) == b"\n" else b"\n"
        write_all(fd, lead + line.encode("utf-8") + b"\n")
        os.fsync(fd)
    finally:
        os.close(fd)
