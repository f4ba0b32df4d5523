"""mqctl.codecache: generated code compiled in one process is read, not compiled, by the next;
a damaged or foreign file and an unwritable directory only cost the compile."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from mqctl import codecache


def _process(cache: Path, body: str, *, write_bytecode: bool = True) -> subprocess.CompletedProcess[str]:
    """A new process whose code cache is CACHE, running BODY after a record is defined."""
    script = textwrap.dedent(
        f"""
        import sys
        sys.dont_write_bytecode = {not write_bytecode!r}
        from mqctl import codecache
        codecache._path = lambda owner: {str(cache)!r} + "." + owner
        from mqctl.records import record

        __name__ = "mqctl.probe"  # the record below is then a module of mqctl's own

        @record(frozen=True)
        class Point:
            x: int
            y: int = 7

        assert Point(1) == Point(1, 7) and Point(2).y == 7
        """
    ) + textwrap.dedent(body)
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)


def _compiled_here(body: str = "") -> str:
    return body + "\nprint(sum(map(len, codecache._added.values())))"


def test_the_next_process_reads_what_the_first_compiled(tmp_path: Path) -> None:
    cache = tmp_path / "sub" / "generated"
    first = _process(cache, _compiled_here())
    assert first.returncode == 0, first.stderr
    assert first.stdout.split() == ["1"]
    assert [p.name for p in cache.parent.iterdir()] == ["generated.mqctl.probe"]
    second = _process(cache, _compiled_here("print(len(codecache._tables['mqctl.probe']))"))
    assert second.returncode == 0, second.stderr
    assert second.stdout.split() == ["1", "0"]  # nothing compiled: the record's __init__ was read


def test_code_of_modules_outside_mqctl_is_not_kept(tmp_path: Path) -> None:
    cache = tmp_path / "generated"
    r = _process(
        cache,
        "__name__ = 'elsewhere'\nrecord(type('Other', (), {'__annotations__': {'a': 'int'}}))"
        + _compiled_here(),
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["1"]  # the probe's own record only
    assert [p.name for p in tmp_path.iterdir()] == ["generated.mqctl.probe"]


def test_nothing_written_when_bytecode_is_not(tmp_path: Path) -> None:
    r = _process(tmp_path / "generated", _compiled_here(), write_bytecode=False)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["1"] and not list(tmp_path.iterdir())


@pytest.mark.parametrize("content", [b"", b"garbage", b"\xe3\x00\x00", b"\xfb\x01\x00\x00\x00"])
def test_a_damaged_or_foreign_file_is_ignored_and_replaced(tmp_path: Path, content: bytes) -> None:
    cache = tmp_path / "generated"
    (tmp_path / "generated.mqctl.probe").write_bytes(content)
    r = _process(cache, _compiled_here())
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["1"]
    assert _process(cache, _compiled_here()).stdout.split() == ["0"]


def test_an_unwritable_place_only_costs_the_compile(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setattr(codecache, "_path", lambda owner: str(blocker / owner))
    code = compile("def f(): pass", "<string>", "exec")
    monkeypatch.setattr(codecache, "_added", {"mqctl.x": {"def f(): pass": code}})
    codecache._save()  # a directory that cannot be made: no exception, nothing left behind
    assert [p.name for p in tmp_path.iterdir()] == ["file"]


def test_the_table_starts_again_past_its_bound(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(codecache, "_path", lambda owner: str(tmp_path / owner))
    many = {f"x = {i}": compile(f"x = {i}", "<string>", "exec") for i in range(codecache.MAX_ENTRIES)}
    monkeypatch.setattr(codecache, "_added", {"mqctl.x": many})
    codecache._save()
    assert len(codecache._load("mqctl.x")) == codecache.MAX_ENTRIES
    monkeypatch.setattr(codecache, "_added", {"mqctl.x": {"y = 1": compile("y = 1", "<string>", "exec")}})
    codecache._save()
    assert list(codecache._load("mqctl.x")) == ["y = 1"]


def test_the_tables_live_in_the_users_cache_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    tag = sys.implementation.cache_tag
    assert codecache._path("mqctl.model.queues") == str(
        tmp_path / "xdg" / "mqctl" / "generated" / f"mqctl.model.queues.{tag}.marshal"
    )
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert codecache._path("mqctl.x").startswith(str(tmp_path / "home" / ".cache" / "mqctl" / "generated"))
