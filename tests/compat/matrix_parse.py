"""Parsers for what the real mqadmin of each version prints (4.x and 5.x layouts).

``consumerProgress -g G`` (docs/rocketmq-versions.md §1, spec mqadmin.md §3.3):
  5.x   #Topic #Broker Name #QID #Broker Offset #Consumer Offset #Diff #Inflight #LastTime,
        totals ``Consume TPS`` / ``Consume Diff Total`` / ``Consume Inflight Total``
  4.9.7 no #Inflight column, totals ``Consume TPS`` / ``Diff Total``

``resetOffsetByTime`` (docs §2.3, spec §4.3/§4.5), two paths and two title lines per line:
  path B (broker computes, 3 columns #brokerName #queueId #offset)
    5.x   ``start reset consumer offset by specified, group[...]``
    4.9.7 ``rollback consumer offset by specified group[...]``
  path C (mqadmin computes per queue, 6 columns)
    5.x   ``reset consumer offset by specified consumerGroup[...]``   last column #resetOffset
    4.9.7 ``rollback consumer offset by specified consumerGroup[...]`` last column #rollbackOffset
"""

from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass

_LAST = r"(?P<last>N/A|\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)"
_HEAD = r"^(?P<topic>\S+)\s+(?P<broker>\S+)\s+(?P<qid>\d+)\s+(?P<broker_offset>-?\d+)\s+(?P<consumer_offset>-?\d+)"
_ROW_5X = re.compile(_HEAD + r"\s+(?P<diff>-?\d+)\s+(?P<inflight>-?\d+)\s+" + _LAST + "$")
_ROW_4X = re.compile(_HEAD + r"\s+(?P<diff>-?\d+)\s+" + _LAST + "$")

# Time zone of every process of the suite (mqadmin prints LastTime in the JVM's local time).
TZ = "Asia/Shanghai" if os.path.exists("/usr/share/zoneinfo/Asia/Shanghai") else "UTC"


class HarnessError(RuntimeError):
    """The test harness itself failed (a server did not start, a client crashed)."""


class ParseError(HarnessError):
    """mqadmin printed something none of the known layouts explains."""


@dataclass(frozen=True)
class ProgressRow:
    topic: str
    broker: str
    queue_id: int
    broker_offset: int
    consumer_offset: int
    diff: int
    inflight: int | None  # None: the 4.x layout has no #Inflight column
    last_time: str  # "N/A" or "yyyy-MM-dd HH:mm:ss" (local time of TZ)

    @property
    def key(self) -> tuple[str, str, int]:
        return (self.topic, self.broker, self.queue_id)


def progress_layout(stdout: str) -> str:
    """``"5.x"`` or ``"4.x"`` from the header line of ``consumerProgress -g G``."""
    first = stdout.split("\n", 1)[0]
    if not first.startswith("#Topic"):
        raise ParseError(f"no consumerProgress header in:\n{stdout}")
    return "5.x" if "#Inflight" in first else "4.x"


def parse_consumer_progress(stdout: str) -> tuple[list[ProgressRow], dict[str, str]]:
    """Rows and the totals lines of ``mqadmin consumerProgress -g G`` (either layout)."""
    row_re = _ROW_5X if progress_layout(stdout) == "5.x" else _ROW_4X
    rows: list[ProgressRow] = []
    totals: dict[str, str] = {}
    for line in stdout.splitlines()[1:]:
        if not line.strip():
            continue
        m = row_re.match(line)
        if m:
            inflight = int(m["inflight"]) if "inflight" in row_re.groupindex else None
            rows.append(
                ProgressRow(
                    m["topic"],
                    m["broker"],
                    int(m["qid"]),
                    int(m["broker_offset"]),
                    int(m["consumer_offset"]),
                    int(m["diff"]),
                    inflight,
                    m["last"],
                )
            )
        elif ":" in line:
            k, _, v = line.partition(":")
            totals[k.strip()] = v.strip()
        else:
            raise ParseError(f"unexpected consumerProgress line {line!r}")
    return rows, totals


