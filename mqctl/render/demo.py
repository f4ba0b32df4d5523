"""mqctl demo's report: what the store holds, the broker.conf lines a real broker needs to load it,
and the commands to try next."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any, TextIO


def write(s: Any, conf_lines: list[str], path: Path, mqctl: str, out: TextIO) -> None:
    """``s``: the store's ``DemoSummary``; ``mqctl``: how this process was started, so the commands
    run as printed."""
    store = f"--store {shlex.quote(f'{s.broker_name}={path}')}"
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
