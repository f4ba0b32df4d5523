"""Where things live in a broker's store root, and which layouts mqctl refuses (spec 1)."""

from __future__ import annotations

import os
from pathlib import Path

from mqctl.errors import StoreError, StoreUnsupportedError
from mqctl.records import record
from mqctl.store.configread import DENIED_HINT

__all__ = ["StoreLayout", "denied_path"]

_EXPECTED = "(expected config/, consumequeue/, commitlog/)"


def _dledger_dirs(root: Path) -> list[Path]:
    # DLedger keeps its log under <root>/dledger-<selfId>/{data,index} unless
    # storePathDLedgerCommitLog points elsewhere; a plain commit log dir holds only
    # 20-digit segment files, so any subdirectory there is DLedger's (or unknown) too.
    found = sorted(p for p in root.glob("dledger-*") if p.is_dir())
    commitlog = root / "commitlog"
    if commitlog.is_dir():
        found += sorted(p for p in commitlog.iterdir() if p.is_dir())
    return found


def denied_path(path: Path) -> Path:
    """The first directory on the way to ``path`` this process may not search (list and enter),
    else ``path`` itself: where a permission error really comes from."""
    parts = path.parts
    for i in range(1, len(parts)):
        d = Path(*parts[:i])
        if d.is_dir() and not os.access(d, os.X_OK | os.R_OK):
            return d
    return path


@record(frozen=True)
class StoreLayout:
    """A validated broker store root (``storePathRootDir``) of broker ``name``."""

    root: Path
    name: str
    rocksdb_metadata: bool = False  # RocksDB metadata sits next to the JSON files, which may be stale

    @classmethod
    def open(cls, root: Path, name: str) -> StoreLayout:
        root = Path(root)
        try:
            return cls._open(root, name)
        except OSError as exc:
            # A permission (chmod 000, another user's store): name the directory that refuses,
            # not a path inside it that may not even exist.
            raise StoreError(
                f"cannot read store {name} ({root}): {denied_path(Path(exc.filename or root))}: "
                f"{exc.strerror or exc}",
                hint=DENIED_HINT,
            ) from None

    @classmethod
    def _open(cls, root: Path, name: str) -> StoreLayout:
        if not root.is_dir() or not any((root / d).is_dir() for d in ("config", "consumequeue", "commitlog")):
            raise StoreError(
                f"not a RocketMQ store root: {root} {_EXPECTED}",
                hint="pass the broker's storePathRootDir (default ~/store)",
            )
        where = f"store {name} ({root})"
        if (root / "consumequeue" / "CURRENT").exists():
            raise StoreUnsupportedError(
                f"{where}: consumequeue/ is a RocksDB database (storeType=defaultRocksDB); "
                "mqctl reads only file-based consume queues",
                hint="query this broker through the name server instead (--namesrv)",
            )
        config = root / "config"
        rocksdb_meta = [d for d in ("consumerOffsets", "rdb") if (config / d).is_dir()]
        has_json = any((config / f).exists() for f in ("consumerOffset.json", "consumerOffset.json.bak"))
        if rocksdb_meta and not has_json:
            raise StoreUnsupportedError(
                f"{where}: consumer offsets are kept in RocksDB (config/{rocksdb_meta[0]}/) and there is "
                "no consumerOffset.json; mqctl reads only the JSON metadata files",
                hint="query this broker through the name server instead (--namesrv)",
            )
        dledger = _dledger_dirs(root)
        if dledger:
            raise StoreUnsupportedError(
                f"{where}: DLedger commit log found ({dledger[0].relative_to(root)}/); "
                "mqctl reads only the plain commit log format",
                hint="query this broker through the name server instead (--namesrv)",
            )
        return cls(root=root, name=name, rocksdb_metadata=bool(rocksdb_meta))

    @property
    def config_dir(self) -> Path:
        return self.root / "config"

    @property
    def consumequeue_dir(self) -> Path:
        return self.root / "consumequeue"

    @property
    def commitlog_dirs(self) -> list[Path]:
        # A multi-path storePathCommitLog lives outside the root and is not discoverable from it.
        return [self.root / "commitlog"]

    def queue_dir(self, topic: str, queue_id: int) -> Path:
        if not topic or topic in (".", "..") or "/" in topic or "\0" in topic:
            raise StoreError(f"invalid topic name for a store path: {topic!r}")
        return self.consumequeue_dir / topic / str(int(queue_id))
