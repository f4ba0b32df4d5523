"""Writing a stopped client's offsets.json: the running check, the re-read, the client's sequence
(.bak first), each file atomic, the file's own layout and order; what a crash leaves."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from mqctl.errors import NotFoundError, RefusedError, StoreCorruptError
from mqctl.model import MessageQueue
from mqctl.store import clientwrite
from mqctl.store.clientoffsets import decode_client_offsets, load_client_offsets
from mqctl.store.clientwrite import ClientOffsetsWrite, busy_reason, holders

GOLDEN = Path(__file__).parent / "golden" / "clientoffsets"
B_REL = "hostB/.rocketmq_offsets/192.0.2.2@bcB/GroupBc/offsets.json"
A0, A1, A2 = (MessageQueue("TopicBc", "broker-a", q) for q in range(3))
B0, B1 = (MessageQueue("TopicBc", "broker-b", q) for q in range(2))
OLD = time.time() - 3600


def _stopped_client(tmp_path: Path, version: str = "5.3.3") -> Path:
    d = tmp_path / "192.0.2.2@bcB" / "GroupBc"
    d.mkdir(parents=True)
    path = d / "offsets.json"
    path.write_bytes((GOLDEN / version / B_REL).read_bytes())
    os.utime(path, (OLD, OLD))
    return path


def test_a_file_written_within_two_persist_intervals_is_busy(tmp_path: Path) -> None:
    path = _stopped_client(tmp_path)
    now = int(time.time() * 1000)
    assert busy_reason(path, proc_root=tmp_path / "noproc") is None
    os.utime(path, ((now - 9000) / 1000, (now - 9000) / 1000))
    assert "9.0 s ago" in (busy_reason(path, now_ms=now, proc_root=tmp_path / "noproc") or "")
    assert busy_reason(path, now_ms=now, persist_interval_ms=4000, proc_root=tmp_path / "noproc") is None
    # the .bak (or a 4.x client's .tmp) counts too
    os.utime(path, (OLD, OLD))
    path.with_name("offsets.json.tmp").write_bytes(b"")
    assert "offsets.json.tmp" in (busy_reason(path, proc_root=tmp_path / "noproc") or "")


def test_a_process_holding_the_file_is_seen(tmp_path: Path) -> None:
    path = _stopped_client(tmp_path)
    proc = tmp_path / "proc"
    (proc / "4242" / "fd").mkdir(parents=True)
    (proc / "4242" / "fd" / "7").symlink_to(path)
    (proc / "17" / "fd").mkdir(parents=True)
    (proc / "17" / "fd" / "3").symlink_to(tmp_path / "elsewhere")
    assert holders(path, proc) == [4242]
    assert "process 4242" in (busy_reason(path, proc_root=proc) or "")


def test_this_process_holding_it_open_is_seen_in_the_real_proc(tmp_path: Path) -> None:
    if not Path("/proc/self/fd").is_dir():
        pytest.skip("no /proc")
    path = _stopped_client(tmp_path)
    with path.open("rb"):
        assert os.getpid() in holders(path)


def test_commit_writes_the_clients_sequence(tmp_path: Path) -> None:
    path = _stopped_client(tmp_path, "5.5.1")
    old = path.read_bytes()
    with ClientOffsetsWrite(path, expected={A0: 10, B1: 10}, proc_root=tmp_path / "noproc") as w:
        written = w.commit({A0: 3, B1: 4})
    assert path.with_name("offsets.json.bak").read_bytes() == old
    assert path.read_bytes() == written
    table = decode_client_offsets(written)
    assert table.dialect == "fastjson2"  # the file's own layout
    # same order as before, only the values changed
    assert [mq for mq, _ in table.entries] == [mq for mq, _ in decode_client_offsets(old).entries]
    assert table.as_dict() == {A0: 3, A1: 10, A2: 0, B0: 10, B1: 4}
    assert not list(path.parent.glob("*mqctl-tmp*"))


def test_a_new_queue_goes_where_the_client_puts_it_and_a_negative_offset_removes(tmp_path: Path) -> None:
    path = _stopped_client(tmp_path)
    extra = MessageQueue("TopicOther", "broker-x", 7)
    with ClientOffsetsWrite(path, proc_root=tmp_path / "noproc") as w:
        table = decode_client_offsets(w.commit({extra: 99, A2: -1}))
    assert table.as_dict() == {A0: 10, A1: 10, B0: 10, B1: 10, extra: 99}
    # the 5.3.3 client itself put this entry last (a real run: the project's broadcast notes)
    assert table.entries[-1] == (extra, 99)


def test_stale_plan_is_refused_and_nothing_written(tmp_path: Path) -> None:
    path = _stopped_client(tmp_path)
    before = path.read_bytes()
    with pytest.raises(RefusedError, match="not 9 as planned"):
        with ClientOffsetsWrite(path, expected={A0: 9}, proc_root=tmp_path / "noproc"):
            pass
    with pytest.raises(RefusedError, match="holds 0"):  # A2 is there, expected absent
        with ClientOffsetsWrite(path, expected={A2: None}, proc_root=tmp_path / "noproc"):
            pass
    assert path.read_bytes() == before and not path.with_name("offsets.json.bak").exists()


def test_running_client_is_refused(tmp_path: Path) -> None:
    path = _stopped_client(tmp_path)
    path.touch()
    with pytest.raises(RefusedError, match="stop the client|may be running") as info:
        with ClientOffsetsWrite(path, proc_root=tmp_path / "noproc"):
            pass
    assert info.value.exit_status == 5


@pytest.mark.parametrize("main", [b"", b'{"offsetTable":{{"brokerName"'], ids=["empty", "truncated"])
def test_never_writes_over_a_file_it_could_not_parse(tmp_path: Path, main: bytes) -> None:
    path = _stopped_client(tmp_path)
    path.write_bytes(main)
    os.utime(path, (OLD, OLD))
    with pytest.raises(StoreCorruptError, match="refusing to write"):
        with ClientOffsetsWrite(path, proc_root=tmp_path / "noproc"):
            pass
    assert path.read_bytes() == main


def test_missing_file(tmp_path: Path) -> None:
    (tmp_path / "c@i" / "G").mkdir(parents=True)
    with pytest.raises(NotFoundError):
        with ClientOffsetsWrite(tmp_path / "c@i" / "G" / "offsets.json", proc_root=tmp_path / "noproc"):
            pass


def test_undo_restores_bytes(tmp_path: Path) -> None:
    path = _stopped_client(tmp_path, "4.9.7")
    old = path.read_bytes()
    with ClientOffsetsWrite(path, proc_root=tmp_path / "noproc") as w:
        w.commit({A0: 1})
    os.utime(path, (OLD, OLD))
    os.utime(path.with_name("offsets.json.bak"), (OLD, OLD))
    with ClientOffsetsWrite(path, expected={A0: 1}, proc_root=tmp_path / "noproc") as w:
        w.replace(old)
    assert path.read_bytes() == old


def test_a_second_writer_is_refused(tmp_path: Path) -> None:
    path = _stopped_client(tmp_path)
    with ClientOffsetsWrite(path, proc_root=tmp_path / "noproc"):
        with pytest.raises(RefusedError, match="another mqctl write"):
            with ClientOffsetsWrite(path, proc_root=tmp_path / "noproc"):
                pass


STEPS = [
    f"{f}-{s}" for f in ("bak", "main") for s in ("partial", "written", "fsynced", "renamed", "dir-fsynced")
]


@pytest.mark.parametrize("point", STEPS)
def test_a_crash_at_any_step_leaves_old_or_new(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, point: str
) -> None:
    """What the client would load after a crash at ``point`` is the old table or the new one."""
    path = _stopped_client(tmp_path)
    old = decode_client_offsets(path.read_bytes()).as_dict()

    def crash(name: str) -> None:
        if name == point:
            raise KeyboardInterrupt(name)

    monkeypatch.setattr(clientwrite, "_crash_point", crash)
    with pytest.raises(KeyboardInterrupt):
        with ClientOffsetsWrite(path, proc_root=tmp_path / "noproc") as w:
            w.commit({A0: 1})
    loaded = load_client_offsets(path, retries=0)
    assert loaded.value is not None
    assert loaded.value.as_dict() in (old, {**old, A0: 1})
    assert not loaded.fell_back
