"""mqctl demo: a realistic store in the broker's own formats, written where the user asks."""

from __future__ import annotations

from pathlib import Path

from mqctl.errors import UsageError
from mqctl.store.demo import DemoSummary, broker_conf_lines, build_demo_store

__all__ = ["DemoSummary", "write_demo"]


def write_demo(path: Path, *, now_ms: int | None = None) -> tuple[DemoSummary, list[str]]:
    """Write the demo store into ``path`` (new, or an empty directory); returns what it holds and
    the ``broker.conf`` lines a real 5.x broker needs to load it."""
    if path.exists() and (not path.is_dir() or any(path.iterdir())):
        raise UsageError(f"{path} exists and is not an empty directory", "give a new path")
    summary = build_demo_store(path, now_ms=now_ms)
    return summary, broker_conf_lines(summary)
