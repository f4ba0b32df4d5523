"""mqctl demo PATH — write a realistic broker store to try every command on."""

from __future__ import annotations

import os
import shlex
import shutil
import sys
from pathlib import Path
from typing import Annotated

import typer

from mqctl.cli.errors import handle_errors

HELP = """Write a realistic RocketMQ store (the broker's own file formats) into PATH: several topics
and groups, tags, a retry topic, partial consumption, and a queue whose oldest files were
deleted. It prints commands to try next, written the way mqctl was started here, so they run as
printed.

PATH must not exist or be an empty directory. The store loads in a real RocketMQ 5.x broker
with the segment sizes printed at the end."""


@handle_errors
def demo(
    path: Annotated[
        Path, typer.Argument(metavar="PATH", help="Directory to create the store in.", show_default=False)
    ],
    now_ms: Annotated[int | None, typer.Option("--now-ms", hidden=True)] = None,
) -> None:
    from mqctl.ops.demo import write_demo
    from mqctl.render.demo import write

    summary, conf_lines = write_demo(path, now_ms=now_ms)
    write(summary, conf_lines, path, invocation(), sys.stdout)


def invocation() -> str:
    """How this process was started, so the printed commands run as printed (the README runs
    ``.venv/bin/mqctl`` without activating the venv; ``mqctl`` alone would not be found)."""
    argv0 = sys.argv[0] if sys.argv else ""
    if argv0.endswith("__main__.py") or not argv0:
        return f"{shlex.quote(sys.executable)} -m mqctl"
    if os.sep in argv0:
        return shlex.quote(argv0)
    found = shutil.which(argv0)
    return argv0 if found else f"{shlex.quote(sys.executable)} -m mqctl"


demo.__doc__ = HELP
