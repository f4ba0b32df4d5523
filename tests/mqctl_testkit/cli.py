"""Running mqctl from a test, in-process (typer's CliRunner on the real app) or as a process
(``python -m mqctl``, as a user runs it), and the small helpers CLI tests share."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from mqctl.cli.app import app

# 2026-01-01T00:00:00Z: the fixed "now" of the demo store and of most scenarios (--now-ms).
NOW_MS = 1_767_225_600_000

runner = CliRunner()


def invoke(*args: str, env: Mapping[str, str] | None = None) -> Any:
    """mqctl ARGS in this process; the result has exit_code, stdout and stderr apart. An exception
    mqctl did not turn into an exit status (a process would print its traceback and exit 1) is
    raised here, so no test can take it for an ordinary failure."""
    result = (CliRunner(env=dict(env)) if env else runner).invoke(app, list(args))
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result


def run_process(
    *args: str, env: Mapping[str, str] | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """``python -m mqctl ARGS`` as a process of its own (start-up, exit codes, real streams)."""
    return subprocess.run(
        [sys.executable, "-m", "mqctl", *args], capture_output=True, text=True, env=env, cwd=cwd
    )


def store_args(stores: Mapping[str, Path]) -> list[str]:
    """``--store NAME=PATH`` for each broker."""
    return [a for name, root in stores.items() for a in ("--store", f"{name}={root}")]


def snapshot(*roots: Path) -> dict[str, bytes]:
    """Every file under the roots with its bytes: compare two to prove nothing was written."""
    return {str(p): p.read_bytes() for r in roots for p in sorted(r.rglob("*")) if p.is_file()}


def error_lines(stderr: str) -> list[str]:
    """mqctl's error lines; never a traceback."""
    assert "Traceback" not in stderr, stderr
    return [x for x in stderr.splitlines() if x.startswith("mqctl: error: ")]


def ctrl_c_default() -> None:
    """``preexec_fn`` for a child the test will stop with SIGINT: Ctrl-C's default action, whatever
    the test runner inherited (a job started in the background, with nohup or from CI, has SIGINT
    ignored, and a Python started so never raises KeyboardInterrupt)."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)