def diff_total(totals: dict[str, str]) -> int:
    """The diff total line: ``Consume Diff Total`` (5.x) or ``Diff Total`` (4.9.7)."""
    for key in ("Consume Diff Total", "Diff Total"):
        if key in totals:
            return int(totals[key])
    raise ParseError(f"no diff total in {totals}")


@dataclass(frozen=True)
class ResetRow:
    broker: str
    queue_id: int
    offset: int  # path B: the broker's target; path C: #resetOffset / #rollbackOffset
    broker_offset: int | None = None  # path C only
    consumer_offset: int | None = None  # path C only
    timestamp_offset: int | None = None  # path C only


@dataclass(frozen=True)
class ResetTable:
    path: str  # "B" (3 columns) or "C" (6 columns)
    title: str
    rows: list[ResetRow]

    def offsets(self) -> dict[tuple[str, int], int]:
        return {(r.broker, r.queue_id): r.offset for r in self.rows}


# title prefix -> (path, expected last header column)
_RESET_TITLES = (
    ("start reset consumer offset by specified, group[", "B", "#offset"),
    ("rollback consumer offset by specified group[", "B", "#offset"),
    ("reset consumer offset by specified consumerGroup[", "C", "#resetOffset"),
    ("rollback consumer offset by specified consumerGroup[", "C", "#rollbackOffset"),
)


def parse_reset(stdout: str) -> ResetTable:
    """The table of ``mqadmin resetOffsetByTime`` whichever path and version printed it."""
    lines = stdout.splitlines()
    for i, line in enumerate(lines):
        for prefix, path, last_col in _RESET_TITLES:
            if line.startswith(prefix):
                return _reset_rows(lines, i, path, last_col)
    raise ParseError(f"no reset table in mqadmin output:\n{stdout}")


def _reset_rows(lines: list[str], start: int, path: str, last_col: str) -> ResetTable:
    header = lines[start + 1].split() if start + 1 < len(lines) else []
    width = 3 if path == "B" else 6
    if len(header) != width or header[0] != "#brokerName" or header[-1] != last_col:
        raise ParseError(f"unexpected reset header {lines[start + 1 : start + 2]!r} after {lines[start]!r}")
    rows: list[ResetRow] = []
    for line in lines[start + 2 :]:
        if not line.strip():
            continue
        f = line.split()
        if len(f) != width or not all(x.lstrip("-").isdigit() for x in f[1:]):
            raise ParseError(f"unexpected reset row {line!r}")
        n = [int(x) for x in f[1:]]
        if path == "B":
            rows.append(ResetRow(f[0], n[0], n[1]))
        else:
            rows.append(
                ResetRow(f[0], n[0], n[4], broker_offset=n[1], consumer_offset=n[2], timestamp_offset=n[3])
            )
    return ResetTable(path, lines[start], rows)


def parse_reset_table(stdout: str, path: str | None = None) -> dict[tuple[str, int], int]:
    """(brokerName, queueId) -> offset the reset set (path B target, path C reset/rollback).

    ``path`` ("B"/"C"): raise unless mqadmin took that path.
    """
    table = parse_reset(stdout)
    if path is not None and table.path != path:
        raise ParseError(f"mqadmin took reset path {table.path}, expected {path}:\n{stdout}")
    return table.offsets()


def local_seconds(ms: int) -> str:
    """Epoch ms as mqadmin's LastTime (``yyyy-MM-dd HH:mm:ss``) in the TZ of the test processes."""
    if ms == 0:
        return "N/A"
    old = os.environ.get("TZ")
    os.environ["TZ"] = TZ
    time.tzset()
    try:
        return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(ms // 1000))
    finally:
        if old is None:
            del os.environ["TZ"]
        else:
            os.environ["TZ"] = old
        time.tzset()
