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

    s, conf_lines = write_demo(path, now_ms=now_ms)
    store = f"--store {shlex.quote(f'{s.broker_name}={path}')}"
    mqctl = invocation()
    out = sys.stdout
    out.write(f"demo store written to {path}\n")
    out.write(
        f"  broker {s.broker_name}: {s.message_count} messages in {len(s.topics)} topics "
        f"({', '.join(s.topics)}), {len(s.groups)} groups ({', '.join(s.groups)})\n"
    )
    out.write(
        f"  commit log segments of {s.commitlog_file_size} bytes ({s.commitlog_segments} left after "
        f"expiry, min offset {s.commitlog_min_offset}); consume-queue files of {s.cq_file_size} bytes\n"
    )
    out.write("\nto load it in a real RocketMQ 5.x broker, put these in broker.conf:\n")
    for line in conf_lines:
        out.write(f"  {line}\n")
    out.write(f"\ntry:\n  {mqctl} consumerProgress {store}\n")
    out.write(f"  {mqctl} consumerProgress -g order-analytics {store} --tags 'paid'\n")
    out.write(f"  {mqctl} allocateMQ -t OrderEvents -i 10.0.0.1,10.0.0.2,10.0.0.3 {store}\n")
    out.write(f"  {mqctl} resetOffsetByTime -g order-analytics -t OrderEvents -s now {store}\n")


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
