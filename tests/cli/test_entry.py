"""The ``mqctl`` process (mqctl.__main__): output complete and exit status kept when the
interpreter's teardown is skipped, and the teardown kept when something still needs it."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

from mqctl_testkit.cli import NOW_MS, invoke, run_process, store_args


def _entry(prelude: str, *args: str) -> subprocess.CompletedProcess[str]:
    """``mqctl ARGS`` started as the installed command starts it, after PRELUDE ran."""
    script = textwrap.dedent(prelude) + "\nfrom mqctl.__main__ import main\nmain()\n"
    return subprocess.run([sys.executable, "-c", script, *args], capture_output=True, text=True, timeout=120)


def test_large_output_is_complete_and_the_status_kept(tmp_path: Path) -> None:
    store = tmp_path / "demo"
    assert run_process("demo", str(store)).returncode == 0
    stores = [*store_args({"broker-a": store}), "--now-ms", str(NOW_MS)]
    r = run_process("consumerProgress", *stores, "-o", "json")
    assert r.returncode == 0, r.stderr
    assert r.stdout.endswith("\n") and json.loads(r.stdout)  # whole: flushed before the exit
    assert r.stdout == invoke("consumerProgress", *stores, "-o", "json").stdout
    missing = store_args({"broker-a": tmp_path / "missing"})
    bad = run_process("consumerProgress", *missing)
    assert bad.returncode == invoke("consumerProgress", *missing).exit_code == 6, bad.stderr
    assert bad.stderr.startswith("mqctl: error: not a RocketMQ store root")


def test_an_exit_handler_still_runs() -> None:
    r = _entry("import atexit\natexit.register(lambda: print('handler ran'))", "--version")
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["mqctl " + _version(), "handler ran"]


def test_a_running_thread_is_still_waited_for() -> None:
    prelude = """
        import threading, time
        threading.Thread(target=lambda: (time.sleep(0.3), print('thread done'))).start()
    """
    r = _entry(prelude, "--version")
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["mqctl " + _version(), "thread done"]


def test_the_collector_thresholds_are_the_commands_only() -> None:
    def threshold(code: str) -> str:
        return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout.strip()

    default = threshold("import gc\nprint(gc.get_threshold()[0])")
    assert default != "50000"
    # importing the CLI leaves Python's default alone
    assert threshold("import gc, mqctl.cli.app\nprint(gc.get_threshold()[0])") == default
    r = _entry("import atexit, gc\natexit.register(lambda: print(gc.get_threshold()[0]))", "--version")
    assert r.stdout.splitlines()[-1] == "50000"


def _version() -> str:
    from mqctl import __version__

    return __version__
