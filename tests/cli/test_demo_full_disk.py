"""`mqctl demo PATH` on a disk that fills up leaves nothing behind: the store is built in a hidden
sibling and renamed into place, and a failure removes the sibling and any parent it created.

Two ways to fill the disk: a real tmpfs of a few hundred KiB (needs root and mount; skipped
otherwise; the demo store takes about 1 MiB, so each size fails at a different stage), and
ENOSPC raised at the store writer's seams (every run: the first write, a write in the middle,
the config files at close).
"""

from __future__ import annotations

import errno
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mqctl.cli.app import app
from mqctl.store import writer

runner = CliRunner()


def demo(path: Path):  # type: ignore[no-untyped-def]
    return runner.invoke(app, ["demo", str(path), "--now-ms", "1767225600000"])


def leftovers(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir())


@pytest.fixture
def tiny_fs(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Path]:
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    size = request.param
    if shutil.which("mount") is None:
        pytest.skip("no mount(8)")
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(mnt)], capture_output=True)
    if r.returncode:
        pytest.skip(f"cannot mount a tmpfs here: {r.stderr.decode().strip()}")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", str(mnt)], check=False)


@pytest.mark.parametrize("tiny_fs", ["16k", "128k", "512k", "900k"], indirect=True)
@pytest.mark.parametrize("target", ["store", "new/parents/store"])
def test_demo_on_a_full_tmpfs_leaves_nothing(tiny_fs: Path, target: str) -> None:
    r = demo(tiny_fs / target)
    assert r.exit_code == 6, (r.exit_code, r.stdout, r.stderr)
    assert r.stderr.splitlines()[0] == (
        f"mqctl: error: cannot write the demo store in {tiny_fs / target}: No space left on device"
    )
    assert leftovers(tiny_fs) == []
    assert r.stdout == ""


SEAMS = [
    # (function of mqctl.store.writer that fails, on which call)
    ("_create_preallocated", 1),  # the first commit-log segment
    ("_write_at", 1),
    ("_write_at", 40),
    ("_create_preallocated", 30),  # a consume-queue file mid-build
    ("_persist", 1),  # topics.json, at close
    ("_persist", 3),  # consumerOffset.json, the last config file
]


@pytest.mark.parametrize(("seam", "call"), SEAMS, ids=[f"{s}#{n}" for s, n in SEAMS])
@pytest.mark.parametrize("target", ["store", "new/parents/store", "existing-empty"])
def test_demo_failing_at_any_write_leaves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seam: str, call: int, target: str
) -> None:
    real = getattr(writer, seam)
    calls = {"n": 0}

    def failing(*args, **kwargs):  # type: ignore[no-untyped-def]
        calls["n"] += 1
        if calls["n"] == call:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(*args, **kwargs)

    monkeypatch.setattr(writer, seam, failing)
    base = tmp_path / "base"
    base.mkdir()
    if target == "existing-empty":
        (base / target).mkdir()
    r = demo(base / target)
    assert calls["n"] == call, "the seam was not reached"
    assert r.exit_code == 6, (r.exit_code, r.stdout, r.stderr)
    assert "No space left on device" in r.stderr and "nothing was left behind" in r.stderr
    # an empty directory the user made is theirs and stays; nothing else is left
    assert leftovers(base) == (["existing-empty"] if target == "existing-empty" else [])
    if target == "existing-empty":
        assert leftovers(base / target) == []


def test_a_demo_that_succeeds_leaves_only_the_store(tmp_path: Path) -> None:
    r = demo(tmp_path / "a" / "store")
    assert r.exit_code == 0, r.stderr
    assert leftovers(tmp_path / "a") == ["store"]
    assert leftovers(tmp_path / "a" / "store") == [
        "checkpoint",
        "commitlog",
        "config",
        "consumequeue",
        "index",
    ]
    assert f"storePathRootDir={tmp_path / 'a' / 'store'}" in r.stdout  # the final path, not the sibling
