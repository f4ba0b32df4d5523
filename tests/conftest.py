"""Shared fixtures: every test isolated from the developer's environment, a demo store built
once per test session, and the remoting client's fake servers that answer at once or never."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator

import pytest
from hypothesis import settings
from mqctl_testkit.cli import NOW_MS
from mqctl_testkit.fakeserver import FakeServer
from mqctl_testkit.thorough import FULL_RUN_EXAMPLES

from mqctl.store import offsets
from mqctl.store.demo import DemoSummary, build_demo_store

# 2026-01-01T00:00:00Z: a fixed "now" keeps every store time, offset and file byte reproducible.
DEMO_NOW_MS = NOW_MS

# What a developer's shell may hold that changes mqctl's answers: a cluster (NAMESRV_ADDR, a
# profile), its settings, where it keeps files, and how a terminal looks.
_ENV_DROPPED = ("NAMESRV_ADDR", "ROCKETMQ_HOME", "COLUMNS", "LINES", "TERM", "NO_COLOR", "FORCE_COLOR")


# The fast run's randomised tests: a fifth of the full run's examples (mqctl_testkit.thorough).
settings.register_profile("fast", max_examples=FULL_RUN_EXAMPLES // 5)


def pytest_configure(config: pytest.Config) -> None:
    """The fast run (``-m`` leaving ``slow`` out) tries a fifth of the random cases, unless a
    Hypothesis profile is named with ``--hypothesis-profile``. Runs before any test module is
    imported, so the counts written in tests (``thorough.cases``) see the profile."""
    if "not slow" in (config.option.markexpr or "") and config.getoption("hypothesis_profile", None) is None:
        settings.load_profile("fast")


def pytest_report_header(config: pytest.Config) -> str:
    n = settings.default.max_examples
    return f"random cases: {n} examples per property by default" + (
        " (the fast run: a fifth)" if n < FULL_RUN_EXAMPLES else ""
    )


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """``slow``: what starts a JVM (Spark, a real broker) or runs for seconds; the fast run is
    ``pytest -m "not slow and not compat"``. Runs after the folders' own hooks have marked
    their Spark and real-broker tests."""
    for item in items:
        if any(item.get_closest_marker(m) for m in ("spark", "compat")):
            item.add_marker(pytest.mark.slow)


@pytest.fixture(autouse=True)
def _isolated_environment(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each test runs as on a fresh machine: no cluster or mqctl setting from the environment
    (MQCTL_*), a home and XDG config/state/cache directories of its own (no config file, journal
    or Spark logs of the developer's), no terminal size or colour preference. A test that needs
    one sets it itself. The real-broker suite keeps the environment: its classpath cache lives
    under the real home (tests/compat/versions.py)."""
    if request.node.get_closest_marker("compat"):
        return
    for name in list(os.environ):
        if name.startswith("MQCTL_") or name in _ENV_DROPPED:
            monkeypatch.delenv(name)
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    for var, sub in (
        ("XDG_CONFIG_HOME", ".config"),
        ("XDG_STATE_HOME", ".local/state"),
        ("XDG_CACHE_HOME", ".cache"),
    ):
        monkeypatch.setenv(var, str(home / sub))


@pytest.fixture(autouse=True)
def _no_retry_waits(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """A damaged config file is still re-read before mqctl gives up on it, only without the
    50 ms waits between reads (150 ms per file, ~7 s over the suite). The tests of the waits
    themselves (tests/store/test_store_offsets.py) pass their own delay and sleep. The
    real-broker suite keeps the waits: there a running broker does rewrite its files in place."""
    if not request.node.get_closest_marker("compat"):
        monkeypatch.setattr(offsets, "RETRY_DELAY_S", 0.0)


@pytest.fixture
def utc(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Local time is UTC for this test's own process (``time.localtime``, as mqadmin's layouts
    print it), and the machine's zone again after it."""
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


@pytest.fixture(scope="session")
def demo_store(tmp_path_factory: pytest.TempPathFactory) -> DemoSummary:
    """The ``mqctl demo`` store (read-only for tests: copy it before writing). ``.root`` is its path."""
    root = tmp_path_factory.mktemp("demo") / "store"
    return build_demo_store(root, now_ms=DEMO_NOW_MS)


@pytest.fixture
def echo() -> Iterator[FakeServer]:
    """A server that answers every request at once, echoing its code, fields and body."""
    with FakeServer("echo") as server:
        yield server


@pytest.fixture
def silent() -> Iterator[FakeServer]:
    """A server that reads requests and never answers (a client waits on it until its timeout)."""
    with FakeServer("silent") as server:
        yield server
