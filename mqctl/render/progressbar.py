"""A progress bar (on the stream given: stderr) that appears only when work takes longer than
about a second."""

from __future__ import annotations

import time
from types import TracebackType
from typing import Any, TextIO


class DelayedProgress:
    def __init__(self, description: str, out: TextIO, *, enabled: bool, delay: float = 1.0) -> None:
        self.description = description
        self.out = out
        self.delay = delay
        self.enabled = enabled
        self._start = 0.0
        self._progress: Any = None
        self._task: Any = None

    def __enter__(self) -> DelayedProgress:
        self._start = time.monotonic()
        return self

    def update(self, done: int, total: int) -> None:
        if not self.enabled:
            return
        if self._progress is None:
            if time.monotonic() - self._start < self.delay or done >= total:
                return
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

            self._progress = Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeRemainingColumn(),
                console=Console(file=self.out),
                transient=True,
            )
            self._progress.start()
            self._task = self._progress.add_task(self.description, total=total)
        self._progress.update(self._task, completed=done, total=total)

    def __exit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._progress is not None:
            self._progress.stop()
