"""Reading a broker config file: bounded, regular files only, errors naming the path (exit 6)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from mqctl.errors import StoreCorruptError, StoreError

__all__ = ["DENIED_HINT", "MAX_CONFIG_BYTES", "ConfigUnreadable", "read_config_bytes"]

# The most a config file may hold. A broker cannot load one of 2 GiB or more at all
# (MixAll.file2String reads it into one byte[] of (int) file.length()); the largest real
# consumerOffset.json files are tens of MiB. Bounding the read turns a file that never ends (a
# symlink to /dev/zero) into a clear error instead of a MemoryError after gigabytes.
MAX_CONFIG_BYTES = 1 << 30


def read_config_bytes(path: Path, limit: int | None = None) -> bytes | None:
    """A config file's bytes; None when it does not exist. ``StoreError`` (exit 6) naming the path
    when it cannot be read (permissions), is not a regular file, or is over ``limit`` bytes
    (default ``MAX_CONFIG_BYTES``)."""
    if limit is None:
        limit = MAX_CONFIG_BYTES
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise StoreError(f"cannot read {path}: {exc.strerror or exc}", DENIED_HINT) from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise ConfigUnreadable(path, "not a regular file")
        over = f"over the {limit:,}-byte limit of a {path.name}"
        if st.st_size > limit:
            raise ConfigUnreadable(path, f"{st.st_size:,} bytes, {over}")
        with os.fdopen(fd, "rb", closefd=False) as f:
            data = f.read(limit + 1)
        if len(data) > limit:  # grew while read
            raise ConfigUnreadable(path, over)
        return data
    except OSError as exc:
        raise StoreError(f"cannot read {path}: {exc.strerror or exc}", DENIED_HINT) from None
    finally:
        os.close(fd)


class ConfigUnreadable(StoreCorruptError):
    """A config file mqctl will not read: not a regular file, or over ``MAX_CONFIG_BYTES``."""

    def __init__(self, path: Path, why: str) -> None:
        super().__init__(f"{path}: {why}")
        self.why = why


DENIED_HINT = "run mqctl as a user who may read the store (the broker's), or fix its permissions"
