"""Turn models into text. rich is imported only where it draws (render/table.py's tables, --watch's
live view, the progress bar), and only when that is drawn."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TextIO

from mqctl.records import record


@record(frozen=True)
class Views:
    """One result drawn in each output format (cli's ``emit`` calls the one chosen): mqadmin's plain
    layout, the terminal table, the JSON document, CSV's columns and rows."""

    plain: Callable[[TextIO], None]
    table: Callable[[TextIO], None]
    json_doc: Callable[[], dict]
    csv: Callable[[], tuple[Sequence[str], Iterable[Sequence[object]]]]
