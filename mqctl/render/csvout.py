"""CSV: a header row, then one row per record (RFC 4180 quoting)."""

from __future__ import annotations

import csv
from collections.abc import Iterable, Sequence
from typing import Any, TextIO


def write_csv(columns: Sequence[str] | None, rows: Iterable[Sequence[Any]], out: TextIO) -> None:
    """``columns`` None: no header row (--no-headers)."""
    writer = csv.writer(out, lineterminator="\n")
    if columns is not None:
        writer.writerow(columns)
    for row in rows:
        writer.writerow(["" if v is None else v for v in row])
