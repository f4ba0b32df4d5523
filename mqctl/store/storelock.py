"""The locks a write of a broker's store respects: the broker's own (``<root>/lock``, fcntl on
byte 0, held while it runs) and mqctl's (flock on the config directory, so two resets never
interleave; a reset that finds it held waits a bounded time for the other to finish). See
``safewrite`` for the write they guard."""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import random
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from mqctl.errors import RefusedError

__all__ = ["broker_lock_held", "check_broker_stopped", "mqctl_lock"]


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
def mqctl_lock(
    config_dir: Path, broker: str, timeout: float = 0.0, on_wait: Callable[[str], None] | None = None
) -> Iterator[None]:
    """mqctl's lock on one broker's config directory, waiting up to ``timeout`` seconds for
    another mqctl reset to release it (``on_wait`` hears that it waits)."""
    # flock (not fcntl) on the directory: independent of the broker's fcntl lock, and it
    # conflicts between two open descriptions even inside one process.
    fd = os.open(config_dir, os.O_RDONLY)
    try:
        _flock_within(fd, config_dir, broker, timeout, on_wait)
        yield
    finally:
        os.close(fd)  # closing releases the flock


def _flock_within(
    fd: int, config_dir: Path, broker: str, timeout: float, on_wait: Callable[[str], None] | None
) -> None:
    """Polled rather than blocking, so the wait is bounded without signals; another reset holds
    the lock only for its journal record and the file swaps (well under a second each)."""
    deadline = None
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except OSError as exc:
            if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                raise
        now = time.monotonic()
        if deadline is None:
            deadline = now + timeout
            if timeout > 0 and on_wait is not None:
                on_wait(
                    f"{broker}: another mqctl reset holds the lock on {config_dir}; waiting up to "
                    f"{timeout:g} s (--lock-timeout)"
                )
        if now >= deadline:
            waited = f" after {timeout:g} s" if timeout > 0 else ""
            raise RefusedError(
                f"{broker}: another mqctl reset still holds the lock on {config_dir}{waited}; nothing written",
                "run again once it is done, or wait longer with --lock-timeout SECONDS",
            )
        time.sleep(min(deadline - now, random.uniform(0.02, 0.08)))


def check_broker_stopped(broker: str, root: Path, force_abort_file: bool) -> None:
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
