"""Finding broadcasting clients' offsets.json under the PATHs a user gives, on the real files of
tests/store/golden/clientoffsets (laid out as copies gathered from two hosts)."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest

from mqctl.backends.clientoffsets import find_client_files, read_client_offsets
from mqctl.errors import NotFoundError, StoreCorruptError, StoreError
from mqctl.model import MessageQueue

GOLDEN = Path(__file__).parent.parent / "store" / "golden" / "clientoffsets"
A0, A1, A2 = (MessageQueue("TopicBc", "broker-a", q) for q in range(3))
B0, B1 = (MessageQueue("TopicBc", "broker-b", q) for q in range(2))


@pytest.fixture
def gathered(tmp_path: Path) -> Path:
    """The 5.5.1 golden tree copied (so tests may damage it): hostA/, hostB/ (+ README etc.)."""
    root = tmp_path / "gathered"
    shutil.copytree(GOLDEN / "5.5.1", root)
    return root


def test_gathered_hosts(gathered: Path) -> None:
    clients = read_client_offsets([gathered], "GroupBc", retries=0)
    assert [(c.host, c.client_id, c.group) for c in clients] == [
        ("hostA", "192.0.2.2@bcA", "GroupBc"),
        ("hostB", "192.0.2.2@bcB", "GroupBc"),
    ]
    a, b = clients
    # what each consumer received (golden/clientoffsets/README.md)
    assert dict(a.offsets) == {A0: 1, A1: 1, B0: 8, B1: 8}
    assert dict(b.offsets) == {A0: 10, A1: 10, A2: 0, B0: 10, B1: 10}
    assert a.path == str(gathered / "hostA/.rocketmq_offsets/192.0.2.2@bcA/GroupBc/offsets.json")
    assert a.read_from == a.path and not a.fell_back and a.warning is None
    assert a.client_ip == "192.0.2.2" and a.instance_name == "bcA"
    assert a.dialect == "fastjson2"
    assert a.mtime_ms == os.stat(a.path).st_mtime_ns // 1_000_000


def test_a_clients_own_directory_and_its_file(gathered: Path) -> None:
    store_dir = gathered / "hostB" / ".rocketmq_offsets"
    (only,) = read_client_offsets([store_dir], "GroupBc", retries=0)
    assert (only.host, only.client_id) == (None, "192.0.2.2@bcB")
    file = store_dir / "192.0.2.2@bcB" / "GroupBc" / "offsets.json"
    (again,) = read_client_offsets([file], "GroupBc", retries=0)
    assert again.offsets == only.offsets and again.client_id == "192.0.2.2@bcB"
    # the same file reached twice is one client
    assert len(read_client_offsets([gathered, store_dir, file], "GroupBc", retries=0)) == 2
    # a host directory: its .rocketmq_offsets is not taken for a host name
    (h,) = read_client_offsets([gathered / "hostB"], "GroupBc", retries=0)
    assert h.host is None


def test_other_groups_are_left_out_and_named_when_nothing_matches(gathered: Path) -> None:
    other = gathered / "hostA" / ".rocketmq_offsets" / "192.0.2.2@bcA" / "GroupOther"
    other.mkdir()
    (other / "offsets.json").write_bytes(b"{broken")  # never read: another group's
    assert len(read_client_offsets([gathered], "GroupBc", retries=0)) == 2
    with pytest.raises(
        NotFoundError, match=r"no offsets.json of group GroupX .*found groups: GroupBc, GroupOther"
    ):
        find_client_files([gathered], "GroupX")


def test_files_outside_the_layout_are_named_when_nothing_matches(tmp_path: Path, gathered: Path) -> None:
    """A copy taken without its <clientId>/<group>/ directories names no group: skipped by the
    walk (it could be any group's), and the error says where it lies and how to read it."""
    copies = tmp_path / "copies"
    (copies / "from-host-a").mkdir(parents=True)
    first = copies / "from-host-a" / "offsets.json"
    shutil.copy(gathered / "hostA/.rocketmq_offsets/192.0.2.2@bcA/GroupBc/offsets.json", first)
    with pytest.raises(NotFoundError) as info:
        find_client_files([copies], "GroupBc")
    assert info.value.hint is not None and info.value.hint.endswith(
        f"; {first} lies outside that layout: give such a file by name"
    )
    (copies / "from-host-b").mkdir()
    shutil.copy(first, copies / "from-host-b" / "offsets.json")
    with pytest.raises(NotFoundError) as info:
        find_client_files([copies], "GroupBc")
    assert info.value.hint is not None and f"; {first} and 1 more lie outside that layout" in info.value.hint
    # given by name, as the hint says, the copy is read
    (read,) = read_client_offsets([first], "GroupBc", retries=0)
    assert dict(read.offsets) == {A0: 1, A1: 1, B0: 8, B1: 8}


def test_a_file_of_another_group_given_by_name(gathered: Path) -> None:
    other = gathered / "hostA" / ".rocketmq_offsets" / "192.0.2.2@bcA" / "GroupOther"
    other.mkdir()
    shutil.copy(
        gathered / "hostA/.rocketmq_offsets/192.0.2.2@bcA/GroupBc/offsets.json", other / "offsets.json"
    )
    with pytest.raises(StoreCorruptError, match="is group GroupOther's offsets.json") as info:
        read_client_offsets([other / "offsets.json"], "GroupBc", retries=0)
    assert str(other / "offsets.json") in info.value.message and info.value.exit_status == 6


def test_a_copy_outside_the_client_layout_is_taken_as_given(gathered: Path, tmp_path: Path) -> None:
    copy = tmp_path / "from-hostA.json"
    shutil.copy(gathered / "hostA/.rocketmq_offsets/192.0.2.2@bcA/GroupBc/offsets.json", copy)
    (c,) = read_client_offsets([copy], "GroupBc", retries=0)
    assert (c.client_id, c.group, c.host) == (None, None, None)
    assert dict(c.offsets)[B0] == 8


def test_missing_path(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="no such file or directory"):
        read_client_offsets([tmp_path / "nope"], "GroupBc")


def test_empty_with_a_good_bak_falls_back(gathered: Path) -> None:
    main = gathered / "hostB/.rocketmq_offsets/192.0.2.2@bcB/GroupBc/offsets.json"
    main.write_bytes(b"")
    b = read_client_offsets([gathered], "GroupBc", retries=0)[1]
    assert b.fell_back and b.read_from == str(main) + ".bak"
    assert dict(b.offsets)[A0] == 10 and b.warning is not None


def test_only_a_bak_left(gathered: Path) -> None:
    """A 4.x client deletes the file before renaming its .tmp over it: a crash there leaves the .bak."""
    main = gathered / "hostB/.rocketmq_offsets/192.0.2.2@bcB/GroupBc/offsets.json"
    main.unlink()
    b = read_client_offsets([gathered], "GroupBc", retries=0)[1]
    assert b.fell_back and dict(b.offsets)[A2] == 0
    assert b.mtime_ms == os.stat(str(main) + ".bak").st_mtime_ns // 1_000_000


@pytest.mark.parametrize("damage", [b"", b'{\n\t"offsetTable":{\n\t\t{'], ids=["empty", "truncated"])
def test_a_bad_file_without_a_bak_names_the_file(gathered: Path, damage: bytes) -> None:
    main = gathered / "hostA/.rocketmq_offsets/192.0.2.2@bcA/GroupBc/offsets.json"
    main.write_bytes(damage)
    if damage:
        with pytest.raises(StoreCorruptError) as info:
            read_client_offsets([gathered], "GroupBc", retries=0)
        assert str(main) in info.value.message
    else:
        # empty and no .bak: the client starts afresh; mqctl says it has no offsets, with a warning
        a = read_client_offsets([gathered], "GroupBc", retries=0)[0]
        assert a.offsets == () and a.read_from is None and a.warning is not None


def test_an_unreadable_directory_is_an_error_naming_it(gathered: Path) -> None:
    if os.geteuid() == 0:
        pytest.skip("root reads every directory")
    d = gathered / "hostA" / ".rocketmq_offsets"
    d.chmod(0)
    try:
        with pytest.raises(StoreError, match=str(d)):
            read_client_offsets([gathered], "GroupBc", retries=0)
    finally:
        d.chmod(0o755)


def test_walk_is_bounded_and_does_not_follow_directory_links(gathered: Path) -> None:
    (gathered / "hostA" / "loop").symlink_to(gathered, target_is_directory=True)
    deep = gathered.joinpath(*[f"d{i}" for i in range(9)], "192.0.2.9@far", "GroupBc")
    deep.mkdir(parents=True)
    (deep / "offsets.json").write_bytes(b"{broken")  # too deep to be looked at
    t0 = time.monotonic()
    assert len(read_client_offsets([gathered], "GroupBc", retries=0)) == 2
    assert time.monotonic() - t0 < 5
