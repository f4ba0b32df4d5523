"""The ``mqctl`` process around the command line: what is set before typer is imported and what
is skipped once the command has answered.

Every mqctl call is a new, short process, and two costs of such a process are not mqctl's work
(measured on a live ``consumerProgress -g``, 2 cores, Python 3.11):

- The cyclic garbage collector runs every 700 new container objects. Start-up creates ~30,000
  (modules, classes, functions, typer's and click's objects) and every one of them lives until
  exit, so the ~40 collections of a call (~7 ms; ~5 ms for ``--version``) find nothing to free.
  The first generation is collected every 50,000 allocations instead: a short command does not
  collect at all, a long one (``--watch``, the exporter) still does, at a few ms a collection.
- The interpreter's teardown frees every module and object one by one before the process ends
  (~15-20 ms). When nothing is left for it to do — stdout and stderr flushed, no exit handler
  registered (logging, pyspark's gateway, coverage register one), no thread that Python would wait
  for — the process ends at once with the command's exit status (``os._exit``). Files mqctl
  writes are closed and synced by the command itself (``mqctl.fsio``), never by the teardown.

``python -m mqctl`` and the installed ``mqctl`` (``mqctl.__main__:main``) both start here; tests
and library callers that run ``mqctl.cli.app`` themselves keep Python's defaults.
"""

from __future__ import annotations

import atexit
import gc
import os
import sys

GEN0_THRESHOLD = 50_000


def main() -> None:
    gc.set_threshold(GEN0_THRESHOLD)
    from mqctl.cli.app import main as run

    try:
        run()
    except SystemExit as done:
        code = 0 if done.code is None else done.code
        if isinstance(code, int) and _flushed() and _nothing_left_at_exit():
            os._exit(code)
        raise


def _flushed() -> bool:
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError, AttributeError):  # let Python's own exit report or ignore it
        return False
    return True


def _nothing_left_at_exit() -> bool:
    """No exit handler and no non-daemon thread: Python's teardown would only free memory."""
    ncallbacks = getattr(atexit, "_ncallbacks", None)  # CPython's count of registered handlers
    if ncallbacks is None or ncallbacks() != 0:
        return False
    threading = sys.modules.get("threading")
    if threading is None:
        return True
    main_thread = threading.main_thread()
    return all(t is main_thread or t.daemon for t in threading.enumerate())


if __name__ == "__main__":
    main()
