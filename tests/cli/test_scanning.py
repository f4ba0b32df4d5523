"""cli.output.scanning: a "scanning" bar on a terminal's stderr, nothing at all elsewhere."""

from __future__ import annotations

import io
import sys
from typing import Any

import pytest

from mqctl.cli.output import scanning


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def _read(*args: Any, on_progress: Any, **kwargs: Any) -> tuple[Any, ...]:
    if on_progress is not None:
        on_progress(1, 2)
    return args, kwargs, on_progress


def test_not_a_terminal_reads_without_a_progress_callback(monkeypatch: pytest.MonkeyPatch) -> None:
    err = io.StringIO()
    monkeypatch.setattr(sys, "stderr", err)
    assert scanning(_read, "a", b=1) == (("a",), {"b": 1}, None)
    assert err.getvalue() == ""


def test_a_terminal_gets_the_delayed_bar(monkeypatch: pytest.MonkeyPatch) -> None:
    err = _Tty()
    monkeypatch.setattr(sys, "stderr", err)
    args, kwargs, on_progress = scanning(_read, "a", b=1)
    assert (args, kwargs) == (("a",), {"b": 1})
    assert on_progress.__self__.__class__.__name__ == "DelayedProgress"
    assert on_progress.__self__.enabled
    assert err.getvalue() == ""  # quicker than the bar's delay: nothing drawn


def test_the_bar_draws_once_work_outlasts_its_delay() -> None:
    from mqctl.render.progressbar import DelayedProgress

    err = _Tty()
    with DelayedProgress("scanning", err, enabled=True, delay=0.0) as bar:
        bar.update(1, 4)
        assert bar._progress is not None
    assert "scanning" in err.getvalue()
