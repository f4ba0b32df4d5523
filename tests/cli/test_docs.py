"""Every command is documented in the README and has a --help that names its mqadmin equivalent."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
import typer.main

from mqctl.cli.app import app

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()


def _commands() -> list[str]:
    root = typer.main.get_command(app)
    ctx = root.make_context("mqctl", [], resilient_parsing=True)
    return [n for n in root.list_commands(ctx) if not root.get_command(ctx, n).hidden]  # type: ignore[union-attr]


@pytest.mark.parametrize("command", _commands())
def test_command_has_a_readme_section(command: str) -> None:
    assert re.search(rf"^### `mqctl {command}`$", README, re.M), (
        f"README lacks a '### `mqctl {command}`' section"
    )


MQADMIN = {"consumerProgress", "allocateMQ", "resetOffsetByTime", "consumerConnection"}


@pytest.mark.parametrize("command", sorted(MQADMIN))
def test_mqadmin_commands_exist_and_name_their_equivalent(command: str) -> None:
    assert command in _commands()
    r = subprocess.run([sys.executable, "-m", "mqctl", command, "-h"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert f"mqadmin {command}" in " ".join(r.stdout.split())


def test_readme_lists_every_exit_status() -> None:
    from mqctl.errors import ExitStatus

    for status in ExitStatus:
        assert re.search(rf"^\| {int(status)} \|", README, re.M), f"exit status {int(status)} undocumented"


def test_help_does_not_import_heavy_modules() -> None:
    probe = (
        "import sys\nfrom mqctl.cli.app import app\n"
        "for argv in (['--help'], ['consumerProgress', '--help'], ['exporter', '--help'], ['--version']):\n"
        "    try:\n        app(argv, prog_name='mqctl')\n    except SystemExit:\n        pass\n"
        "heavy = [m for m in ('numpy', 'pyspark', 'httpx', 'pandas', 'rich.table', 'prometheus_client') "
        "if m in sys.modules]\n"
        "print('HEAVY=' + ','.join(heavy))\n"
    )
    r = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout.rstrip().rsplit("HEAVY=", 1)[1] == ""


def test_command_names_match_case_insensitively_like_mqadmin() -> None:
    r = subprocess.run(
        [sys.executable, "-m", "mqctl", "CONSUMERPROGRESS", "-h"], capture_output=True, text=True
    )
    assert r.returncode == 0 and "consumerprogress" in r.stdout.lower()


def test_test_module_basenames_are_unique() -> None:
    # tests/ has no __init__.py files: two test modules with one basename stop pytest's collection.
    names = [p.name for p in (ROOT / "tests").rglob("test_*.py")]
    assert sorted(n for n in set(names) if names.count(n) > 1) == []
