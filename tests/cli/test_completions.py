"""completions/ holds static scripts generated from the command tree; they must stay current."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from mqctl.cli import completion

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("filename", sorted(completion.SCRIPTS))
def test_completion_script_is_current(filename: str) -> None:
    expected = completion.SCRIPTS[filename]()
    actual = (ROOT / "completions" / filename).read_text()
    assert actual == expected, (
        f"completions/{filename} is stale: run `python -m mqctl.cli.completion completions`"
    )


def test_every_command_is_completed() -> None:
    names, commands = completion._tree()
    script = (ROOT / "completions" / "mqctl.bash").read_text()
    for name in names:
        assert f"        {name})" in script
        for opt in commands[name]:
            for flag in opt.names:
                assert flag in script


def test_bash_script_parses() -> None:
    result = subprocess.run(
        ["bash", "-n", str(ROOT / "completions" / "mqctl.bash")], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize("shell,filename", [("zsh", "_mqctl"), ("fish", "mqctl.fish")])
def test_other_shells_parse_when_installed(shell: str, filename: str) -> None:
    if shutil.which(shell) is None:
        pytest.skip(f"{shell} not installed")
    result = subprocess.run(
        [shell, "-n", str(ROOT / "completions" / filename)], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
