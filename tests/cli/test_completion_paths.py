"""The completions in completions/ complete mqctl however it is started: `mqctl`, the README's
`.venv/bin/mqctl` (no activated venv), or any other path ending in /mqctl.

Each row runs the real shell, installed the way the README says, and asks it to complete
`<command word> consumerPr`: bash and zsh interactively in a pseudo-terminal (their programmable
completion only runs there), fish through `complete -C` (fish's own completion query). A shell
that is not installed skips its rows.
"""

from __future__ import annotations

import os
import pty
import re
import select
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
COMPLETIONS = ROOT / "completions"
WORDS = ["mqctl", ".venv/bin/mqctl", "/opt/tools/bin/mqctl"]


def _need(shell: str) -> None:
    if shutil.which(shell) is None:
        pytest.skip(f"{shell} not installed")


def _interactive(argv: list[str], env: dict[str, str], setup: str, typed: str, timeout: float = 20.0) -> str:
    """Start ``argv`` in a pseudo-terminal, run ``setup``, type ``typed`` and Tab; the screen text.
    ``typed`` goes in once the shell has printed what setup echoes last (its result, READY42, is
    not the text typed, so the terminal's echo of the line cannot be mistaken for it)."""
    pid, fd = pty.fork()
    if pid == 0:  # the child: the shell
        os.execvpe(argv[0], argv, env)
    deadline = time.monotonic() + timeout
    try:
        os.write(fd, setup.encode() + b"; echo READY$((6 * 7))\n")
        out = _read_until(fd, b"READY42", deadline)
        os.write(fd, typed.encode() + b"\t")
        out += _read_until(fd, b"consumerProgress", deadline)
    finally:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        os.close(fd)
    return out.decode(errors="replace")


def _read_until(fd: int, marker: bytes, deadline: float) -> bytes:
    out = b""
    while time.monotonic() < deadline and marker not in out:
        ready, _, _ = select.select([fd], [], [], 0.2)
        if ready:
            try:
                out += os.read(fd, 4096)
            except OSError:
                break
    return out


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    return {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "TERM": "dumb", **extra}


@pytest.mark.parametrize("word", WORDS)
def test_bash_completes_any_path(tmp_path: Path, word: str) -> None:
    _need("bash")
    screen = _interactive(
        ["bash", "--norc", "--noprofile", "-i"],
        _env(tmp_path),
        f"source {COMPLETIONS / 'mqctl.bash'}",
        f"{word} consumerPr",
    )
    assert f"{word} consumerProgress" in screen, screen[-400:]


@pytest.mark.parametrize("name", ["mqctl", ".venv/bin/mqctl", "./.venv/bin/mqctl"])
def test_bash_binds_the_readme_invocations(name: str) -> None:
    """`complete -p .venv/bin/mqctl` answers (bash would also fall back to the last path component)."""
    _need("bash")
    result = subprocess.run(
        ["bash", "--norc", "--noprofile", "-c", f"source {COMPLETIONS / 'mqctl.bash'} && complete -p {name}"],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0 and "-F _mqctl" in result.stdout, result.stderr


@pytest.mark.parametrize("word", WORDS)
def test_zsh_completes_any_path(tmp_path: Path, word: str) -> None:
    """Installed as the README says: `_mqctl` in a directory on $fpath, then compinit."""
    _need("zsh")
    (tmp_path / ".zshrc").write_text(
        f"fpath=({COMPLETIONS} $fpath)\nautoload -Uz compinit && compinit -u -d {tmp_path}/.zcompdump\n"
    )
    screen = _interactive(["zsh", "-i"], _env(tmp_path, ZDOTDIR=str(tmp_path)), "true", f"{word} consumerPr")
    assert f"{word} consumerProgress" in screen, screen[-400:]


@pytest.mark.parametrize("word", WORDS)
def test_fish_completes_any_path(tmp_path: Path, word: str) -> None:
    """Installed where the README says (fish sources ~/.config/fish/conf.d/ at start, and reads
    ~/.config/fish/completions/ only for an mqctl on $PATH, which a venv's is not)."""
    _need("fish")
    readme = (ROOT / "README.md").read_text()
    where = re.search(r"fish: copy `mqctl\.fish` to `~/\.config/fish/([a-z.]+)/`", readme)
    assert where, "the README says where mqctl.fish goes"
    directory = tmp_path / "fish" / where.group(1)
    directory.mkdir(parents=True)
    shutil.copy(COMPLETIONS / "mqctl.fish", directory / "mqctl.fish")
    result = subprocess.run(
        ["fish", "-c", f"complete -C '{word} consumerPr'"],
        capture_output=True,
        text=True,
        env=_env(tmp_path, XDG_CONFIG_HOME=str(tmp_path)),
    )
    assert result.stdout.split() == ["consumerProgress"], result.stdout + result.stderr
