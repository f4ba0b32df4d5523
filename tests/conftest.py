"""Shared fixtures: a demo store built once per test session."""

from __future__ import annotations

import pytest

from mqctl.store.demo import DemoSummary, build_demo_store

# 2026-01-01T00:00:00Z: a fixed "now" keeps every store time, offset and file byte reproducible.
DEMO_NOW_MS = 1_767_225_600_000


@pytest.fixture(scope="session")
def demo_store(tmp_path_factory: pytest.TempPathFactory) -> DemoSummary:
    """The ``mqctl demo`` store (read-only for tests: copy it before writing). ``.root`` is its path."""
    root = tmp_path_factory.mktemp("demo") / "store"
    return build_demo_store(root, now_ms=DEMO_NOW_MS)
