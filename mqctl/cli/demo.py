"""mqctl demo PATH — write a realistic broker store to try every command on."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from mqctl.cli.errors import handle_errors
from mqctl.errors import UsageError

HELP = """Write a realistic RocketMQ store (the broker's own file formats) into PATH: several topics
and groups, tags, a retry topic, partial consumption, and a queue whose oldest files were
deleted. Then try: mqctl consumerProgress --store broker-a=PATH.

PATH must not exist or be an empty directory. The store loads in a real RocketMQ 5.x broker
with the segment sizes printed at the end."""


@handle_errors
def demo(
    path: Annotated[Path, typer.Argument(help="Directory to create the store in.", show_default=False)],
    now_ms: Annotated[int | None, typer.Option("--now-ms", hidden=True)] = None,
) -> None:
    from mqctl.store.demo import build_demo_store

    if path.exists() and (not path.is_dir() or any(path.iterdir())):
        raise UsageError(f"{path} exists and is not an empty directory", "give a new path")
    summary = build_demo_store(path, now_ms=now_ms)
    out = sys.stdout
    out.write(f"demo store written to {path}\n")
    for line in summary.describe():
        out.write(f"  {line}\n")
    out.write(f"\ntry:\n  mqctl consumerProgress --store {summary.broker_name}={path}\n")
    for g in summary.groups[:1]:
        out.write(f"  mqctl consumerProgress -g {g} --store {summary.broker_name}={path}\n")


demo.__doc__ = HELP
