"""lagReport as users run it: the installed ``mqctl`` in a fresh process with its own JVM.

- The Python workers must run mqctl's interpreter even when the first ``python3`` on PATH
  cannot import mqctl (a venv used without activating it).
- A successful run prints the result on stdout and, on a non-terminal stderr, only the line
  naming Spark's log file; Spark's log (no FileNotFoundException) is in that file.
- ``--verbose`` leaves Spark's log on stderr.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from mqctl_testkit.cli import NOW_MS

pytestmark = pytest.mark.spark

NOW = NOW_MS  # 2026-01-01T00:00:00Z
SUBS = {"order-analytics": {"OrderEvents": "paid"}, "payment-service": {"PaymentEvents": "TagB"}}
SPARK_LOG_LINE = re.compile(r"^\d\d/\d\d/\d\d \d\d:\d\d:\d\d (INFO|WARN|ERROR) ", re.MULTILINE)


@pytest.fixture(scope="module", autouse=True)
def _spark_installed() -> None:
    """Skips without the [spark] extra; asked when a test runs, so collecting this module (in a
    run that leaves Spark out, too) imports none of pyspark, pyarrow or pandas."""
    for name in ("pyspark", "pyarrow", "pandas"):
        if importlib.util.find_spec(name) is None:
            pytest.skip(f"{name} is not installed (the [spark] extra)")


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from mqctl.store.demo import build_demo_store

    root = tmp_path_factory.mktemp("lagreport-demo") / "store"
    build_demo_store(root, now_ms=NOW)
    return root


def expected_top(store: Path) -> dict[str, dict[str, Any]]:
    """Per group, the report's totals computed by consumerProgress's code (no Spark)."""
    from mqctl.backends.store import StoreBackend
    from mqctl.model import parse_subexpr
    from mqctl.ops.progress import group_progress
    from mqctl.pipeline.inputs import consumer_queues, load_broker_input

    # The groups the report covers: its driver-side input (offset-table keys with a topic config).
    groups = sorted({q.group for q in consumer_queues([load_broker_input("broker-a", store)], None)})
    out: dict[str, dict[str, Any]] = {}
    with StoreBackend({"broker-a": store}) as backend:
        for group in groups:
            expr = next(iter(SUBS.get(group, {}).values()), None)
            p = group_progress(backend, group, tags=None if expr is None else parse_subexpr(expr), now_ms=NOW)
            subscribed = [r for r in p.rows if SUBS.get(group, {}).get(r.topic) is not None]
            out[group] = {
                "diffTotal": sum(r.diff for r in p.rows),
                "matchedDiffTotal": sum(r.matched_diff for r in subscribed) if subscribed else None,
                "maxLagMs": max(r.lag_ms for r in p.rows),
                "queues": len(p.rows),
                "queuesBelowMin": sum(1 for r in p.rows if r.committed and r.consumer_offset < r.min_offset),
                "queuesAboveMax": sum(
                    1 for r in p.rows if r.committed and r.consumer_offset > r.broker_offset
                ),
            }
    return out


def _mqctl() -> list[str]:
    """The venv's console script (how the README runs mqctl), else ``python -m mqctl``."""
    script = Path(sys.executable).with_name("mqctl")
    return [str(script)] if script.is_file() else [sys.executable, "-m", "mqctl"]


def _env(tmp_path: Path, path_first: Path | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYSPARK_", "SPARK_"))}
    for name in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME", "MQCTL_DEBUG"):
        env.pop(name, None)
    env["XDG_STATE_HOME"] = str(tmp_path / "state")
    if path_first is not None:
        env["PATH"] = f"{path_first}{os.pathsep}{env.get('PATH', '')}"
    return env


def _foreign_python3(tmp_path: Path) -> Path:
    """A directory whose ``python3`` is another interpreter that cannot import mqctl."""
    base = getattr(sys, "_base_executable", "") or "/usr/bin/python3"
    shim_dir = tmp_path / "foreign-bin"
    shim_dir.mkdir()
    shim = shim_dir / "python3"
    for flags in ("-s", "-I -S"):  # the base interpreter; stdlib only if its site-packages has mqctl
        shim.write_text(f'#!/bin/sh\nexec "{base}" {flags} "$@"\n')
        shim.chmod(0o755)
        probe = subprocess.run(
            ["python3", "-c", "import mqctl"],
            env=_env(tmp_path, shim_dir),
            cwd=tmp_path,
            capture_output=True,
            text=True,
        )
        if probe.returncode != 0:
            break
    assert "No module named 'mqctl'" in probe.stderr, probe.stderr
    return shim_dir


def _run(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*_mqctl(), "lagReport", *args],
        env=env,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_workers_use_mqctls_python_and_spark_logs_to_a_file(demo: Path, tmp_path: Path) -> None:
    shim_dir = _foreign_python3(tmp_path)
    subs = tmp_path / "subs.json"
    subs.write_text(json.dumps(SUBS))
    args = ["-S", f"broker-a={demo}", "--subscriptions", str(subs), "--master", "local[1]"]
    args += ["--driver-memory", "512m", "--top", "100"]
    res = _run([*args, "-o", "json", "--now-ms", str(NOW)], _env(tmp_path, shim_dir), tmp_path)

    assert res.returncode == 0, res.stderr[-3000:]
    doc = json.loads(res.stdout)
    assert {d["group"]: {k: v for k, v in d.items() if k != "group"} for d in doc["top"]} == expected_top(
        demo
    )
    assert doc["rows"] > 0 and len(doc["top"]) == 6

    # stderr (not a terminal): the one line naming Spark's log, nothing of Spark's or the JVM's.
    assert len(res.stderr.splitlines()) == 1, res.stderr
    m = re.fullmatch(r"Spark log: (.+)\n", res.stderr)
    assert m, res.stderr
    log = Path(m.group(1))
    assert log.parent == tmp_path / "state" / "mqctl" / "spark"
    text = log.read_text()
    assert "INFO SparkContext: Running Spark version" in text
    assert "Successfully stopped SparkContext" in text
    # The glob over the consume-queue directories is no longer stat-ed as a directory.
    assert "FileNotFoundException" not in text and "FileStreamSink" not in text


def test_verbose_leaves_spark_log_on_stderr(demo: Path, tmp_path: Path) -> None:
    args = ["-S", f"broker-a={demo}", "--master", "local[1]", "--driver-memory", "512m", "--top", "0"]
    res = _run([*args, "-o", "json", "--now-ms", str(NOW), "--verbose"], _env(tmp_path), tmp_path)

    assert res.returncode == 0, res.stderr[-3000:]
    assert json.loads(res.stdout)["top"] == []  # --top 0: Spark starts, lists the files, no job
    assert SPARK_LOG_LINE.search(res.stderr) or "log4j" in res.stderr, res.stderr
    assert "Spark log:" not in res.stderr
    assert not (tmp_path / "state").exists()
    assert "FileNotFoundException" not in res.stderr
