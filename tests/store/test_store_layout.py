"""StoreLayout: root validation, refused layouts, lock detection with a real second process."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from mqctl.errors import StoreCorruptError, StoreError, StoreUnsupportedError
from mqctl.store.layout import StoreLayout
from mqctl.store.safewrite import broker_lock_held


def make_store(root: Path) -> Path:
    for d in ("config", "consumequeue/TopicTest/0", "commitlog"):
        (root / d).mkdir(parents=True)
    (root / "commitlog" / "00000000000000000000").write_bytes(b"")
    return root


def test_paths(tmp_path: Path) -> None:
    s = StoreLayout.open(make_store(tmp_path), "broker-a")
    assert s.name == "broker-a" and not s.rocksdb_metadata
    assert s.config_dir == tmp_path / "config"
    assert s.consumequeue_dir == tmp_path / "consumequeue"
    assert s.commitlog_dirs == [tmp_path / "commitlog"]
    assert s.queue_dir("%RETRY%g", 3) == tmp_path / "consumequeue" / "%RETRY%g" / "3"


@pytest.mark.parametrize("topic", ["", "..", "a/b"])
def test_queue_dir_refuses_path_tricks(tmp_path: Path, topic: str) -> None:
    with pytest.raises(StoreError):
        StoreLayout.open(make_store(tmp_path), "b").queue_dir(topic, 0)


@pytest.mark.parametrize("only", ["config", "consumequeue", "commitlog"])
def test_any_one_dir_is_enough(tmp_path: Path, only: str) -> None:
    (tmp_path / only).mkdir()
    assert StoreLayout.open(tmp_path, "b").root == tmp_path


def test_not_a_store(tmp_path: Path) -> None:
    (tmp_path / "other").mkdir()
    (tmp_path / "config").write_text("a file, not a dir")
    for root in (tmp_path, tmp_path / "missing", tmp_path / "config"):
        with pytest.raises(StoreError) as exc:
            StoreLayout.open(root, "b")
        assert type(exc.value) is StoreError
        assert (
            exc.value.message
            == f"not a RocketMQ store root: {root} (expected config/, consumequeue/, commitlog/)"
        )


def test_rocksdb_consume_queue_refused(tmp_path: Path) -> None:
    make_store(tmp_path)
    (tmp_path / "consumequeue" / "CURRENT").write_text("MANIFEST-000001\n")
    with pytest.raises(StoreUnsupportedError, match="RocksDB"):
        StoreLayout.open(tmp_path, "b")


@pytest.mark.parametrize("meta", ["consumerOffsets", "rdb"])
def test_rocksdb_metadata_only_refused(tmp_path: Path, meta: str) -> None:
    make_store(tmp_path)
    (tmp_path / "config" / meta).mkdir()
    with pytest.raises(StoreUnsupportedError, match=f"config/{meta}/"):
        StoreLayout.open(tmp_path, "b")
    # With the JSON file next to it the store is readable, flagged for a staleness warning.
    (tmp_path / "config" / "consumerOffset.json").write_text("{}")
    assert StoreLayout.open(tmp_path, "b").rocksdb_metadata


@pytest.mark.parametrize("sub", ["dledger-n0/data", "commitlog/dledger-n0"])
def test_dledger_refused(tmp_path: Path, sub: str) -> None:
    make_store(tmp_path)
    (tmp_path / sub).mkdir(parents=True)
    with pytest.raises(StoreUnsupportedError, match="DLedger"):
        StoreLayout.open(tmp_path, "b")


def test_errors_are_not_corrupt_errors(tmp_path: Path) -> None:
    # Unsupported != corrupt: the CLI's hint differs.
    make_store(tmp_path)
    (tmp_path / "consumequeue" / "CURRENT").write_text("")
    with pytest.raises(StoreError) as exc:
        StoreLayout.open(tmp_path, "b")
    assert not isinstance(exc.value, StoreCorruptError)


# --- lock (the one probe: safewrite.broker_lock_held) ---------------------------------------

HOLDER = """
import fcntl, os, sys
fd = os.open(sys.argv[1], os.O_RDWR)
fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, 0)
print("locked", flush=True)
sys.stdin.read()
"""


def test_lock_missing_file_is_not_held_and_not_created(tmp_path: Path) -> None:
    s = StoreLayout.open(make_store(tmp_path), "b")
    assert not broker_lock_held(s.root)
    assert not (s.root / "lock").exists()


def test_lock_held_by_another_process(tmp_path: Path) -> None:
    s = StoreLayout.open(make_store(tmp_path), "b")
    (s.root / "lock").write_bytes(b"lock")
    assert not broker_lock_held(s.root)
    child = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(s.root / "lock")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "locked"
        assert broker_lock_held(s.root)
        assert broker_lock_held(s.root)  # probing did not disturb the holder
    finally:
        child.communicate("", timeout=10)
    assert not broker_lock_held(s.root)
    assert (s.root / "lock").read_bytes() == b"lock"  # never truncated


def test_lock_on_other_byte_is_not_the_broker_lock(tmp_path: Path) -> None:
    s = StoreLayout.open(make_store(tmp_path), "b")
    (s.root / "lock").write_bytes(b"lock")
    holder = HOLDER.replace("1, 0)", "1, 2)")
    child = subprocess.Popen(
        [sys.executable, "-c", holder, str(s.root / "lock")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "locked"
        assert not broker_lock_held(s.root)
    finally:
        child.communicate("", timeout=10)
